// The methods' thresholds on histograms whose answers are known (calibrate.h defines them), and
// on the large-sample histogram of tests/fixtures/calibration against numpy and onnxruntime.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "calibrate/thresholds.h"

namespace tensoracle::calibration {
namespace {

AbsHistogram histogram(double amax, std::vector<uint64_t> bins) { return {amax, std::move(bins)}; }

TEST(AbsHistogram, BinsAbsoluteValuesAndPutsAmaxInTheLastBin) {
  AbsHistogram h = histogram(4.0, std::vector<uint64_t>(4, 0));
  const float values[] = {0.0f, -0.5f, 1.0f, -2.5f, 3.999f, 4.0f, -4.0f};
  h.add(values, 7);
  EXPECT_EQ(h.bins, (std::vector<uint64_t>{2, 1, 1, 3}));
}

TEST(QuantizeDequantize, RoundsHalfToEvenAndSaturates) {
  EXPECT_EQ(quantize_dequantize(2.5, 1.0, DataType::kInt8), 2.0);
  EXPECT_EQ(quantize_dequantize(3.5, 1.0, DataType::kInt8), 4.0);
  EXPECT_EQ(quantize_dequantize(300.0, 2.0, DataType::kInt8), 254.0);
  EXPECT_EQ(quantize_dequantize(-300.0, 2.0, DataType::kInt8), -256.0);
  EXPECT_EQ(quantize_dequantize(1000.0, 1.0, DataType::kFloat8E4M3), 448.0);  // saturates, no NaN
  EXPECT_EQ(quantize_dequantize(17.0, 1.0, DataType::kFloat8E4M3), 16.0);     // e4m3 steps of 2 in [16, 32): tie to even
  EXPECT_EQ(format_max(DataType::kInt8), 127.0);
  EXPECT_EQ(format_max(DataType::kFloat8E4M3), 448.0);
}

TEST(PercentileThreshold, IsTheRightEdgeOfTheBinWhereTheShareIsReached) {
  // 100 values: 90 in bin 0, 9 in bin 5, 1 in bin 9; bins of width 1.
  std::vector<uint64_t> bins(10, 0);
  bins[0] = 90, bins[5] = 9, bins[9] = 1;
  const AbsHistogram h = histogram(10.0, bins);
  EXPECT_DOUBLE_EQ(percentile_threshold(h, 90.0), 1.0);
  EXPECT_DOUBLE_EQ(percentile_threshold(h, 95.0), 6.0);
  EXPECT_DOUBLE_EQ(percentile_threshold(h, 99.0), 6.0);
  EXPECT_DOUBLE_EQ(percentile_threshold(h, 99.5), 10.0);
  EXPECT_DOUBLE_EQ(percentile_threshold(h, 100.0), 10.0);
}

TEST(EntropyThreshold, KeepsAUniformDistributionWhole) {
  // Uniform counts: merging into 128 groups loses nothing at the full range, and every cut
  // folds mass into the last bin, which Q cannot reproduce.
  const AbsHistogram h = histogram(2.0, std::vector<uint64_t>(512, 100));
  EXPECT_DOUBLE_EQ(entropy_threshold(h), 2.0);
}

TEST(EntropyThreshold, CutsAFarOutlier) {
  // Mass in the first 256 of 2048 bins and one value at amax: the search cuts the outlier.
  std::vector<uint64_t> bins(2048, 0);
  for (size_t i = 0; i < 256; ++i) bins[i] = 1000 - 3 * i;
  bins[2047] = 1;
  const double t = entropy_threshold(histogram(2048.0, bins));
  EXPECT_GE(t, 128.0);
  EXPECT_LE(t, 512.0);
}

TEST(MseThreshold, ClipsARareOutlierButNotTheBulk) {
  std::vector<uint64_t> bins(1024, 0);
  for (size_t i = 0; i < 100; ++i) bins[i] = 10000;
  bins[1023] = 1;
  const double t = mse_threshold(histogram(1024.0, bins), DataType::kInt8);
  EXPECT_GE(t, 100.0);   // the bulk is kept
  EXPECT_LT(t, 1024.0);  // the one outlier is not worth the coarser grid
}

// 2 million heavy-tailed samples (tests/calibration/make_fixtures.py), kept as their histogram.
class LargeSample : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ifstream file(TENSORACLE_FIXTURES_DIR "/calibration/expected.json");
    ASSERT_TRUE(file) << "missing fixture: run tests/calibration/make_fixtures.py";
    const nlohmann::json expected = nlohmann::json::parse(file);
    sample = expected["large_sample"];
    h.amax = sample["amax"].get<double>();
    h.bins = sample["histogram"].get<std::vector<uint64_t>>();
    ASSERT_EQ(h.bins.size(), 2048u);
    percentile = expected["percentile"].get<double>();
  }
  nlohmann::json sample;
  AbsHistogram h;
  double percentile = 0;
};

TEST_F(LargeSample, EachMethodIsExactlyItsNumpyDefinition) {
  EXPECT_NEAR(entropy_threshold(h), sample["numpy"]["entropy"].get<double>(), 1e-9 * h.amax);
  EXPECT_NEAR(percentile_threshold(h, percentile), sample["numpy"]["percentile"].get<double>(), 1e-9 * h.amax);
  EXPECT_NEAR(mse_threshold(h, DataType::kInt8), sample["numpy"]["mse"].get<double>(), 1e-9 * h.amax);
}

TEST_F(LargeSample, EntropyAgreesWithOnnxruntimeWithinTwoPercent) {
  // Two searches for the same KL minimum on 2048 bins per side: onnxruntime's two-sided
  // histogram spreads each merged group over all its bins, ours over its non-empty ones
  // (TensorRT's), so they agree closely on plentiful data only (docs/quantization.md).
  const double ort = sample["onnxruntime"]["entropy"].get<double>();
  EXPECT_NEAR(entropy_threshold(h), ort, 0.02 * ort);
}

TEST_F(LargeSample, PercentileIsOnnxruntimesPlusOneBin) {
  // onnxruntime takes the left edge of the bin where the share is reached, we the right edge;
  // its histogram spans [min |x|, amax], ours [0, amax] (min |x| is ~1e-7 here).
  const double ort = sample["onnxruntime"]["percentile"].get<double>();
  EXPECT_NEAR(percentile_threshold(h, percentile), ort + h.bin_width(), 1e-3 * h.bin_width());
}

}  // namespace
}  // namespace tensoracle::calibration
