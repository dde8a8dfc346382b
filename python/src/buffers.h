// Caller-owned tensor memory handed to an Execution, and CUDA streams, as Python spells them.
//
// Buffers: DLPack (__dlpack__: PyTorch, CuPy, JAX, NumPy), the CUDA array interface
// (__cuda_array_interface__: CuPy, Numba, PyTorch) or, for host memory, NumPy's array interface
// (NumPy arrays of every type, bf16/fp8 from ml_dtypes included). Nothing is copied: the buffer
// must already be dense (C-contiguous) in the tensor's type.
// Streams: None (the legacy default stream), an int handle, or an object with __cuda_stream__()
// (the CUDA stream protocol), .cuda_stream (PyTorch) or .ptr (CuPy).
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tensoracle/types.h"

namespace tensoracle::python {

enum class MemoryKind { kHost, kCuda };

struct BufferInfo {
  nanobind::object owner;  // keeps the memory alive while bound
  void* data = nullptr;
  MemoryKind memory = MemoryKind::kHost;
  std::optional<DataType> dtype;  // none when the producer's type has no tensoracle equivalent
  std::string dtype_text;         // the producer's own spelling, for errors
  size_t itemsize = 0;
  std::vector<int64_t> shape;
  bool contiguous = true;
  bool readonly = false;
  size_t nbytes = 0;
};

// Reads what `value` exposes; errors (naming `what`) when it exposes no known interface.
BufferInfo buffer_from_python(nanobind::handle value, const std::string& what);

void* stream_from_python(nanobind::handle stream);

}  // namespace tensoracle::python
