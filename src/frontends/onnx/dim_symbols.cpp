// DimSymbols (dim_symbols.h): naming graph inputs' dynamic dims and carrying the names through
// the layers whose definitions tie an output dim to an input dim.
#include "frontends/onnx/dim_symbols.h"

#include <fmt/format.h>

namespace tensoracle::onnx_import {
namespace {

// Where an output dim comes from: (input index, dim of that input).
using Source = std::pair<size_t, size_t>;

// The input dims that output dim `j` of a numpy-broadcasting layer over `inputs` is made of: each
// input right-aligned to `out_rank` and reaching dim j.
std::vector<Source> broadcast_sources(const Network& net, const std::vector<Tensor>& inputs, size_t out_rank, size_t j) {
  std::vector<Source> sources;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].valid()) continue;
    const size_t rank = net.tensor(inputs[k]).desc.shape.rank();
    if (rank > out_rank || j < out_rank - rank) continue;
    sources.emplace_back(k, j - (out_rank - rank));
  }
  return sources;
}

int64_t normalized(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

}  // namespace

int DimSymbols::add_symbol(std::string description) {
  descriptions_.push_back(std::move(description));
  return static_cast<int>(descriptions_.size() - 1);
}

void DimSymbols::name_input(Tensor t, const std::string& input, const std::vector<std::string>& dim_params,
                            const Dims& shape) {
  for (size_t d = 0; d < shape.rank(); ++d) {
    if (shape[d] >= 0) continue;
    const std::string& param = d < dim_params.size() ? dim_params[d] : std::string();
    int symbol = -1;
    if (param.empty()) {
      symbol = add_symbol(fmt::format("dynamic dim {} of input '{}'", d, input));
    } else if (const auto it = by_param_.find(param); it != by_param_.end()) {
      symbol = it->second;
    } else {
      symbol = add_symbol(fmt::format("dynamic dim '{}' of input '{}'", param, input));
      by_param_[param] = symbol;
    }
    dims_[{t.id, d}] = SymbolicDim::of(symbol);
  }
}

std::optional<std::pair<Tensor, size_t>> DimSymbols::source(const SymbolicDim& value) const {
  for (const auto& [at, v] : dims_)
    if (v == value) return std::make_pair(Tensor{at.first}, at.second);
  return std::nullopt;
}

SymbolicDim DimSymbols::dim(const Network& net, Tensor t, size_t d) {
  const TensorInfo& info = net.tensor(t);
  if (info.desc.shape[d] >= 0) return SymbolicDim::constant(info.desc.shape[d]);
  if (const std::optional<SymbolicDim> value = known(t, d)) return *value;
  const SymbolicDim fresh = SymbolicDim::of(add_symbol(fmt::format("dynamic dim {} of '{}'", d, info.name)));
  dims_[{t.id, d}] = fresh;
  return fresh;
}

std::optional<SymbolicDim> DimSymbols::known(Tensor t, size_t d) const {
  const auto it = dims_.find({t.id, d});
  if (it == dims_.end()) return std::nullopt;
  return it->second;
}

void DimSymbols::set(Tensor t, size_t d, const SymbolicDim& value) { dims_.emplace(std::make_pair(t.id, d), value); }

void DimSymbols::propagate(const Network& net, size_t first) {
  for (size_t i = first; i < net.num_nodes(); ++i) propagate_node(net, net.node(i));
}

