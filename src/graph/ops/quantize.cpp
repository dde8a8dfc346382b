// quantize and dequantize: per-tensor or per-channel scales; int8 and fp8 e4m3.
#include "graph/network_impl.h"
#include "graph/op_def.h"

namespace tensoracle {

Tensor Network::quantize(Tensor input, Tensor scale, const QuantizeAttributes& a) {
  AttributeMap map{{"output_type", std::string(data_type_name(a.output_type))}, {"axis", a.axis}};
  return Impl::single(impl_->layer(*this, OpKind::kQuantize, {input, scale}, {}, std::move(map), a.name));
}

Tensor Network::dequantize(Tensor input, Tensor scale, const DequantizeAttributes& a) {
  AttributeMap map{{"output_type", std::string(data_type_name(a.output_type))}, {"axis", a.axis}};
  return Impl::single(impl_->layer(*this, OpKind::kDequantize, {input, scale}, {}, std::move(map), a.name));
}

namespace graph {
namespace {
// A scale is per-tensor (rank 0 or [1]) or per-channel ([C], C = input dim `axis`).
Status check_scale(const InferContext& ctx) {
  TO_RETURN_IF_ERROR(ctx.require_float(1, "scale"));
  const Dims& s = ctx.in(1).shape;
  if (s.rank() == 0 || (s.rank() == 1 && s[0] == 1)) return Status::ok();
  const int64_t axis_attr = get_int(ctx.attrs, "axis", 1);
  auto axis = normalize_axis(axis_attr, ctx.in(0).shape.rank());
  if (!axis) return ctx.error("axis {} is out of range for {}", axis_attr, ctx.describe(0));
  if (s.rank() != 1 || !dims_agree(s[0], ctx.in(0).shape[*axis]))
    return ctx.error("scale {} must be a scalar, [1], or [{}] (dim {} of {})", ctx.describe(1),
                     ctx.in(0).shape[*axis], *axis, ctx.describe(0));
  return Status::ok();
}

Result<std::vector<TensorDesc>> infer_quantize(const InferContext& ctx) {
  TO_RETURN_IF_ERROR(ctx.require_float(0, "input"));
  TO_RETURN_IF_ERROR(check_scale(ctx));
  const DataType out = get_data_type(ctx.attrs, "output_type", DataType::kFloat32);
  if (out != DataType::kInt8 && out != DataType::kFloat8E4M3)
    return ctx.error("output_type '{}' must be int8 or fp8e4m3", get_string(ctx.attrs, "output_type"));
  return std::vector<TensorDesc>{{out, ctx.in(0).shape}};
}

Result<std::vector<TensorDesc>> infer_dequantize(const InferContext& ctx) {
  TO_RETURN_IF_ERROR(ctx.require_type(0, {DataType::kInt8, DataType::kFloat8E4M3}, "input"));
  TO_RETURN_IF_ERROR(check_scale(ctx));
  const DataType out = get_data_type(ctx.attrs, "output_type", DataType::kInt8);
  if (out != DataType::kFloat32 && out != DataType::kFloat16 && out != DataType::kBFloat16)
    return ctx.error("output_type '{}' must be fp32, fp16 or bf16", get_string(ctx.attrs, "output_type"));
  return std::vector<TensorDesc>{{out, ctx.in(0).shape}};
}
}  // namespace

extern const OpDef kQuantizeOp{2, 2, &infer_quantize};
extern const OpDef kDequantizeOp{2, 2, &infer_dequantize};

}  // namespace graph
}  // namespace tensoracle
