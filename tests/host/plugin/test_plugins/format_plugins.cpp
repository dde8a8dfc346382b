// The format test plugins (format_plugins.h). Header-only plugin interface: no tensoracle library.
#include "format_plugins.h"

#include <cmath>
#include <string>
#include <vector>

#include "tensoracle/float_formats.h"
#include "tensoracle/plugin_runtime.h"

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
using tensoracle::TensorFormat;
using tensoracle::TypeFormat;

const PluginIdentity kHwc8Pair{"hwc8_pair", "1.0.0", "test"};
const PluginIdentity kMultiFormat{"multi_format", "1.0.0", "test"};

constexpr TypeFormat kFp32Linear{DataType::kFloat32, TensorFormat::kLinear};
constexpr TypeFormat kFp16Linear{DataType::kFloat16, TensorFormat::kLinear};
constexpr TypeFormat kFp16Hwc8{DataType::kFloat16, TensorFormat::kHwc8};

// The shape as [N, C, H, W], leading 1s added below rank 4.
bool as_nchw(const Dims& shape, int64_t out[4]) {
  if (shape.rank() > 4) return false;
  const size_t lead = 4 - shape.rank();
  for (size_t d = 0; d < 4; ++d) out[d] = d < lead ? 1 : shape[d - lead];
  return true;
}

// How the kernels walk a tensor of `desc` at `data` (what configure() was told, the whole point of
// the test: each plugin must honour the format it was given).
FormatOperand operand(const PluginTensorDesc& desc, const void* data) {
  FormatOperand t;
  t.data = const_cast<void*>(data);
  t.half = desc.type_format.type == DataType::kFloat16;
  int64_t s[4];
  as_nchw(desc.shape, s);
  if (desc.type_format.format == TensorFormat::kLinear) {
    t.stride[3] = 1, t.stride[2] = s[3], t.stride[1] = s[3] * s[2], t.stride[0] = s[3] * s[2] * s[1];
    return t;
  }
  const int64_t c = desc.type_format.format == TensorFormat::kHwc8 ? (s[1] + 7) / 8 * 8 : s[1];
  if (desc.type_format.format == TensorFormat::kHwc8) t.padded_channels = c;
  t.stride[1] = 1, t.stride[3] = c, t.stride[2] = c * s[3], t.stride[0] = c * s[3] * s[2];
  return t;
}

float host_load(const FormatOperand& t, int64_t offset) {
  return t.half ? tensoracle::fp16_to_float(static_cast<const uint16_t*>(t.data)[offset])
                : static_cast<const float*>(t.data)[offset];
}

// The host twin of launch_format_add; an error where a's padding is not zero.
Status host_format_add(const FormatOperand& a, const FormatOperand& b, const FormatOperand& out, const int64_t s[4],
                       float scale) {
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t w = 0; w < s[3]; ++w) {
          const auto at = [&](const FormatOperand& t) { return n * t.stride[0] + c * t.stride[1] + h * t.stride[2] + w * t.stride[3]; };
          float value = scale * host_load(a, at(a));
          if (b.data != nullptr) value += host_load(b, at(b));
          for (int64_t pad = s[1]; c == 0 && pad < a.padded_channels; ++pad)
            if (host_load(a, at(a) + pad) != 0.0f)
              return Status(StatusCode::kInvalidArgument, "x's HWC8 padding channel " + std::to_string(pad) + " is not zero");
          if (out.half)
            static_cast<uint16_t*>(out.data)[at(out)] = tensoracle::float_to_fp16(value);
          else
            static_cast<float*>(out.data)[at(out)] = value;
        }
  return Status::ok();
}

// The shared part: y = scale * input 0 + input 1, in whatever formats configure() gave.
class FormatAdd : public Plugin {
 public:
  explicit FormatAdd(float scale) : scale_(scale) {}
  std::string parameters() const override { return {}; }

