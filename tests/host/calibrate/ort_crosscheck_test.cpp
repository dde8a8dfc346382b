// calibrate() on the ONNX model of tests/fixtures/calibration against onnxruntime's calibrators
// and numpy (tests/calibration/make_fixtures.py made both; docs/quantization.md explains each
// tolerance). The fixture's activations are exact in fp32, so both sides measure the same values.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tensoracle/calibrate.h"
#ifdef TENSORACLE_HAVE_ONNX
#include "tensoracle/onnx.h"
#endif

namespace tensoracle {
namespace {

#ifdef TENSORACLE_HAVE_ONNX
const std::string kDir = TENSORACLE_FIXTURES_DIR "/calibration/";

class OnnxruntimeCrossCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ifstream file(kDir + "expected.json");
    ASSERT_TRUE(file) << "missing fixture: run tests/calibration/make_fixtures.py";
    expected = nlohmann::json::parse(file);
    auto imported = network_from_onnx(kDir + "model.onnx");
    ASSERT_TRUE(imported.is_ok()) << imported.status().message();
    network = std::move(imported->network);
    for (const std::string name : expected["tensors"]) targets.push_back({name, name + ".scale", DataType::kInt8, {}});
    targets.push_back({"w1", "w1.scale", DataType::kInt8, 0});
  }

  // The thresholds calibrate() finds with `method`, by tensor.
  std::map<std::string, double> thresholds(CalibrationMethod method) {
    CalibrationSettings settings;
    settings.method = method;
    settings.num_bins = expected["num_bins"].get<int64_t>();
    settings.percentile = expected["percentile"].get<double>();
    const auto c = calibrate(network, Weights::none(), targets,
                             {kDir + "batch0.npz", kDir + "batch1.npz", kDir + "batch2.npz"}, settings);
    EXPECT_TRUE(c.is_ok()) << c.status().message();
    std::map<std::string, double> out;
    if (!c.is_ok()) return out;
    for (const CalibratedScale& s : c->scales) {
      out[s.target.tensor] = s.threshold;
      if (s.target.tensor != "w1") {
        // The scale is the threshold over int8's 127.
        EXPECT_FLOAT_EQ(*s.scale.data_as<float>(), static_cast<float>(s.threshold / 127.0)) << s.target.tensor;
      } else {
        channel_scales.assign(s.scale.data_as<float>(), s.scale.data_as<float>() + s.scale.element_count());
      }
    }
    return out;
  }

  double numpy(const std::string& method, const std::string& tensor) {
    return expected["model"]["numpy"][method][tensor].get<double>();
  }
  double ort(const std::string& method, const std::string& tensor) {
    return expected["model"]["onnxruntime"][method][tensor].get<double>();
  }
  double bin_width(const std::string& tensor) { return numpy("max", tensor) / expected["num_bins"].get<double>(); }

  nlohmann::json expected;
  Network network;
  std::vector<CalibrationTarget> targets;
  std::vector<float> channel_scales;
};

TEST_F(OnnxruntimeCrossCheck, MaxEqualsMinMaxCalibrator) {
  const auto t = thresholds(CalibrationMethod::kMax);
  for (const std::string name : expected["tensors"]) {
    EXPECT_DOUBLE_EQ(t.at(name), numpy("max", name)) << name;
    EXPECT_NEAR(t.at(name), ort("max", name), 1e-6 * ort("max", name)) << name;  // onnxruntime keeps fp32
  }
  const std::vector<double> w = expected["model"]["numpy"]["w1_per_channel_max"];
  ASSERT_EQ(channel_scales.size(), w.size());
  for (size_t c = 0; c < w.size(); ++c) EXPECT_FLOAT_EQ(channel_scales[c], static_cast<float>(w[c] / 127.0)) << c;
}

TEST_F(OnnxruntimeCrossCheck, PercentileIsOneBinAboveOnnxruntimes) {
  const auto t = thresholds(CalibrationMethod::kPercentile);
  for (const std::string name : expected["tensors"]) {
    EXPECT_NEAR(t.at(name), numpy("percentile", name), 1e-9 * numpy("max", name)) << name;
    // onnxruntime reports the left edge of the bin where the share is reached, we its right edge.
    EXPECT_NEAR(t.at(name), ort("percentile", name) + bin_width(name), 1e-3 * bin_width(name)) << name;
  }
}

TEST_F(OnnxruntimeCrossCheck, EntropyIsItsNumpyDefinition) {
  // On these 20 thousand values per tensor the KL search follows the noise of a sparse histogram
  // and onnxruntime's variant lands elsewhere; thresholds_test.cpp compares the two on 2 million.
  const auto t = thresholds(CalibrationMethod::kEntropy);
  for (const std::string name : expected["tensors"])
    EXPECT_NEAR(t.at(name), numpy("entropy", name), 1e-9 * numpy("max", name)) << name;
}

TEST_F(OnnxruntimeCrossCheck, MseIsItsNumpyDefinition) {
  const auto t = thresholds(CalibrationMethod::kMse);
  for (const std::string name : expected["tensors"])
    EXPECT_NEAR(t.at(name), numpy("mse", name), 1e-9 * numpy("max", name)) << name;
}
#else
TEST(OnnxruntimeCrossCheck, NeedsTheOnnxImporter) { GTEST_SKIP() << "built without the ONNX importer"; }
#endif

}  // namespace
}  // namespace tensoracle
