// Every inference pass in order, with one build-log line per pass that changed something
// (passes.h).
#include <fmt/format.h>

#include <functional>

#include "passes/passes.h"

namespace tensoracle::passes {

namespace {

size_t count_kind(const Network& n, OpKind kind) {
  size_t c = 0;
  for (size_t i = 0; i < n.num_nodes(); ++i) c += n.node(i).kind == kind;
  return c;
}

size_t count_transposed_products(const Network& n) {
  size_t c = 0;
  for (size_t i = 0; i < n.num_nodes(); ++i)
    if (const auto* mm = n.node(i).attributes<MatMulAttributes>(); mm && mm->transpose_b) ++c;
  return c;
}

// A pass and what its log line counts: "<name>: <how many> <what>", the count being how far
// `measure` moved.
struct Pass {
  const char* name;
  Result<Network> (*run)(const Network&);
  std::function<size_t(const Network&)> measure;
  const char* what;
};

std::function<size_t(const Network&)> layers_of(OpKind kind) {
  return [kind](const Network& n) { return count_kind(n, kind); };
}

}  // namespace

Result<Network> optimize_for_inference(const Network& network, std::vector<std::string>* log) {
  const Pass passes[] = {
      {"fold_batch_norm", fold_batch_norm, layers_of(OpKind::kBatchNorm), "batch norm layer(s) folded into convolutions"},
      {"fold_constant_casts", fold_constant_casts, layers_of(OpKind::kCast), "cast(s) of constants folded"},
      {"fuse_attention", fuse_attention, layers_of(OpKind::kAttention), "attention pattern(s) became attention layers"},
      {"fold_constant_quantize", fold_constant_quantize, layers_of(OpKind::kQuantize),
       "quantize layer(s) of constants folded"},
      {"merge_duplicate_quantize", merge_duplicate_quantize, layers_of(OpKind::kQuantize),
       "quantize layer(s) of a tensor already quantized so merged"},
      {"transpose_dequantized_weights", transpose_dequantized_weights, count_transposed_products,
       "quantized weight(s) stored transposed"},
  };
  Network current = network;
  for (const Pass& pass : passes) {
    TO_ASSIGN_OR_RETURN(Network next, pass.run(current));
    const size_t before = pass.measure(current), after = pass.measure(next);
    if (log && before != after)
      log->push_back(fmt::format("{}: {} {}", pass.name, before > after ? before - after : after - before, pass.what));
    current = std::move(next);
  }
  return remove_dead_layers(current);
}

}  // namespace tensoracle::passes
