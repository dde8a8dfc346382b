// deformable::deform_sample (examples/deformable/custom_plugin), the deformable example's custom
// cubin plugin, through the plugin API on host arrays (its CPU implementation), for what the
// example's graphs do not reach: an fp16/HWC8 feature map (the builder hands plugins LINEAR only
// today), laid out here with C = 5 padded to 8, must give exactly the columns of the same values
// in LINEAR, and the padding must never be read; its declaration file is the plugin's own; the
// type rules of its two inputs; its parameter and shape errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "deformable/custom_plugin/deform_sample_parameters.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/plugin_registry.h"

namespace tensoracle {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kN = 2, kC = 5, kPaddedC = 8, kH = 6, kW = 7;
const TypeFormat kF16Linear{DataType::kFloat16, TensorFormat::kLinear};
const TypeFormat kF16Hwc8{DataType::kFloat16, TensorFormat::kHwc8};
const TypeFormat kF32Linear{DataType::kFloat32, TensorFormat::kLinear};

const RegisteredPlugin& deform_sample(PluginRegistry& plugins) {
  const Status loaded = plugins.load_library(DEFORM_SAMPLE_PLUGIN_LIBRARY);
  EXPECT_TRUE(loaded.is_ok()) << loaded.to_string();
  auto found = plugins.find("deformable::deform_sample", "1.0.0");
  EXPECT_TRUE(found.is_ok()) << found.status().to_string();
  return **found;
}

std::unique_ptr<Plugin> make(const RegisteredPlugin& registered, DataType type) {
  auto plugin = registered.creator.create(deformable::encode_deform_sample(type));
  EXPECT_TRUE(plugin.is_ok()) << plugin.status().to_string();
  return std::move(*plugin);
}

// Seeded values: x in [-1, 1]; offsets up to 3 pixels (samples land between pixels, on the edges
// and outside the image); mask logits in [-3, 3]. All fp16 values, so both layouts hold the same.
struct Inputs {
  std::vector<uint16_t> x;            // LINEAR [N, C, H, W]
  std::vector<uint16_t> offset_mask;  // [N, 27, H, W]
};

Inputs make_inputs() {
  std::mt19937 rng(15);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  Inputs in;
  for (int64_t i = 0; i < kN * kC * kH * kW; ++i) in.x.push_back(float_to_fp16(unit(rng)));
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t ch = 0; ch < 27; ++ch)
      for (int64_t p = 0; p < kH * kW; ++p) in.offset_mask.push_back(float_to_fp16(3.0f * unit(rng)));
  return in;
}

std::vector<uint16_t> run(Plugin& plugin, const TypeFormat& x_format, const void* x, const Inputs& in) {
  const std::vector<PluginTensorDesc> inputs{{x_format, Dims{kN, kC, kH, kW}}, {kF16Linear, Dims{kN, 27, kH, kW}}};
  auto shapes = plugin.computed_output_shapes(inputs);
  EXPECT_TRUE(shapes.is_ok()) << shapes.status().to_string();
  EXPECT_EQ((*shapes)[0], (Dims{kN, kC * 9, kH * kW}));
  const Status configured = plugin.configure(inputs, {{kF16Linear, (*shapes)[0]}});
  EXPECT_TRUE(configured.is_ok()) << configured.to_string();
  std::vector<uint16_t> columns(static_cast<size_t>(kN * kC * 9 * kH * kW), 0x7E00);  // NaN: each must be written
  const Status ran = plugin.run_on_host({{x, in.offset_mask.data()}, {columns.data()}}, nullptr);
  EXPECT_TRUE(ran.is_ok()) << ran.to_string();
  return columns;
}

TEST(DeformSamplePlugin, Fp16Hwc8GivesTheColumnsOfTheSameValuesInLinear) {
  PluginRegistry plugins;
  std::unique_ptr<Plugin> plugin = make(deform_sample(plugins), DataType::kFloat16);
  const Inputs in = make_inputs();
  // HWC8: element (n, c, h, w) at ((n*H + h)*W + w)*8 + c; channels 5..7 are padding, set to NaN
  // so that reading one would show in the columns.
  std::vector<uint16_t> hwc8(static_cast<size_t>(kN * kH * kW * kPaddedC), 0x7E00);
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t c = 0; c < kC; ++c)
      for (int64_t p = 0; p < kH * kW; ++p)
        hwc8[static_cast<size_t>((n * kH * kW + p) * kPaddedC + c)] = in.x[static_cast<size_t>((n * kC + c) * kH * kW + p)];

  const std::vector<uint16_t> linear = run(*plugin, kF16Linear, in.x.data(), in);
  const std::vector<uint16_t> from_hwc8 = run(*plugin, kF16Hwc8, hwc8.data(), in);
  ASSERT_EQ(linear.size(), from_hwc8.size());
  int64_t nonzero = 0;
  for (size_t i = 0; i < linear.size(); ++i) {
    ASSERT_TRUE(std::isfinite(fp16_to_float(linear[i]))) << "LINEAR column element " << i;
    ASSERT_EQ(linear[i], from_hwc8[i]) << "column element " << i;
    nonzero += fp16_to_float(linear[i]) != 0.0f;
  }
  // Most samples land inside the image: the comparison is not of zeros.
  EXPECT_GT(nonzero, static_cast<int64_t>(linear.size()) / 2);
}

