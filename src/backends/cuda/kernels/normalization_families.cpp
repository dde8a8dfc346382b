// kernel.layer_norm, kernel.rms_norm, kernel.group_norm, kernel.instance_norm (row kernels; the
// variant picks a warp or a block per row and the block size; each may also write a quantized
// copy of its output) and kernel.batch_norm (a per-channel affine map; linear or nhwc).
#include <fmt/format.h>

#include <optional>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/normalization_kernel.h"
#include "backends/cuda/kernels/pointwise_families.h"
#include "graph/attributes.h"
#include "graph/op_def.h"

namespace tensoracle::backends::cuda {

namespace {

enum class NormKind { kLayer, kRms, kGroup, kInstance };

const char* family_name(NormKind kind) {
  switch (kind) {
    case NormKind::kLayer: return "kernel.layer_norm";
    case NormKind::kRms: return "kernel.rms_norm";
    case NormKind::kGroup: return "kernel.group_norm";
    case NormKind::kInstance: return "kernel.instance_norm";
  }
  return "";
}

const void* input_data(const StepBuffers& buffers, size_t i) {
  return i < buffers.inputs.size() ? buffers.inputs[i].data : nullptr;
}

bool has_input(const StepInstance& step, size_t i) { return i < step.anchor.inputs.size() && step.anchor.inputs[i]; }

// The rows of the step (pointers left empty), or why they cannot be formed.
Result<NormArgs> norm_rows(const StepInstance& step, NormKind kind) {
  const Node& node = step.anchor.node;
  const Dims& x = step.anchor.inputs[0]->shape;
  const int64_t count = elements_in(x);
  NormArgs a;
  if (kind == NormKind::kLayer || kind == NormKind::kRms) {
    int64_t axis_attribute = 0;
    if (kind == NormKind::kLayer) {
      TO_ASSIGN_OR_RETURN(const LayerNormAttributes* attrs, graph::attributes_of<LayerNormAttributes>(node));
      axis_attribute = attrs->axis;
      a.epsilon = static_cast<float>(attrs->epsilon);
    } else {
      TO_ASSIGN_OR_RETURN(const RmsNormAttributes* attrs, graph::attributes_of<RmsNormAttributes>(node));
      axis_attribute = attrs->axis;
      a.epsilon = static_cast<float>(attrs->epsilon);
    }
    TO_ASSIGN_OR_RETURN(const int64_t axis, graph::axis_of(node, axis_attribute, x.rank()));
    a.size = 1;
    for (size_t d = static_cast<size_t>(axis); d < x.rank(); ++d) a.size *= x[d];
    a.rows = a.size ? count / a.size : 0;
    a.rms = kind == NormKind::kRms;
    return a;
  }
  if (x.rank() < 2) return invalid_argument("input {} has no channel dim", x.to_string());
  const int64_t n = x[0], c = x[1];
  int64_t groups = c;
  if (kind == NormKind::kInstance) {
    TO_ASSIGN_OR_RETURN(const InstanceNormAttributes* attrs, graph::attributes_of<InstanceNormAttributes>(node));
    a.epsilon = static_cast<float>(attrs->epsilon);
  } else {
    TO_ASSIGN_OR_RETURN(const GroupNormAttributes* attrs, graph::attributes_of<GroupNormAttributes>(node));
    a.epsilon = static_cast<float>(attrs->epsilon);
    groups = attrs->groups;
  }
  if (groups <= 0 || c % groups) return invalid_argument("{} groups do not divide {} channels", groups, c);
  a.groups = groups;
  a.channels_per_group = c / groups;
  a.spatial = n * c != 0 ? count / (n * c) : 0;
  a.rows = n * groups;
  a.size = a.channels_per_group * a.spatial;
  if (a.spatial == 0) a.spatial = 1;  // an empty tensor: nothing runs
  return a;
}

// Whether the step's quantized copy (step.h; none: ok) is one the norm kernels write: a
// per-tensor quantize to int8 or fp8 e4m3 with one fp32, fp16 or bf16 scale, no zero point.
Status check_quantized_copy(const StepInstance& step) {
  if (!step.quantization.copy) return Status::ok();
  const FusedQuantize& copy = *step.quantization.copy;
  const Node& layer = *copy.layer;
  const auto refuse_copy = [&](const std::string& why) {
    return unsupported("layer '{}': quantized copy '{}': {}", step.anchor.node.name, layer.name, why);
  };
  if (layer.inputs.size() != 2) return refuse_copy("has a zero point");
  if (step.outputs.size() != 2 || step.outputs[1].shape != step.outputs[0].shape)
    return refuse_copy("is not the shape of the output");
  const DataType code = step.outputs[1].dtype;
  if (code != DataType::kInt8 && code != DataType::kFloat8E4M3)
    return refuse_copy(fmt::format("quantizes to {} (int8 or fp8e4m3 are written)", data_type_name(code)));
  const auto count = copy.scale->shape.element_count();
  if (!count.is_ok() || *count != 1)
    return refuse_copy(fmt::format("scale {} is not one value", copy.scale->shape.to_string()));
  if (!is_kernel_float(copy.scale->dtype))
    return refuse_copy(fmt::format("scale type {} (takes fp32, fp16, bf16)", data_type_name(copy.scale->dtype)));
  return Status::ok();
}

class NormTactic final : public KernelTactic {
 public:
  NormTactic(NormKind kind, const std::string& variant) : KernelTactic(family_name(kind), variant), kind_(kind) {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    initialized_ = false;
    TO_ASSIGN_OR_RETURN(args_, norm_rows(step, kind_));
    TO_ASSIGN_OR_RETURN(rows_, row_launch(args_.size, variant()));
    TO_RETURN_IF_ERROR(check_quantized_copy(step));  // a plan read from a file is checked here
    type_ = step.outputs[0].dtype;
    copy_ = step.quantization.copy;
    if (copy_) {
      args_.code_type = step.outputs[1].dtype;
      args_.code_scale_type = copy_->scale->dtype;
    }
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    NormArgs a = args_;
    a.scale = input_data(buffers, 1);
    a.bias = kind_ == NormKind::kRms ? nullptr : input_data(buffers, 2);
    if (copy_) {
      a.codes = buffers.outputs[1].data;
      a.code_scale = input_data(buffers, copy_->scale_input);
    }
    return cuda_status(launch_norm(buffers.inputs[0].data, buffers.outputs[0].data, type_, a, rows_, ctx.stream),
                       "normalization kernel");
  }

