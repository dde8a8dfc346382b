// Every registered backend against the CPU reference, case by case. With only the CPU backend
// registered this checks that the reference is deterministic and that every case builds, runs
// and produces a non-trivial result; a new backend joins by registering itself.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "backends/backend.h"
#include "host/ops/op_harness.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::testing {
namespace {

struct Param {
  size_t case_index;
  std::string backend;
};

class OpHarness : public ::testing::TestWithParam<Param> {};

TEST_P(OpHarness, MatchesCpuReference) {
  const OpCase& c = all_op_cases()[GetParam().case_index];
  Network net;
  c.build(net);
  ASSERT_TRUE(net.status().is_ok()) << c.id() << ": " << net.status().to_string();
  auto backend = backends::create_backend(GetParam().backend);
  if (!backend.is_ok() && backend.status().code() == StatusCode::kFailedPrecondition)
    GTEST_SKIP() << backend.status().message();  // e.g. the cuda backend on a machine without a GPU
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  for (size_t i = 0; i < net.num_nodes(); ++i)
    if (Status s = (*backend)->supports(net, i); !s.is_ok()) GTEST_SKIP() << s.message();

  const uint64_t seed = 1000 + GetParam().case_index;
  auto inputs = seeded_inputs(net, seed, c.low, c.high);
  ASSERT_TRUE(inputs.is_ok()) << inputs.status().to_string();
  auto cpu = backends::create_backend("cpu").value();
  auto reference = cpu->execute(net, views_of(*inputs));
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
  auto candidate = (*backend)->execute(net, views_of(*inputs));
  ASSERT_TRUE(candidate.is_ok()) << candidate.status().to_string();

  ASSERT_EQ(candidate->size(), reference->size());
  for (const auto& [name, ref] : *reference) {
    const HostArray& got = candidate->at(name);
    ASSERT_EQ(got.dtype(), ref.dtype()) << name;
    ASSERT_EQ(got.shape(), ref.shape()) << name;
    // The reference itself must be non-trivial: some non-zero element.
    double norm = 0;
    for (int64_t e = 0; e < ref.element_count(); ++e) norm += std::fabs(load_as_double(ref.dtype(), ref.data(), e));
    EXPECT_GT(norm, 0) << name << " of " << c.id() << " is all zeros";
    const Tolerance tol = tolerance_for(c, ref.dtype());
    auto cmp = compare_outputs(got.view(), ref.view(), tol.atol, tol.rtol);
    ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
    EXPECT_EQ(cmp->tolerance_check->outside_count, 0)
        << c.id() << " output " << name << " on " << GetParam().backend << ": max abs error " << cmp->max_abs_error;
  }
}

std::vector<Param> all_params() {
  std::vector<Param> out;
  for (const std::string& backend : backends::backend_names())
    for (size_t i = 0; i < all_op_cases().size(); ++i) out.push_back({i, backend});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, OpHarness, ::testing::ValuesIn(all_params()), [](const auto& test_info) {
  return test_info.param.backend + "__" + all_op_cases()[test_info.param.case_index].id();
});

TEST(OpHarnessCases, IdsAreUnique) {
  std::set<std::string> ids;
  for (const OpCase& c : all_op_cases()) EXPECT_TRUE(ids.insert(c.id()).second) << c.id();
}

TEST(OpHarnessCases, EveryLayerKindHasACase) {
  std::set<std::string> covered;
  for (const OpCase& c : all_op_cases()) covered.insert(c.op);
  for (OpKind kind : all_op_kinds()) {
    if (kind == OpKind::kConstant || kind == OpKind::kPlugin) continue;  // data; no CPU kernel yet
    EXPECT_TRUE(covered.count(std::string(op_kind_name(kind)))) << op_kind_name(kind);
  }
}

}  // namespace
}  // namespace tensoracle::testing
