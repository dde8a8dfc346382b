// Scaled dot-product attention written out as layers becomes one attention layer (passes.h).
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include "graph/attributes.h"
#include "passes/constant_values.h"
#include "passes/passes.h"
#include "passes/rebuild.h"

namespace tensoracle::passes {

namespace {

// The attention one softmax anchors: out = matmul(softmax(scale * matmul(q, k^T) + mask), v).
struct AttentionPattern {
  Tensor q, v, mask;  // mask: invalid when there is none
  // k as the attention layer reads it ([..., Lk, d]): `k_source` itself, or transposed by `k_perm`.
  Tensor k_source;
  std::vector<int64_t> k_perm;  // empty: no transpose
  double scale = 1.0;
  size_t product = 0;  // the matmul with v, whose output the attention layer computes
};

class AttentionMatcher {
 public:
  explicit AttentionMatcher(const Network& net) : net_(net), uses_(consumer_counts(net)) {}

  std::optional<AttentionPattern> match(size_t softmax_index) const {
    const Node& softmax = net_.node(softmax_index);
    const auto* sm = softmax.attributes<SoftmaxAttributes>();
    const TensorDesc& probabilities = desc(softmax.outputs[0]);
    const int64_t rank = static_cast<int64_t>(probabilities.shape.rank());
    if (!sm || rank < 2 || (sm->axis != -1 && sm->axis != rank - 1) || !is_floating_point(probabilities.dtype))
      return std::nullopt;
    AttentionPattern p;
    // softmax -> matmul(probabilities, v), its only reader.
    const auto product = only_reader(softmax.outputs[0]);
    if (!product) return std::nullopt;
    const Node& pv = net_.node(*product);
    const auto* pv_attrs = pv.attributes<MatMulAttributes>();
    if (!pv_attrs || pv_attrs->transpose_a || pv_attrs->transpose_b || pv.inputs[0] != softmax.outputs[0] ||
        pv.inputs[1] == softmax.outputs[0])
      return std::nullopt;
    p.product = *product;
    p.v = pv.inputs[1];
    // [add(., mask)] <- [mul(., c) | div(., c)] <- matmul(q, k^T)
    Tensor t = softmax.inputs[0];
    if (const Node* add = single_use_producer(t, OpKind::kElementwise); add && op_of(*add) == ElementwiseOp::kAdd) {
      const bool scores_first = is_scores(add->inputs[0]);
      const Tensor scores = scores_first ? add->inputs[0] : add->inputs[1];
      if (!is_scores(scores) || desc(scores).shape != desc(t).shape) return std::nullopt;
      p.mask = scores_first ? add->inputs[1] : add->inputs[0];
      t = scores;
    }
    if (const Node* scaling = single_use_producer(t, OpKind::kElementwise)) {
      const ElementwiseOp op = op_of(*scaling);
      const std::optional<double> c = scalar_constant(scaling->inputs[1]);
      if ((op != ElementwiseOp::kMul && op != ElementwiseOp::kDiv) || !c || *c == 0 || !std::isfinite(*c) ||
          desc(scaling->inputs[0]).shape != desc(t).shape)
        return std::nullopt;
      p.scale = op == ElementwiseOp::kMul ? *c : 1.0 / *c;
      t = scaling->inputs[0];
    }
    const Node* qk = single_use_producer(t, OpKind::kMatMul);
    if (!qk) return std::nullopt;
    const auto* qk_attrs = qk->attributes<MatMulAttributes>();
    if (!qk_attrs || qk_attrs->transpose_a) return std::nullopt;
    p.q = qk->inputs[0];
    if (!key_of(qk->inputs[1], qk_attrs->transpose_b, p)) return std::nullopt;
    // The attention layer's own shape rules (k and v in one sequence, q and k in one head dim,
    // rank >= 2, one floating type, the mask of q's type or bool and broadcasting to the scores).
    const DataType type = desc(p.q).dtype;
    if (desc(p.v).dtype != type || desc(qk->inputs[1]).dtype != type || probabilities.dtype != type ||
        desc(p.v).shape.rank() != probabilities.shape.rank())
      return std::nullopt;
    if (p.mask.valid() && desc(p.mask).dtype != type && desc(p.mask).dtype != DataType::kBool) return std::nullopt;
    return p;
  }

 private:
  const TensorDesc& desc(Tensor t) const { return net_.tensor(t).desc; }

  // The layer that alone reads `t` (t no network output), if any.
  std::optional<size_t> only_reader(Tensor t) const {
    if (uses_[t.id] != 1) return std::nullopt;
    for (size_t i = 0; i < net_.num_nodes(); ++i)
      for (Tensor in : net_.node(i).inputs)
        if (in == t) return i;
    return std::nullopt;
  }

