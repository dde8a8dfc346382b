// sdk::affine 1.0.0: y = a * x + b, elementwise over one fp32 input; a and b are the parameters
// (two floats, 8 bytes). Its CUDA kernel (sdk_affine, affine_kernel.cu) ships in the cubin bundle
// that tensoracle_add_cubin_plugin builds beside this library; the cuda backend hands it to the
// plugin through attach_kernels, and builds with SDK_AFFINE_HAS_CUDA (CMake option
// SDK_CONSUMER_WITH_CUDA) launch it; the cpu backend runs run_on_host.
#include <cstring>
#include <string>

#ifdef SDK_AFFINE_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

#include "tensoracle/plugin_runtime.h"

namespace {

using tensoracle::Plugin;
using tensoracle::PluginBuffers;
using tensoracle::PluginDeclaration;
using tensoracle::PluginTensorDesc;
using tensoracle::Result;
using tensoracle::Status;
using tensoracle::StatusCode;

const tensoracle::PluginIdentity kAffine{"affine", "1.0.0", "sdk"};

// What the plugin needs from its bundle, stated once for the creator and the declaration.
tensoracle::PluginKernels affine_bundle() { return {{"sdk_affine"}, {tensoracle::GpuArch{90}}}; }

class Affine final : public Plugin {
 public:
  Affine(float a, float b) : a_(a), b_(b) {}

  static Result<std::unique_ptr<Plugin>> create(std::string_view parameters) {
    if (parameters.size() != 2 * sizeof(float))
      return Status(StatusCode::kInvalidArgument,
                    "parameters must be two floats (8 bytes), got " + std::to_string(parameters.size()) + " bytes");
    float ab[2];
    std::memcpy(ab, parameters.data(), sizeof ab);
    return std::unique_ptr<Plugin>(new Affine(ab[0], ab[1]));
  }

  PluginDeclaration declaration() const override {
    return {kAffine,
            {{tensoracle::PluginInput{"x", {tensoracle::TypeFormat{}}}},
             {tensoracle::PluginOutput{"y", tensoracle::TypeFormat{}, tensoracle::OutputShapeRule::copy_input(0)}}},
            affine_bundle()};
  }
  std::string parameters() const override {
    const float ab[2] = {a_, b_};
    return std::string(reinterpret_cast<const char*>(ab), sizeof ab);
  }

  Status configure(const std::vector<PluginTensorDesc>& inputs, const std::vector<PluginTensorDesc>&) override {
    count_ = 1;
    for (int64_t d : inputs[0].shape) count_ *= d;
    return Status::ok();
  }
  // The cuda backend calls this before configure: the kernel comes from the bundle beside the library.
  Status attach_kernels(tensoracle::PluginKernelSource& kernels) override {
    Result<void*> kernel = kernels.kernel("sdk_affine");
    if (!kernel.is_ok()) return kernel.status();
    kernel_ = *kernel;
    return Status::ok();
  }
  Status enqueue(const PluginBuffers& buffers, void*, void* stream) noexcept override {
#ifdef SDK_AFFINE_HAS_CUDA
    if (count_ == 0) return Status::ok();
    const float* x = static_cast<const float*>(buffers.inputs[0]);
    float* y = static_cast<float*>(buffers.outputs[0]);
    long long count = count_;
    float a = a_, b = b_;
    void* args[] = {&x, &y, &count, &a, &b};
    const unsigned blocks = static_cast<unsigned>((count + 255) / 256);
    const cudaError_t error = cudaLaunchKernel(static_cast<const void*>(kernel_), dim3(blocks), dim3(256), args, 0,
                                               static_cast<cudaStream_t>(stream));
    if (error != cudaSuccess) return Status(StatusCode::kCudaError, std::string("sdk_affine: ") + cudaGetErrorString(error));
    return Status::ok();
#else
    (void)buffers, (void)stream;
    return Status(StatusCode::kUnsupported, "this build of sdk::affine has no CUDA runtime (SDK_CONSUMER_WITH_CUDA)");
#endif
  }

  bool has_cpu_implementation() const override { return true; }
  Status run_on_host(const PluginBuffers& buffers, void*) override {
    const auto* x = static_cast<const float*>(buffers.inputs[0]);
    auto* y = static_cast<float*>(buffers.outputs[0]);
    for (int64_t i = 0; i < count_; ++i) y[i] = a_ * x[i] + b_;
    return Status::ok();
  }

 private:
  float a_, b_;
  int64_t count_ = 0;
  void* kernel_ = nullptr;  // sdk_affine from the bundle (a cudaKernel_t)
};

void register_plugins(tensoracle::PluginRegistrar& registrar) {
  registrar.add({kAffine, &Affine::create, affine_bundle()});
}

}  // namespace

TENSORACLE_PLUGIN_LIBRARY(register_plugins)
