// What the graph knows about each node kind: its arity and its inference hook. Inference runs
// when a layer is defined (dims may be -1) and again in a backend with concrete input shapes, so
// it must accept both. One op per file under ops/; each registers itself in op_registry.cpp.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/errors.h"
#include "graph/attributes.h"
#include "tensoracle/network.h"

namespace tensoracle::graph {

struct InferContext {
  OpKind kind;
  const std::string& layer;
  const AttributeMap& attrs;
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

struct OpDef {
  int min_inputs = 0;
  int max_inputs = 0;  // -1: any number
  InferFn infer = nullptr;
};

// nullptr when the kind has no definition in this build.
const OpDef* find_op_def(OpKind kind);

// ---- shape helpers shared by op files ----

// numpy broadcasting of two shapes; -1 against 1 or -1 stays -1, -1 against n>1 becomes n.
// nullopt when incompatible.
std::optional<Dims> broadcast_shapes(const Dims& a, const Dims& b);
// Maps axis in [-rank, rank) to [0, rank); nullopt when out of range.
std::optional<int64_t> normalize_axis(int64_t axis, size_t rank);
// Two dims that must agree: equal, or one of them dynamic.
inline bool dims_agree(int64_t a, int64_t b) { return a == b || a < 0 || b < 0; }
// Spatial vector attribute: empty -> `fill` repeated n times; otherwise must have n entries.
std::optional<std::vector<int64_t>> spatial_attr(const AttributeMap& attrs, const std::string& key, size_t n,
                                                 int64_t fill);
std::string join_ints(const std::vector<int64_t>& v);  // "[1,2,3]"

}  // namespace tensoracle::graph
