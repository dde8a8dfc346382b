// The transformer ops of recent opsets onto their layers: Attention (opset 23, the attention
// layer; 3D inputs are split into heads by reshape and transpose) and RMSNormalization (rms_norm).
#include "frontends/onnx/op_table.h"

namespace tensoracle::onnx_import {
namespace {

// [B, S, H*D] -> [B, H, S, D], for Attention's 3D inputs.
Result<Tensor> split_heads(NodeContext& ctx, Tensor x, int64_t heads, const char* which) {
  const Dims s = ctx.desc(x).shape;
  if (heads < 1) return ctx.invalid("3D {} needs q_num_heads and kv_num_heads (>= 1), got {}", which, heads);
  if (s[2] < 0 || s[2] % heads != 0)
    return ctx.invalid("3D {} {}: its last dim does not split into {} heads", which, ctx.desc(x).to_string(), heads);
  const std::string name = fmt::format("{}/{}", ctx.layer_name(), which);
  const Tensor r = ctx.net().reshape(x, ReshapeAttributes().set_shape({0, 0, heads, s[2] / heads}).set_name(name + "_heads"));
  return ctx.net().transpose(r, TransposeAttributes().set_perm({0, 2, 1, 3}).set_name(name + "_bhsd"));
}

Status convert_attention(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t causal, ctx.attribute_int("is_causal", 0));
  TO_ASSIGN_OR_RETURN(const int64_t q_heads, ctx.attribute_int("q_num_heads", 0));
  TO_ASSIGN_OR_RETURN(const int64_t kv_heads, ctx.attribute_int("kv_num_heads", 0));
  TO_ASSIGN_OR_RETURN(const int64_t qk_mode, ctx.attribute_int("qk_matmul_output_mode", 0));
  TO_ASSIGN_OR_RETURN(const double softcap, ctx.attribute_float("softcap", 0.0));
  TO_ASSIGN_OR_RETURN(const int64_t softmax_precision, ctx.attribute_int("softmax_precision", 0));
  TO_ASSIGN_OR_RETURN(const int64_t left_window, ctx.attribute_int("left_window_size", -1));
  TO_ASSIGN_OR_RETURN(const int64_t right_window, ctx.attribute_int("right_window_size", -1));
  (void)qk_mode;            // only shapes the qk_matmul_output output, refused below
  (void)softmax_precision;  // the layer computes the softmax at its own precision (fp64 on the cpu reference)
  if (softcap != 0.0) return ctx.refuse("softcap {} is not supported", softcap);
  if (left_window != -1 || right_window != -1)
    return ctx.refuse("sliding windows (left_window_size {}, right_window_size {}) are not supported", left_window,
                      right_window);
  if (ctx.has_input(4) || ctx.has_input(5)) return ctx.refuse("past_key and past_value (a KV cache) are not supported");
  if (ctx.has_input(6)) return ctx.refuse("nonpad_kv_seqlen is not supported");
  TO_RETURN_IF_ERROR(ctx.only_outputs(3));
  TO_ASSIGN_OR_RETURN(Tensor q, ctx.input(0));
  TO_ASSIGN_OR_RETURN(Tensor k, ctx.input(1));
  TO_ASSIGN_OR_RETURN(Tensor v, ctx.input(2));
  const size_t rank = ctx.desc(q).shape.rank();
  if (rank != 3 && rank != 4) return ctx.invalid("Q {} is neither 3D nor 4D", ctx.desc(q).to_string());
  if (ctx.desc(k).shape.rank() != rank || ctx.desc(v).shape.rank() != rank)
    return ctx.invalid("Q, K and V have ranks {}, {} and {}", rank, ctx.desc(k).shape.rank(), ctx.desc(v).shape.rank());
  if (rank == 3) {
    TO_ASSIGN_OR_RETURN(q, split_heads(ctx, q, q_heads, "q"));
    TO_ASSIGN_OR_RETURN(k, split_heads(ctx, k, kv_heads, "k"));
    TO_ASSIGN_OR_RETURN(v, split_heads(ctx, v, kv_heads, "v"));
  }
  const int64_t hq = ctx.desc(q).shape[1];
  const int64_t hkv = ctx.desc(k).shape[1];
  if (hq >= 0 && hkv >= 0 && hq != hkv && hkv != 1)
    return ctx.refuse("grouped-query attention ({} query heads, {} key/value heads) is not supported", hq, hkv);
  AttentionAttributes attrs;
  attrs.causal = causal != 0;
  if (ctx.has_attribute("scale")) {
    TO_ASSIGN_OR_RETURN(const double scale, ctx.attribute_float("scale", 1.0));
    attrs.scale = scale;
  }
  TO_ASSIGN_OR_RETURN(const Tensor mask, ctx.optional_input(3));
  Tensor y = ctx.net().attention(q, k, v, mask, attrs.set_name(ctx.layer_name()));
  if (rank == 3) {
    const std::string& name = ctx.layer_name();
    y = ctx.net().transpose(y, TransposeAttributes().set_perm({0, 2, 1, 3}).set_name(name + "/bshd"));
    y = ctx.net().reshape(y, ReshapeAttributes().set_shape({0, 0, -1}).set_name(name + "/merge_heads"));
  }
  TO_RETURN_IF_ERROR(ctx.set_output(0, y));
  // Without a past, the present key and value are K and V (in [B, H, S, D]).
  TO_RETURN_IF_ERROR(ctx.set_output(1, k));
  return ctx.set_output(2, v);
}

Status convert_rms_norm(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const int64_t axis, ctx.attribute_int("axis", -1));
  TO_ASSIGN_OR_RETURN(const double epsilon, ctx.attribute_float("epsilon", 1e-5));
  TO_ASSIGN_OR_RETURN(const int64_t stash_type, ctx.attribute_int("stash_type", 1));
  (void)stash_type;  // the layer computes its statistics in fp64 whatever the stash type
  TO_ASSIGN_OR_RETURN(const Tensor x, ctx.input(0));
  TO_ASSIGN_OR_RETURN(const Tensor scale, ctx.input(1));
  return ctx.set_output(0, ctx.net().rms_norm(x, scale, RmsNormAttributes().set_axis(axis).set_epsilon(epsilon)
                                                            .set_name(ctx.layer_name())));
}

}  // namespace

const std::vector<OpConverter>& transformer_converters() {
  static const std::vector<OpConverter> converters = {
      {"Attention", &convert_attention},
      {"RMSNormalization", &convert_rms_norm},
  };
  return converters;
}

}  // namespace tensoracle::onnx_import
