#include "io/pth/materialize.h"

#include <algorithm>
#include <cstring>

#include "core/errors.h"

namespace tensoracle::pth {
namespace {

std::string dims_text(const std::vector<int64_t>& values) { return Dims(values).to_string(); }

template <size_t kSize>
void copy_strided_run(const uint8_t* src, int64_t stride_bytes, int64_t count, uint8_t* dst) {
  for (int64_t i = 0; i < count; ++i, src += stride_bytes, dst += kSize) std::memcpy(dst, src, kSize);
}

void copy_run(const uint8_t* src, int64_t stride_elements, int64_t count, size_t element_size, uint8_t* dst) {
  if (stride_elements == 1) {
    std::memcpy(dst, src, static_cast<size_t>(count) * element_size);
    return;
  }
  const int64_t stride_bytes = stride_elements * static_cast<int64_t>(element_size);
  switch (element_size) {
    case 1: return copy_strided_run<1>(src, stride_bytes, count, dst);
    case 2: return copy_strided_run<2>(src, stride_bytes, count, dst);
    case 4: return copy_strided_run<4>(src, stride_bytes, count, dst);
    case 8: return copy_strided_run<8>(src, stride_bytes, count, dst);
    default:
      for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * element_size, src + i * stride_bytes, element_size);
  }
}

}  // namespace

Result<uint64_t> storage_bytes(const StorageRef& storage) {
  const auto bytes = checked_mul(storage.numel, static_cast<int64_t>(data_type_size(storage.dtype)));
  if (!bytes) return corrupt_data("storage '{}' declares {} elements: the byte size overflows", storage.key, storage.numel);
  return static_cast<uint64_t>(*bytes);
}

Status check_tensor_bounds(const std::string& name, const TensorRef& tensor) {
  const StorageRef& storage = *tensor.storage;
  TO_ASSIGN_OR_RETURN(const uint64_t available, storage_bytes(storage));
  TO_ASSIGN_OR_RETURN(const int64_t count, Dims(tensor.sizes).element_count());
  if (count == 0) return Status::ok();  // addresses nothing
  // The last element addressed: offset + sum((size - 1) * stride), all non-negative.
  int64_t last = tensor.offset;
  bool overflow = false;
  for (size_t d = 0; d < tensor.sizes.size() && !overflow; ++d) {
    const auto step = checked_mul(tensor.sizes[d] - 1, tensor.strides[d]);
    const auto next = step ? checked_add(last, *step) : std::nullopt;
    overflow = !next || *next == INT64_MAX;
    if (next) last = *next;
  }
  const int64_t element_size = static_cast<int64_t>(data_type_size(tensor.dtype));
  const auto end = overflow ? std::nullopt : checked_mul(last + 1, element_size);
  if (!end || static_cast<uint64_t>(*end) > available)
    return corrupt_data(
        "tensor '{}' (storage offset {}, size {}, stride {}, {}) reaches beyond its storage '{}' of {} bytes",
        name, tensor.offset, dims_text(tensor.sizes), dims_text(tensor.strides), data_type_name(tensor.dtype),
        storage.key, available);
  return Status::ok();
}

bool is_contiguous(const TensorRef& tensor) {
  int64_t expected = 1;
  for (size_t d = tensor.sizes.size(); d-- > 0;) {
    if (tensor.sizes[d] == 0) return true;
    if (tensor.sizes[d] != 1 && tensor.strides[d] != expected) return false;
    expected *= tensor.sizes[d];
  }
  return true;
}

void gather(const TensorRef& tensor, const uint8_t* storage, uint8_t* out) {
  const size_t element_size = data_type_size(tensor.dtype);
  const size_t rank = tensor.sizes.size();
  const uint8_t* base = storage + static_cast<size_t>(tensor.offset) * element_size;
  if (std::find(tensor.sizes.begin(), tensor.sizes.end(), 0) != tensor.sizes.end()) return;
  if (rank == 0) {
    std::memcpy(out, base, element_size);
    return;
  }
  // An odometer over the outer dimensions; the innermost dimension is one run.
  const int64_t inner = tensor.sizes[rank - 1];
  const int64_t inner_stride = tensor.strides[rank - 1];
  std::vector<int64_t> index(rank - 1, 0);
  int64_t offset = 0;  // in elements, of the current run's start
  const size_t run_bytes = static_cast<size_t>(inner) * element_size;
  while (true) {
    copy_run(base + offset * static_cast<int64_t>(element_size), inner_stride, inner, element_size, out);
    out += run_bytes;
    size_t d = rank - 1;
    while (d-- > 0) {
      offset += tensor.strides[d];
      if (++index[d] < tensor.sizes[d]) break;
      offset -= tensor.strides[d] * tensor.sizes[d];
      index[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

void swap_byte_order(uint8_t* data, size_t element_size, size_t count) {
  if (element_size <= 1) return;
  for (size_t i = 0; i < count; ++i, data += element_size) std::reverse(data, data + element_size);
}

DataType converted_dtype(DataType dtype, const std::optional<DataType>& float_dtype) {
  if (!float_dtype) return dtype;
  switch (dtype) {
    case DataType::kFloat64:
    case DataType::kFloat32:
    case DataType::kFloat16:
    case DataType::kBFloat16: return *float_dtype;
    default: return dtype;
  }
}

}  // namespace tensoracle::pth
