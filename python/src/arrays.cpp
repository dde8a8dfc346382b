#include "arrays.h"

#include <nanobind/ndarray.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "errors.h"

namespace nb = nanobind;

namespace tensoracle::python {
namespace {

nb::module_ numpy() { return nb::module_::import_("numpy"); }

// A byte view of `bytes` bytes at `data` as a flat uint8 NumPy array; `owner` keeps them alive.
nb::object numpy_bytes(const void* data, size_t bytes, nb::handle owner, bool readonly) {
  static const uint8_t kEmpty = 0;  // NumPy wants a pointer even for zero bytes
  const void* address = bytes == 0 ? &kEmpty : data;
  const size_t shape[1] = {bytes};
  if (readonly) {
    nb::ndarray<nb::numpy, const uint8_t, nb::ndim<1>> array(address, 1, shape, owner);
    return nb::cast(array);
  }
  nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>> array(const_cast<void*>(address), 1, shape, owner);
  return nb::cast(array);
}

nb::object typed(nb::object bytes, DataType type, const Dims& shape) {
  return bytes.attr("view")(numpy_dtype(type)).attr("reshape")(shape_tuple(shape));
}

}  // namespace

nb::object numpy_dtype(DataType type) {
  switch (type) {
    case DataType::kBFloat16: return nb::module_::import_("ml_dtypes").attr("bfloat16");
    case DataType::kFloat8E4M3: return nb::module_::import_("ml_dtypes").attr("float8_e4m3fn");
    case DataType::kFloat8E5M2: return nb::module_::import_("ml_dtypes").attr("float8_e5m2");
    case DataType::kFloat32: return numpy().attr("dtype")("float32");
    case DataType::kFloat16: return numpy().attr("dtype")("float16");
    case DataType::kFloat64: return numpy().attr("dtype")("float64");
    default:  // the integer types and bool are named alike in both
      return numpy().attr("dtype")(std::string(data_type_name(type)).c_str());
  }
}

DataType data_type_from_python(nb::handle value, const std::string& what) {
  std::string name;
  if (nb::isinstance<nb::str>(value)) {
    name = nb::cast<std::string>(value);
  } else {
    nb::object dtype;
    try {
      dtype = numpy().attr("dtype")(value);
    } catch (const nb::python_error&) {
      fail(what + ": " + python_repr(value) + " is not a type name or a NumPy dtype");
    }
    name = nb::cast<std::string>(dtype.attr("name"));
  }
  auto parsed = parse_data_type(name);
  if (!parsed.is_ok()) fail(what + ": " + parsed.status().message());
  return *parsed;
}

HostArrayArg host_array_from_python(nb::handle value, const std::string& what) {
  nb::module_ np = numpy();
  nb::object array;
  try {
    array = np.attr("asarray")(value);
  } catch (const nb::python_error& e) {
    fail(what + ": cannot be read as an array: " + e.what());
  }
  nb::object dtype = array.attr("dtype");
  if (!nb::cast<bool>(dtype.attr("isnative"))) {
    array = array.attr("astype")(dtype.attr("newbyteorder")("="));
    dtype = array.attr("dtype");
  }
  if (!nb::cast<bool>(array.attr("flags").attr("c_contiguous"))) array = array.attr("copy")("C");

  const std::string dtype_name = nb::cast<std::string>(dtype.attr("name"));
  auto type = parse_data_type(dtype_name);
  if (!type.is_ok())
    fail(what + ": NumPy dtype '" + dtype_name + "' has no tensoracle type (fp32, fp16, bf16, fp8, fp64, integers, bool)");

  std::vector<int64_t> shape;
  for (nb::handle dim : nb::tuple(array.attr("shape"))) shape.push_back(nb::cast<int64_t>(dim));
  const nb::tuple data = nb::tuple(array.attr("__array_interface__")["data"]);
  const auto address = nb::cast<uintptr_t>(data[0]);
  return HostArrayArg{array, ArrayView{*type, Dims(std::move(shape)), reinterpret_cast<const void*>(address)}};
}

nb::object numpy_from_host(HostArray array) {
  auto* owned = new HostArray(std::move(array));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<HostArray*>(p); });
  return typed(numpy_bytes(owned->data(), owned->byte_size(), owner, false), owned->dtype(), owned->shape());
}

nb::object numpy_view(const ArrayView& view, nb::object owner) {
  return typed(numpy_bytes(view.data, view.byte_size(), owner, true), view.dtype, view.shape);
}

nb::object numpy_from_named(NamedArrays arrays) {
  nb::dict out;
  for (auto& [name, array] : arrays) out[nb::str(name.c_str())] = numpy_from_host(std::move(array));
  return out;
}

bool is_path(nb::handle value) { return nb::isinstance<nb::str>(value) || nb::hasattr(value, "__fspath__"); }

std::string path_from_python(nb::handle value) {
  return nb::cast<std::string>(nb::module_::import_("os").attr("fspath")(value));
}

ShapeTuple shape_tuple(const Dims& dims) {
  nb::list out;
  for (int64_t d : dims) out.append(d);
  return ShapeTuple(nb::tuple(out));
}

Dims dims_from_python(nb::handle value, const std::string& what) {
  std::vector<int64_t> dims;
  try {
    for (nb::handle d : nb::iter(value)) dims.push_back(nb::cast<int64_t>(d));
  } catch (const std::exception&) {
    fail(what + ": expected a sequence of ints, got " + python_repr(value));
  }
  return Dims(std::move(dims));
}

}  // namespace tensoracle::python
