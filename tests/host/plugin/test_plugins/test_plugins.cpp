// The test plugin library (built several ways by tests/host/plugin/CMakeLists.txt):
//   test::scale_add  (scale_add.h) y = x * scale + b; CPU, and CUDA in CUDA builds
//   test::flatten    y = x reshaped to [d0, d1*d2*...]: a computed output shape; CPU only
//   test::misbehave  y = x, but misbehaves as its parameter says: "throw_create", "fail_create",
//                    "throw_configure", "fail_run", "throw_run"; CPU only
//   test::gpu_only   y = x with no CPU implementation
// It uses only the header-only part of the plugin interface: it links no tensoracle library.
// TEST_PLUGIN_VERSION (default "1.0.0") is scale_add's version; TEST_PLUGIN_BUILD_TAG changes the
// library's bytes without changing what it registers. TEST_PLUGIN_BUNDLE_KERNEL makes scale_add
// declare that kernel of its cubin bundle on the architectures TEST_PLUGIN_BUNDLE_SMS lists (the
// cubin-backed builds, tensoracle_add_cubin_plugin) and, in CUDA builds, launch it from there
// (attach_kernels); TEST_PLUGIN_MISSING_KERNEL declares a second one, which its bundle lacks.
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "scale_add.h"
#include "tensoracle/plugin_runtime.h"

#ifndef TEST_PLUGIN_VERSION
#define TEST_PLUGIN_VERSION "1.0.0"
#endif
#ifndef TEST_PLUGIN_BUILD_TAG
#define TEST_PLUGIN_BUILD_TAG "original"
#endif

extern "C" __attribute__((visibility("default"))) const char tensoracle_test_plugin_build_tag[] = TEST_PLUGIN_BUILD_TAG;

