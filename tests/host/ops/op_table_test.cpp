// The op table (layers.h) is complete: every op kind has a stable name, a graph definition, a CPU
// kernel when it computes, a cuda tactic family or a documented reason, and a case in the op
// harness; every pointwise sub-op (ElementwiseOp, UnaryOp, ActivationKind) has a name, a cuda
// pointwise code of its own and a harness case. A new op or sub-op missing any of them fails here.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "backends/cpu/kernel.h"
#include "backends/cuda/op_families.h"
#include "backends/cuda/pointwise_program.h"
#include "graph/op_def.h"
#include "host/ops/op_harness.h"

namespace tensoracle::testing {
namespace {

bool computes(OpKind kind) {
  const OpCategory c = op_category(kind);
  return c == OpCategory::kPointwise || c == OpCategory::kCompute;
}

TEST(OpTable, EveryKindHasAUniqueNameThatParsesBack) {
  std::set<std::string_view> names;
  for (OpKind kind : all_op_kinds()) {
    const std::string_view name = op_kind_name(kind);
    EXPECT_FALSE(name.empty());
    EXPECT_NE(name, "unknown");
    EXPECT_TRUE(names.insert(name).second) << name << " twice";
    EXPECT_EQ(parse_op_kind(name), kind) << name;
  }
  EXPECT_FALSE(parse_op_kind("no_such_op").has_value());
}

TEST(OpTable, EveryKindHasAGraphDefinition) {
  for (OpKind kind : all_op_kinds()) {
    const graph::OpDef* def = graph::find_op_def(kind);
    ASSERT_NE(def, nullptr) << op_kind_name(kind);
    EXPECT_NE(def->infer, nullptr) << op_kind_name(kind);
    EXPECT_GE(def->min_inputs, 0) << op_kind_name(kind);
    EXPECT_TRUE(def->max_inputs == -1 || def->max_inputs >= def->min_inputs) << op_kind_name(kind);
  }
}

TEST(OpTable, EveryComputingKindHasACpuKernel) {
  for (OpKind kind : all_op_kinds()) {
    if (computes(kind))
      EXPECT_NE(backends::cpu::find_kernel(kind), nullptr) << op_kind_name(kind);
    else  // constants are data; a plugin layer runs its plugin's CPU implementation (plugin_kernel.h)
      EXPECT_EQ(backends::cpu::find_kernel(kind), nullptr) << op_kind_name(kind);
  }
}

TEST(OpTable, EveryComputingKindHasACudaFamilyOrAReason) {
  std::map<OpKind, int> families;
#define TO_COUNT_FAMILY_(Kind, factory) ++families[OpKind::k##Kind];
  TENSORACLE_CUDA_FAMILIES(TO_COUNT_FAMILY_)
#undef TO_COUNT_FAMILY_
  std::map<OpKind, std::string> reasons;
#define TO_REASON_(Kind, reason) reasons[OpKind::k##Kind] = reason;
  TENSORACLE_CUDA_UNSUPPORTED_OPS(TO_REASON_)
#undef TO_REASON_
  for (OpKind kind : all_op_kinds()) {
    const bool listed = families.count(kind) > 0, excused = reasons.count(kind) > 0;
    if (computes(kind)) {
      EXPECT_TRUE(listed != excused) << op_kind_name(kind)
                                     << ": list its families in TENSORACLE_CUDA_FAMILIES or, with the reason, in "
                                        "TENSORACLE_CUDA_UNSUPPORTED_OPS (exactly one)";
      if (excused) EXPECT_FALSE(reasons[kind].empty()) << op_kind_name(kind);
    } else if (kind == OpKind::kPlugin) {
      EXPECT_TRUE(listed) << "plugin layers run on the cuda backend through the plugin family";
    } else {
      EXPECT_FALSE(listed || excused) << op_kind_name(kind) << " does not compute";
    }
  }
}

// The pointwise sub-ops' values, from their tables.
std::vector<ElementwiseOp> elementwise_ops() {
#define TO_VALUE_(Op, ...) ElementwiseOp::k##Op,
  return {TENSORACLE_ELEMENTWISE_OPS(TO_VALUE_)};
#undef TO_VALUE_
}
std::vector<UnaryOp> unary_ops() {
#define TO_VALUE_(Op, ...) UnaryOp::k##Op,
  return {TENSORACLE_UNARY_OPS(TO_VALUE_)};
#undef TO_VALUE_
}
std::vector<ActivationKind> activation_kinds() {
#define TO_VALUE_(Op, ...) ActivationKind::k##Op,
  return {TENSORACLE_ACTIVATION_KINDS(TO_VALUE_)};
#undef TO_VALUE_
}

template <typename E>
void expect_names_parse_back(const std::vector<E>& values) {
  std::set<std::string_view> names;
  for (E v : values) {
    EXPECT_NE(enum_name(v), "unknown");
    EXPECT_TRUE(names.insert(enum_name(v)).second) << enum_name(v) << " twice";
    EXPECT_EQ(parse_enum<E>(enum_name(v)), v) << enum_name(v);
  }
}

TEST(OpTable, EveryPointwiseSubOpHasANameAndItsOwnCudaCode) {
  expect_names_parse_back(elementwise_ops());
  expect_names_parse_back(unary_ops());
  expect_names_parse_back(activation_kinds());
  std::set<backends::cuda::PointwiseCode> codes;
  for (ElementwiseOp op : elementwise_ops()) EXPECT_TRUE(codes.insert(backends::cuda::pointwise_code(op)).second);
  for (UnaryOp op : unary_ops()) EXPECT_TRUE(codes.insert(backends::cuda::pointwise_code(op)).second);
  for (ActivationKind k : activation_kinds()) EXPECT_TRUE(codes.insert(backends::cuda::pointwise_code(k)).second);
  EXPECT_FALSE(codes.count(backends::cuda::PointwiseCode::kSelect) || codes.count(backends::cuda::PointwiseCode::kCast));
}

// What the harness cases cover: op kinds, and "kind:sub-op" for the pointwise sub-ops.
std::set<std::string> covered_by_cases() {
  std::set<std::string> covered;
  for (const OpCase& c : all_op_cases()) {
    Network net;
    c.build(net);
    EXPECT_TRUE(net.status().is_ok()) << c.id() << ": " << net.status().to_string();
    for (size_t i = 0; i < net.num_nodes(); ++i) {
      const Node& node = net.node(i);
      if (node.kind == OpKind::kConstant) continue;
      covered.insert(std::string(op_kind_name(node.kind)));
      const std::string kind(op_kind_name(node.kind));
      if (const auto* e = node.attributes<ElementwiseAttributes>()) covered.insert(kind + ":" + std::string(enum_name(e->op)));
      if (const auto* u = node.attributes<UnaryAttributes>()) covered.insert(kind + ":" + std::string(enum_name(u->op)));
      if (const auto* a = node.attributes<ActivationAttributes>()) covered.insert(kind + ":" + std::string(enum_name(a->kind)));
    }
  }
  return covered;
}

TEST(OpTable, EveryComputingKindAndPointwiseSubOpHasAHarnessCase) {
  const std::set<std::string> covered = covered_by_cases();
  auto expect_case = [&](const std::string& what) {
    EXPECT_TRUE(covered.count(what)) << "no case in tests/host/ops/op_cases.cpp runs " << what;
  };
  for (OpKind kind : all_op_kinds())
    if (computes(kind)) expect_case(std::string(op_kind_name(kind)));
  for (ElementwiseOp op : elementwise_ops()) expect_case("elementwise:" + std::string(enum_name(op)));
  for (UnaryOp op : unary_ops()) expect_case("unary:" + std::string(enum_name(op)));
  for (ActivationKind k : activation_kinds()) expect_case("activation:" + std::string(enum_name(k)));
}

}  // namespace
}  // namespace tensoracle::testing
