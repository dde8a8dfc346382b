// Weights: one safetensors file, or a sharded checkpoint described by its *.index.json.
#include <algorithm>
#include <string_view>

#include "core/errors.h"
#include "io/mapped_file.h"
#include "io/safetensors_names.h"
#include "io/strict_json.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// Shard names come from a file we do not trust: they must stay inside the index's directory.
Status check_shard_name(const std::string& shard, const std::string& tensor) {
  if (shard.empty()) return corrupt_data("field 'weight_map': tensor '{}' maps to an empty file name", tensor);
  if (shard.front() == '/')
    return corrupt_data("field 'weight_map': tensor '{}' maps to the absolute path '{}' (shards must be relative)",
                        tensor, shard);
  size_t start = 0;
  while (start <= shard.size()) {
    const size_t end = std::min(shard.find('/', start), shard.size());
    if (shard.compare(start, end - start, "..") == 0)
      return corrupt_data("field 'weight_map': tensor '{}' maps to '{}', which leaves the index's directory", tensor,
                          shard);
    start = end + 1;
  }
  return Status::ok();
}

struct Index {
  std::map<std::string, std::string> metadata;
  std::map<std::string, std::string> weight_map;  // tensor -> shard file name
};

Result<Index> parse_index(const std::string& path) {
  TO_ASSIGN_OR_RETURN(auto file, MappedFile::open(path));
  const std::string_view text(reinterpret_cast<const char*>(file->data()), file->size());
  TO_ASSIGN_OR_RETURN(nlohmann::json root, parse_strict_json(text, path));
  if (!root.is_object()) return corrupt_data("'{}': the index must be a JSON object, got {}", path, json_type_name(root));
  Index index;
  // Other top-level keys are ignored: writers add their own (the format fixes only these two).
  if (const auto metadata = root.find("metadata"); metadata != root.end()) {
    if (!metadata->is_object() && !metadata->is_null())
      return corrupt_data("'{}': field 'metadata' must be an object, got {}", path, json_type_name(*metadata));
    if (metadata->is_object())
      for (const auto& [key, value] : metadata->items())
        index.metadata.emplace(key, value.is_string() ? value.get<std::string>() : value.dump());
  }
  const auto weight_map = root.find("weight_map");
  if (weight_map == root.end()) return corrupt_data("'{}': missing field 'weight_map'", path);
  if (!weight_map->is_object())
    return corrupt_data("'{}': field 'weight_map' must be an object, got {}", path, json_type_name(*weight_map));
  for (const auto& [tensor, shard] : weight_map->items()) {
    if (!shard.is_string())
      return corrupt_data("'{}': field 'weight_map': tensor '{}' must map to a file name, got {}", path, tensor,
                          json_type_name(shard));
    const std::string& name = shard.get_ref<const std::string&>();
    TO_RETURN_IF_ERROR(check_shard_name(name, tensor).with_context(fmt::format("'{}'", path)));
    index.weight_map.emplace(tensor, name);
  }
  return index;
}

}  // namespace

struct Weights::Impl {
  struct Entry {
    std::string_view name;  // owned by the shard's tensor info
    uint32_t shard;
    const SafetensorsTensorInfo* info;
  };
  std::vector<SafetensorsFile> shards;
  std::vector<Entry> entries;  // sorted by name
  std::map<std::string, std::string> index_metadata;
  bool sharded = false;

  const Entry* find(std::string_view name) const {
    const auto it = std::lower_bound(entries.begin(), entries.end(), name,
                                     [](const Entry& entry, std::string_view key) { return entry.name < key; });
    return it != entries.end() && it->name == name ? &*it : nullptr;
  }

  Status not_found_error(const std::string& name) const {
    std::vector<std::string_view> names;
    names.reserve(entries.size());
    for (const auto& entry : entries) names.push_back(entry.name);
    const std::string nearby = nearby_names(names, name);
    return not_found("tensor '{}' is not in the weights '{}' ({} tensors{}{})", name,
                     sharded ? "index" : shards.front().path(), entries.size(), nearby.empty() ? "" : "; nearest: ",
                     nearby);
  }
};

Result<Weights> Weights::open(const std::string& path) {
  auto impl = std::make_shared<Impl>();
  if (ends_with(path, ".safetensors")) {
    TO_ASSIGN_OR_RETURN(auto file, SafetensorsFile::open(path));
    impl->shards.push_back(std::move(file));
  } else if (ends_with(path, ".json")) {
    TO_ASSIGN_OR_RETURN(Index index, parse_index(path));
    impl->sharded = true;
    impl->index_metadata = std::move(index.metadata);
    std::map<std::string, uint32_t> shard_numbers;  // file name -> position in impl->shards
    for (const auto& [tensor, shard] : index.weight_map) shard_numbers.emplace(shard, 0);
    const std::string directory = directory_of(path);
    for (auto& [shard, number] : shard_numbers) {
      TO_ASSIGN_OR_RETURN(auto file, SafetensorsFile::open(directory + shard));
      number = static_cast<uint32_t>(impl->shards.size());
      impl->shards.push_back(std::move(file));
    }
    // The index and the shards must agree exactly, or two loaders could see different weights.
    for (const auto& [shard, number] : shard_numbers) {
      for (const auto& tensor : impl->shards[number].tensors()) {
        const auto owner = index.weight_map.find(tensor.name);
        if (owner == index.weight_map.end())
          return corrupt_data("'{}': shard '{}' holds tensor '{}', which the index does not list", path, shard,
                              tensor.name);
        if (owner->second != shard)
          return corrupt_data("'{}': tensor '{}' is in shard '{}', but the index maps it to '{}'", path, tensor.name,
                              shard, owner->second);
      }
    }
    for (const auto& [tensor, shard] : index.weight_map)
      if (!impl->shards[shard_numbers.at(shard)].contains(tensor))
        return corrupt_data("'{}': the index maps tensor '{}' to '{}', which does not contain it", path, tensor, shard);
  } else {
    return invalid_argument("cannot open weights '{}': expected a .safetensors file or a sharded index (.json)", path);
  }
  for (uint32_t shard = 0; shard < impl->shards.size(); ++shard)
    for (const auto& info : impl->shards[shard].tensors()) impl->entries.push_back({info.name, shard, &info});
  std::sort(impl->entries.begin(), impl->entries.end(),
            [](const Impl::Entry& a, const Impl::Entry& b) { return a.name < b.name; });
  Weights weights;
  weights.impl_ = std::move(impl);
  return weights;
}

std::vector<std::string> Weights::names() const {
  std::vector<std::string> names;
  names.reserve(impl_->entries.size());
  for (const auto& entry : impl_->entries) names.emplace_back(entry.name);
  return names;
}

bool Weights::contains(const std::string& name) const { return impl_->find(name) != nullptr; }

Result<ArrayView> Weights::view(const std::string& name) const {
  const Impl::Entry* entry = impl_->find(name);
  if (entry == nullptr) return impl_->not_found_error(name);
  return impl_->shards[entry->shard].view(name);
}

Result<SafetensorsTensorInfo> Weights::info(const std::string& name) const {
  const Impl::Entry* entry = impl_->find(name);
  if (entry == nullptr) return impl_->not_found_error(name);
  return *entry->info;
}

const std::map<std::string, std::string>& Weights::metadata() const {
  return impl_->sharded ? impl_->index_metadata : impl_->shards.front().metadata();
}

std::vector<std::string> Weights::files() const {
  std::vector<std::string> files;
  for (const auto& shard : impl_->shards) files.push_back(shard.path());
  return files;
}

}  // namespace tensoracle
