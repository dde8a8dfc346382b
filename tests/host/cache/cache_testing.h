// Shared by the cache tests: a temporary directory, a sample key manifest and a counting builder.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "host/engine/sample_engine.h"
#include "host/engine/small_cpu_engine.h"
#include "tensoracle/cache.h"

namespace tensoracle::testing {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/tensoracle-cache-test-XXXXXX";
    const char* made = ::mkdtemp(pattern);
    EXPECT_NE(made, nullptr);
    path_ = made == nullptr ? "" : made;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A store in `directory` with no size limit unless given one.
inline CacheStore store_in(const std::string& directory, uint64_t max_size_bytes = 0) {
  CacheOptions options;
  options.directory = directory;
  options.max_size_bytes = max_size_bytes;
  return CacheStore(options);
}
inline CacheStore store_in(const TempDir& dir, uint64_t max_size_bytes = 0) { return store_in(dir.path(), max_size_bytes); }

inline KeyManifest sample_manifest(const std::string& engine_name = "tinynet") {
  KeyManifest manifest;
  manifest.engine_name = engine_name;
  manifest.graph_version = "1";
  manifest.graph_hash = std::string(64, 'a');
  manifest.weights_hash = std::string(64, 'b');
  manifest.profiles = {{{"image", ShapeRange{{1, 3, 8, 8}, {2, 3, 8, 8}, {4, 3, 8, 8}}},
                        {"mask", ShapeRange::fixed({1, 8, 8})}}};
  manifest.builder_settings = {{"optimization_level", "3"}, {"precision", "fp32"}, {"tf32", "off"}};
  manifest.plugins = {{"deform_conv", "2", std::string(64, 'c'), std::string(64, 'd'), "libdeform_conv.so"}};
  manifest.environment = sample_environment();
  return manifest;
}

// A build function that counts its calls and returns a small valid cpu engine whose weights take
// about `weight_bytes` (the store checks every entry it opens, so the engine must be a real one).
inline EngineBuildFn counting_builder(int* calls, size_t weight_bytes = 300) {
  return [calls, weight_bytes]() -> Result<EngineWriter> {
    ++*calls;
    return small_cpu_engine_writer(weight_bytes);
  };
}

}  // namespace tensoracle::testing
