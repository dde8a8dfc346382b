// Where the cache lives, how big it may grow, and the policy names.
#include <cstdlib>

#include "core/errors.h"
#include "tensoracle/cache.h"

namespace tensoracle {
namespace {

std::string environment_variable(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// A variable of tensoracle's own that is set must say something: an empty one is far more
// likely a script's mistake (an unset shell variable expanded) than a wish for the default.
Status refuse_if_set_but_empty(const char* name) {
  const char* value = std::getenv(name);
  if (value != nullptr && *value == '\0')
    return invalid_argument("${} is set but empty; unset it for the default, or give it a value", name);
  return Status::ok();
}

Result<uint64_t> max_size_from_environment() {
  TO_RETURN_IF_ERROR(refuse_if_set_but_empty("TENSORACLE_CACHE_MAX_SIZE"));
  const std::string text = environment_variable("TENSORACLE_CACHE_MAX_SIZE");
  if (text.empty()) return kDefaultCacheMaxSize;
  auto size = parse_byte_size(text);
  if (!size.is_ok()) return size.status().with_context("$TENSORACLE_CACHE_MAX_SIZE");
  return size;
}

}  // namespace

std::string_view cache_policy_name(CachePolicy policy) {
  switch (policy) {
    case CachePolicy::kReuse: return "reuse";
    case CachePolicy::kRebuild: return "rebuild";
    case CachePolicy::kRequireCached: return "require-cached";
  }
  return "unknown";
}

Result<CachePolicy> parse_cache_policy(std::string_view name) {
  for (CachePolicy policy : {CachePolicy::kReuse, CachePolicy::kRebuild, CachePolicy::kRequireCached})
    if (cache_policy_name(policy) == name) return policy;
  return invalid_argument("unknown cache policy '{}' (expected reuse, rebuild or require-cached)", name);
}

Result<std::string> default_cache_directory() {
  TO_RETURN_IF_ERROR(refuse_if_set_but_empty("TENSORACLE_CACHE_DIR"));
  if (std::string dir = environment_variable("TENSORACLE_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string xdg = environment_variable("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/tensoracle";
  if (std::string home = environment_variable("HOME"); !home.empty()) return home + "/.cache/tensoracle";
  return std::string(".tensoracle-cache");  // no HOME at all (some daemons): the working directory
}

CacheStore::CacheStore(CacheOptions options) {
  if (!options.directory.empty()) {
    directory_ = options.directory;
  } else if (auto from_environment = default_cache_directory(); from_environment.is_ok()) {
    directory_ = *from_environment;
  } else {
    settings_ = from_environment.status();
  }
  if (options.max_size_bytes) {
    max_size_bytes_ = *options.max_size_bytes;
  } else if (auto from_environment = max_size_from_environment(); from_environment.is_ok()) {
    max_size_bytes_ = *from_environment;
  } else if (settings_.is_ok()) {
    settings_ = from_environment.status();
  }
  while (directory_.size() > 1 && directory_.back() == '/') directory_.pop_back();
}

}  // namespace tensoracle
