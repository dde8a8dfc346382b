// The engine file: a self-describing container for one built engine.
//
// An engine file holds, in sections: the key manifest it was built for (canonical JSON, cache.h),
// the environment it was built in and the plugins it needs (environment.h), the I/O table (names,
// types, formats, shape ranges per optimization profile), the backend's plan (opaque bytes) and
// named weight blobs. Every section starts at a multiple of kEngineAlignment, so a memory-mapped
// engine hands weight blobs to the backend directly. A trailing XXH3-128 checksum covers all the
// bytes before it. docs/engine-format.md describes the layout byte by byte.
//
// Reading verifies the checksum before any offset in the file is trusted, then bounds-checks every
// offset and length (overflow-checked) and parses the JSON sections strictly. An EngineFile is
// immutable and cheap to copy; its views stay valid while any copy lives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/environment.h"
#include "tensoracle/status.h"
#include "tensoracle/tensor_format.h"
#include "tensoracle/types.h"

namespace tensoracle {

// The engine file format version this build writes and reads. 2: the plugins an engine needs name
// the library that provided them, and plugin layers record which input each output's shape copies.
// 3: I/O formats are the TensorFormat names ("LINEAR", tensor_format.h) and plugin layers record
// their negotiated formats in the plan.
inline constexpr uint32_t kEngineFormatVersion = 3;
// Every section starts at a multiple of this many bytes from the start of the file.
inline constexpr size_t kEngineAlignment = 256;

// Borrowed bytes.
struct ByteView {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::string_view as_string_view() const { return {reinterpret_cast<const char*>(data), size}; }
};

// The shapes one tensor accepts (inputs) or produces (outputs) within one optimization profile.
// A fixed shape has min == opt == max.
struct ShapeRange {
  Dims min;
  Dims opt;
  Dims max;

  static ShapeRange fixed(const Dims& shape) { return {shape, shape, shape}; }
  bool operator==(const ShapeRange& other) const { return min == other.min && opt == other.opt && max == other.max; }
};

// One optimization profile: the shape range of each input, by input name.
using OptimizationProfile = std::map<std::string, ShapeRange>;

// One network input or output as the engine binds it.
struct IoTensor {
  std::string name;
  bool is_input = true;
  DataType dtype = DataType::kFloat32;
  TensorFormat format = TensorFormat::kLinear;  // memory layout (tensor_format.h)
  std::vector<ShapeRange> profiles;  // one range per optimization profile

  bool operator==(const IoTensor& other) const;
};

// Inputs in binding order, then outputs in binding order. Names are unique; every tensor has the
// same number of profiles; within a range all shapes have one rank and 0 <= min <= opt <= max
// (outputs may hold -1 for a dimension only known at run time, in all three shapes alike).
struct IoTable {
  std::vector<IoTensor> tensors;

  Status validate() const;  // the rules above, naming the tensor and profile at fault
  bool operator==(const IoTable& other) const { return tensors == other.tensors; }
};

// A named weight blob inside an engine, as the reader found it.
struct EngineBlobInfo {
  std::string name;
  uint64_t offset = 0;  // from the start of the file; a multiple of kEngineAlignment
  uint64_t size = 0;
};

class EngineFile {
 public:
  // What open() does with a symbolic link at the path: follow it, or refuse it (the cache never
  // reads through a link out of its directory).
  enum class Links { kFollow, kRefuse };
  // Memory-maps and verifies `path` (a regular file). Errors name the file and the reason (not an
  // engine, format version, truncated, checksum mismatch, a section out of bounds, bad JSON in a
  // section, a symbolic link with Links::kRefuse).
  static Result<EngineFile> open(const std::string& path, Links links = Links::kFollow);
  // Verifies engine bytes held in memory; they are copied into an aligned buffer. `label` names
  // the engine in errors.
  static Result<EngineFile> from_bytes(const void* data, size_t size, const std::string& label = "<memory>");

  const std::string& label() const;  // the path, or the label given to from_bytes
  uint32_t format_version() const;
  ByteView bytes() const;            // the whole file
  std::string checksum_hex() const;  // the verified XXH3-128, 32 hex digits

  std::string_view manifest_json() const;  // canonical key manifest text (cache.h)
  const Environment& environment() const;  // where it was built
  const std::vector<PluginFingerprint>& required_plugins() const;
  const IoTable& io_table() const;
  ByteView plan() const;
  const std::vector<EngineBlobInfo>& blobs() const;  // in file order
  // The bytes of the weight blob `name`; aligned to kEngineAlignment in memory.
  Result<ByteView> blob(const std::string& name) const;

 private:
  struct Impl;
  explicit EngineFile(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// Where a writer's bytes go, in order.
using ByteSink = std::function<Status(const void* data, size_t size)>;

// Assembles an engine file. Sections are kept by reference where the caller says so, so writing
// an engine with gigabytes of weights streams them instead of copying.
class EngineWriter {
 public:
  void set_manifest_json(std::string json) { manifest_json_ = std::move(json); }
  void set_environment(Environment environment, std::vector<PluginFingerprint> plugins = {});
  void set_io_table(IoTable table) { io_table_ = std::move(table); }
  void set_plan(std::string bytes);
  // A weight blob copied into the writer.
  Status add_blob(std::string name, std::string bytes);
  // A weight blob borrowed from memory that `owner` keeps alive (null when the caller does).
  Status add_blob(std::string name, const void* data, size_t size, std::shared_ptr<const void> owner);

  std::string_view manifest_json() const { return manifest_json_; }

  // Streams the file to `sink` (header, sections, checksum). Checks the sections first.
  Status write(const ByteSink& sink) const;
  Result<std::string> to_bytes() const;
  // Writes the file atomically (temporary file, fsync, rename): `path` holds the old file or the
  // complete new one.
  Status write_file(const std::string& path) const;

 private:
  struct Blob {
    std::string name;
    std::shared_ptr<const void> owner;
    const void* data = nullptr;
    size_t size = 0;
  };
  Status check() const;

  std::string manifest_json_;
  std::optional<Environment> environment_;
  std::vector<PluginFingerprint> plugins_;
  std::optional<IoTable> io_table_;
  std::shared_ptr<const std::string> plan_;
  std::vector<Blob> blobs_;
};

// check_compatibility (environment.h) for an engine file: "engine '<label>' cannot run here: ...".
Status check_engine_compatibility(const EngineFile& engine, const Environment& current,
                                  const std::vector<PluginFingerprint>& available_plugins);

}  // namespace tensoracle
