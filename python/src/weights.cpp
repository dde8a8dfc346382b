// Weights (safetensors, memory-mapped; zero-copy NumPy views) and the array files tensoracle
// reads and writes (.npy, .npz, .safetensors).
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <string>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "errors.h"
#include "tensoracle/npy.h"
#include "tensoracle/safetensors.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tensoracle::python {
namespace {

Weights open_weights(const std::string& path) {
  nb::gil_scoped_release release;
  return unwrap(Weights::open(path));
}

// A read-only array over the mapping; the capsule's copy of the Weights keeps it mapped.
nb::object weight_array(const Weights& weights, const std::string& name) {
  const ArrayView view = unwrap(weights.view(name));
  auto* keep = new Weights(weights);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<Weights*>(p); });
  return numpy_view(view, owner);
}

// Keeps the caller's arrays alive while their views are written.
struct NamedArgs {
  std::vector<HostArrayArg> arrays;
  NamedArrayViews views;
};

NamedArgs named_args(nb::handle mapping, const char* role) {
  NamedArgs out;
  for (nb::handle key : nb::iter(mapping.attr("keys")())) {
    const std::string name = nb::cast<std::string>(key);
    HostArrayArg arg = host_array_from_python(mapping[key], std::string(role) + " '" + name + "'");
    out.views[name] = arg.view;
    out.arrays.push_back(std::move(arg));
  }
  return out;
}

}  // namespace

void bind_weights(nb::module_& m) {
  nb::class_<SafetensorsTensorInfo>(m, "TensorInfo", "A tensor's entry in a safetensors file.")
      .def_ro("name", &SafetensorsTensorInfo::name)
      .def_prop_ro("dtype", [](const SafetensorsTensorInfo& t) { return std::string(data_type_name(t.dtype)); })
      .def_prop_ro("shape", [](const SafetensorsTensorInfo& t) { return shape_tuple(t.shape); })
      .def("__repr__", [](const SafetensorsTensorInfo& t) {
        return "<TensorInfo '" + t.name + "' " + std::string(data_type_name(t.dtype)) + t.shape.to_string() + ">";
      });

  nb::class_<Weights>(m, "Weights",
                      "A set of weights: one safetensors file or a sharded checkpoint (*.index.json), memory-mapped and "
                      "validated on open. `weights[name]` is a read-only NumPy view of the mapping (no copy) that keeps "
                      "it mapped while the array lives.")
      .def("__init__", [](Weights* self, nb::object path) { new (self) Weights(open_weights(path_from_python(path))); }, "path"_a,
           nb::sig("def __init__(self, path: str | os.PathLike[str]) -> None"))
      .def_static("open", [](nb::object path) { return open_weights(path_from_python(path)); }, "path"_a,
                  nb::sig("def open(path: str | os.PathLike[str]) -> Weights"))
      .def("names", &Weights::names, "tensor names, sorted")
      .def("__contains__", &Weights::contains, "name"_a)
      .def("__len__", [](const Weights& w) { return w.names().size(); })
      .def("__iter__", [](const Weights& w) { return nb::typed<nb::iterator, std::string>(nb::iter(nb::cast(w.names()))); })
      .def("__getitem__", &weight_array, "name"_a,
           nb::sig("def __getitem__(self, name: str) -> numpy.typing.NDArray[typing.Any]"))
      .def("info", [](const Weights& w, const std::string& name) { return unwrap(w.info(name)); }, "name"_a)
      .def_prop_ro("metadata", &Weights::metadata)
      .def_prop_ro("files", &Weights::files, "the files backing these weights (one, or every shard)")
      .def("__repr__", [](const Weights& w) {
        const auto files = w.files();
        return "<Weights " + std::to_string(w.names().size()) + " tensors in " +
               (files.size() == 1 ? "'" + files.front() + "'" : std::to_string(files.size()) + " shards") + ">";
      });

  m.def("read_arrays", [](nb::object path) {
    const std::string p = path_from_python(path);
    Result<NamedArrays> arrays = Status::ok();
    {
      nb::gil_scoped_release release;
      arrays = read_named_arrays(p);
    }
    return numpy_from_named(unwrap(std::move(arrays)));
  }, "path"_a, nb::sig("def read_arrays(path: str | os.PathLike[str]) -> dict[str, numpy.typing.NDArray[typing.Any]]"),
        "Named arrays from a .npy (one array, named after the file's stem), .npz or .safetensors file.");

  m.def("write_npz", [](nb::object path, nb::handle arrays, bool compress) {
    const std::string p = path_from_python(path);
    NamedArgs args = named_args(arrays, "array");
    nb::gil_scoped_release release;
    check(write_npz(p, args.views, compress));
  }, "path"_a, "arrays"_a, "compress"_a = false,
        nb::sig("def write_npz(path: str | os.PathLike[str], arrays: typing.Mapping[str, numpy.typing.ArrayLike], "
                "compress: bool = False) -> None"),
        "Writes named arrays to an .npz, atomically (bf16/fp8 with the ml_dtypes descriptors).");

  m.def("write_npy", [](nb::object path, nb::handle array) {
    const std::string p = path_from_python(path);
    HostArrayArg arg = host_array_from_python(array, "array");
    nb::gil_scoped_release release;
    check(write_npy(p, arg.view));
  }, "path"_a, "array"_a, nb::sig("def write_npy(path: str | os.PathLike[str], array: numpy.typing.ArrayLike) -> None"),
        "Writes one array to a .npy file, atomically.");

  m.def("write_safetensors", [](nb::object path, nb::handle arrays, const std::map<std::string, std::string>& metadata) {
    const std::string p = path_from_python(path);
    NamedArgs args = named_args(arrays, "tensor");
    SafetensorsWriteOptions options;
    options.metadata = metadata;
    nb::gil_scoped_release release;
    check(write_safetensors(p, args.views, options));
  }, "path"_a, "tensors"_a, "metadata"_a = std::map<std::string, std::string>{},
        nb::sig("def write_safetensors(path: str | os.PathLike[str], tensors: typing.Mapping[str, "
                "numpy.typing.ArrayLike], metadata: typing.Mapping[str, str] = {}) -> None"),
        "Writes named tensors to a safetensors file, atomically.");
}

}  // namespace tensoracle::python
