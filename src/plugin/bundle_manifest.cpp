// manifest.json: reading (strict schema), writing, and choosing the cubins for a device.
#include <algorithm>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <utility>

#include "core/errors.h"
#include "core/quoted.h"
#include "io/strict_json.h"
#include "tensoracle/bundle_manifest.h"

namespace tensoracle {
namespace {

using Json = nlohmann::ordered_json;  // keeps keys in the documented order when writing

// An object with exactly the keys `known`.
Status check_object(const JsonField& field, std::initializer_list<std::string_view> known) {
  TO_RETURN_IF_ERROR(field.allow_keys(known));
  for (std::string_view key : known) TO_RETURN_IF_ERROR(field.member(key).status());
  return Status::ok();
}

Result<std::vector<std::string>> get_strings(const JsonField& object, const char* key) {
  TO_ASSIGN_OR_RETURN(const JsonField array, object.member(key));
  TO_ASSIGN_OR_RETURN(const size_t count, array.array_size());
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    TO_ASSIGN_OR_RETURN(std::string item, array.element(i).as_name());
    out.push_back(std::move(item));
  }
  return out;
}

Status check_sha256(const JsonField& field) {
  TO_ASSIGN_OR_RETURN(const std::string value, field.as_string());
  const bool ok = value.size() == 64 && std::all_of(value.begin(), value.end(), [](char c) {
                    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                  });
  if (!ok) return field.error("{} is not a lower-case hex SHA-256", quote(value));
  return Status::ok();
}

Result<BundleSource> parse_source(const JsonField& json) {
  TO_RETURN_IF_ERROR(check_object(json, {"name", "sha256", "kernels"}));
  BundleSource source;
  TO_ASSIGN_OR_RETURN(const JsonField name, json.member("name"));
  TO_ASSIGN_OR_RETURN(source.name, name.as_name());
  TO_ASSIGN_OR_RETURN(const JsonField sha256, json.member("sha256"));
  TO_RETURN_IF_ERROR(check_sha256(sha256));
  TO_ASSIGN_OR_RETURN(source.sha256, sha256.as_string());
  TO_ASSIGN_OR_RETURN(source.kernels, get_strings(json, "kernels"));
  if (source.name.find('/') != std::string::npos) return name.error("{} must be a plain file name", quote(source.name));
  return source;
}

Result<BundleCubin> parse_cubin(const JsonField& json) {
  TO_RETURN_IF_ERROR(check_object(json, {"arch", "source", "path", "sha256", "size", "kernels"}));
  BundleCubin cubin;
  TO_ASSIGN_OR_RETURN(const JsonField arch_field, json.member("arch"));
  TO_ASSIGN_OR_RETURN(const std::string arch, arch_field.as_string());
  auto parsed = parse_gpu_arch(arch);
  if (!parsed) return arch_field.error("{}", parsed.status().message());
  cubin.arch = *parsed;
  TO_ASSIGN_OR_RETURN(cubin.source, json.get_string("source"));
  TO_ASSIGN_OR_RETURN(cubin.path, json.get_name("path"));
  TO_ASSIGN_OR_RETURN(const JsonField sha256, json.member("sha256"));
  TO_RETURN_IF_ERROR(check_sha256(sha256));
  TO_ASSIGN_OR_RETURN(cubin.sha256, sha256.as_string());
  TO_ASSIGN_OR_RETURN(cubin.kernels, get_strings(json, "kernels"));
  TO_ASSIGN_OR_RETURN(cubin.size, json.get_uint("size"));
  return cubin;
}

Result<BundleManifest> parse_manifest(const JsonField& root) {
  TO_RETURN_IF_ERROR(root.require_object());
  // The version decides the schema, so read it first: a newer manifest gets a clear message
  // instead of complaints about keys this version does not know.
  TO_ASSIGN_OR_RETURN(const JsonField format, root.member("format"));
  if (!format.json().is_string() || format.json().get<std::string>() != kBundleManifestFormat)
    return format.error("expected \"{}\", got {}", kBundleManifestFormat, format.shown());
  TO_ASSIGN_OR_RETURN(const JsonField version_field, root.member("format_version"));
  TO_ASSIGN_OR_RETURN(const int64_t version, version_field.as_int());
  if (version != kBundleManifestVersion)
    return version_field.error("format version {} is not supported (this tensoracle reads version {})", version,
                               kBundleManifestVersion);
  TO_RETURN_IF_ERROR(check_object(root, {"format", "format_version", "name", "version", "compiler", "sources", "cubins"}));
  BundleManifest manifest;
  TO_ASSIGN_OR_RETURN(manifest.name, root.get_name("name"));
  TO_ASSIGN_OR_RETURN(manifest.version, root.get_string("version"));

  TO_ASSIGN_OR_RETURN(const JsonField compiler, root.member("compiler"));
  TO_RETURN_IF_ERROR(check_object(compiler, {"version", "flags"}));
  TO_ASSIGN_OR_RETURN(manifest.compiler.version, compiler.get_string("version"));
  TO_ASSIGN_OR_RETURN(manifest.compiler.flags, get_strings(compiler, "flags"));

  TO_ASSIGN_OR_RETURN(const JsonField sources, root.member("sources"));
  TO_ASSIGN_OR_RETURN(const size_t source_count, sources.array_size());
  if (source_count == 0) return sources.error("expected a non-empty array");
  std::set<std::string> source_names;
  for (size_t i = 0; i < source_count; ++i) {
    TO_ASSIGN_OR_RETURN(BundleSource source, parse_source(sources.element(i)));
    if (!source_names.insert(source.name).second)
      return sources.element(i).error("source {} is listed twice", quote(source.name));
    manifest.sources.push_back(std::move(source));
  }

  TO_ASSIGN_OR_RETURN(const JsonField cubins, root.member("cubins"));
  TO_ASSIGN_OR_RETURN(const size_t cubin_count, cubins.array_size());
  if (cubin_count == 0) return cubins.error("expected a non-empty array");
  std::set<std::pair<std::string, std::string>> pairs;
  std::set<std::string> paths;
  for (size_t i = 0; i < cubin_count; ++i) {
    const JsonField entry = cubins.element(i);
    TO_ASSIGN_OR_RETURN(BundleCubin cubin, parse_cubin(entry));
    if (source_names.count(cubin.source) == 0)
      return entry.error("field 'source': {} is not one of the manifest's sources", quote(cubin.source));
    if (!pairs.emplace(cubin.source, cubin.arch.name()).second)
      return entry.error("source {} has two cubins for {}", quote(cubin.source), cubin.arch.name());
    if (!paths.insert(cubin.path).second) return entry.error("field 'path': {} is used twice", quote(cubin.path));
    manifest.cubins.push_back(std::move(cubin));
  }
  return manifest;
}

Result<BundleManifest> parse_manifest_text(std::string_view json_text, const std::string& source) {
  TO_ASSIGN_OR_RETURN(const nlohmann::json doc, parse_strict_json(json_text, source));
  return parse_manifest(JsonField(doc, source));
}

}  // namespace

Result<BundleManifest> parse_bundle_manifest(std::string_view json_text) {
  return parse_manifest_text(json_text, std::string(kBundleManifestFile));
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
  TO_ASSIGN_OR_RETURN(const nlohmann::json doc, read_strict_json_file(path, "bundle manifest"));
  return parse_manifest(JsonField(doc, path));
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
