// calibrate() on Q/DQ networks built here: what it measures, what it writes, what it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "host/io/io_test_support.h"
#include "tensoracle/calibrate.h"
#include "tensoracle/npy.h"

namespace tensoracle {
namespace {

using testing::TempDir;

HostArray array_of(Dims shape, const std::vector<float>& values) {
  auto a = HostArray::zeros(DataType::kFloat32, std::move(shape));
  EXPECT_TRUE(a.is_ok());
  EXPECT_EQ(static_cast<size_t>(a->element_count()), values.size());
  std::copy(values.begin(), values.end(), a->data_as<float>());
  return *std::move(a);
}

Tensor scale(Network& net, float value, const std::string& name) {
  return net.add_constant(array_of({}, {value}), name);
}

// x [N, 3] -> Q/DQ (per tensor) -> matmul with Q/DQ(w [4, 3], per channel along 0) ^T -> relu
// -> Q/DQ -> y. The weight's rows have magnitudes 1, 2, 3 and 0.
constexpr float kW[12] = {1, -0.5f, 0.25f, 0, -2, 1, 3, 0, -1, 0, 0, 0};

Network qdq_network() {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {-1, 3});
  Tensor xq = net.quantize(x, scale(net, 1, "sx"), QuantizeAttributes().set_name("qx"));
  Tensor xd = net.dequantize(xq, scale(net, 1, "sx_dq"), DequantizeAttributes().set_name("dqx"));
  Tensor w = net.add_constant(array_of({4, 3}, std::vector<float>(kW, kW + 12)), "w");
  Tensor wq = net.quantize(w, scale(net, 1, "sw"), QuantizeAttributes().set_axis(0).set_name("qw"));
  Tensor wd = net.dequantize(wq, scale(net, 1, "sw_dq"), DequantizeAttributes().set_axis(0).set_name("dqw"));
  Tensor h = net.relu(net.matmul(xd, wd, MatMulAttributes().set_transpose_b(true).set_name("fc")));
  net.set_tensor_name(h, "h");
  Tensor hq = net.quantize(h, scale(net, 1, "sh"), QuantizeAttributes().set_output_type(DataType::kFloat8E4M3).set_name("qh"));
  net.mark_output(net.dequantize(hq, scale(net, 1, "sh_dq"), DequantizeAttributes().set_name("dqh")), "y");
  EXPECT_TRUE(net.status().is_ok()) << net.status().message();
  return net;
}

std::string write_batch(const TempDir& dir, const std::string& name, Dims shape, const std::vector<float>& x) {
  const std::string path = dir.file(name);
  const HostArray a = array_of(std::move(shape), x);
  EXPECT_TRUE(write_npz(path, {{"x", a.view()}}).is_ok());
  return path;
}

const CalibratedScale* find_scale(const Calibration& c, const std::string& name) {
  for (const CalibratedScale& s : c.scales)
    if (s.target.scale_name == name) return &s;
  return nullptr;
}

TEST(QuantizationTargets, NameEachQuantizedTensorItsScaleFormatAndAxis) {
  const auto targets = quantization_targets(qdq_network());
  ASSERT_TRUE(targets.is_ok()) << targets.status().message();
  ASSERT_EQ(targets->size(), 3u);
  // Scales built in code are named after their quantize layer.
  EXPECT_EQ((*targets)[0].tensor, "x");
  EXPECT_EQ((*targets)[0].scale_name, "qx.scale");
  EXPECT_FALSE((*targets)[0].axis.has_value());
  EXPECT_EQ((*targets)[1].scale_name, "qw.scale");
  EXPECT_EQ((*targets)[1].axis, std::optional<int64_t>(0));
  EXPECT_EQ((*targets)[2].tensor, "h");
  EXPECT_EQ((*targets)[2].format, DataType::kFloat8E4M3);
}

TEST(CalibrationNetwork, TakesEveryQdqPairOutAndMarksTheActivations) {
  const Network net = qdq_network();
  const auto net_targets = quantization_targets(net);
  ASSERT_TRUE(net_targets.is_ok());
  const auto calibration = calibration_network(net, *net_targets);
  ASSERT_TRUE(calibration.is_ok()) << calibration.status().message();
  for (size_t i = 0; i < calibration->num_nodes(); ++i) {
    EXPECT_NE(calibration->node(i).kind, OpKind::kQuantize) << calibration->node(i).name;
    EXPECT_NE(calibration->node(i).kind, OpKind::kDequantize) << calibration->node(i).name;
  }
  std::vector<std::string> outputs;
  for (Tensor t : calibration->outputs()) outputs.push_back(calibration->tensor(t).name);
  EXPECT_EQ(outputs, (std::vector<std::string>{"y", "h"}));  // x is an input, w a constant: read directly
}

TEST(Calibrate, MaxIsTheLargestMagnitudeOverEveryInputFileAndWeightsArePerChannel) {
  TempDir dir;
  // Two files of different batch sizes.
  const std::string a = write_batch(dir, "a.npz", {2, 3}, {1, 2, 3, -4, 0.5f, 1});
  const std::string b = write_batch(dir, "b.npz", {1, 3}, {-6, 1, 1});
  const Network net = qdq_network();
  const auto targets = quantization_targets(net);
  ASSERT_TRUE(targets.is_ok());
  const auto c = calibrate(net, Weights::none(), *targets, {a, b}, CalibrationSettings());
  ASSERT_TRUE(c.is_ok()) << c.status().message();

  const CalibratedScale* x = find_scale(*c, "qx.scale");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->scale.shape(), Dims{});
  EXPECT_FLOAT_EQ(*x->scale.data_as<float>(), 6.0f / 127.0f);
  EXPECT_DOUBLE_EQ(x->min, -6.0);
  EXPECT_DOUBLE_EQ(x->max, 3.0);

