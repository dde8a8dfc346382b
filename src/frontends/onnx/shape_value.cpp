// multiply and divide of symbolic dims (shape_value.h).
#include "frontends/onnx/shape_value.h"

#include "tensoracle/types.h"

namespace tensoracle::onnx_import {

std::optional<SymbolicDim> multiply(const SymbolicDim& a, const SymbolicDim& b) {
  const std::optional<int64_t> factor = checked_mul(a.factor, b.factor);
  if (!factor) return std::nullopt;
  SymbolicDim out{*factor, a.symbols};
  out.symbols.insert(out.symbols.end(), b.symbols.begin(), b.symbols.end());
  std::sort(out.symbols.begin(), out.symbols.end());
  return out;
}

std::optional<SymbolicDim> divide(const SymbolicDim& a, const SymbolicDim& b) {
  if (b.factor == 0 || a.factor % b.factor != 0) return std::nullopt;
  SymbolicDim out{a.factor / b.factor, a.symbols};
  for (int s : b.symbols) {
    const auto it = std::find(out.symbols.begin(), out.symbols.end(), s);
    if (it == out.symbols.end()) return std::nullopt;
    out.symbols.erase(it);
  }
  return out;
}

}  // namespace tensoracle::onnx_import
