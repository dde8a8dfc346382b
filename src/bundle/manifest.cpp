// manifest.json: reading (strict schema), writing, and choosing the cubins for a device.
#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <utility>

#include "core/errors.h"
#include "tensoracle/bundle.h"

namespace tensoracle {
namespace {

using Json = nlohmann::ordered_json;  // keeps keys in the documented order when writing

Status check_object(const Json& json, const std::string& path, std::initializer_list<const char*> known) {
  if (!json.is_object()) return corrupt_data("{}: expected a JSON object", path);
  for (const auto& item : json.items()) {
    if (std::none_of(known.begin(), known.end(), [&](const char* key) { return item.key() == key; })) {
      return corrupt_data("{}: unknown key '{}'", path, item.key());
    }
  }
  for (const char* key : known) {
    if (!json.contains(key)) return corrupt_data("{}: missing key '{}'", path, key);
  }
  return Status::ok();
}

Result<std::string> get_string(const Json& json, const std::string& path, const char* key) {
  const Json& value = json.at(key);
  if (!value.is_string()) return corrupt_data("{}.{}: expected a string", path, key);
  return value.get<std::string>();
}

Result<std::vector<std::string>> get_strings(const Json& json, const std::string& path, const char* key) {
  const Json& value = json.at(key);
  if (!value.is_array()) return corrupt_data("{}.{}: expected an array of strings", path, key);
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) return corrupt_data("{}.{}[{}]: expected a string", path, key, i);
    out.push_back(value[i].get<std::string>());
  }
  return out;
}

Status check_sha256(const std::string& path, const std::string& value) {
  const bool ok = value.size() == 64 && std::all_of(value.begin(), value.end(), [](char c) {
                    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                  });
  if (!ok) return corrupt_data("{}: '{}' is not a lower-case hex SHA-256", path, value);
  return Status::ok();
}

Result<BundleSource> parse_source(const Json& json, const std::string& path) {
  TO_RETURN_IF_ERROR(check_object(json, path, {"name", "sha256", "kernels"}));
  BundleSource source;
  TO_ASSIGN_OR_RETURN(source.name, get_string(json, path, "name"));
  TO_ASSIGN_OR_RETURN(source.sha256, get_string(json, path, "sha256"));
  TO_ASSIGN_OR_RETURN(source.kernels, get_strings(json, path, "kernels"));
  if (source.name.empty() || source.name.find('/') != std::string::npos) {
    return corrupt_data("{}.name: '{}' must be a plain file name", path, source.name);
  }
  TO_RETURN_IF_ERROR(check_sha256(path + ".sha256", source.sha256));
  return source;
}

Result<BundleCubin> parse_cubin(const Json& json, const std::string& path) {
  TO_RETURN_IF_ERROR(check_object(json, path, {"arch", "source", "path", "sha256", "size", "kernels"}));
  BundleCubin cubin;
  TO_ASSIGN_OR_RETURN(std::string arch, get_string(json, path, "arch"));
  auto parsed = parse_gpu_arch(arch);
  if (!parsed) return corrupt_data("{}.arch: {}", path, parsed.status().message());
  cubin.arch = *parsed;
  TO_ASSIGN_OR_RETURN(cubin.source, get_string(json, path, "source"));
  TO_ASSIGN_OR_RETURN(cubin.path, get_string(json, path, "path"));
  TO_ASSIGN_OR_RETURN(cubin.sha256, get_string(json, path, "sha256"));
  TO_ASSIGN_OR_RETURN(cubin.kernels, get_strings(json, path, "kernels"));
  TO_RETURN_IF_ERROR(check_sha256(path + ".sha256", cubin.sha256));
  const Json& size = json.at("size");
  if (!size.is_number_unsigned()) return corrupt_data("{}.size: expected a non-negative integer", path);
  cubin.size = size.get<uint64_t>();
  if (cubin.path.empty()) return corrupt_data("{}.path: empty", path);
  return cubin;
}

