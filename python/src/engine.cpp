// Engines, executions and open_engine (include/tensoracle/engine.h).
//
// An Execution binds caller-owned buffers (buffers.h) without copying them and keeps a reference
// to each bound Python object, so memory cannot be freed while bound. Before an enqueue after a
// change of shapes or bindings, every bound buffer is checked against its tensor's type and
// current shape, so a buffer too small for the shapes set later is refused, not overrun.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "buffers.h"
#include "build.h"
#include "errors.h"
#include "execution.h"
#include "tensoracle/engine.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tensoracle::python {
namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "'" : ", '") + name + "'";
  return out;
}

const char* memory_name(MemoryKind kind) { return kind == MemoryKind::kCuda ? "CUDA device memory" : "host memory"; }

}  // namespace

PyExecution::PyExecution(Engine engine, Execution execution)
    : engine_(std::move(engine)), execution_(std::move(execution)) {}

PyExecution::Claim::Claim(PyExecution& execution) : busy_(execution.busy_) {
  if (busy_.exchange(true, std::memory_order_acquire))
    throw StatusError(Status(StatusCode::kFailedPrecondition,
                             "this Execution is in use by another thread; an Execution serves one thread at a time "
                             "(create one per thread or concurrent stream)"));
}

void PyExecution::set_input_shapes(const std::map<std::string, Dims>& shapes) {
  Claim claim(*this);
  check(execution_.set_input_shapes(shapes));
  checked_ = false;
}

void PyExecution::bind(const std::string& name, nb::handle buffer) {
  Claim claim(*this);
  const IoTensor tensor = unwrap(engine_.tensor(name));
  const std::string what = std::string(tensor.is_input ? "input" : "output") + " '" + name + "'";
  BufferInfo info = buffer_from_python(buffer, "bind " + what);
  // An engine built for a GPU (its environment records one) runs there and binds device memory;
  // the others bind host memory.
  const MemoryKind wanted = engine_.file().environment().gpu ? MemoryKind::kCuda : MemoryKind::kHost;
  if (info.memory != wanted)
    fail("bind " + what + ": the engine runs on the " + engine_.backend() + " backend and needs " + memory_name(wanted) +
         "; the buffer is in " + memory_name(info.memory));
  if (!info.dtype || *info.dtype != tensor.dtype)
    fail("bind " + what + ": the buffer is " + (info.dtype ? std::string(data_type_name(*info.dtype)) : info.dtype_text) +
         ", the engine's tensor is " + std::string(data_type_name(tensor.dtype)));
  if (!info.contiguous) fail("bind " + what + ": the buffer is not contiguous (make it dense in C order first)");
  if (!tensor.is_input && info.readonly) fail("bind " + what + ": the buffer is read-only");
  if (tensor.format == TensorFormat::kHwc8)
    throw StatusError(Status(StatusCode::kUnsupported, "bind " + what + ": tensors of format '" +
                                                           std::string(tensor_format_name(tensor.format)) +
                                                           "' cannot be bound from Python yet (LINEAR and HWC can)"));
  if (info.data == nullptr) fail("bind " + what + ": the buffer's address is null (an empty tensor has no memory to bind)");
  check(execution_.bind(name, info.data));
  bound_[name] = Bound{std::move(info), tensor.dtype};
  checked_ = false;
}

void PyExecution::check_bindings() {
  if (checked_) return;
  std::vector<std::string> unbound;
  for (const IoTensor& t : engine_.io_table().tensors)
    if (bound_.count(t.name) == 0) unbound.push_back(t.name);
  if (!unbound.empty()) fail("enqueue: no buffer bound for " + quoted_list(unbound));
  for (const auto& [name, bound] : bound_) {
    const Dims shape = unwrap(execution_.tensor_shape(name));
    const int64_t needed = unwrap(shape.byte_size(bound.dtype));
    if (static_cast<uint64_t>(needed) > bound.buffer.nbytes)
      fail("enqueue: the buffer bound to '" + name + "' holds " + std::to_string(bound.buffer.nbytes) + " bytes, its " +
           "current shape " + shape.to_string() + " needs " + std::to_string(needed) + " (bind a larger buffer)");
  }
  checked_ = true;
}

