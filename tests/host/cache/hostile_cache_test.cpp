// A cache directory is untrusted: it may be shared or restored from elsewhere. Nothing
// in it is followed out of it, and a cache that cannot be changed says why. Each case once did
// harm: a <key>.lock linked outside made a build create the link's target; a <key>.used link made
// every hit touch its target's time; a read-only cache made `cache clear` say "in use by another
// process" and exit 0.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "host/cache/cache_testing.h"
#include "host/cli_run.h"
#include "tensoracle/cache.h"

namespace tensoracle {
namespace {

using testing::counting_builder;
using testing::sample_manifest;
using testing::store_in;
using testing::CliRun;
using testing::TempDir;


int64_t mtime_seconds(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 ? info.st_mtim.tv_sec : -1;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class HostileCache : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = outside_ / "cache";
    ASSERT_TRUE(std::filesystem::create_directory(cache_));
    key_ = cache_key(sample_manifest());
  }
  std::string entry(const char* suffix) const { return cache_ + "/" + key_ + suffix; }

  TempDir outside_;
  std::string cache_;
  std::string key_;
};

TEST_F(HostileCache, ALockLinkedOutsideIsNotFollowedAndCreatesNothing) {
  const std::string target = outside_ / "created-by-the-lock";
  ASSERT_EQ(::symlink(target.c_str(), entry(".lock").c_str()), 0);
  int builds = 0;
  auto opened = store_in(cache_).open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds));
  ASSERT_TRUE(opened.is_ok()) << opened.status().to_string();
  EXPECT_FALSE(std::filesystem::exists(target));  // neither created nor locked
  ASSERT_EQ(opened->warnings.size(), 1u);
  EXPECT_NE(opened->warnings[0].find("the lock file '" + entry(".lock") + "' is a symbolic link; it is not followed"),
            std::string::npos)
      << opened->warnings[0];
}

TEST_F(HostileCache, AUsedStampLinkedOutsideIsNeverTouched) {
  const std::string target = outside_ / "someone-elses-file";
  std::ofstream(target) << "keep my time";
  const timespec old_times[2] = {{1000, 0}, {1000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, target.c_str(), old_times, 0), 0);
  ASSERT_EQ(::symlink(target.c_str(), entry(".used").c_str()), 0);
  int builds = 0;
  const CacheStore store = store_in(cache_);
  ASSERT_TRUE(store.open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds)).is_ok());
  auto hit = store.open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds));
  ASSERT_TRUE(hit.is_ok());
  EXPECT_TRUE(hit->cache_hit);
  EXPECT_EQ(mtime_seconds(target), 1000);
  EXPECT_EQ(read_file(target), "keep my time");
}

TEST_F(HostileCache, EngineAndManifestLinksAreRefusedReportedAndReplacedNotFollowed) {
  // A complete, valid entry built elsewhere, linked into this cache under its key.
  const std::string elsewhere = outside_ / "elsewhere";
  int builds = 0;
  ASSERT_TRUE(std::filesystem::create_directory(elsewhere));
  ASSERT_TRUE(store_in(elsewhere).open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds)).is_ok());
  const std::string outside_engine = elsewhere + "/" + key_ + ".engine";
  const std::string outside_bytes = read_file(outside_engine);
  ASSERT_EQ(::symlink(outside_engine.c_str(), entry(".engine").c_str()), 0);
  ASSERT_EQ(::symlink((elsewhere + "/" + key_ + ".manifest.json").c_str(), entry(".manifest.json").c_str()), 0);

  const CacheStore store = store_in(cache_);
  auto problems = store.verify();
  ASSERT_TRUE(problems.is_ok());
  ASSERT_EQ(problems->size(), 1u);
  EXPECT_NE((*problems)[0].reason.find("is a symbolic link; it is not followed"), std::string::npos) << (*problems)[0].reason;

  auto refused = store.open_or_build(sample_manifest(), CachePolicy::kRequireCached, counting_builder(&builds));
  EXPECT_FALSE(refused.is_ok());
  auto rebuilt = store.open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds));
  ASSERT_TRUE(rebuilt.is_ok()) << rebuilt.status().to_string();
  EXPECT_TRUE(rebuilt->built);
  // The links were replaced by the entry's own files; what they pointed at is as it was.
  EXPECT_FALSE(std::filesystem::is_symlink(entry(".engine")));
  EXPECT_FALSE(std::filesystem::is_symlink(entry(".manifest.json")));
  EXPECT_EQ(read_file(outside_engine), outside_bytes);
  EXPECT_TRUE(store.verify()->empty());
}

