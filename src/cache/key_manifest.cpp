// The key manifest: canonical JSON, its key, and field-by-field differences.
#include <algorithm>

#include "core/errors.h"
#include "engine/environment_json.h"
#include "engine/json_fields.h"
#include "io/strict_json.h"
#include "tensoracle/cache.h"
#include "tensoracle/hashing.h"

namespace tensoracle {
namespace {

using nlohmann::json;
using namespace json_fields;

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
  return json{{"format_version", manifest.format_version},
              {"engine_name", manifest.engine_name},
              {"graph_version", manifest.graph_version},
              {"graph_hash", manifest.graph_hash},
              {"weights_hash", manifest.weights_hash},
              {"profiles", std::move(profiles)},
              {"builder_settings", std::move(settings)},
              {"plugins", plugins_to_json_value(manifest.plugins)},
              {"environment", environment_to_json_value(manifest.environment)}};
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
  TO_ASSIGN_OR_RETURN(const json root, parse_strict_json(json_text, source));
  KeyManifest manifest;
  TO_ASSIGN_OR_RETURN(const int64_t version, get_int(root, "format_version", source));
  if (version < 0 || version > UINT32_MAX)
    return corrupt_data("{}: field 'format_version' is out of range: {}", source, version);
  manifest.format_version = static_cast<uint32_t>(version);
  TO_ASSIGN_OR_RETURN(manifest.engine_name, get_string(root, "engine_name", source));
  TO_ASSIGN_OR_RETURN(manifest.graph_version, get_string(root, "graph_version", source));
  TO_ASSIGN_OR_RETURN(manifest.graph_hash, get_string(root, "graph_hash", source));
  TO_ASSIGN_OR_RETURN(manifest.weights_hash, get_string(root, "weights_hash", source));
  TO_ASSIGN_OR_RETURN(const json* profiles, member(root, "profiles", source));
  if (!profiles->is_array())
    return corrupt_data("{}: field 'profiles' must be an array, got {}", source, json_type_name(*profiles));
  for (size_t p = 0; p < profiles->size(); ++p) {
    const json& entry = (*profiles)[p];
    if (!entry.is_object()) return corrupt_data("{}: profile {} must be an object", source, p);
    OptimizationProfile profile;
    for (const auto& [name, range] : entry.items()) {
      TO_ASSIGN_OR_RETURN(profile[name],
                          shape_range_from_json_value(range, fmt::format("{}, profile {}, input '{}'", source, p, name)));
    }
    manifest.profiles.push_back(std::move(profile));
  }
  TO_ASSIGN_OR_RETURN(const json* settings, member(root, "builder_settings", source));
  if (!settings->is_object()) return corrupt_data("{}: field 'builder_settings' must be an object", source);
  for (const auto& [name, value] : settings->items()) {
    if (!value.is_string())
      return corrupt_data("{}: builder setting '{}' must be a string, got {}", source, name, json_type_name(value));
    manifest.builder_settings[name] = value.get<std::string>();
  }
  TO_ASSIGN_OR_RETURN(const json* plugins, member(root, "plugins", source));
  TO_ASSIGN_OR_RETURN(manifest.plugins, plugins_from_json_value(*plugins, source));
  TO_ASSIGN_OR_RETURN(const json* environment, member(root, "environment", source));
  TO_ASSIGN_OR_RETURN(manifest.environment, environment_from_json_value(*environment, source + ", environment"));
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
