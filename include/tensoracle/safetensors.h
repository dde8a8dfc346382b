// safetensors files: reading (memory-mapped, zero-copy, strictly validated; single files and
// sharded checkpoints with their *.index.json) and writing.
//
// Format: 8-byte little-endian header length N, N bytes of UTF-8 JSON
//   {"__metadata__": {str: str}, NAME: {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}}
// then the data region; offsets are relative to the start of the data region.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tensoracle/array.h"
#include "tensoracle/status.h"
#include "tensoracle/types.h"

namespace tensoracle {

// The format's dtype names ("F32", "BF16", "F8_E4M3", ...) <-> DataType.
Result<DataType> safetensors_dtype_from_name(std::string_view name);
std::string_view safetensors_dtype_name(DataType type);

struct SafetensorsTensorInfo {
  std::string name;
  DataType dtype;
  Dims shape;
  uint64_t begin = 0;  // byte offsets into the data region
  uint64_t end = 0;
};

// One memory-mapped safetensors file. Opening validates everything (header length vs file size,
// JSON structure, dtype names, shapes, offsets in range, sizes == elements * itemsize, tensors
// tiling the data region without overlap or gap, no duplicate names, no overflow) and reports the
// first problem naming the file, the tensor and the field (rules: docs/file-formats.md). Views
// returned stay valid while the file object (or a copy) lives; they are aligned to the element
// size only if the writer aligned them (tensoracle's and the reference writer do).
class SafetensorsFile {
 public:
  static Result<SafetensorsFile> open(const std::string& path);

  const std::string& path() const;
  const std::map<std::string, std::string>& metadata() const;
  // Tensors in file order (by begin offset).
  const std::vector<SafetensorsTensorInfo>& tensors() const;
  bool contains(const std::string& name) const;
  // The tensor's entry, or nullptr; valid while the file object (or a copy) lives.
  const SafetensorsTensorInfo* find(std::string_view name) const;
  // Zero-copy view into the mapping. Not-found errors list a few nearby names.
  Result<ArrayView> view(const std::string& name) const;
  uint64_t file_size() const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

// A set of weights: one safetensors file, or a sharded checkpoint through its index JSON
// ({"metadata": {...}, "weight_map": {tensor: shard file}}), shards resolved relative to the index.
// Every shard is validated on open; the index must agree with the shards (each mapped tensor is in
// its shard; no tensor in two shards).
class Weights {
 public:
  static Result<Weights> open(const std::string& path);  // *.safetensors or *.index.json
  // No tensors: the weights of a graph whose constants are its own (an imported ONNX model).
  static Weights none();

  std::vector<std::string> names() const;  // sorted
  bool contains(const std::string& name) const;
  Result<ArrayView> view(const std::string& name) const;
  Result<SafetensorsTensorInfo> info(const std::string& name) const;
  // Metadata of the file, or of the index for a sharded checkpoint (non-string values of the
  // index's "metadata" as their JSON text, e.g. "total_size" -> "16060522496").
  const std::map<std::string, std::string>& metadata() const;
  // The files backing these weights (one, or every shard).
  std::vector<std::string> files() const;

  // `base`, where every tensor `base` lacks reads as an fp32 scalar 1.0 and is recorded: how
  // calibration (calibrate.h) defines a Q/DQ graph whose scales do not exist yet. names() and
  // contains() still describe `base` only.
  static Weights with_unit_placeholders(const Weights& base);
  // The names answered with a placeholder so far, sorted (empty for ordinary weights).
  std::vector<std::string> placeholder_names() const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

// A metadata value known only once the tensor data is on its way to disk: typically a hash of
// the source computed on another thread while the tensors are written. The header reserves
// `width` bytes for it; after the last tensor byte is written, and before the file is synced and
// renamed into place, `resolve` is called and its result is written over the reservation.
//
// The value must be exactly `width` (at least 1) printable ASCII characters other than '"' and
// '\\' — characters JSON carries unescaped — so the file is byte for byte the one written with
// the value in `metadata` from the start. If `resolve` fails or breaks that rule, the write fails
// and nothing is left at the path.
struct SafetensorsDeferredValue {
  size_t width = 0;
  std::function<Result<std::string>()> resolve;
};

// Where a tensor's bytes can also be read from an open file (a converter's input, say): the
// writer then copies them inside the kernel (copy_file_range) rather than through memory, where
// the operating system and the file systems allow it, and writes the view otherwise. The caller
// guarantees that the file holds exactly the view's bytes at `offset`; the descriptor stays the
// caller's.
struct SafetensorsFileRange {
  int fd = -1;
  uint64_t offset = 0;
};

struct SafetensorsWriteOptions {
  std::map<std::string, std::string> metadata;
  // Metadata entries whose values are supplied after the data is written (keys distinct from
  // those of `metadata`).
  std::map<std::string, SafetensorsDeferredValue> deferred_metadata;
  // Tensors (by name) whose bytes may be copied from a file instead of from their views.
  std::map<std::string, SafetensorsFileRange> file_ranges;
  // The data region starts at a file offset that is a multiple of this power of two (at most
  // 4096; the header is padded with spaces). 8 matches the reference implementation. Tensors are
  // contiguous, as the format requires, ordered by element size (widest first) then name, so each
  // starts at a multiple of its own element size when the alignment is 8 or more.
  size_t alignment = 8;
  // Called every few MiB written with the bytes written so far and the file's final size.
  std::function<void(uint64_t written, uint64_t total)> progress;
};

// Writes `tensors` to `path` atomically (a temporary file in the same directory, fsync, rename;
// output_files.h): on error nothing is left at `path`.
Status write_safetensors(const std::string& path, const NamedArrayViews& tensors,
                         const SafetensorsWriteOptions& options = {});

}  // namespace tensoracle
