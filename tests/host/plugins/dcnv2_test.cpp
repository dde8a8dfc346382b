// tensoracle::dcnv2 (plugins/dcnv2) on the cpu backend, loaded from libtensoracle_plugins.so:
// - matches torchvision.ops.deform_conv2d on every case of tests/fixtures/plugins/dcnv2/
//   (scripts/gen-deformable-references.py): strides, padding, dilation, groups, deformable groups,
//   a non-square kernel and samples on and beyond the image's edges; fp32 within rel L2 1e-6 and
//   max abs 1e-5 of both torchvision's fp32 and fp64 outputs; fp16 within rel L2 2e-3 of
//   torchvision's fp32 output of the same fp16 values (fp16 columns and outputs, fp32 sums) and
//   5e-3 of torchvision's fp16 output;
// - with an fp16 x in HWC8 (C padded to 8, the padding NaN so that a read of it shows), gives
//   exactly the result of the same x in LINEAR, and so matches torchvision at the same limits;
//   the cpu backend hands plugins LINEAR tensors, so these cases drive the plugin directly, and
//   format negotiation is checked to choose HWC8 where a producer already wrote it (as the cuda
//   backend's channels-last fp16 convolutions do; tests/gpu/bundled_plugins_test.cpp runs that);
// - refuses any other type/format combination, naming the input and its format;
// - refuses malformed parameters and inconsistent shapes with an error naming the value.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <utility>
#include <vector>

#include "backends/registry.h"
#include "dcnv2/dcnv2_parameters.h"
#include "plugin/format_negotiation.h"
#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/plugin_registry.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

using tensoracle_plugins::Dcnv2Parameters;
using tensoracle_plugins::Dcnv2Type;
using tensoracle_plugins::from_values;
using tensoracle_plugins::kDcnv2Identity;

const char* const kInputs[] = {"x", "offset", "mask", "weight", "bias"};
constexpr TypeFormat kF32Linear{DataType::kFloat32, TensorFormat::kLinear};
constexpr TypeFormat kF32Hwc8{DataType::kFloat32, TensorFormat::kHwc8};
constexpr TypeFormat kF16Linear{DataType::kFloat16, TensorFormat::kLinear};
constexpr TypeFormat kF16Hwc8{DataType::kFloat16, TensorFormat::kHwc8};

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

// One torchvision case of tests/fixtures/plugins/dcnv2/cases.safetensors: its arrays ("x",
// "parameters", "y", ...) and its parameters; names ending in "_fp16" hold fp16 inputs.
struct TorchvisionCase {
  std::string name;
  Weights fixtures;

  static TorchvisionCase open(const std::string& name) {
    const std::filesystem::path path =
        std::filesystem::path(TENSORACLE_FIXTURES_DIR) / "plugins" / "dcnv2" / "cases.safetensors";
    return {name, Weights::open(path.string()).value()};
  }
  bool half() const { return name.size() > 5 && name.substr(name.size() - 5) == "_fp16"; }
  ArrayView array(const std::string& key) const {
    auto view = fixtures.view(name + "." + key);
    EXPECT_TRUE(view.is_ok()) << view.status().to_string();
    return *view;
  }
  Dcnv2Parameters parameters() const {
    const ArrayView values = array("parameters");
    EXPECT_EQ(values.element_count(), 8);
    return from_values(static_cast<const int32_t*>(values.data), half() ? Dcnv2Type::kFloat16 : Dcnv2Type::kFloat32);
  }

  // y against torchvision's outputs. fp16: within 2e-3 of the fp32 result of the same fp16
  // values, and within 5e-3 of torchvision's own fp16 output, which rounds more (1.4e-3 from that
  // fp32 result on "basic"; this plugin: 2.5e-4).
  void expect_matches_torchvision(const ArrayView& y) const {
    const std::vector<std::pair<std::string, double>> references =
        half() ? std::vector<std::pair<std::string, double>>{{"y", 2e-3}, {"y_fp16", 5e-3}}
               : std::vector<std::pair<std::string, double>>{{"y", 1e-6}, {"y_fp64", 1e-6}};
    for (const auto& [reference, rel_l2_limit] : references) {
      auto cmp = compare_outputs(y, array(reference));
      ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
      std::cout << name << " vs torchvision " << reference << ": rel L2 " << cmp->rel_l2_error << ", max abs "
                << cmp->max_abs_error << "\n";
      EXPECT_LE(cmp->rel_l2_error, rel_l2_limit) << name << " vs " << reference;
      if (!half()) {
        EXPECT_LE(cmp->max_abs_error, 1e-5) << name << " vs " << reference;
      }
      EXPECT_EQ(cmp->candidate_non_finite.total(), 0);
    }
  }
};

