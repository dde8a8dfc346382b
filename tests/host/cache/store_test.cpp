// The cache store in one process: hits and misses, policies, corrupt entries, the explained miss,
// eviction, unwritable directories and the maintenance operations.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cache/file_lock.h"
#include "host/cache/cache_testing.h"
#include "host/engine/engine_surgery.h"
#include "tensoracle/cache.h"

namespace tensoracle {
namespace {

using testing::counting_builder;
using testing::sample_manifest;
using testing::store_in;
using testing::TempDir;


std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

TEST(CacheStore, FirstOpenBuildsSecondReuses) {
  TempDir dir;
  const CacheStore store = store_in(dir);
  int builds = 0;
  auto first = store.open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds));
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  EXPECT_FALSE(first->cache_hit);
  EXPECT_TRUE(first->built);
  EXPECT_EQ(first->key, cache_key(sample_manifest()));
  EXPECT_EQ(first->engine_path, dir / (first->key + ".engine"));
  EXPECT_EQ(first->engine.manifest_json(), manifest_to_json(sample_manifest()));
  EXPECT_EQ(read_file(dir / (first->key + ".manifest.json")), manifest_to_json(sample_manifest()));

  auto second = store.open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds));
  ASSERT_TRUE(second.is_ok());
  EXPECT_TRUE(second->cache_hit);
  EXPECT_FALSE(second->built);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(second->engine.checksum_hex(), first->engine.checksum_hex());
}

TEST(CacheStore, RebuildPolicyAlwaysBuilds) {
  TempDir dir;
  const CacheStore store = store_in(dir);
  int builds = 0;
  ASSERT_TRUE(store.open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds)).is_ok());
  auto rebuilt = store.open_or_build(sample_manifest(), CachePolicy::kRebuild, counting_builder(&builds));
  ASSERT_TRUE(rebuilt.is_ok());
  EXPECT_FALSE(rebuilt->cache_hit);
  EXPECT_EQ(builds, 2);
}

TEST(CacheStore, RequireCachedNeverBuilds) {
  TempDir dir;
  const CacheStore store = store_in(dir);
  int builds = 0;
  auto absent = store.open_or_build(sample_manifest(), CachePolicy::kRequireCached, counting_builder(&builds));
  ASSERT_FALSE(absent.is_ok());
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound);
  EXPECT_NE(absent.status().message().find("require-cached"), std::string::npos) << absent.status().message();
  EXPECT_EQ(builds, 0);
  ASSERT_TRUE(store.open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds)).is_ok());
  auto present = store.open_or_build(sample_manifest(), CachePolicy::kRequireCached, counting_builder(&builds));
  ASSERT_TRUE(present.is_ok());
  EXPECT_TRUE(present->cache_hit);
  EXPECT_EQ(builds, 1);
}

TEST(CacheStore, BuildErrorsNameTheEngine) {
  TempDir dir;
  const CacheStore store = store_in(dir);
  auto failed = store.open_or_build(sample_manifest(), CachePolicy::kReuse,
                                    []() -> Result<EngineWriter> { return Status(StatusCode::kUnsupported, "no tactic"); });
  ASSERT_FALSE(failed.is_ok());
  EXPECT_NE(failed.status().message().find("building engine 'tinynet'"), std::string::npos);
  EXPECT_NE(failed.status().message().find("no tactic"), std::string::npos);
  EXPECT_TRUE(store.list()->empty());
}

using engine_layout::SectionKind;

// Rewrites a JSON section of the engine at `path` and seals its checksum again (engine_surgery.h).
void reseal(const std::string& path, SectionKind kind, const std::function<void(nlohmann::json&)>& edit) {
  write_file(path, testing::edit_section_json(read_file(path), kind, edit));
}

