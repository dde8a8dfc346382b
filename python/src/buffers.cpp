#include "buffers.h"

#include <nanobind/ndarray.h>

#include <algorithm>
#include <charconv>
#include <string>

#include "errors.h"

namespace nb = nanobind;

namespace tensoracle::python {
namespace {

// DLPack device types (dlpack.h): host memory, CUDA memory, pinned host memory, managed memory.
constexpr int kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;

std::optional<DataType> dlpack_type(nb::dlpack::dtype t) {
  using Code = nb::dlpack::dtype_code;
  if (t.lanes != 1) return std::nullopt;
  switch (static_cast<Code>(t.code)) {
    case Code::Float:
      if (t.bits == 16) return DataType::kFloat16;
      if (t.bits == 32) return DataType::kFloat32;
      if (t.bits == 64) return DataType::kFloat64;
      return std::nullopt;
    case Code::Bfloat: return t.bits == 16 ? std::optional(DataType::kBFloat16) : std::nullopt;
    case Code::Float8_E4M3FN: return DataType::kFloat8E4M3;
    case Code::Float8_E5M2: return DataType::kFloat8E5M2;
    case Code::Bool: return t.bits == 8 ? std::optional(DataType::kBool) : std::nullopt;
    case Code::Int:
      if (t.bits == 8) return DataType::kInt8;
      if (t.bits == 16) return DataType::kInt16;
      if (t.bits == 32) return DataType::kInt32;
      if (t.bits == 64) return DataType::kInt64;
      return std::nullopt;
    case Code::UInt:
      if (t.bits == 8) return DataType::kUInt8;
      if (t.bits == 16) return DataType::kUInt16;
      if (t.bits == 32) return DataType::kUInt32;
      if (t.bits == 64) return DataType::kUInt64;
      return std::nullopt;
    default: return std::nullopt;
  }
}

// Dense in C order: each stride (in elements) is the product of the later dims (size-1 dims and
// empty tensors have no stride to respect).
bool c_contiguous(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 0) return true;
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

bool from_dlpack(nb::handle value, BufferInfo& info) {
  if (!nb::hasattr(value, "__dlpack__")) return false;
  nb::ndarray<nb::ro> array;
  bool writable = true;
  {
    nb::ndarray<> rw;
    if (nb::try_cast(value, rw, false)) {
      array = nb::ndarray<nb::ro>(rw);
    } else if (nb::try_cast(value, array, false)) {
      writable = false;
    } else {
      PyErr_Clear();
      return false;  // e.g. NumPy bf16, which DLPack cannot carry: the array interface follows
    }
  }
  const int device = array.device_type();
  if (device == kDLCPU || device == kDLCUDAHost) {
    info.memory = MemoryKind::kHost;
  } else if (device == kDLCUDA || device == kDLCUDAManaged) {
    info.memory = MemoryKind::kCuda;
  } else {
    fail("the buffer is on DLPack device type " + std::to_string(device) + ", neither host nor CUDA memory");
  }
  info.dtype = dlpack_type(array.dtype());
  info.dtype_text = "DLPack code " + std::to_string(array.dtype().code) + " bits " + std::to_string(array.dtype().bits);
  info.itemsize = array.itemsize();
  std::vector<int64_t> strides;
  for (size_t i = 0; i < array.ndim(); ++i) {
    info.shape.push_back(static_cast<int64_t>(array.shape(i)));
    strides.push_back(array.stride(i));
  }
  info.contiguous = c_contiguous(info.shape, strides);
  info.data = const_cast<void*>(static_cast<const void*>(array.data()));
  info.readonly = !writable;
  info.nbytes = array.nbytes();
  info.owner = nb::borrow(value);
  return true;
}

// typestr of the array interfaces: "<f4", "|b1", "<V2" (bf16 from ml_dtypes: a 2-byte void)...
std::optional<DataType> typestr_type(const std::string& typestr, nb::handle dtype_name) {
  if (!dtype_name.is_none()) {  // NumPy arrays: the dtype's own name, which knows bf16 and fp8
    auto parsed = parse_data_type(nb::cast<std::string>(dtype_name));
    if (parsed.is_ok()) return *parsed;
  }
  if (typestr.size() < 3 || (typestr[0] != '<' && typestr[0] != '|' && typestr[0] != '=')) return std::nullopt;
  const std::string kind_size = typestr.substr(1);
  static const std::pair<const char*, DataType> kTypes[] = {
      {"f2", DataType::kFloat16}, {"f4", DataType::kFloat32}, {"f8", DataType::kFloat64}, {"i1", DataType::kInt8},
      {"u1", DataType::kUInt8},   {"i2", DataType::kInt16},   {"u2", DataType::kUInt16},  {"i4", DataType::kInt32},
      {"u4", DataType::kUInt32},  {"i8", DataType::kInt64},   {"u8", DataType::kUInt64},  {"b1", DataType::kBool}};
  for (const auto& [name, type] : kTypes)
    if (kind_size == name) return type;
  return std::nullopt;
}

void from_array_interface(nb::handle value, nb::handle interface, MemoryKind memory, nb::handle dtype_name, BufferInfo& info) {
  nb::dict d = nb::cast<nb::dict>(interface);
  if (d.contains("mask") && !d["mask"].is_none()) fail("masked arrays cannot be bound");
  const std::string typestr = nb::cast<std::string>(d["typestr"]);
  info.memory = memory;
  info.dtype = typestr_type(typestr, dtype_name);
  info.dtype_text = typestr;
  const char* digits = typestr.data() + std::min<size_t>(2, typestr.size());
  if (std::from_chars(digits, typestr.data() + typestr.size(), info.itemsize).ec != std::errc() || info.itemsize == 0)
    fail("unreadable typestr '" + typestr + "'");
  for (nb::handle dim : nb::iter(d["shape"])) info.shape.push_back(nb::cast<int64_t>(dim));
  size_t elements = 1;
  for (int64_t dim : info.shape) elements *= static_cast<size_t>(dim);
  info.nbytes = elements * info.itemsize;
  if (d.contains("strides") && !d["strides"].is_none()) {
    std::vector<int64_t> strides;
    for (nb::handle s : nb::iter(d["strides"])) {
      const int64_t bytes = nb::cast<int64_t>(s);
      if (bytes % static_cast<int64_t>(info.itemsize) != 0) {
        info.contiguous = false;
        break;
      }
      strides.push_back(bytes / static_cast<int64_t>(info.itemsize));
    }
    if (info.contiguous) info.contiguous = c_contiguous(info.shape, strides);
  }
  nb::tuple data = nb::cast<nb::tuple>(d["data"]);
  info.data = reinterpret_cast<void*>(nb::cast<uintptr_t>(data[0]));
  info.readonly = nb::cast<bool>(data[1]);
  info.owner = nb::borrow(value);
}

}  // namespace

BufferInfo buffer_from_python(nb::handle value, const std::string& what) {
  BufferInfo info;
  try {
    if (from_dlpack(value, info)) return info;
    if (nb::hasattr(value, "__cuda_array_interface__")) {
      from_array_interface(value, value.attr("__cuda_array_interface__"), MemoryKind::kCuda, nb::none(), info);
      return info;
    }
    if (nb::hasattr(value, "__array_interface__")) {
      nb::object dtype_name = nb::hasattr(value, "dtype") && nb::hasattr(value.attr("dtype"), "name")
                                  ? nb::object(value.attr("dtype").attr("name"))
                                  : nb::none();
      from_array_interface(value, value.attr("__array_interface__"), MemoryKind::kHost, dtype_name, info);
      return info;
    }
  } catch (const StatusError& e) {
    fail(what + ": " + e.status().message());
  }
  fail(what + ": " + python_repr(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(value.ptr())))) +
       " is not a buffer: expected an object with __dlpack__ (PyTorch, CuPy, NumPy), __cuda_array_interface__ or "
       "__array_interface__");
}

void* stream_from_python(nb::handle stream) {
  if (stream.is_none()) return nullptr;
  nb::object handle;
  if (PyLong_Check(stream.ptr()) && !PyBool_Check(stream.ptr())) {
    handle = nb::borrow(stream);
  } else if (nb::hasattr(stream, "__cuda_stream__")) {
    nb::object protocol = stream.attr("__cuda_stream__")();  // (version, handle)
    handle = nb::cast<nb::tuple>(protocol)[1];
  } else if (nb::hasattr(stream, "cuda_stream")) {
    handle = stream.attr("cuda_stream");
  } else if (nb::hasattr(stream, "ptr")) {
    handle = stream.attr("ptr");
  } else {
    fail("stream: expected None, an int handle, or an object with __cuda_stream__, cuda_stream or ptr; got " + python_repr(stream));
  }
  return reinterpret_cast<void*>(nb::cast<uintptr_t>(handle));
}

}  // namespace tensoracle::python
