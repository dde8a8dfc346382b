// `tensoracle run`: where outputs may go (a regular file of a supported format, never an input),
// inputs read against the engine's profile before any allocation, several profiles from the
// command line, and what an --engine file makes meaningless.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "host/e2e/cli_testing.h"
#include "host/io/npz_bomb.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

using namespace testing;  // NOLINT: the harness

class RunCli : public CliTest {
 protected:
  std::string run_tinynet(const std::string& outputs, const std::string& extra = "") const {
    return "run --package " + kTinynet.package + " --inputs " + fixture(kTinynet) + " --outputs " + outputs + " " + extra;
  }
};

TEST_F(RunCli, WritesTheFormatItsOutputExtensionNames) {
  const Dims probs_shape = read_named_arrays(fixture(kTinynet))->at("probs").shape();
  for (const char* name : {"out.npz", "out.safetensors", "probs.npy"}) {
    const std::string out = work_ / name;
    const CliRun run = cli(run_tinynet(out));
    ASSERT_EQ(run.exit_code, 0) << name << ": " << run.output;
    auto arrays = read_named_arrays(out);
    ASSERT_TRUE(arrays.is_ok()) << name << ": " << arrays.status().to_string();
    EXPECT_EQ(arrays->at("probs").shape(), probs_shape) << name;
  }
  auto safetensors = SafetensorsFile::open(work_ / "out.safetensors");
  EXPECT_TRUE(safetensors.is_ok()) << "a .safetensors output is safetensors, not a zip";
  for (const char* name : {"out.txt", "out"}) {
    const CliRun refused = cli(run_tinynet(work_ / name));
    EXPECT_EQ(refused.exit_code, 2) << name;
    EXPECT_NE(refused.output.find("its extension names no array format tensoracle writes (supported: .npz and "
                                  ".safetensors (any number of arrays), .npy (exactly one array))"),
              std::string::npos)
        << refused.output;
    EXPECT_FALSE(std::filesystem::exists(work_ / name));
  }
}

TEST_F(RunCli, NeverReplacesAnInputOrAnythingButARegularFile) {
  const std::string inputs = work_ / "in.npz";
  auto fixture_arrays = read_named_arrays(fixture(kTinynet));
  ASSERT_TRUE(fixture_arrays.is_ok());
  ASSERT_TRUE(write_npz(inputs, views_of(*fixture_arrays)).is_ok());
  const auto size = std::filesystem::file_size(inputs);
  json built = build_json(kTinynet);
  const std::string engine = built["engine_path"];
  for (const std::string& same : {inputs, work_ / "./in.npz", engine}) {
    const CliRun run = cli("run --engine " + engine + " --inputs " + inputs + " --outputs " + same);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("it is the input '"), std::string::npos) << run.output;
  }
  EXPECT_EQ(std::filesystem::file_size(inputs), size);
  EXPECT_TRUE(read_named_arrays(inputs).is_ok());

  const std::string fifo = work_ / "pipe.npz";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const CliRun onto_fifo = cli("run --engine " + engine + " --inputs " + inputs + " --outputs " + fifo);
  EXPECT_EQ(onto_fifo.exit_code, 2);
  EXPECT_NE(onto_fifo.output.find("it is a FIFO (named pipe)"), std::string::npos) << onto_fifo.output;
  struct stat info {};
  ASSERT_EQ(::lstat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode)) << "the FIFO was replaced";
}

// Inputs are checked against the engine's profile from the declared shapes; a zip bomb in an
// input is refused in milliseconds, and one in an array that is not an input is never read.
TEST_F(RunCli, ReadsOnlyTheEngineInputsAndChecksThemBeforeReading) {
  HostArray image = HostArray::zeros(DataType::kFloat32, {1, 3, 16, 16}).value();
  const std::string image_npy = format_npy_header(DataType::kFloat32, {1, 3, 16, 16}) +
                                std::string(static_cast<const char*>(image.data()), image.byte_size());
  const std::string reference_bomb = work_ / "fixture.npz";
  ASSERT_TRUE(write_npz_bomb(reference_bomb, "probs", DataType::kFloat32, {1023, 1024, 1024}, {{"image", image_npy}}));
  const CliRun skipped = cli("run --package " + kTinynet.package + " --inputs " + reference_bomb + " --outputs " +
                             work_ / "o.npz");
  EXPECT_EQ(skipped.exit_code, 0) << skipped.output;

  const std::string input_bomb = work_ / "bomb.npz";
  ASSERT_TRUE(write_npz_bomb(input_bomb, "image", DataType::kFloat32, {1023, 1024, 1024}));
  const CliRun refused = cli("run --package " + kTinynet.package + " --inputs " + input_bomb + " --outputs " +
                             work_ / "o.npz");
  EXPECT_EQ(refused.exit_code, 1) << "a shape outside the profile is the engine refusing";
  EXPECT_NE(refused.output.find("input 'image': shape [1023,1024,1024] has rank 3, the engine expects rank 4"),
            std::string::npos)
      << refused.output;

  HostArray wrong = HostArray::zeros(DataType::kFloat16, {1, 3, 16, 16}).value();
  ASSERT_TRUE(write_npz(work_ / "fp16.npz", {{"image", wrong.view()}}).is_ok());
  const CliRun dtype = cli("run --package " + kTinynet.package + " --inputs " + work_ / "fp16.npz" + " --outputs " +
                           work_ / "o.npz");
  EXPECT_EQ(dtype.exit_code, 2);
  EXPECT_NE(dtype.output.find("input 'image' is fp16, the engine takes fp32"), std::string::npos) << dtype.output;
}

