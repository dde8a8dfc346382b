// `tensoracle convert`: exit statuses, what it prints, and that a hostile checkpoint runs nothing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>

#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code;
  std::string output;  // stdout and stderr
};

CliRun run_cli(const std::string& arguments) {
  const std::string command = std::string(TENSORACLE_CLI_PATH) + " " + arguments + " 2>&1";
  CliRun run{-1, ""};
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return run;
  std::array<char, 4096> buffer;
  size_t got;
  while ((got = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.output.append(buffer.data(), got);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

class ConvertCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(::testing::TempDir()) / "pth_cli_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string crafted(const std::string& name) {
    return (fs::path(TENSORACLE_FIXTURES_DIR) / "pth" / "crafted" / name).string();
  }
  fs::path dir_;
};

TEST_F(ConvertCli, ConvertsWithKeyAndDtypeAndListsSkippedValues) {
  const std::string out = (dir_ / "sd.safetensors").string();
  const CliRun run = run_cli("convert " + crafted("crafted_nested.pth") + " " + out + " --key state_dict --dtype bf16");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("wrote 3 tensors to " + out), std::string::npos) << run.output;
  auto file = SafetensorsFile::open(out);
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  EXPECT_EQ(file->view("fc.weight")->dtype, DataType::kBFloat16);
  EXPECT_EQ(file->view("bn.num_batches_tracked")->dtype, DataType::kInt64);
  EXPECT_EQ(file->metadata().at("source_key"), "state_dict");
  EXPECT_EQ(file->metadata().at("float_dtype"), "bf16");

  const CliRun all = run_cli("convert " + crafted("crafted_nested.pth") + " " + (dir_ / "all.safetensors").string());
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_NE(all.output.find("note: skipped 'epoch' (int 3)"), std::string::npos) << all.output;
  const CliRun quiet = run_cli("convert -q " + crafted("crafted_nested.pth") + " " + (dir_ / "q.safetensors").string());
  EXPECT_EQ(quiet.output.find("note:"), std::string::npos) << quiet.output;
}

TEST_F(ConvertCli, HostilePickleFailsCleanlyAndExecutesNothing) {
  // The pickle asks for os.system("echo tensoracle-pwned > /tmp/tensoracle-pwned").
  const fs::path marker = "/tmp/tensoracle-pwned";
  fs::remove(marker);
  const std::string out = (dir_ / "evil.safetensors").string();
  const CliRun run = run_cli("convert " + crafted("hostile_os_system.pth") + " " + out);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("error: corrupt_data:"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("global 'os.system' is not allowed"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(ConvertCli, RejectsBadUsage) {
  const std::string out = (dir_ / "x.safetensors").string();
  EXPECT_EQ(run_cli("convert " + crafted("crafted_views.pth") + " " + out + " --dtype int8").exit_code, 2);
  EXPECT_EQ(run_cli("convert " + (dir_ / "missing.pth").string() + " " + out).exit_code, 2);
  const CliRun legacy = run_cli("convert " + crafted("hostile_legacy.pth") + " " + out);
  EXPECT_EQ(legacy.exit_code, 2);
  EXPECT_NE(legacy.output.find("_use_new_zipfile_serialization=True"), std::string::npos) << legacy.output;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace tensoracle