TEST_F(HostileCache, ListPruneAndClearNeverDescendIntoOrThroughLinks) {
  int builds = 0;
  const CacheStore store = store_in(cache_);
  ASSERT_TRUE(store.open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds)).is_ok());
  // A directory elsewhere holding what looks like an entry, linked into the cache as file-hashes/
  // and under an entry-like name, and a real subdirectory named like an engine.
  const std::string victim = outside_ / "victim";
  ASSERT_TRUE(std::filesystem::create_directory(victim));
  std::ofstream(victim + "/" + key_ + ".engine") << "not yours";
  ASSERT_EQ(::symlink(victim.c_str(), (cache_ + "/file-hashes").c_str()), 0);
  const std::string other_key(64, 'e');
  ASSERT_TRUE(std::filesystem::create_directory(cache_ + "/" + other_key + ".engine"));

  auto listed = store.list();
  ASSERT_TRUE(listed.is_ok());
  EXPECT_EQ(listed->size(), 1u);
  auto cleared = store.clear();
  ASSERT_TRUE(cleared.is_ok()) << cleared.status().to_string();
  EXPECT_EQ(cleared->removed_keys, std::vector<std::string>{key_});
  EXPECT_EQ(read_file(victim + "/" + key_ + ".engine"), "not yours");
  EXPECT_TRUE(std::filesystem::is_directory(cache_ + "/" + other_key + ".engine"));
  // Hash records are neither read nor written through the link.
  FileHashCache hashes = store.file_hashes();
  const std::string weights = outside_ / "w.bin";
  std::ofstream(weights) << "weights";
  ASSERT_TRUE(hashes.file_sha256(weights).is_ok());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(victim), std::filesystem::directory_iterator()), 1);
}

// Runs `command` in a shell as an unprivileged user when this process is root (root ignores file
// permissions); returns its exit status and output.
CliRun run_unprivileged(const std::string& command) {
  const std::string prefix = ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  return testing::run_command(prefix + command + " 2>&1");
}

TEST_F(HostileCache, AReadOnlyCacheSaysPermissionDeniedNotInUse) {
  if (::geteuid() == 0 && std::system("command -v setpriv >/dev/null") != 0)
    GTEST_SKIP() << "running as root without setpriv: no way to drop the permission to write";
  int builds = 0;
  ASSERT_TRUE(store_in(cache_).open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds)).is_ok());
  // Readable by everyone, writable by no one but root.
  ASSERT_EQ(::chmod(outside_.path().c_str(), 0755), 0);
  ASSERT_EQ(::chmod(cache_.c_str(), 0555), 0);
  for (const char* command : {"clear", "prune --max-size 1"}) {
    const CliRun run = run_unprivileged(std::string(TENSORACLE_CLI_PATH) + " cache " + command + " --dir " + cache_);
    EXPECT_EQ(run.exit_code, 2) << command << ": " << run.output;
    EXPECT_NE(run.output.find("Permission denied"), std::string::npos) << command << ": " << run.output;
    EXPECT_NE(run.output.find(cache_ + "/" + key_), std::string::npos) << command << ": " << run.output;
    EXPECT_EQ(run.output.find("in use"), std::string::npos) << command << ": " << run.output;
  }
  EXPECT_TRUE(std::filesystem::exists(entry(".engine")));
  // Reading still works: list and verify need no write access.
  const CliRun verify = run_unprivileged(std::string(TENSORACLE_CLI_PATH) + " cache verify --dir " + cache_);
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  ASSERT_EQ(::chmod(cache_.c_str(), 0755), 0);
}

}  // namespace
}  // namespace tensoracle
