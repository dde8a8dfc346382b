// Where the cache lives, how big it may grow, and the policy names.
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/errors.h"
#include "tensoracle/cache.h"

namespace tensoracle {
namespace {

std::string environment_variable(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
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

std::string default_cache_directory() {
  if (std::string dir = environment_variable("TENSORACLE_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string xdg = environment_variable("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/tensoracle";
  if (std::string home = environment_variable("HOME"); !home.empty()) return home + "/.cache/tensoracle";
  return ".tensoracle-cache";  // no HOME at all (some daemons): the working directory
}

Result<uint64_t> parse_byte_size(std::string_view text) {
  const std::string original(text);
  size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  if (end == 0) return invalid_argument("'{}' is not a size (examples: 4096, 512M, 10G)", original);
  double number = 0;
  try {
    number = std::stod(std::string(text.substr(0, end)));
  } catch (...) {
    return invalid_argument("'{}' is not a size (examples: 4096, 512M, 10G)", original);
  }
  std::string unit(text.substr(end));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();  // "GB", "GIB"
  if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();
  double scale = 1;
  if (unit == "K") scale = 1024.0;
  else if (unit == "M") scale = 1024.0 * 1024;
  else if (unit == "G") scale = 1024.0 * 1024 * 1024;
  else if (unit == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty() && unit != "B")
    return invalid_argument("'{}' has an unknown unit '{}' (use K, M, G or T)", original, text.substr(end));
  const double bytes = number * scale;
  if (!std::isfinite(bytes) || bytes >= 1.8e19) return invalid_argument("size '{}' is too large", original);
  return static_cast<uint64_t>(bytes);
}

CacheStore::CacheStore(CacheOptions options)
    : directory_(options.directory.empty() ? default_cache_directory() : options.directory) {
  if (options.max_size_bytes) {
    max_size_bytes_ = *options.max_size_bytes;
  } else {
    auto from_environment = parse_byte_size(environment_variable("TENSORACLE_CACHE_MAX_SIZE"));
    max_size_bytes_ = from_environment.is_ok() ? *from_environment : kDefaultCacheMaxSize;
  }
  while (directory_.size() > 1 && directory_.back() == '/') directory_.pop_back();
}

}  // namespace tensoracle
