// The .npy layout shared by the .npy and .npz readers and writers:
//   "\x93NUMPY", major, minor, header length (uint16 LE for 1.0, uint32 LE for 2.0 and 3.0),
//   a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with
//   spaces and a newline, then the raw array bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tensoracle/array.h"
#include "tensoracle/status.h"

namespace tensoracle {

// Enough leading bytes to learn the header size of any version.
constexpr size_t kNpyPrefixSize = 12;
// numpy itself writes headers of well under 1 KiB for the dtypes tensoracle reads.
constexpr size_t kMaxNpyHeaderSize = 1 << 20;

struct NpyHeader {
  DataType dtype = DataType::kFloat32;
  Dims shape;
  bool fortran_order = false;
  bool byte_swapped = false;  // stored big-endian; this host is little-endian
  size_t header_size = 0;     // bytes before the array data
  size_t data_size = 0;       // bytes of array data
};

// The total header size (magic to newline) from the first min(size, kNpyPrefixSize) bytes.
Result<size_t> npy_header_size(const uint8_t* prefix, size_t size);

// Parses the header; `data` must hold at least npy_header_size() bytes. Errors are kCorruptData
// (kUnsupported for valid files of a kind tensoracle does not read) without a file name.
Result<NpyHeader> parse_npy_header(const uint8_t* data, size_t size);

// Turns `array`, holding the raw payload described by `header`, into little-endian C order.
Status normalize_npy_payload(const NpyHeader& header, HostArray& array);

// The header numpy would write for a C-order little-endian array (version 1.0, or 2.0 when the
// dict needs it), padded so that the data starts at a multiple of 64 bytes.
std::string format_npy_header(DataType dtype, const Dims& shape);

}  // namespace tensoracle
