// NumPy .npy and .npz files (arrays for inputs and references).
//
// Supported: little-endian (and byte-order-free) dtypes of DataType: <f2 <f4 <f8 |i1 |u1 <i2 <u2
// <i4 <u4 <i8 <u8 |b1; C and Fortran order (Fortran arrays are transposed to C order on read);
// format versions 1.0, 2.0 and 3.0. bf16 and fp8 follow the ml_dtypes convention: descriptors
// "bfloat16", "float8_e4m3fn" and "float8_e5m2" (written as the descr string; read back exactly).
// Big-endian data is converted on read. .npz: a zip of NAME.npy entries, stored or deflated.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "tensoracle/array.h"
#include "tensoracle/status.h"

namespace tensoracle {

// Which arrays a reader wants, and what a (possibly hostile) file may make it spend. Every check
// runs on the declared dtype and shape, before any array data is allocated, decompressed or
// copied; deflated .npz entries are then inflated into exactly the declared size, so an entry
// whose stream is longer than declared is an error, never a larger allocation.
struct ArrayReadOptions {
  // Read only these arrays (others are skipped unread); a name the file lacks is an error that
  // lists what it holds. nullopt: every array.
  std::optional<std::set<std::string>> only;
  // Skip these arrays.
  std::set<std::string> exclude;
  // Called with each array to be read (name, dtype, shape) before its data is allocated: an
  // error (a shape outside an engine's profile, say) ends the read with it.
  std::function<Status(const std::string& name, DataType dtype, const Dims& shape)> check;
  // The most bytes of array data to read from the file, all arrays together; nullopt:
  // default_array_read_limit(the file's size).
  std::optional<uint64_t> max_total_bytes;
};

// The larger of 1 GiB and 8 times the file's size. Uncompressed files (.npy, .safetensors, a
// stored .npz) can never hold more data than their size; only a deflated .npz can, and an
// expansion of more than 8x to more than 1 GiB is what a zip bomb looks like.
inline constexpr uint64_t kDefaultArrayReadFloor = uint64_t{1} << 30;
inline constexpr uint64_t kDefaultArrayReadFactor = 8;
uint64_t default_array_read_limit(uint64_t file_bytes);

// `options.check` and the limit see the array under the file's stem ("probs" for probs.npy);
// only/exclude do not apply to a single array.
Result<HostArray> read_npy(const std::string& path, const ArrayReadOptions& options = {});
// Parses .npy bytes held in memory (`source` names them in errors).
Result<HostArray> parse_npy(const void* data, size_t size, const std::string& source);
Status write_npy(const std::string& path, const ArrayView& array);

Result<NamedArrays> read_npz(const std::string& path, const ArrayReadOptions& options = {});
// Writes atomically (output_files.h); `compress` deflates the entries.
Status write_npz(const std::string& path, const NamedArrayViews& arrays, bool compress = false);

// Reads named arrays from .npy (one array, named after the file stem), .npz or .safetensors,
// choosing by extension; errors name the file and the accepted extensions.
Result<NamedArrays> read_named_arrays(const std::string& path, const ArrayReadOptions& options = {});

// Writes named arrays in the format the extension names: .npz (any number), .safetensors (any
// number), .npy (exactly one array). Any other extension, or .npy for several arrays, is refused
// with the supported ones listed, before anything is written.
Status write_named_arrays(const std::string& path, const NamedArrayViews& arrays);
// The same check alone, for callers that want to refuse a path before computing the arrays:
// `count` arrays will go to `path`.
Status check_array_output_path(const std::string& path, size_t count);

}  // namespace tensoracle
