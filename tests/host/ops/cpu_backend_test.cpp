// The CPU backend's execution contract: dynamic shapes, input validation, storage rounding,
// saturation, run-time errors that name the layer, unsupported nodes.
#include <gtest/gtest.h>

#include "backends/registry.h"
#include "host/ops/op_harness.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::testing {
namespace {

std::unique_ptr<backends::Backend> cpu() { return backends::create_backend("cpu").value(); }

TEST(CpuBackend, ResolvesDynamicDimsPerCall) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {-1, 4});
  net.mark_output(net.reshape(net.relu(x), ReshapeAttributes().set_shape({-1})), "y");
  ASSERT_TRUE(net.status().is_ok());
  EXPECT_EQ(net.tensor(net.outputs()[0]).desc.shape, (Dims{-1}));
  auto backend = cpu();
  for (int64_t batch : {1, 3, 5}) {
    HostArray in = random_array(DataType::kFloat32, {batch, 4}, 1);
    auto out = backend->execute(net, {{"x", in.view()}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    EXPECT_EQ(out->at("y").shape(), (Dims{batch * 4}));
  }
}

TEST(CpuBackend, RejectsMissingWrongAndUnknownInputs) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {2, 3});
  net.mark_output(net.relu(x), "y");
  auto backend = cpu();
  auto missing = backend->execute(net, {});
  EXPECT_NE(missing.status().message().find("input 'x'"), std::string::npos) << missing.status().message();
  HostArray wrong = random_array(DataType::kFloat32, {2, 4}, 1);
  auto mismatch = backend->execute(net, {{"x", wrong.view()}});
  EXPECT_NE(mismatch.status().message().find("fp32[2,4]"), std::string::npos) << mismatch.status().message();
  HostArray half = random_array(DataType::kFloat16, {2, 3}, 1);
  EXPECT_FALSE(backend->execute(net, {{"x", half.view()}}).is_ok());
  HostArray ok = random_array(DataType::kFloat32, {2, 3}, 1);
  auto unknown = backend->execute(net, {{"x", ok.view()}, {"z", ok.view()}});
  EXPECT_NE(unknown.status().message().find("'z'"), std::string::npos);
}

TEST(CpuBackend, Fp16TensorsAreStoredRounded) {
  Network net;
  Tensor a = net.add_input("a", DataType::kFloat16, {64});
  Tensor b = net.add_input("b", DataType::kFloat16, {64});
  net.mark_output(net.add(a, b), "y");
  HostArray ha = random_array(DataType::kFloat16, {64}, 1), hb = random_array(DataType::kFloat16, {64}, 2);
  auto out = cpu()->execute(net, {{"a", ha.view()}, {"b", hb.view()}});
  ASSERT_TRUE(out.is_ok());
  for (int64_t i = 0; i < 64; ++i) {
    // The exact sum of two fp16 values is an fp32 value; one rounding to fp16.
    const float exact = fp16_to_float(ha.data_as<uint16_t>()[i]) + fp16_to_float(hb.data_as<uint16_t>()[i]);
    EXPECT_EQ(out->at("y").data_as<uint16_t>()[i], float_to_fp16(exact)) << i;
  }
}

TEST(CpuBackend, QuantizeSaturatesToTheTypeRange) {
  for (DataType type : {DataType::kInt8, DataType::kFloat8E4M3}) {
    Network net;
    Tensor x = net.add_input("x", DataType::kFloat32, {2});
    HostArray scale = HostArray::zeros(DataType::kFloat32, {}).value();
    scale.data_as<float>()[0] = 1.0f;
    net.mark_output(net.quantize(x, net.add_constant(std::move(scale)), QuantizeAttributes().set_output_type(type)), "q");
    HostArray in = HostArray::zeros(DataType::kFloat32, {2}).value();
    in.data_as<float>()[0] = 1e6f;
    in.data_as<float>()[1] = -1e6f;
    auto out = cpu()->execute(net, {{"x", in.view()}});
    ASSERT_TRUE(out.is_ok());
    const double hi = type == DataType::kInt8 ? 127 : 448, lo = type == DataType::kInt8 ? -128 : -448;
    EXPECT_EQ(load_as_double(type, out->at("q").data(), 0), hi) << data_type_name(type);
    EXPECT_EQ(load_as_double(type, out->at("q").data(), 1), lo) << data_type_name(type);
  }
}

TEST(CpuBackend, GatherIndexOutOfRangeNamesLayerAndIndex) {
  Network net;
  Tensor table = net.add_input("table", DataType::kFloat32, {5, 2});
  Tensor ids = net.add_input("ids", DataType::kInt32, {3});
  net.mark_output(net.gather(table, ids, GatherAttributes().set_name("embed")), "y");
  HostArray t = random_array(DataType::kFloat32, {5, 2}, 1);
  HostArray i = HostArray::zeros(DataType::kInt32, {3}).value();
  i.data_as<int32_t>()[2] = 7;
  auto out = cpu()->execute(net, {{"table", t.view()}, {"ids", i.view()}});
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("'embed'"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("index 7"), std::string::npos) << out.status().message();
}

// Plugin layers whose plugin is loaded run its CPU implementation (tests/host/plugin).
TEST(CpuBackend, APluginLayerWhosePluginIsNotLoadedIsRefusedNamingTheLayerAndThePlugin) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {2});
  auto outs = net.plugin({x}, PluginAttributes().set_plugin("dcn").set_version("1").set_output_types({DataType::kFloat32}).set_output_shapes({{2}}));
  net.mark_output(outs[0], "y");
  auto backend = cpu();
  const Status s = backend->supports(net, 0);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("layer 'plugin_0': plugin 'dcn' version 1 is not loaded"), std::string::npos) << s.message();
  HostArray in = random_array(DataType::kFloat32, {2}, 1);
  EXPECT_EQ(backend->execute(net, {{"x", in.view()}}).status().code(), StatusCode::kNotFound);
}

TEST(CpuBackend, LayersThatReachNoOutputDoNotRun) {
  Network net;
  Tensor table = net.add_input("table", DataType::kFloat32, {5, 2});
  Tensor ids = net.add_input("ids", DataType::kInt32, {1});
  net.gather(table, ids);  // would fail on index 9, but is dead
  net.mark_output(net.relu(table), "y");
  HostArray t = random_array(DataType::kFloat32, {5, 2}, 1);
  HostArray i = HostArray::zeros(DataType::kInt32, {1}).value();
  i.data_as<int32_t>()[0] = 9;
  EXPECT_TRUE(cpu()->execute(net, {{"table", t.view()}, {"ids", i.view()}}).is_ok());
}

}  // namespace
}  // namespace tensoracle::testing
