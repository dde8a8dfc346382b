// Network and Tensor (include/tensoracle/network.h): a graph defined in Python, for a
// graph function given to EngineBuild(graph=...) or for inspection. Every method raises the
// network's definition error right after the call that caused it (the C++ API keeps it sticky in
// status() instead), so a traceback points at the faulty line.
#include "network.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "build.h"
#include "errors.h"
#include "tensoracle/safetensors.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tensoracle::python {

Network& PyNetwork::get() const {
  if (network_ == nullptr)
    throw StatusError(Status(StatusCode::kFailedPrecondition,
                             "this Network was lent to a graph function that has returned; it cannot be used after "
                             "the call (define the graph inside the function)"));
  return *network_;
}

void PyNetwork::check_status() const { check(get().status()); }

nb::object borrow_network(Network& network) { return nb::cast(PyNetwork(network)); }

void end_borrow(nb::handle borrowed) { nb::cast<PyNetwork&>(borrowed).end_borrow(); }

const TensorInfo& PyTensor::info() const { return nb::cast<PyNetwork&>(network).get().tensor(tensor); }

namespace {

PyNetwork& net_of(nb::handle self) { return nb::cast<PyNetwork&>(self); }

}  // namespace

Tensor tensor_of(nb::handle self, nb::handle value, const std::string& what) {
  if (value.is_none()) return Tensor{};
  if (!nb::isinstance<PyTensor>(value)) fail(what + ": expected a Tensor of this network, got " + python_repr(value));
  const PyTensor& t = nb::cast<const PyTensor&>(value);
  if (!t.network.is(self)) fail(what + ": the Tensor belongs to another Network");
  return t.tensor;
}

PyTensor tensor_object(nb::handle self, Tensor tensor) {
  net_of(self).check_status();
  return PyTensor{nb::borrow(self), tensor};
}