  const CalibratedScale* w = find_scale(*c, "qw.scale");
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->scale.shape(), Dims{4});
  EXPECT_FLOAT_EQ(w->scale.data_as<float>()[0], 1.0f / 127.0f);
  EXPECT_FLOAT_EQ(w->scale.data_as<float>()[1], 2.0f / 127.0f);
  EXPECT_FLOAT_EQ(w->scale.data_as<float>()[2], 3.0f / 127.0f);
  EXPECT_FLOAT_EQ(w->scale.data_as<float>()[3], 1.0f);  // an all-zero channel: any scale is exact

  // h = relu(x w^T): its largest value over both files, from the fp32 network.
  double h_max = 0;
  const std::vector<std::vector<float>> rows = {{1, 2, 3}, {-4, 0.5f, 1}, {-6, 1, 1}};
  for (const auto& r : rows)
    for (int o = 0; o < 4; ++o)
      h_max = std::max(h_max, static_cast<double>(r[0] * kW[3 * o] + r[1] * kW[3 * o + 1] + r[2] * kW[3 * o + 2]));
  const CalibratedScale* h = find_scale(*c, "qh.scale");
  ASSERT_NE(h, nullptr);
  EXPECT_FLOAT_EQ(*h->scale.data_as<float>(), static_cast<float>(h_max / 448.0));  // fp8: qmax 448
}

