// NumPy <-> tensoracle host arrays, and element types given from Python.
//
// In: anything numpy.asarray accepts (NumPy arrays of any layout or byte order, lists, CPU
// tensors); non-contiguous or byte-swapped arrays are copied into a dense native array first.
// bf16 and fp8 are ml_dtypes' bfloat16 / float8_e4m3fn / float8_e5m2, as in tensoracle's .npy.
// Out: NumPy arrays that own (HostArray) or borrow (a view kept alive by its owner) the bytes.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "tensoracle/array.h"
#include "tensoracle/types.h"

namespace tensoracle::python {

// A host array handed to C++: `view` points into `array`, which keeps the memory alive.
struct HostArrayArg {
  nanobind::object array;
  ArrayView view;
};

// `what` names the value in errors ("candidate 'probs'").
HostArrayArg host_array_from_python(nanobind::handle value, const std::string& what);

// A NumPy array owning `array`'s storage (no copy).
nanobind::object numpy_from_host(HostArray array);
// A read-only NumPy array over `view`'s bytes (no copy); `owner` keeps them alive.
nanobind::object numpy_view(const ArrayView& view, nanobind::object owner);
nanobind::object numpy_from_named(NamedArrays arrays);  // dict[str, numpy.ndarray]

// The NumPy dtype of a tensoracle type (ml_dtypes for bf16 and fp8).
nanobind::object numpy_dtype(DataType type);
// A type given from Python: a name ("fp32", "float16", "bf16", ...) or anything numpy.dtype
// accepts (numpy.float32, ml_dtypes.bfloat16, a dtype). `what` names it in errors.
DataType data_type_from_python(nanobind::handle value, const std::string& what);

// A file system path given as str or os.PathLike.
bool is_path(nanobind::handle value);
std::string path_from_python(nanobind::handle value);

// Shapes as tuples of ints.
using ShapeTuple = nanobind::typed<nanobind::tuple, int, nanobind::ellipsis>;
ShapeTuple shape_tuple(const Dims& dims);
Dims dims_from_python(nanobind::handle value, const std::string& what);

}  // namespace tensoracle::python
