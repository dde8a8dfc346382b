// Shape values: what the importer knows of an integer tensor computed from the shapes of tensors
// with dynamic dims (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as exporters write for a
// dynamic batch or sequence). Each element is a product of a constant and dynamic-dim symbols
// (dim_symbols.h): 12, "batch", "batch * 12", "batch * seq". That is enough for the consumers that
// matter -- a Reshape or Expand whose shape element equals a dim of its input becomes the layer's
// "copy this dim" (0) -- and it is exact: an element that is not such a product (a Sub of two
// dims, a Div that does not divide) is not tracked, and whatever reads it is refused naming the
// dynamic dim it depends on.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace tensoracle::onnx_import {

// factor * symbols[0] * symbols[1] * ...; a constant when `symbols` is empty. `symbols` is sorted
// so that equal products compare equal.
struct SymbolicDim {
  int64_t factor = 1;
  std::vector<int> symbols;

  static SymbolicDim constant(int64_t value) { return SymbolicDim{value, {}}; }
  static SymbolicDim of(int symbol) { return SymbolicDim{1, {symbol}}; }
  bool is_constant() const { return symbols.empty(); }
  bool operator==(const SymbolicDim& o) const { return factor == o.factor && symbols == o.symbols; }
  bool operator!=(const SymbolicDim& o) const { return !(*this == o); }
};

// a * b; nullopt when the factor overflows.
std::optional<SymbolicDim> multiply(const SymbolicDim& a, const SymbolicDim& b);
// a / b when b divides a exactly (its factor divides a's, its symbols are among a's); nullopt
// otherwise, and for b = 0.
std::optional<SymbolicDim> divide(const SymbolicDim& a, const SymbolicDim& b);

// A scalar or 1-D int64 value of which some element is not constant.
struct ShapeValue {
  bool scalar = false;
  std::vector<SymbolicDim> elements;

  // The first symbol an element depends on (one exists unless every element is constant), or -1.
  int first_symbol() const {
    for (const SymbolicDim& e : elements)
      if (!e.is_constant()) return e.symbols.front();
    return -1;
  }
  bool is_constant() const { return first_symbol() < 0; }
};

}  // namespace tensoracle::onnx_import
