#include "backends/cuda/pointwise_program.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "graph/attributes.h"

namespace tensoracle::backends::cuda {

namespace {

// Codes follow the graph's enumerations in order (pointwise_program.h), so a layer's op maps by
// offset from the first code of its group.
PointwiseCode offset_code(PointwiseCode first, int offset) {
  return static_cast<PointwiseCode>(static_cast<int>(first) + offset);
}

const char* code_name(PointwiseCode code) {
  static constexpr const char* kNames[] = {
      "add",   "sub",  "mul",        "div",        "pow",        "max",   "min",        "equal",     "less",
      "greater", "less_equal", "greater_equal", "and", "or",
      "exp",   "log",  "sqrt",       "rsqrt",      "recip",      "abs",   "neg",        "sin",       "cos",
      "erf",   "floor", "ceil",      "round",
      "relu",  "leaky_relu", "sigmoid", "tanh",   "gelu_erf",   "gelu_tanh", "silu",  "softplus",  "clip",
      "hard_sigmoid", "hard_swish",
      "select", "cast"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(PointwiseCode::kCast) + 1,
                "one name per PointwiseCode");
  return kNames[static_cast<int>(code)];
}

bool has_parameters(PointwiseCode code) {
  switch (code) {
    case PointwiseCode::kLeakyRelu:
    case PointwiseCode::kSoftplus:
    case PointwiseCode::kClip:
    case PointwiseCode::kHardSigmoid:
    case PointwiseCode::kHardSwish: return true;
    default: return false;
  }
}

}  // namespace

bool is_pointwise(OpKind kind) {
  return kind == OpKind::kElementwise || kind == OpKind::kUnary || kind == OpKind::kActivation ||
         kind == OpKind::kCast || kind == OpKind::kSelect;
}

std::string PointwiseProgram::to_string() const {
  std::string out;
  for (size_t k = 0; k < instrs.size(); ++k) {
    const PointwiseInstr& in = instrs[k];
    if (k) out += " -> ";
    out += code_name(in.code);
    out += "(";
    bool comma = false;
    for (int r : {in.a, in.b, in.c}) {
      if (r < 0) continue;
      out += fmt::format("{}r{}", comma ? ", " : "", r);
      comma = true;
    }
    if (has_parameters(in.code)) out += fmt::format("; {}, {}", in.alpha, in.beta);
    out += fmt::format("):{}", data_type_name(in.type));
  }
  return out;
}

Result<int> append_pointwise_node(PointwiseProgram& program, const Node& node, int64_t node_index,
                                  const TensorDesc& output, const std::vector<int>& operands) {
  const int registers = static_cast<int>(program.inputs.size() + program.instrs.size());
  auto operand = [&](size_t i) -> Result<int> {
    if (i >= operands.size() || operands[i] < 0 || operands[i] >= registers)
      return invalid_argument("layer '{}': pointwise operand {} is not an existing register", node.name, i);
    return operands[i];
  };
  PointwiseInstr instr;
  instr.type = output.dtype;
  instr.node = node_index;
  const AttributeMap& attrs = node.attributes;
  int arity = 1;
  if (node.kind == OpKind::kElementwise) {
    instr.code = offset_code(PointwiseCode::kAdd, static_cast<int>(graph::get_enum(attrs, "op", ElementwiseOp::kAdd)));
    arity = 2;
  } else if (node.kind == OpKind::kUnary) {
    instr.code = offset_code(PointwiseCode::kExp, static_cast<int>(graph::get_enum(attrs, "op", UnaryOp::kExp)));
  } else if (node.kind == OpKind::kActivation) {
    instr.code =
        offset_code(PointwiseCode::kRelu, static_cast<int>(graph::get_enum(attrs, "kind", ActivationKind::kRelu)));
    // Network::activation stores every default explicitly; absent keys read as 0, exactly as the
    // CPU kernel reads them.
    instr.alpha = graph::get_float(attrs, "alpha");
    instr.beta = graph::get_float(attrs, "beta");
  } else if (node.kind == OpKind::kCast) {
    instr.code = PointwiseCode::kCast;
  } else if (node.kind == OpKind::kSelect) {
    instr.code = PointwiseCode::kSelect;
    arity = 3;
  } else {
    return unsupported("layer '{}': {} is not a pointwise layer", node.name, op_kind_name(node.kind));
  }
  TO_ASSIGN_OR_RETURN(instr.a, operand(0));
  if (arity > 1) {
    TO_ASSIGN_OR_RETURN(instr.b, operand(1));
  }
  if (arity > 2) {
    TO_ASSIGN_OR_RETURN(instr.c, operand(2));
  }
  program.instrs.push_back(instr);
  return program.output_register();
}

}  // namespace tensoracle::backends::cuda
