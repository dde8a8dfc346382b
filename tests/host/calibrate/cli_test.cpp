// tensoracle calibrate: its output file, its --json, and its refusals (exit 2, naming the file or
// tensor).
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "host/cli_run.h"
#include "host/io/io_test_support.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

using testing::run_cli;
using testing::TempDir;

const std::string kDir = TENSORACLE_FIXTURES_DIR "/calibration/";
const std::string kBatches = kDir + "batch0.npz " + kDir + "batch1.npz " + kDir + "batch2.npz";

#ifdef TENSORACLE_HAVE_ONNX
TEST(CalibrateCli, WritesTheScalesOfTheNamedTensors) {
  TempDir dir;
  const std::string out = dir.file("scales.safetensors");
  const auto run = run_cli("calibrate --onnx " + kDir + "model.onnx --tensor relu1 --tensor w1=conv1.weight_scale --inputs " +
                           kBatches + " --method entropy --output " + out + " --quiet --json");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json report = nlohmann::json::parse(run.output);
  EXPECT_EQ(report["metadata"]["method"], "entropy");
  ASSERT_EQ(report["scales"].size(), 2u);
  const auto weights = Weights::open(out);
  ASSERT_TRUE(weights.is_ok()) << weights.status().message();
  EXPECT_EQ(weights->names(), (std::vector<std::string>{"conv1.weight_scale", "relu1.scale"}));
  const auto w = weights->info("conv1.weight_scale");
  ASSERT_TRUE(w.is_ok());
  EXPECT_EQ(w->shape, Dims{4});  // per output channel of the [4, 3, 3, 3] weight
}

// One scale for the whole weight: the largest of its per-channel scales (both are max / 127).
TEST(CalibrateCli, PerTensorWeightsGiveOneScaleTheLargestOfThePerChannelOnes) {
  TempDir dir;
  const auto calibrate = [&](const std::string& out, const std::string& flags) {
    return run_cli("calibrate --onnx " + kDir + "model.onnx --tensor w1=conv1.weight_scale --inputs " + kBatches +
                   " --method max --output " + out + " --quiet " + flags);
  };
  const std::string per_channel = dir.file("per_channel.safetensors"), per_tensor = dir.file("per_tensor.safetensors");
  const auto channels_run = calibrate(per_channel, "");
  ASSERT_EQ(channels_run.exit_code, 0) << channels_run.output;
  const auto tensor_run = calibrate(per_tensor, "--per-tensor-weights");
  ASSERT_EQ(tensor_run.exit_code, 0) << tensor_run.output;
  const auto channels = Weights::open(per_channel);
  const auto tensor = Weights::open(per_tensor);
  ASSERT_TRUE(channels.is_ok() && tensor.is_ok());
  const auto c = channels->view("conv1.weight_scale");
  const auto t = tensor->view("conv1.weight_scale");
  ASSERT_TRUE(c.is_ok() && t.is_ok());
  ASSERT_EQ(c->element_count(), 4);
  ASSERT_EQ(t->element_count(), 1);
  ASSERT_EQ(c->dtype, DataType::kFloat32);
  ASSERT_EQ(t->dtype, DataType::kFloat32);
  const auto* cs = static_cast<const float*>(c->data);
  EXPECT_EQ(*static_cast<const float*>(t->data), *std::max_element(cs, cs + 4));
  EXPECT_LT(*std::min_element(cs, cs + 4), *std::max_element(cs, cs + 4));  // the channels do differ
}

TEST(CalibrateCli, NamesAnUnknownTensor) {
  TempDir dir;
  const auto run = run_cli("calibrate --onnx " + kDir + "model.onnx --tensor relu7 --inputs " + kBatches +
                           " --output " + dir.file("s.safetensors") + " --quiet");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("relu7"), std::string::npos) << run.output;
}

TEST(CalibrateCli, NamesABadInputFileAndExitsTwo) {
  TempDir dir;
  const std::string bad = dir.file("garbage.npz");
  testing::write_bytes(bad, "not a zip file");
  const auto run = run_cli("calibrate --onnx " + kDir + "model.onnx --tensor relu1 --inputs " + bad + " --output " +
                           dir.file("s.safetensors") + " --quiet");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("garbage.npz"), std::string::npos) << run.output;
}
#endif

TEST(CalibrateCli, NamesAWeightThePackageGraphNeedsAndTheFileLacks) {
  TempDir dir;
  const std::string weights = dir.file("partial.safetensors");
  auto bias = HostArray::zeros(DataType::kFloat32, {1000});
  ASSERT_TRUE(bias.is_ok());
  ASSERT_TRUE(write_safetensors(weights, {{"fc.bias", bias->view()}}).is_ok());
  const auto run = run_cli("calibrate --package " + std::string(RESNET50_PACKAGE) + " --graph resnet50_int8 --weights " +
                           weights + " --inputs " + kDir + "batch0.npz --output " + dir.file("s.safetensors") + " --quiet");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("'conv1.weight'"), std::string::npos) << run.output;
}

TEST(CalibrateCli, RefusesToWriteOverAnInput) {
  const auto run = run_cli("calibrate --onnx " + kDir + "model.onnx --tensor relu1 --inputs " + kBatches +
                           " --output " + kDir + "batch0.npz --quiet");
  EXPECT_EQ(run.exit_code, 2) << run.output;
}

TEST(CalibrateCli, HelpTeachesTheMethods) {
  const auto run = run_cli("calibrate --help");
  EXPECT_EQ(run.exit_code, 0);
  for (const char* word : {"max", "percentile", "entropy", "mse", "--tensor", "--per-tensor-weights", "docs/quantization.md"})
    EXPECT_NE(run.output.find(word), std::string::npos) << word;
}

}  // namespace
}  // namespace tensoracle