// Each corruption of a stored entry: reuse reports it and rebuilds, require-cached refuses with
// the reason, verify lists it.
TEST(CacheStore, CorruptEntriesAreReportedAndRebuilt) {
  struct Case {
    const char* name;
    std::function<void(const std::string& engine, const std::string& manifest)> corrupt;
    const char* reason;
  };
  const Case cases[] = {
      {"bit flip",
       [](const std::string& engine, const std::string&) {
         std::string bytes = read_file(engine);
         bytes[bytes.size() / 3] ^= 4;
         write_file(engine, bytes);
       },
       "checksum does not match"},
      {"truncation",
       [](const std::string& engine, const std::string&) { ::truncate(engine.c_str(), 500); },
       "truncated"},
      {"manifest edited",
       [](const std::string&, const std::string& manifest) {
         write_file(manifest, read_file(manifest) + " ");
       },
       "does not match the manifest inside the engine"},
      {"manifest missing", [](const std::string&, const std::string& manifest) { ::unlink(manifest.c_str()); },
       "no manifest file"},
      {"engine of another key",
       [](const std::string& engine, const std::string&) {
         KeyManifest other = sample_manifest();
         other.graph_version = "other";
         EngineWriter writer = testing::sample_engine_writer(manifest_to_json(other));
         ASSERT_TRUE(writer.write_file(engine).is_ok());
       },
       "not of its own key"},
      // Resealed: the checksum passes, the sections contradict each other.
      {"output type rewritten, checksum resealed",
       [](const std::string& engine, const std::string&) {
         reseal(engine, SectionKind::kIoTable, [](nlohmann::json& io) { io["tensors"][1]["dtype"] = "fp16"; });
       },
       "output 'y' is fp16 in the I/O table, fp32 in the plan's network"},
      {"constant shape rewritten, checksum resealed",
       [](const std::string& engine, const std::string&) {
         reseal(engine, SectionKind::kPlan, [](nlohmann::json& plan) {
           for (auto& item : plan["constants"].items()) item.value()["shape"] = {1};
         });
       },
       "fp32[1] needs 4"},
      {"cpu plan layer rewritten, checksum resealed",
       [](const std::string& engine, const std::string&) {
         reseal(engine, SectionKind::kPlan, [](nlohmann::json& plan) { plan["layers"][0]["tactic"] = "cpu.fast"; });
       },
       "says 'cpu.fast', the cpu backend runs it as 'cpu.reference'"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    const CacheStore store = store_in(dir);
    int builds = 0;
    auto built = store.open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds));
    ASSERT_TRUE(built.is_ok());
    const std::string key = built->key;
    c.corrupt(dir / (key + ".engine"), dir / (key + ".manifest.json"));

    auto problems = store.verify();
    ASSERT_TRUE(problems.is_ok());
    ASSERT_EQ(problems->size(), 1u) << c.name;
    EXPECT_EQ((*problems)[0].key, key);
    EXPECT_NE((*problems)[0].reason.find(c.reason), std::string::npos) << c.name << ": " << (*problems)[0].reason;

    auto refused = store.open_or_build(sample_manifest(), CachePolicy::kRequireCached, counting_builder(&builds));
    ASSERT_FALSE(refused.is_ok()) << c.name;
    EXPECT_NE(refused.status().message().find(c.reason), std::string::npos) << refused.status().message();

    auto reopened = store.open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds));
    ASSERT_TRUE(reopened.is_ok()) << c.name << ": " << reopened.status().to_string();
    EXPECT_EQ(builds, 2) << c.name;
    ASSERT_EQ(reopened->warnings.size(), 1u) << c.name;
    EXPECT_NE(reopened->warnings[0].find(c.reason), std::string::npos) << reopened->warnings[0];
    EXPECT_TRUE(store.verify()->empty()) << c.name;
  }
}

