#include "backends/cuda/pointwise_program.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace tensoracle::backends::cuda {

namespace {

const char* code_name(PointwiseCode code) {
#define TO_CODE_NAME_(Op, name, ...) name,
  static constexpr const char* kNames[] = {TENSORACLE_ELEMENTWISE_OPS(TO_CODE_NAME_) TENSORACLE_UNARY_OPS(TO_CODE_NAME_)
                                               TENSORACLE_ACTIVATION_KINDS(TO_CODE_NAME_) "select", "cast"};
#undef TO_CODE_NAME_
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(PointwiseCode::kCast) + 1,
                "one name per PointwiseCode");
  return kNames[static_cast<int>(code)];
}

// Whether the instruction's alpha and beta mean anything (activations that read them).
bool has_parameters(PointwiseCode code) {
#define TO_PARAMETERS_(Kind, name, alpha, beta, parameters) \
  case PointwiseCode::k##Kind: return parameters;
  switch (code) {
    TENSORACLE_ACTIVATION_KINDS(TO_PARAMETERS_)
    default: return false;
  }
#undef TO_PARAMETERS_
}

}  // namespace

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
  int arity = 1;
  if (const auto* e = node.attributes<ElementwiseAttributes>()) {
    instr.code = pointwise_code(e->op);
    arity = 2;
  } else if (const auto* u = node.attributes<UnaryAttributes>()) {
    instr.code = pointwise_code(u->op);
  } else if (const auto* a = node.attributes<ActivationAttributes>()) {
    instr.code = pointwise_code(a->kind);
    instr.alpha = a->alpha_value();
    instr.beta = a->beta_value();
  } else if (node.attributes<CastAttributes>()) {
    instr.code = PointwiseCode::kCast;
  } else if (node.attributes<SelectAttributes>()) {
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
