// .npz reading and writing through libzip: a zip archive of NAME.npy entries.
#include <sys/stat.h>
#include <zip.h>

#include <algorithm>
#include <memory>
#include <string_view>
#include <vector>

#include "core/errors.h"
#include "io/array_read_budget.h"
#include "io/atomic_file.h"
#include "io/npy_format.h"
#include "io/zip_open.h"
#include "tensoracle/npy.h"

namespace tensoracle {
namespace {

struct ZipCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
struct ZipFileCloser {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};
struct ZipSourceFreer {
  void operator()(zip_source_t* source) const { zip_source_free(source); }
};
using ZipPtr = std::unique_ptr<zip_t, ZipCloser>;
using ZipFilePtr = std::unique_ptr<zip_file_t, ZipFileCloser>;
using ZipSourcePtr = std::unique_ptr<zip_source_t, ZipSourceFreer>;

constexpr std::string_view kEntrySuffix = ".npy";

// Reads exactly `size` bytes of an entry; short reads mean the archive lies about the entry.
Status read_exactly(zip_file_t* file, void* out, size_t size, const std::string& entry) {
  auto* bytes = static_cast<uint8_t*>(out);
  while (size > 0) {
    const zip_int64_t n = zip_fread(file, bytes, size);
    if (n < 0) return corrupt_data("entry '{}': {}", entry, zip_file_strerror(file));
    if (n == 0) return corrupt_data("entry '{}' ends early", entry);
    bytes += n;
    size -= static_cast<size_t>(n);
  }
  return Status::ok();
}

Result<HostArray> read_entry(zip_t* archive, zip_uint64_t index, const std::string& entry, const std::string& name,
                             ArrayReadBudget& budget) {
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(archive, index, 0, &stat) != 0 || (stat.valid & ZIP_STAT_SIZE) == 0)
    return corrupt_data("entry '{}': {}", entry, zip_strerror(archive));
  ZipFilePtr file(zip_fopen_index(archive, index, 0));
  if (!file) return corrupt_data("entry '{}': {}", entry, zip_strerror(archive));

  // The entry streams (it may be deflated): read the fixed prefix, then the rest of the header,
  // then the data straight into the array.
  std::vector<uint8_t> header_bytes(std::min<size_t>(kNpyPrefixSize, stat.size));
  TO_RETURN_IF_ERROR(read_exactly(file.get(), header_bytes.data(), header_bytes.size(), entry));
  auto header_size = npy_header_size(header_bytes.data(), header_bytes.size());
  if (!header_size.is_ok()) return header_size.status().with_context(fmt::format("entry '{}'", entry));
  if (*header_size > stat.size)
    return corrupt_data("entry '{}': its npy header ({} bytes) is longer than the entry ({} bytes)", entry,
                        *header_size, stat.size);
  const size_t prefix = header_bytes.size();
  header_bytes.resize(*header_size);
  TO_RETURN_IF_ERROR(read_exactly(file.get(), header_bytes.data() + prefix, *header_size - prefix, entry));
  auto header = parse_npy_header(header_bytes.data(), header_bytes.size());
  if (!header.is_ok()) return header.status().with_context(fmt::format("entry '{}'", entry));
  if (stat.size - *header_size != header->data_size)
    return corrupt_data("entry '{}': shape {} of {} needs {} data bytes, but the entry holds {}", entry,
                        header->shape.to_string(), data_type_name(header->dtype), header->data_size,
                        stat.size - *header_size);
  TO_RETURN_IF_ERROR(budget.admit(name, header->dtype, header->shape, header->data_size));
  TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(header->dtype, header->shape));
  TO_RETURN_IF_ERROR(read_exactly(file.get(), array.data(), header->data_size, entry));
  // Reading on to the end makes libzip check the entry's CRC.
  uint8_t extra;
  const zip_int64_t tail = zip_fread(file.get(), &extra, 1);
  if (tail < 0) return corrupt_data("entry '{}': {}", entry, zip_file_strerror(file.get()));
  if (tail > 0) return corrupt_data("entry '{}' holds more bytes than its size says", entry);
  TO_RETURN_IF_ERROR(normalize_npy_payload(*header, array));
  return array;
}

Status add_entry(zip_t* archive, const std::string& name, const std::string& bytes, bool compress) {
  const std::string entry = name + std::string(kEntrySuffix);
  zip_source_t* source = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
  if (source == nullptr) return io_error("array '{}': {}", name, zip_strerror(archive));
  const zip_int64_t index = zip_file_add(archive, entry.c_str(), source, ZIP_FL_ENC_UTF_8);
  if (index < 0) {
    zip_source_free(source);
    return invalid_argument("array '{}': {}", name, zip_strerror(archive));
  }
  const auto i = static_cast<zip_uint64_t>(index);
  // A fixed timestamp keeps the archive's bytes a function of its contents.
  constexpr time_t kTimestamp = 946684800;  // 2000-01-01
  if (zip_set_file_compression(archive, i, compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) != 0 ||
      zip_file_set_mtime(archive, i, kTimestamp, 0) != 0)
    return io_error("array '{}': {}", name, zip_strerror(archive));
  return Status::ok();
}

