// The canonical form and structural hash: every edit that changes results changes the hash;
// renaming internal layers and reordering independent definitions do not.
#include <gtest/gtest.h>

#include <functional>

#include "tensoracle/network.h"

namespace tensoracle {
namespace {

// Knobs of a small network; each test edit changes exactly one of them.
struct Spec {
  DataType type = DataType::kFloat32;
  Dims input{1, 4, 8, 8};
  std::string input_name = "image";
  std::string output_name = "logits";
  int64_t conv_stride = 1;
  int64_t conv_pad = 1;
  int64_t groups = 1;
  float weight_value = 0.5f;
  ActivationKind act = ActivationKind::kRelu;
  std::optional<double> alpha;
  int64_t softmax_axis = 1;
  std::string conv_name = "conv";
  bool relu_before_pool = true;  // definition order of two independent branches
  bool extra_dead_layer = false;
};

HostArray weight(float value, Dims shape) {
  HostArray a = HostArray::zeros(DataType::kFloat32, shape).value();
  for (int64_t i = 0; i < a.element_count(); ++i) a.data_as<float>()[i] = value + 0.001f * static_cast<float>(i);
  return a;
}

Network build(const Spec& s) {
  Network net;
  Tensor x = net.add_input(s.input_name, s.type, s.input);
  Tensor w = net.add_constant(weight(s.weight_value, {4, 4 / s.groups, 3, 3}));
  if (s.type != DataType::kFloat32) w = net.cast(w, s.type);
  Tensor y = net.convolution(x, w, {},
                             ConvolutionAttributes()
                                 .set_stride({s.conv_stride, s.conv_stride})
                                 .set_padding({s.conv_pad, s.conv_pad})
                                 .set_groups(s.groups)
                                 .set_name(s.conv_name));
  ActivationAttributes act = ActivationAttributes().set_kind(s.act);
  if (s.alpha) act.set_alpha(*s.alpha);
  Tensor a, b;
  if (s.relu_before_pool) {
    a = net.activation(y, act);
    b = net.pooling(y, PoolingAttributes().set_global(true));
  } else {
    b = net.pooling(y, PoolingAttributes().set_global(true));
    a = net.activation(y, act);
  }
  if (s.extra_dead_layer) net.unary(y, UnaryAttributes().set_op(UnaryOp::kExp));
  Tensor sum = net.add(a, b);
  net.mark_output(net.softmax(sum, SoftmaxAttributes().set_axis(s.softmax_axis)), s.output_name);
  EXPECT_TRUE(net.status().is_ok()) << net.status().to_string();
  return net;
}

std::string hash_of(const Spec& s) { return structural_hash(build(s)).value(); }

TEST(StructuralHash, IsStableAndHex) {
  EXPECT_EQ(hash_of(Spec{}), hash_of(Spec{}));
  EXPECT_EQ(hash_of(Spec{}).size(), 64u);
}

struct Edit {
  const char* name;
  std::function<void(Spec&)> apply;
};

const Edit kChangingEdits[] = {
    {"input_type", [](Spec& s) { s.type = DataType::kFloat16; }},
    {"input_shape", [](Spec& s) { s.input = Dims{1, 4, 8, 9}; }},
    {"input_dynamic_dim", [](Spec& s) { s.input = Dims{-1, 4, 8, 8}; }},
    {"input_name", [](Spec& s) { s.input_name = "pixels"; }},
    {"output_name", [](Spec& s) { s.output_name = "probs"; }},
    {"conv_stride", [](Spec& s) { s.conv_stride = 2; }},
    {"conv_padding", [](Spec& s) { s.conv_pad = 0; }},
    {"conv_groups", [](Spec& s) { s.groups = 2; }},
    {"weight_content", [](Spec& s) { s.weight_value = 0.25f; }},
    {"activation_kind", [](Spec& s) { s.act = ActivationKind::kSilu; }},
    {"activation_alpha", [](Spec& s) {
       s.act = ActivationKind::kLeakyRelu;
       s.alpha = 0.2;
     }},
    {"softmax_axis", [](Spec& s) { s.softmax_axis = -1; }},
};

class HashChanges : public ::testing::TestWithParam<Edit> {};

TEST_P(HashChanges, WhenOneAttributeChanges) {
  Spec edited;
  GetParam().apply(edited);
  EXPECT_NE(hash_of(edited), hash_of(Spec{})) << canonical_form(build(edited)).value();
}

INSTANTIATE_TEST_SUITE_P(Edits, HashChanges, ::testing::ValuesIn(kChangingEdits),
                         [](const auto& test_info) { return std::string(test_info.param.name); });

TEST(StructuralHash, IgnoresInternalLayerNames) {
  Spec renamed;
  renamed.conv_name = "stem.conv1";
  EXPECT_EQ(hash_of(renamed), hash_of(Spec{}));
}

TEST(StructuralHash, IgnoresDefinitionOrderOfIndependentLayers) {
  Spec reordered;
  reordered.relu_before_pool = false;
  EXPECT_EQ(hash_of(reordered), hash_of(Spec{}));
  EXPECT_EQ(canonical_form(build(reordered)).value(), canonical_form(build(Spec{})).value());
}

TEST(StructuralHash, IgnoresLayersThatReachNoOutput) {
  Spec dead;
  dead.extra_dead_layer = true;
  EXPECT_EQ(hash_of(dead), hash_of(Spec{}));
}

TEST(StructuralHash, DefaultActivationParametersAreExplicit) {
  Spec implicit, explicit_alpha;
  implicit.act = explicit_alpha.act = ActivationKind::kLeakyRelu;
  explicit_alpha.alpha = 0.01;
  EXPECT_EQ(hash_of(implicit), hash_of(explicit_alpha));
}

TEST(StructuralHash, RefusesNetworksWithErrors) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {2});
  net.mark_output(net.reshape(x, ReshapeAttributes().set_shape({3})));
  EXPECT_FALSE(structural_hash(net).is_ok());
}

TEST(CanonicalForm, ReadsAsATopologicalListing) {
  const std::string text = canonical_form(build(Spec{})).value();
  EXPECT_EQ(text.rfind("tensoracle-graph 1\ninput @image : fp32[1,4,8,8]\n", 0), 0u) << text;
  EXPECT_NE(text.find("convolution["), std::string::npos);
  EXPECT_NE(text.find("output logits = %"), std::string::npos) << text;
  EXPECT_EQ(text.find("conv"), text.find("convolution")) << "layer names must not appear";
}

}  // namespace
}  // namespace tensoracle