class Dcnv2Case : public ::testing::TestWithParam<std::string> {};

TEST_P(Dcnv2Case, CpuImplementationMatchesTorchvision) {
  const TorchvisionCase c = TorchvisionCase::open(GetParam());
  std::vector<Dims> shapes;
  NamedArrayViews inputs;
  for (const char* input : kInputs) {
    inputs[input] = c.array(input);
    shapes.push_back(inputs[input].shape);
  }
  Network net;
  ASSERT_TRUE(define(net, shapes, encode(c.parameters()), c.half() ? DataType::kFloat16 : DataType::kFloat32).is_ok())
      << net.status().to_string();
  auto cpu = backends::create_backend("cpu").value();
  auto outputs = cpu->execute(net, inputs);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().to_string();
  c.expect_matches_torchvision(outputs->at("y").view());
}

INSTANTIATE_TEST_SUITE_P(Torchvision, Dcnv2Case,
                         ::testing::Values("basic", "stride2_padding", "dilation", "groups2", "deformable_groups2",
                                           "nonsquare", "outside", "everything", "basic_fp16", "outside_fp16",
                                           "everything_fp16"),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

// ---- formats: x fp32/LINEAR, fp16/LINEAR or fp16/HWC8; the other inputs LINEAR in x's type ----

// A dcnv2 plugin made from `p` through the bundled library, which `plugins` keeps loaded.
std::unique_ptr<Plugin> make_dcnv2(const PluginRegistry& plugins, const Dcnv2Parameters& p) {
  auto registered = plugins.find(plugin_qualified_name(kDcnv2Identity), kDcnv2Identity.version);
  EXPECT_TRUE(registered.is_ok()) << registered.status().to_string();
  auto plugin = create_plugin(**registered, encode(p));
  EXPECT_TRUE(plugin.is_ok()) << plugin.status().to_string();
  return std::move(*plugin);
}

// The plugin's CPU implementation on `c`'s fp16 inputs, x given in `x_format` at `x_data` and the
// others LINEAR, into a NaN-poisoned y: what the cpu backend would do had it negotiated x so.
HostArray run_fp16_on_host(const TorchvisionCase& c, const TypeFormat& x_format, const void* x_data) {
  const PluginRegistry plugins = bundled_plugins();
  std::unique_ptr<Plugin> plugin = make_dcnv2(plugins, c.parameters());
  std::vector<PluginTensorDesc> inputs;
  PluginBuffers buffers;
  for (size_t i = 0; i < 5; ++i) {
    inputs.push_back({i == 0 ? x_format : kF16Linear, c.array(kInputs[i]).shape});
    buffers.inputs.push_back(i == 0 ? x_data : c.array(kInputs[i]).data);
  }
  auto shapes = plugin->computed_output_shapes(inputs);
  EXPECT_TRUE(shapes.is_ok()) << shapes.status().to_string();
  const std::vector<PluginTensorDesc> outputs{{kF16Linear, (*shapes)[0]}};
  const Status configured = plugin->configure(inputs, outputs);
  EXPECT_TRUE(configured.is_ok()) << configured.to_string();
  auto workspace_bytes = plugin->workspace_bytes(inputs, outputs);
  EXPECT_TRUE(workspace_bytes.is_ok()) << workspace_bytes.status().to_string();
  std::vector<unsigned char> workspace(*workspace_bytes);
  HostArray y = HostArray::zeros(DataType::kFloat16, (*shapes)[0]).value();
  for (int64_t i = 0; i < y.element_count(); ++i) y.data_as<uint16_t>()[i] = 0x7E00;  // NaN: each must be written
  buffers.outputs.push_back(y.data());
  const Status ran = plugin->run_on_host(buffers, workspace.data());
  EXPECT_TRUE(ran.is_ok()) << ran.to_string();
  return y;
}

// x [N, C, H, W] fp16 LINEAR laid out HWC8: element (n, c, h, w) at ((n*H + h)*W + w)*C8 + c,
// C8 = C rounded up to 8; the padding channels NaN, so that reading one would show in y.
std::vector<uint16_t> to_hwc8_with_nan_padding(const ArrayView& x) {
  const int64_t n_size = x.shape[0], c_size = x.shape[1], pixels = x.shape[2] * x.shape[3];
  const int64_t padded = (c_size + 7) / 8 * 8;
  const auto* linear = static_cast<const uint16_t*>(x.data);
  std::vector<uint16_t> hwc8(static_cast<size_t>(n_size * pixels * padded), 0x7E00);
  for (int64_t n = 0; n < n_size; ++n)
    for (int64_t c = 0; c < c_size; ++c)
      for (int64_t p = 0; p < pixels; ++p)
        hwc8[static_cast<size_t>((n * pixels + p) * padded + c)] = linear[(n * c_size + c) * pixels + p];
  return hwc8;
}

class Dcnv2Hwc8Case : public ::testing::TestWithParam<std::string> {};

TEST_P(Dcnv2Hwc8Case, Fp16XInHwc8GivesExactlyTheLinearResultAndMatchesTorchvision) {
  const TorchvisionCase c = TorchvisionCase::open(GetParam());
  const ArrayView x = c.array("x");
  ASSERT_EQ(x.dtype, DataType::kFloat16);
  ASSERT_NE(x.shape[1] % 8, 0) << "the case must have padding channels to leave unread";
  const std::vector<uint16_t> x_hwc8 = to_hwc8_with_nan_padding(x);

  const HostArray from_linear = run_fp16_on_host(c, kF16Linear, x.data);
  const HostArray from_hwc8 = run_fp16_on_host(c, kF16Hwc8, x_hwc8.data());
  ASSERT_EQ(from_hwc8.shape(), from_linear.shape());
  int64_t nonzero = 0;
  for (int64_t i = 0; i < from_linear.element_count(); ++i) {
    const uint16_t want = from_linear.data_as<uint16_t>()[i];
    ASSERT_TRUE(std::isfinite(fp16_to_float(want))) << "LINEAR y element " << i;
    ASSERT_EQ(from_hwc8.data_as<uint16_t>()[i], want) << "y element " << i;
    nonzero += fp16_to_float(want) != 0.0f;
  }
  EXPECT_GT(nonzero, from_linear.element_count() / 2) << "the comparison is not of zeros";
  c.expect_matches_torchvision(from_hwc8.view());
}

INSTANTIATE_TEST_SUITE_P(Torchvision, Dcnv2Hwc8Case, ::testing::Values("basic_fp16", "outside_fp16", "everything_fp16"),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

// The choices format negotiation makes for x (src/plugin/format_negotiation.h, the same code on
// every backend), given what its producer wrote; the other inputs are network inputs, LINEAR.
std::vector<TypeFormat> negotiated(Dcnv2Type type, DataType x_type, std::vector<TensorFormat> x_written) {
  const PluginRegistry plugins = bundled_plugins();
  Dcnv2Parameters p = valid_parameters();
  p.type = type;
  std::unique_ptr<Plugin> plugin = make_dcnv2(plugins, p);
  const DataType io_type = type == Dcnv2Type::kFloat16 ? DataType::kFloat16 : DataType::kFloat32;
  std::vector<plugin::ProvidedInput> provided;
  const std::vector<Dims> shapes = valid_shapes();
  for (size_t i = 0; i < 5; ++i)
    provided.push_back(i == 0 ? plugin::ProvidedInput{x_type, shapes[0], std::move(x_written)}
                              : plugin::ProvidedInput{io_type, shapes[i], {}});
  auto chosen = plugin::negotiate_plugin_inputs(*plugin, "dcnv2", plugin->declaration().io, provided);
  EXPECT_TRUE(chosen.is_ok()) << chosen.status().to_string();
  return chosen.is_ok() ? *chosen : std::vector<TypeFormat>{};
}

TEST(Dcnv2Formats, AnFp16XAlreadyInHwc8IsReadInPlaceAndEveryOtherXLinear) {
  const std::vector<TypeFormat> rest(4, kF16Linear);
  const auto with_x = [&](const TypeFormat& x) {
    std::vector<TypeFormat> all{x};
    all.insert(all.end(), rest.begin(), rest.end());
    return all;
  };
  // The cuda backend's channels-last fp16 tensor with C % 8 == 0 is both HWC and HWC8.
  EXPECT_EQ(negotiated(Dcnv2Type::kFloat16, DataType::kFloat16, {TensorFormat::kHwc, TensorFormat::kHwc8}),
            with_x(kF16Hwc8));
  // LINEAR, as on the cpu backend: taken as it is.
  EXPECT_EQ(negotiated(Dcnv2Type::kFloat16, DataType::kFloat16, {}), with_x(kF16Linear));
  // Channels-last that is not HWC8 (C % 8 != 0): both need a reformat; LINEAR comes first.
  EXPECT_EQ(negotiated(Dcnv2Type::kFloat16, DataType::kFloat16, {TensorFormat::kHwc}), with_x(kF16Linear));
  // The fp32 plugin declares no HWC8: an fp16 HWC8 producer is cast and reformatted to fp32/LINEAR.
  EXPECT_EQ(negotiated(Dcnv2Type::kFloat32, DataType::kFloat16, {TensorFormat::kHwc, TensorFormat::kHwc8}),
            std::vector<TypeFormat>(5, kF32Linear));
}

TEST(Dcnv2Formats, TheOtherInputsFollowTheTypeChosenForXInLinear) {
  const PluginRegistry plugins = bundled_plugins();
  Dcnv2Parameters p = valid_parameters();
  p.type = Dcnv2Type::kFloat16;
  std::unique_ptr<Plugin> fp16 = make_dcnv2(plugins, p);
  std::unique_ptr<Plugin> fp32 = make_dcnv2(plugins, valid_parameters());
  EXPECT_TRUE(fp16->supports(0, kF16Linear, {}));
  EXPECT_TRUE(fp16->supports(0, kF16Hwc8, {}));
  EXPECT_FALSE(fp16->supports(0, kF32Linear, {}));
  EXPECT_TRUE(fp32->supports(0, kF32Linear, {}));
  EXPECT_FALSE(fp32->supports(0, kF32Hwc8, {}));
  EXPECT_FALSE(fp32->supports(0, kF16Hwc8, {}));
  for (int input = 1; input < 5; ++input) {
    SCOPED_TRACE(kInputs[input]);
    std::vector<TypeFormat> after_x_hwc8(static_cast<size_t>(input), kF16Linear);
    after_x_hwc8[0] = kF16Hwc8;
    EXPECT_TRUE(fp16->supports(input, kF16Linear, after_x_hwc8));
    EXPECT_FALSE(fp16->supports(input, kF16Hwc8, after_x_hwc8));
    EXPECT_FALSE(fp16->supports(input, kF32Linear, after_x_hwc8));
    EXPECT_TRUE(fp32->supports(input, kF32Linear, std::vector<TypeFormat>(static_cast<size_t>(input), kF32Linear)));
    EXPECT_FALSE(fp32->supports(input, kF16Linear, std::vector<TypeFormat>(static_cast<size_t>(input), kF32Linear)));
  }
}

TEST(Dcnv2Formats, ConfigureRefusesAnyOtherCombinationNamingTheInputAndItsFormat) {
  const PluginRegistry plugins = bundled_plugins();
  Dcnv2Parameters half = valid_parameters();
  half.type = Dcnv2Type::kFloat16;
  const auto configure_error = [&](const Dcnv2Parameters& p, const std::vector<TypeFormat>& formats) {
    std::unique_ptr<Plugin> plugin = make_dcnv2(plugins, p);
    std::vector<PluginTensorDesc> inputs;
    for (size_t i = 0; i < 5; ++i) inputs.push_back({formats[i], valid_shapes()[i]});
    const TypeFormat y_format = p.type == Dcnv2Type::kFloat16 ? kF16Linear : kF32Linear;
    const Status status = plugin->configure(inputs, {{y_format, Dims{1, 6, 6, 6}}});
    EXPECT_FALSE(status.is_ok());
    return status.message();
  };
  const auto formats = [](TypeFormat x, TypeFormat rest, size_t odd_input = 0, TypeFormat odd = {}) {
    std::vector<TypeFormat> all(5, rest);
    all[0] = x;
    if (odd_input != 0) all[odd_input] = odd;
    return all;
  };
  const struct {
    Dcnv2Parameters p;
    std::vector<TypeFormat> formats;
    std::string message;
  } cases[] = {
      {valid_parameters(), formats(kF32Hwc8, kF32Linear), "input 'x' is fp32/HWC8; it takes fp32/LINEAR"},
      {valid_parameters(), formats(kF16Hwc8, kF32Linear), "input 'x' is fp16/HWC8; it takes fp32/LINEAR"},
      {half, formats(kF32Linear, kF32Linear), "input 'x' is fp32/LINEAR; it takes fp16/LINEAR or fp16/HWC8"},
      {half, formats(kF16Hwc8, kF16Linear, 1, kF16Hwc8),
       "input 'offset' is fp16/HWC8; it takes fp16/LINEAR (LINEAR in x's type)"},
      {half, formats(kF16Linear, kF16Linear, 2, kF32Linear),
       "input 'mask' is fp32/LINEAR; it takes fp16/LINEAR (LINEAR in x's type)"},
      {half, formats(kF16Hwc8, kF16Linear, 3, TypeFormat{DataType::kFloat16, TensorFormat::kHwc}),
       "input 'weight' is fp16/HWC; it takes fp16/LINEAR (LINEAR in x's type)"},
  };
  for (const auto& c : cases) EXPECT_EQ(configure_error(c.p, c.formats), c.message);
}

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