TEST_F(RunCli, WarnsAboutNonFiniteInputs) {
  HostArray image = HostArray::zeros(DataType::kFloat32, {1, 3, 16, 16}).value();
  for (int i = 0; i < 20; ++i) image.data_as<float>()[i] = std::nanf("");
  image.data_as<float>()[100] = -INFINITY;
  ASSERT_TRUE(write_npz(work_ / "nan.npz", {{"image", image.view()}}).is_ok());
  const CliRun run = cli("run --package " + kTinynet.package + " --inputs " + work_ / "nan.npz" + " --outputs " +
                         work_ / "o.npz");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("warning: input 'image' in '" + work_ / "nan.npz" + "' holds 20 NaN, 1 -inf (of 768 elements)"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(cli(run_tinynet(work_ / "o.npz")).output.find("warning"), std::string::npos) << "finite inputs: no warning";
}

TEST_F(RunCli, AnEngineFileRefusesBuildOptionsAndProfilesOutOfRange) {
  json built = build_json(kTinynet);
  const std::string engine = built["engine_path"];
  const std::string base = "run --engine " + engine + " --inputs " + fixture(kTinynet) + " --outputs " + work_ / "o.npz";
  for (const std::string extra : {"--policy rebuild", "--backend cpu", "--optimization-level 1"}) {
    const CliRun run = cli(base + " " + extra);
    EXPECT_EQ(run.exit_code, 2) << extra;
    EXPECT_NE(run.output.find(extra.substr(0, extra.find(' ')) + " applies only when building from --package"),
              std::string::npos)
        << run.output;
  }
  const CliRun input = cli(base + " --input image:1x3x16x16");
  EXPECT_EQ(input.exit_code, 2);
  EXPECT_NE(input.output.find("--input"), std::string::npos) << input.output;
  const CliRun profile = cli(base + " --profile 1");
  EXPECT_EQ(profile.exit_code, 2);
  EXPECT_NE(profile.output.find("--profile 1: the engine has 1 optimization profile (0)"), std::string::npos)
      << profile.output;
}

// A repeated --input NAME declares the next optimization profile, so --profile 1 can be run.
TEST_F(RunCli, RepeatedInputsDeclareProfilesThatRunSelects) {
  const std::string profiles = "--input image:1x3x16x16:1x3x16x16:2x3x16x16 --input image:4x3x32x32:4x3x32x32:8x3x32x32";
  json built = build_json(kTinynet, profiles);
  ASSERT_EQ(built["exit_code"], 0) << built.dump();
  CliRun inspected = cli("inspect --json " + built["engine_path"].get<std::string>(), false);
  const json info = json::parse(inspected.output);
  ASSERT_EQ(info["io"][0]["profiles"].size(), 2u) << inspected.output;
  EXPECT_EQ(info["io"][0]["profiles"][1]["max"], json({8, 3, 32, 32}));

  HostArray big = HostArray::zeros(DataType::kFloat32, {4, 3, 32, 32}).value();
  ASSERT_TRUE(write_npz(work_ / "big.npz", {{"image", big.view()}}).is_ok());
  const std::string run = "run --package " + kTinynet.package + " " + profiles + " --policy require-cached --inputs " +
                          work_ / "big.npz" + " --outputs " + work_ / "o.npz";
  EXPECT_EQ(cli(run).exit_code, 1) << "profile 0 stops at batch 2";
  const CliRun second = cli(run + " --profile 1");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("probs: fp32[4,10]"), std::string::npos) << second.output;

  const CliRun uneven = cli("build --package " + kTinyTransformer.package +
                            " --input tokens:1x8 --input tokens:2x8 --input mask:1x8");
  EXPECT_EQ(uneven.exit_code, 2);
  EXPECT_NE(uneven.output.find("the inputs declare different numbers of optimization profiles ('tokens' 2, 'mask' 1)"),
            std::string::npos)
      << uneven.output;
}

TEST_F(RunCli, AReplayRecordMustBeAnEngineOfTheBackend) {
  const CliRun passwd = cli("build --package " + kTinynet.package + " --replay-tactics " + kTinynet.package);
  EXPECT_EQ(passwd.exit_code, 2) << passwd.output;
  EXPECT_NE(passwd.output.find("--replay-tactics: '" + kTinynet.package + "' is not a tensoracle engine file"),
            std::string::npos)
      << passwd.output;
  const CliRun listed = cli("cache list --json", false);
  EXPECT_TRUE(json::parse(listed.output)["entries"].empty()) << "no cache entry was made";
}

}  // namespace
}  // namespace tensoracle
