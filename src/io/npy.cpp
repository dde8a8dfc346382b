// .npy reading and writing.
#include <cstring>

#include "core/errors.h"
#include "io/array_read_budget.h"
#include "io/atomic_file.h"
#include "io/mapped_file.h"
#include "io/npy_format.h"
#include "tensoracle/npy.h"

namespace tensoracle {

namespace {

std::string stem_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t start = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = path.find_last_of('.');
  return path.substr(start, dot == std::string::npos || dot < start ? std::string::npos : dot - start);
}

// `budget` (optional) admits the array under `name` before its storage is allocated.
Result<HostArray> parse_npy_bytes(const void* data, size_t size, const std::string& source, const std::string& name,
                                  ArrayReadBudget* budget) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  auto header = parse_npy_header(bytes, size);
  if (!header.is_ok()) return header.status().with_context(fmt::format("'{}'", source));
  const size_t available = size - header->header_size;
  if (available != header->data_size)
    return corrupt_data("'{}': shape {} of {} needs {} data bytes, but {} follow the header", source,
                        header->shape.to_string(), data_type_name(header->dtype), header->data_size, available);
  if (budget != nullptr)
    TO_RETURN_IF_ERROR(budget->admit(name, header->dtype, header->shape, header->data_size)
                           .with_context(fmt::format("'{}'", source)));
  TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(header->dtype, header->shape));
  if (header->data_size > 0) std::memcpy(array.data(), bytes + header->header_size, header->data_size);
  TO_RETURN_IF_ERROR(normalize_npy_payload(*header, array));
  return array;
}

}  // namespace

Result<HostArray> parse_npy(const void* data, size_t size, const std::string& source) {
  return parse_npy_bytes(data, size, source, source, nullptr);
}

Result<HostArray> read_npy(const std::string& path, const ArrayReadOptions& options) {
  TO_ASSIGN_OR_RETURN(auto file, MappedFile::open(path));
  ArrayReadBudget budget(path, options, file->size());
  return parse_npy_bytes(file->data(), file->size(), path, stem_of(path), &budget);
}

Status write_npy(const std::string& path, const ArrayView& array) {
  auto bytes = array.shape.byte_size(array.dtype);
  if (!bytes.is_ok()) return bytes.status().with_context(fmt::format("writing '{}'", path));
  if (*bytes > 0 && array.data == nullptr) return invalid_argument("writing '{}': the array has no data", path);
  const std::string header = format_npy_header(array.dtype, array.shape);
  return write_file_atomically(path, [&](AtomicFileWriter& writer) -> Status {
    TO_RETURN_IF_ERROR(writer.write(header));
    return writer.write(array.data, static_cast<size_t>(*bytes));
  });
}

}  // namespace tensoracle