// Two quantize layers of one tensor (a residual block's conv1 and downsample read its input)
// get bit-identical scales by every method: the cuda planner's merge_duplicate_quantize
// (passes.h) then quantizes the tensor once.
TEST(Calibrate, TwoQuantizeLayersOfOneTensorGetTheSameScaleByEveryMethod) {
  TempDir dir;
  const std::string a = write_batch(dir, "a.npz", {2, 3}, {1, 2, 3, -4, 0.5f, 1});
  const std::string b = write_batch(dir, "b.npz", {2, 3}, {-6, 1, 1, 0.1f, -0.2f, 0.3f});
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {-1, 3});
  for (const char* branch : {"a", "b"}) {
    Tensor q = net.quantize(x, scale(net, 1, std::string("s") + branch), QuantizeAttributes().set_name(std::string("q") + branch));
    net.mark_output(net.dequantize(q, scale(net, 1, std::string("d") + branch)), std::string("y") + branch);
  }
  ASSERT_TRUE(net.status().is_ok()) << net.status().message();
  const auto targets = quantization_targets(net);
  ASSERT_TRUE(targets.is_ok()) << targets.status().message();
  ASSERT_EQ(targets->size(), 2u);
  for (CalibrationMethod method : {CalibrationMethod::kMax, CalibrationMethod::kPercentile, CalibrationMethod::kEntropy,
                                   CalibrationMethod::kMse}) {
    CalibrationSettings settings;
    settings.method = method;
    const auto c = calibrate(net, Weights::none(), *targets, {a, b}, settings);
    ASSERT_TRUE(c.is_ok()) << c.status().message();
    const CalibratedScale* qa = find_scale(*c, "qa.scale");
    const CalibratedScale* qb = find_scale(*c, "qb.scale");
    ASSERT_TRUE(qa && qb);
    EXPECT_EQ(*qa->scale.data_as<float>(), *qb->scale.data_as<float>()) << static_cast<int>(method);
    EXPECT_GT(*qa->scale.data_as<float>(), 0.0f);
  }
}

TEST(Calibrate, WritesTheScalesWithTheirProvenance) {
  TempDir dir;
  const std::string a = write_batch(dir, "a.npz", {2, 3}, {1, 2, 3, -4, 0.5f, 1});
  const Network net = qdq_network();
  const auto targets = quantization_targets(net);
  ASSERT_TRUE(targets.is_ok());
  CalibrationSettings settings;
  settings.method = CalibrationMethod::kPercentile;
  settings.percentile = 99.0;
  settings.num_bins = 256;
  const auto c = calibrate(net, Weights::none(), *targets, {a}, settings);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  const std::string out = dir.file("scales.safetensors");
  ASSERT_TRUE(write_calibration(out, *c).is_ok());
  const auto weights = Weights::open(out);
  ASSERT_TRUE(weights.is_ok()) << weights.status().message();
  EXPECT_EQ(weights->names(), (std::vector<std::string>{"qh.scale", "qw.scale", "qx.scale"}));
  const auto& meta = weights->metadata();
  EXPECT_EQ(meta.at("method"), "percentile");
  EXPECT_EQ(meta.at("percentile"), "99");
  EXPECT_EQ(meta.at("num_bins"), "256");
  const auto hash = sha256_file_hex(a);
  ASSERT_TRUE(hash.is_ok());
  EXPECT_NE(meta.at("inputs").find(*hash), std::string::npos);
  EXPECT_EQ(meta.at("graph_sha256").size(), 64u);
}

TEST(Calibrate, RefusesAQuantizeLayerFeedingAnythingButDequantize) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {2});
  Tensor q = net.quantize(x, scale(net, 1, "s"), QuantizeAttributes().set_name("q"));
  net.mark_output(net.cast(q, DataType::kFloat32), "y");
  const auto targets = quantization_targets(net);
  ASSERT_FALSE(targets.is_ok());
  EXPECT_NE(targets.status().message().find("quantize layer 'q'"), std::string::npos) << targets.status().message();
}

TEST(Calibrate, NamesTheFileThatLacksAnInput) {
  TempDir dir;
  const std::string bad = dir.file("bad.npz");
  const HostArray z = array_of({1, 3}, {1, 2, 3});
  ASSERT_TRUE(write_npz(bad, {{"not_x", z.view()}}).is_ok());
  const Network net = qdq_network();
  const auto targets = quantization_targets(net);
  ASSERT_TRUE(targets.is_ok());
  const auto c = calibrate(net, Weights::none(), *targets, {bad}, CalibrationSettings());
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("bad.npz"), std::string::npos) << c.status().message();
  EXPECT_NE(c.status().message().find("'x'"), std::string::npos) << c.status().message();
}