  // The producer of `t` when it is a layer of `kind` whose output only the pattern reads.
  const Node* single_use_producer(Tensor t, OpKind kind) const {
    const int64_t p = net_.tensor(t).producer;
    if (p < 0 || uses_[t.id] != 1) return nullptr;
    const Node& node = net_.node(static_cast<size_t>(p));
    return node.kind == kind && node.outputs.size() == 1 ? &node : nullptr;
  }

  static ElementwiseOp op_of(const Node& node) {
    const auto* e = node.attributes<ElementwiseAttributes>();
    return e ? e->op : ElementwiseOp::kMax;  // kMax: matches no case here
  }

  // Whether `t` is computed by a matmul or a scaling of one (the scores, not the mask).
  bool is_scores(Tensor t) const {
    const int64_t p = net_.tensor(t).producer;
    if (p < 0) return false;
    const Node& node = net_.node(static_cast<size_t>(p));
    if (node.kind == OpKind::kMatMul) return true;
    return node.kind == OpKind::kElementwise && !node.inputs.empty() && is_scores(node.inputs[0]) &&
           scalar_constant(node.inputs[1]).has_value();
  }

  std::optional<double> scalar_constant(Tensor t) const {
    const std::optional<ConstantValues> c = constant_values(net_, t);
    if (!c || c->values.size() != 1) return std::nullopt;
    return c->values[0];
  }

  // k from the product's second operand: itself when the product transposes it; else a
  // transpose that swaps its last two dims (composed with the transpose producing it, if any).
  bool key_of(Tensor kt, bool transposed, AttentionPattern& p) const {
    if (transposed) {
      p.k_source = kt;
      return true;
    }
    const size_t rank = desc(kt).shape.rank();
    if (rank < 2) return false;
    std::vector<int64_t> swap(rank);
    std::iota(swap.begin(), swap.end(), 0);
    std::swap(swap[rank - 1], swap[rank - 2]);
    const int64_t producer = net_.tensor(kt).producer;
    const Node* transpose = producer >= 0 ? &net_.node(static_cast<size_t>(producer)) : nullptr;
    const auto* t_attrs = transpose ? transpose->attributes<TransposeAttributes>() : nullptr;
    if (!t_attrs) {  // k^T is computed some other way: read it through a transpose
      p.k_source = kt;
      p.k_perm = swap;
      return true;
    }
    std::vector<int64_t> perm = t_attrs->perm;
    if (perm.empty()) {  // reverses the dims
      perm.resize(rank);
      std::iota(perm.rbegin(), perm.rend(), 0);
    }
    if (perm.size() != rank) return false;
    // k = transpose(kt, swap) = transpose(source, perm o swap).
    std::vector<int64_t> composed(rank);
    for (size_t i = 0; i < rank; ++i) composed[i] = perm[static_cast<size_t>(swap[i])];
    p.k_source = transpose->inputs[0];
    bool identity = true;
    for (size_t i = 0; i < rank; ++i) identity = identity && composed[i] == static_cast<int64_t>(i);
    if (!identity) p.k_perm = composed;
    return true;
  }

  const Network& net_;
  std::vector<int> uses_;
};

}  // namespace

Result<Network> fuse_attention(const Network& network) {
  const AttentionMatcher matcher(network);
  std::vector<std::optional<AttentionPattern>> by_product(network.num_nodes());
  std::vector<std::string> names(network.num_nodes());
  for (size_t i = 0; i < network.num_nodes(); ++i) {
    if (network.node(i).kind != OpKind::kSoftmax) continue;
    if (auto p = matcher.match(i)) {
      names[p->product] = network.node(i).name;
      by_product[p->product] = std::move(p);
    }
  }
  // The product with v becomes the attention layer; the layers before it are left unread and
  // removed (optimize_for_inference ends with remove_dead_layers).
  return rebuild(network, [&](Rebuild& r, size_t index) -> Result<bool> {
    const std::optional<AttentionPattern>& p = by_product[index];
    if (!p) return false;
    Network& net = r.target();
    Tensor k = r.mapped(p->k_source);
    if (!p->k_perm.empty())
      k = net.transpose(k, TransposeAttributes().set_perm(p->k_perm).set_name(names[index] + ".attention.key"));
    const Tensor out = net.attention(r.mapped(p->q), k, r.mapped(p->v), r.mapped(p->mask),
                                     AttentionAttributes().set_scale(p->scale).set_name(names[index] + ".attention"));
    TO_RETURN_IF_ERROR(net.status());
    r.map(network.node(index).outputs[0], out);
    return true;
  });
}

}  // namespace tensoracle::passes
