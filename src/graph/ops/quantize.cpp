// quantize and dequantize: per-tensor or per-channel scales; int8 and fp8 e4m3.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::quantize(Tensor input, Tensor scale, const QuantizeAttributes& attrs) {
  return Impl::single(impl_->layer({input, scale}, {}, attrs));
}

Tensor Network::dequantize(Tensor input, Tensor scale, const DequantizeAttributes& attrs) {
  return Impl::single(impl_->layer({input, scale}, {}, attrs));
}

namespace graph {
namespace {
// A scale is per-tensor (rank 0 or [1]) or per-channel ([C], C = input dim `axis`).
Status check_scale(const InferContext& ctx, int64_t axis_attr) {
  TO_RETURN_IF_ERROR(ctx.require_float(1, "scale"));
  const Dims& s = ctx.in(1).shape;
  if (s.rank() == 0 || (s.rank() == 1 && s[0] == 1)) return Status::ok();
  auto axis = normalize_axis(axis_attr, ctx.in(0).shape.rank());
  if (!axis) return ctx.error("axis {} is out of range for {}", axis_attr, ctx.describe(0));
  if (s.rank() != 1 || !dims_agree(s[0], ctx.in(0).shape[*axis]))
    return ctx.error("scale {} must be a scalar, [1], or [{}] (dim {} of {})", ctx.describe(1),
                     ctx.in(0).shape[*axis], *axis, ctx.describe(0));
  return Status::ok();
}

Result<std::vector<TensorDesc>> infer_quantize(const InferContext& ctx, const QuantizeAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  TO_RETURN_IF_ERROR(check_scale(ctx, a.axis));
  if (a.output_type != DataType::kInt8 && a.output_type != DataType::kFloat8E4M3)
    return ctx.error("output_type '{}' must be int8 or fp8e4m3", data_type_name(a.output_type));
  return std::vector<TensorDesc>{{a.output_type, ctx.in(0).shape}};
}

Result<std::vector<TensorDesc>> infer_dequantize(const InferContext& ctx, const DequantizeAttributes& a) {
  TO_RETURN_IF_ERROR(ctx.require_type(0, {DataType::kInt8, DataType::kFloat8E4M3}, "input"));
  TO_RETURN_IF_ERROR(check_scale(ctx, a.axis));
  const DataType out = a.output_type;
  if (out != DataType::kFloat32 && out != DataType::kFloat16 && out != DataType::kBFloat16)
    return ctx.error("output_type '{}' must be fp32, fp16 or bf16", data_type_name(out));
  return std::vector<TensorDesc>{{out, ctx.in(0).shape}};
}
}  // namespace

extern const OpDef kQuantizeOp = define_op<QuantizeAttributes, &infer_quantize>(2, 2);
extern const OpDef kDequantizeOp = define_op<DequantizeAttributes, &infer_dequantize>(2, 2);

}  // namespace graph
}  // namespace tensoracle