void bind_network(nb::module_& m) {
  nb::class_<PyTensor>(m, "Tensor", "A tensor of a Network (a handle; its type and shape are inferred when defined).")
      .def_prop_ro("name", [](const PyTensor& t) { return t.info().name; })
      .def_prop_ro("dtype", [](const PyTensor& t) { return std::string(data_type_name(t.info().desc.dtype)); })
      .def_prop_ro("shape", [](const PyTensor& t) { return shape_tuple(t.info().desc.shape); }, "-1 marks a dynamic dim")
      .def_prop_ro("network", [](const PyTensor& t) { return nb::typed<nb::object, PyNetwork>(t.network); })
      .def("__eq__", [](const PyTensor& a, const PyTensor& b) { return a.network.is(b.network) && a.tensor == b.tensor; })
      .def("__hash__", [](const PyTensor& t) { return t.tensor.id; })
      .def("__repr__", [](const PyTensor& t) { return "<Tensor '" + t.info().name + "' " + t.info().desc.to_string() + ">"; });

  auto network = nb::class_<PyNetwork>(m, "Network",
                        "A network definition (docs/network.md). Layer methods take and return Tensors and infer "
                        "types and shapes at once; a definition error raises tensoracle.Error at the call that made it.")
      .def("__init__", [](PyNetwork* self, nb::handle plugins) {
        PluginRegistry registry = plugins_from_python(plugins);  // raises before the object exists
        new (self) PyNetwork();
        self->get().set_plugins(std::move(registry));
      }, "plugins"_a = nb::none(),
           nb::sig("def __init__(self, plugins: typing.Sequence[str | os.PathLike[str]] | None = None) -> None"),
           "An empty network. plugins: plugin libraries its plugin layers resolve through (a graph function's "
           "network has the build's plugins= instead).")
      .def("add_input", [](nb::handle self, const std::string& name, nb::handle dtype, nb::handle shape) {
        const DataType type = data_type_from_python(dtype, "add_input '" + name + "'");
        const Dims dims = dims_from_python(shape, "add_input '" + name + "'");
        return tensor_object(self, net_of(self).get().add_input(name, type, dims));
      }, "name"_a, "dtype"_a, "shape"_a,
           nb::sig("def add_input(self, name: str, dtype: str | numpy.typing.DTypeLike, shape: typing.Sequence[int]) -> Tensor"),
           "A network input; -1 in `shape` marks a dynamic dim.")
      .def("add_constant", [](nb::handle self, nb::handle array, const std::string& name) {
        HostArrayArg arg = host_array_from_python(array, "add_constant '" + name + "'");
        HostArray copy = unwrap(HostArray::copy_of(arg.view));
        return tensor_object(self, net_of(self).get().add_constant(std::move(copy), name));
      }, "array"_a, "name"_a = "", nb::sig("def add_constant(self, array: numpy.typing.ArrayLike, name: str = '') -> Tensor"),
           "A constant holding a copy of `array`.")
      .def("weight", [](nb::handle self, const Weights& weights, const std::string& name) {
        return tensor_object(self, net_of(self).get().weight(weights, name));
      }, "weights"_a, "name"_a, "The tensor `name` of `weights` as a constant (zero-copy; the network keeps the mapping).")
      .def("set_tensor_name", [](nb::handle self, nb::handle tensor, const std::string& name) {
        net_of(self).get().set_tensor_name(tensor_of(self, tensor, "set_tensor_name"), name);
        net_of(self).check_status();
      }, "tensor"_a, "name"_a, nb::sig("def set_tensor_name(self, tensor: Tensor, name: str) -> None"))
      .def("mark_output", [](nb::handle self, nb::handle tensor, const std::string& name) {
        net_of(self).get().mark_output(tensor_of(self, tensor, "mark_output"), name);
        net_of(self).check_status();
      }, "tensor"_a, "name"_a = "", nb::sig("def mark_output(self, tensor: Tensor, name: str = '') -> None"),
           "Marks a network output; a non-empty `name` renames the tensor first.")
      .def_prop_ro("inputs", [](nb::handle self) {
        nb::list out;
        for (Tensor t : net_of(self).get().inputs()) out.append(nb::cast(PyTensor{nb::borrow(self), t}));
        return out;
      }, nb::sig("def inputs(self) -> list[Tensor]"))
      .def_prop_ro("outputs", [](nb::handle self) {
        nb::list out;
        for (Tensor t : net_of(self).get().outputs()) out.append(nb::cast(PyTensor{nb::borrow(self), t}));
        return out;
      }, nb::sig("def outputs(self) -> list[Tensor]"))
      .def("tensor", [](nb::handle self, const std::string& name) {
        return tensor_object(self, unwrap(net_of(self).get().find_tensor(name)));
      }, "name"_a, nb::sig("def tensor(self, name: str) -> Tensor"), "The tensor named `name`.")
      .def_prop_ro("num_layers", [](const PyNetwork& n) { return n.get().num_nodes(); })
      .def("to_text", [](const PyNetwork& n) { return to_text(n.get()); }, "one line per layer, with types and shapes")
      .def("to_json", [](const PyNetwork& n, int indent) { return to_json(n.get(), indent); }, "indent"_a = 2)
      .def("canonical_form", [](const PyNetwork& n) { return unwrap(canonical_form(n.get())); },
           "the text the structural hash is computed from (layer names do not enter it)")
      .def("structural_hash", [](const PyNetwork& n) { return unwrap(structural_hash(n.get())); },
           "SHA-256 of the canonical form: the graph's identity in cache keys")
      .def("__repr__", [](const PyNetwork& n) {
        return "<Network " + std::to_string(n.get().num_nodes()) + " layers, " + std::to_string(n.get().inputs().size()) +
               " input(s), " + std::to_string(n.get().outputs().size()) + " output(s)>";
      });
  bind_layers(network);
}

}  // namespace tensoracle::python
