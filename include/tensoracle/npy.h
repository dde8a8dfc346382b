// NumPy .npy and .npz files (arrays for inputs and references).
//
// Supported: little-endian (and byte-order-free) dtypes of DataType: <f2 <f4 <f8 |i1 |u1 <i2 <u2
// <i4 <u4 <i8 <u8 |b1; C and Fortran order (Fortran arrays are transposed to C order on read);
// format versions 1.0, 2.0 and 3.0. bf16 and fp8 follow the ml_dtypes convention: descriptors
// "bfloat16", "float8_e4m3fn" and "float8_e5m2" (written as the descr string; read back exactly).
// Big-endian data is converted on read. .npz: a zip of NAME.npy entries, stored or deflated.
#pragma once

#include <string>

#include "tensoracle/array.h"
#include "tensoracle/status.h"

namespace tensoracle {

Result<HostArray> read_npy(const std::string& path);
// Parses .npy bytes held in memory (`source` names them in errors).
Result<HostArray> parse_npy(const void* data, size_t size, const std::string& source);
Status write_npy(const std::string& path, const ArrayView& array);

Result<NamedArrays> read_npz(const std::string& path);
// Writes atomically; `compress` deflates the entries.
Status write_npz(const std::string& path, const NamedArrayViews& arrays, bool compress = false);

// Reads named arrays from .npy (one array, named after the file stem), .npz or .safetensors,
// choosing by extension; errors name the file and the accepted extensions.
Result<NamedArrays> read_named_arrays(const std::string& path);

}  // namespace tensoracle