 private:
  NormKind kind_;
  NormArgs args_;
  RowLaunch rows_;
  DataType type_ = DataType::kFloat32;
  std::optional<FusedQuantize> copy_;
};

class NormFamily final : public KernelFamily {
 public:
  explicit NormFamily(NormKind kind) : KernelFamily(family_name(kind)), kind_(kind) {}
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_RETURN_IF_ERROR(check_layer(step));
    const DataType type = step.anchor.inputs[0]->dtype;
    if (step.outputs[0].dtype != type) return refuse(step, "output type {} differs from the input's", data_type_name(step.outputs[0].dtype));
    for (size_t i = 1; i < step.anchor.inputs.size(); ++i)
      if (has_input(step, i) && step.anchor.inputs[i]->dtype != type)
        return refuse(step, "parameter {} is {}, not the input's {}", i, data_type_name(step.anchor.inputs[i]->dtype),
                      data_type_name(type));
    auto rows = norm_rows(step, kind_);
    if (!rows.is_ok()) return refuse(step, "{}", rows.status().message());
    return check_quantized_copy(step);
  }
  FamilyTraits traits(const Node&) const override {
    FamilyTraits t;
    t.quantized_copy = true;
    return t;
  }

 protected:
  std::vector<std::string> variants(const StepInstance& step) const override {
    auto rows = norm_rows(step, kind_);
    return row_variants(rows.is_ok() ? rows->size : 0);
  }
  std::unique_ptr<CudaTactic> make(const std::string& variant) const override {
    return std::make_unique<NormTactic>(kind_, variant);
  }

