// The own-kernel families' shared behaviour (kernel_family.h).
#include "backends/cuda/kernels/kernel_family.h"

#include <algorithm>

namespace tensoracle::backends::cuda {

nlohmann::json KernelTactic::choice() const {
  if (variant_.empty()) return nlohmann::json::object();
  return nlohmann::json{{"variant", variant_}};
}

Status KernelTactic::require_initialized() const {
  if (initialized_) return Status::ok();
  return make_error(StatusCode::kFailedPrecondition, "{}: run before a successful initialize", name());
}

Result<std::vector<std::unique_ptr<CudaTactic>>> KernelFamily::candidates(const StepInstance& step, const RunContext&,
                                                                          int limit) const {
  std::vector<std::unique_ptr<CudaTactic>> out;
  for (const std::string& v : variants(step)) {
    if (static_cast<int>(out.size()) >= std::max(limit, 1)) break;
    out.push_back(make(v));
  }
  return out;
}

Result<std::unique_ptr<CudaTactic>> KernelFamily::replay(const StepInstance& step, const nlohmann::json& choice) const {
  std::string variant;
  if (choice.is_object() && choice.contains("variant")) {
    if (!choice["variant"].is_string())
      return invalid_argument("{}: recorded choice {} has a non-string variant", name_, choice.dump());
    variant = choice["variant"].get<std::string>();
  } else if (!choice.is_object() || !choice.empty()) {
    return invalid_argument("{}: recorded choice {} is not an object with a variant", name_, choice.dump());
  }
  for (const std::string& v : variants(step))
    if (v == variant) return make(v);
  return invalid_argument("layer '{}': {}: recorded variant '{}' does not apply to this step", step.anchor.node.name,
                          name_, variant);
}

bool is_kernel_float(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat16 || type == DataType::kBFloat16;
}

int64_t elements_in(const Dims& shape) {
  auto count = shape.element_count();
  return count.is_ok() ? *count : 0;
}

Status KernelFamily::check_plain_step(const StepInstance& step, bool allow_nhwc) const {
  if (step.has_epilogue()) return refuse(step, "fuses no epilogue ({})", step.program.to_string());
  for (size_t i = 0; i < step.anchor.inputs.size(); ++i)
    if (!step.anchor.inputs[i]) return refuse(step, "input {} is omitted", i);
  return check_layer(step, allow_nhwc, /*any_type=*/true);
}

Status KernelFamily::check_layer(const StepInstance& step, bool allow_nhwc, bool any_type) const {
  if (step.has_epilogue()) return refuse(step, "fuses no epilogue ({})", step.program.to_string());
  auto check = [&](const char* role, size_t i, const TensorDesc& desc, Layout layout) -> Status {
    if (desc.shape.rank() > static_cast<size_t>(TensorGeometry::kMaxRank))
      return refuse(step, "{} {} has rank {} (at most {})", role, i, desc.shape.rank(), TensorGeometry::kMaxRank);
    if (!desc.shape.is_static()) return refuse(step, "{} {} has a dynamic shape {}", role, i, desc.shape.to_string());
    if (!desc.shape.byte_size(desc.dtype).is_ok()) return refuse(step, "{} {} of shape {} is too large", role, i, desc.shape.to_string());
    const bool nhwc_ok = allow_nhwc && desc.shape.rank() == 4;
    if (layout != Layout::kLinear && !(layout == Layout::kNhwc && nhwc_ok))
      return refuse(step, "{} {} in layout {} (takes {})", role, i, layout_name(layout),
                    allow_nhwc ? "linear, or nhwc at rank 4" : "linear");
    return Status::ok();
  };
  for (size_t i = 0; i < step.anchor.inputs.size(); ++i) {
    if (!step.anchor.inputs[i]) continue;  // omitted optional input
    const Layout layout = i < step.input_layouts.size() ? step.input_layouts[i] : Layout::kLinear;
    TO_RETURN_IF_ERROR(check("input", i, *step.anchor.inputs[i], layout));
  }
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    const Layout layout = i < step.output_layouts.size() ? step.output_layouts[i] : Layout::kLinear;
    TO_RETURN_IF_ERROR(check("output", i, step.outputs[i], layout));
  }
  if (!any_type) {
    if (step.anchor.inputs.empty() || !step.anchor.inputs[0]) return refuse(step, "input 0 is omitted");
    const DataType t = step.anchor.inputs[0]->dtype;
    if (!is_kernel_float(t)) return refuse(step, "input type {} (takes fp32, fp16, bf16)", data_type_name(t));
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      if (step.quantization.copy && i == 1) continue;  // a quantized copy's codes: the family checks them
      if (!is_kernel_float(step.outputs[i].dtype))
        return refuse(step, "output type {} (takes fp32, fp16, bf16)", data_type_name(step.outputs[i].dtype));
    }
  }
  return Status::ok();
}

}  // namespace tensoracle::backends::cuda
