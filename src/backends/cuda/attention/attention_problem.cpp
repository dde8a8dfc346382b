#include "backends/cuda/attention/attention_problem.h"

#include <cmath>

#include "core/errors.h"
#include "graph/attributes.h"

namespace tensoracle::backends::cuda {

int64_t AttentionProblem::batch_count() const {
  int64_t n = 1;
  for (int64_t dim : batch) n *= dim;
  return n;
}

Dims AttentionProblem::scores_shape() const {
  std::vector<int64_t> dims = batch.values();
  dims.push_back(lq);
  dims.push_back(lk);
  return Dims(std::move(dims));
}

Dims AttentionProblem::output_shape() const {
  std::vector<int64_t> dims = batch.values();
  dims.push_back(lq);
  dims.push_back(dv);
  return Dims(std::move(dims));
}

bool AttentionProblem::all_linear() const {
  for (Layout layout : {q_layout, k_layout, v_layout, out_layout})
    if (layout != Layout::kLinear) return false;
  return true;
}

std::vector<int64_t> AttentionProblem::batch_strides(const Dims& operand) const {
  const size_t nb = batch.rank(), own = operand.rank() - 2, lead = nb - own;
  std::vector<int64_t> strides(nb, 0);
  int64_t stride = operand[own] * operand[own + 1];  // one matrix
  for (size_t dim = nb; dim-- > lead;) {
    const int64_t size = operand[dim - lead];
    if (size != 1) strides[dim] = stride;
    stride *= size;
  }
  return strides;
}

Result<AttentionProblem> describe_attention(const StepInstance& step) {
  const NodeInstance& anchor = step.anchor;
  const std::string& layer = anchor.node.name;
  if (anchor.node.kind != OpKind::kAttention) return unsupported("layer '{}': not an attention layer", layer);
  if (anchor.inputs.size() < 3 || !anchor.inputs[0] || !anchor.inputs[1] || !anchor.inputs[2] || anchor.outputs.size() != 1)
    return unsupported("layer '{}': attention needs q, k, v and one output", layer);
  if (step.has_epilogue()) return unsupported("layer '{}': attention fuses no epilogue ({})", layer, step.program.to_string());
  AttentionProblem p;
  const auto layout_of = [&](const std::vector<Layout>& layouts, size_t i) { return i < layouts.size() ? layouts[i] : Layout::kLinear; };
  for (size_t i = 0; i < step.input_layouts.size(); ++i) {
    const Layout layout = step.input_layouts[i];
    if (layout == Layout::kLinear || (i < 3 && layout == Layout::kBshd && anchor.inputs[i]->shape.rank() == 4)) continue;
    return unsupported("layer '{}': input {} has layout {}; attention takes linear tensors (q, k, v: also rank-4 bshd)", layer,
                       i, layout_name(layout));
  }
  for (size_t i = 0; i < step.output_layouts.size(); ++i) {
    const Layout layout = step.output_layouts[i];
    if (layout == Layout::kLinear || (layout == Layout::kBshd && anchor.outputs[0].shape.rank() == 4)) continue;
    return unsupported("layer '{}': output layout {}; attention writes linear tensors (or rank-4 bshd)", layer,
                       layout_name(layout));
  }
  p.q_layout = layout_of(step.input_layouts, 0);
  p.k_layout = layout_of(step.input_layouts, 1);
  p.v_layout = layout_of(step.input_layouts, 2);
  p.out_layout = layout_of(step.output_layouts, 0);

  p.layer = layer;
  p.dtype = anchor.inputs[0]->dtype;
  p.q = anchor.inputs[0]->shape;
  p.k = anchor.inputs[1]->shape;
  p.v = anchor.inputs[2]->shape;
  const Dims& out = anchor.outputs[0].shape;
  for (const Dims* shape : std::initializer_list<const Dims*>{&p.q, &p.k, &p.v, &out}) {
    if (!shape->is_static()) return unsupported("layer '{}': shape {} is not concrete", layer, shape->to_string());
    if (shape->rank() < 2 || shape->rank() > Dims::kMaxRank)
      return unsupported("layer '{}': operand of rank {} (shape {}); attention takes ranks 2 to {}", layer, shape->rank(),
                         shape->to_string(), Dims::kMaxRank);
  }
  if (p.dtype != DataType::kFloat32 && p.dtype != DataType::kFloat16 && p.dtype != DataType::kBFloat16)
    return unsupported("layer '{}': type {}; attention runs fp32, fp16 and bf16", layer, data_type_name(p.dtype));
  if (anchor.inputs[1]->dtype != p.dtype || anchor.inputs[2]->dtype != p.dtype || anchor.outputs[0].dtype != p.dtype)
    return unsupported("layer '{}': q, k, v and the output must share one type", layer);

  p.lq = p.q[p.q.rank() - 2];
  p.d = p.q[p.q.rank() - 1];
  p.lk = p.k[p.k.rank() - 2];
  p.dv = p.v[p.v.rank() - 1];
  p.batch = Dims(std::vector<int64_t>(out.values().begin(), out.values().end() - 2));
  if (p.k[p.k.rank() - 1] != p.d || p.v[p.v.rank() - 2] != p.lk || out[out.rank() - 2] != p.lq ||
      out[out.rank() - 1] != p.dv)
    return invalid_argument("layer '{}': shapes q {} k {} v {} output {} do not agree", layer, p.q.to_string(),
                            p.k.to_string(), p.v.to_string(), out.to_string());
  for (const Dims* shape : {&p.q, &p.k, &p.v}) {
    const size_t own = shape->rank() - 2;
    if (own > p.batch.rank())
      return invalid_argument("layer '{}': operand {} has more batch dims than the output {}", layer, shape->to_string(),
                              out.to_string());
    for (size_t d = 0; d < own; ++d) {
      const int64_t size = (*shape)[d], target = p.batch[p.batch.rank() - own + d];
      if (size != target && size != 1)
        return invalid_argument("layer '{}': operand {} does not broadcast to the output {}", layer, shape->to_string(),
                                out.to_string());
    }
  }

  TO_ASSIGN_OR_RETURN(const AttentionAttributes* attrs, graph::attributes_of<AttentionAttributes>(anchor.node));
  p.scale = attrs->scale_for(p.d);
  p.causal = attrs->causal;
  if (anchor.inputs.size() > 3 && anchor.inputs[3]) {
    p.has_mask = true;
    p.mask_dtype = anchor.inputs[3]->dtype;
    p.mask = anchor.inputs[3]->shape;
    if (p.mask_dtype != DataType::kBool && p.mask_dtype != p.dtype)
      return unsupported("layer '{}': mask of type {}; it must be bool or {}", layer, data_type_name(p.mask_dtype),
                         data_type_name(p.dtype));
    const Dims scores = p.scores_shape();
    if (!p.mask.is_static() || p.mask.rank() > scores.rank())
      return invalid_argument("layer '{}': mask {} does not broadcast to the scores {}", layer, p.mask.to_string(),
                              scores.to_string());
    const size_t lead = scores.rank() - p.mask.rank();
    for (size_t d = 0; d < p.mask.rank(); ++d)
      if (p.mask[d] != 1 && p.mask[d] != scores[lead + d])
        return invalid_argument("layer '{}': mask {} does not broadcast to the scores {}", layer, p.mask.to_string(),
                                scores.to_string());
  }
  return p;
}

}  // namespace tensoracle::backends::cuda
