// Reading and verifying an engine file (engine_layout.h). Order matters: nothing but the fixed-size
// header fields is looked at before the checksum over the whole file matches.
#include <algorithm>
#include <cstdlib>

#include "core/errors.h"
#include "core/quoted.h"
#include "engine/engine_layout.h"
#include "engine/environment_json.h"
#include "io/mapped_file.h"
#include "io/strict_json.h"
#include "tensoracle/engine_file.h"
#include "tensoracle/hashing.h"

namespace tensoracle {

using namespace engine_layout;

namespace engine_detail {

// Everything the reader learns about one engine; EngineFile::Impl is this, once verified.
struct ParsedEngine {
  std::shared_ptr<const void> owner;  // keeps `data` alive (a mapping or an aligned copy)
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::string label;
  uint32_t format_version = 0;
  Checksum checksum{};
  std::string_view manifest_json;
  Environment environment;
  std::vector<PluginFingerprint> plugins;
  IoTable io_table;
  ByteView plan;
  std::vector<EngineBlobInfo> blobs;  // in file order
  std::vector<size_t> blobs_by_name;  // indices into blobs, sorted by name
};

}  // namespace engine_detail

struct EngineFile::Impl : engine_detail::ParsedEngine {};

namespace {

using engine_detail::ParsedEngine;

struct Section {
  uint32_t kind = 0;
  uint64_t name_offset = 0;
  uint64_t name_size = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  std::string name;
};

// The longest blob name accepted; real names are tensor names.
constexpr uint64_t kMaxNameSize = 4096;

std::string section_label(size_t index, const Section& section) {
  if (section.kind == static_cast<uint32_t>(SectionKind::kBlob) && !section.name.empty())
    return fmt::format("section {} (blob {})", index, quote(section.name));
  return fmt::format("section {} ({})", index, section_kind_name(section.kind));
}

Status check_header(const ParsedEngine& e) {
  const uint64_t minimum = kHeaderSize + kChecksumSize;
  if (e.size >= sizeof kMagic && std::memcmp(e.data, kMagic, sizeof kMagic) != 0)
    return corrupt_data("'{}' is not a tensoracle engine file: it starts with {} instead of the magic 'TOENGINE'",
                        e.label, to_hex(e.data, sizeof kMagic));
  if (e.size < minimum)
    return corrupt_data("engine '{}' is truncated: it has {} bytes, less than the {} of an empty engine", e.label,
                        e.size, minimum);
  const uint32_t version = load_u32(e.data + kVersionOffset);
  if (version != kEngineFormatVersion)
    return make_error(StatusCode::kUnsupported,
                      "engine '{}' has format version {}; this build of tensoracle reads version {} (rebuild the "
                      "engine, or use a matching tensoracle)",
                      e.label, version, kEngineFormatVersion);
  const uint64_t declared = load_u64(e.data + kFileSizeOffset);
  if (declared > e.size)
    return corrupt_data("engine '{}' is truncated: expected {} bytes, file has {}", e.label, declared, e.size);
  if (declared < e.size)
    return corrupt_data("engine '{}' has {} bytes, but its header declares {} (extra bytes at the end, or a corrupt "
                        "header)",
                        e.label, e.size, declared);
  return Status::ok();
}

Status check_checksum(ParsedEngine& e) {
  const size_t payload = e.size - kChecksumSize;
  const Checksum computed = checksum_of(e.data, payload);
  if (std::memcmp(computed.data(), e.data + payload, kChecksumSize) != 0)
    return corrupt_data("engine '{}' is corrupt: its checksum does not match its contents (stored XXH3-128 {}, "
                        "computed {})",
                        e.label, to_hex(e.data + payload, kChecksumSize), to_hex(computed.data(), computed.size()));
  e.checksum = computed;
  return Status::ok();
}

// Reads and bounds-checks the section table. The checksum matched, so a failure here means a writer
// bug or a deliberately crafted file; either way nothing out of bounds is ever touched.
Result<std::vector<Section>> read_sections(const ParsedEngine& e) {
  const uint64_t payload_end = e.size - kChecksumSize;
  for (size_t i = 32; i < kHeaderSize; ++i)
    if (e.data[i] != 0) return corrupt_data("engine '{}': reserved header byte {} is not zero", e.label, i);
  const uint64_t count = load_u32(e.data + kSectionCountOffset);
  const uint64_t table = load_u64(e.data + kTableOffsetOffset);
  if (table != kHeaderSize)
    return corrupt_data("engine '{}': the section table starts at byte {}, expected {}", e.label, table, kHeaderSize);
  if (count > kMaxSections)
    return corrupt_data("engine '{}' declares {} sections, more than the limit {}", e.label, count, kMaxSections);
  const uint64_t table_end = table + count * kSectionEntrySize;  // no overflow: both bounded above
  if (table_end > payload_end)
    return corrupt_data("engine '{}': its section table ({} sections) ends at byte {}, beyond the data end {}",
                        e.label, count, table_end, payload_end);

  std::vector<Section> sections(count);
  uint64_t first_data = payload_end;
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* entry = e.data + table + i * kSectionEntrySize;
    Section& s = sections[i];
    s.kind = load_u32(entry);
    s.name_size = load_u32(entry + 4);
    s.name_offset = load_u64(entry + 8);
    s.offset = load_u64(entry + 16);
    s.size = load_u64(entry + 24);
    const std::string label = section_label(i, s);
    if (s.kind < static_cast<uint32_t>(SectionKind::kManifest) || s.kind > static_cast<uint32_t>(SectionKind::kBlob))
      return corrupt_data("engine '{}': {} has unknown kind {}", e.label, label, s.kind);
    if (s.offset % kEngineAlignment != 0)
      return corrupt_data("engine '{}': {} starts at byte {}, not a multiple of {}", e.label, label, s.offset,
                          kEngineAlignment);
    if (s.offset < table_end || s.offset > payload_end || s.size > payload_end - s.offset)
      return corrupt_data("engine '{}': {} spans bytes [{}, {}+{}), outside the data area [{}, {})", e.label, label,
                          s.offset, s.offset, s.size, table_end, payload_end);
    first_data = std::min(first_data, s.offset);
  }
  // Names lie between the table and the first section.
  for (size_t i = 0; i < count; ++i) {
    Section& s = sections[i];
    const bool is_blob = s.kind == static_cast<uint32_t>(SectionKind::kBlob);
    if (!is_blob && (s.name_size != 0 || s.name_offset != 0))
      return corrupt_data("engine '{}': {} has a name, but only blobs are named", e.label, section_label(i, s));
    if (!is_blob) continue;
    if (s.name_size == 0 || s.name_size > kMaxNameSize)
      return corrupt_data("engine '{}': {} has a name of {} bytes (expected 1 to {})", e.label, section_label(i, s),
                          s.name_size, kMaxNameSize);
    if (s.name_offset < table_end || s.name_offset > first_data || s.name_size > first_data - s.name_offset)
      return corrupt_data("engine '{}': the name of {} spans bytes [{}, {}+{}), outside the name area [{}, {})",
                          e.label, section_label(i, s), s.name_offset, s.name_offset, s.name_size, table_end,
                          first_data);
    s.name.assign(reinterpret_cast<const char*>(e.data + s.name_offset), s.name_size);
    if (s.name.find('\0') != std::string::npos)
      return corrupt_data("engine '{}': the name of {} contains a NUL byte", e.label, section_label(i, s));
  }
  // No two sections share a byte.
  std::vector<const Section*> by_offset;
  for (const Section& s : sections) by_offset.push_back(&s);
  std::sort(by_offset.begin(), by_offset.end(), [](const Section* a, const Section* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i - 1]->offset + by_offset[i - 1]->size > by_offset[i]->offset)
      return corrupt_data("engine '{}': sections at bytes {} and {} overlap", e.label, by_offset[i - 1]->offset,
                          by_offset[i]->offset);
  return sections;
}

Result<nlohmann::json> parse_section_json(const ParsedEngine& e, const Section& s, const char* what) {
  const std::string_view text(reinterpret_cast<const char*>(e.data + s.offset), s.size);
  const std::string source = fmt::format("engine '{}', {}", e.label, what);
  TO_ASSIGN_OR_RETURN(nlohmann::json value, parse_strict_json(text, source));
  TO_RETURN_IF_ERROR(JsonField(value, source).require_object());
  return value;
}

Status read_contents(ParsedEngine& e, const std::vector<Section>& sections) {
  const Section* single[5] = {};
  for (size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    if (s.kind == static_cast<uint32_t>(SectionKind::kBlob)) {
      e.blobs.push_back({s.name, s.offset, s.size});
      continue;
    }
    if (single[s.kind] != nullptr)
      return corrupt_data("engine '{}' has two {} sections", e.label, section_kind_name(s.kind));
    single[s.kind] = &s;
  }
  for (uint32_t kind = 1; kind < 5; ++kind)
    if (single[kind] == nullptr) return corrupt_data("engine '{}' has no {} section", e.label, section_kind_name(kind));
  // Blobs in file order, and an index by name: lookups stay logarithmic in engines of many blobs.
  std::sort(e.blobs.begin(), e.blobs.end(), [](const auto& a, const auto& b) { return a.offset < b.offset; });
  e.blobs_by_name.resize(e.blobs.size());
  for (size_t i = 0; i < e.blobs.size(); ++i) e.blobs_by_name[i] = i;
  std::sort(e.blobs_by_name.begin(), e.blobs_by_name.end(),
            [&](size_t a, size_t b) { return e.blobs[a].name < e.blobs[b].name; });
  for (size_t i = 1; i < e.blobs_by_name.size(); ++i)
    if (e.blobs[e.blobs_by_name[i]].name == e.blobs[e.blobs_by_name[i - 1]].name)
      return corrupt_data("engine '{}': two blobs are named {}", e.label, quote(e.blobs[e.blobs_by_name[i]].name));

  const Section& manifest = *single[static_cast<uint32_t>(SectionKind::kManifest)];
  TO_RETURN_IF_ERROR(parse_section_json(e, manifest, "key manifest").status());
  e.manifest_json = std::string_view(reinterpret_cast<const char*>(e.data + manifest.offset), manifest.size);

  const std::string environment_source = fmt::format("engine '{}', environment", e.label);
  TO_ASSIGN_OR_RETURN(const nlohmann::json environment,
                      parse_section_json(e, *single[static_cast<uint32_t>(SectionKind::kEnvironment)], "environment"));
  const JsonField environment_root(environment, environment_source);
  TO_RETURN_IF_ERROR(environment_root.allow_keys({"environment", "plugins"}));
  TO_ASSIGN_OR_RETURN(const JsonField built_in, environment_root.member("environment"));
  TO_ASSIGN_OR_RETURN(e.environment, environment_from_json_value(built_in));
  TO_ASSIGN_OR_RETURN(const JsonField plugins, environment_root.member("plugins"));
  TO_ASSIGN_OR_RETURN(e.plugins, plugins_from_json_value(plugins));

  TO_ASSIGN_OR_RETURN(const nlohmann::json io,
                      parse_section_json(e, *single[static_cast<uint32_t>(SectionKind::kIoTable)], "I/O table"));
  TO_ASSIGN_OR_RETURN(e.io_table, io_table_from_json_value(JsonField(io, fmt::format("engine '{}', I/O table", e.label))));

  const Section& plan = *single[static_cast<uint32_t>(SectionKind::kPlan)];
  e.plan = ByteView{e.data + plan.offset, plan.size};
  return Status::ok();
}

Result<ParsedEngine> verify(ParsedEngine e) {
  TO_RETURN_IF_ERROR(check_header(e));
  TO_RETURN_IF_ERROR(check_checksum(e));
  e.format_version = load_u32(e.data + kVersionOffset);
  TO_ASSIGN_OR_RETURN(const std::vector<Section> sections, read_sections(e));
  TO_RETURN_IF_ERROR(read_contents(e, sections));
  return e;
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

}  // namespace

const char* engine_layout::section_kind_name(uint32_t kind) {
  switch (static_cast<SectionKind>(kind)) {
    case SectionKind::kManifest: return "key manifest";
    case SectionKind::kEnvironment: return "environment";
    case SectionKind::kIoTable: return "I/O table";
    case SectionKind::kPlan: return "plan";
    case SectionKind::kBlob: return "blob";
  }
  return "unknown";
}

Result<EngineFile> EngineFile::open(const std::string& path, Links links) {
  TO_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file,
                      MappedFile::open(path, links == Links::kRefuse ? MappedFile::Links::kRefuse : MappedFile::Links::kFollow));
  ParsedEngine impl;
  impl.data = file->data();
  impl.size = file->size();
  impl.owner = std::move(file);
  impl.label = path;
  TO_ASSIGN_OR_RETURN(ParsedEngine verified, verify(std::move(impl)));
  return EngineFile(std::make_shared<const Impl>(Impl{std::move(verified)}));
}

