#include "io/pth/zip_offsets.h"

#include "core/errors.h"

namespace tensoracle::pth {
namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kDirectoryHeader = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kMethodStore = 0;
constexpr uint16_t kFlagEncrypted = 0x1;

// Little-endian fields at checked offsets of the file.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool has(uint64_t offset, uint64_t length) const { return offset <= size_ && length <= size_ - offset; }
  uint64_t get(uint64_t offset, int width) const {  // caller checked has(offset, width)
    uint64_t value = 0;
    for (int i = 0; i < width; ++i) value |= uint64_t{data_[offset + i]} << (8 * i);
    return value;
  }
  const uint8_t* pointer(uint64_t offset) const { return data_ + offset; }  // caller checked has()
  size_t size() const { return size_; }

 private:
  const uint8_t* data_;
  size_t size_;
};

Status truncated(std::string_view what) { return corrupt_data("zip archive: truncated {}", what); }

struct Directory {
  uint64_t offset = 0;
  uint64_t entries = 0;
};

Result<Directory> find_directory(const Bytes& b) {
  if (b.size() < 22) return truncated("end-of-directory record");
  const uint64_t lowest = b.size() > 22 + 65535 ? b.size() - 22 - 65535 : 0;
  for (uint64_t at = b.size() - 22 + 1; at-- > lowest;) {
    if (b.get(at, 4) != kEndOfDirectory) continue;
    Directory dir{b.get(at + 16, 4), b.get(at + 10, 2)};
    if (at >= 20 && b.get(at - 20, 4) == kZip64Locator) {
      const uint64_t record = b.get(at - 20 + 8, 8);
      if (!b.has(record, 56) || b.get(record, 4) != kZip64EndOfDirectory) return truncated("zip64 end-of-directory record");
      dir.entries = b.get(record + 32, 8);
      dir.offset = b.get(record + 48, 8);
    }
    return dir;
  }
  return corrupt_data("zip archive: no end-of-directory record");
}

}  // namespace

Result<std::map<std::string, StoredEntry>> find_stored_entries(const uint8_t* file, size_t size) {
  const Bytes b(file, size);
  TO_ASSIGN_OR_RETURN(const Directory dir, find_directory(b));
  std::map<std::string, StoredEntry> stored;
  uint64_t at = dir.offset;
  for (uint64_t i = 0; i < dir.entries; ++i) {
    if (!b.has(at, 46) || b.get(at, 4) != kDirectoryHeader) return truncated("central directory");
    const uint64_t flags = b.get(at + 8, 2);
    const uint64_t method = b.get(at + 10, 2);
    uint64_t compressed = b.get(at + 20, 4);
    uint64_t uncompressed = b.get(at + 24, 4);
    const uint64_t name_length = b.get(at + 28, 2);
    const uint64_t extra_length = b.get(at + 30, 2);
    const uint64_t comment_length = b.get(at + 32, 2);
    uint64_t local = b.get(at + 42, 4);
    const uint64_t name_at = at + 46;
    if (!b.has(name_at, name_length + extra_length + comment_length)) return truncated("central directory entry");
    const std::string name(reinterpret_cast<const char*>(b.pointer(name_at)), name_length);
    // Zip64: the 32-bit fields saturated at 0xFFFFFFFF are in the extra field, in this order.
    for (uint64_t extra = name_at + name_length; extra + 4 <= name_at + name_length + extra_length;) {
      const uint64_t id = b.get(extra, 2), length = b.get(extra + 2, 2);
      if (extra + 4 + length > name_at + name_length + extra_length) return truncated("zip64 extra field");
      if (id == kZip64ExtraId) {
        uint64_t field = extra + 4;
        for (uint64_t* value : {&uncompressed, &compressed, &local}) {
          if (*value != 0xFFFFFFFFu) continue;
          if (field + 8 > extra + 4 + length) return truncated("zip64 extra field");
          *value = b.get(field, 8);
          field += 8;
        }
      }
      extra += 4 + length;
    }
    at = name_at + name_length + extra_length + comment_length;
    if (method != kMethodStore || (flags & kFlagEncrypted) || compressed != uncompressed) continue;
    if (!b.has(local, 30) || b.get(local, 4) != kLocalHeader) return truncated("local header of '" + name + "'");
    const uint64_t data = local + 30 + b.get(local + 26, 2) + b.get(local + 28, 2);
    if (!b.has(data, uncompressed))
      return corrupt_data("zip archive: entry '{}' ({} bytes at offset {}) extends past the end of the file", name,
                          uncompressed, data);
    stored[name] = StoredEntry{data, uncompressed};
  }
  return stored;
}

}  // namespace tensoracle::pth
