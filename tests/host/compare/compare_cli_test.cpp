// `tensoracle compare`: exit statuses, the JSON report's shape and values, limits files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "host/io/npz_bomb.h"
#include "tensoracle/npy.h"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::string kDir = TENSORACLE_FIXTURES_DIR "/compare/";

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string read_file(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

class CompareCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / (std::string("tensoracle_compare_cli_") + test->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CliRun run(const std::string& args) const {
    const fs::path out = dir_ / "stdout", err = dir_ / "stderr";
    const std::string command =
        "'" TENSORACLE_CLI_PATH "' compare " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
    const int status = std::system(command.c_str());
    CliRun run;
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.out = read_file(out);
    run.err = read_file(err);
    return run;
  }

  std::string write_limits(const std::string& text) const {
    const fs::path path = dir_ / "limits.json";
    std::ofstream(path) << text;
    return "'" + path.string() + "'";
  }

  static std::string fixture(const std::string& name) { return "'" + kDir + name + "'"; }

  fs::path dir_;
};

TEST_F(CompareCli, JsonReportMatchesNumpyForEveryOutput) {
  const CliRun result = run(fixture("candidate.npz") + " " + fixture("reference.npz") +
                            " --atol 1e-5 --rtol 1e-3 --metric psnr --json");
  EXPECT_EQ(result.exit_code, 1) << result.err;  // several fixtures are outside the tolerance
  const json doc = json::parse(result.out);      // exactly one JSON document
  const json expected = json::parse(read_file(kDir + "expected.json"));
  ASSERT_TRUE(doc["outputs"].is_object());
  EXPECT_EQ(doc["passed"], false);
  EXPECT_FALSE(doc["violations"].empty());
  size_t checked = 0;
  for (const auto& [name, got] : doc["outputs"].items()) {
    SCOPED_TRACE(name);
    const json& want = expected["cases"][name];
    for (const char* key : {"shape", "candidate_nan", "candidate_posinf", "candidate_neginf", "reference_nan",
                            "reference_posinf", "reference_neginf", "outside_tolerance_count", "worst_index"}) {
      EXPECT_EQ(got[key], want[key]) << key;
    }
    for (const char* key : {"max_abs_error", "worst_candidate", "worst_reference"}) {
      if (want[key].is_number()) {
        EXPECT_EQ(got[key].get<double>(), want[key].get<double>()) << key;  // written with full precision
      } else {
        EXPECT_EQ(got[key], want[key]) << key;
      }
    }
    for (const char* key : {"rel_l2_error", "cosine_similarity", "outside_tolerance_fraction"}) {
      if (want[key].is_number()) {
        EXPECT_NEAR(got[key].get<double>(), want[key].get<double>(), 1e-12 * std::fabs(want[key].get<double>()))
            << key;
      } else {
        EXPECT_EQ(got[key], want[key]) << key;
      }
    }
    EXPECT_TRUE(got["metrics"].contains("psnr"));
    ++checked;
  }
  EXPECT_GT(checked, 20u);
}

TEST_F(CompareCli, IdenticalFilesPassWithATable) {
  const CliRun result = run(fixture("single_reference.npy") + " " + fixture("single_reference.npy") +
                            " --atol 0 --rtol 0");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("single_reference"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("PASSED"), std::string::npos) << result.out;
}

TEST_F(CompareCli, TwoSingleArraysAreMatchedWhateverTheirNames) {
  const CliRun result = run(fixture("single_candidate.npy") + " " + fixture("single_reference.npy") + " --json");
  EXPECT_EQ(result.exit_code, 0) << result.err;  // no tolerance, no limits: only finiteness is gated
  const json doc = json::parse(result.out);
  EXPECT_EQ(doc["outputs"].size(), 1u);
  EXPECT_TRUE(doc["outputs"].contains("single_reference"));
  EXPECT_TRUE(doc["missing_outputs"].empty());
}

TEST_F(CompareCli, LimitsFileGatesTheComparison) {
  // single_*.npy differ at ~60% of elements beyond atol 1e-5 + rtol 1e-3 * |r|.
  const std::string files = fixture("single_candidate.npy") + " " + fixture("single_reference.npy");
  const std::string loose = write_limits(R"({"default": {"atol": 1e-5, "rtol": 1e-3,
      "max_outside_tolerance_count": null, "max_outside_tolerance_fraction": 0.7, "max_rel_l2_error": 0.01}})");
  EXPECT_EQ(run(files + " --limits " + loose).exit_code, 0);

  const std::string strict = write_limits(R"({"default": {"atol": 1e-5, "rtol": 1e-3,
      "max_outside_tolerance_count": null, "max_outside_tolerance_fraction": 0.5, "max_rel_l2_error": 0.01}})");
  const CliRun failed = run(files + " --limits " + strict + " --json");
  EXPECT_EQ(failed.exit_code, 1);
  const json violations = json::parse(failed.out)["violations"];
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0]["limit"], "max_outside_tolerance_fraction");
  EXPECT_EQ(violations[0]["threshold"], 0.5);
}

