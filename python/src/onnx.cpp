// ONNX import (include/tensoracle/onnx.h): network_from_onnx, check_onnx_model, onnx_supported_ops
// and onnx_engine_build. The importer is optional at build time (TENSORACLE_BUILD_ONNX); without
// it the functions still exist, so a caller's code imports the same names, and raise
// UnsupportedError saying the build has no importer.
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
#include "network.h"
#include "tensoracle/onnx.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tensoracle::python {
namespace {

#ifndef TENSORACLE_HAVE_ONNX
[[noreturn]] void no_importer(const char* function) {
  throw StatusError(Status(StatusCode::kUnsupported,
                           std::string(function) + ": this build of tensoracle has no ONNX importer (build it with "
                                                   "protobuf and onnx-ml.proto: TENSORACLE_BUILD_ONNX, docs/onnx.md)"));
}
#endif

// The network is copied into a Python Network of its own: its constants keep the parsed model's
// bytes alive (the copy onnx_engine_build makes relies on the same), so the Python object
// outlives the ImportedModel it came from.
struct PyImportedModel {
  ImportedModel model;
  nb::object network;  // a PyNetwork owning a copy of model.network
};

// The engine name the CLI gives an ONNX model: the file name without ".onnx".
std::string engine_name_of(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".onnx") == 0) name.resize(name.size() - 5);
  return name;
}

std::string describe(const OnnxInput& input) {
  std::string dims;
  for (size_t i = 0; i < input.shape.rank(); ++i) {
    if (i > 0) dims += "x";
    dims += input.dim_names.size() > i && !input.dim_names[i].empty() ? input.dim_names[i] : std::to_string(input.shape[i]);
  }
  return "<OnnxInput '" + input.name + "' " + std::string(data_type_name(input.dtype)) + " " + dims + ">";
}

}  // namespace

