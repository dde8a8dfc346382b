#include "io/pth/archive.h"

#include <zip.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <new>
#include <vector>

#include "core/errors.h"
#include "io/mapped_file.h"
#include "io/pth/zip_offsets.h"

namespace tensoracle::pth {
namespace {

// torch.save's legacy format starts with the pickled magic number 0x1950a86a20f9469cfc6c:
// PROTO 2, LONG1 of 10 bytes (little-endian).
constexpr uint8_t kLegacyPrefix[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

// Deflate cannot expand data more than ~1032:1; a larger declared ratio is a lie (or a bomb).
constexpr uint64_t kMaxDeflateRatio = 1100;

std::string zip_error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

Status diagnose_non_zip(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) return io_error("cannot open '{}': {}", path, std::strerror(errno));
  uint8_t head[sizeof kLegacyPrefix] = {};
  const size_t got = std::fread(head, 1, sizeof head, file);
  std::fclose(file);
  if (got >= 2 && head[0] == 'P' && head[1] == 'K') return Status::ok();
  if (got == sizeof head && std::memcmp(head, kLegacyPrefix, sizeof head) == 0)
    return unsupported(
        "'{}' is a legacy torch.save file (torch < 1.6, or saved with _use_new_zipfile_serialization=False), "
        "which this reader does not accept. Re-save it with torch >= 1.6, where the zip format is the default "
        "(_use_new_zipfile_serialization=True): python -c \"import torch; "
        "torch.save(torch.load('OLD.pth', weights_only=True), 'NEW.pth')\"",
        path);
  if (got >= 1 && head[0] == 0x80)
    return unsupported("'{}' is a bare pickle, not the zip archive torch.save writes; re-save it with torch.save",
                       path);
  return invalid_argument(
      "'{}' is not a PyTorch checkpoint: it is neither a zip archive (torch.save since 1.6) nor a legacy "
      "torch.save stream",
      path);
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

struct TorchArchive::Impl {
  std::string path;
  zip_t* zip = nullptr;
  uint64_t file_size = 0;
  std::shared_ptr<const MappedFile> mapping;
  std::map<std::string, StoredEntry> stored;
  std::string folder;
  bool big_endian = false;
  std::string pickle;

  ~Impl() {
    if (zip) zip_discard(zip);
  }

  struct Entry {
    zip_uint64_t index;
    uint64_t size;
  };

  Result<Entry> locate(const std::string& name) const {
    const zip_int64_t index = zip_name_locate(zip, name.c_str(), ZIP_FL_ENC_RAW);
    if (index < 0) return not_found("'{}': record '{}' is missing from the archive", path, name);
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(zip, static_cast<zip_uint64_t>(index), 0, &stat) != 0)
      return corrupt_data("'{}': record '{}': {}", path, name, zip_strerror(zip));
    constexpr zip_uint64_t kNeeded = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
    if ((stat.valid & kNeeded) != kNeeded) return corrupt_data("'{}': record '{}' has no sizes", path, name);
    if (stat.comp_size > file_size)
      return corrupt_data("'{}': record '{}' claims {} bytes in a {}-byte file", path, name, stat.comp_size, file_size);
    if (stat.comp_method == ZIP_CM_STORE ? stat.size != stat.comp_size
                                         : stat.size / kMaxDeflateRatio > stat.comp_size)
      return corrupt_data("'{}': record '{}' claims {} bytes from {} compressed bytes", path, name, stat.size,
                          stat.comp_size);
    return Entry{static_cast<zip_uint64_t>(index), stat.size};
  }

  Status read_into(const std::string& name, const Entry& entry, uint8_t* out) const {
    zip_file_t* file = zip_fopen_index(zip, entry.index, 0);
    if (!file) return corrupt_data("'{}': cannot read record '{}': {}", path, name, zip_strerror(zip));
    uint64_t done = 0;
    Status status;
    while (done < entry.size) {
      const zip_int64_t got = zip_fread(file, out + done, entry.size - done);
      if (got < 0) {
        status = corrupt_data("'{}': reading record '{}': {}", path, name, zip_file_strerror(file));
        break;
      }
      if (got == 0) {
        status = corrupt_data("'{}': record '{}' ends after {} of its {} bytes", path, name, done, entry.size);
        break;
      }
      done += static_cast<uint64_t>(got);
    }
    zip_fclose(file);
    return status;
  }

  Result<RecordBytes> read(const std::string& name, uint64_t max_size) const {
    TO_ASSIGN_OR_RETURN(Entry entry, locate(name));
    if (entry.size > max_size)
      return corrupt_data("'{}': record '{}' has {} bytes (limit {})", path, name, entry.size, max_size);
    RecordBytes bytes;
    bytes.size = entry.size;
    const auto in_place = stored.find(name);
    if (in_place != stored.end()) {
      if (in_place->second.size != entry.size)
        return corrupt_data("'{}': record '{}' has {} bytes in the central directory but {} per libzip", path, name,
                            in_place->second.size, entry.size);
      bytes.data = mapping->data() + in_place->second.data_offset;
      bytes.mapping = mapping;
      return bytes;
    }
    bytes.owned.reset(new (std::nothrow) uint8_t[entry.size == 0 ? 1 : entry.size]);
    if (!bytes.owned)
      return make_error(StatusCode::kFailedPrecondition, "'{}': cannot allocate {} bytes for record '{}'", path,
                        entry.size, name);
    TO_RETURN_IF_ERROR(read_into(name, entry, bytes.owned.get()));
    bytes.data = bytes.owned.get();
    return bytes;
  }

  // Finds the one "<folder>/data.pkl" entry.
  Status find_folder() {
    const zip_int64_t count = zip_get_num_entries(zip, 0);
    std::vector<std::string> folders;
    bool torchscript = false;
    for (zip_int64_t i = 0; i < count; ++i) {
      const char* raw = zip_get_name(zip, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
      if (!raw) continue;
      const std::string_view name(raw);
      const size_t slash = name.find('/');
      if (slash != std::string_view::npos && name.substr(slash) == "/data.pkl") folders.emplace_back(name.substr(0, slash));
      if (ends_with(name, "/constants.pkl")) torchscript = true;
    }
    if (folders.size() == 1) {
      folder = folders.front();
      return Status::ok();
    }
    if (folders.size() > 1)
      return corrupt_data("'{}' holds {} data.pkl records ('{}/data.pkl', '{}/data.pkl', ...); torch.save writes one",
                          path, folders.size(), folders[0], folders[1]);
    if (torchscript)
      return unsupported("'{}' is a TorchScript archive (torch.jit.save), not a torch.save checkpoint; save the "
                         "module's state_dict() with torch.save instead",
                         path);
    return corrupt_data("'{}' is a zip archive without the '<folder>/data.pkl' record of torch.save", path);
  }

  Status read_byteorder() {
    const std::string name = folder + "/byteorder";
    if (zip_name_locate(zip, name.c_str(), ZIP_FL_ENC_RAW) < 0) return Status::ok();  // torch < 1.9: little
    TO_ASSIGN_OR_RETURN(RecordBytes bytes, read(name, 16));
    const std::string_view order(reinterpret_cast<const char*>(bytes.data), bytes.size);
    if (order == "little") return Status::ok();
    if (order == "big") {
      big_endian = true;
      return Status::ok();
    }
    return corrupt_data("'{}': record '{}' is '{}'; expected 'little' or 'big'", path, name,
                        order.substr(0, 16));
  }
};

TorchArchive::TorchArchive(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TorchArchive::TorchArchive(TorchArchive&&) noexcept = default;
TorchArchive& TorchArchive::operator=(TorchArchive&&) noexcept = default;
TorchArchive::~TorchArchive() = default;

Result<TorchArchive> TorchArchive::open(const std::string& path, const PthLimits& limits) {
  TO_RETURN_IF_ERROR(diagnose_non_zip(path));
  TO_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> mapping, MappedFile::open(path));
  return open_zip(std::move(mapping), limits);
}

Result<TorchArchive> TorchArchive::open(std::shared_ptr<const MappedFile> mapping, const PthLimits& limits) {
  TO_RETURN_IF_ERROR(diagnose_non_zip(mapping->path()));
  return open_zip(std::move(mapping), limits);
}

Result<TorchArchive> TorchArchive::open_zip(std::shared_ptr<const MappedFile> mapping, const PthLimits& limits) {
  const std::string& path = mapping->path();
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  int error = 0;
  // ZIP_CHECKCONS: cross-check the central directory against the local headers (hostile input).
  impl->zip = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (!impl->zip) return corrupt_data("'{}' is not a readable zip archive: {}", path, zip_error_text(error));
  impl->mapping = std::move(mapping);
  impl->file_size = impl->mapping->size();
  auto stored = find_stored_entries(impl->mapping->data(), impl->mapping->size());
  if (!stored.is_ok()) return stored.status().with_context(fmt::format("'{}'", path));
  impl->stored = std::move(*stored);
  TO_RETURN_IF_ERROR(impl->find_folder());
  TO_RETURN_IF_ERROR(impl->read_byteorder());
  TO_ASSIGN_OR_RETURN(RecordBytes pickle, impl->read(impl->folder + "/data.pkl", limits.max_pickle_bytes));
  impl->pickle.assign(reinterpret_cast<const char*>(pickle.data), pickle.size);
  return TorchArchive(std::move(impl));
}

const std::string& TorchArchive::folder() const { return impl_->folder; }
bool TorchArchive::big_endian() const { return impl_->big_endian; }
const std::string& TorchArchive::pickle() const { return impl_->pickle; }
uint64_t TorchArchive::file_size() const { return impl_->file_size; }

Result<uint64_t> TorchArchive::storage_size(const std::string& key) const {
  TO_ASSIGN_OR_RETURN(Impl::Entry entry, impl_->locate(impl_->folder + "/data/" + key));
  return entry.size;
}

Result<RecordBytes> TorchArchive::read_storage(const std::string& key) const {
  return impl_->read(impl_->folder + "/data/" + key, UINT64_MAX);
}

}  // namespace tensoracle::pth
