// sdk::affine 1.0.0: y = a * x + b, elementwise over one fp32 input; a and b are the parameters
// (two floats, 8 bytes). Its CUDA kernel (sdk_affine, affine_kernel.cu) ships in the cubin bundle
// that tensoracle_add_cubin_plugin builds beside this library; the cpu backend runs run_on_host.
#include <cstring>
#include <string>

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
  // Launching sdk_affine needs the bundle loaded into the CUDA context, which tensoracle does not
  // do for plugins yet (docs/plugins.md, "Not implemented yet"): on the cuda backend this plugin
  // says so instead of running.
  Status enqueue(const PluginBuffers&, void*, void*) noexcept override {
    return Status(StatusCode::kUnsupported, "sdk::affine runs on the cpu backend only until bundles are loaded");
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
};

void register_plugins(tensoracle::PluginRegistrar& registrar) {
  registrar.add({kAffine, &Affine::create, affine_bundle()});
}

}  // namespace

TENSORACLE_PLUGIN_LIBRARY(register_plugins)
