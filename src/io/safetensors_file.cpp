// SafetensorsFile: a validated, memory-mapped safetensors file.
#include <algorithm>

#include "core/errors.h"
#include "io/mapped_file.h"
#include "io/safetensors_header.h"
#include "io/safetensors_names.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {

struct SafetensorsFile::Impl {
  std::shared_ptr<const MappedFile> file;
  SafetensorsLayout layout;

  const SafetensorsTensorInfo* find(std::string_view name) const {
    const auto& tensors = layout.tensors;
    const auto it = std::lower_bound(layout.by_name.begin(), layout.by_name.end(), name,
                                     [&](uint32_t index, std::string_view key) { return tensors[index].name < key; });
    if (it == layout.by_name.end() || tensors[*it].name != name) return nullptr;
    return &tensors[*it];
  }
};

Result<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  TO_ASSIGN_OR_RETURN(auto file, MappedFile::open(path));
  TO_ASSIGN_OR_RETURN(auto layout, parse_safetensors(file->data(), file->size(), path));
  auto impl = std::make_shared<Impl>();
  impl->file = std::move(file);
  impl->layout = std::move(layout);
  SafetensorsFile result;
  result.impl_ = std::move(impl);
  return result;
}

const std::string& SafetensorsFile::path() const { return impl_->file->path(); }
const std::map<std::string, std::string>& SafetensorsFile::metadata() const { return impl_->layout.metadata; }
const std::vector<SafetensorsTensorInfo>& SafetensorsFile::tensors() const { return impl_->layout.tensors; }
bool SafetensorsFile::contains(const std::string& name) const { return impl_->find(name) != nullptr; }
const SafetensorsTensorInfo* SafetensorsFile::find(std::string_view name) const { return impl_->find(name); }
uint64_t SafetensorsFile::file_size() const { return impl_->file->size(); }

Result<ArrayView> SafetensorsFile::view(const std::string& name) const {
  const SafetensorsTensorInfo* tensor = impl_->find(name);
  if (tensor == nullptr) {
    std::vector<std::string_view> names;
    names.reserve(impl_->layout.tensors.size());
    for (const auto& info : impl_->layout.tensors) names.push_back(info.name);
    const std::string nearby = nearby_names(names, name);
    return not_found("tensor '{}' is not in '{}' ({} tensors{}{})", name, path(), names.size(),
                     nearby.empty() ? "" : "; nearest: ", nearby);
  }
  return ArrayView{tensor->dtype, tensor->shape, impl_->file->data() + impl_->layout.data_offset + tensor->begin};
}

}  // namespace tensoracle
