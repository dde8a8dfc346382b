// Writing an engine file (engine_layout.h): the layout is computed first, then the bytes stream to
// a sink while the checksum accumulates.
#include <algorithm>
#include <memory>

#include "core/errors.h"
#include "engine/engine_layout.h"
#include "engine/environment_json.h"
#include "io/atomic_file.h"
#include "io/strict_json.h"
#include "tensoracle/engine_file.h"

namespace tensoracle {

using namespace engine_layout;

namespace {

struct PlannedSection {
  SectionKind kind;
  std::string_view name;
  const void* data;
  uint64_t size;
  uint64_t name_offset = 0;
  uint64_t offset = 0;
};

// Writes to a sink in order and hashes every byte on the way.
class ChecksummingSink {
 public:
  explicit ChecksummingSink(const ByteSink& sink) : sink_(sink), state_(XXH3_createState()) {
    XXH3_128bits_reset(state_.get());
  }
  Status write(const void* data, size_t size) {
    if (size == 0) return Status::ok();
    XXH3_128bits_update(state_.get(), data, size);
    written_ += size;
    return sink_(data, size);
  }
  Status pad_to(uint64_t offset) {
    static const uint8_t kZeros[kEngineAlignment] = {};
    while (written_ < offset) TO_RETURN_IF_ERROR(write(kZeros, std::min<uint64_t>(offset - written_, sizeof kZeros)));
    return Status::ok();
  }
  Status finish() {
    const Checksum checksum = to_checksum(XXH3_128bits_digest(state_.get()));
    return sink_(checksum.data(), checksum.size());
  }

 private:
  struct FreeState {
    void operator()(XXH3_state_t* state) const { XXH3_freeState(state); }
  };
  const ByteSink& sink_;
  std::unique_ptr<XXH3_state_t, FreeState> state_;
  uint64_t written_ = 0;
};

}  // namespace

void EngineWriter::set_environment(Environment environment, std::vector<PluginFingerprint> plugins) {
  environment_ = std::move(environment);
  plugins_ = std::move(plugins);
}

void EngineWriter::set_plan(std::string bytes) { plan_ = std::make_shared<const std::string>(std::move(bytes)); }

Status EngineWriter::add_blob(std::string name, std::string bytes) {
  auto owned = std::make_shared<const std::string>(std::move(bytes));
  const void* data = owned->data();
  const size_t size = owned->size();
  return add_blob(std::move(name), data, size, std::move(owned));
}

Status EngineWriter::add_blob(std::string name, const void* data, size_t size, std::shared_ptr<const void> owner) {
  if (name.empty()) return invalid_argument("an engine blob needs a name");
  if (name.size() > 4096 || name.find('\0') != std::string::npos)
    return invalid_argument("engine blob name '{}' is too long or contains a NUL byte", name.substr(0, 64));
  for (const Blob& blob : blobs_)
    if (blob.name == name) return invalid_argument("engine blob '{}' is added twice", name);
  if (data == nullptr && size > 0) return invalid_argument("engine blob '{}' has {} bytes but no data", name, size);
  blobs_.push_back({std::move(name), std::move(owner), data, size});
  return Status::ok();
}

Status EngineWriter::check() const {
  if (manifest_json_.empty()) return invalid_argument("the engine has no key manifest (set_manifest_json)");
  TO_ASSIGN_OR_RETURN(const nlohmann::json manifest, parse_strict_json(manifest_json_, "the engine's key manifest"));
  if (!manifest.is_object()) return invalid_argument("the engine's key manifest must be a JSON object");
  if (!environment_) return invalid_argument("the engine has no environment (set_environment)");
  if (!io_table_) return invalid_argument("the engine has no I/O table (set_io_table)");
  Status io = io_table_->validate();
  if (!io.is_ok()) return io.with_context("the engine's I/O table");
  if (!plan_) return invalid_argument("the engine has no plan (set_plan)");
  return Status::ok();
}

Status EngineWriter::write(const ByteSink& sink) const {
  TO_RETURN_IF_ERROR(check());
  const std::string environment =
      nlohmann::json{{"environment", environment_to_json_value(*environment_)}, {"plugins", plugins_to_json_value(plugins_)}}
          .dump(2);
  const std::string io_table = io_table_to_json_value(*io_table_).dump(2);

  std::vector<PlannedSection> sections = {
      {SectionKind::kManifest, {}, manifest_json_.data(), manifest_json_.size()},
      {SectionKind::kEnvironment, {}, environment.data(), environment.size()},
      {SectionKind::kIoTable, {}, io_table.data(), io_table.size()},
      {SectionKind::kPlan, {}, plan_->data(), plan_->size()},
  };
  for (const Blob& blob : blobs_) sections.push_back({SectionKind::kBlob, blob.name, blob.data, blob.size});

  // Layout: header, table, names, then each section aligned.
  uint64_t position = kHeaderSize + sections.size() * kSectionEntrySize;
  for (PlannedSection& s : sections) {
    if (s.kind != SectionKind::kBlob) continue;
    s.name_offset = position;
    position += s.name.size();
  }
  for (PlannedSection& s : sections) {
    s.offset = align_up(position, kEngineAlignment);
    position = s.offset + s.size;
  }
  const uint64_t file_size = position + kChecksumSize;

  std::vector<uint8_t> head(kHeaderSize + sections.size() * kSectionEntrySize, 0);
  std::memcpy(head.data(), kMagic, sizeof kMagic);
  store_u32(head.data() + kVersionOffset, kEngineFormatVersion);
  store_u32(head.data() + kSectionCountOffset, static_cast<uint32_t>(sections.size()));
  store_u64(head.data() + kFileSizeOffset, file_size);
  store_u64(head.data() + kTableOffsetOffset, kHeaderSize);
  for (size_t i = 0; i < sections.size(); ++i) {
    uint8_t* entry = head.data() + kHeaderSize + i * kSectionEntrySize;
    store_u32(entry, static_cast<uint32_t>(sections[i].kind));
    store_u32(entry + 4, static_cast<uint32_t>(sections[i].name.size()));
    store_u64(entry + 8, sections[i].name_offset);
    store_u64(entry + 16, sections[i].offset);
    store_u64(entry + 24, sections[i].size);
  }

  ChecksummingSink out(sink);
  TO_RETURN_IF_ERROR(out.write(head.data(), head.size()));
  for (const PlannedSection& s : sections) TO_RETURN_IF_ERROR(out.write(s.name.data(), s.name.size()));
  // Large blobs go out in pieces so a sink (a file) never needs one huge write.
  constexpr uint64_t kChunk = 8u << 20;
  for (const PlannedSection& s : sections) {
    TO_RETURN_IF_ERROR(out.pad_to(s.offset));
    const auto* bytes = static_cast<const uint8_t*>(s.data);
    for (uint64_t done = 0; done < s.size; done += kChunk)
      TO_RETURN_IF_ERROR(out.write(bytes + done, std::min(kChunk, s.size - done)));
  }
  return out.finish();
}

Result<std::string> EngineWriter::to_bytes() const {
  std::string bytes;
  TO_RETURN_IF_ERROR(write([&](const void* data, size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return Status::ok();
  }));
  return bytes;
}

Status EngineWriter::write_file(const std::string& path) const {
  return write_file_atomically(path, [&](AtomicFileWriter& file) {
    return write([&](const void* data, size_t size) { return file.write(data, size); });
  });
}

}  // namespace tensoracle
