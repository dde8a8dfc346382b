// write_safetensors: header JSON, padding, tensor bytes; written atomically.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/errors.h"
#include "core/quoted.h"
#include "io/atomic_file.h"
#include "io/safetensors_header.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

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

// The characters JSON writes inside a string as themselves, one byte each: a deferred value made
// of them takes exactly the bytes its reservation took.
bool is_plain_json_text(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; });
}

Status check_metadata(const SafetensorsWriteOptions& options) {
  for (const auto& [key, value] : options.metadata)
    if (!is_utf8(key) || !is_utf8(value)) return invalid_argument("metadata entry '{}' is not valid UTF-8", key);
  for (const auto& [key, deferred] : options.deferred_metadata) {
    if (!is_utf8(key)) return invalid_argument("metadata entry '{}' is not valid UTF-8", key);
    if (options.metadata.count(key) != 0)
      return invalid_argument("metadata entry '{}' is given both now and deferred", key);
    if (deferred.width == 0 || !deferred.resolve)
      return invalid_argument("deferred metadata entry '{}' needs a width of at least 1 and a resolve function", key);
  }
  return Status::ok();
}

std::string header_json(const std::vector<Planned>& planned, const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& tensor : planned) {
    header[*tensor.name] = {{"dtype", safetensors_dtype_name(tensor.view->dtype)},
                            {"shape", tensor.view->shape.values()},
                            {"data_offsets", {offset, offset + tensor.bytes}}};
    offset += tensor.bytes;
  }
  return header.dump();
}

// The metadata with every deferred value reserved as `width` copies of 'a', except the one of
// `distinct` (if any), reserved as 'b's.
std::map<std::string, std::string> reserved_metadata(const SafetensorsWriteOptions& options,
                                                     const std::string* distinct) {
  std::map<std::string, std::string> metadata = options.metadata;
  for (const auto& [key, deferred] : options.deferred_metadata)
    metadata[key] = std::string(deferred.width, distinct != nullptr && key == *distinct ? 'b' : 'a');
  return metadata;
}

struct Reservation {
  const std::string* key;
  const SafetensorsDeferredValue* deferred;
  size_t header_offset;  // of the value's first byte, counted from the start of the JSON
};

// Finds each reservation as the bytes that change when only its filler changes, rather than by
// searching for the filler, which a tensor name or another value may contain too.
std::vector<Reservation> find_reservations(const std::vector<Planned>& planned, const SafetensorsWriteOptions& options,
                                           const std::string& header) {
  std::vector<Reservation> reservations;
  for (const auto& [key, deferred] : options.deferred_metadata) {
    const std::string distinct = header_json(planned, reserved_metadata(options, &key));
    const size_t at = static_cast<size_t>(std::mismatch(header.begin(), header.end(), distinct.begin()).first -
                                          header.begin());
    reservations.push_back({&key, &deferred, at});
  }
  return reservations;
}

Status fill_reservation(AtomicFileWriter& writer, const Reservation& reservation) {
  auto value = reservation.deferred->resolve();
  if (!value.is_ok()) return value.status().with_context(fmt::format("metadata entry '{}'", *reservation.key));
  if (value->size() != reservation.deferred->width || !is_plain_json_text(*value))
    return invalid_argument("metadata entry '{}': the deferred value '{}' is not {} printable ASCII characters "
                            "without '\"' or '\\'",
                            *reservation.key, *value, reservation.deferred->width);
  return writer.overwrite(8 + reservation.header_offset, *value);
}

}  // namespace

Status write_safetensors(const std::string& path, const NamedArrayViews& tensors,
                         const SafetensorsWriteOptions& options) {
  const size_t alignment = options.alignment;
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096)
    return invalid_argument("writing '{}': alignment {} is not a power of two in [1, 4096]", path, alignment);
  auto planned = plan(tensors);
  if (!planned.is_ok()) return planned.status().with_context(fmt::format("writing '{}'", path));
  TO_RETURN_IF_ERROR(check_metadata(options).with_context(fmt::format("writing '{}'", path)));
  std::string header = header_json(*planned, reserved_metadata(options, nullptr));
  const std::vector<Reservation> reservations = find_reservations(*planned, options, header);
  // Spaces after the JSON (allowed by JSON) make the data region start on the alignment.
  const size_t padding = (alignment - (8 + header.size()) % alignment) % alignment;
  header.append(padding, ' ');
  if (header.size() > kMaxSafetensorsHeaderSize)
    return invalid_argument("writing '{}': the header would have {} bytes, over the format's limit of {}", path,
                            header.size(), kMaxSafetensorsHeaderSize);

  // The length and the header go out in one write; each tensor in one more, straight from its view
  // (or copied in the kernel from a file that holds it).
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>(static_cast<uint64_t>(header.size()) >> (8 * i));
  prefix += header;
  uint64_t total = prefix.size();
  for (const auto& tensor : *planned) total += tensor.bytes;
  return write_file_atomically(path, [&](AtomicFileWriter& writer) -> Status {
    if (options.progress) writer.on_progress([&](size_t written) { options.progress(written, total); });
    TO_RETURN_IF_ERROR(writer.write(prefix));
    for (const auto& tensor : *planned) {
      size_t copied = 0;
      if (const auto range = options.file_ranges.find(*tensor.name); range != options.file_ranges.end()) {
        TO_ASSIGN_OR_RETURN(copied, writer.copy_from(range->second.fd, range->second.offset, tensor.bytes));
      }
      const auto* bytes = static_cast<const uint8_t*>(tensor.view->data);
      TO_RETURN_IF_ERROR(writer.write(bytes + copied, tensor.bytes - copied));
    }
    for (const Reservation& reservation : reservations)
      TO_RETURN_IF_ERROR(fill_reservation(writer, reservation).with_context(fmt::format("writing '{}'", path)));
    return Status::ok();
  });
}

}  // namespace tensoracle