void PyExecution::enqueue(void* stream) {
  Claim claim(*this);
  check_bindings();
  Status status;
  {
    nb::gil_scoped_release release;
    status = execution_.enqueue(stream);
  }
  check(status);
}

nb::dict PyExecution::run(nb::handle inputs) {
  Claim claim(*this);
  std::vector<HostArrayArg> arrays;
  NamedArrayViews views;
  const std::vector<std::string> names = engine_.input_names();
  for (nb::handle key : nb::iter(inputs.attr("keys")())) {
    const std::string name = nb::cast<std::string>(key);
    if (std::find(names.begin(), names.end(), name) == names.end())
      fail("run: '" + name + "' is not an input of the engine (inputs: " + quoted_list(names) + ")");
    HostArrayArg arg = host_array_from_python(inputs[key], "run: input '" + name + "'");
    views[name] = arg.view;
    arrays.push_back(std::move(arg));
  }
  Result<NamedArrays> outputs = Status::ok();
  {
    nb::gil_scoped_release release;
    outputs = execution_.run_on_host(views);
  }
  checked_ = false;  // run_on_host sets the input shapes
  return nb::cast<nb::dict>(numpy_from_named(unwrap(std::move(outputs))));
}

namespace {

void bind_io_tensor(nb::module_& m) {
  nb::class_<IoTensor>(m, "IoTensor", "A network input or output as the engine binds it.")
      .def_ro("name", &IoTensor::name)
      .def_ro("is_input", &IoTensor::is_input)
      .def_prop_ro("dtype", [](const IoTensor& t) { return std::string(data_type_name(t.dtype)); })
      .def_prop_ro(
          "format", [](const IoTensor& t) { return std::string(tensor_format_name(t.format)); },
          "memory layout: \"LINEAR\", \"HWC\" or \"HWC8\"")
      .def_ro("profiles", &IoTensor::profiles, "one ShapeRange per optimization profile")
      .def("__repr__", [](const IoTensor& t) {
        return "<IoTensor " + std::string(t.is_input ? "input" : "output") + " '" + t.name + "' " +
               std::string(data_type_name(t.dtype)) + " " + std::string(tensor_format_name(t.format)) + ">";
      });
}

void bind_execution(nb::module_& m) {
  nb::class_<PyExecution>(m, "Execution",
                          "An execution context of an engine: input shapes, caller-owned buffers, enqueue. Used by one "
                          "thread at a time; create one per thread or concurrent stream.")
      .def_prop_ro("profile", [](const PyExecution& e) { return e.execution().profile(); })
      .def("set_input_shape", [](PyExecution& e, const std::string& name, nb::handle shape) {
        e.set_input_shapes({{name, dims_from_python(shape, "set_input_shape '" + name + "'")}});
      }, "name"_a, "shape"_a, nb::sig("def set_input_shape(self, name: str, shape: typing.Sequence[int]) -> None"),
           "Sets one input's shape (within the profile's range).")
      .def("set_input_shapes", [](PyExecution& e, nb::handle shapes) {
        std::map<std::string, Dims> dims;
        for (nb::handle key : nb::iter(shapes.attr("keys")())) {
          const std::string name = nb::cast<std::string>(key);
          dims[name] = dims_from_python(shapes[key], "set_input_shapes '" + name + "'");
        }
        e.set_input_shapes(dims);
      }, "shapes"_a, nb::sig("def set_input_shapes(self, shapes: typing.Mapping[str, typing.Sequence[int]]) -> None"),
           "Sets several inputs' shapes at once, checked together (inputs sharing a batch dim).")
      .def("tensor_shape", [](const PyExecution& e, const std::string& name) {
        return shape_tuple(unwrap(e.execution().tensor_shape(name)));
      }, "name"_a, nb::sig("def tensor_shape(self, name: str) -> tuple[int, ...]"),
           "An input's shape, or an output's for the current input shapes.")
      .def("bind", &PyExecution::bind, "name"_a, "buffer"_a, nb::sig("def bind(self, name: str, buffer: typing.Any) -> None"),
           "Binds a caller-owned buffer to an input or output, without copying: a DLPack or CUDA-array-interface "
           "device tensor (PyTorch, CuPy) for cuda engines, a host array (NumPy, CPU tensors) for cpu engines. The "
           "buffer must be dense (C-contiguous) in the tensor's type and stay bound (a reference is kept) until "
           "rebound. Its size is checked against the tensor's shape at the next enqueue.")
      .def("enqueue", [](PyExecution& e, nb::handle stream) { e.enqueue(stream_from_python(stream)); }, "stream"_a = nb::none(),
           nb::sig("def enqueue(self, stream: int | typing.Any | None = None) -> None"),
           "Runs the engine on the bound buffers on `stream`: None, an int cudaStream_t, or an object with "
           "__cuda_stream__ / cuda_stream (torch.cuda.Stream) / ptr (cupy.cuda.Stream). cuda: launches work and "
           "returns; cpu: runs synchronously. The GIL is released.")
      .def("run", &PyExecution::run, "inputs"_a,
           nb::sig("def run(self, inputs: typing.Mapping[str, numpy.typing.ArrayLike]) -> dict[str, numpy.typing.NDArray[typing.Any]]"),
           "Host convenience, not the hot path: sets the input shapes from the arrays, copies them to the backend, "
           "runs, waits and returns every output as a NumPy array. Bound buffers are neither used nor changed.")
      .def("__repr__", [](const PyExecution& e) {
        return "<Execution of a " + e.engine().backend() + " engine, profile " + std::to_string(e.execution().profile()) + ">";
      });
}

void bind_engine_class(nb::module_& m) {
  nb::class_<Engine>(m, "Engine",
                     "A built engine: immutable, shareable between threads; each Execution keeps it alive.")
      .def_static("deserialize", [](nb::bytes data, const std::string& label, nb::handle plugins) {
        const PluginRegistry registry = plugins_from_python(plugins);
        const char* bytes = data.c_str();
        const size_t size = data.size();
        Result<Engine> engine = Status::ok();
        {
          nb::gil_scoped_release release;
          engine = Engine::deserialize(bytes, size, label, registry);
        }
        return unwrap(std::move(engine));
      }, "data"_a, "label"_a = "<memory>", "plugins"_a = nb::none(),
         nb::sig("def deserialize(data: bytes, label: str = '<memory>', plugins: typing.Sequence[str | os.PathLike[str]] "
                 "| None = None) -> Engine"),
         "Verifies, checks compatibility with this process and restores engine bytes. plugins: plugin libraries "
         "providing the plugins the engine needs (an engine that needs one not loaded is refused naming it and the "
         "library it was built with).")
      .def_static("open", [](nb::handle path, nb::handle plugins) {
        const std::string p = path_from_python(path);
        const PluginRegistry registry = plugins_from_python(plugins);
        Result<Engine> engine = Status::ok();
        {
          nb::gil_scoped_release release;
          engine = Engine::open(p, registry);
        }
        return unwrap(std::move(engine));
      }, "path"_a, "plugins"_a = nb::none(),
         nb::sig("def open(path: str | os.PathLike[str], plugins: typing.Sequence[str | os.PathLike[str]] | None = None) "
                 "-> Engine"),
         "Opens an engine file (as deserialize). plugins: plugin libraries providing the plugins the engine needs.")
      .def_prop_ro("backend", &Engine::backend)
      .def_prop_ro("io_table", [](const Engine& e) { return e.io_table().tensors; })
      .def_prop_ro("num_profiles", &Engine::num_profiles)
      .def_prop_ro("input_names", &Engine::input_names)
      .def_prop_ro("output_names", &Engine::output_names)
      .def_prop_ro("key_manifest", [](const Engine& e) { return std::string(e.file().manifest_json()); },
                   "the key manifest it was built for (canonical JSON)")
      .def("tensor", [](const Engine& e, const std::string& name) { return unwrap(e.tensor(name)); }, "name"_a)
      .def("create_execution", [](const Engine& e, size_t profile) {
        return PyExecution(e, unwrap(e.create_execution(profile)));
      }, "profile"_a = 0, "An execution in optimization profile `profile`; input shapes start at the profile's opt.")
      .def("__repr__", [](const Engine& e) {
        return "<Engine " + e.backend() + ", inputs " + quoted_list(e.input_names()) + ", outputs " +
               quoted_list(e.output_names()) + ">";
      });
}

void bind_open_engine(nb::module_& m) {
  nb::class_<OpenedEngine>(m, "OpenedEngine", "An engine opened through the cache, with what the cache did.")
      .def_ro("engine", &OpenedEngine::engine)
      .def_ro("key", &OpenedEngine::key)
      .def_ro("engine_path", &OpenedEngine::engine_path, "empty when the engine lives only in memory")
      .def_ro("cache_hit", &OpenedEngine::cache_hit)
      .def_ro("built", &OpenedEngine::built)
      .def_ro("build_seconds", &OpenedEngine::build_seconds)
      .def_ro("explanation", &OpenedEngine::explanation,
              "why a hit or a miss (a miss names the fields in which the nearest cached engine differs)")
      .def_ro("warnings", &OpenedEngine::warnings)
      .def_ro("build_log", &OpenedEngine::build_log, "what the builder did to the network (the precision pass's lines)")
      .def("create_execution", [](const OpenedEngine& o, size_t profile) {
        return PyExecution(o.engine, unwrap(o.engine.create_execution(profile)));
      }, "profile"_a = 0, "engine.create_execution(profile)")
      .def("__repr__", [](const OpenedEngine& o) {
        return "<OpenedEngine key " + o.key.substr(0, 16) + (o.cache_hit ? " (cache hit)" : " (built)") + ">";
      });

  m.def("open_engine", [](const PyEngineBuild& b, const std::string& policy, nb::handle plugins,
                          std::optional<std::string> cache_dir, std::optional<uint64_t> max_cache_size) {
    const CachePolicy cache_policy = unwrap(parse_cache_policy(policy));
    CacheOptions options;
    if (cache_dir) options.directory = *cache_dir;
    options.max_size_bytes = max_cache_size;
    EngineBuild build = library_build(b);
    build.plugins = plugins_from_python(plugins);
    Result<OpenedEngine> opened = Status::ok();
    {
      nb::gil_scoped_release release;
      opened = open_engine(build, cache_policy, options);
    }
    return unwrap(std::move(opened));
  }, "build"_a, "policy"_a = "reuse", "plugins"_a = nb::none(), nb::kw_only(), "cache_dir"_a = nb::none(),
        "max_cache_size"_a = nb::none(),
        nb::sig("def open_engine(build: EngineBuild, policy: str = 'reuse', plugins: typing.Sequence[str | "
                "os.PathLike[str]] | None = None, *, cache_dir: str | None = None, max_cache_size: int | None = None) "
                "-> OpenedEngine"),
        "Opens the engine for `build` through the cache. policy: \"reuse\" (build when absent, rebuild a "
        "corrupt entry), \"rebuild\" or \"require-cached\". cache_dir: default $TENSORACLE_CACHE_DIR, else "
        "$XDG_CACHE_HOME/tensoracle, else ~/.cache/tensoracle. max_cache_size: bytes kept after a build (LRU "
        "eviction). plugins: plugin libraries whose plugins the graph's plugin layers use (docs/plugins.md).");
}

}  // namespace

void bind_engine(nb::module_& m) {
  bind_io_tensor(m);
  bind_execution(m);
  bind_engine_class(m);
  bind_open_engine(m);
}

}  // namespace tensoracle::python