void bind_onnx(nb::module_& m) {
  nb::class_<OnnxInput>(m, "OnnxInput", "A graph input of an ONNX model: its type and shape (-1 for a symbolic or unknown dim).")
      .def_ro("name", &OnnxInput::name)
      .def_prop_ro("dtype", [](const OnnxInput& i) { return std::string(data_type_name(i.dtype)); })
      .def_prop_ro("shape", [](const OnnxInput& i) { return shape_tuple(i.shape); })
      .def_ro("dim_names", &OnnxInput::dim_names, "the symbol of each dim; '' for a fixed or unnamed dim")
      .def("__repr__", &describe);

  nb::class_<PyImportedModel>(m, "ImportedModel", "An imported ONNX model: its Network and graph inputs, and the file's identity.")
      .def_prop_ro("network", [](const PyImportedModel& i) { return nb::typed<nb::object, PyNetwork>(i.network); })
      .def_prop_ro("inputs", [](const PyImportedModel& i) { return i.model.inputs; })
      .def_prop_ro("path", [](const PyImportedModel& i) { return i.model.path; })
      .def_prop_ro("sha256", [](const PyImportedModel& i) { return i.model.sha256; }, "of the model file: enters the key manifest")
      .def_prop_ro("opset", [](const PyImportedModel& i) { return i.model.opset; }, "of the default domain")
      .def_prop_ro("producer", [](const PyImportedModel& i) { return i.model.producer; })
      .def("__repr__", [](const PyImportedModel& i) {
        return "<ImportedModel '" + i.model.path + "' opset " + std::to_string(i.model.opset) + ", " +
               std::to_string(i.model.network.num_nodes()) + " layers, " + std::to_string(i.model.inputs.size()) +
               " input(s)>";
      });

  nb::class_<OnnxNodeSupport>(m, "OnnxNodeSupport", "One node of check_onnx_model: supported, or the reason it is not.")
      .def_ro("name", &OnnxNodeSupport::name, "the node's name, or '#<index>' when it has none")
      .def_ro("op_type", &OnnxNodeSupport::op_type)
      .def_ro("domain", &OnnxNodeSupport::domain, "'' is the default domain ai.onnx")
      .def_ro("supported", &OnnxNodeSupport::supported)
      .def_ro("reason", &OnnxNodeSupport::reason)
      .def("__repr__", [](const OnnxNodeSupport& n) {
        return "<OnnxNodeSupport '" + n.name + "' " + n.op_type + (n.supported ? " supported" : " refused: " + n.reason) + ">";
      });

  nb::class_<OnnxSupportReport>(m, "OnnxSupportReport", "What check_onnx_model found: every node, and the model's own problems.")
      .def_ro("path", &OnnxSupportReport::path)
      .def_ro("opset", &OnnxSupportReport::opset)
      .def_ro("nodes", &OnnxSupportReport::nodes, "in the file's order")
      .def_ro("model_problems", &OnnxSupportReport::model_problems,
              "problems outside any node; when any, the model cannot be imported whatever its nodes are")
      .def_prop_ro("importable", [](const OnnxSupportReport& r) {
#ifdef TENSORACLE_HAVE_ONNX
        return r.importable();
#else
        (void)r;
        return false;
#endif
      })
      .def("__repr__", [](const OnnxSupportReport& r) {
        size_t refused = 0;
        for (const OnnxNodeSupport& n : r.nodes) refused += n.supported ? 0 : 1;
        return "<OnnxSupportReport '" + r.path + "' opset " + std::to_string(r.opset) + ", " + std::to_string(r.nodes.size()) +
               " node(s), " + std::to_string(refused) + " refused>";
      });

  m.def("network_from_onnx", [](nb::handle path) {
    const std::string p = path_from_python(path);
#ifdef TENSORACLE_HAVE_ONNX
    Result<ImportedModel> imported = Status::ok();
    {
      nb::gil_scoped_release release;
      imported = network_from_onnx(p);
    }
    PyImportedModel result{unwrap(std::move(imported)), nb::none()};
    result.network = nb::cast(PyNetwork::owning(result.model.network));
    return result;
#else
    (void)p;
    no_importer("network_from_onnx");
#endif
  }, "path"_a, nb::sig("def network_from_onnx(path: str | os.PathLike[str]) -> ImportedModel"),
        "Parses and imports an ONNX model file (opsets 13 and later; docs/onnx.md). Raises naming the first node "
        "that cannot be imported (its op type, domain and opset) or what is wrong with the file.");

  m.def("check_onnx_model", [](nb::handle path) {
    const std::string p = path_from_python(path);
#ifdef TENSORACLE_HAVE_ONNX
    Result<OnnxSupportReport> report = Status::ok();
    {
      nb::gil_scoped_release release;
      report = check_onnx_model(p);
    }
    return unwrap(std::move(report));
#else
    (void)p;
    no_importer("check_onnx_model");
#endif
  }, "path"_a, nb::sig("def check_onnx_model(path: str | os.PathLike[str]) -> OnnxSupportReport"),
        "Lists every node of a model and whether it can be imported, and why not, without stopping at the first "
        "(as `tensoracle onnx check`). Raises only when the file cannot be read or parsed.");

  m.def("onnx_supported_ops", []() -> std::vector<std::string> {
#ifdef TENSORACLE_HAVE_ONNX
    return onnx_supported_ops();
#else
    no_importer("onnx_supported_ops");
#endif
  }, "The op types of the default domain the importer converts, sorted.");

  m.def("onnx_engine_build", [](const PyImportedModel& imported, std::optional<std::string> name, nb::handle inputs,
                                std::optional<BuilderSettings> settings, std::string backend) {
#ifdef TENSORACLE_HAVE_ONNX
    PyEngineBuild b{unwrap(onnx_engine_build(imported.model, name ? *name : engine_name_of(imported.model.path))),
                    nb::none(), nb::none(), nb::none()};
    b.build.backend = std::move(backend);
    if (settings) b.build.settings = *settings;
    nb::object build = nb::cast(std::move(b));
    // The EngineBuild's own setter parses the mapping, so the accepted forms and errors are its.
    if (!inputs.is_none()) nb::setattr(build, "inputs", inputs);
    return nb::typed<nb::object, PyEngineBuild>(build);
#else
    (void)imported, (void)name, (void)inputs, (void)settings, (void)backend;
    no_importer("onnx_engine_build");
#endif
  }, "model"_a, "name"_a = nb::none(), nb::kw_only(), "inputs"_a = nb::none(), "settings"_a = nb::none(),
        "backend"_a = "cpu",
        nb::sig("def onnx_engine_build(model: ImportedModel, name: str | None = None, *, inputs: typing.Mapping[str, "
                "typing.Sequence[int] | ShapeRange | typing.Sequence[ShapeRange]] | None = None, settings: "
                "BuilderSettings | None = None, backend: str = 'cpu') -> EngineBuild"),
        "An EngineBuild defining the model's network (open_engine and build_serialized_engine take it): named `name` "
        "(default: the file name without .onnx, as `tensoracle build --onnx` names it), the file's SHA-256 and the "
        "importer's version in the key, the inputs declared when every input shape is static. `inputs` (as for "
        "EngineBuild) declares them instead: needed when a dim is symbolic.");
}

}  // namespace tensoracle::python