TEST_F(CompareCli, CommandLineToleranceOverridesTheLimitsFile) {
  const std::string files = fixture("single_candidate.npy") + " " + fixture("single_reference.npy");
  const std::string limits = write_limits(R"({"default": {"atol": 1, "rtol": 0}})");
  EXPECT_EQ(run(files + " --limits " + limits).exit_code, 0);
  EXPECT_EQ(run(files + " --limits " + limits + " --atol 0 --rtol 0").exit_code, 1);
}

TEST_F(CompareCli, UsageAndInputErrorsExitWithTwo) {
  const std::string files = fixture("single_candidate.npy") + " " + fixture("single_reference.npy");
  const CliRun half_tolerance = run(files + " --atol 1e-3");
  EXPECT_EQ(half_tolerance.exit_code, 2);
  EXPECT_NE(half_tolerance.err.find("--rtol"), std::string::npos) << half_tolerance.err;

  const CliRun missing = run(fixture("no_such_file.npy") + " " + fixture("single_reference.npy"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no_such_file.npy"), std::string::npos) << missing.err;

  const CliRun bad_limits = run(files + " --limits " + write_limits(R"({"default": {"max_abs": 1}})"));
  EXPECT_EQ(bad_limits.exit_code, 2);
  EXPECT_NE(bad_limits.err.find("unknown key 'max_abs'"), std::string::npos) << bad_limits.err;

  const CliRun unknown_output = run(files + " --limits " + write_limits(R"({"outputs": {"logits": {}}})"));
  EXPECT_EQ(unknown_output.exit_code, 2);
  EXPECT_NE(unknown_output.err.find("'logits'"), std::string::npos) << unknown_output.err;

  const CliRun bad_metric = run(files + " --metric ssim");
  EXPECT_EQ(bad_metric.exit_code, 2);
  EXPECT_NE(bad_metric.err.find("ssim"), std::string::npos) << bad_metric.err;

  EXPECT_EQ(run(fixture("single_reference.npy")).exit_code, 2);  // REFERENCE is required
}

// Limits files are untrusted: each of these once crashed the CLI (an uncaught
// exception, a stack overflow) or was silently accepted; each is now exit 2 naming the field.
TEST_F(CompareCli, HostileLimitsFilesExitWithTwoNamingTheField) {
  const std::string files = fixture("single_candidate.npy") + " " + fixture("single_reference.npy");
  const CliRun overflow = run(files + " --limits " + write_limits(R"({"default": {"atol": 1e999, "rtol": 0}})"));
  EXPECT_EQ(overflow.exit_code, 2);
  EXPECT_NE(overflow.err.find("/default/atol: invalid JSON: number overflow parsing '1e999'"), std::string::npos)
      << overflow.err;

  const CliRun deep = run(files + " --limits " + write_limits(std::string(100000, '[') + std::string(100000, ']')));
  EXPECT_EQ(deep.exit_code, 2);
  EXPECT_NE(deep.err.find("nesting is deeper than 64 levels"), std::string::npos) << deep.err;

  const CliRun twice = run(files + " --limits " + write_limits(R"({"default": {"atol": 1, "rtol": 0, "atol": 0}})"));
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("/default/atol: duplicate key 'atol'"), std::string::npos) << twice.err;

  const CliRun huge_count =
      run(files + " --limits " + write_limits(R"({"default": {"max_outside_tolerance_count": 99999999999999999999}})"));
  EXPECT_EQ(huge_count.exit_code, 2);
  EXPECT_NE(huge_count.err.find("beyond the 64-bit integer range"), std::string::npos) << huge_count.err;
}

// Stage 1 against a committed fixture: the reference file holds the inputs beside the outputs.
TEST_F(CompareCli, OnlyAndExcludeSelectTheArraysToCompare) {
  using namespace tensoracle;  // NOLINT
  HostArray image = HostArray::zeros(DataType::kFloat32, {1, 3, 4, 4}).value();
  HostArray probs = HostArray::zeros(DataType::kFloat32, {1, 10}).value();
  for (int i = 0; i < 10; ++i) probs.data_as<float>()[i] = 0.1f * static_cast<float>(i);
  const std::string candidate = (dir_ / "out.npz").string(), reference = (dir_ / "io.npz").string();
  ASSERT_TRUE(write_npz(candidate, {{"probs", probs.view()}}).is_ok());
  ASSERT_TRUE(write_npz(reference, {{"image", image.view()}, {"probs", probs.view()}}).is_ok());
  const std::string files = candidate + " " + reference + " --atol 0 --rtol 0";

  const CliRun all = run(files);
  EXPECT_EQ(all.exit_code, 1) << "the candidate lacks 'image'";
  EXPECT_NE(all.out.find("missing in candidate: image"), std::string::npos) << all.out;
  for (const std::string selection : {"--only probs", "--exclude image", "--only probs --exclude image"}) {
    const CliRun selected = run(files + " " + selection + " --json");
    EXPECT_EQ(selected.exit_code, 0) << selection << ": " << selected.err;
    const json doc = json::parse(selected.out);
    EXPECT_EQ(doc["outputs"].size(), 1u) << selection;
    EXPECT_TRUE(doc["missing_outputs"].empty()) << selection;
  }
  const CliRun absent = run(files + " --only probs,logits");
  EXPECT_EQ(absent.exit_code, 2);
  EXPECT_NE(absent.err.find("'" + candidate + "' has no array 'logits' (it holds: probs)"), std::string::npos)
      << absent.err;
  const CliRun both = run(files + " --only probs --exclude probs");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("'probs' is given to both --only and --exclude"), std::string::npos) << both.err;
  // Limits for an output left out do not apply.
  const CliRun limited = run(files + " --only probs --limits " + write_limits(R"({"outputs": {"image": {}}})"));
  EXPECT_EQ(limited.exit_code, 0) << limited.err;
}

