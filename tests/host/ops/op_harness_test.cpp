// Every registered backend against the CPU reference, case by case. With only the CPU backend
// registered this checks that the reference is deterministic and that every case builds, runs
// and produces a non-trivial result; a new backend joins by registering itself.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "backends/registry.h"
#include "host/ops/op_harness.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::testing {
namespace {

struct Param {
  size_t case_index;
  std::string backend;
  DataType precision;  // fp32: the case as written; fp16/bf16: with_float_type
};

class OpHarness : public ::testing::TestWithParam<Param> {};

TEST_P(OpHarness, MatchesCpuReference) {
  const OpCase& c = all_op_cases()[GetParam().case_index];
  Network written;
  c.build(written);
  ASSERT_TRUE(written.status().is_ok()) << c.id() << ": " << written.status().to_string();
  Network net = std::move(written);
  if (GetParam().precision != DataType::kFloat32) {
    auto retyped = with_float_type(net, GetParam().precision);
    ASSERT_TRUE(retyped.is_ok()) << retyped.status().to_string();
    net = std::move(retyped).value();
  }
  auto backend = backends::create_backend(GetParam().backend);
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  if (Status usable = (*backend)->usable(); !usable.is_ok())
    GTEST_SKIP() << usable.message();  // e.g. the cuda backend on a machine without a GPU
  for (size_t i = 0; i < net.num_nodes(); ++i)
    if (Status s = (*backend)->supports(net, i); !s.is_ok()) GTEST_SKIP() << s.message();

  const uint64_t seed = 1000 + GetParam().case_index;
  auto inputs = seeded_inputs(net, seed, c.low, c.high);
  ASSERT_TRUE(inputs.is_ok()) << inputs.status().to_string();
  auto cpu = backends::create_backend(backends::kReferenceBackend).value();
  auto reference = cpu->execute(net, views_of(*inputs));
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
  auto candidate = (*backend)->execute(net, views_of(*inputs));
  ASSERT_TRUE(candidate.is_ok()) << candidate.status().to_string();

  ASSERT_EQ(candidate->size(), reference->size());
  for (const auto& [name, ref] : *reference) {
    const HostArray& got = candidate->at(name);
    ASSERT_EQ(got.dtype(), ref.dtype()) << name;
    ASSERT_EQ(got.shape(), ref.shape()) << name;
    // The reference itself must be non-trivial: some non-zero element (NaN, an expected result of
    // edge-value cases, neither counts nor hides the others).
    double norm = 0;
    for (int64_t e = 0; e < ref.element_count(); ++e) {
      const double v = load_as_double(ref.dtype(), ref.data(), e);
      if (!std::isnan(v)) norm += std::fabs(v);
    }
    EXPECT_GT(norm, 0) << name << " of " << c.id() << " is all zeros";
    const Tolerance tol = tolerance_for(c, ref.dtype());
    auto cmp = compare_outputs(got.view(), ref.view(), tol.atol, tol.rtol);
    ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
    EXPECT_EQ(cmp->tolerance_check->outside_count, 0)
        << c.id() << " output " << name << " on " << GetParam().backend << ": max abs error " << cmp->max_abs_error
        << ", rel L2 " << cmp->rel_l2_error;
    // fp32 results agree in relative L2 to 1e-6: no reduced-precision (TF32) math anywhere.
    if (ref.dtype() == DataType::kFloat32 && norm > 0)
      EXPECT_LE(cmp->rel_l2_error, 1e-6) << c.id() << " output " << name << " on " << GetParam().backend;
  }
}

// Does the case have a variant in `type`? (Its layers accept the retyped tensors, and it has a
// floating tensor to retype.)
bool has_variant(const OpCase& c, DataType type) {
  Network net;
  c.build(net);
  if (!net.status().is_ok()) return false;
  bool any_fp32 = false;
  for (size_t t = 0; t < net.num_tensors(); ++t) any_fp32 |= net.tensor(Tensor{static_cast<uint32_t>(t)}).desc.dtype == DataType::kFloat32;
  return any_fp32 && with_float_type(net, type).is_ok();
}

// The CPU reference against itself once (determinism); every other backend in fp32, fp16 and bf16.
std::vector<Param> all_params() {
  std::vector<Param> out;
  for (const std::string& backend : backends::backend_names())
    for (size_t i = 0; i < all_op_cases().size(); ++i) {
      out.push_back({i, backend, DataType::kFloat32});
      if (backend == backends::kReferenceBackend) continue;
      for (DataType type : {DataType::kFloat16, DataType::kBFloat16})
        if (has_variant(all_op_cases()[i], type)) out.push_back({i, backend, type});
    }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, OpHarness, ::testing::ValuesIn(all_params()), [](const auto& test_info) {
  const Param& p = test_info.param;
  return p.backend + "__" + std::string(data_type_name(p.precision)) + "__" + all_op_cases()[p.case_index].id();
});

// Every floating case runs on a GPU backend in fp16 and bf16 too; the few that cannot be retyped
// (their layers take fp32 only, e.g. quantize scales) are named here by failing otherwise.
TEST(OpHarnessCases, FloatingCasesHaveFp16AndBf16Variants) {
  size_t floating = 0, with_variants = 0;
  std::vector<std::string> missing;
  for (const OpCase& c : all_op_cases()) {
    Network net;
    c.build(net);
    bool any_fp32 = false;
    for (size_t t = 0; t < net.num_tensors(); ++t) any_fp32 |= net.tensor(Tensor{static_cast<uint32_t>(t)}).desc.dtype == DataType::kFloat32;
    if (!any_fp32) continue;
    ++floating;
    if (has_variant(c, DataType::kFloat16) && has_variant(c, DataType::kBFloat16)) ++with_variants;
    else missing.push_back(c.id());
  }
  EXPECT_GE(with_variants * 10, floating * 9) << "cases without low-precision variants: " << ::testing::PrintToString(missing);
}

TEST(OpHarnessCases, IdsAreUnique) {
  std::set<std::string> ids;
  for (const OpCase& c : all_op_cases()) EXPECT_TRUE(ids.insert(c.id()).second) << c.id();
}

// That every op kind and pointwise function has a case is op_table_test's.

}  // namespace
}  // namespace tensoracle::testing