TEST(DeformSamplePlugin, Fp32ColumnsAreTheSampledValuesTimesTheMask) {
  // One image, one channel, offsets that move every tap by exactly one pixel right and zero mask
  // logits (sigmoid 0.5): tap (ky, kx) of pixel (oy, ox) reads x at (oy - 1 + ky, ox + kx).
  PluginRegistry plugins;
  std::unique_ptr<Plugin> plugin = make(deform_sample(plugins), DataType::kFloat32);
  constexpr int64_t h = 3, w = 4;
  std::vector<float> x(static_cast<size_t>(h * w));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1);
  std::vector<float> offset_mask(static_cast<size_t>(27 * h * w), 0.0f);
  for (int64_t t = 0; t < 9; ++t)
    for (int64_t p = 0; p < h * w; ++p) offset_mask[static_cast<size_t>((2 * t + 1) * h * w + p)] = 1.0f;  // dx
  const std::vector<PluginTensorDesc> inputs{{kF32Linear, Dims{1, 1, h, w}}, {kF32Linear, Dims{1, 27, h, w}}};
  ASSERT_TRUE(plugin->configure(inputs, {{kF32Linear, Dims{1, 9, h * w}}}).is_ok());
  std::vector<float> columns(static_cast<size_t>(9 * h * w), NAN);
  ASSERT_TRUE(plugin->run_on_host({{x.data(), offset_mask.data()}, {columns.data()}}, nullptr).is_ok());
  for (int64_t t = 0; t < 9; ++t)
    for (int64_t oy = 0; oy < h; ++oy)
      for (int64_t ox = 0; ox < w; ++ox) {
        const int64_t sy = oy - 1 + t / 3, sx = ox + t % 3;
        const float expected = sy >= 0 && sy < h && sx < w ? 0.5f * x[static_cast<size_t>(sy * w + sx)] : 0.0f;
        EXPECT_EQ(columns[static_cast<size_t>((t * h + oy) * w + ox)], expected) << "tap " << t << " at " << oy << "," << ox;
      }
}

TEST(DeformSamplePlugin, ItsDeclarationFileIsTheFp32PluginsDeclaration) {
  PluginRegistry plugins;
  const RegisteredPlugin& registered = deform_sample(plugins);
  auto file = read_plugin_declaration(
      (fs::path(TENSORACLE_SOURCE_DIR) / "examples" / "deformable" / "custom_plugin" / "deform_sample.json").string());
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  const PluginDeclaration fp32 = make(registered, DataType::kFloat32)->declaration();
  EXPECT_EQ(plugin_declaration_to_json(*file), plugin_declaration_to_json(fp32));
  // The fp16 plugin differs in its output's type only.
  PluginDeclaration fp16 = make(registered, DataType::kFloat16)->declaration();
  EXPECT_EQ(fp16.io.outputs[0].type_format, kF16Linear);
  fp16.io.outputs[0].type_format = kF32Linear;
  EXPECT_EQ(plugin_declaration_to_json(fp16), plugin_declaration_to_json(fp32));
  EXPECT_EQ(registered.creator.bundle.kernels, file->bundle.kernels);
  EXPECT_EQ(registered.creator.bundle.architectures, file->bundle.architectures);
}

TEST(DeformSamplePlugin, OffsetMaskFollowsTheTypeChosenForX) {
  PluginRegistry plugins;
  const RegisteredPlugin& registered = deform_sample(plugins);
  std::unique_ptr<Plugin> fp16 = make(registered, DataType::kFloat16);
  std::unique_ptr<Plugin> fp32 = make(registered, DataType::kFloat32);
  EXPECT_TRUE(fp16->supports(0, kF16Hwc8, {}));
  EXPECT_TRUE(fp16->supports(0, kF16Linear, {}));
  EXPECT_FALSE(fp16->supports(0, kF32Linear, {}));
  EXPECT_TRUE(fp16->supports(1, kF16Linear, {kF16Hwc8}));
  EXPECT_FALSE(fp16->supports(1, kF32Linear, {kF16Hwc8}));
  EXPECT_FALSE(fp16->supports(1, kF16Hwc8, {kF16Hwc8}));
  EXPECT_TRUE(fp32->supports(0, kF32Linear, {}));
  EXPECT_FALSE(fp32->supports(0, kF16Hwc8, {}));
  EXPECT_TRUE(fp32->supports(1, kF32Linear, {kF32Linear}));
}

TEST(DeformSamplePlugin, BadParametersAndShapesAreErrorsNamingThem) {
  PluginRegistry plugins;
  const RegisteredPlugin& registered = deform_sample(plugins);
  auto short_bytes = registered.creator.create("ab");
  ASSERT_FALSE(short_bytes.is_ok());
  EXPECT_NE(short_bytes.status().message().find("4 bytes"), std::string::npos) << short_bytes.status().to_string();
  auto bad_type = registered.creator.create(std::string("\x07\0\0\0", 4));
  ASSERT_FALSE(bad_type.is_ok());
  EXPECT_NE(bad_type.status().message().find("element type 7"), std::string::npos) << bad_type.status().to_string();

  std::unique_ptr<Plugin> plugin = make(registered, DataType::kFloat32);
  const Status wrong = plugin->configure({{kF32Linear, Dims{1, 4, 5, 5}}, {kF32Linear, Dims{1, 18, 5, 5}}},
                                         {{kF32Linear, Dims{1, 36, 25}}});
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.message().find("offset_mask [1, 18, 5, 5] must be [N, 27, H, W] = [1, 27, 5, 5]"), std::string::npos)
      << wrong.to_string();
  const Status mixed = plugin->configure({{kF16Linear, Dims{1, 4, 5, 5}}, {kF16Linear, Dims{1, 27, 5, 5}}},
                                         {{kF32Linear, Dims{1, 36, 25}}});
  ASSERT_FALSE(mixed.is_ok());
  EXPECT_NE(mixed.message().find("x fp16/LINEAR"), std::string::npos) << mixed.to_string();
}

}  // namespace
}  // namespace tensoracle