namespace tensoracle_test_plugins {
namespace {

using tensoracle::DataType;
using tensoracle::Dims;
using tensoracle::OutputShapeRule;
using tensoracle::Plugin;
using tensoracle::PluginBuffers;
using tensoracle::PluginDeclaration;
using tensoracle::PluginIdentity;
using tensoracle::PluginInput;
using tensoracle::PluginOutput;
using tensoracle::PluginTensorDesc;
using tensoracle::Result;
using tensoracle::Status;
using tensoracle::StatusCode;

// fp32/LINEAR inputs and outputs; an output copies input 0's shape unless told otherwise.
PluginInput input(const char* name) { return PluginInput{name, {tensoracle::TypeFormat{}}}; }
PluginOutput output(const char* name, OutputShapeRule shape = OutputShapeRule::copy_input(0)) {
  return PluginOutput{name, tensoracle::TypeFormat{}, shape};
}

int64_t element_count(const Dims& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const PluginIdentity kScaleAdd{"scale_add", TEST_PLUGIN_VERSION, "test"};

// What scale_add needs from its bundle: declared by its creator and by every plugin it makes.
tensoracle::PluginKernels scale_add_bundle() {
  tensoracle::PluginKernels needs;
#ifdef TEST_PLUGIN_BUNDLE_KERNEL
  needs.kernels.push_back(TEST_PLUGIN_BUNDLE_KERNEL);
  for (int sm : {TEST_PLUGIN_BUNDLE_SMS}) needs.architectures.push_back(tensoracle::GpuArch{sm});
#endif
#ifdef TEST_PLUGIN_MISSING_KERNEL
  needs.kernels.push_back(TEST_PLUGIN_MISSING_KERNEL);
#endif
  return needs;
}
const PluginIdentity kFlatten{"flatten", "1.0.0", "test"};
const PluginIdentity kMisbehave{"misbehave", "1.0.0", "test"};
const PluginIdentity kGpuOnly{"gpu_only", "1.0.0", "test"};

class ScaleAdd final : public Plugin {
 public:
  explicit ScaleAdd(float scale) : scale_(scale) {}

  static Result<std::unique_ptr<Plugin>> create(std::string_view parameters) {
    if (parameters.size() != sizeof(float))
      return Status(StatusCode::kInvalidArgument,
                    "parameters must be one float (4 bytes), got " + std::to_string(parameters.size()) + " bytes");
    float scale = 0;
    std::memcpy(&scale, parameters.data(), sizeof scale);
    return std::unique_ptr<Plugin>(new ScaleAdd(scale));
  }

  PluginDeclaration declaration() const override {
    return {kScaleAdd, {{input("x"), input("b")}, {output("y")}}, scale_add_bundle()};
  }
  std::string parameters() const override { return std::string(reinterpret_cast<const char*>(&scale_), sizeof scale_); }

  Status configure(const std::vector<PluginTensorDesc>& inputs, const std::vector<PluginTensorDesc>&) override {
    if (inputs[0].shape != inputs[1].shape)
      return Status(StatusCode::kInvalidArgument, "x and b must have the same shape");
    count_ = element_count(inputs[0].shape);
    return Status::ok();
  }

#ifdef TEST_PLUGIN_BUNDLE_KERNEL
  Status attach_kernels(tensoracle::PluginKernelSource& kernels) override {
    Result<void*> kernel = kernels.kernel(TEST_PLUGIN_BUNDLE_KERNEL);
    if (!kernel.is_ok()) return kernel.status();
    kernel_ = *kernel;
    return Status::ok();
  }
#endif

  Status enqueue(const PluginBuffers& buffers, void*, void* stream) noexcept override {
#if defined(TEST_PLUGIN_HAS_CUDA) && defined(TEST_PLUGIN_BUNDLE_KERNEL)
    if (kernel_ == nullptr) return Status(StatusCode::kInternal, "enqueue before attach_kernels");
    const int error = launch_bundle_scale_add(kernel_, static_cast<const float*>(buffers.inputs[0]),
                                              static_cast<const float*>(buffers.inputs[1]),
                                              static_cast<float*>(buffers.outputs[0]), count_, scale_, stream);
    if (error != 0) return Status(StatusCode::kCudaError, "the bundle's scale_add kernel failed to launch: CUDA error " + std::to_string(error));
    return Status::ok();
#elif defined(TEST_PLUGIN_HAS_CUDA)
    const int error = launch_scale_add(static_cast<const float*>(buffers.inputs[0]), static_cast<const float*>(buffers.inputs[1]),
                                       static_cast<float*>(buffers.outputs[0]), count_, scale_, stream);
    if (error != 0) return Status(StatusCode::kCudaError, "the scale_add kernel failed to launch: CUDA error " + std::to_string(error));
    return Status::ok();
#else
    (void)buffers, (void)stream;
    return Status(StatusCode::kUnsupported, "this build of the test plugins has no CUDA implementation");
#endif
  }

  bool has_cpu_implementation() const override { return true; }
  Status run_on_host(const PluginBuffers& buffers, void*) override {
    const auto* x = static_cast<const float*>(buffers.inputs[0]);
    const auto* b = static_cast<const float*>(buffers.inputs[1]);
    auto* y = static_cast<float*>(buffers.outputs[0]);
    for (int64_t i = 0; i < count_; ++i) y[i] = x[i] * scale_ + b[i];
    return Status::ok();
  }

 private:
  float scale_;
  int64_t count_ = 0;
#ifdef TEST_PLUGIN_BUNDLE_KERNEL
  void* kernel_ = nullptr;  // the bundle's scale_add (attach_kernels)
#endif
};

// The shared part of the one-input plugins: y has x's bytes.
class CopyPlugin : public Plugin {
 public:
  Status configure(const std::vector<PluginTensorDesc>& inputs, const std::vector<PluginTensorDesc>&) override {
    bytes_ = static_cast<size_t>(element_count(inputs[0].shape)) * sizeof(float);
    return Status::ok();
  }
  Status enqueue(const PluginBuffers&, void*, void*) noexcept override {
    return Status(StatusCode::kUnsupported, "no CUDA implementation");
  }
  bool has_cpu_implementation() const override { return true; }
  Status run_on_host(const PluginBuffers& buffers, void*) override {
    std::memcpy(buffers.outputs[0], buffers.inputs[0], bytes_);
    return Status::ok();
  }

 private:
  size_t bytes_ = 0;
};

class Flatten final : public CopyPlugin {
 public:
  PluginDeclaration declaration() const override {
    return {kFlatten, {{input("x")}, {output("y", OutputShapeRule::computed())}}, {}};
  }
  std::string parameters() const override { return {}; }
  Result<std::vector<Dims>> computed_output_shapes(const std::vector<PluginTensorDesc>& inputs) const override {
    const Dims& x = inputs[0].shape;
    if (x.rank() == 0) return Status(StatusCode::kInvalidArgument, "x must have at least one dimension");
    int64_t rest = 1;
    for (size_t i = 1; i < x.rank(); ++i) rest = x[i] < 0 || rest < 0 ? -1 : rest * x[i];
    return std::vector<Dims>{Dims{x[0], rest}};
  }
};

class Misbehave final : public CopyPlugin {
 public:
  explicit Misbehave(std::string how) : how_(std::move(how)) {}
  PluginDeclaration declaration() const override { return {kMisbehave, {{input("x")}, {output("y")}}, {}}; }
  std::string parameters() const override { return how_; }
  Status configure(const std::vector<PluginTensorDesc>& inputs, const std::vector<PluginTensorDesc>& outputs) override {
    if (how_ == "throw_configure") throw std::runtime_error("configure exploded");
    return CopyPlugin::configure(inputs, outputs);
  }
  Status run_on_host(const PluginBuffers& buffers, void* workspace) override {
    if (how_ == "fail_run") return Status(StatusCode::kInvalidArgument, "the input is not to my liking");
    if (how_ == "throw_run") throw 42;  // not a std::exception
    return CopyPlugin::run_on_host(buffers, workspace);
  }

 private:
  std::string how_;
};

class GpuOnly final : public CopyPlugin {
 public:
  PluginDeclaration declaration() const override { return {kGpuOnly, {{input("x")}, {output("y")}}, {}}; }
  std::string parameters() const override { return {}; }
  bool has_cpu_implementation() const override { return false; }
};

void register_test_plugins(tensoracle::PluginRegistrar& registrar) {
  registrar.add({kScaleAdd, &ScaleAdd::create, scale_add_bundle()});
  registrar.add({kFlatten, [](std::string_view) -> Result<std::unique_ptr<Plugin>> { return std::unique_ptr<Plugin>(new Flatten); }});
  registrar.add({kMisbehave, [](std::string_view parameters) -> Result<std::unique_ptr<Plugin>> {
                   if (parameters == "throw_create") throw std::runtime_error("create exploded");
                   if (parameters == "fail_create") return Status(StatusCode::kInvalidArgument, "cannot make one of those");
                   return std::unique_ptr<Plugin>(new Misbehave(std::string(parameters)));
                 }});
  registrar.add({kGpuOnly, [](std::string_view) -> Result<std::unique_ptr<Plugin>> { return std::unique_ptr<Plugin>(new GpuOnly); }});
}

}  // namespace
}  // namespace tensoracle_test_plugins

TENSORACLE_PLUGIN_LIBRARY(tensoracle_test_plugins::register_test_plugins)
