// The plugin interface: what a plugin implements so that an engine can contain it.
//
//   // y = x * scale + bias, elementwise: one input, one output of the input's shape.
//   class ScaleAdd final : public tensoracle::Plugin {
//    public:
//     explicit ScaleAdd(float scale, float bias) : scale_(scale), bias_(bias) {}
//     tensoracle::PluginDeclaration declaration() const override {
//       return {{"scale_add", "1.0.0", "example"}, {{{"x"}}, {{"y"}}}, {}};
//     }
//     std::string parameters() const override { return encode(scale_, bias_); }
//     tensoracle::Status configure(const std::vector<tensoracle::PluginTensorDesc>& in,
//                                  const std::vector<tensoracle::PluginTensorDesc>&) override {
//       count_ = *in[0].shape.element_count();  // shapes are concrete here
//       return tensoracle::Status::ok();
//     }
//     tensoracle::Status enqueue(const tensoracle::PluginBuffers& b, void* workspace, void* stream) noexcept override {
//       return launch_scale_add(b.inputs[0], b.outputs[0], count_, scale_, bias_, stream);  // no allocation, no sync
//     }
//     bool has_cpu_implementation() const override { return true; }
//     tensoracle::Status run_on_host(const tensoracle::PluginBuffers& b, void* workspace) override { ... }
//    private: ...
//   };
//
//   void register_plugins(tensoracle::PluginRegistrar& registrar) {
//     registrar.add({{"scale_add", "1.0.0", "example"}, [](std::string_view parameters) { return ScaleAdd::decode(parameters); }});
//   }
//   TENSORACLE_PLUGIN_LIBRARY(register_plugins)  // exports tensoracle_register_plugins_v1
//
// The interface is split like TensorRT's IPluginV3:
//   core     declaration() (identity and PluginIO, plugin.h) and parameters(): the bytes the
//            plugin's creator makes it again from. An engine stores these bytes, so it restores
//            the plugin without the model package.
//   build    supports() (the type/format combinations of each input given the ones chosen for the
//            inputs before it), computed_output_shapes() (outputs whose rule is kComputed) and
//            workspace_bytes().
//   runtime  configure() for the chosen, concrete shapes and formats, then enqueue() on a CUDA
//            stream (cudaStream_t passed as void*), which must not allocate, synchronize or throw.
//            A plugin whose kernels live in its cubin bundle gets them first through
//            attach_kernels() (PluginKernelSource; docs/plugins.md).
//   cpu      optional: run_on_host() on host arrays, run by the cpu backend (the reference), so a
//            network with the plugin verifies without a GPU.
//
// Every call tensoracle makes into a plugin except enqueue() is guarded: an exception becomes a
// Status, and every error a plugin returns is reported prefixed with the plugin's display name
// ("plugin 'example::scale_add 1.0.0' configure: <its message>"). enqueue() is noexcept: a plugin
// that throws there terminates the process, as in TensorRT.
//
// Each Execution (and each direct run of the cpu backend) makes its own plugin object through the
// creator, so a plugin may keep what configure() computed in members without locking.
//
// Formats: the builder picks one allowed TypeFormat per input (asking supports() in input order),
// preferring what the producer already wrote, then its type in another format, then another type
// (fp32, fp16, bf16), and converts around the plugin (docs/plugins.md "Formats"). configure()
// gets the chosen TypeFormats; the buffers of enqueue() and run_on_host() are laid out so (an
// HWC8 input's padding channels hold zeros), and the plugin writes each output in its declared
// TypeFormat.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensoracle/plugin.h"
#include "tensoracle/status.h"
#include "tensoracle/types.h"

namespace tensoracle {

// One input or output as the plugin gets it: type, format (tensor_format.h) and logical shape
// ([N, C, H, W] in every format). At definition time (the network's layer method,
// computed_output_shapes) dims may be -1; at configure, workspace_bytes and enqueue they are
// concrete.
struct PluginTensorDesc {
  TypeFormat type_format;
  Dims shape;
};

// The buffers of one enqueue (device addresses) or run_on_host (host addresses), in the order of
// the declaration's inputs and outputs, laid out as configure() was told.
struct PluginBuffers {
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
};

// Where a plugin gets the kernels it declares (PluginKernels) from its library's cubin bundle. The
// cuda backend passes one to Plugin::attach_kernels for the current device; it stays valid while
// the plugin object lives.
class PluginKernelSource {
 public:
  // The kernel `name` (a symbol the plugin declares) from the bundle's cubin for the current
  // GPU: a cudaKernel_t. Launch it with cudaLaunchKernel(reinterpret_cast<const void*>(kernel),
  // ...), or cast it to CUfunction for cuLaunchKernel. An error names the kernel and the cubin.
  virtual Result<void*> kernel(std::string_view name) = 0;

 protected:
  ~PluginKernelSource() = default;
};

class Plugin {
 public:
  virtual ~Plugin() = default;

  // ---- core ----
  // Identity and PluginIO; must pass validate_plugin_declaration and name the identity the
  // plugin was registered under.
  virtual PluginDeclaration declaration() const = 0;
  // The serialized parameters: the creator's `parameters` argument that makes this plugin again.
  virtual std::string parameters() const = 0;