TEST(CacheStore, MissExplainsTheNearestEntry) {
  TempDir dir;
  const CacheStore store = store_in(dir);
  int builds = 0;
  ASSERT_TRUE(store.open_or_build(sample_manifest("other_net"), CachePolicy::kReuse, counting_builder(&builds)).is_ok());
  auto first = store.open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds));
  EXPECT_NE(first->explanation.find("no cached engine named 'tinynet'"), std::string::npos) << first->explanation;

  KeyManifest far = sample_manifest();
  far.graph_version = "7";
  far.builder_settings["precision"] = "fp16";
  far.environment.os = "Darwin";
  ASSERT_TRUE(store.open_or_build(far, CachePolicy::kReuse, counting_builder(&builds)).is_ok());

  KeyManifest near = sample_manifest();
  near.builder_settings["precision"] = "fp16";
  near.environment.gpu = GpuProperties{};
  auto miss = store.open_or_build(near, CachePolicy::kReuse, counting_builder(&builds));
  ASSERT_TRUE(miss.is_ok());
  EXPECT_FALSE(miss->cache_hit);
  EXPECT_NE(miss->explanation.find("differs in: builder_settings.precision, environment.gpu (key "),
            std::string::npos)
      << miss->explanation;
}

TEST(CacheStore, EvictsLeastRecentlyUsedAboveTheLimit) {
  TempDir dir;
  int builds = 0;
  const auto manifest_number = [](int i) {
    KeyManifest m = sample_manifest();
    m.graph_version = std::to_string(i);
    return m;
  };
  // Each entry is a little over 10 KB; room for three.
  const CacheStore unlimited = store_in(dir);
  std::vector<std::string> keys;
  for (int i = 0; i < 3; ++i) {
    auto built = unlimited.open_or_build(manifest_number(i), CachePolicy::kReuse, counting_builder(&builds, 10000));
    ASSERT_TRUE(built.is_ok());
    keys.push_back(built->key);
    // Distinct last-use times, oldest first.
    const std::string used = dir / (built->key + ".used");
    const timespec times[2] = {{1000 + i, 0}, {1000 + i, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, used.c_str(), times, 0), 0);
  }
  const uint64_t entry_size = unlimited.info(keys[0])->engine_bytes + unlimited.info(keys[0])->manifest_bytes;
  // Touch entry 0 so that entry 1 becomes the least recently used.
  ASSERT_TRUE(unlimited.open_or_build(manifest_number(0), CachePolicy::kReuse, counting_builder(&builds)).is_ok());

  const CacheStore limited = store_in(dir, 3 * entry_size + entry_size / 2);
  auto fourth = limited.open_or_build(manifest_number(3), CachePolicy::kReuse, counting_builder(&builds, 10000));
  ASSERT_TRUE(fourth.is_ok());
  auto left = limited.list();
  ASSERT_TRUE(left.is_ok());
  std::vector<std::string> remaining;
  for (const auto& entry : *left) remaining.push_back(entry.key);
  EXPECT_EQ(remaining, (std::vector<std::string>{fourth->key, keys[0], keys[2]}));
  EXPECT_FALSE(std::filesystem::exists(dir / (keys[1] + ".engine")));
}

TEST(CacheStore, PruneSkipsLockedEntriesAndClearEmpties) {
  TempDir dir;
  const CacheStore store = store_in(dir);
  int builds = 0;
  auto a = store.open_or_build(sample_manifest("a"), CachePolicy::kReuse, counting_builder(&builds));
  auto b = store.open_or_build(sample_manifest("b"), CachePolicy::kReuse, counting_builder(&builds));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  {
    // Another process building "a" right now holds its lock.
    const int pipe_fds[2] = {0, 0};
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    (void)pipe_fds;
    const pid_t child = ::fork();
    if (child == 0) {
      auto lock = FileLock::acquire(dir / (a->key + ".lock"), FileLock::Wait::kBlock);
      char ready = 1;
      (void)!::write(fds[1], &ready, 1);
      ::pause();
      ::_exit(0);
    }
    char ready = 0;
    ASSERT_EQ(::read(fds[0], &ready, 1), 1);
    auto pruned = store.prune(0);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ::close(fds[0]);
    ::close(fds[1]);
    ASSERT_TRUE(pruned.is_ok());
    EXPECT_EQ(pruned->removed_keys, std::vector<std::string>{b->key});
    EXPECT_EQ(pruned->skipped_keys, std::vector<std::string>{a->key});
  }
  auto cleared = store.clear();
  ASSERT_TRUE(cleared.is_ok());
  EXPECT_EQ(cleared->removed_keys, std::vector<std::string>{a->key});
  EXPECT_EQ(cleared->bytes_left, 0u);
  EXPECT_TRUE(store.list()->empty());
  EXPECT_FALSE(std::filesystem::exists(dir / (a->key + ".lock")));
}

