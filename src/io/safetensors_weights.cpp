// Weights: one safetensors file, or a sharded checkpoint described by its *.index.json.
#include <algorithm>
#include <mutex>
#include <set>
#include <string_view>

#include "core/errors.h"
#include "io/mapped_file.h"
#include "io/safetensors_index.h"
#include "io/safetensors_names.h"
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
  std::string index_path;  // empty for a single file
  // with_unit_placeholders: the names answered with the placeholder (shared by copies).
  struct Placeholders {
    std::mutex mutex;
    std::set<std::string> names;
  };
  std::shared_ptr<Placeholders> placeholders;

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
                     index_path.empty() ? shards.front().path() : index_path, entries.size(),
                     nearby.empty() ? "" : "; nearest: ", nearby);
  }

  Status open_single(const std::string& path) {
    TO_ASSIGN_OR_RETURN(auto file, SafetensorsFile::open(path));
    shards.push_back(std::move(file));
    for (const auto& info : shards[0].tensors()) entries.push_back({info.name, 0, &info});
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    return Status::ok();
  }

  Status open_sharded(const std::string& path);
};

// Opens every shard the index names and checks that the index and the shards agree exactly
// (every listed tensor is in its shard, every shard tensor is listed for that shard), or two
// loaders could see different weights.
Status Weights::Impl::open_sharded(const std::string& path) {
  index_path = path;
  TO_ASSIGN_OR_RETURN(auto file, MappedFile::open(path));
  TO_ASSIGN_OR_RETURN(SafetensorsIndex index,
                      parse_safetensors_index({reinterpret_cast<const char*>(file->data()), file->size()}, path));
  index_metadata = std::move(index.metadata);

  std::map<std::string_view, uint32_t> shard_numbers;  // shard file name -> position in `shards`
  std::vector<uint32_t> shard_of(index.weight_map.size());
  for (size_t i = 0; i < index.weight_map.size(); ++i) {
    const std::string& shard = index.weight_map[i].second;
    shard_of[i] = shard_numbers.emplace(shard, static_cast<uint32_t>(shard_numbers.size())).first->second;
  }
  shards.resize(shard_numbers.size());
  const std::string directory = directory_of(path);
  for (const auto& [shard, number] : shard_numbers) {
    TO_ASSIGN_OR_RETURN(shards[number], SafetensorsFile::open(directory + std::string(shard)));
  }

  std::vector<size_t> listed(shards.size(), 0);
  entries.reserve(index.weight_map.size());
  for (size_t i = 0; i < index.weight_map.size(); ++i) {
    const auto& [tensor, shard] = index.weight_map[i];
    const SafetensorsTensorInfo* info = shards[shard_of[i]].find(tensor);
    if (info == nullptr)
      return corrupt_data("'{}': the index maps tensor '{}' to '{}', which does not contain it", path, tensor, shard);
    entries.push_back({info->name, shard_of[i], info});  // sorted, as the weight map is
    ++listed[shard_of[i]];
  }
  for (const auto& [shard, number] : shard_numbers) {
    if (listed[number] == shards[number].tensors().size()) continue;
    for (const auto& tensor : shards[number].tensors()) {
      const Entry* owner = find(tensor.name);
      if (owner == nullptr)
        return corrupt_data("'{}': shard '{}' holds tensor '{}', which the index does not list", path, shard,
                            tensor.name);
      if (owner->shard != number)
        return corrupt_data("'{}': tensor '{}' is in shard '{}', but the index maps it to '{}'", path, tensor.name,
                            shard, index.weight_map[static_cast<size_t>(owner - entries.data())].second);
    }
  }
  return Status::ok();
}

Result<Weights> Weights::open(const std::string& path) {
  auto impl = std::make_shared<Impl>();
  if (ends_with(path, ".safetensors")) {
    TO_RETURN_IF_ERROR(impl->open_single(path));
  } else if (ends_with(path, ".json")) {
    TO_RETURN_IF_ERROR(impl->open_sharded(path));
  } else {
    return invalid_argument("cannot open weights '{}': expected a .safetensors file or a sharded index (.json)", path);
  }
  Weights weights;
  weights.impl_ = std::move(impl);
  return weights;
}

Weights Weights::none() {
  auto impl = std::make_shared<Impl>();
  impl->index_path = "(no weights file)";
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

namespace {
const float kUnitPlaceholder = 1.0f;
}

Result<ArrayView> Weights::view(const std::string& name) const {
  const Impl::Entry* entry = impl_->find(name);
  if (entry == nullptr && impl_->placeholders) {
    const std::lock_guard<std::mutex> lock(impl_->placeholders->mutex);
    impl_->placeholders->names.insert(name);
    return ArrayView{DataType::kFloat32, Dims{}, &kUnitPlaceholder};
  }
  if (entry == nullptr) return impl_->not_found_error(name);
  return impl_->shards[entry->shard].view(name);
}

Result<SafetensorsTensorInfo> Weights::info(const std::string& name) const {
  const Impl::Entry* entry = impl_->find(name);
  if (entry == nullptr && impl_->placeholders)
    return SafetensorsTensorInfo{name, DataType::kFloat32, Dims{}, 0, sizeof kUnitPlaceholder};
  if (entry == nullptr) return impl_->not_found_error(name);
  return *entry->info;
}

Weights Weights::with_unit_placeholders(const Weights& base) {
  // The copy shares the shards' mappings, so the entries' names and infos stay valid.
  auto impl = std::make_shared<Impl>(*base.impl_);
  impl->placeholders = std::make_shared<Impl::Placeholders>();
  Weights weights;
  weights.impl_ = std::move(impl);
  return weights;
}

std::vector<std::string> Weights::placeholder_names() const {
  if (!impl_->placeholders) return {};
  const std::lock_guard<std::mutex> lock(impl_->placeholders->mutex);
  return {impl_->placeholders->names.begin(), impl_->placeholders->names.end()};
}

const std::map<std::string, std::string>& Weights::metadata() const {
  return !impl_->index_path.empty() ? impl_->index_metadata : impl_->shards.front().metadata();
}

std::vector<std::string> Weights::files() const {
  std::vector<std::string> files;
  for (const auto& shard : impl_->shards) files.push_back(shard.path());
  return files;
}

}  // namespace tensoracle