 private:
  NormKind kind_;
};

constexpr const char* kBatchNorm = "kernel.batch_norm";

class BatchNormTactic final : public KernelTactic {
 public:
  BatchNormTactic() : KernelTactic(kBatchNorm, "") {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    initialized_ = false;
    const Dims& x = step.anchor.inputs[0]->shape;
    const Layout layout = step.input_layouts.empty() ? Layout::kLinear : step.input_layouts[0];
    args_ = BatchNormArgs{};
    args_.count = elements_in(x);
    args_.channels = x[1] > 0 ? x[1] : 1;
    args_.inner = 1;
    if (layout == Layout::kLinear)
      for (size_t d = 2; d < x.rank(); ++d) args_.inner *= x[d];
    if (args_.inner == 0) args_.inner = 1;  // an empty tensor: nothing runs
    TO_ASSIGN_OR_RETURN(const BatchNormAttributes* attrs, graph::attributes_of<BatchNormAttributes>(step.anchor.node));
    args_.epsilon = static_cast<float>(attrs->epsilon);
    type_ = step.outputs[0].dtype;
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    BatchNormArgs a = args_;
    a.scale = input_data(buffers, 1);
    a.bias = input_data(buffers, 2);
    a.mean = input_data(buffers, 3);
    a.variance = input_data(buffers, 4);
    return cuda_status(launch_batch_norm(buffers.inputs[0].data, buffers.outputs[0].data, type_, a, ctx.stream),
                       "batch norm kernel");
  }

 private:
  BatchNormArgs args_;
  DataType type_ = DataType::kFloat32;
};

class BatchNormFamily final : public KernelFamily {
 public:
  BatchNormFamily() : KernelFamily(kBatchNorm) {}
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_RETURN_IF_ERROR(check_layer(step, /*allow_nhwc=*/true));
    const Dims& x = step.anchor.inputs[0]->shape;
    const DataType type = step.anchor.inputs[0]->dtype;
    if (x.rank() < 2) return refuse(step, "input {} has no channel dim", x.to_string());
    if (step.outputs[0].dtype != type) return refuse(step, "output type {} differs from the input's", data_type_name(step.outputs[0].dtype));
    const Layout in = step.input_layouts.empty() ? Layout::kLinear : step.input_layouts[0];
    const Layout out = step.output_layouts.empty() ? Layout::kLinear : step.output_layouts[0];
    if (in != out) return refuse(step, "input layout {} differs from output layout {}", layout_name(in), layout_name(out));
    for (size_t i = 1; i < 5; ++i) {
      if (!has_input(step, i)) return refuse(step, "parameter {} is missing", i);
      const TensorDesc& p = *step.anchor.inputs[i];
      if (p.dtype != type || p.shape.rank() != 1 || p.shape[0] != x[1])
        return refuse(step, "parameter {} is {}, not {}[{}]", i, p.to_string(), data_type_name(type), x[1]);
      if (i < step.input_layouts.size() && step.input_layouts[i] != Layout::kLinear)
        return refuse(step, "parameter {} in layout {}", i, layout_name(step.input_layouts[i]));
    }
    return Status::ok();
  }

 protected:
  std::unique_ptr<CudaTactic> make(const std::string&) const override { return std::make_unique<BatchNormTactic>(); }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_layer_norm_family() { return std::make_shared<NormFamily>(NormKind::kLayer); }
std::shared_ptr<const TacticFamily> make_rms_norm_family() { return std::make_shared<NormFamily>(NormKind::kRms); }
std::shared_ptr<const TacticFamily> make_group_norm_family() { return std::make_shared<NormFamily>(NormKind::kGroup); }
std::shared_ptr<const TacticFamily> make_instance_norm_family() {
  return std::make_shared<NormFamily>(NormKind::kInstance);
}
std::shared_ptr<const TacticFamily> make_batch_norm_family() { return std::make_shared<BatchNormFamily>(); }

}  // namespace tensoracle::backends::cuda
