// write_safetensors: header JSON, padding, tensor bytes; written atomically.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/errors.h"
#include "io/atomic_file.h"
#include "io/safetensors_header.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

// nlohmann's dump is the arbiter: it refuses exactly the strings JSON cannot carry.
bool is_utf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

struct Planned {
  const std::string* name;
  const ArrayView* view;
  uint64_t bytes;
};

// Wider element types first, then by name: with the data region aligned to 8 (or more), every
// tensor then starts at a multiple of its element size while the tensors stay contiguous, as the
// format requires. (The reference writer orders the same way.)
Result<std::vector<Planned>> plan(const NamedArrayViews& tensors) {
  std::vector<Planned> planned;
  planned.reserve(tensors.size());
  for (const auto& [name, view] : tensors) {
    if (!is_utf8(name)) return invalid_argument("tensor name '{}' is not valid UTF-8", name);
    if (name == "__metadata__") return invalid_argument("the tensor name '__metadata__' is reserved by the format");
    auto bytes = view.shape.byte_size(view.dtype);
    if (!bytes.is_ok()) return bytes.status().with_context(fmt::format("tensor '{}'", name));
    if (*bytes > 0 && view.data == nullptr) return invalid_argument("tensor '{}' has no data", name);
    planned.push_back({&name, &view, static_cast<uint64_t>(*bytes)});
  }
  std::stable_sort(planned.begin(), planned.end(), [](const Planned& a, const Planned& b) {
    return data_type_size(a.view->dtype) > data_type_size(b.view->dtype);
  });
  return planned;
}

Status check_metadata(const std::map<std::string, std::string>& metadata) {
  for (const auto& [key, value] : metadata)
    if (!is_utf8(key) || !is_utf8(value)) return invalid_argument("metadata entry '{}' is not valid UTF-8", key);
  return Status::ok();
}

std::string header_json(const std::vector<Planned>& planned, const SafetensorsWriteOptions& options) {
  nlohmann::json header = nlohmann::json::object();
  if (!options.metadata.empty()) header["__metadata__"] = options.metadata;
  uint64_t offset = 0;
  for (const auto& tensor : planned) {
    header[*tensor.name] = {{"dtype", safetensors_dtype_name(tensor.view->dtype)},
                            {"shape", tensor.view->shape.values()},
                            {"data_offsets", {offset, offset + tensor.bytes}}};
    offset += tensor.bytes;
  }
  return header.dump();
}

}  // namespace

Status write_safetensors(const std::string& path, const NamedArrayViews& tensors,
                         const SafetensorsWriteOptions& options) {
  const size_t alignment = options.alignment;
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096)
    return invalid_argument("writing '{}': alignment {} is not a power of two in [1, 4096]", path, alignment);
  auto planned = plan(tensors);
  if (!planned.is_ok()) return planned.status().with_context(fmt::format("writing '{}'", path));
  TO_RETURN_IF_ERROR(check_metadata(options.metadata).with_context(fmt::format("writing '{}'", path)));
  // Spaces after the JSON (allowed by JSON) make the data region start on the alignment.
  std::string header = header_json(*planned, options);
  const size_t padding = (alignment - (8 + header.size()) % alignment) % alignment;
  header.append(padding, ' ');
  if (header.size() > kMaxSafetensorsHeaderSize)
    return invalid_argument("writing '{}': the header would have {} bytes, over the format's limit of {}", path,
                            header.size(), kMaxSafetensorsHeaderSize);

  return write_file_atomically(path, [&](AtomicFileWriter& writer) -> Status {
    uint8_t length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(static_cast<uint64_t>(header.size()) >> (8 * i));
    TO_RETURN_IF_ERROR(writer.write(length, sizeof length));
    TO_RETURN_IF_ERROR(writer.write(header));
    for (const auto& tensor : *planned) TO_RETURN_IF_ERROR(writer.write(tensor.view->data, tensor.bytes));
    return Status::ok();
  });
}

}  // namespace tensoracle