Result<EngineFile> EngineFile::from_bytes(const void* data, size_t size, const std::string& label) {
  ParsedEngine impl;
  impl.label = label;
  if (size > 0) {
    // Blobs are aligned relative to the file start; an aligned copy makes them aligned in memory.
    void* copy = std::aligned_alloc(kEngineAlignment, align_up(size, kEngineAlignment));
    if (copy == nullptr) return io_error("cannot allocate {} bytes to hold engine '{}'", size, label);
    std::memcpy(copy, data, size);
    impl.owner = std::shared_ptr<void>(copy, FreeDeleter());
    impl.data = static_cast<const uint8_t*>(copy);
    impl.size = size;
  }
  TO_ASSIGN_OR_RETURN(ParsedEngine verified, verify(std::move(impl)));
  return EngineFile(std::make_shared<const Impl>(Impl{std::move(verified)}));
}

const std::string& EngineFile::label() const { return impl_->label; }
uint32_t EngineFile::format_version() const { return impl_->format_version; }
ByteView EngineFile::bytes() const { return {impl_->data, impl_->size}; }
std::string EngineFile::checksum_hex() const { return to_hex(impl_->checksum.data(), impl_->checksum.size()); }
std::string_view EngineFile::manifest_json() const { return impl_->manifest_json; }
const Environment& EngineFile::environment() const { return impl_->environment; }
const std::vector<PluginFingerprint>& EngineFile::required_plugins() const { return impl_->plugins; }
const IoTable& EngineFile::io_table() const { return impl_->io_table; }
ByteView EngineFile::plan() const { return impl_->plan; }
const std::vector<EngineBlobInfo>& EngineFile::blobs() const { return impl_->blobs; }

Result<ByteView> EngineFile::blob(const std::string& name) const {
  const auto& blobs = impl_->blobs;
  const auto it = std::lower_bound(impl_->blobs_by_name.begin(), impl_->blobs_by_name.end(), name,
                                   [&](size_t index, const std::string& key) { return blobs[index].name < key; });
  if (it != impl_->blobs_by_name.end() && blobs[*it].name == name)
    return ByteView{impl_->data + blobs[*it].offset, blobs[*it].size};
  std::string names;
  for (size_t i = 0; i < impl_->blobs.size() && i < 8; ++i) names += (i ? ", " : "") + quote(impl_->blobs[i].name);
  return not_found("engine '{}' has no blob named {} (it has {} blobs{}{})", impl_->label, quote(name),
                   impl_->blobs.size(), names.empty() ? "" : ": ", names);
}

}  // namespace tensoracle