void DimSymbols::propagate_node(const Network& net, const Node& node) {
  if (node.outputs.empty() || node.inputs.empty() || !node.inputs[0].valid()) return;
  const Tensor out = node.outputs[0];
  const Dims& out_shape = net.tensor(out).desc.shape;
  const size_t rank = out_shape.rank();
  const size_t in_rank = net.tensor(node.inputs[0]).desc.shape.rank();
  // The sources of each output dim; a dim is named when all its dynamic sources agree on a known
  // value and the others are static 1 (broadcast) -- an unnamed dynamic source could be the one
  // that wins a broadcast.
  std::vector<std::vector<Source>> sources(rank);
  const auto same = [&](size_t j, size_t input, size_t d) { sources[j] = {{input, d}}; };
  switch (node.kind) {
    case OpKind::kElementwise:
    case OpKind::kSelect:
      for (size_t j = 0; j < rank; ++j) sources[j] = broadcast_sources(net, node.inputs, rank, j);
      break;
    case OpKind::kUnary:
    case OpKind::kActivation:
    case OpKind::kCast:
    case OpKind::kSoftmax:
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm:
    case OpKind::kGroupNorm:
    case OpKind::kInstanceNorm:
    case OpKind::kBatchNorm:
    case OpKind::kQuantize:
    case OpKind::kDequantize:
      if (in_rank == rank)
        for (size_t j = 0; j < rank; ++j) same(j, 0, j);
      break;
    case OpKind::kConvolution:
    case OpKind::kDeconvolution:
    case OpKind::kPooling:
      if (rank > 0 && in_rank > 0) same(0, 0, 0);  // the batch
      break;
    case OpKind::kTranspose:
      if (const auto* a = node.attributes<TransposeAttributes>(); a && a->perm.size() == rank)
        for (size_t j = 0; j < rank; ++j) same(j, 0, static_cast<size_t>(a->perm[j]));
      break;
    case OpKind::kReshape:
      if (const auto* a = node.attributes<ReshapeAttributes>(); a && a->shape.size() == rank)
        for (size_t j = 0; j < rank && j < in_rank; ++j)
          if (a->shape[j] == 0) same(j, 0, j);
      break;
    case OpKind::kConcat:
      if (const auto* a = node.attributes<ConcatAttributes>(); a && in_rank == rank)
        for (size_t j = 0; j < rank; ++j)
          if (static_cast<int64_t>(j) != normalized(a->axis, rank)) same(j, 0, j);
      break;
    case OpKind::kPad:
      if (const auto* a = node.attributes<PadAttributes>(); a && in_rank == rank && a->pre.size() == a->post.size())
        for (size_t j = 0; j < rank; ++j) {
          const size_t lead = rank - std::min(rank, a->pre.size());  // pre/post cover the trailing dims
          if (j < lead || (a->pre[j - lead] == 0 && a->post[j - lead] == 0)) same(j, 0, j);
        }
      break;
    case OpKind::kReduce:
      if (const auto* a = node.attributes<ReduceAttributes>(); a && !a->axes.empty()) {
        std::vector<bool> reduced(in_rank, false);
        for (int64_t axis : a->axes)
          if (const int64_t n = normalized(axis, in_rank); n >= 0 && n < static_cast<int64_t>(in_rank))
            reduced[static_cast<size_t>(n)] = true;
        for (size_t d = 0, j = 0; d < in_rank && j < rank; ++d) {
          if (!reduced[d]) same(j, 0, d);
          if (!reduced[d] || a->keep_dims) ++j;
        }
      }
      break;
    case OpKind::kGather:
      if (const auto* a = node.attributes<GatherAttributes>(); a && node.inputs.size() == 2) {
        const size_t index_rank = net.tensor(node.inputs[1]).desc.shape.rank();
        const int64_t axis = normalized(a->axis, in_rank);
        if (axis < 0 || rank != in_rank + index_rank - 1) break;
        const size_t ax = static_cast<size_t>(axis);
        for (size_t j = 0; j < rank; ++j) {
          if (j < ax) same(j, 0, j);
          else if (j < ax + index_rank) same(j, 1, j - ax);
          else same(j, 0, j - index_rank + 1);
        }
      }
      break;
    case OpKind::kIota:
      if (const auto* a = node.attributes<IotaAttributes>(); a && rank == 1)
        if (const int64_t axis = normalized(a->axis, in_rank); axis >= 0) same(0, 0, static_cast<size_t>(axis));
      break;
    case OpKind::kMatMul:
      if (const auto* a = node.attributes<MatMulAttributes>(); a && node.inputs.size() == 2 && rank >= 2) {
        const size_t b_rank = net.tensor(node.inputs[1]).desc.shape.rank();
        if (in_rank < 2 || b_rank < 2) break;
        // The batch dims broadcast; the rows come from a, the columns from b.
        const std::vector<Tensor> operands{node.inputs[0], node.inputs[1]};
        for (size_t j = 0; j + 2 < rank; ++j) {
          for (const Source& s : broadcast_sources(net, operands, rank, j))
            if (s.second + 2 < (s.first == 0 ? in_rank : b_rank)) sources[j].push_back(s);
        }
        same(rank - 2, 0, a->transpose_a ? in_rank - 1 : in_rank - 2);
        same(rank - 1, 1, a->transpose_b ? b_rank - 2 : b_rank - 1);
      }
      break;
    default:
      break;
  }
  for (size_t j = 0; j < rank; ++j) {
    if (out_shape[j] >= 0 || sources[j].empty()) continue;
    std::optional<SymbolicDim> agreed;
    bool ok = true;
    for (const auto& [input, d] : sources[j]) {
      const Tensor t = node.inputs[input];
      const int64_t size = net.tensor(t).desc.shape[d];
      if (size == 1) continue;
      const std::optional<SymbolicDim> value = size < 0 ? known(t, d) : std::nullopt;
      if (!value || (agreed && *agreed != *value)) {
        ok = false;
        break;
      }
      agreed = value;
    }
    if (ok && agreed) set(out, j, *agreed);
  }
}

}  // namespace tensoracle::onnx_import
