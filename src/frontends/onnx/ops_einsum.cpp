// Einsum as the layers exporters' attention patterns need: one operand (a transpose, with sums
// over dropped letters) or two (a batched matrix product: "bij,bjk->bik", "bhid,bhjd->bhij",
// "bhij,bhjd->bhid", ...). Each operand is transposed to [batch..., free..., contracted...]
// (reshaped to one free and one contracted dim when a group has several letters), multiplied,
// and the product transposed to the output's order. Repeated letters in one operand (diagonals),
// ellipses and three or more operands are refused.
#include <algorithm>
#include <cctype>
#include <map>

#include "frontends/onnx/op_table.h"

namespace tensoracle::onnx_import {
namespace {

struct Equation {
  std::vector<std::string> operands;
  std::string output;
};

Result<Equation> parse_equation(NodeContext& ctx, std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  if (text.find("...") != std::string::npos) return ctx.refuse("equation '{}': ellipses are not supported", text);
  const size_t arrow = text.find("->");
  if (arrow == std::string::npos) return ctx.refuse("equation '{}': an implicit output (no '->') is not supported", text);
  Equation eq;
  eq.output = text.substr(arrow + 2);
  const std::string lhs = text.substr(0, arrow);
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    eq.operands.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::vector<std::string> all = eq.operands;
  all.push_back(eq.output);
  for (const std::string& term : all) {
    for (size_t i = 0; i < term.size(); ++i) {
      if (!std::isalpha(static_cast<unsigned char>(term[i])))
        return ctx.invalid("equation '{}': '{}' is not a letter", text, term[i]);
      if (term.find(term[i], i + 1) != std::string::npos)
        return ctx.refuse("equation '{}': the letter '{}' repeats in '{}' (diagonals are not supported)", text, term[i], term);
    }
  }
  for (char c : eq.output) {
    bool found = false;
    for (const std::string& op : eq.operands) found = found || op.find(c) != std::string::npos;
    if (!found) return ctx.invalid("equation '{}': output letter '{}' is in no operand", text, c);
  }
  return eq;
}

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

// Layers named "<node>/<step>".
class EinsumBuilder {
 public:
  explicit EinsumBuilder(NodeContext& ctx) : ctx_(ctx), net_(ctx.net()) {}

  // `x` (letters `from`) transposed to the letter order `to`; no layer when it is the same.
  Tensor permute(Tensor x, const std::string& from, const std::string& to) {
    if (from == to) return x;
    std::vector<int64_t> perm;
    for (char c : to) perm.push_back(static_cast<int64_t>(from.find(c)));
    return net_.transpose(x, TransposeAttributes().set_perm(perm).set_name(next()));
  }
  Tensor reshape(Tensor x, std::vector<int64_t> shape) {
    return net_.reshape(x, ReshapeAttributes().set_shape(std::move(shape)).set_name(next()));
  }
  // Sums `x` over its letters that are not in `keep`; `letters` becomes the remaining ones.
  Tensor sum_out(Tensor x, std::string& letters, const std::string& keep) {
    std::vector<int64_t> axes;
    std::string kept;
    for (size_t i = 0; i < letters.size(); ++i) {
      if (has(keep, letters[i])) {
        kept += letters[i];
      } else {
        axes.push_back(static_cast<int64_t>(i));
      }
    }
    if (axes.empty()) return x;
    letters = kept;
    return net_.reduce(x, ReduceAttributes().set_op(ReduceOp::kSum).set_axes(axes).set_keep_dims(false).set_name(next()));
  }
  Tensor matmul(Tensor a, Tensor b) { return net_.matmul(a, b, MatMulAttributes().set_name(next())); }

 private:
  std::string next() { return fmt::format("{}/{}", ctx_.layer_name(), step_++); }