  // ---- build ----
  // Whether input `input` may be `candidate` when the inputs before it were given `chosen`
  // (chosen.size() == input). Default: `candidate` is one of the declaration's allowed ones.
  virtual bool supports(int input, const TypeFormat& candidate, const std::vector<TypeFormat>& chosen) const {
    (void)chosen;
    const std::vector<PluginInput> inputs = declaration().io.inputs;
    if (input < 0 || static_cast<size_t>(input) >= inputs.size()) return false;
    for (const TypeFormat& allowed : inputs[static_cast<size_t>(input)].allowed)
      if (allowed == candidate) return true;
    return false;
  }
  // The shapes of the outputs whose rule is kComputed, in output order, for these inputs.
  // Default: an error (a plugin that declares computed outputs must compute them).
  virtual Result<std::vector<Dims>> computed_output_shapes(const std::vector<PluginTensorDesc>& inputs) const {
    (void)inputs;
    return Status(StatusCode::kUnsupported, "it declares computed output shapes but does not compute them");
  }
  // Device scratch memory enqueue() needs for these shapes (also the host scratch run_on_host
  // gets). Default: none.
  virtual Result<size_t> workspace_bytes(const std::vector<PluginTensorDesc>& inputs,
                                         const std::vector<PluginTensorDesc>& outputs) const {
    (void)inputs, (void)outputs;
    return size_t{0};
  }

  // ---- runtime ----
  // For a plugin that declares bundle kernels: called by the cuda backend before configure(), so
  // the plugin can fetch (and keep) the kernels enqueue() launches. Default: nothing to fetch.
  virtual Status attach_kernels(PluginKernelSource& kernels) {
    (void)kernels;
    return Status::ok();
  }
  // Called before enqueue/run_on_host whenever the shapes change; may allocate and fail.
  virtual Status configure(const std::vector<PluginTensorDesc>& inputs, const std::vector<PluginTensorDesc>& outputs) = 0;
  // Runs on `stream` (a cudaStream_t). `workspace` holds workspace_bytes() (nullptr when 0).
  // Asynchronous; allocates nothing, synchronizes nothing; an error is reported, not thrown.
  virtual Status enqueue(const PluginBuffers& buffers, void* workspace, void* stream) noexcept = 0;

  // ---- optional CPU implementation ----
  virtual bool has_cpu_implementation() const { return false; }
  // Runs on host arrays, synchronously; `workspace` is host memory of workspace_bytes().
  virtual Status run_on_host(const PluginBuffers& buffers, void* workspace) {
    (void)buffers, (void)workspace;
    return Status(StatusCode::kUnsupported, "it has no CPU implementation");
  }
};

// Makes a plugin from its serialized parameters: how a network's layer and an engine get one.
using PluginFactory = std::function<Result<std::unique_ptr<Plugin>>(std::string_view parameters)>;

struct PluginCreator {
  PluginCreator() = default;
  // `{identity, create}` keeps meaning "no bundle kernels" without a warning about the field left out.
  PluginCreator(PluginIdentity identity_, PluginFactory create_, PluginKernels bundle_ = {})
      : identity(std::move(identity_)), create(std::move(create_)), bundle(std::move(bundle_)) {}

  PluginIdentity identity;
  PluginFactory create;
  // What every plugin this creator makes needs from its cubin bundle, whatever the parameters
  // (empty: no kernels from a bundle). Stated here, not only in declaration(), so that
  // `tensoracle bundle inspect --plugin LIB` can check a library against its bundle without
  // knowing parameters to make a plugin with; create_plugin refuses a plugin whose declaration()
  // says otherwise.
  PluginKernels bundle;
};

// The version of this interface (the layout of Plugin, PluginCreator and PluginRegistrar). A
// library built against another version is refused when it is loaded. Version 2 added
// PluginCreator::bundle; version 3 added Plugin::attach_kernels and PluginKernelSource.
inline constexpr uint32_t kPluginAbiVersion = 3;

// What a plugin library's entry point registers its creators with.
class PluginRegistrar {
 public:
  // First in the vtable, and never moved: a library of any version can ask it. False refuses the
  // library (the registry reports both versions).
  virtual bool accepts_abi(uint32_t library_abi_version) = 0;
  virtual void add(PluginCreator creator) = 0;
  // The library could not register its plugins; the load fails with `message`.
  virtual void fail(const std::string& message) = 0;

 protected:
  ~PluginRegistrar() = default;
};

// The one C entry point of a plugin library, versioned by its name.
#define TENSORACLE_PLUGIN_ENTRY_POINT "tensoracle_register_plugins_v1"
using TensoraclePluginEntryFn = void (*)(tensoracle::PluginRegistrar*);

// The interface version a library reports; defined differently only by tests of the refusal.
#ifndef TENSORACLE_PLUGIN_LIBRARY_ABI
#define TENSORACLE_PLUGIN_LIBRARY_ABI ::tensoracle::kPluginAbiVersion
#endif

// Defines the entry point of a plugin library around `register_fn`, a
// `void register_fn(tensoracle::PluginRegistrar&)`; an exception it throws fails the load.
#define TENSORACLE_PLUGIN_LIBRARY(register_fn)                                                          \
  extern "C" __attribute__((visibility("default"))) void tensoracle_register_plugins_v1(                \
      ::tensoracle::PluginRegistrar* registrar) noexcept {                                              \
    if (registrar == nullptr || !registrar->accepts_abi(TENSORACLE_PLUGIN_LIBRARY_ABI)) return;         \
    try {                                                                                               \
      register_fn(*registrar);                                                                          \
    } catch (const std::exception& e) {                                                                 \
      registrar->fail(std::string("registering its plugins threw: ") + e.what());                       \
    } catch (...) {                                                                                     \
      registrar->fail("registering its plugins threw an exception that is not a std::exception");      \
    }                                                                                                   \
  }

}  // namespace tensoracle