// Builds the whole archive in memory, so the file itself can be written atomically.
Result<std::string> build_archive(const NamedArrayViews& arrays, bool compress) {
  // The npy bytes of every entry must stay alive until zip_close has consumed them.
  std::vector<std::string> payloads;
  payloads.reserve(arrays.size());
  zip_error_t error;
  zip_error_init(&error);
  ZipSourcePtr buffer(zip_source_buffer_create(nullptr, 0, 0, &error));
  if (!buffer) return io_error("cannot create an in-memory zip: {}", zip_error_strerror(&error));
  zip_source_keep(buffer.get());  // zip_close would otherwise free it
  ZipPtr archive(zip_open_from_source(buffer.get(), ZIP_TRUNCATE, &error));
  if (!archive) {
    zip_source_free(buffer.get());  // undo the keep
    return io_error("cannot create an in-memory zip: {}", zip_error_strerror(&error));
  }
  for (const auto& [name, view] : arrays) {
    if (name.empty()) return invalid_argument("an array has an empty name");
    auto bytes = view.shape.byte_size(view.dtype);
    if (!bytes.is_ok()) return bytes.status().with_context(fmt::format("array '{}'", name));
    if (*bytes > 0 && view.data == nullptr) return invalid_argument("array '{}' has no data", name);
    std::string payload = format_npy_header(view.dtype, view.shape);
    payload.append(static_cast<const char*>(view.data), static_cast<size_t>(*bytes));
    payloads.push_back(std::move(payload));
    TO_RETURN_IF_ERROR(add_entry(archive.get(), name, payloads.back(), compress));
  }
  if (zip_close(archive.get()) != 0) return io_error("cannot finish the zip: {}", zip_strerror(archive.get()));
  archive.release();  // zip_close freed it

  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_source_stat(buffer.get(), &stat) != 0 || zip_source_open(buffer.get()) != 0)
    return io_error("cannot read the in-memory zip back");
  std::string archive_bytes(stat.size, '\0');
  const zip_int64_t n = zip_source_read(buffer.get(), archive_bytes.data(), archive_bytes.size());
  zip_source_close(buffer.get());
  if (n < 0 || static_cast<zip_uint64_t>(n) != stat.size) return io_error("cannot read the in-memory zip back");
  return archive_bytes;
}

}  // namespace

Result<NamedArrays> read_npz(const std::string& path, const ArrayReadOptions& options) {
  int code = 0;
  ZipPtr archive(open_zip_read_only(path, &code));
  if (!archive) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    const std::string reason = zip_error_strerror(&error);
    zip_error_fini(&error);
    if (code == ZIP_ER_NOENT) return not_found("'{}' does not exist", path);
    if (code == ZIP_ER_OPEN || code == ZIP_ER_READ) return io_error("cannot open '{}': {}", path, reason);
    return corrupt_data("'{}' is not a valid .npz (zip) file: {}", path, reason);
  }
  struct stat file {};
  (void)::stat(path.c_str(), &file);  // libzip has read it: only its size is wanted here
  ArrayReadBudget budget(path, options, static_cast<uint64_t>(file.st_size));
  NamedArrays arrays;
  std::vector<std::string> names;
  const zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    const char* raw_name = zip_get_name(archive.get(), index, 0);
    if (raw_name == nullptr) return corrupt_data("'{}': entry {}: {}", path, i, zip_strerror(archive.get()));
    const std::string entry = raw_name;
    if (entry.size() <= kEntrySuffix.size() ||
        entry.compare(entry.size() - kEntrySuffix.size(), kEntrySuffix.size(), kEntrySuffix) != 0)
      return corrupt_data("'{}': entry '{}' is not an .npy file", path, entry);
    const std::string name = entry.substr(0, entry.size() - kEntrySuffix.size());
    if (std::find(names.begin(), names.end(), name) != names.end())
      return corrupt_data("'{}': the array '{}' appears twice", path, name);
    names.push_back(name);
    if (!budget.wanted(name)) continue;
    auto array = read_entry(archive.get(), index, entry, name, budget);
    if (!array.is_ok()) return array.status().with_context(fmt::format("'{}'", path));
    arrays.emplace(name, std::move(*array));
  }
  TO_RETURN_IF_ERROR(budget.check_complete(names));
  return arrays;
}

Status write_npz(const std::string& path, const NamedArrayViews& arrays, bool compress) {
  auto archive = build_archive(arrays, compress);
  if (!archive.is_ok()) return archive.status().with_context(fmt::format("writing '{}'", path));
  return write_file_atomically(path, archive->data(), archive->size());
}

}  // namespace tensoracle
