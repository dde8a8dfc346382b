// Dense host arrays: ArrayView (borrowed) and HostArray (owned). Always C-contiguous.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>

#include "tensoracle/status.h"
#include "tensoracle/types.h"

namespace tensoracle {

// A borrowed, C-contiguous host array. `data` holds shape.element_count() elements of `dtype`
// and must outlive the view.
struct ArrayView {
  DataType dtype = DataType::kFloat32;
  Dims shape;
  const void* data = nullptr;

  int64_t element_count() const;  // shape must be static
  size_t byte_size() const;
};

// An owned, C-contiguous, 64-byte aligned host array.
class HostArray {
 public:
  HostArray() = default;

  // Zero-filled storage for `shape` of `dtype`; errors on a dynamic or overflowing shape.
  static Result<HostArray> zeros(DataType dtype, Dims shape);
  // A copy of `view`.
  static Result<HostArray> copy_of(const ArrayView& view);

  DataType dtype() const { return dtype_; }
  const Dims& shape() const { return shape_; }
  int64_t element_count() const { return element_count_; }
  size_t byte_size() const { return byte_size_; }
  void* data() { return storage_.get(); }
  const void* data() const { return storage_.get(); }
  template <typename T> T* data_as() { return static_cast<T*>(data()); }
  template <typename T> const T* data_as() const { return static_cast<const T*>(data()); }

  ArrayView view() const { return ArrayView{dtype_, shape_, storage_.get()}; }

 private:
  struct AlignedFree {
    void operator()(void* p) const;
  };
  DataType dtype_ = DataType::kFloat32;
  Dims shape_;
  int64_t element_count_ = 0;
  size_t byte_size_ = 0;
  std::unique_ptr<void, AlignedFree> storage_;
};

// Named arrays (an .npz, a safetensors file, a network's outputs), ordered by name.
using NamedArrays = std::map<std::string, HostArray>;
using NamedArrayViews = std::map<std::string, ArrayView>;

NamedArrayViews views_of(const NamedArrays& arrays);

}  // namespace tensoracle
