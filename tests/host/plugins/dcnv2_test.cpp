// tensoracle::dcnv2 (plugins/dcnv2) on the cpu backend, loaded from libtensoracle_plugins.so:
// - matches torchvision.ops.deform_conv2d on every case of tests/fixtures/plugins/dcnv2/
//   (scripts/gen-deformable-references.py): strides, padding, dilation, groups, deformable groups,
//   a non-square kernel and samples on and beyond the image's edges; fp32 within rel L2 1e-6 and
//   max abs 1e-5 of both torchvision's fp32 and fp64 outputs; fp16 within rel L2 2e-3 of
//   torchvision's fp32 output of the same fp16 values (fp16 columns and outputs, fp32 sums) and
//   5e-3 of torchvision's fp16 output;
// - refuses malformed parameters and inconsistent shapes with an error naming the value.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <utility>
#include <vector>

#include "backends/registry.h"
#include "dcnv2/dcnv2_parameters.h"
#include "tensoracle/compare.h"
#include "tensoracle/plugin_registry.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

using tensoracle_plugins::Dcnv2Parameters;
using tensoracle_plugins::Dcnv2Type;
using tensoracle_plugins::kDcnv2Identity;

const char* const kInputs[] = {"x", "offset", "mask", "weight", "bias"};

PluginRegistry bundled_plugins() {
  PluginRegistry registry;
  const Status loaded = registry.load_library(TENSORACLE_PLUGINS_LIBRARY);
  EXPECT_TRUE(loaded.is_ok()) << loaded.to_string();
  return registry;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A network of one dcnv2 layer whose five inputs are network inputs of these shapes.
Status define(Network& net, const std::vector<Dims>& shapes, const std::string& parameters, DataType type) {
  net.set_plugins(bundled_plugins());
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < 5; ++i) inputs.push_back(net.add_input(kInputs[i], type, shapes[i]));
  std::vector<Tensor> y = net.plugin(inputs, kDcnv2Identity, parameters, "dcn");
  if (!y.empty()) net.mark_output(y[0], "y");
  return net.status();
}

std::string define_error(const std::vector<Dims>& shapes, const std::string& parameters, DataType type = DataType::kFloat32) {
  Network net;
  const Status status = define(net, shapes, parameters, type);
  EXPECT_FALSE(status.is_ok());
  return status.to_string();
}

// A valid layer: x [1, 4, 6, 6], 3x3 kernel, padding 1, two deformable groups -> y [1, 6, 6, 6].
std::vector<Dims> valid_shapes() { return {{1, 4, 6, 6}, {1, 36, 6, 6}, {1, 18, 6, 6}, {6, 4, 3, 3}, {6}}; }
Dcnv2Parameters valid_parameters() {
  Dcnv2Parameters p;
  p.padding = {1, 1};
  p.deformable_groups = 2;
  return p;
}

class Dcnv2Case : public ::testing::TestWithParam<std::string> {};