  Status configure(const std::vector<PluginTensorDesc>& inputs, const std::vector<PluginTensorDesc>& outputs) override {
    if (inputs.size() != 2 || outputs.size() != 1) return Status(StatusCode::kInvalidArgument, "two inputs, one output");
    if (inputs[0].shape != inputs[1].shape) return Status(StatusCode::kInvalidArgument, "both inputs must have one shape");
    if (!as_nchw(inputs[0].shape, shape_)) return Status(StatusCode::kInvalidArgument, "rank above 4");
    // supports() is what the builder asked; configure() must get only what it allowed.
    std::vector<TypeFormat> before;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!supports(static_cast<int>(i), inputs[i].type_format, before))
        return Status(StatusCode::kInvalidArgument, "configured with a format it does not support for input " + std::to_string(i));
      before.push_back(inputs[i].type_format);
    }
    in_ = inputs, out_ = outputs;
    return Status::ok();
  }

  Status enqueue(const PluginBuffers& buffers, void*, void* stream) noexcept override {
#ifdef TEST_PLUGIN_HAS_CUDA
    const int error = launch_format_add(operand(in_[0], buffers.inputs[0]), operand(in_[1], buffers.inputs[1]),
                                        operand(out_[0], buffers.outputs[0]), shape_, scale_, stream);
    if (error != 0) return Status(StatusCode::kCudaError, "format_add failed to launch: CUDA error " + std::to_string(error));
    return Status::ok();
#else
    (void)buffers, (void)stream;
    return Status(StatusCode::kUnsupported, "this build of the format plugins has no CUDA implementation");
#endif
  }

  bool has_cpu_implementation() const override { return true; }
  Status run_on_host(const PluginBuffers& buffers, void*) override {
    return host_format_add(operand(in_[0], buffers.inputs[0]), operand(in_[1], buffers.inputs[1]),
                           operand(out_[0], buffers.outputs[0]), shape_, scale_);
  }

 private:
  float scale_;
  int64_t shape_[4] = {};
  std::vector<PluginTensorDesc> in_, out_;
};

class Hwc8Pair final : public FormatAdd {
 public:
  Hwc8Pair() : FormatAdd(2.0f) {}
  PluginDeclaration declaration() const override {
    return {kHwc8Pair,
            {{PluginInput{"x", {kFp16Hwc8}}, PluginInput{"b", {kFp32Linear}}},
             {PluginOutput{"y", kFp16Hwc8, OutputShapeRule::copy_input(0)}}},
            {}};
  }
};

class MultiFormat final : public FormatAdd {
 public:
  MultiFormat() : FormatAdd(1.0f) {}
  PluginDeclaration declaration() const override {
    return {kMultiFormat,
            {{PluginInput{"x", {kFp32Linear, kFp16Linear, kFp16Hwc8}}, PluginInput{"y", {kFp32Linear, kFp16Linear}}},
             {PluginOutput{"z", kFp32Linear, OutputShapeRule::copy_input(0)}}},
            {}};
  }
  // y in x's type: the refinement given the choices before.
  bool supports(int input, const TypeFormat& candidate, const std::vector<TypeFormat>& chosen) const override {
    if (!Plugin::supports(input, candidate, chosen)) return false;
    return input != 1 || (chosen.size() == 1 && chosen[0].type == candidate.type);
  }
};

void register_format_plugins(tensoracle::PluginRegistrar& registrar) {
  registrar.add({kHwc8Pair, [](std::string_view) -> Result<std::unique_ptr<Plugin>> { return std::unique_ptr<Plugin>(new Hwc8Pair); }});
  registrar.add({kMultiFormat, [](std::string_view) -> Result<std::unique_ptr<Plugin>> {
                   return std::unique_ptr<Plugin>(new MultiFormat);
                 }});
}

}  // namespace
}  // namespace tensoracle_test_plugins

TENSORACLE_PLUGIN_LIBRARY(tensoracle_test_plugins::register_format_plugins)
