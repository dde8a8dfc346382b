#include "backends/cuda/pointwise_program.h"

#include <fmt/format.h>

#include <optional>

#include "core/errors.h"

namespace tensoracle::backends::cuda {

namespace {

const char* code_name(PointwiseCode code) {
#define TO_CODE_NAME_(Op, name, ...) name,
  static constexpr const char* kNames[] = {TENSORACLE_ELEMENTWISE_OPS(TO_CODE_NAME_) TENSORACLE_UNARY_OPS(TO_CODE_NAME_)
                                               TENSORACLE_ACTIVATION_KINDS(TO_CODE_NAME_) "select", "cast",
                                               "quantize"};
#undef TO_CODE_NAME_
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(PointwiseCode::kQuantize) + 1,
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

bool is_wide_float(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

// A quantize a program can compute: a floating value to int8 or fp8 e4m3 by one floating scale
// that a program input holds (so every element reads the same one).
Status check_pointwise_quantize(const PointwiseProgram& program, const Node& node, const TensorDesc& output,
                                const std::vector<int>& operands) {
  if (output.dtype != DataType::kInt8 && output.dtype != DataType::kFloat8E4M3)
    return unsupported("layer '{}': quantizes to {} (a program quantizes to int8 or fp8e4m3)", node.name,
                       data_type_name(output.dtype));
  if (operands.size() != 2 || operands[1] < 0 || static_cast<size_t>(operands[1]) >= program.inputs.size())
    return unsupported("layer '{}': a program's quantize reads its scale from a program input", node.name);
  const TensorDesc& scale = program.inputs[static_cast<size_t>(operands[1])];
  const auto count = scale.shape.element_count();
  if (!count.is_ok() || *count != 1)
    return unsupported("layer '{}': scale {} is not one value (per-channel quantize is a step of its own)", node.name,
                       scale.shape.to_string());
  if (!is_wide_float(scale.dtype))
    return unsupported("layer '{}': scale type {} (a program's scale is fp32, fp16 or bf16)", node.name,
                       data_type_name(scale.dtype));
  const std::optional<DataType> value_type = program.register_type(operands[0]);
  if (!value_type || !is_wide_float(*value_type))
    return unsupported("layer '{}': quantizes {} (a program quantizes fp32, fp16 or bf16)", node.name,
                       value_type ? data_type_name(*value_type) : "no register");
  return Status::ok();
}

}  // namespace

std::optional<DataType> PointwiseProgram::register_type(int r) const {
  if (r < 0) return std::nullopt;
  if (static_cast<size_t>(r) < inputs.size()) return inputs[static_cast<size_t>(r)].dtype;
  if (static_cast<size_t>(r) < inputs.size() + instrs.size()) return instrs[static_cast<size_t>(r) - inputs.size()].type;
  return std::nullopt;
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
  } else if (node.attributes<QuantizeAttributes>()) {
    TO_RETURN_IF_ERROR(check_pointwise_quantize(program, node, output, operands));
    instr.code = PointwiseCode::kQuantize;
    arity = 2;
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
