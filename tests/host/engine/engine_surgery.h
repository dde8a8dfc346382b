// Rewriting one section of a valid engine and sealing it again, as someone with write access to a
// shared cache could: the checksum then passes, so everything behind it must hold on its own
// (every file tensoracle reads is untrusted). The hostile-engine tests and the structure-aware fuzz target make their files with
// this; none is committed.
//
//   std::string bad = testing::edit_section_json(good, SectionKind::kIoTable,
//                                                [](nlohmann::json& io) { io["tensors"][1]["dtype"] = "fp16"; });
//
// The assembler lays sections out as docs/engine-format.md says (independently of EngineWriter,
// so it can write what EngineWriter refuses to).
#pragma once

#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine_layout.h"
#include "tensoracle/engine_file.h"

namespace tensoracle::testing {

struct RawSection {
  engine_layout::SectionKind kind;
  std::string name;   // blobs only
  std::string bytes;
};

// The sections of a well-formed engine, in table order (empty when `engine` is not one).
inline std::vector<RawSection> split_engine(std::string_view engine) {
  using namespace engine_layout;
  std::vector<RawSection> out;
  if (engine.size() < kHeaderSize + kChecksumSize) return out;
  const auto* data = reinterpret_cast<const uint8_t*>(engine.data());
  const uint32_t count = load_u32(data + kSectionCountOffset);
  const uint64_t table = load_u64(data + kTableOffsetOffset);
  if (table + uint64_t{count} * kSectionEntrySize > engine.size()) return {};
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* entry = data + table + i * kSectionEntrySize;
    const uint64_t name_size = load_u32(entry + 4), name_offset = load_u64(entry + 8);
    const uint64_t offset = load_u64(entry + 16), size = load_u64(entry + 24);
    if (name_offset > engine.size() || name_size > engine.size() - name_offset || offset > engine.size() ||
        size > engine.size() - offset)
      return {};
    out.push_back({static_cast<SectionKind>(load_u32(entry)), std::string(engine.substr(name_offset, name_size)),
                   std::string(engine.substr(offset, size))});
  }
  return out;
}

// An engine file of `sections`: header, table, names, each section at the next multiple of the
// alignment, and the checksum over all of it.
inline std::string assemble_engine(const std::vector<RawSection>& sections) {
  using namespace engine_layout;
  const uint64_t table_end = kHeaderSize + sections.size() * kSectionEntrySize;
  std::string names;
  for (const RawSection& s : sections) names += s.name;
  std::string file(align_up(table_end + names.size(), kEngineAlignment), '\0');
  std::memcpy(file.data(), kMagic, sizeof kMagic);
  auto* header = reinterpret_cast<uint8_t*>(file.data());
  store_u32(header + kVersionOffset, kEngineFormatVersion);
  store_u32(header + kSectionCountOffset, static_cast<uint32_t>(sections.size()));
  store_u64(header + kTableOffsetOffset, kHeaderSize);
  file.replace(table_end, names.size(), names);
  uint64_t name_offset = table_end;
  for (size_t i = 0; i < sections.size(); ++i) {
    const RawSection& s = sections[i];
    const uint64_t offset = file.size();
    file += s.bytes;
    file.resize(align_up(file.size(), kEngineAlignment), '\0');
    auto* entry = reinterpret_cast<uint8_t*>(file.data()) + kHeaderSize + i * kSectionEntrySize;
    store_u32(entry, static_cast<uint32_t>(s.kind));
    store_u32(entry + 4, static_cast<uint32_t>(s.name.size()));
    store_u64(entry + 8, s.name.empty() ? 0 : name_offset);
    store_u64(entry + 16, offset);
    store_u64(entry + 24, s.bytes.size());
    name_offset += s.name.size();
  }
  store_u64(reinterpret_cast<uint8_t*>(file.data()) + kFileSizeOffset, file.size() + kChecksumSize);
  const Checksum checksum = checksum_of(file.data(), file.size());
  file.append(reinterpret_cast<const char*>(checksum.data()), checksum.size());
  return file;
}

// `engine` with the bytes of its (first) section of `kind` replaced by what `edit` makes of them.
inline std::string edit_section(const std::string& engine, engine_layout::SectionKind kind,
                                const std::function<void(std::string&)>& edit) {
  std::vector<RawSection> sections = split_engine(engine);
  for (RawSection& s : sections)
    if (s.kind == kind) {
      edit(s.bytes);
      break;
    }
  return assemble_engine(sections);
}

// The same for a JSON section, edited as a document.
inline std::string edit_section_json(const std::string& engine, engine_layout::SectionKind kind,
                                     const std::function<void(nlohmann::json&)>& edit) {
  return edit_section(engine, kind, [&](std::string& bytes) {
    nlohmann::json doc = nlohmann::json::parse(bytes);
    edit(doc);
    bytes = doc.dump(1);
  });
}

}  // namespace tensoracle::testing