// A few MB that inflate to 4 GiB: refused from the declared sizes, before anything is allocated;
// an array left out by the selection is never read at all.
TEST_F(CompareCli, AZipBombIsRefusedBeforeDecompressingUnlessLeftOut) {
  using namespace tensoracle;  // NOLINT
  HostArray probs = HostArray::zeros(DataType::kFloat32, {1, 10}).value();
  const std::string candidate = (dir_ / "out.npz").string(), bomb = (dir_ / "bomb.npz").string();
  ASSERT_TRUE(write_npz(candidate, {{"probs", probs.view()}}).is_ok());
  const std::string probs_npy = format_npy_header(DataType::kFloat32, {1, 10}) + std::string(40, '\0');
  ASSERT_TRUE(tensoracle::testing::write_npz_bomb(bomb, "image", DataType::kFloat32, {1023, 1024, 1024}, {{"probs", probs_npy}}));
  const CliRun refused = run(candidate + " " + bomb);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("array 'image' (fp32 [1023,1024,1024], 4.0 GiB) brings the data read to 4.0 GiB"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("--max-input-size"), std::string::npos) << refused.err;
  EXPECT_EQ(run(candidate + " " + bomb + " --only probs").exit_code, 0);
  const CliRun lowered = run(candidate + " " + candidate + " --max-input-size 8");
  EXPECT_EQ(lowered.exit_code, 2);
  EXPECT_NE(lowered.err.find("over the limit given (8 B)"), std::string::npos) << lowered.err;
  EXPECT_NE(run(candidate + " " + candidate + " --max-input-size much").err.find("--max-input-size: 'much' is not a size"),
            std::string::npos);
}

TEST_F(CompareCli, TolerancesMustBeFiniteAndAreQuotedAsWritten) {
  const std::string files = fixture("single_candidate.npy") + " " + fixture("single_reference.npy");
  const CliRun huge = run(files + " --atol 1e999 --rtol 0");
  EXPECT_EQ(huge.exit_code, 2);
  EXPECT_NE(huge.err.find("--atol: '1e999' is not finite (a tolerance is a finite number >= 0)"), std::string::npos)
      << huge.err;
  EXPECT_LT(huge.err.size(), 200u) << "no 300-digit range: " << huge.err;
  EXPECT_NE(run(files + " --atol 0 --rtol -1").err.find("--rtol: '-1' is negative"), std::string::npos);
  EXPECT_NE(run(files + " --atol nan --rtol 0").err.find("'nan' is not finite"), std::string::npos);
  EXPECT_NE(run(files + " --atol 1e-3x --rtol 0").err.find("'1e-3x' is not a number"), std::string::npos);
  const CliRun as_json = run(files + " --atol inf --rtol 0 --json");
  EXPECT_EQ(as_json.exit_code, 2);
  const json error = json::parse(as_json.out);
  EXPECT_EQ(error["ok"], false);
  EXPECT_EQ(error["exit_code"], 2);
  EXPECT_NE(error["error"].get<std::string>().find("'inf' is not finite"), std::string::npos) << as_json.out;
}

}  // namespace
