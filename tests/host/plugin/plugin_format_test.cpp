// Format negotiation between plugins and their neighbours (format_negotiation.h) with the format
// test plugins (test_plugins/format_plugins.h): the choices, the conversions the cpu backend makes
// (its results equal the same arithmetic in standard layers), the formats recorded in the plan
// and shown by inspect, the engine round trip, and the refusals.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backends/cpu/plugin_storage.h"
#include "host/cache/cache_testing.h"
#include "host/cli_run.h"
#include "host/engine/engine_surgery.h"
#include "host/plugin/plugin_testing.h"
#include "plugin/format_negotiation.h"
#include "tensoracle/engine.h"
#include "tensoracle/engine_file.h"
#include "tensoracle/float_formats.h"

namespace tensoracle {
namespace {

using testing::test_plugins;

const PluginIdentity kHwc8Pair{"hwc8_pair", "1.0.0", "test"};
const PluginIdentity kMultiFormat{"multi_format", "1.0.0", "test"};
constexpr TypeFormat kFp32Linear{DataType::kFloat32, TensorFormat::kLinear};
constexpr TypeFormat kFp16Linear{DataType::kFloat16, TensorFormat::kLinear};
constexpr TypeFormat kFp16Hwc8{DataType::kFloat16, TensorFormat::kHwc8};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

PluginRegistry format_plugins() { return test_plugins(TEST_FORMAT_PLUGINS_LIBRARY); }

// The plugin `identity` from `plugins` and its declared PluginIO.
struct Made {
  std::unique_ptr<Plugin> plugin;
  PluginIO io;
  std::string who;
};
Made make(const PluginRegistry& plugins, const PluginIdentity& identity) {
  const RegisteredPlugin* registered = plugins.find(plugin_qualified_name(identity), identity.version).value();
  Made made;
  made.plugin = create_plugin(*registered, "").value();
  made.io = made.plugin->declaration().io;
  made.who = registered->display_name();
  return made;
}

Result<std::vector<TypeFormat>> negotiate(const Made& made, const std::vector<plugin::ProvidedInput>& provided) {
  return plugin::negotiate_plugin_inputs(*made.plugin, made.who, made.io, provided);
}

TEST(FormatNegotiation, WhatTheProducerProvidesIsTakenAsIs) {
  const PluginRegistry plugins = format_plugins();
  const Made multi = make(plugins, kMultiFormat);
  const Dims image{1, 16, 3, 3};
  EXPECT_EQ(negotiate(multi, {{DataType::kFloat32, image, {}}, {DataType::kFloat32, image, {}}}).value(),
            (std::vector<TypeFormat>{kFp32Linear, kFp32Linear}));
  EXPECT_EQ(negotiate(multi, {{DataType::kFloat16, image, {}}, {DataType::kFloat16, image, {}}}).value(),
            (std::vector<TypeFormat>{kFp16Linear, kFp16Linear}));
  // An fp16 channels-last producer with C % 8 == 0 (the cuda backend's nhwc) already is HWC8.
  const std::vector<TensorFormat> nhwc{TensorFormat::kHwc, TensorFormat::kHwc8};
  EXPECT_EQ(negotiate(multi, {{DataType::kFloat16, image, nhwc}, {DataType::kFloat16, image, {}}}).value(),
            (std::vector<TypeFormat>{kFp16Hwc8, kFp16Linear}));
}

TEST(FormatNegotiation, TheSameTypeInAnotherFormatComesBeforeAnotherType) {
  const PluginRegistry plugins = format_plugins();
  const Made multi = make(plugins, kMultiFormat);
  // Channels-last with C = 12 is not HWC8: both LINEAR and HWC8 need a reformat, and the
  // declaration's order decides among equals.
  EXPECT_EQ(negotiate(multi, {{DataType::kFloat16, {1, 12, 3, 3}, {TensorFormat::kHwc}}, {DataType::kFloat16, {1, 12, 3, 3}, {}}})
                .value()[0],
            kFp16Linear);
  // bf16 is not allowed: another type, fp32/LINEAR (a cast, no reformat) first.
  EXPECT_EQ(negotiate(multi, {{DataType::kBFloat16, {2, 4}, {}}, {DataType::kFloat32, {2, 4}, {}}}).value()[0], kFp32Linear);
  // hwc8_pair allows one combination per input: fp32 x is cast and reformatted to fp16/HWC8.
  const Made pair = make(plugins, kHwc8Pair);
  EXPECT_EQ(negotiate(pair, {{DataType::kFloat32, {1, 12, 3, 3}, {}}, {DataType::kFloat32, {1, 12, 3, 3}, {}}}).value(),
            (std::vector<TypeFormat>{kFp16Hwc8, kFp32Linear}));
}

TEST(FormatNegotiation, SupportsIsAskedWithTheChoicesBefore) {
  const PluginRegistry plugins = format_plugins();
  const Made multi = make(plugins, kMultiFormat);
  // y must be in x's type: fp32 y is cast to fp16 rather than taken as it is.
  EXPECT_EQ(negotiate(multi, {{DataType::kFloat16, {2, 4}, {}}, {DataType::kFloat32, {2, 4}, {}}}).value(),
            (std::vector<TypeFormat>{kFp16Linear, kFp16Linear}));
}

TEST(FormatNegotiation, AnInputNoCombinationCanServeNamesThePluginTheInputAndEachCombination) {
  const PluginRegistry plugins = format_plugins();
  const Made pair = make(plugins, kHwc8Pair);
  const Status rank2 = negotiate(pair, {{DataType::kFloat16, {4, 8}, {}}, {DataType::kFloat32, {4, 8}, {}}}).status();
  EXPECT_EQ(rank2.message(),
            "plugin 'test::hwc8_pair 1.0.0' input 0 'x' (fp16[4,8], written LINEAR): no combination it allows can be "
            "served; it allows fp16/HWC8 (fp16/HWC8 needs a rank-4 [N, C, H, W] tensor, not shape [4,8])");
  const Made multi = make(plugins, kMultiFormat);
  const Status ints = negotiate(multi, {{DataType::kInt32, {2, 4}, {}}, {DataType::kFloat32, {2, 4}, {}}}).status();
  EXPECT_TRUE(contains(ints.message(), "input 0 'x' (int32[2,4], written LINEAR): no combination it allows can be served; "
                                       "it allows fp32/LINEAR (types convert only among fp32, fp16 and bf16)"))
      << ints.message();
}

TEST(PluginStorage, Hwc8PadsChannelsWithZerosAndReadsBackTheValues) {
  const Dims shape{1, 3, 2, 1};  // C = 3 padded to 8
  const std::vector<double> values{1, 2, 3, 4, 5, 6};  // [c][h]
  const HostArray storage = backends::cpu::to_plugin_storage(values.data(), shape, kFp16Hwc8).value();
  ASSERT_EQ(storage.element_count(), 16);
  std::vector<double> stored(16);
  convert_elements(DataType::kFloat16, storage.data(), DataType::kFloat64, stored.data(), 16);
  // (h = 0: c0 c1 c2 0 0 0 0 0), (h = 1: ...)
  EXPECT_EQ(stored, (std::vector<double>{1, 3, 5, 0, 0, 0, 0, 0, 2, 4, 6, 0, 0, 0, 0, 0}));
  std::vector<double> back(6);
  ASSERT_TRUE(backends::cpu::from_plugin_storage(storage, shape, TensorFormat::kHwc8, back.data()).is_ok());
  EXPECT_EQ(back, values);
}

// y = hwc8_pair(x, b) = 2 x + b in fp16 HWC8; z = multi_format(y, b) = y + b: fp32 x and b, so x
// is cast and padded for hwc8_pair, y comes back linear, and multi_format takes y fp16/LINEAR as
// it is and casts b to fp16 (its y must be in x's type).
EngineBuild format_build(const PluginRegistry& plugins, int64_t channels, bool with_plugins) {
  EngineBuild build;
  build.name = with_plugins ? "format_plugins" : "format_reference";
  build.graph_version = "1";
  build.graph = [with_plugins](Network& net, const Weights&) {
    Tensor x = net.add_input("x", DataType::kFloat32, {-1, -1, 5, 3});
    Tensor b = net.add_input("b", DataType::kFloat32, {-1, -1, 5, 3});
    if (with_plugins) {
      std::vector<Tensor> y = net.plugin({x, b}, kHwc8Pair, "", "pair");
      if (y.empty()) return net.status();
      std::vector<Tensor> z = net.plugin({y[0], b}, kMultiFormat, "", "multi");
      if (!z.empty()) net.mark_output(z[0], "z");
      return net.status();
    }
    // The same arithmetic in standard layers, each cast where the plugins' inputs are.
    Tensor x16 = net.cast(net.cast(x, DataType::kFloat16), DataType::kFloat32);
    Tensor y = net.cast(net.add(net.add(x16, x16), b), DataType::kFloat16);
    Tensor b16 = net.cast(net.cast(b, DataType::kFloat16), DataType::kFloat32);
    net.mark_output(net.add(net.cast(y, DataType::kFloat32), b16), "z");
    return net.status();
  };
  build.weights = Weights::none();
  for (const char* input : {"x", "b"})
    build.add_input(input, {ShapeRange{{1, channels, 5, 3}, {2, channels, 5, 3}, {2, channels, 5, 3}}});
  build.backend = "cpu";
  build.quiet = true;
  build.plugins = plugins;
  return build;
}

HostArray image(int64_t batch, int64_t channels, float step, float offset) {
  HostArray array = HostArray::zeros(DataType::kFloat32, {batch, channels, 5, 3}).value();
  // Multiples of 1/8 below 16: exact in fp16, so every cast above is exact too, and a value read
  // in the wrong place (a wrong layout, type or padding) shows as a difference.
  for (int64_t i = 0; i < array.element_count(); ++i)
    array.data_as<float>()[i] = step * static_cast<float>(i % 61) + offset;
  return array;
}

HostArray run(const std::string& bytes, const PluginRegistry& plugins, const HostArray& x, const HostArray& b) {
  auto engine = Engine::deserialize(bytes.data(), bytes.size(), "format.engine", plugins);
  EXPECT_TRUE(engine.is_ok()) << engine.status().to_string();
  if (!engine.is_ok()) return {};
  auto execution = engine->create_execution();
  auto outputs = execution->run_on_host({{"x", x.view()}, {"b", b.view()}});
  EXPECT_TRUE(outputs.is_ok()) << outputs.status().to_string();
  return outputs.is_ok() ? std::move(outputs->at("z")) : HostArray();
}

class FormatEngine : public ::testing::TestWithParam<int64_t> {};

TEST_P(FormatEngine, TheCpuBackendConvertsAroundThePluginsAndEqualsThePluginFreeNetwork) {
  const int64_t channels = GetParam();
  const PluginRegistry plugins = format_plugins();
  auto with = build_serialized_engine(format_build(plugins, channels, true));
  ASSERT_TRUE(with.is_ok()) << with.status().to_string();
  auto without = build_serialized_engine(format_build(plugins, channels, false));
  ASSERT_TRUE(without.is_ok()) << without.status().to_string();
  for (int64_t batch : {1, 2}) {
    const HostArray x = image(batch, channels, 0.125f, -3.0f);
    const HostArray b = image(batch, channels, -0.25f, 5.0f);
    const HostArray got = run(*with, plugins, x, b);
    const HostArray want = run(*without, plugins, x, b);
    ASSERT_EQ(got.shape(), want.shape());
    ASSERT_EQ(got.dtype(), DataType::kFloat32);
    int nonzero = 0;
    for (int64_t i = 0; i < got.element_count(); ++i) {
      EXPECT_EQ(got.data_as<float>()[i], want.data_as<float>()[i]) << "element " << i << " at batch " << batch;
      nonzero += want.data_as<float>()[i] != 0 ? 1 : 0;
    }
    EXPECT_GT(nonzero, got.element_count() / 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Channels, FormatEngine, ::testing::Values(12, 16),
                         [](const ::testing::TestParamInfo<int64_t>& channels) { return "C" + std::to_string(channels.param); });

nlohmann::json plan_layer(const std::string& bytes, const std::string& name) {
  const EngineFile file = EngineFile::from_bytes(bytes.data(), bytes.size(), "format.engine").value();
  const nlohmann::json plan = nlohmann::json::parse(file.plan().as_string_view());
  for (const auto& layer : plan["layers"])
    if (layer["name"] == name) return layer;
  return nullptr;
}

TEST(FormatEngine, ThePlanRecordsTheNegotiatedFormatsAndTheEngineRoundTrips) {
  const PluginRegistry plugins = format_plugins();
  const std::string bytes = build_serialized_engine(format_build(plugins, 12, true)).value();
  EXPECT_EQ(plan_layer(bytes, "pair")["formats"],
            nlohmann::json::parse(R"({"inputs": ["fp16/HWC8", "fp32/LINEAR"], "outputs": ["fp16/HWC8"]})"));
  EXPECT_EQ(plan_layer(bytes, "multi")["formats"],
            nlohmann::json::parse(R"({"inputs": ["fp16/LINEAR", "fp16/LINEAR"], "outputs": ["fp32/LINEAR"]})"));
  // The opened engine runs what its plan records (the cpu backend checks it negotiates the same).
  auto engine = Engine::deserialize(bytes.data(), bytes.size(), "format.engine", plugins);
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  EXPECT_EQ(engine->file().io_table().tensors[0].format, TensorFormat::kLinear);
}

TEST(FormatEngine, RecordedFormatsTheBackendWouldNotChooseAreRefused) {
  const PluginRegistry plugins = format_plugins();
  const std::string good = build_serialized_engine(format_build(plugins, 12, true)).value();
  const auto edited = [&](const std::function<void(nlohmann::json&)>& edit) {
    const std::string bad = testing::edit_section_json(good, engine_layout::SectionKind::kPlan, [&](nlohmann::json& plan) {
      for (auto& layer : plan["layers"])
        if (layer["name"] == "pair") edit(layer["formats"]);
    });
    auto engine = Engine::deserialize(bad.data(), bad.size(), "lying.engine", plugins);
    return engine.is_ok() ? std::string("opened") : engine.status().message();
  };
  EXPECT_TRUE(contains(edited([](nlohmann::json& f) { f["inputs"][0] = "fp32/LINEAR"; }),
                       "layer 'pair' records formats input 0: fp32/LINEAR, input 1: fp32/LINEAR; output 0: fp16/HWC8; the "
                       "cpu backend negotiates input 0: fp16/HWC8, input 1: fp32/LINEAR; output 0: fp16/HWC8"));
  EXPECT_TRUE(contains(edited([](nlohmann::json& f) { f["inputs"][0] = "fp16/HWC9"; }),
                       "expected a type/format such as \"fp16/HWC8\", got \"fp16/HWC9\""));
  EXPECT_TRUE(contains(edited([](nlohmann::json& f) { f["inputs"][1] = "fp32/HWC8"; }), "format HWC8 needs fp16 or bf16"));
  EXPECT_TRUE(contains(edited([](nlohmann::json& f) { f["outputs"][0] = "fp32/HWC8"; }), "fp32/HWC8 for output 0, a fp16 tensor"));
  EXPECT_TRUE(contains(edited([](nlohmann::json& f) { f["outputs"][0] = "fp16/HWC"; }),
                       "output 0: fp16/HWC; the cpu backend negotiates"));
  EXPECT_TRUE(contains(edited([](nlohmann::json& f) { f["inputs"].erase(1); }), "lists 1 formats for 2 inputs"));
}

TEST(FormatEngine, InspectShowsEachPluginLayersFormats) {
  const PluginRegistry plugins = format_plugins();
  const std::string bytes = build_serialized_engine(format_build(plugins, 12, true)).value();
  testing::TempDir dir;
  const std::string path = dir / "format.engine";
  std::ofstream(path, std::ios::binary) << bytes;
  const testing::CliRun inspected = testing::run_command(std::string(TENSORACLE_CLI_PATH) + " inspect " + path + " 2>&1");
  ASSERT_EQ(inspected.exit_code, 0) << inspected.output;
  EXPECT_TRUE(contains(inspected.output, "formats:  input 0: fp16/HWC8  input 1: fp32/LINEAR  output 0: fp16/HWC8\n"))
      << inspected.output;
  EXPECT_TRUE(contains(inspected.output, "formats:  input 0: fp16/LINEAR  input 1: fp16/LINEAR  output 0: fp32/LINEAR\n"))
      << inspected.output;
  EXPECT_TRUE(contains(inspected.output, "fp32   LINEAR")) << inspected.output;  // the I/O table
}

HostArray fp16_filled(const Dims& shape, int modulus, float step, float offset) {
  HostArray array = HostArray::zeros(DataType::kFloat16, shape).value();
  for (int64_t i = 0; i < array.element_count(); ++i)
    array.data_as<uint16_t>()[i] = float_to_fp16(step * static_cast<float>(i % modulus) + offset);
  return array;
}

// out = conv1x1(hwc8_pair(conv3x3(x), b)) with fp16 x and convolutions, fp32 b (the graph of
// tests/gpu/plugin_test.cpp's CudaPluginFormats); without plugins, the pair's arithmetic in
// standard layers.
EngineBuild conv_pair_build(const PluginRegistry& plugins, int64_t channels, bool with_plugin) {
  EngineBuild build;
  build.name = with_plugin ? "conv_pair" : "conv_pair_reference";
  build.graph_version = "1";
  build.graph = [channels, with_plugin](Network& net, const Weights&) {
    Tensor x = net.add_input("x", DataType::kFloat16, {-1, channels, 6, 6});
    Tensor b = net.add_input("b", DataType::kFloat32, {-1, channels, 6, 6});
    Tensor w1 = net.add_constant(fp16_filled({channels, channels, 3, 3}, 7, 0.125f, -0.375f), "w1");
    Tensor b1 = net.add_constant(fp16_filled({channels}, 3, 0.25f, -0.25f), "b1");
    Tensor c1 = net.convolution(x, w1, b1, ConvolutionAttributes().set_padding({1, 1}));
    Tensor y;
    if (with_plugin) {
      std::vector<Tensor> out = net.plugin({c1, b}, kHwc8Pair, "", "pair");
      if (out.empty()) return net.status();
      y = out[0];
    } else {
      Tensor c32 = net.cast(c1, DataType::kFloat32);
      y = net.cast(net.add(net.add(c32, c32), b), DataType::kFloat16);
    }
    Tensor w2 = net.add_constant(fp16_filled({channels, channels, 1, 1}, 5, 0.125f, -0.25f), "w2");
    Tensor b2 = net.add_constant(fp16_filled({channels}, 2, 0.5f, 0.0f), "b2");
    net.mark_output(net.convolution(y, w2, b2), "out");
    return net.status();
  };
  build.weights = Weights::none();
  for (const char* input : {"x", "b"}) build.add_input(input, {ShapeRange::fixed({2, channels, 6, 6})});
  build.backend = "cpu";
  build.quiet = true;
  build.plugins = plugins;
  return build;
}

// An fp16 producer: hwc8_pair's x needs a reformat only (its type is the producer's), and the
// cpu engine equals the plugin-free one exactly.
TEST(FormatEngine, AnFp16ConvolutionFeedsHwc8PairThroughAReformatAlone) {
  const PluginRegistry plugins = format_plugins();
  const std::string with = build_serialized_engine(conv_pair_build(plugins, 12, true)).value();
  EXPECT_EQ(plan_layer(with, "pair")["formats"]["inputs"], nlohmann::json::array({"fp16/HWC8", "fp32/LINEAR"}));
  const std::string without = build_serialized_engine(conv_pair_build(plugins, 12, false)).value();
  const HostArray x = fp16_filled({2, 12, 6, 6}, 13, 0.125f, -0.75f);
  HostArray b = HostArray::zeros(DataType::kFloat32, {2, 12, 6, 6}).value();
  for (int64_t i = 0; i < b.element_count(); ++i) b.data_as<float>()[i] = 0.25f * static_cast<float>(i % 9) - 1.0f;
  const auto run_engine = [&](const std::string& bytes) {
    auto engine = Engine::deserialize(bytes.data(), bytes.size(), "conv_pair.engine", plugins);
    EXPECT_TRUE(engine.is_ok()) << engine.status().to_string();
    auto outputs = engine->create_execution()->run_on_host({{"x", x.view()}, {"b", b.view()}});
    EXPECT_TRUE(outputs.is_ok()) << outputs.status().to_string();
    return std::move(outputs->at("out"));
  };
  const HostArray got = run_engine(with), want = run_engine(without);
  ASSERT_EQ(got.byte_size(), want.byte_size());
  int nonzero = 0;
  for (int64_t i = 0; i < got.element_count(); ++i) {
    EXPECT_EQ(got.data_as<uint16_t>()[i], want.data_as<uint16_t>()[i]) << "element " << i;
    nonzero += fp16_to_float(want.data_as<uint16_t>()[i]) != 0 ? 1 : 0;
  }
  EXPECT_GT(nonzero, got.element_count() / 2);
}

TEST(FormatEngine, APluginLayerNoCombinationCanServeIsRefusedWhenTheNetworkIsDefined) {
  EngineBuild build = format_build(format_plugins(), 12, true);
  build.inputs.clear();
  build.graph = [](Network& net, const Weights&) {
    Tensor x = net.add_input("x", DataType::kFloat32, {4, 8});
    Tensor b = net.add_input("b", DataType::kFloat32, {4, 8});
    std::vector<Tensor> y = net.plugin({x, b}, kHwc8Pair, "", "pair");
    if (!y.empty()) net.mark_output(y[0], "y");
    return net.status();
  };
  auto bytes = build_serialized_engine(build);
  ASSERT_FALSE(bytes.is_ok());
  EXPECT_TRUE(contains(bytes.status().message(),
                       "layer 'pair' (plugin): plugin 'test::hwc8_pair 1.0.0' input 0 'x' (fp32[4,8], written LINEAR): no "
                       "combination it allows can be served; it allows fp16/HWC8 (fp16/HWC8 needs a rank-4 [N, C, H, W] "
                       "tensor, not shape [4,8])"))
      << bytes.status().message();
}

}  // namespace
}  // namespace tensoracle
