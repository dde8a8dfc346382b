// Turning a tensor record (storage bytes, offset, sizes, strides) into a dense array: bounds
// checks, the strided gather, byte-order conversion and dtype conversion.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "io/pth/pickle.h"
#include "tensoracle/array.h"

namespace tensoracle::pth {

// Bytes a storage reference declares (numel * element size), overflow-checked.
Result<uint64_t> storage_bytes(const StorageRef& storage);

// Checks that every element `tensor` addresses lies inside its storage's declared bytes.
Status check_tensor_bounds(const std::string& name, const TensorRef& tensor);

// True when the tensor's elements are consecutive in C order (sizes of 0 or 1 ignore strides).
bool is_contiguous(const TensorRef& tensor);

// Copies the tensor's elements, in C order, from `storage` (which holds at least
// storage_bytes(*tensor.storage) bytes) into `out` (element_count * element size bytes).
void gather(const TensorRef& tensor, const uint8_t* storage, uint8_t* out);

// Reverses the bytes of each `element_size`-byte element (big-endian <-> little-endian).
void swap_byte_order(uint8_t* data, size_t element_size, size_t count);

// The dtype a tensor of `dtype` becomes under PthOptions::float_dtype.
DataType converted_dtype(DataType dtype, const std::optional<DataType>& float_dtype);

}  // namespace tensoracle::pth
