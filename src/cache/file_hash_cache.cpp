// Sidecar records of file content hashes, trusted only while the file's identity is unchanged.
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/errors.h"
#include "io/atomic_file.h"
#include "io/mapped_file.h"
#include "io/strict_json.h"
#include "tensoracle/cache.h"
#include "tensoracle/hashing.h"

namespace tensoracle {
namespace {

using nlohmann::json;

struct Identity {
  std::string path;  // absolute
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  uint64_t inode = 0;
  uint64_t device = 0;

  json to_json() const {
    return json{{"path", path}, {"size", size},   {"mtime_ns", mtime_ns},
                {"ctime_ns", ctime_ns}, {"inode", inode}, {"device", device}};
  }
};

int64_t to_ns(const timespec& time) { return int64_t{time.tv_sec} * 1000000000 + time.tv_nsec; }

Result<Identity> identity_of(const std::string& path) {
  std::string absolute = path;
  if (char* resolved = ::realpath(path.c_str(), nullptr)) {
    absolute = resolved;
    std::free(resolved);
  }
  struct stat info {};
  if (::stat(absolute.c_str(), &info) != 0) {
    if (errno == ENOENT) return not_found("'{}' does not exist", path);
    return io_error("cannot stat '{}': {}", path, std::strerror(errno));
  }
  return Identity{absolute,
                  static_cast<uint64_t>(info.st_size),
                  to_ns(info.st_mtim),
                  to_ns(info.st_ctim),
                  static_cast<uint64_t>(info.st_ino),
                  static_cast<uint64_t>(info.st_dev)};
}

std::string record_path(const std::string& directory, const Identity& identity, const char* kind) {
  return fmt::format("{}/{}.{}.json", directory, sha256_hex(identity.path).substr(0, 32), kind);
}

// The records' directory itself, not a link to one elsewhere: the cache neither reads nor writes
// outside its directory.
bool is_real_directory(const std::string& directory) {
  struct stat info {};
  return ::lstat(directory.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// The record's "value" when its identity equals `identity`, else null.
json lookup(const std::string& directory, const std::string& path, const Identity& identity) {
  if (!is_real_directory(directory)) return nullptr;
  auto file = MappedFile::open(path, MappedFile::Links::kRefuse);
  if (!file.is_ok()) return nullptr;
  auto record = parse_strict_json(
      std::string_view(reinterpret_cast<const char*>((*file)->data()), (*file)->size()), path);
  if (!record.is_ok() || !record->is_object() || !record->contains("identity") || !record->contains("value"))
    return nullptr;
  if ((*record)["identity"] != identity.to_json()) return nullptr;
  return (*record)["value"];
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Stores a record if the file did not change while it was hashed and is not "racy": modified so
// recently that a second write in the same timestamp tick could follow unnoticed.
void store(const std::string& directory, const std::string& path, const Identity& before, int64_t hash_start_ns,
           const json& value) {
  auto after = identity_of(before.path);
  if (!after.is_ok() || after->to_json() != before.to_json()) return;
  constexpr int64_t kRacyWindowNs = 1000000000;
  if (before.mtime_ns > hash_start_ns - kRacyWindowNs) return;
  if (::mkdir(directory.c_str(), 0777) != 0 && errno != EEXIST) return;
  if (!is_real_directory(directory)) return;
  const std::string text = json{{"identity", before.to_json()}, {"value", value}}.dump(1);
  (void)write_file_atomically(path, text.data(), text.size());  // best effort: a read-only cache skips it
}

}  // namespace

FileHashCache::FileHashCache(std::string directory) : directory_(std::move(directory)) {}

Result<std::string> FileHashCache::file_sha256(const std::string& path) {
  TO_ASSIGN_OR_RETURN(const Identity identity, identity_of(path));
  const std::string record = record_path(directory_, identity, "file");
  if (const json value = lookup(directory_, record, identity); value.is_string()) {
    ++hits_;
    return value.get<std::string>();
  }
  ++misses_;
  const int64_t start = now_ns();
  TO_ASSIGN_OR_RETURN(std::string digest, sha256_file_hex(identity.path));
  store(directory_, record, identity, start, digest);
  return digest;
}

Result<std::map<std::string, std::string>> FileHashCache::tensor_sha256s(const std::string& safetensors_path) {
  TO_ASSIGN_OR_RETURN(const Identity identity, identity_of(safetensors_path));
  const std::string record = record_path(directory_, identity, "tensors");
  if (const json value = lookup(directory_, record, identity); value.is_object()) {
    std::map<std::string, std::string> digests;
    bool complete = true;
    for (const auto& [name, digest] : value.items()) {
      if (!digest.is_string()) complete = false;
      else digests[name] = digest.get<std::string>();
    }
    if (complete) {
      ++hits_;
      return digests;
    }
  }
  ++misses_;
  const int64_t start = now_ns();
  TO_ASSIGN_OR_RETURN(const SafetensorsFile file, SafetensorsFile::open(identity.path));
  std::map<std::string, std::string> digests;
  json value = json::object();
  for (const SafetensorsTensorInfo& tensor : file.tensors()) {
    TO_ASSIGN_OR_RETURN(const ArrayView view, file.view(tensor.name));
    digests[tensor.name] = sha256_hex(view.data, tensor.end - tensor.begin);
    value[tensor.name] = digests[tensor.name];
  }
  store(directory_, record, identity, start, value);
  return digests;
}

}  // namespace tensoracle