TEST(CacheStore, LockOfADeadProcessDoesNotBlock) {
  TempDir dir;
  const CacheStore store = store_in(dir);
  const std::string key = cache_key(sample_manifest());
  const pid_t child = ::fork();
  if (child == 0) {
    auto lock = FileLock::acquire(dir / (key + ".lock"), FileLock::Wait::kBlock);
    ::raise(SIGKILL);  // dies holding the lock, the lock file stays behind
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_TRUE(std::filesystem::exists(dir / (key + ".lock")));
  int builds = 0;
  auto opened = store.open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds));
  ASSERT_TRUE(opened.is_ok());
  EXPECT_EQ(builds, 1);
}

TEST(CacheStore, UnwritableDirectoryBuildsInMemoryWithAWarning) {
  TempDir dir;
  write_file(dir / "a-file", "not a directory");
  std::vector<std::string> unwritable = {dir / "a-file/cache"};  // below a regular file: ENOTDIR
  if (std::filesystem::is_directory("/proc/self")) unwritable.push_back("/proc/self");  // root cannot create files there
  if (::geteuid() != 0) {
    ASSERT_EQ(::mkdir((dir / "read-only").c_str(), 0555), 0);
    unwritable.push_back(dir / "read-only");
  }
  for (const std::string& directory : unwritable) {
    CacheOptions options;
    options.directory = directory;
    const CacheStore store(options);
    int builds = 0;
    auto opened = store.open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds));
    ASSERT_TRUE(opened.is_ok()) << directory << ": " << opened.status().to_string();
    EXPECT_TRUE(opened->built);
    EXPECT_TRUE(opened->engine_path.empty());
    ASSERT_EQ(opened->warnings.size(), 1u) << directory;
    EXPECT_NE(opened->warnings[0].find("cannot be written"), std::string::npos) << opened->warnings[0];
    EXPECT_EQ(opened->engine.manifest_json(), manifest_to_json(sample_manifest()));

    auto required = store.open_or_build(sample_manifest(), CachePolicy::kRequireCached, counting_builder(&builds));
    EXPECT_FALSE(required.is_ok()) << directory;
  }
}

TEST(CacheStore, ListAndInfo) {
  TempDir dir;
  const CacheStore store = store_in(dir);
  int builds = 0;
  auto built = store.open_or_build(sample_manifest(), CachePolicy::kReuse, counting_builder(&builds));
  ASSERT_TRUE(built.is_ok());
  auto entries = store.list();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].engine_name, "tinynet");
  EXPECT_EQ((*entries)[0].engine_bytes, built->engine.bytes().size);
  EXPECT_GT((*entries)[0].last_used_unix_ns, 0);
  auto info = store.info(built->key.substr(0, 8));
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->key, built->key);
  EXPECT_EQ(info->manifest_json, manifest_to_json(sample_manifest()));
  EXPECT_EQ(store.info("ffffffff").status().code(), StatusCode::kNotFound);
}