TEST(Calibrate, NamesTheTensorAndFileHoldingANonFiniteValue) {
  TempDir dir;
  const std::string nan = write_batch(dir, "nan.npz", {1, 3}, {1, std::numeric_limits<float>::quiet_NaN(), 3});
  const Network net = qdq_network();
  const auto targets = quantization_targets(net);
  ASSERT_TRUE(targets.is_ok());
  const auto c = calibrate(net, Weights::none(), *targets, {nan}, CalibrationSettings());
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("tensor 'x'"), std::string::npos) << c.status().message();
  EXPECT_NE(c.status().message().find("nan.npz"), std::string::npos) << c.status().message();
}

TEST(Calibrate, RefusesInputsWithNoElements) {
  TempDir dir;
  const std::string empty = write_batch(dir, "empty.npz", {0, 3}, {});
  const Network net = qdq_network();
  const auto targets = quantization_targets(net);
  ASSERT_TRUE(targets.is_ok());
  const auto c = calibrate(net, Weights::none(), *targets, {empty}, CalibrationSettings());
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("no elements"), std::string::npos) << c.status().message();
}

TEST(Calibrate, RefusesSettingsOutsideTheirRange) {
  const Network net = qdq_network();
  const auto targets = quantization_targets(net);
  ASSERT_TRUE(targets.is_ok());
  CalibrationSettings settings;
  settings.method = CalibrationMethod::kEntropy;
  settings.num_bins = 64;
  const auto c = calibrate(net, Weights::none(), *targets, {"unused.npz"}, settings);
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("num_bins 64"), std::string::npos) << c.status().message();
}

TEST(Calibrate, RefusesPerChannelScalesForAnActivation) {
  TempDir dir;
  const std::string a = write_batch(dir, "a.npz", {1, 3}, {1, 2, 3});
  const Network net = qdq_network();
  const std::vector<CalibrationTarget> targets = {{"h", "h.scale", DataType::kInt8, 1}};
  const auto c = calibrate(net, Weights::none(), targets, {a}, CalibrationSettings());
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("per-channel"), std::string::npos) << c.status().message();
}

TEST(UnitPlaceholders, StandInForMissingScalesOnlyAndAreRecorded) {
  TempDir dir;
  const std::string path = dir.file("w.safetensors");
  const HostArray w = array_of({2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(write_safetensors(path, {{"fc.weight", w.view()}}).is_ok());
  const auto base = Weights::open(path);
  ASSERT_TRUE(base.is_ok());
  const Weights weights = Weights::with_unit_placeholders(*base);

  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {1, 2});
  Tensor xd = net.dequantize(net.quantize(x, net.weight(weights, "fc.input_scale")), net.weight(weights, "fc.input_scale"));
  net.mark_output(net.matmul(xd, net.weight(weights, "fc.weight")), "y");
  ASSERT_TRUE(net.status().is_ok()) << net.status().message();
  EXPECT_EQ(weights.placeholder_names(), std::vector<std::string>{"fc.input_scale"});
  EXPECT_TRUE(base->placeholder_names().empty());
  EXPECT_TRUE(check_placeholders_are_scales(net, weights.placeholder_names()).is_ok());

  // A missing weight that is not a scale is refused, naming it and its layer.
  Network other;
  Tensor y = other.add_input("x", DataType::kFloat32, {1, 2});
  other.mark_output(other.elementwise(y, other.weight(weights, "fc2.weight"),
                                     ElementwiseAttributes().set_op(ElementwiseOp::kMul).set_name("fc2")),
                    "y");
  ASSERT_TRUE(other.status().is_ok()) << other.status().message();
  const Status refused = check_placeholders_are_scales(other, weights.placeholder_names());
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.message().find("'fc2.weight'"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("layer 'fc2'"), std::string::npos) << refused.message();
}

}  // namespace
}  // namespace tensoracle
