// PyTorch checkpoints (.pth / .pt written by torch.save) without Python or torch: reading and
// conversion to safetensors.
//
// Format: since torch 1.6, torch.save writes a zip archive whose entries share one top folder
// ("archive/" or the file's stem): data.pkl (a pickle of the saved object), data/<key> (the raw
// bytes of each storage), byteorder ("little" or "big"), version, ... Tensors inside the pickle
// are calls to torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...), where the
// storage is a persistent reference ('storage', torch.FloatStorage, key, location, numel).
//
// Safety: a pickle can run arbitrary code when Python loads it. This reader never does: it
// interprets only the opcodes and globals of tensors and state dicts (dicts, OrderedDict,
// lists, tuples, numbers, strings, None/bool, tensors, parameters, storages, dtypes) and rejects
// anything else — another global such as os.system, an unknown opcode, a REDUCE of anything but
// a tensor/OrderedDict builder — with an error naming it. Every size, offset and count read from
// the file is bounds-checked, and the work and memory spent on the pickle are bounded
// (PthLimits).
//
// Legacy files (torch < 1.6, or _use_new_zipfile_serialization=False) are detected and refused
// with instructions for re-saving them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tensoracle/array.h"
#include "tensoracle/status.h"
#include "tensoracle/types.h"

namespace tensoracle {

// Bounds on what a (possibly hostile) checkpoint may make the reader spend.
struct PthLimits {
  size_t max_pickle_bytes = size_t{256} << 20;  // data.pkl size
  size_t max_objects = size_t{1} << 23;         // values built while unpickling
  size_t max_stack = size_t{1} << 20;           // pickle value stack
  size_t max_marks = 1000;                      // MARK nesting
  size_t max_memo = size_t{1} << 22;            // memo entries
  size_t max_depth = 1000;                      // container nesting when collecting tensors
  size_t max_rank = 64;                         // tensor dimensions
};

// The default bound on the dense bytes a checkpoint may expand to (PthOptions::max_output_bytes):
// the larger of 16 GiB and 8 times the checkpoint's size. A checkpoint of contiguous tensors
// expands to less than its own size; views (a transpose, a slice, torch's expand() with stride 0)
// each become a dense copy, which is how a few kilobytes can ask for gigabytes.
inline constexpr uint64_t kDefaultPthOutputFloor = uint64_t{16} << 30;
inline constexpr uint64_t kDefaultPthOutputFactor = 8;
uint64_t default_pth_output_limit(uint64_t checkpoint_bytes);

// Where a long conversion stands: `stage` is "materializing" (dense copies of views, in memory)
// or "writing" (the output file); bytes done of the stage's total.
struct PthProgress {
  const char* stage;
  uint64_t done_bytes;
  uint64_t total_bytes;
};
using PthProgressFn = std::function<void(const PthProgress&)>;

struct PthOptions {
  // Dotted path to the object that holds the tensors: "state_dict", "model.state_dict",
  // "optimizer.state". Each step matches the longest dict key (keys may contain dots), or a
  // list/tuple index. Empty: the whole saved object.
  std::string key;
  // nullopt keeps every dtype. fp32, fp16 or bf16 converts the floating tensors that are fp64,
  // fp32, fp16 or bf16 (rounding to nearest even, as torch's .to(dtype) does); integer, bool and
  // fp8 tensors keep their type.
  std::optional<DataType> float_dtype;
  PthLimits limits;
  // The most bytes of dense tensor data the checkpoint may expand to (after float_dtype), checked
  // before anything is materialized or written; nullopt: default_pth_output_limit(file size).
  std::optional<uint64_t> max_output_bytes;
  // Called every few MiB while views are materialized and while the output is written.
  PthProgressFn progress;
};

// The tensors of a checkpoint, read and made dense.
//
// Names: the selected object is walked depth-first; dict keys (strings, or integers in decimal)
// and list/tuple indices are joined with '.' ("state_dict.conv1.weight", "optimizer.state.0.exp_avg").
// A bare tensor is named after the last step of the key, or "tensor" without a key.
// Values that are not tensors (an "epoch": 3, a learning rate, a string) are skipped and listed
// in notes(); a container without any tensor is noted once.
//
// Views: every tensor is materialized on its own — a transposed view, a slice or a broadcast of
// another tensor's storage becomes a dense C-contiguous copy of exactly its elements — so tensors
// that share storage are each complete under their own name. Data is little-endian (a
// big-endian archive is converted).
class PthCheckpoint {
 public:
  static Result<PthCheckpoint> read(const std::string& path, const PthOptions& options = {});

  const std::string& path() const;
  // Dense views, valid while this object (or a copy of it) lives.
  const NamedArrayViews& tensors() const;
  // Tensor names in the order the pickle holds them.
  const std::vector<std::string>& names_in_file_order() const;
  // One line per skipped value: "skipped 'epoch' (int 3)".
  const std::vector<std::string>& notes() const;

 private:
  PthCheckpoint() = default;
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

struct PthConversion {
  size_t tensor_count = 0;
  std::string source_sha256;
  std::vector<std::string> notes;
};

// Converts a checkpoint to a safetensors file, written atomically: on any error nothing is left at
// `safetensors_path` (an existing file there stays untouched). The output's metadata records
//   format = "pt", source_file (base name), source_sha256, tensor_count, converter ("tensoracle
//   <version>"), and source_key / float_dtype when given.
// Refuses to overwrite the input itself.
Result<PthConversion> convert_pth_to_safetensors(const std::string& pth_path, const std::string& safetensors_path,
                                                 const PthOptions& options = {});

}  // namespace tensoracle