  NodeContext& ctx_;
  Network& net_;
  int step_ = 0;
};

// The product of the sizes of `letters`; an error when one is dynamic.
Result<int64_t> group_size(NodeContext& ctx, const std::string& letters, const std::map<char, int64_t>& sizes) {
  int64_t product = 1;
  for (char c : letters) {
    const auto it = sizes.find(c);
    if (it == sizes.end() || it->second < 0)
      return ctx.refuse("letter '{}' has a dynamic size where einsum groups dims; not supported", c);
    product *= it->second;
  }
  return product;
}

Status convert_einsum(NodeContext& ctx) {
  TO_ASSIGN_OR_RETURN(const std::string text, ctx.attribute_string("equation", ""));
  TO_ASSIGN_OR_RETURN(const Equation eq, parse_equation(ctx, text));
  if (static_cast<int>(eq.operands.size()) != ctx.num_inputs())
    return ctx.invalid("equation '{}' has {} operands, the node {} inputs", text, eq.operands.size(), ctx.num_inputs());
  if (eq.operands.size() > 2) return ctx.refuse("equation '{}': more than two operands are not supported", text);
  std::vector<Tensor> x;
  std::map<char, int64_t> sizes;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    TO_ASSIGN_OR_RETURN(const Tensor t, ctx.input(i));
    const Dims shape = ctx.desc(t).shape;
    const std::string& letters = eq.operands[static_cast<size_t>(i)];
    if (shape.rank() != letters.size())
      return ctx.invalid("operand {} '{}' has {} letters for {}", i, letters, letters.size(), ctx.desc(t).to_string());
    for (size_t d = 0; d < letters.size(); ++d) {
      const auto [it, inserted] = sizes.emplace(letters[d], shape[d]);
      if (!inserted && it->second != shape[d] && it->second != 1 && shape[d] != 1 && it->second >= 0 && shape[d] >= 0)
        return ctx.invalid("letter '{}' is {} in one operand and {} in another", letters[d], it->second, shape[d]);
      if (!inserted && it->second == 1) it->second = shape[d];
    }
    x.push_back(t);
  }
  EinsumBuilder b(ctx);
  std::string a_letters = eq.operands[0];
  if (eq.operands.size() == 1) {
    const Tensor summed = b.sum_out(x[0], a_letters, eq.output);
    return ctx.set_output(0, a_letters == eq.output ? (summed == x[0] ? copy_of(ctx.net(), summed, ctx.layer_name()) : summed)
                                                    : b.permute(summed, a_letters, eq.output));
  }
  std::string b_letters = eq.operands[1];
  // Letters of one operand only that the output drops are summed out first.
  const Tensor a0 = b.sum_out(x[0], a_letters, eq.output + b_letters);
  const Tensor b0 = b.sum_out(x[1], b_letters, eq.output + a_letters);
  std::string batch, free_a, free_b, contracted;
  for (char c : a_letters) {
    if (has(b_letters, c)) (has(eq.output, c) ? batch : contracted) += c;
    else free_a += c;
  }
  for (char c : b_letters)
    if (!has(a_letters, c)) free_b += c;
  // A: [batch, free_a, contracted]; B: [batch, contracted, free_b]; one dim per group.
  Tensor a1 = b.permute(a0, a_letters, batch + free_a + contracted);
  Tensor b1 = b.permute(b0, b_letters, batch + contracted + free_b);
  const bool grouped = free_a.size() != 1 || free_b.size() != 1 || contracted.size() != 1;
  if (grouped) {
    TO_ASSIGN_OR_RETURN(const int64_t fa, group_size(ctx, free_a, sizes));
    TO_ASSIGN_OR_RETURN(const int64_t fb, group_size(ctx, free_b, sizes));
    TO_ASSIGN_OR_RETURN(const int64_t k, group_size(ctx, contracted, sizes));
    std::vector<int64_t> batch_dims(batch.size(), 0);  // copied
    std::vector<int64_t> a_shape = batch_dims, b_shape = batch_dims;
    a_shape.insert(a_shape.end(), {fa, k});
    b_shape.insert(b_shape.end(), {k, fb});
    a1 = b.reshape(a1, a_shape);
    b1 = b.reshape(b1, b_shape);
  }
  Tensor product = b.matmul(a1, b1);
  if (grouped) {
    std::vector<int64_t> shape(batch.size(), 0);
    for (char c : free_a + free_b) shape.push_back(sizes[c]);
    product = b.reshape(product, shape);
  }
  return ctx.set_output(0, b.permute(product, batch + free_a + free_b, eq.output));
}

}  // namespace

const std::vector<OpConverter>& einsum_converters() {
  static const std::vector<OpConverter> converters = {{"Einsum", &convert_einsum}};
  return converters;
}

}  // namespace tensoracle::onnx_import
