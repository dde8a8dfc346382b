// The store across processes: concurrent openers build once; builders killed at random points
// never leave an entry that a later open accepts unless it is complete.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <sstream>
#include <random>
#include <thread>

#include "host/cache/cache_testing.h"
#include "tensoracle/cache.h"

namespace tensoracle {
namespace {

using testing::sample_manifest;
using testing::store_in;
using testing::TempDir;


// Appends one byte to `counter_path` per build (O_APPEND writes are atomic), then slowly returns
// the sample engine, so that other processes arrive while the build runs.
EngineBuildFn recorded_slow_builder(const std::string& counter_path, std::chrono::milliseconds duration,
                                    size_t blob_bytes) {
  return [=]() -> Result<EngineWriter> {
    const int fd = ::open(counter_path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0666);
    (void)!::write(fd, "b", 1);
    ::close(fd);
    std::this_thread::sleep_for(duration);
    return testing::small_cpu_engine_writer(blob_bytes);
  };
}

size_t count_builds(const std::string& counter_path) { return std::filesystem::exists(counter_path) ? std::filesystem::file_size(counter_path) : 0; }

TEST(CacheProcesses, EightConcurrentOpenersBuildOnce) {
  TempDir dir;
  const std::string counter = dir / "builds";
  const std::string cache = dir / "cache";
  constexpr int kProcesses = 8;
  int start[2], results[2];
  ASSERT_EQ(::pipe(start), 0);
  ASSERT_EQ(::pipe(results), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(start[1]);
      char go;
      (void)!::read(start[0], &go, 1);  // returns when the parent closes its end: all start together
      auto opened = store_in(cache).open_or_build(sample_manifest(), CachePolicy::kReuse,
                                                  recorded_slow_builder(counter, std::chrono::milliseconds(300), 4096));
      std::string line = opened.is_ok() ? opened->engine.checksum_hex() + (opened->built ? " built\n" : " reused\n")
                                        : "error " + opened.status().message() + "\n";
      (void)!::write(results[1], line.data(), line.size());
      ::_exit(opened.is_ok() ? 0 : 1);
    }
    children.push_back(child);
  }
  ::close(start[0]);
  ::close(start[1]);  // go
  ::close(results[1]);
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::string output;
  char buffer[512];
  for (ssize_t n; (n = ::read(results[0], buffer, sizeof buffer)) > 0;) output.append(buffer, n);
  ::close(results[0]);

  EXPECT_EQ(count_builds(counter), 1u) << output;
  std::istringstream lines(output);
  std::string checksum, how, first_checksum;
  int built = 0, reused = 0;
  while (lines >> checksum >> how) {
    if (first_checksum.empty()) first_checksum = checksum;
    EXPECT_EQ(checksum, first_checksum) << output;
    (how == "built" ? built : reused)++;
  }
  EXPECT_EQ(built, 1) << output;
  EXPECT_EQ(reused, kProcesses - 1) << output;
}

// A builder is killed with SIGKILL at a random moment: while building, writing the manifest,
// writing the engine, renaming, or after. Whatever it left, a later require-cached open either
// finds nothing or finds the complete engine; a later reuse open always succeeds.
TEST(CacheProcesses, BuilderKilledAtRandomPointsNeverLeavesAnAcceptedPartialEntry) {
  TempDir dir;
  const std::string cache = dir / "cache";
  const std::string counter = dir / "builds";
  constexpr size_t kBlobBytes = 2 << 20;
  const auto build = recorded_slow_builder(counter, std::chrono::milliseconds(2), kBlobBytes);

  // How long one rebuild takes here, to spread the kill moments over it.
  const auto started = std::chrono::steady_clock::now();
  auto calibration = store_in(cache).open_or_build(sample_manifest(), CachePolicy::kRebuild, build);
  ASSERT_TRUE(calibration.is_ok());
  // Engines are written deterministically: every complete one has these bytes.
  const std::string expected = calibration->engine.checksum_hex();
  const size_t expected_size = calibration->engine.bytes().size;
  const auto full_run_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(store_in(cache).clear().is_ok());

  std::mt19937 random(20240611);
  int complete = 0, absent = 0, finished_before_kill = 0;
  constexpr int kTrials = 120;
  for (int trial = 0; trial < kTrials; ++trial) {
    // Every fourth trial starts from an empty cache (first build), the others replace an entry.
    if (trial % 4 == 0) ASSERT_TRUE(store_in(cache).clear().is_ok());
    const auto policy = trial % 4 == 0 ? CachePolicy::kReuse : CachePolicy::kRebuild;
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto opened = store_in(cache).open_or_build(sample_manifest(), policy, build);
      ::_exit(opened.is_ok() ? 0 : 1);
    }
    std::uniform_int_distribution<long> delay(0, full_run_us * 5 / 4 + 1000);
    std::this_thread::sleep_for(std::chrono::microseconds(delay(random)));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    if (WIFEXITED(status)) {
      ASSERT_EQ(WEXITSTATUS(status), 0);
      ++finished_before_kill;
    }

    auto found = store_in(cache).open_or_build(sample_manifest(), CachePolicy::kRequireCached, build);
    if (found.is_ok()) {
      ++complete;
      ASSERT_EQ(found->engine.checksum_hex(), expected) << "trial " << trial;
      ASSERT_EQ(found->engine.bytes().size, expected_size) << "trial " << trial;
    } else {
      ++absent;
      ASSERT_EQ(found.status().code(), StatusCode::kNotFound) << "trial " << trial << ": " << found.status().message();
    }
    auto reopened = store_in(cache).open_or_build(sample_manifest(), CachePolicy::kReuse, build);
    ASSERT_TRUE(reopened.is_ok()) << "trial " << trial << ": " << reopened.status().message();
    ASSERT_EQ(reopened->engine.checksum_hex(), expected) << "trial " << trial;
    ASSERT_TRUE(store_in(cache).verify()->empty()) << "trial " << trial;
  }
  // The kills must have landed both before and after the commit point, or the test proved little.
  EXPECT_GT(absent, 0);
  EXPECT_GT(complete, 0);
  RecordProperty("complete", complete);
  RecordProperty("absent", absent);
  RecordProperty("finished_before_kill", finished_before_kill);
  std::printf("kills: %d found a complete entry, %d found none, %d children finished first (one run: %ld us)\n",
              complete, absent, finished_before_kill, static_cast<long>(full_run_us));
}

}  // namespace
}  // namespace tensoracle
