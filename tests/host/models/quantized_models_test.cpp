// The int8 and fp8 variants of the ResNet-50 and BERT example graphs (examples/quantization/qdq.h)
// at reduced sizes on the cpu backend, end to end: defined before their scales exist, calibrated
// on seeded inputs, rebuilt with the scales beside the weights (a sharded index), run, and
// compared with the fp32 graph.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "backends/registry.h"
#include "bert_encoder/bert_encoder.h"
#include "host/io/io_test_support.h"
#include "host/models/state_dicts.h"
#include "resnet50/resnet50.h"
#include "tensoracle/calibrate.h"
#include "tensoracle/compare.h"
#include "tensoracle/npy.h"

namespace tensoracle {
namespace {

using testing::TempDir;

using DefineFn = std::function<Status(Network&, const Weights&, std::optional<DataType> quantization)>;

NamedArrays run_cpu(const Network& net, const NamedArrays& inputs) {
  auto cpu = backends::create_backend("cpu");
  EXPECT_TRUE(cpu.is_ok());
  auto out = (*cpu)->execute(net, views_of(inputs));
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? std::move(*out) : NamedArrays{};
}

// Weights and scales as one set: a sharded index naming both files.
Weights weights_with_scales(const TempDir& dir, const Weights& weights, const std::string& scales_file) {
  const auto scales = Weights::open(scales_file);
  EXPECT_TRUE(scales.is_ok()) << scales.status().message();
  nlohmann::json map;
  for (const std::string& name : weights.names()) map[name] = "weights.safetensors";
  for (const std::string& name : scales->names()) map[name] = "scales.safetensors";
  std::ofstream(dir.file("model.safetensors.index.json")) << nlohmann::json{{"metadata", {}}, {"weight_map", map}}.dump();
  auto combined = Weights::open(dir.file("model.safetensors.index.json"));
  EXPECT_TRUE(combined.is_ok()) << combined.status().message();
  return *std::move(combined);
}

struct Flow {
  std::vector<CalibrationTarget> targets;
  Network quantized;
  NamedArrays fp32_out, quantized_out;
};

// Calibrates the `format` graph on `batches` (npz files), then runs it and the fp32 graph on
// `probe`.
Flow calibrate_and_run(const TempDir& dir, const Weights& weights, const DefineFn& define, DataType format,
                       const std::vector<std::string>& batches, const NamedArrays& probe) {
  Flow flow;
  const Weights placeholders = Weights::with_unit_placeholders(weights);
  Network uncalibrated;
  EXPECT_TRUE(define(uncalibrated, placeholders, format).is_ok()) << uncalibrated.status().message();
  EXPECT_TRUE(check_placeholders_are_scales(uncalibrated, placeholders.placeholder_names()).is_ok());
  auto targets = quantization_targets(uncalibrated);
  EXPECT_TRUE(targets.is_ok()) << targets.status().message();
  if (!targets.is_ok()) return flow;
  flow.targets = *targets;
  CalibrationSettings settings;
  settings.method = CalibrationMethod::kPercentile;
  settings.percentile = 99.9;
  auto calibration = calibrate(uncalibrated, placeholders, flow.targets, batches, settings);
  EXPECT_TRUE(calibration.is_ok()) << calibration.status().message();
  if (!calibration.is_ok()) return flow;
  EXPECT_TRUE(write_calibration(dir.file("scales.safetensors"), *calibration).is_ok());
  // Every placeholder got its scale.
  std::set<std::string> written;
  for (const CalibratedScale& s : calibration->scales) written.insert(s.target.scale_name);
  for (const std::string& name : placeholders.placeholder_names()) EXPECT_EQ(written.count(name), 1u) << name;

  const Weights complete = weights_with_scales(dir, weights, dir.file("scales.safetensors"));
  EXPECT_TRUE(define(flow.quantized, complete, format).is_ok()) << flow.quantized.status().message();
  Network fp32;
  EXPECT_TRUE(define(fp32, weights, std::nullopt).is_ok()) << fp32.status().message();
  flow.fp32_out = run_cpu(fp32, probe);
  flow.quantized_out = run_cpu(flow.quantized, probe);
  return flow;
}

// Every convolution and matmul reads dequantized values only (weights per channel, [K] scales).
void expect_every_product_quantized(const Network& net) {
  int products = 0;
  for (size_t i = 0; i < net.num_nodes(); ++i) {
    const Node& node = net.node(i);
    if (node.kind != OpKind::kConvolution && node.kind != OpKind::kMatMul) continue;
    if (node.kind == OpKind::kMatMul && !node.attributes<MatMulAttributes>()->transpose_b) continue;  // attention's own
    ++products;
    for (size_t in = 0; in < 2; ++in) {
      const TensorInfo& t = net.tensor(node.inputs[in]);
      ASSERT_GE(t.producer, 0) << node.name;
      const Node& dq = net.node(static_cast<size_t>(t.producer));
      EXPECT_EQ(dq.kind, OpKind::kDequantize) << node.name << " input " << in;
      if (in == 1 && dq.kind == OpKind::kDequantize) {
        const Dims& scale = net.tensor(dq.inputs[1]).desc.shape;
        EXPECT_EQ(scale, Dims{net.tensor(node.inputs[1]).desc.shape[0]}) << node.name << ": per output channel";
      }
    }
  }
  EXPECT_GT(products, 0);
}

double rel_l2(const HostArray& a, const HostArray& b) {
  auto cmp = compare_outputs(a.view(), b.view());
  EXPECT_TRUE(cmp.is_ok()) << cmp.status().message();
  return cmp.is_ok() ? cmp->rel_l2_error : 1e9;
}

HostArray normal_array(const Dims& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  auto a = HostArray::zeros(DataType::kFloat32, shape);
  EXPECT_TRUE(a.is_ok());
  for (int64_t i = 0; i < a->element_count(); ++i) a->data_as<float>()[i] = dist(rng);
  return *std::move(a);
}

class QuantizedResNet : public ::testing::TestWithParam<DataType> {};

TEST_P(QuantizedResNet, CalibratesRunsAndStaysCloseToFp32) {
  TempDir dir;
  const resnet50::Config cfg = testing::small_resnet();
  const Weights w =
      testing::write_weights(dir, testing::random_state_dict(testing::resnet_state_dict(cfg), 11), "weights.safetensors");
  std::vector<std::string> batches;
  for (unsigned b = 0; b < 3; ++b) {
    batches.push_back(dir.file("calib" + std::to_string(b) + ".npz"));
    const HostArray image = normal_array({2, 3, 32, 32}, 100 + b);
    ASSERT_TRUE(write_npz(batches.back(), {{resnet50::kInput, image.view()}}).is_ok());
  }
  NamedArrays probe;
  probe.emplace(resnet50::kInput, normal_array({2, 3, 32, 32}, 7));
  const DefineFn define = [&](Network& net, const Weights& weights, std::optional<DataType> q) {
    resnet50::Config c = cfg;
    c.quantization = q;
    return resnet50::define(net, weights, {-1, 3, 32, 32}, DataType::kFloat32, c);
  };
  const Flow flow = calibrate_and_run(dir, w, define, GetParam(), batches, probe);
  // 17 convolutions (stem, 3 per bottleneck, 4 downsamples) and fc, each an input and a weight.
  EXPECT_EQ(flow.targets.size(), 2u * (1 + 3 * 5 + 4 + 1));
  expect_every_product_quantized(flow.quantized);
  ASSERT_EQ(flow.quantized_out.count(resnet50::kOutput), 1u);
  const double error = rel_l2(flow.quantized_out.at(resnet50::kOutput), flow.fp32_out.at(resnet50::kOutput));
  EXPECT_GT(error, 0.0);  // the quantization really rounds
  // Loose (measured: 0.020 int8, 0.065 fp8): a check that the scales are wired through (a wrong
  // scale gives errors near 1), not an accuracy claim; the GPU quality tables measure that.
  EXPECT_LT(error, 0.15);
}

INSTANTIATE_TEST_SUITE_P(Formats, QuantizedResNet, ::testing::Values(DataType::kInt8, DataType::kFloat8E4M3),
                         [](const auto& param_info) { return std::string(data_type_name(param_info.param)); });

class QuantizedBert : public ::testing::TestWithParam<DataType> {};

TEST_P(QuantizedBert, CalibratesRunsAndStaysCloseToFp32) {
  TempDir dir;
  const bert_encoder::Config cfg = testing::small_bert();
  const Weights w =
      testing::write_weights(dir, testing::random_state_dict(testing::bert_state_dict(cfg), 12), "weights.safetensors");
  constexpr int64_t kBatch = 2, kLength = 8;
  auto tokens = [&](unsigned seed) {
    std::mt19937 rng(seed);
    NamedArrays arrays;
    auto ids = HostArray::zeros(DataType::kInt64, {kBatch, kLength});
    auto mask = HostArray::zeros(DataType::kInt64, {kBatch, kLength});
    for (int64_t i = 0; i < kBatch * kLength; ++i) {
      ids->data_as<int64_t>()[i] = static_cast<int64_t>(rng() % static_cast<unsigned>(cfg.vocab));
      mask->data_as<int64_t>()[i] = (i % kLength) < kLength - static_cast<int64_t>(seed % 3) ? 1 : 0;
    }
    arrays.emplace(bert_encoder::kInputIds, *std::move(ids));
    arrays.emplace(bert_encoder::kAttentionMask, *std::move(mask));
    return arrays;
  };
  std::vector<std::string> batches;
  for (unsigned b = 0; b < 3; ++b) {
    batches.push_back(dir.file("calib" + std::to_string(b) + ".npz"));
    ASSERT_TRUE(write_npz(batches.back(), views_of(tokens(200 + b))).is_ok());
  }
  const DefineFn define = [&](Network& net, const Weights& weights, std::optional<DataType> q) {
    bert_encoder::Config c = cfg;
    c.quantization = q;
    return bert_encoder::define(net, weights, -1, kLength, DataType::kFloat32, c);
  };
  const Flow flow = calibrate_and_run(dir, w, define, GetParam(), batches, tokens(9));
  EXPECT_EQ(flow.targets.size(), 2u * 6 * static_cast<size_t>(cfg.layers));  // six linear layers per encoder layer
  expect_every_product_quantized(flow.quantized);
  ASSERT_EQ(flow.quantized_out.count(bert_encoder::kOutput), 1u);
  const double error = rel_l2(flow.quantized_out.at(bert_encoder::kOutput), flow.fp32_out.at(bert_encoder::kOutput));
  EXPECT_GT(error, 0.0);
  EXPECT_LT(error, 0.1);  // measured: 0.011 int8, 0.046 fp8
}

INSTANTIATE_TEST_SUITE_P(Formats, QuantizedBert, ::testing::Values(DataType::kInt8, DataType::kFloat8E4M3),
                         [](const auto& param_info) { return std::string(data_type_name(param_info.param)); });

// The small BERT in int8, its weights with unit-scale placeholders.
class QuantizedBertLayers : public ::testing::Test {
 protected:
  QuantizedBertLayers() { cfg.quantization = DataType::kInt8; }
  TempDir dir;
  bert_encoder::Config cfg = testing::small_bert();
  const Weights w = Weights::with_unit_placeholders(
      testing::write_weights(dir, testing::random_state_dict(testing::bert_state_dict(cfg), 13), "weights.safetensors"));
};

// Config::unquantized keeps the linear layers it names out of quantization: they read their
// activation and weight directly (and ask for no scales); every other linear layer keeps its Q/DQ.
TEST_F(QuantizedBertLayers, UnquantizedPatternsKeepThoseLinearLayersInThePrecision) {
  cfg.unquantized = {R"(intermediate\.dense$)", R"(layer\.\d+\.output\.dense$)"};
  Network net;
  ASSERT_TRUE(bert_encoder::define(net, w, -1, 8, DataType::kFloat32, cfg).is_ok()) << net.status().message();
  int quantized = 0, kept = 0;
  for (size_t i = 0; i < net.num_nodes(); ++i) {
    const Node& node = net.node(i);
    if (node.kind != OpKind::kMatMul || !node.attributes<MatMulAttributes>()->transpose_b) continue;
    const bool feed_forward = node.name.find("intermediate.dense") != std::string::npos ||
                              (node.name.find(".output.dense") != std::string::npos &&
                               node.name.find("attention.output.dense") == std::string::npos);
    for (size_t in = 0; in < 2; ++in) {
      const int64_t producer = net.tensor(node.inputs[in]).producer;
      const bool dequantized = producer >= 0 && net.node(static_cast<size_t>(producer)).kind == OpKind::kDequantize;
      EXPECT_EQ(dequantized, !feed_forward) << node.name << " input " << in;
    }
    ++(feed_forward ? kept : quantized);
  }
  EXPECT_EQ(kept, 2 * cfg.layers);
  EXPECT_EQ(quantized, 4 * cfg.layers);  // query, key, value, attention.output.dense
  auto targets = quantization_targets(net);
  ASSERT_TRUE(targets.is_ok()) << targets.status().message();
  EXPECT_EQ(targets->size(), 2u * 4 * static_cast<size_t>(cfg.layers));
  for (const CalibrationTarget& t : *targets) EXPECT_EQ(t.scale_name.find("intermediate"), std::string::npos);
}

TEST_F(QuantizedBertLayers, AnUnquantizedPatternThatIsNoRegularExpressionIsRefused) {
  cfg.unquantized = {"intermediate\\.dense$", "output.(dense"};
  Network net;
  const Status status = bert_encoder::define(net, w, -1, 8, DataType::kFloat32, cfg);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("output.(dense"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace tensoracle
