// open_engine: the engine for a build declaration, through the cache. Implemented by the cache
// (src/cache/open_engine.cpp) on top of the builder (build.h) and the store (cache.h).
//
//   EngineBuild build = ...;  // build.h
//   TO_ASSIGN_OR_RETURN(OpenedEngine opened, open_engine(build, CachePolicy::kReuse));
//   if (!opened.cache_hit) std::printf("built in %.1f s: %s\n", opened.build_seconds, opened.explanation.c_str());
//   TO_ASSIGN_OR_RETURN(Execution exec, opened.engine.create_execution());
//
// engine.h includes this header, so a caller that includes engine.h has open_engine too.
#pragma once

#include <string>
#include <vector>

#include "tensoracle/build.h"
#include "tensoracle/cache.h"
#include "tensoracle/engine.h"
#include "tensoracle/status.h"

namespace tensoracle {

// An engine opened through the cache, with what the cache did.
struct OpenedEngine {
  Engine engine;
  std::string key;
  std::string engine_path;  // empty when the engine lives only in memory
  bool cache_hit = false;
  bool built = false;
  double build_seconds = 0;
  std::string explanation;  // why a hit or a miss (a miss names the nearest entry's differences)
  std::vector<std::string> warnings;
  std::vector<std::string> build_log;  // PreparedBuild::log: what the builder did to the network
};

// Opens the engine for `build` through the cache store under `policy`: defines the network and
// computes the key, reuses a valid cached engine or builds one (as the policy allows), then checks
// the engine's I/O table against the build's declaration (names, order, types, shape ranges),
// naming every mismatching tensor.
Result<OpenedEngine> open_engine(const EngineBuild& build, CachePolicy policy = CachePolicy::kReuse,
                                 const CacheOptions& cache_options = {});

// Every difference between the I/O an engine has and the I/O a caller declared, one sentence each
// ("input 'image': type fp16, declared fp32"); empty when they agree.
std::vector<std::string> io_mismatches(const IoTable& engine, const IoTable& declared);

}  // namespace tensoracle
