// The key manifest: canonical JSON, its key, and field-by-field differences.
#include <algorithm>

#include "core/errors.h"
#include "engine/environment_json.h"
#include "io/strict_json.h"
#include "tensoracle/cache.h"
#include "tensoracle/hashing.h"

namespace tensoracle {
namespace {

using nlohmann::json;

// nlohmann::json keeps object keys in a std::map, so dumping sorts them: the text depends only on
// the values, never on insertion order.
json manifest_to_json_value(const KeyManifest& manifest) {
  json profiles = json::array();
  for (const OptimizationProfile& profile : manifest.profiles) {
    json inputs = json::object();
    for (const auto& [name, range] : profile) inputs[name] = shape_range_to_json_value(range);
    profiles.push_back(std::move(inputs));
  }
  json settings = json::object();
  for (const auto& [name, value] : manifest.builder_settings) settings[name] = value;
  json out{{"format_version", manifest.format_version},
              {"engine_name", manifest.engine_name},
              {"graph_version", manifest.graph_version},
              {"graph_hash", manifest.graph_hash},
              {"weights_hash", manifest.weights_hash},
              {"profiles", std::move(profiles)},
              {"builder_settings", std::move(settings)},
              {"plugins", plugins_to_json_value(manifest.plugins)},
              {"environment", environment_to_json_value(manifest.environment)}};
  if (!manifest.source.empty()) out["source"] = manifest.source;
  return out;
}

void collect_differences(const json& a, const json& b, const std::string& path, std::vector<std::string>& out) {
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      const std::string child = path.empty() ? key : path + "." + key;
      const auto other = b.find(key);
      if (other == b.end())
        out.push_back(child);
      else
        collect_differences(value, *other, child, out);
    }
    for (const auto& [key, value] : b.items())
      if (!a.contains(key)) out.push_back(path.empty() ? key : path + "." + key);
    return;
  }
  // Arrays of objects (profiles, plugins) are compared element by element; arrays of numbers
  // (shapes) are one value.
  const auto holds_objects = [](const json& array) {
    return std::any_of(array.begin(), array.end(), [](const json& item) { return item.is_object(); });
  };
  if (a.is_array() && b.is_array() && a.size() == b.size() && (holds_objects(a) || holds_objects(b))) {
    for (size_t i = 0; i < a.size(); ++i) collect_differences(a[i], b[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  if (a != b) out.push_back(path.empty() ? "(whole manifest)" : path);
}

}  // namespace

std::string manifest_to_json(const KeyManifest& manifest) { return manifest_to_json_value(manifest).dump(2) + "\n"; }

Result<KeyManifest> manifest_from_json(std::string_view json_text, const std::string& source) {
  TO_ASSIGN_OR_RETURN(const json doc, parse_strict_json(json_text, source));
  const JsonField root(doc, source);
  KeyManifest manifest;
  TO_ASSIGN_OR_RETURN(const int64_t version, root.get_int("format_version", 0, UINT32_MAX));
  manifest.format_version = static_cast<uint32_t>(version);
  TO_ASSIGN_OR_RETURN(manifest.engine_name, root.get_name("engine_name"));
  TO_ASSIGN_OR_RETURN(manifest.graph_version, root.get_string("graph_version"));
  TO_ASSIGN_OR_RETURN(manifest.graph_hash, root.get_string("graph_hash"));
  TO_ASSIGN_OR_RETURN(manifest.weights_hash, root.get_string("weights_hash"));
  TO_ASSIGN_OR_RETURN(const JsonField profiles, root.member("profiles"));
  TO_ASSIGN_OR_RETURN(const size_t profile_count, profiles.array_size());
  for (size_t p = 0; p < profile_count; ++p) {
    const JsonField entry = profiles.element(p);
    TO_RETURN_IF_ERROR(entry.require_object());
    OptimizationProfile profile;
    for (const auto& item : entry.json().items()) {
      TO_ASSIGN_OR_RETURN(const JsonField range, entry.member(item.key()));
      TO_ASSIGN_OR_RETURN(profile[item.key()], shape_range_from_json_value(range));
    }
    manifest.profiles.push_back(std::move(profile));
  }
  TO_ASSIGN_OR_RETURN(const JsonField settings, root.member("builder_settings"));
  TO_RETURN_IF_ERROR(settings.require_object());
  for (const auto& item : settings.json().items()) {
    TO_ASSIGN_OR_RETURN(const JsonField value, settings.member(item.key()));
    TO_ASSIGN_OR_RETURN(manifest.builder_settings[item.key()], value.as_string());
  }
  TO_ASSIGN_OR_RETURN(const JsonField plugins, root.member("plugins"));
  TO_ASSIGN_OR_RETURN(manifest.plugins, plugins_from_json_value(plugins));
  TO_ASSIGN_OR_RETURN(const JsonField environment, root.member("environment"));
  TO_ASSIGN_OR_RETURN(manifest.environment, environment_from_json_value(environment));
  if (root.json().contains("source")) {
    TO_ASSIGN_OR_RETURN(const JsonField origin, root.member("source"));
    TO_RETURN_IF_ERROR(origin.require_object());
    for (const auto& item : origin.json().items()) {
      TO_ASSIGN_OR_RETURN(const JsonField value, origin.member(item.key()));
      TO_ASSIGN_OR_RETURN(manifest.source[item.key()], value.as_string());
    }
  }
  return manifest;
}

std::string cache_key(const KeyManifest& manifest) { return cache_key_of_manifest_json(manifest_to_json(manifest)); }

std::string cache_key_of_manifest_json(std::string_view canonical_json) { return sha256_hex(canonical_json); }

Result<std::vector<std::string>> manifest_differences(std::string_view a_json, std::string_view b_json) {
  TO_ASSIGN_OR_RETURN(const json a, parse_strict_json(a_json, "the first manifest"));
  TO_ASSIGN_OR_RETURN(const json b, parse_strict_json(b_json, "the second manifest"));
  std::vector<std::string> out;
  collect_differences(a, b, "", out);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tensoracle
