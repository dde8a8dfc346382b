// deformable::deform_sample 1.0.0: the deformable example's custom cubin plugin (README.md here,
// deform_sample.json its declaration). Two inputs, the feature map x and the combined
// offset+mask tensor of one convolution; one output, the modulated im2col columns
// (deform_sample_math.h). The example's graph applies the weight with a MatMul.
//
// Types and formats: x is fp32/LINEAR, fp16/LINEAR or fp16/HWC8, offset_mask LINEAR in x's type,
// the columns LINEAR in the parameters' type. The declaration lists every combination; supports()
// narrows it to the parameters' type and makes offset_mask follow x (a two-input rule).
// CPU implementation for every combination (fp32 arithmetic); CUDA kernels from the cubin bundle.
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "deform_sample_kernels.h"
#include "deform_sample_math.h"
#include "deform_sample_parameters.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/plugin_runtime.h"
#ifdef DEFORM_SAMPLE_HAVE_CUDA
#include "deform_sample_cuda.h"
#endif

namespace deformable {
namespace {

using tensoracle::DataType;
using tensoracle::Dims;
using tensoracle::Plugin;
using tensoracle::PluginBuffers;
using tensoracle::PluginTensorDesc;
using tensoracle::Result;
using tensoracle::Status;
using tensoracle::StatusCode;
using tensoracle::TensorFormat;
using tensoracle::TypeFormat;

const TypeFormat kF32Linear{DataType::kFloat32, TensorFormat::kLinear};
const TypeFormat kF16Linear{DataType::kFloat16, TensorFormat::kLinear};
const TypeFormat kF16Hwc8{DataType::kFloat16, TensorFormat::kHwc8};

// The kernels on the architectures CMakeLists.txt compiles the bundle for (deform_sample.json
// says the same, and the build checks the bundle against it).
tensoracle::PluginKernels deform_sample_bundle() {
  return {{kDeformSampleF32Linear, kDeformSampleF16Linear, kDeformSampleF16Hwc8},
          {tensoracle::GpuArch{80}, tensoracle::GpuArch{90}}};
}

Status invalid(std::string message) { return Status(StatusCode::kInvalidArgument, std::move(message)); }

std::string shape_text(const Dims& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.rank(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// x [N, C, H, W] and offset_mask [N, 27, H, W], static; the geometry for x's format.
Result<DeformSampleGeometry> geometry(const std::vector<PluginTensorDesc>& inputs) {
  if (inputs.size() != 2) return invalid("takes 2 inputs (x, offset_mask), got " + std::to_string(inputs.size()));
  const Dims& x = inputs[0].shape;
  if (x.rank() != 4) return invalid("x must be [N, C, H, W], got " + shape_text(x));
  for (int64_t d : x)
    if (d < 1 || d > (int64_t{1} << 30)) return invalid("x " + shape_text(x) + " must be static with every dim in [1, 2^30]");
  const Dims expected{x[0], kOffsetMaskChannels, x[2], x[3]};
  if (inputs[1].shape != expected)
    return invalid("offset_mask " + shape_text(inputs[1].shape) + " must be [N, 27, H, W] = " + shape_text(expected) +
                   " (18 offsets, then 9 mask logits)");
  DeformSampleGeometry g{};
  g.batch = static_cast<int32_t>(x[0]), g.channels = static_cast<int32_t>(x[1]);
  g.height = static_cast<int32_t>(x[2]), g.width = static_cast<int32_t>(x[3]);
  g.channel_stride = inputs[0].type_format.format == TensorFormat::kHwc8 ? (g.channels + 7) / 8 * 8 : g.channels;
  if (g.column_elements() > (int64_t{1} << 31)) return invalid("the columns N*C*9*H*W exceed 2^31 elements");
  return g;
}

// "fp16/HWC8" for the combinations it declares. type_format_name lives in the tensoracle
// library, which a plugin library does not link.
std::string name(const TypeFormat& tf) {
  const char* type = tf.type == DataType::kFloat32 ? "fp32" : tf.type == DataType::kFloat16 ? "fp16" : "another type";
  const char* format = tf.format == TensorFormat::kLinear ? "LINEAR" : tf.format == TensorFormat::kHwc8 ? "HWC8" : "HWC";
  return std::string(type) + "/" + format;
}

template <typename T>
float load(const T* data, int64_t i) {
  if constexpr (std::is_same_v<T, uint16_t>)
    return tensoracle::fp16_to_float(data[i]);
  else
    return data[i];
}
template <typename T>
T store(float value) {
  if constexpr (std::is_same_v<T, uint16_t>)
    return tensoracle::float_to_fp16(value);
  else
    return value;
}

// The CPU implementation (T: float, or uint16_t for fp16): deform_sample_math.h on host arrays.
template <typename T>
void run_host(const DeformSampleGeometry& g, bool hwc8, const PluginBuffers& buffers) {
  const auto* x = static_cast<const T*>(buffers.inputs[0]);
  const auto* offset_mask = static_cast<const T*>(buffers.inputs[1]);
  auto* columns = static_cast<T*>(buffers.outputs[0]);
  const int64_t pixels = g.pixels();
  const auto load_om = [&](int64_t i) { return load(offset_mask, i); };
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t t = 0; t < kDeformSampleTaps; ++t)
      for (int64_t p = 0; p < pixels; ++p) {
        const DeformSamplePoint s = deform_sample_point(g, n, t, p, load_om);
        const DeformSampleCorners k = deform_sample_corners(g.height, g.width, s.h, s.w);
        for (int64_t c = 0; c < g.channels; ++c) {
          const float v = deform_sample_value(k, [&](int32_t h, int32_t w) {
            const int64_t pixel = int64_t{h} * g.width + w;
            return hwc8 ? load(x, (n * pixels + pixel) * g.channel_stride + c) : load(x, (n * g.channels + c) * pixels + pixel);
          });
          columns[((n * g.channels + c) * kDeformSampleTaps + t) * pixels + p] = store<T>(s.mask * v);
        }
      }
}

class DeformSample final : public Plugin {
 public:
  explicit DeformSample(DataType type) : type_(type) {}

  static Result<std::unique_ptr<Plugin>> create(std::string_view bytes) {
    Result<DataType> type = decode_deform_sample(bytes);
    if (!type.is_ok()) return type.status();
    return std::unique_ptr<Plugin>(new DeformSample(*type));
  }

  tensoracle::PluginDeclaration declaration() const override {
    return {kDeformSampleIdentity,
            {{tensoracle::PluginInput{"x", {kF32Linear, kF16Linear, kF16Hwc8}},
              tensoracle::PluginInput{"offset_mask", {kF32Linear, kF16Linear}}},
             {tensoracle::PluginOutput{"columns", TypeFormat{type_, TensorFormat::kLinear},
                                       tensoracle::OutputShapeRule::computed()}}},
            deform_sample_bundle()};
  }
  std::string parameters() const override { return encode_deform_sample(type_); }

  // x: a declared combination of the parameters' type; offset_mask: LINEAR in the type chosen for x.
  bool supports(int input, const TypeFormat& candidate, const std::vector<TypeFormat>& chosen) const override {
    if (input == 0) return Plugin::supports(input, candidate, chosen) && candidate.type == type_;
    if (input == 1) return !chosen.empty() && candidate == TypeFormat{chosen[0].type, TensorFormat::kLinear};
    return false;
  }

  Result<std::vector<Dims>> computed_output_shapes(const std::vector<PluginTensorDesc>& inputs) const override {
    Result<DeformSampleGeometry> g = geometry(inputs);
    if (!g.is_ok()) return g.status();
    return std::vector<Dims>{Dims{g->batch, int64_t{g->channels} * kDeformSampleTaps, g->pixels()}};
  }

  Status attach_kernels(tensoracle::PluginKernelSource& kernels) override {
    const bool half = type_ == DataType::kFloat16;
    Result<void*> linear = kernels.kernel(half ? kDeformSampleF16Linear : kDeformSampleF32Linear);
    if (!linear.is_ok()) return linear.status();
    linear_kernel_ = *linear;
    if (half) {
      Result<void*> hwc8 = kernels.kernel(kDeformSampleF16Hwc8);
      if (!hwc8.is_ok()) return hwc8.status();
      hwc8_kernel_ = *hwc8;
    }
    return Status::ok();
  }

  Status configure(const std::vector<PluginTensorDesc>& inputs, const std::vector<PluginTensorDesc>& outputs) override {
    Result<DeformSampleGeometry> g = geometry(inputs);
    if (!g.is_ok()) return g.status();
    if (!supports(0, inputs[0].type_format, {}) || !supports(1, inputs[1].type_format, {inputs[0].type_format}))
      return invalid("x " + name(inputs[0].type_format) + " and offset_mask " + name(inputs[1].type_format) +
                     " are not a combination it takes for " + name(TypeFormat{type_, TensorFormat::kLinear}) + " columns");
    const Dims expected{g->batch, int64_t{g->channels} * kDeformSampleTaps, g->pixels()};
    if (outputs.size() != 1 || outputs[0].shape != expected)
      return invalid("the output must be one tensor of shape " + shape_text(expected));
    geometry_ = *g;
    hwc8_ = inputs[0].type_format.format == TensorFormat::kHwc8;
    return Status::ok();
  }

  Status enqueue(const PluginBuffers& buffers, void*, void* stream) noexcept override {
#ifdef DEFORM_SAMPLE_HAVE_CUDA
    const char* name = hwc8_ ? kDeformSampleF16Hwc8 : type_ == DataType::kFloat16 ? kDeformSampleF16Linear : kDeformSampleF32Linear;
    const std::string error = deform_sample_enqueue_cuda(hwc8_ ? hwc8_kernel_ : linear_kernel_, name, hwc8_, geometry_,
                                                         buffers.inputs[0], buffers.inputs[1], buffers.outputs[0], stream);
    if (!error.empty()) return Status(StatusCode::kCudaError, error);
    return Status::ok();
#else
    (void)buffers, (void)stream;
    return Status(StatusCode::kUnsupported, "this build of deform_sample has no CUDA implementation");
#endif
  }

  bool has_cpu_implementation() const override { return true; }
  Status run_on_host(const PluginBuffers& buffers, void*) override {
    if (type_ == DataType::kFloat16)
      run_host<uint16_t>(geometry_, hwc8_, buffers);
    else
      run_host<float>(geometry_, hwc8_, buffers);
    return Status::ok();
  }

 private:
  DataType type_;
  DeformSampleGeometry geometry_{};
  bool hwc8_ = false;
  void* linear_kernel_ = nullptr;  // from the bundle (attach_kernels)
  void* hwc8_kernel_ = nullptr;
};

void register_plugins(tensoracle::PluginRegistrar& registrar) {
  registrar.add({kDeformSampleIdentity, &DeformSample::create, deform_sample_bundle()});
}

}  // namespace
}  // namespace deformable

TENSORACLE_PLUGIN_LIBRARY(deformable::register_plugins)