TEST_P(Dcnv2Case, CpuImplementationMatchesTorchvision) {
  const std::string name = GetParam();
  const std::filesystem::path path =
      std::filesystem::path(TENSORACLE_FIXTURES_DIR) / "plugins" / "dcnv2" / "cases.safetensors";
  auto fixtures = Weights::open(path.string());
  ASSERT_TRUE(fixtures.is_ok()) << fixtures.status().to_string();
  const auto array = [&](const std::string& key) {
    auto view = fixtures->view(name + "." + key);
    EXPECT_TRUE(view.is_ok()) << view.status().to_string();
    return *view;
  };
  const bool half = name.size() > 5 && name.substr(name.size() - 5) == "_fp16";
  const ArrayView values = array("parameters");
  ASSERT_EQ(values.element_count(), 8);
  const auto* v = static_cast<const int32_t*>(values.data);
  Dcnv2Parameters p;
  p.stride = {v[0], v[1]};
  p.padding = {v[2], v[3]};
  p.dilation = {v[4], v[5]};
  p.groups = v[6];
  p.deformable_groups = v[7];
  p.type = half ? Dcnv2Type::kFloat16 : Dcnv2Type::kFloat32;

  std::vector<Dims> shapes;
  NamedArrayViews inputs;
  for (const char* input : kInputs) {
    inputs[input] = array(input);
    shapes.push_back(inputs[input].shape);
  }
  Network net;
  ASSERT_TRUE(define(net, shapes, encode(p), half ? DataType::kFloat16 : DataType::kFloat32).is_ok()) << net.status().to_string();
  auto cpu = backends::create_backend("cpu").value();
  auto outputs = cpu->execute(net, inputs);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().to_string();
  const HostArray& y = outputs->at("y");

  // fp16: within 2e-3 of the fp32 result of the same fp16 values, and within 5e-3 of torchvision's
  // own fp16 output, which rounds more (1.4e-3 from that fp32 result on "basic"; this plugin: 2.5e-4).
  const std::vector<std::pair<std::string, double>> references =
      half ? std::vector<std::pair<std::string, double>>{{"y", 2e-3}, {"y_fp16", 5e-3}}
           : std::vector<std::pair<std::string, double>>{{"y", 1e-6}, {"y_fp64", 1e-6}};
  for (const auto& [reference, rel_l2_limit] : references) {
    auto cmp = compare_outputs(y.view(), array(reference));
    ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
    std::cout << name << " vs torchvision " << reference << ": rel L2 " << cmp->rel_l2_error << ", max abs "
              << cmp->max_abs_error << "\n";
    EXPECT_LE(cmp->rel_l2_error, rel_l2_limit) << name << " vs " << reference;
    if (!half) {
      EXPECT_LE(cmp->max_abs_error, 1e-5) << name << " vs " << reference;
    }
    EXPECT_EQ(cmp->candidate_non_finite.total(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Torchvision, Dcnv2Case,
                         ::testing::Values("basic", "stride2_padding", "dilation", "groups2", "deformable_groups2",
                                           "nonsquare", "outside", "everything", "basic_fp16", "outside_fp16",
                                           "everything_fp16"),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

TEST(Dcnv2Parameters, EncodeThenDecodeGivesTheSameParameters) {
  Dcnv2Parameters p;
  p.stride = {2, 3};
  p.padding = {0, 4};
  p.dilation = {5, 1};
  p.groups = 2;
  p.deformable_groups = 7;
  p.type = Dcnv2Type::kFloat16;
  const std::string bytes = encode(p);
  EXPECT_EQ(bytes.size(), 36u);
  auto decoded = tensoracle_plugins::decode(bytes);
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->stride, p.stride);
  EXPECT_EQ(decoded->padding, p.padding);
  EXPECT_EQ(decoded->dilation, p.dilation);
  EXPECT_EQ(decoded->groups, 2);
  EXPECT_EQ(decoded->deformable_groups, 7);
  EXPECT_EQ(decoded->type, Dcnv2Type::kFloat16);
}

TEST(Dcnv2Parameters, MalformedBytesAreRefusedWithTheFieldAndValueNamed) {
  const std::string good = encode(valid_parameters());
  const std::string wrong_size = define_error(valid_shapes(), good.substr(0, 35));
  EXPECT_TRUE(contains(wrong_size, "plugin 'tensoracle::dcnv2 1.0.0'")) << wrong_size;
  EXPECT_TRUE(contains(wrong_size, "parameters must be 36 bytes")) << wrong_size;
  EXPECT_TRUE(contains(wrong_size, "got 35")) << wrong_size;
  EXPECT_TRUE(contains(define_error(valid_shapes(), good + "x"), "got 37"));
  EXPECT_TRUE(contains(define_error(valid_shapes(), ""), "got 0"));

  const auto with = [](auto change) {
    Dcnv2Parameters p = valid_parameters();
    change(p);
    return encode(p);
  };
  const struct {
    std::string bytes;
    std::string message;
  } cases[] = {
      {with([](Dcnv2Parameters& p) { p.stride[0] = 0; }), "stride h is 0; it must be in [1, 65536]"},
      {with([](Dcnv2Parameters& p) { p.stride[1] = -2; }), "stride w is -2"},
      {with([](Dcnv2Parameters& p) { p.padding[0] = -1; }), "padding h is -1; it must be in [0, 65536]"},
      {with([](Dcnv2Parameters& p) { p.dilation[1] = 0; }), "dilation w is 0"},
      {with([](Dcnv2Parameters& p) { p.groups = 0; }), "groups is 0"},
      {with([](Dcnv2Parameters& p) { p.deformable_groups = -3; }), "deformable groups is -3"},
      {with([](Dcnv2Parameters& p) { p.stride[0] = 1 << 20; }), "stride h is 1048576"},
      {with([](Dcnv2Parameters& p) { p.type = static_cast<Dcnv2Type>(7); }), "type is 7; it must be 0 (fp32) or 1 (fp16)"},
  };
  for (const auto& c : cases) {
    const std::string error = define_error(valid_shapes(), c.bytes);
    EXPECT_TRUE(contains(error, c.message)) << error;
  }
}

TEST(Dcnv2Shapes, TheValidLayerHasTheComputedOutputShape) {
  Network net;
  ASSERT_TRUE(define(net, valid_shapes(), encode(valid_parameters()), DataType::kFloat32).is_ok()) << net.status().to_string();
  Dcnv2Parameters strided = valid_parameters();
  strided.stride = {2, 3};
  strided.dilation = {2, 1};
  // x [1, 4, 6, 6], padding 1: Ho = (6 + 2 - 2*2 - 1) / 2 + 1 = 2, Wo = (6 + 2 - 3) / 3 + 1 = 2.
  Network net2;
  ASSERT_TRUE(define(net2, {{1, 4, 6, 6}, {1, 36, 2, 2}, {1, 18, 2, 2}, {6, 4, 3, 3}, {6}}, encode(strided),
                     DataType::kFloat32).is_ok())
      << net2.status().to_string();
  EXPECT_EQ(net2.tensor(net2.outputs()[0]).desc.shape, (Dims{1, 6, 2, 2}));
}

TEST(Dcnv2Shapes, InconsistentShapesAreRefusedWithTheExpectedShape) {
  const auto shapes_with = [](size_t input, Dims shape) {
    std::vector<Dims> shapes = valid_shapes();
    shapes[input] = std::move(shape);
    return shapes;
  };
  const std::string good = encode(valid_parameters());
  const struct {
    std::vector<Dims> shapes;
    std::string message;
  } cases[] = {
      {shapes_with(1, {1, 18, 6, 6}), "offset [1, 18, 6, 6] must be [N, 2*dg*kh*kw, Ho, Wo] = [1, 36, 6, 6]"},
      {shapes_with(1, {1, 36, 5, 6}), "= [1, 36, 6, 6]"},
      {shapes_with(2, {2, 18, 6, 6}), "mask [2, 18, 6, 6] must be [N, dg*kh*kw, Ho, Wo] = [1, 18, 6, 6]"},
      {shapes_with(3, {6, 2, 3, 3}), "weight [6, 2, 3, 3] must be [K, C/groups = 4, kh, kw]"},
      {shapes_with(4, {5}), "bias [5] must be [K] = [6]"},
      {shapes_with(0, {1, 4, 6}), "input 'x' must have rank 4, got [1, 4, 6]"},
      {shapes_with(0, {-1, 4, 6, 6}), "input 'x' shape [-1, 4, 6, 6] must be static"},
      {shapes_with(0, {1, 3, 6, 6}), "deformable groups 2 must divide x's channels (3)"},
      {{{1, 4, 1, 1}, {1, 100, 1, 1}, {1, 50, 1, 1}, {6, 4, 5, 5}, {6}},
       "the dilated kernel (5 x 5) is larger than the padded input (3 x 3)"},
  };
  for (const auto& c : cases) {
    const std::string error = define_error(c.shapes, good);
    EXPECT_TRUE(contains(error, c.message)) << error;
  }
  Dcnv2Parameters grouped = valid_parameters();
  grouped.groups = 4;  // divides C = 4 but not K = 6
  const std::string groups_error =
      define_error({{1, 4, 6, 6}, {1, 36, 6, 6}, {1, 18, 6, 6}, {6, 1, 3, 3}, {6}}, encode(grouped));
  EXPECT_TRUE(contains(groups_error, "groups 4 must divide x's channels (4) and weight's output channels (6)"))
      << groups_error;
}

// Format negotiation (docs/plugins.md "Formats") casts fp16 inputs to the fp32 the parameters
// declare; an integer input cannot be cast and is refused with what the plugin allows.
TEST(Dcnv2Shapes, InputsOfAnotherFloatTypeAreCastAndOfAnIntegerTypeRefused) {
  Network cast;
  const Status defined = define(cast, valid_shapes(), encode(valid_parameters()), DataType::kFloat16);
  EXPECT_TRUE(defined.is_ok()) << defined.to_string();
  const std::string error = define_error(valid_shapes(), encode(valid_parameters()), DataType::kInt32);
  EXPECT_TRUE(contains(error, "input 0 'x' (int32[1,4,6,6], written LINEAR): no combination it allows can be served"))
      << error;
  EXPECT_TRUE(contains(error, "it allows fp32/LINEAR (types convert only among fp32, fp16 and bf16)")) << error;
}

}  // namespace
}  // namespace tensoracle
