// A chain (or small DAG) of pointwise layers -- elementwise, unary, activation, cast, select --
// as one program that one kernel runs per output element, so a chain costs one launch and one
// pass over memory. The same program describes the epilogue fused after a matrix product or a
// convolution (its input 0 is then that layer's output, held in registers).
//
// Registers: register i < inputs.size() holds input i (read with numpy broadcasting to the
// output's shape, converted to the compute type); register inputs.size() + k holds the result of
// instrs[k]. The last instruction's register is the program's output. Each result is rounded to
// its instruction's `type` (the type of the layer's output tensor), so a fused chain computes what
// the unfused layers would (strong typing); integer results follow the CPU reference's rules
// (division truncates, saturating casts).
//
// Compute type: fp32 when every input and result is floating, bool or an integer of at most 16
// bits; fp64 otherwise (int32/int64 stay exact up to 2^53).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tensoracle/network.h"

namespace tensoracle::backends::cuda {

// One code per pointwise operation, expanded from the op tables (layers.h): every ElementwiseOp,
// UnaryOp and ActivationKind has the code of its own name, so none can be left out or mapped to
// another's. The device evaluates codes per element (kernels/pointwise_kernel.cu), so they stay
// compile-time constants of one small enum.
enum class PointwiseCode : uint8_t {
#define TO_POINTWISE_CODE_(Op, ...) k##Op,
  TENSORACLE_ELEMENTWISE_OPS(TO_POINTWISE_CODE_)  // a op b
  TENSORACLE_UNARY_OPS(TO_POINTWISE_CODE_)        // op(a)
  TENSORACLE_ACTIVATION_KINDS(TO_POINTWISE_CODE_) // kind(a; alpha, beta)
#undef TO_POINTWISE_CODE_
  kSelect,  // a != 0 ? b : c
  kCast,    // a, rounded to `type`
  // A per-tensor quantize layer: fl32(a) / fl32(b) (one fp32 division), then int8 rint saturated
  // to [-128, 127] (NaN -> 0) or fp8 e4m3 nearest even saturated to +-448, as `type` says
  // (docs/quantization.md); b is the scale, one value broadcast.
  kQuantize,
};

#define TO_POINTWISE_CODE_CASE_(Enum, Op) \
  case Enum::k##Op: return PointwiseCode::k##Op;
constexpr PointwiseCode pointwise_code(ElementwiseOp op) {
#define TO_CASE_(Op, ...) TO_POINTWISE_CODE_CASE_(ElementwiseOp, Op)
  switch (op) { TENSORACLE_ELEMENTWISE_OPS(TO_CASE_) }
#undef TO_CASE_
  return PointwiseCode::kCast;
}
constexpr PointwiseCode pointwise_code(UnaryOp op) {
#define TO_CASE_(Op, ...) TO_POINTWISE_CODE_CASE_(UnaryOp, Op)
  switch (op) { TENSORACLE_UNARY_OPS(TO_CASE_) }
#undef TO_CASE_
  return PointwiseCode::kCast;
}
constexpr PointwiseCode pointwise_code(ActivationKind kind) {
#define TO_CASE_(Op, ...) TO_POINTWISE_CODE_CASE_(ActivationKind, Op)
  switch (kind) { TENSORACLE_ACTIVATION_KINDS(TO_CASE_) }
#undef TO_CASE_
  return PointwiseCode::kCast;
}
#undef TO_POINTWISE_CODE_CASE_

struct PointwiseInstr {
  PointwiseCode code = PointwiseCode::kCast;
  int a = -1, b = -1, c = -1;  // source registers (-1: unused)
  double alpha = 0, beta = 0;  // activation parameters (defaults resolved)
  DataType type = DataType::kFloat32;
  int64_t node = -1;  // the network node this came from (maps fused layers back to the graph)
};

struct PointwiseProgram {
  std::vector<TensorDesc> inputs;
  std::vector<PointwiseInstr> instrs;

  bool empty() const { return instrs.empty(); }
  int output_register() const { return static_cast<int>(inputs.size() + instrs.size()) - 1; }
  DataType output_type() const { return instrs.back().type; }
  // The type register r holds (none for a register the program does not have).
  std::optional<DataType> register_type(int r) const;
  // "add(r0, r1):fp16 -> relu(r2):fp16", for plans and logs.
  std::string to_string() const;
};

// Appends the computation of pointwise `node` (whose concrete output type is `output`) reading
// `operands` (one register per node input, in order) and returns the result's register.
// `node_index` is recorded in the instruction. kUnsupported for a layer a program cannot hold.
// A quantize layer counts as pointwise here when its scale is one value held by a program input
// (the chain a pointwise step ends with, plan_lowering.cpp).
Result<int> append_pointwise_node(PointwiseProgram& program, const Node& node, int64_t node_index,
                                  const TensorDesc& output, const std::vector<int>& operands);

}  // namespace tensoracle::backends::cuda