Result<BundleManifest> parse_manifest(const Json& json) {
  const std::string root = "manifest";
  if (!json.is_object()) return corrupt_data("{}: expected a JSON object", root);
  // The version decides the schema, so read it first: a newer manifest gets a clear message
  // instead of complaints about keys this version does not know.
  const auto format = json.find("format");
  if (format == json.end() || !format->is_string() || format->get<std::string>() != kBundleManifestFormat) {
    return corrupt_data("{}.format: expected \"{}\"", root, kBundleManifestFormat);
  }
  const auto version = json.find("format_version");
  if (version == json.end() || !version->is_number_integer()) {
    return corrupt_data("{}.format_version: expected an integer", root);
  }
  if (version->get<int64_t>() != kBundleManifestVersion) {
    return corrupt_data("{}.format_version {} is not supported (this tensoracle reads version {})", root,
                        version->dump(), kBundleManifestVersion);
  }
  TO_RETURN_IF_ERROR(
      check_object(json, root, {"format", "format_version", "name", "version", "compiler", "sources", "cubins"}));
  BundleManifest manifest;
  TO_ASSIGN_OR_RETURN(manifest.name, get_string(json, root, "name"));
  TO_ASSIGN_OR_RETURN(manifest.version, get_string(json, root, "version"));
  if (manifest.name.empty()) return corrupt_data("{}.name: empty", root);

  const Json& compiler = json.at("compiler");
  TO_RETURN_IF_ERROR(check_object(compiler, "compiler", {"version", "flags"}));
  TO_ASSIGN_OR_RETURN(manifest.compiler.version, get_string(compiler, "compiler", "version"));
  TO_ASSIGN_OR_RETURN(manifest.compiler.flags, get_strings(compiler, "compiler", "flags"));

  const Json& sources = json.at("sources");
  if (!sources.is_array() || sources.empty()) return corrupt_data("{}.sources: expected a non-empty array", root);
  std::set<std::string> source_names;
  for (size_t i = 0; i < sources.size(); ++i) {
    TO_ASSIGN_OR_RETURN(BundleSource source, parse_source(sources[i], fmt::format("sources[{}]", i)));
    if (!source_names.insert(source.name).second) {
      return corrupt_data("sources[{}]: source '{}' is listed twice", i, source.name);
    }
    manifest.sources.push_back(std::move(source));
  }

  const Json& cubins = json.at("cubins");
  if (!cubins.is_array() || cubins.empty()) return corrupt_data("{}.cubins: expected a non-empty array", root);
  std::set<std::pair<std::string, std::string>> pairs;
  std::set<std::string> paths;
  for (size_t i = 0; i < cubins.size(); ++i) {
    const std::string path = fmt::format("cubins[{}]", i);
    TO_ASSIGN_OR_RETURN(BundleCubin cubin, parse_cubin(cubins[i], path));
    if (source_names.count(cubin.source) == 0) {
      return corrupt_data("{}.source: '{}' is not one of the manifest's sources", path, cubin.source);
    }
    if (!pairs.emplace(cubin.source, cubin.arch.name()).second) {
      return corrupt_data("{}: source '{}' has two cubins for {}", path, cubin.source, cubin.arch.name());
    }
    if (!paths.insert(cubin.path).second) return corrupt_data("{}.path: '{}' is used twice", path, cubin.path);
    manifest.cubins.push_back(std::move(cubin));
  }
  return manifest;
}

}  // namespace

Result<BundleManifest> parse_bundle_manifest(std::string_view json_text) {
  const Json json = Json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return corrupt_data("manifest is not valid JSON");
  return parse_manifest(json);
}

std::string bundle_manifest_to_json(const BundleManifest& manifest) {
  Json json;
  json["format"] = kBundleManifestFormat;
  json["format_version"] = manifest.format_version;
  json["name"] = manifest.name;
  json["version"] = manifest.version;
  json["compiler"] = Json{{"version", manifest.compiler.version}, {"flags", manifest.compiler.flags}};
  json["sources"] = Json::array();
  for (const BundleSource& source : manifest.sources) {
    json["sources"].push_back(Json{{"name", source.name}, {"sha256", source.sha256}, {"kernels", source.kernels}});
  }
  json["cubins"] = Json::array();
  for (const BundleCubin& cubin : manifest.cubins) {
    json["cubins"].push_back(Json{{"arch", cubin.arch.name()},
                                  {"source", cubin.source},
                                  {"path", cubin.path},
                                  {"sha256", cubin.sha256},
                                  {"size", cubin.size},
                                  {"kernels", cubin.kernels}});
  }
  return json.dump(2) + "\n";
}

Result<BundleManifest> read_bundle_manifest(const std::string& bundle_dir) {
  const std::string path = bundle_dir + "/" + std::string(kBundleManifestFile);
  std::ifstream file(path, std::ios::binary);
  if (!file) return not_found("cannot open bundle manifest '{}'", path);
  std::ostringstream text;
  text << file.rdbuf();
  auto manifest = parse_bundle_manifest(text.str());
  if (!manifest) return manifest.status().with_context("bundle manifest '" + path + "'");
  return manifest;
}

std::vector<BundleCubin> select_cubins_for_device(const BundleManifest& manifest, int sm) {
  // Prefer the exact architecture; otherwise the newest same-major one not newer than the GPU.
  // 'a' cubins run only on their exact architecture.
  std::optional<GpuArch> best;
  for (const BundleCubin& cubin : manifest.cubins) {
    const bool exact = cubin.arch.sm == sm;
    const bool compatible = cubin.arch.sm / 10 == sm / 10 && cubin.arch.sm < sm && cubin.arch.variant != 'a';
    if (!exact && !compatible) continue;
    const bool best_exact = best.has_value() && best->sm == sm;
    if (!best || (exact && !best_exact) || (!best_exact && !exact && best->sm < cubin.arch.sm) ||
        (exact && best_exact && cubin.arch.variant == '\0' && best->variant != '\0')) {
      best = cubin.arch;
    }
  }
  std::vector<BundleCubin> out;
  if (!best) return out;
  for (const BundleCubin& cubin : manifest.cubins) {
    if (cubin.arch == *best) out.push_back(cubin);
  }
  return out;
}

}  // namespace tensoracle
