#include "tensoracle/array.h"

#include <cstdlib>
#include <cstring>

#include "core/errors.h"

namespace tensoracle {

int64_t ArrayView::element_count() const {
  auto count = shape.element_count();
  return count.is_ok() ? *count : 0;
}

size_t ArrayView::byte_size() const {
  return static_cast<size_t>(element_count()) * data_type_size(dtype);
}

void HostArray::AlignedFree::operator()(void* p) const { std::free(p); }

Result<HostArray> HostArray::zeros(DataType dtype, Dims shape) {
  TO_ASSIGN_OR_RETURN(int64_t bytes, shape.byte_size(dtype));
  HostArray array;
  array.dtype_ = dtype;
  array.element_count_ = *shape.element_count();
  array.shape_ = std::move(shape);
  array.byte_size_ = static_cast<size_t>(bytes);
  constexpr size_t kAlignment = 64;
  const size_t rounded = (array.byte_size_ + kAlignment - 1) / kAlignment * kAlignment;
  void* memory = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (memory == nullptr)
    return make_error(StatusCode::kFailedPrecondition, "out of host memory allocating {} bytes", bytes);
  std::memset(memory, 0, rounded == 0 ? kAlignment : rounded);
  array.storage_.reset(memory);
  return array;
}

Result<HostArray> HostArray::copy_of(const ArrayView& view) {
  TO_ASSIGN_OR_RETURN(HostArray array, zeros(view.dtype, view.shape));
  if (array.byte_size_ > 0) std::memcpy(array.data(), view.data, array.byte_size_);
  return array;
}

NamedArrayViews views_of(const NamedArrays& arrays) {
  NamedArrayViews views;
  for (const auto& [name, array] : arrays) views.emplace(name, array.view());
  return views;
}

}  // namespace tensoracle
