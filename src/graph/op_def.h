// What the graph knows about each node kind: its arity, its inference hook and (for a few ops)
// the defaults it resolves from other fields. Inference runs when a layer is defined (dims may
// be -1) and again in a backend with concrete input shapes, so it must accept both. One op per
// file under ops/, each defining `k<Kind>Op` (op_registry.cpp finds them through the op table):
//
//   Result<std::vector<TensorDesc>> infer(const InferContext& ctx, const SoftmaxAttributes& a);
//   extern const OpDef kSoftmaxOp = define_op<SoftmaxAttributes, &infer>(1, 1);
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "core/errors.h"
#include "tensoracle/network.h"

namespace tensoracle::graph {

struct InferContext {
  OpKind kind;
  const std::string& layer;
  const OpAttributes& attributes;
  std::vector<const TensorDesc*> inputs;  // nullptr: omitted optional input
  std::vector<std::string> input_names;   // tensor names, for errors

  // "layer 'conv1' (convolution): <message>"
  template <typename... Args>
  Status error(fmt::format_string<Args...> format, Args&&... args) const {
    return invalid_argument("layer '{}' ({}): {}", layer, op_kind_name(kind),
                            fmt::format(format, std::forward<Args>(args)...));
  }
  size_t num_inputs() const { return inputs.size(); }
  bool has(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  const TensorDesc& in(size_t i) const { return *inputs[i]; }
  // "input 'x' (fp32[1,3,8,8])" for messages.
  std::string describe(size_t i) const;

  // Errors unless input i is present.
  Status require(size_t i, const char* role) const;
  // Errors unless input i is one of `types` (named in the message).
  Status require_type(size_t i, std::initializer_list<DataType> types, const char* role) const;
  Status require_float(size_t i, const char* role) const;  // fp32, fp16 or bf16
  Status require_rank(size_t i, size_t min_rank, size_t max_rank, const char* role) const;
  Status require_same_type(size_t i, size_t j) const;
};

using InferFn = Result<std::vector<TensorDesc>> (*)(const InferContext&);
using ResolveFn = void (*)(OpAttributes&);

struct OpDef {
  int min_inputs = 0;
  int max_inputs = 0;  // -1: any number
  InferFn infer = nullptr;
  // Fills the defaults that depend on other fields before the node stores its attributes
  // (nullptr: none).
  ResolveFn resolve = nullptr;
};

// nullptr when the kind has no definition in this build.
const OpDef* find_op_def(OpKind kind);

// Errors naming the layer and field when an enumeration or data type field holds a value outside
// its enumeration (a cast integer): a layer method's struct is checked before inference reads it.
Status check_enumerations(const OpAttributes& attributes, const std::string& layer);

namespace internal {
template <typename T, Result<std::vector<TensorDesc>> (*Infer)(const InferContext&, const T&)>
Result<std::vector<TensorDesc>> typed_infer(const InferContext& ctx) {
  const T* a = std::get_if<T>(&ctx.attributes);
  if (!a) return Status(StatusCode::kInternal, fmt::format("layer '{}' ({}): inferred with another op's attributes", ctx.layer, op_kind_name(ctx.kind)));
  return Infer(ctx, *a);
}
template <typename T, void (*Resolve)(T&)>
void typed_resolve(OpAttributes& attributes) {
  if (T* a = std::get_if<T>(&attributes)) Resolve(*a);
}
}  // namespace internal

// The definition of the op whose attribute struct is T.
template <typename T, Result<std::vector<TensorDesc>> (*Infer)(const InferContext&, const T&)>
constexpr OpDef define_op(int min_inputs, int max_inputs) {
  return OpDef{min_inputs, max_inputs, &internal::typed_infer<T, Infer>, nullptr};
}
template <typename T, Result<std::vector<TensorDesc>> (*Infer)(const InferContext&, const T&), void (*Resolve)(T&)>
constexpr OpDef define_op(int min_inputs, int max_inputs) {
  return OpDef{min_inputs, max_inputs, &internal::typed_infer<T, Infer>, &internal::typed_resolve<T, Resolve>};
}

// ---- shape helpers shared by op files ----

// numpy broadcasting of two shapes; -1 against 1 or -1 stays -1, -1 against n>1 becomes n.
// nullopt when incompatible.
std::optional<Dims> broadcast_shapes(const Dims& a, const Dims& b);
// Maps axis in [-rank, rank) to [0, rank); nullopt when out of range.
std::optional<int64_t> normalize_axis(int64_t axis, size_t rank);
// The distinct dims `axes` name in [0, rank), sorted; every dim when `axes` is empty. The error
// names the bad axis.
Result<std::vector<int64_t>> reduce_axes(const std::vector<int64_t>& axes, size_t rank);
// Two dims that must agree: equal, or one of them dynamic.
inline bool dims_agree(int64_t a, int64_t b) { return a == b || a < 0 || b < 0; }
// A per-dim attribute for n dims: empty (the default for every dim) or n entries.
inline bool fits_dims(const std::vector<int64_t>& v, size_t n) { return v.empty() || v.size() == n; }
std::string join_ints(const std::vector<int64_t>& v);  // "[1,2,3]"

}  // namespace tensoracle::graph