TEST(CacheStore, OrphanedManifestIsReportedAndPruned) {
  TempDir dir;
  const CacheStore store = store_in(dir);
  const std::string key = cache_key(sample_manifest());
  write_file(dir / (key + ".manifest.json"), manifest_to_json(sample_manifest()));
  write_file(dir / ("." + key + ".engine.tmp-123-0-abc"), "half an engine");
  auto problems = store.verify();
  ASSERT_EQ(problems->size(), 1u);
  EXPECT_NE((*problems)[0].reason.find("has no engine beside it"), std::string::npos);
  ASSERT_TRUE(store.prune(0).is_ok());
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(CacheLocation, EnvironmentVariablesInOrder) {
  const auto with = [](const char* cache_dir, const char* xdg, const char* home) {
    const auto set = [](const char* name, const char* value) {
      if (value) ::setenv(name, value, 1);
      else ::unsetenv(name);
    };
    set("TENSORACLE_CACHE_DIR", cache_dir);
    set("XDG_CACHE_HOME", xdg);
    set("HOME", home);
    auto directory = default_cache_directory();
    return directory.is_ok() ? *directory : "error: " + directory.status().message();
  };
  const std::string saved_cache = std::getenv("TENSORACLE_CACHE_DIR") ? std::getenv("TENSORACLE_CACHE_DIR") : "";
  const std::string saved_xdg = std::getenv("XDG_CACHE_HOME") ? std::getenv("XDG_CACHE_HOME") : "";
  const std::string saved_home = std::getenv("HOME") ? std::getenv("HOME") : "";
  EXPECT_EQ(with("/c", "/x", "/h"), "/c");
  EXPECT_EQ(with(nullptr, "/x", "/h"), "/x/tensoracle");
  EXPECT_EQ(with("", "/x", "/h"), "error: $TENSORACLE_CACHE_DIR is set but empty; unset it for the default, or give it a value");
  EXPECT_EQ(with(nullptr, "", "/h"), "/h/.cache/tensoracle") << "an empty XDG_CACHE_HOME counts as unset (XDG spec)";
  EXPECT_EQ(with(nullptr, nullptr, "/h"), "/h/.cache/tensoracle");
  with(saved_cache.empty() ? nullptr : saved_cache.c_str(), saved_xdg.empty() ? nullptr : saved_xdg.c_str(),
       saved_home.empty() ? nullptr : saved_home.c_str());
}

// A variable that is set wrongly is an error naming it and its value, never a silent default.
TEST(CacheSettings, AWrongEnvironmentVariableIsAnErrorOfEveryOperation) {
  const char* saved = std::getenv("TENSORACLE_CACHE_MAX_SIZE");
  const std::string saved_value = saved ? saved : "";
  testing::TempDir dir;
  CacheOptions options;
  options.directory = dir.path();
  ::setenv("TENSORACLE_CACHE_MAX_SIZE", "abc", 1);
  const CacheStore store(options);
  EXPECT_EQ(store.settings_status().message(),
            "$TENSORACLE_CACHE_MAX_SIZE: 'abc' is not a size (examples: 4096, 512M, 10G, 1.5GiB)");
  EXPECT_EQ(store.list().status().message(), store.settings_status().message());
  EXPECT_EQ(store.prune(0).status().code(), StatusCode::kInvalidArgument);
  ::setenv("TENSORACLE_CACHE_MAX_SIZE", "", 1);
  EXPECT_NE(CacheStore(options).settings_status().message().find("$TENSORACLE_CACHE_MAX_SIZE is set but empty"),
            std::string::npos);
  options.max_size_bytes = 10;
  EXPECT_TRUE(CacheStore(options).settings_status().is_ok()) << "an explicit size does not read the variable";
  ::setenv("TENSORACLE_CACHE_MAX_SIZE", "512M", 1);
  options.max_size_bytes.reset();
  EXPECT_EQ(CacheStore(options).max_size_bytes(), uint64_t{512} << 20);
  if (saved) ::setenv("TENSORACLE_CACHE_MAX_SIZE", saved_value.c_str(), 1);
  else ::unsetenv("TENSORACLE_CACHE_MAX_SIZE");
}

TEST(CacheSettings, SizesAndPolicies) {
  EXPECT_EQ(*parse_byte_size("4096"), 4096u);
  EXPECT_EQ(*parse_byte_size("512M"), uint64_t{512} << 20);
  EXPECT_EQ(*parse_byte_size("10G"), uint64_t{10} << 30);
  EXPECT_EQ(*parse_byte_size("1.5GiB"), uint64_t{3} << 29);
  EXPECT_EQ(*parse_byte_size("2kb"), 2048u);
  EXPECT_FALSE(parse_byte_size("ten").is_ok());
  EXPECT_FALSE(parse_byte_size("10X").is_ok());
  EXPECT_EQ(*parse_cache_policy("require-cached"), CachePolicy::kRequireCached);
  EXPECT_FALSE(parse_cache_policy("sometimes").is_ok());
}

}  // namespace
}  // namespace tensoracle
