// BuilderSettings, ShapeRange, InputDeclaration, EngineBuild, build_serialized_engine and model
// packages (include/tensoracle/build.h, package.h).
#include "build.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/map.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "callbacks.h"
#include "errors.h"
#include "network.h"
#include "tensoracle/package.h"
#include "tensoracle/safetensors.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tensoracle::python {
namespace {

GraphFunction python_graph(std::shared_ptr<SharedPythonObject> fn) {
  return [fn = std::move(fn)](Network& network, const Weights& weights) -> Status {
    nb::gil_scoped_acquire gil;
    nb::object borrowed = borrow_network(network);
    Status status;
    try {
      nb::object returned = fn->get()(borrowed, weights);
      if (!returned.is_none())
        status = Status(StatusCode::kInvalidArgument,
                        "graph function " + python_repr(fn->get()) + " returned " + python_repr(returned) +
                            "; it should mark the network's outputs (network.mark_output) and return None");
    } catch (nb::python_error& error) {
      status = status_from_python_error(error, "graph function " + python_repr(fn->get()));
    }
    end_borrow(borrowed);
    return status;
  };
}

BuildProgressFn python_progress(std::shared_ptr<SharedPythonObject> fn) {
  return [fn = std::move(fn)](const std::string& message) {
    nb::gil_scoped_acquire gil;
    try {
      fn->get()(message);
    } catch (nb::python_error& error) {
      // A progress callback cannot stop the build; its error is reported like one in __del__.
      error.discard_as_unraisable("tensoracle build progress callback");
    }
  };
}

ShapeRange shape_range_from_python(nb::handle value, const std::string& what) {
  if (nb::isinstance<ShapeRange>(value)) return nb::cast<ShapeRange>(value);
  return ShapeRange::fixed(dims_from_python(value, what));
}

// An input's profiles: a shape (one fixed profile), a ShapeRange, or a sequence of ShapeRanges.
std::vector<ShapeRange> profiles_from_python(nb::handle value, const std::string& what) {
  if (nb::isinstance<ShapeRange>(value)) return {nb::cast<ShapeRange>(value)};
  std::vector<ShapeRange> profiles;
  bool ranges = false;
  for (nb::handle item : nb::iter(value)) ranges = ranges || nb::isinstance<ShapeRange>(item);
  if (!ranges) return {shape_range_from_python(value, what)};
  size_t index = 0;
  for (nb::handle item : nb::iter(value)) {
    if (!nb::isinstance<ShapeRange>(item))
      fail(what + ": profile " + std::to_string(index) + " is " + python_repr(item) + ", not a ShapeRange");
    profiles.push_back(nb::cast<ShapeRange>(item));
    ++index;
  }
  return profiles;
}

void add_input(PyEngineBuild& b, const std::string& name, nb::handle shapes, nb::handle dtype) {
  std::optional<DataType> type;
  if (!dtype.is_none()) type = data_type_from_python(dtype, "input '" + name + "' dtype");
  b.build.add_input(name, profiles_from_python(shapes, "input '" + name + "'"), type);
}

void set_inputs(PyEngineBuild& b, nb::handle inputs) {
  b.build.inputs.clear();
  for (nb::handle key : nb::iter(inputs.attr("keys")())) add_input(b, nb::cast<std::string>(key), inputs[key], nb::none());
}

void set_weights(PyEngineBuild& b, nb::object weights) {
  b.build.weights.reset();
  b.build.weights_path.clear();
  if (nb::isinstance<Weights>(weights)) {
    b.build.weights = nb::cast<Weights>(weights);
  } else if (!weights.is_none()) {
    if (!is_path(weights)) fail("weights: expected a path or a tensoracle.Weights, got " + python_repr(weights));
    b.build.weights_path = path_from_python(weights);
  }
  b.weights = std::move(weights);
}

void set_graph(PyEngineBuild& b, nb::object graph) {
  if (!graph.is_none() && !PyCallable_Check(graph.ptr())) fail("graph: expected a callable (network, weights) -> None, got " + python_repr(graph));
  b.graph = std::move(graph);
  b.build.graph = nullptr;
}

std::string describe(const ShapeRange& r) {
  if (r.min == r.max && r.min == r.opt) return r.min.to_string();
  return r.min.to_string() + ":" + r.opt.to_string() + ":" + r.max.to_string();
}

void bind_shapes(nb::module_& m) {
  nb::class_<ShapeRange>(m, "ShapeRange", "The shapes an input accepts in one optimization profile (min <= opt <= max).")
      .def("__init__", [](ShapeRange* self, nb::handle min, nb::handle opt, nb::handle max) {
        new (self) ShapeRange{dims_from_python(min, "min"), dims_from_python(opt, "opt"), dims_from_python(max, "max")};
      }, "min"_a, "opt"_a, "max"_a,
           nb::sig("def __init__(self, min: typing.Sequence[int], opt: typing.Sequence[int], max: typing.Sequence[int]) -> None"))
      .def_static("fixed", [](nb::handle shape) { return ShapeRange::fixed(dims_from_python(shape, "shape")); }, "shape"_a,
                  nb::sig("def fixed(shape: typing.Sequence[int]) -> ShapeRange"), "min = opt = max = shape")
      .def_prop_ro("min", [](const ShapeRange& r) { return shape_tuple(r.min); })
      .def_prop_ro("opt", [](const ShapeRange& r) { return shape_tuple(r.opt); })
      .def_prop_ro("max", [](const ShapeRange& r) { return shape_tuple(r.max); })
      .def("__eq__", [](const ShapeRange& a, const ShapeRange& b) { return a == b; })
      .def("__repr__", [](const ShapeRange& r) { return "<ShapeRange " + describe(r) + ">"; });

  nb::class_<InputDeclaration>(m, "InputDeclaration", "A network input: its type (checked when given) and one range per profile.")
      .def_ro("name", &InputDeclaration::name)
      .def_prop_ro("dtype", [](const InputDeclaration& d) {
        return d.dtype ? std::optional<std::string>(data_type_name(*d.dtype)) : std::nullopt;
      })
      .def_ro("profiles", &InputDeclaration::profiles)
      .def("__repr__", [](const InputDeclaration& d) {
        std::string text = "<InputDeclaration '" + d.name + "'";
        for (const ShapeRange& r : d.profiles) text += " " + describe(r);
        return text + ">";
      });
}

// "fp32" | "fp16" | "bf16" (ValueError otherwise, naming the value).
DataType precision_from_python(const std::string& value) {
  if (value == "fp32") return DataType::kFloat32;
  if (value == "fp16") return DataType::kFloat16;
  if (value == "bf16") return DataType::kBFloat16;
  throw nb::value_error(("precision '" + value + "': expected 'fp32', 'fp16' or 'bf16'").c_str());
}

void bind_settings(nb::module_& m) {
  nb::class_<BuilderSettings>(m, "BuilderSettings",
                              "Settings that can change the engine; every one enters the key manifest. fp32 math "
                              "never uses TF32.")
      .def("__init__", [](BuilderSettings* self, std::optional<uint64_t> workspace_limit_bytes,
                          std::optional<int> optimization_level, std::optional<int> timing_iterations,
                          std::optional<int> auxiliary_streams, std::optional<bool> deterministic_replay,
                          std::optional<std::string> tactic_record, std::optional<std::string> precision,
                          std::optional<std::vector<std::string>> keep_fp32,
                          std::optional<bool> fp8_fast_accumulation) {
        auto* s = new (self) BuilderSettings();
        if (precision) s->precision = precision_from_python(*precision);
        s->keep_fp32 = std::move(keep_fp32);
        if (workspace_limit_bytes) s->workspace_limit_bytes = *workspace_limit_bytes;
        if (optimization_level) s->optimization_level = *optimization_level;
        if (timing_iterations) s->timing_iterations = *timing_iterations;
        if (auxiliary_streams) s->auxiliary_streams = *auxiliary_streams;
        if (deterministic_replay) s->deterministic_replay = *deterministic_replay;
        if (tactic_record) s->tactic_record = *tactic_record;
        if (fp8_fast_accumulation) s->fp8_fast_accumulation = *fp8_fast_accumulation;
      }, nb::kw_only(), "workspace_limit_bytes"_a = nb::none(), "optimization_level"_a = nb::none(),
           "timing_iterations"_a = nb::none(), "auxiliary_streams"_a = nb::none(), "deterministic_replay"_a = nb::none(),
           "tactic_record"_a = nb::none(), "precision"_a = nb::none(), "keep_fp32"_a = nb::none(),
           "fp8_fast_accumulation"_a = nb::none(), "Unset arguments keep the library's defaults.")
      .def_rw("workspace_limit_bytes", &BuilderSettings::workspace_limit_bytes)
      .def_rw("optimization_level", &BuilderSettings::optimization_level, "0..5: how hard to search tactics")
      .def_rw("timing_iterations", &BuilderSettings::timing_iterations, "per tactic candidate when tactics are timed")
      .def_rw("auxiliary_streams", &BuilderSettings::auxiliary_streams,
              "cuda: 1 lets independent branches run on a second stream; 0 runs every layer on the caller's stream")
      .def_rw("deterministic_replay", &BuilderSettings::deterministic_replay,
              "replay the tactic choices recorded in tactic_record (an engine file) instead of timing")
      .def_rw("tactic_record", &BuilderSettings::tactic_record)
      .def_rw("fp8_fast_accumulation", &BuilderSettings::fp8_fast_accumulation,
              "cuda: Q/DQ-fused fp8 matrix products may accumulate in cuBLASLt's fast mode (faster, about 14 bits "
              "kept across the sum instead of fp32; docs/quantization.md)")
      .def_prop_rw("precision", [](const BuilderSettings& s) { return std::string(data_type_name(s.precision)); },
                   [](BuilderSettings& s, const std::string& value) { s.precision = precision_from_python(value); },
                   "'fp32' (the network's own types), 'fp16' or 'bf16': the precision pass converts an fp32 network's "
                   "layers, inputs and outputs staying fp32 (docs/precision.md)")
      .def_rw("keep_fp32", &BuilderSettings::keep_fp32,
              "with precision fp16/bf16: the op kinds that stay fp32 ('softmax', 'reduce.sum', ...); None: the "
              "default keep-list")
      .def("to_manifest", &BuilderSettings::to_manifest, "the settings as the key manifest records them")
      .def("__repr__", [](const BuilderSettings& s) {
        std::string text = "<BuilderSettings";
        for (const auto& [key, value] : s.to_manifest()) text += " " + key + "=" + value;
        return text + ">";
      });
}

void bind_engine_build(nb::module_& m) {
  nb::class_<PyEngineBuild>(m, "EngineBuild",
                            "What to build an engine from: name, graph function, graph version, weights, "
                            "input shape ranges per optimization profile, builder settings and backend.")
      .def("__init__", [](PyEngineBuild* self, std::string name, nb::object graph, std::string graph_version,
                          nb::object weights, nb::object inputs, std::optional<BuilderSettings> settings,
                          std::string backend, nb::object progress, bool quiet) {
        auto* b = new (self) PyEngineBuild{EngineBuild{}, nb::none(), nb::none(), nb::none()};
        b->build.name = std::move(name);
        b->build.graph_version = std::move(graph_version);
        b->build.backend = std::move(backend);
        b->build.quiet = quiet;
        if (settings) b->build.settings = *settings;
        set_graph(*b, std::move(graph));
        set_weights(*b, std::move(weights));
        b->progress = std::move(progress);
        if (!inputs.is_none()) set_inputs(*b, inputs);
      }, nb::kw_only(), "name"_a = "", "graph"_a = nb::none(), "graph_version"_a = "", "weights"_a = nb::none(),
           "inputs"_a = nb::none(), "settings"_a = nb::none(), "backend"_a = "cpu", "progress"_a = nb::none(),
           "quiet"_a = false,
           nb::sig("def __init__(self, *, name: str = '', graph: typing.Callable[[Network, Weights], None] | None = None, "
                   "graph_version: str = '', weights: str | os.PathLike[str] | Weights | None = None, inputs: "
                   "typing.Mapping[str, typing.Sequence[int] | ShapeRange | typing.Sequence[ShapeRange]] | None = None, "
                   "settings: BuilderSettings | None = None, backend: str = 'cpu', progress: typing.Callable[[str], None] "
                   "| None = None, quiet: bool = False) -> None"),
           "inputs maps each network input (in the network's order) to a fixed shape, a ShapeRange, or one ShapeRange "
           "per optimization profile; add_input also takes a type.")
      .def_prop_rw("name", [](const PyEngineBuild& b) { return b.build.name; }, [](PyEngineBuild& b, std::string v) { b.build.name = std::move(v); })
      .def_prop_rw("graph_version", [](const PyEngineBuild& b) { return b.build.graph_version; },
                   [](PyEngineBuild& b, std::string v) { b.build.graph_version = std::move(v); })
      .def_prop_rw("backend", [](const PyEngineBuild& b) { return b.build.backend; }, [](PyEngineBuild& b, std::string v) { b.build.backend = std::move(v); },
                   "\"cpu\" (the reference) or \"cuda\"")
      .def_prop_rw("quiet", [](const PyEngineBuild& b) { return b.build.quiet; }, [](PyEngineBuild& b, bool v) { b.build.quiet = v; })
      .def_prop_rw("graph", [](const PyEngineBuild& b) { return b.graph; }, &set_graph,
                   nb::for_getter(nb::sig("def graph(self) -> typing.Callable[[Network, Weights], None] | None")),
                   nb::for_setter(nb::arg("graph").none()), nb::for_setter(nb::sig("def graph(self, graph: typing.Callable[[Network, Weights], None] | None, /) -> None")),
                   "the Python graph function; None when unset or when the graph is a model package's C++ function")
      .def_prop_rw("weights", [](const PyEngineBuild& b) { return b.weights; }, &set_weights,
                   nb::for_getter(nb::sig("def weights(self) -> str | os.PathLike[str] | Weights | None")),
                   nb::for_setter(nb::arg("weights").none()), nb::for_setter(nb::sig("def weights(self, weights: str | os.PathLike[str] | Weights | None, /) -> None")))
      .def_prop_rw("progress", [](const PyEngineBuild& b) { return b.progress; },
                   [](PyEngineBuild& b, nb::object v) { b.progress = std::move(v); },
                   nb::for_getter(nb::sig("def progress(self) -> typing.Callable[[str], None] | None")),
                   nb::for_setter(nb::arg("progress").none()), nb::for_setter(nb::sig("def progress(self, progress: typing.Callable[[str], None] | None, /) -> None")),
                   "receives one message per layer; errors it raises are reported as unraisable, not stopping the build")
      .def_prop_rw("settings", [](PyEngineBuild& b) -> BuilderSettings& { return b.build.settings; },
                   [](PyEngineBuild& b, const BuilderSettings& s) { b.build.settings = s; }, nb::rv_policy::reference_internal)
      .def_prop_rw("inputs", [](const PyEngineBuild& b) { return b.build.inputs; }, &set_inputs,
                   nb::for_getter(nb::sig("def inputs(self) -> list[InputDeclaration]")),
                   nb::for_setter(nb::sig("def inputs(self, inputs: typing.Mapping[str, typing.Sequence[int] | ShapeRange | "
                                          "typing.Sequence[ShapeRange]], /) -> None")),
                   "the declared inputs; assigning a mapping (as for the constructor) replaces them all")
      .def("add_input", [](PyEngineBuild& b, const std::string& name, nb::handle shapes, nb::handle dtype) -> PyEngineBuild& {
        add_input(b, name, shapes, dtype);
        return b;
      }, "name"_a, "shapes"_a, "dtype"_a = nb::none(), nb::rv_policy::reference,
           nb::sig("def add_input(self, name: str, shapes: typing.Sequence[int] | ShapeRange | typing.Sequence[ShapeRange], "
                   "dtype: str | numpy.typing.DTypeLike | None = None) -> EngineBuild"),
           "Adds an input: a fixed shape, a ShapeRange, or one ShapeRange per profile; returns the build.")
      .def("__repr__", [](const PyEngineBuild& b) {
        return "<EngineBuild '" + b.build.name + "' version '" + b.build.graph_version + "' on " + b.build.backend + ", " +
               std::to_string(b.build.inputs.size()) + " input(s)>";
      });

  m.def("build_serialized_engine", [](const PyEngineBuild& b, nb::handle plugins) {
    EngineBuild build = library_build(b);
    build.plugins = plugins_from_python(plugins);
    Result<std::string> bytes = Status::ok();
    {
      nb::gil_scoped_release release;
      bytes = build_serialized_engine(build);
    }
    const std::string engine = unwrap(std::move(bytes));
    return nb::bytes(engine.data(), engine.size());
  }, "build"_a, "plugins"_a = nb::none(),
        nb::sig("def build_serialized_engine(build: EngineBuild, plugins: typing.Sequence[str | os.PathLike[str]] | None "
                "= None) -> bytes"),
        "Builds the engine file's bytes without the cache (Engine.deserialize opens them). plugins: plugin libraries "
        "whose plugins the graph's plugin layers use (docs/plugins.md).");
}

void bind_packages(nb::module_& m) {
  nb::class_<ModelGraphInfo>(m, "ModelGraphInfo", "One graph of a model package.")
      .def_ro("name", &ModelGraphInfo::name)
      .def_ro("graph_version", &ModelGraphInfo::graph_version)
      .def_ro("description", &ModelGraphInfo::description)
      .def_ro("default_weights", &ModelGraphInfo::default_weights)
      .def_ro("default_inputs", &ModelGraphInfo::default_inputs)
      .def("__repr__", [](const ModelGraphInfo& g) { return "<ModelGraphInfo '" + g.name + "' version '" + g.graph_version + "'>"; });

  nb::class_<ModelPackage>(m, "ModelPackage",
                           "A model package: a shared library registering C++ graph functions (docs/model-packages.md). "
                           "Its library stays loaded for the life of the process.")
      .def_static("load", [](nb::handle path) {
        const std::string p = path_from_python(path);
        nb::gil_scoped_release release;
        return unwrap(ModelPackage::load(p));
      }, "path"_a, nb::sig("def load(path: str | os.PathLike[str]) -> ModelPackage"))
      .def_prop_ro("path", &ModelPackage::path)
      .def_prop_ro("name", &ModelPackage::name)
      .def_prop_ro("graphs", &ModelPackage::graphs)
      .def("graph", [](const ModelPackage& p, const std::string& name) { return unwrap(p.graph(name)); }, "name"_a)
      .def("engine_build", [](const ModelPackage& p, const std::string& name) {
        PyEngineBuild b{unwrap(p.engine_build(name)), nb::none(), nb::none(), nb::none()};
        if (!b.build.weights_path.empty()) b.weights = nb::str(b.build.weights_path.c_str());
        return b;
      }, "name"_a, "An EngineBuild with the package's defaults for graph `name` (its C++ graph function, version, "
                   "weights and inputs), to adjust before building.")
      .def("__repr__", [](const ModelPackage& p) {
        return "<ModelPackage '" + p.name() + "' from '" + p.path() + "', " + std::to_string(p.graphs().size()) + " graph(s)>";
      });
}

}  // namespace

EngineBuild library_build(const PyEngineBuild& b) {
  EngineBuild build = b.build;
  if (!b.graph.is_none()) build.graph = python_graph(share(b.graph));
  if (!b.progress.is_none()) build.progress = python_progress(share(b.progress));
  return build;
}

PluginRegistry plugins_from_python(nb::handle plugins) {
  PluginRegistry registry;
  if (plugins.is_none()) return registry;
  for (nb::handle library : plugins) {
    const std::string path = path_from_python(library);
    Status loaded = Status::ok();
    {
      nb::gil_scoped_release release;
      loaded = registry.load_library(path);
    }
    check(loaded);
  }
  return registry;
}

void bind_build(nb::module_& m) {
  bind_shapes(m);
  bind_settings(m);
  bind_engine_build(m);
  bind_packages(m);
}

}  // namespace tensoracle::python
