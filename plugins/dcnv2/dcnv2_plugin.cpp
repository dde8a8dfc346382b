#include "dcnv2_plugin.h"

#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "dcnv2_kernels.h"
#include "dcnv2_math.h"
#include "dcnv2_parameters.h"
#include "tensoracle/float_formats.h"
#ifdef TENSORACLE_PLUGINS_HAVE_CUDA
#include "dcnv2_cuda.h"
#endif

namespace tensoracle_plugins {
namespace {

using tensoracle::DataType;
using tensoracle::Dims;
using tensoracle::OutputShapeRule;
using tensoracle::Plugin;
using tensoracle::PluginBuffers;
using tensoracle::PluginDeclaration;
using tensoracle::PluginInput;
using tensoracle::PluginOutput;
using tensoracle::PluginTensorDesc;
using tensoracle::Result;
using tensoracle::Status;
using tensoracle::StatusCode;
using tensoracle::TensorFormat;
using tensoracle::TypeFormat;

const char* const kInputNames[] = {"x", "offset", "mask", "weight", "bias"};
enum Input { kX, kOffset, kMask, kWeight, kBias };

// The workspace (the column matrix) is refused beyond this many elements: 4 GiB of fp16.
constexpr int64_t kMaxColumnElements = int64_t{1} << 31;

// What every dcnv2 plugin needs from the library's cubin bundle, whatever its type: the four
// kernels of dcnv2_kernels.cu on the architectures plugins/CMakeLists.txt compiles it for.
tensoracle::PluginKernels dcnv2_bundle() {
  return {{kDcnv2Im2colF32, kDcnv2Im2colF16, kDcnv2GemmF32, kDcnv2GemmF16},
          {tensoracle::GpuArch{80}, tensoracle::GpuArch{90}}};
}

Status invalid(std::string message) { return Status(StatusCode::kInvalidArgument, std::move(message)); }

// "fp16/HWC8". type_format_name lives in the tensoracle library, which a plugin library does not link.
std::string format_name(const TypeFormat& tf) {
  const char* type = tf.type == DataType::kFloat32    ? "fp32"
                     : tf.type == DataType::kFloat16  ? "fp16"
                     : tf.type == DataType::kBFloat16 ? "bf16"
                                                      : "a non-float type";
  const char* format = tf.format == TensorFormat::kLinear ? "LINEAR" : tf.format == TensorFormat::kHwc8 ? "HWC8" : "HWC";
  return std::string(type) + "/" + format;
}

// "[1, 4, 6, 6]". Dims::to_string lives in the tensoracle library, which a plugin library does not link.
std::string shape_text(const Dims& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.rank(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// Checks the five shapes against each other and the parameters; the error names the input, its
// shape and what was expected.
Result<Dcnv2Geometry> geometry(const Dcnv2Parameters& p, const std::vector<PluginTensorDesc>& inputs) {
  if (inputs.size() != 5) return invalid("takes 5 inputs (x, offset, mask, weight, bias), got " + std::to_string(inputs.size()));
  const size_t ranks[] = {4, 4, 4, 4, 1};
  for (size_t i = 0; i < 5; ++i) {
    const Dims& s = inputs[i].shape;
    if (s.rank() != ranks[i])
      return invalid(std::string("input '") + kInputNames[i] + "' must have rank " + std::to_string(ranks[i]) + ", got " +
                     shape_text(s));
    for (int64_t d : s)
      if (d < 1 || d > std::numeric_limits<int32_t>::max())
        return invalid(std::string("input '") + kInputNames[i] + "' shape " + shape_text(s) +
                       " must be static with every dim in [1, 2^31) (the output shape is computed from it)");
  }
  const Dims& x = inputs[kX].shape;
  const Dims& w = inputs[kWeight].shape;
  Dcnv2Geometry g{};
  g.batch = static_cast<int32_t>(x[0]);
  g.channels = static_cast<int32_t>(x[1]);
  g.height = static_cast<int32_t>(x[2]);
  g.width = static_cast<int32_t>(x[3]);
  g.x_layout = inputs[kX].type_format.format == TensorFormat::kHwc8 ? Dcnv2XLayout::kHwc8 : Dcnv2XLayout::kLinear;
  g.out_channels = static_cast<int32_t>(w[0]);
  g.kernel_h = static_cast<int32_t>(w[2]);
  g.kernel_w = static_cast<int32_t>(w[3]);
  g.stride_h = p.stride[0], g.stride_w = p.stride[1];
  g.pad_h = p.padding[0], g.pad_w = p.padding[1];
  g.dilation_h = p.dilation[0], g.dilation_w = p.dilation[1];
  g.groups = p.groups;
  g.deformable_groups = p.deformable_groups;
  if (g.channels % g.groups != 0 || g.out_channels % g.groups != 0)
    return invalid("groups " + std::to_string(g.groups) + " must divide x's channels (" + std::to_string(g.channels) +
                   ") and weight's output channels (" + std::to_string(g.out_channels) + ")");
  if (g.channels % g.deformable_groups != 0)
    return invalid("deformable groups " + std::to_string(g.deformable_groups) + " must divide x's channels (" +
                   std::to_string(g.channels) + ")");
  if (w[1] * g.groups != g.channels)
    return invalid("weight " + shape_text(w) + " must be [K, C/groups = " + std::to_string(g.channels / g.groups) +
                   ", kh, kw] for x " + shape_text(x) + " and groups " + std::to_string(g.groups));
  const int64_t extent_h = int64_t{g.dilation_h} * (g.kernel_h - 1) + 1;
  const int64_t extent_w = int64_t{g.dilation_w} * (g.kernel_w - 1) + 1;
  const int64_t padded_h = int64_t{g.height} + 2 * int64_t{g.pad_h}, padded_w = int64_t{g.width} + 2 * int64_t{g.pad_w};
  if (extent_h > padded_h || extent_w > padded_w)
    return invalid("the dilated kernel (" + std::to_string(extent_h) + " x " + std::to_string(extent_w) +
                   ") is larger than the padded input (" + std::to_string(padded_h) + " x " + std::to_string(padded_w) + ")");
  g.out_height = static_cast<int32_t>((padded_h - extent_h) / g.stride_h + 1);
  g.out_width = static_cast<int32_t>((padded_w - extent_w) / g.stride_w + 1);
  const int64_t taps = g.taps() * g.deformable_groups;
  const Dims offset_expected{g.batch, 2 * taps, g.out_height, g.out_width};
  const Dims mask_expected{g.batch, taps, g.out_height, g.out_width};
  if (inputs[kOffset].shape != offset_expected)
    return invalid("offset " + shape_text(inputs[kOffset].shape) + " must be [N, 2*dg*kh*kw, Ho, Wo] = " +
                   shape_text(offset_expected));
  if (inputs[kMask].shape != mask_expected)
    return invalid("mask " + shape_text(inputs[kMask].shape) + " must be [N, dg*kh*kw, Ho, Wo] = " +
                   shape_text(mask_expected));
  if (inputs[kBias].shape != Dims{g.out_channels})
    return invalid("bias " + shape_text(inputs[kBias].shape) + " must be [K] = [" + std::to_string(g.out_channels) + "]");
  // Divided step by step: each factor is below 2^31, so the product is checked without overflow.
  int64_t budget = kMaxColumnElements;
  for (int64_t factor : {int64_t{g.batch}, int64_t{g.channels}, g.taps(), g.out_pixels()}) {
    if (factor > budget)
      return invalid("the column matrix N*C*kh*kw*Ho*Wo exceeds " + std::to_string(kMaxColumnElements) + " elements");
    budget /= factor;
  }
  return g;
}

size_t element_bytes(Dcnv2Type type) { return type == Dcnv2Type::kFloat16 ? 2 : 4; }
DataType data_type(Dcnv2Type type) { return type == Dcnv2Type::kFloat16 ? DataType::kFloat16 : DataType::kFloat32; }

// Host element access in fp32, for both I/O types.
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

// The CPU implementation: the steps of dcnv2_math.h on host arrays (T: float, or uint16_t for fp16).
template <typename T>
void run_host(const Dcnv2Geometry& g, const PluginBuffers& buffers, T* columns) {
  const auto* x = static_cast<const T*>(buffers.inputs[kX]);
  const auto* offset = static_cast<const T*>(buffers.inputs[kOffset]);
  const auto* mask = static_cast<const T*>(buffers.inputs[kMask]);
  const auto* weight = static_cast<const T*>(buffers.inputs[kWeight]);
  const auto* bias = static_cast<const T*>(buffers.inputs[kBias]);
  auto* y = static_cast<T*>(buffers.outputs[0]);
  const auto load_x = [&](int64_t i) { return load(x, i); };
  const auto load_offset = [&](int64_t i) { return load(offset, i); };
  const auto load_mask = [&](int64_t i) { return load(mask, i); };
  for (int64_t i = 0; i < g.column_elements(); ++i)
    columns[i] = store<T>(dcnv2_column_value(g, i, load_x, load_offset, load_mask));

  const int64_t m = g.gemm_m(), kd = g.gemm_k(), pixels = g.out_pixels();
  std::vector<float> row(static_cast<size_t>(pixels));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t group = 0; group < g.groups; ++group)
      for (int64_t o = 0; o < m; ++o) {
        const int64_t k = group * m + o;  // output channel
        const float b = load(bias, k);
        for (float& v : row) v = 0.0f;
        for (int64_t r = 0; r < kd; ++r) {
          const float wv = load(weight, k * kd + r);
          const T* col = columns + (n * g.column_rows() + group * kd + r) * pixels;
          for (int64_t q = 0; q < pixels; ++q) row[static_cast<size_t>(q)] += wv * load(col, q);
        }
        T* out = y + (n * g.out_channels + k) * pixels;
        for (int64_t q = 0; q < pixels; ++q) out[q] = store<T>(row[static_cast<size_t>(q)] + b);
      }
}

class Dcnv2 final : public Plugin {
 public:
  explicit Dcnv2(const Dcnv2Parameters& parameters) : p_(parameters) {}

  static Result<std::unique_ptr<Plugin>> create(std::string_view bytes) {
    Result<Dcnv2Parameters> p = decode(bytes);
    if (!p.is_ok()) return p.status();
    return std::unique_ptr<Plugin>(new Dcnv2(*p));
  }

  // Every tensor LINEAR in the parameters' type; an fp16 x may also be HWC8 (listed after LINEAR,
  // so that a producer writing neither gets the LINEAR one: format negotiation takes the first of
  // equals).
  PluginDeclaration declaration() const override {
    const TypeFormat io{data_type(p_.type), TensorFormat::kLinear};
    std::vector<PluginInput> inputs;
    for (const char* name : kInputNames) inputs.push_back(PluginInput{name, {io}});
    if (p_.type == Dcnv2Type::kFloat16) inputs[kX].allowed.push_back(TypeFormat{DataType::kFloat16, TensorFormat::kHwc8});
    return {kDcnv2Identity, {inputs, {PluginOutput{"y", io, OutputShapeRule::computed()}}}, dcnv2_bundle()};
  }
  std::string parameters() const override { return encode(p_); }

  // x: a combination the declaration lists; offset, mask, weight and bias: LINEAR in x's type.
  bool supports(int input, const TypeFormat& candidate, const std::vector<TypeFormat>& chosen) const override {
    if (input == kX) return Plugin::supports(input, candidate, chosen);
    return input > kX && input <= kBias && !chosen.empty() && candidate == linear_in_x_type(chosen);
  }

  Result<std::vector<Dims>> computed_output_shapes(const std::vector<PluginTensorDesc>& inputs) const override {
    Result<Dcnv2Geometry> g = geometry(p_, inputs);
    if (!g.is_ok()) return g.status();
    return std::vector<Dims>{Dims{g->batch, g->out_channels, g->out_height, g->out_width}};
  }
  Result<size_t> workspace_bytes(const std::vector<PluginTensorDesc>& inputs,
                                 const std::vector<PluginTensorDesc>&) const override {
    Result<Dcnv2Geometry> g = geometry(p_, inputs);
    if (!g.is_ok()) return g.status();
    return static_cast<size_t>(g->column_elements()) * element_bytes(p_.type);
  }

  Status configure(const std::vector<PluginTensorDesc>& inputs, const std::vector<PluginTensorDesc>& outputs) override {
    Result<Dcnv2Geometry> g = geometry(p_, inputs);
    if (!g.is_ok()) return g.status();
    if (Status formats = check_formats(inputs); !formats.is_ok()) return formats;
    const Dims expected{g->batch, g->out_channels, g->out_height, g->out_width};
    if (outputs.size() != 1 || outputs[0].shape != expected)
      return invalid("the output must be one tensor of shape " + shape_text(expected));
    geometry_ = *g;
    return Status::ok();
  }

  // The two kernels of this plugin's type; enqueue launches them.
  Status attach_kernels(tensoracle::PluginKernelSource& kernels) override {
    const bool half = p_.type == Dcnv2Type::kFloat16;
    Result<void*> im2col = kernels.kernel(half ? kDcnv2Im2colF16 : kDcnv2Im2colF32);
    if (!im2col.is_ok()) return im2col.status();
    Result<void*> gemm = kernels.kernel(half ? kDcnv2GemmF16 : kDcnv2GemmF32);
    if (!gemm.is_ok()) return gemm.status();
    im2col_kernel_ = *im2col, gemm_kernel_ = *gemm;
    return Status::ok();
  }

  Status enqueue(const PluginBuffers& buffers, void* workspace, void* stream) noexcept override {
#ifdef TENSORACLE_PLUGINS_HAVE_CUDA
    const Dcnv2DeviceBuffers device{buffers.inputs[kX],      buffers.inputs[kOffset], buffers.inputs[kMask],
                                    buffers.inputs[kWeight], buffers.inputs[kBias],   buffers.outputs[0],
                                    workspace};
    const std::string error = dcnv2_enqueue_cuda({im2col_kernel_, gemm_kernel_}, p_.type, geometry_, device, stream);
    if (!error.empty()) return Status(StatusCode::kCudaError, error);
    return Status::ok();
#else
    (void)buffers, (void)workspace, (void)stream;
    return Status(StatusCode::kUnsupported, "this build of the tensoracle plugins has no CUDA implementation");
#endif
  }

  bool has_cpu_implementation() const override { return true; }
  Status run_on_host(const PluginBuffers& buffers, void* workspace) override {
    if (p_.type == Dcnv2Type::kFloat16)
      run_host(geometry_, buffers, static_cast<uint16_t*>(workspace));
    else
      run_host(geometry_, buffers, static_cast<float*>(workspace));
    return Status::ok();
  }

 private:
  static TypeFormat linear_in_x_type(const std::vector<TypeFormat>& chosen) { return {chosen[kX].type, TensorFormat::kLinear}; }

  // configure() may be called with any formats (the builder asks supports() first; a direct caller
  // need not): each input must be one supports() takes after the inputs before it.
  Status check_formats(const std::vector<PluginTensorDesc>& inputs) const {
    std::vector<TypeFormat> before;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TypeFormat& given = inputs[i].type_format;
      if (!supports(static_cast<int>(i), given, before))
        return invalid(std::string("input '") + kInputNames[i] + "' is " + format_name(given) + "; it takes " +
                       (i == kX ? x_formats_text() : format_name(linear_in_x_type(before)) + " (LINEAR in x's type)"));
      before.push_back(given);
    }
    return Status::ok();
  }
  // "fp16/LINEAR or fp16/HWC8": what the declaration allows for x.
  std::string x_formats_text() const {
    const PluginDeclaration declared = declaration();
    std::string text;
    for (const TypeFormat& allowed : declared.io.inputs[kX].allowed) text += (text.empty() ? "" : " or ") + format_name(allowed);
    return text;
  }

  Dcnv2Parameters p_;
  Dcnv2Geometry geometry_{};
  void* im2col_kernel_ = nullptr;  // from the bundle (attach_kernels)
  void* gemm_kernel_ = nullptr;
};

}  // namespace

tensoracle::PluginCreator dcnv2_creator() { return {kDcnv2Identity, &Dcnv2::create, dcnv2_bundle()}; }

}  // namespace tensoracle_plugins
