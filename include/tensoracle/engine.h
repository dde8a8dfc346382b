// Engines (a verified engine file with its backend's plan restored) and executions (one run
// context on caller-owned buffers).
//
//   TO_ASSIGN_OR_RETURN(OpenedEngine opened, open_engine(build, CachePolicy::kReuse));
//   TO_ASSIGN_OR_RETURN(Execution exec, opened.engine.create_execution());
//   TO_RETURN_IF_ERROR(exec.set_input_shape("image", {4, 3, 16, 16}));
//   TO_ASSIGN_OR_RETURN(Dims out_shape, exec.tensor_shape("probs"));
//   TO_RETURN_IF_ERROR(exec.bind("image", image_buffer));
//   TO_RETURN_IF_ERROR(exec.bind("probs", probs_buffer));
//   TO_RETURN_IF_ERROR(exec.enqueue(stream));
//
// Buffers are caller-owned and live in the backend's memory: device memory for "cuda", host
// memory for "cpu" (whose stream argument is ignored; it runs synchronously). Each tensor is dense
// in its I/O table type and format, with the shape set (inputs) or reported (outputs).
//
// Thread safety: an Engine is immutable and may be shared by any number of threads; it stays
// alive while any Execution made from it does. An Execution is used by one thread at a time
// (create one per thread or per concurrent stream).
//
// Memory: the CPU backend allocates its intermediate values inside enqueue; the GPU backend plans
// them at build time and enqueue allocates nothing. The API is the same for both.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tensoracle/array.h"
#include "tensoracle/engine_file.h"
#include "tensoracle/layer_timing.h"
#include "tensoracle/npy.h"
#include "tensoracle/plugin_registry.h"
#include "tensoracle/status.h"

namespace tensoracle {

class Execution;
namespace backends {
class ExecutionBackend;  // a backend's per-execution state (src/backends/backend.h)
}

class Engine {
 public:
  // Verifies (checksum first), checks compatibility with this process's environment (naming
  // every reason it cannot run here) and restores the backend's plan. `plugins` must hold every
  // plugin the engine needs (EngineFile::required_plugins), at the recorded version: a missing
  // one is refused naming it and the library it was built with (plugin_registry.h).
  static Result<Engine> deserialize(const void* data, size_t size, const std::string& label = "<memory>",
                                    const PluginRegistry& plugins = PluginRegistry());
  static Result<Engine> open(const std::string& path, const PluginRegistry& plugins = PluginRegistry());
  static Result<Engine> from_file(EngineFile file, const PluginRegistry& plugins = PluginRegistry());

  const EngineFile& file() const;
  const std::string& backend() const;  // the backend that built it (and restored it here)
  const IoTable& io_table() const;
  size_t num_profiles() const;
  // The I/O table entry `name`; errors list the engine's tensors.
  Result<IoTensor> tensor(const std::string& name) const;
  std::vector<std::string> input_names() const;   // binding order
  std::vector<std::string> output_names() const;  // binding order

  // An execution in optimization profile `profile`; input shapes start at the profile's opt.
  Result<Execution> create_execution(size_t profile = 0) const;

  // Checks an input array before any of its data is read: `name` is an input, `dtype` its type,
  // `shape` within optimization profile `profile` (errors as set_input_shape's).
  Status check_input(const std::string& name, DataType dtype, const Dims& shape, size_t profile = 0) const;
  // Reads exactly the engine's inputs from an array file (read_named_arrays; npy.h): other arrays
  // (references kept beside the inputs) are skipped unread, each input is checked with
  // check_input, and the data read is bounded by the profile's max shapes, so a file that
  // declares or inflates to more is refused before anything is allocated.
  ArrayReadOptions input_read_options(size_t profile = 0) const;

  struct Impl;

 private:
  explicit Engine(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

class Execution {
 public:
  Execution(Execution&&) noexcept;
  Execution& operator=(Execution&&) noexcept;
  ~Execution();

  size_t profile() const { return profile_; }
  // Sets an input's shape; each dim must lie within the profile's [min, max], else the error names
  // the input, the dim, the value and the range. The inputs' shapes must also fit together (the
  // network's shape inference runs on all of them); nothing changes when they do not.
  //
  // Setting a shape configures no layer: the layers (tactics, a plugin's configure) are
  // configured for the input shapes at the next enqueue, run_on_host or profile_layers, once the
  // caller has set every input it changes, however many calls that took. A plugin that checks one
  // input against another (x and b of the same shape) therefore sees both new shapes, and what
  // such a check refuses is reported by that call, not here.
  Status set_input_shape(const std::string& name, const Dims& shape);
  // Several inputs at once, checked together: how to change a dim that inputs share (token ids
  // and their mask both [batch, seq]), which one input at a time could not.
  Status set_input_shapes(const std::map<std::string, Dims>& shapes);
  // The current shape of an input, or of an output for the current input shapes.
  Result<Dims> tensor_shape(const std::string& name) const;
  // Binds a caller-owned buffer (non-null) to an input or output.
  Status bind(const std::string& name, void* address);
  // Runs the engine on the bound buffers. Errors name any unbound tensor.
  //
  // The first enqueue after a shape change configures the layers for the new shapes (see
  // set_input_shape): its errors (a plugin's configure refusing the shapes) are reported here.
  //
  // cuda engines: bindings are device addresses, `stream` a cudaStream_t. The first enqueue after
  // a shape change also prepares the steps (tactic initialization, which may allocate and
  // synchronize); after that, enqueue only launches work (no allocation, synchronization or
  // logging) while shapes stay the same. The first enqueue after a shape or binding change
  // captures the engine into a CUDA graph (not on the legacy default stream, nullptr), later ones
  // replay it. TENSORACLE_CUDA_GRAPHS=0 turns graphs off.
  Status enqueue(void* stream = nullptr);
  // Whether the last enqueue launched the captured CUDA graph (false before any enqueue, for a
  // step that cannot be captured, with TENSORACLE_CUDA_GRAPHS=0, and for the cpu backend): how
  // a timing says which mode it measured.
  bool last_enqueue_used_graph() const;
  // Times every step of the engine separately on the bound buffers (median of `iterations`
  // after one warm-up run, outside any graph, synchronizing after each): where the time goes.
  // kUnsupported for the cpu backend.
  Result<std::vector<LayerTiming>> profile_layers(void* stream = nullptr, int iterations = 20);
  // Convenience for tools and tests, not the hot path: sets every input's shape from `inputs`
  // (host arrays by name), copies them to the backend's memory, runs, waits and returns every
  // output as a host array. Bindings made with bind() are not used or changed.
  Result<NamedArrays> run_on_host(const NamedArrayViews& inputs);

 private:
  friend class Engine;
  Execution(std::shared_ptr<const Engine::Impl> engine, size_t profile, std::unique_ptr<backends::ExecutionBackend> backend);

  std::shared_ptr<const Engine::Impl> engine_;
  size_t profile_ = 0;
  std::unique_ptr<backends::ExecutionBackend> backend_;
  std::map<std::string, Dims> input_shapes_;
  std::map<std::string, Dims> output_shapes_;
  std::map<std::string, void*> bindings_;
};

}  // namespace tensoracle

// open_engine and OpenedEngine (implemented by the cache, src/cache/) are declared in
// open_engine.h; included here so that callers of open_engine need only this header.
#include "tensoracle/open_engine.h"
