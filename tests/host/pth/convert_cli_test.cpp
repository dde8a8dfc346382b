// `tensoracle convert`: exit statuses, what it prints, and that a hostile checkpoint runs nothing.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "host/cli_run.h"
#include "host/pth/hostile_checkpoints.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

namespace fs = std::filesystem;

using testing::CliRun;
using testing::run_cli;

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

TEST_F(ConvertCli, AnExpansionOverTheLimitFailsBeforeWritingAndTheFlagRaisesIt) {
  const std::string bomb = (dir_ / "bomb.pth").string();
  ASSERT_TRUE(pth::hostile::write_stride0_bomb(bomb, 64, int32_t{1} << 30));  // 256 GiB from 4 bytes
  const std::string out = (dir_ / "out.safetensors").string();
  const CliRun refused = run_cli("convert " + bomb + " " + out);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("its 64 tensors expand to 256.0 GiB"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("--max-output-size"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(out));

  const std::string small = (dir_ / "small.pth").string();
  ASSERT_TRUE(pth::hostile::write_stride0_bomb(small, 2, 1 << 20));  // 8 MiB of views
  const CliRun lowered = run_cli("convert " + small + " " + out + " --max-output-size 4M");
  EXPECT_EQ(lowered.exit_code, 2) << lowered.output;
  EXPECT_NE(lowered.output.find("over the limit given (4.0 MiB)"), std::string::npos) << lowered.output;
  const CliRun raised = run_cli("convert " + small + " " + out + " --max-output-size 8MiB");
  EXPECT_EQ(raised.exit_code, 0) << raised.output;
  EXPECT_EQ(SafetensorsFile::open(out)->tensors().size(), 2u);
  const CliRun bad = run_cli("convert " + small + " " + out + " --max-output-size lots");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("--max-output-size: 'lots' is not a size"), std::string::npos) << bad.output;
}

TEST_F(ConvertCli, WritesOnlyARegularSafetensorsFileThatIsNotTheInput) {
  const std::string input = (dir_ / "in.pth").string();
  fs::copy_file(crafted("crafted_views.pth"), input);
  const CliRun npz = run_cli("convert " + input + " " + (dir_ / "d.npz").string());
  EXPECT_EQ(npz.exit_code, 2);
  EXPECT_NE(npz.output.find("convert writes safetensors; name the output *.safetensors"), std::string::npos)
      << npz.output;
  EXPECT_FALSE(fs::exists(dir_ / "d.npz"));

  const std::string fifo = (dir_ / "pipe.safetensors").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const CliRun onto_fifo = run_cli("convert " + input + " " + fifo);
  EXPECT_EQ(onto_fifo.exit_code, 2);
  EXPECT_NE(onto_fifo.output.find("it is a FIFO (named pipe)"), std::string::npos) << onto_fifo.output;
  struct stat info {};
  ASSERT_EQ(::lstat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode)) << "the FIFO was replaced";

  fs::create_hard_link(input, dir_ / "same.safetensors");
  const CliRun onto_input = run_cli("convert " + input + " " + (dir_ / "same.safetensors").string());
  EXPECT_EQ(onto_input.exit_code, 2);
  EXPECT_NE(onto_input.output.find("it is the input '" + input + "'"), std::string::npos) << onto_input.output;
  EXPECT_EQ(fs::file_size(input), fs::file_size(crafted("crafted_views.pth")));
}

// SIGINT in the middle of writing a large output: the process still dies of SIGINT (the shell
// sees an interrupted command), and neither the output nor its temporary file is left.
TEST_F(ConvertCli, AnInterruptedConversionLeavesNoTemporaryFile) {
  const std::string bomb = (dir_ / "views.pth").string();
  ASSERT_TRUE(pth::hostile::write_stride0_bomb(bomb, 8, 8 << 20));  // 256 MiB of views
  const std::string out = (dir_ / "out.safetensors").string();
  const std::string cli = TENSORACLE_CLI_PATH;
  std::vector<std::string> arguments = {cli, "convert", "-q", bomb, out};
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  // SIGINT as an interactive shell leaves it (a background job, as CI may run us, ignores it).
  posix_spawnattr_t attributes;
  ASSERT_EQ(::posix_spawnattr_init(&attributes), 0);
  sigset_t interrupt;
  sigemptyset(&interrupt);
  sigaddset(&interrupt, SIGINT);
  ASSERT_EQ(::posix_spawnattr_setsigdefault(&attributes, &interrupt), 0);
  ASSERT_EQ(::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF), 0);
  pid_t child = 0;
  ASSERT_EQ(::posix_spawn(&child, cli.c_str(), nullptr, &attributes, argv.data(), environ), 0);
  ::posix_spawnattr_destroy(&attributes);

  // Wait until the temporary file exists, i.e. the write is under way.
  const auto temporary_exists = [&] {
    for (const auto& entry : fs::directory_iterator(dir_))
      if (entry.path().filename().string().rfind(".out.safetensors.tmp-", 0) == 0) return true;
    return false;
  };
  int status = 0;
  bool seen = false;
  for (int i = 0; i < 60000 && !seen; ++i) {
    seen = temporary_exists();
    if (!seen && ::waitpid(child, &status, WNOHANG) == child) break;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(seen) << "the conversion ended before its temporary file was seen";
  ASSERT_EQ(::kill(child, SIGINT), 0);
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "status " << status;
  std::string left;
  for (const auto& entry : fs::directory_iterator(dir_)) left += " " + entry.path().filename().string();
  EXPECT_FALSE(temporary_exists()) << "left:" << left;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace tensoracle
