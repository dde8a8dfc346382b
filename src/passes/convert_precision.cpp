// fp32 network -> fp16 / bf16 compute with fp32 I/O (passes.h, docs/precision.md).
//
// Each source tensor may exist in the target in up to two types (its own and the compute type).
// Every version is built from the tensor's `origin`: the target tensor that holds its value
// without a rounding the other version lacks (the fp32 input, a converted layer's output, the
// integer input of a cast). So a cast is always one cast from the origin, never a chain, and a
// tensor read in the same type by several layers is cast once. Constants are built on demand in
// the type their first reader needs, so an fp32 weight read only by converted layers exists only
// in the compute type.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/errors.h"
#include "passes/passes.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::passes {

namespace {

// "reduce.sum": the name a keep-list entry matches beside the bare kind name ("reduce"); empty
// for kinds without a function field.
std::string function_name(const Node& node) {
  const std::string kind(op_kind_name(node.kind));
  if (const auto* a = node.attributes<ElementwiseAttributes>()) return kind + "." + std::string(enum_name(a->op));
  if (const auto* a = node.attributes<UnaryAttributes>()) return kind + "." + std::string(enum_name(a->op));
  if (const auto* a = node.attributes<ActivationAttributes>()) return kind + "." + std::string(enum_name(a->kind));
  if (const auto* a = node.attributes<ReduceAttributes>()) return kind + "." + std::string(enum_name(a->op));
  return "";
}

template <typename E>
bool names_contain(std::string_view name) {
  const auto& names = enum_names<E>();
  return std::find(names.begin(), names.end(), name) != names.end();
}

class Converter {
 public:
  Converter(const Network& source, const PrecisionOptions& options, PrecisionReport& report)
      : source_(source), low_(options.compute), keep_(options.keep_fp32.begin(), options.keep_fp32.end()),
        report_(report), versions_(source.num_tensors()) {
    target_.set_plugins(source.plugins());
    for (Tensor t : source.outputs()) outputs_.insert(t.id);
    for (size_t i = 0; i < source.num_nodes(); ++i)
      if (source.node(i).kind == OpKind::kQuantize && !source.node(i).inputs.empty()) quantized_.insert(source.node(i).inputs[0].id);
  }

  Result<Network> run() {
    TO_RETURN_IF_ERROR(source_.status());
    for (Tensor t : source_.inputs()) {
      const TensorInfo& info = source_.tensor(t);
      Tensor in = target_.add_input(info.name, info.desc.dtype, info.desc.shape);
      versions_[t.id].origin = in;
      versions_[t.id].by_type[info.desc.dtype] = in;
    }
    for (size_t i = 0; i < source_.num_nodes(); ++i) {
      const Node& node = source_.node(i);
      if (node.kind == OpKind::kConstant) continue;  // built when first read, in the reader's type
      if (node.kind == OpKind::kCast) {
        TO_RETURN_IF_ERROR(convert_cast(node));
        continue;
      }
      const std::string kept_because = keep_reason(node);
      if (!kept_because.empty()) ++report_.kept[kept_because];
      else ++report_.converted_layers;
      TO_RETURN_IF_ERROR(copy_layer(node, kept_because.empty()));
    }
    for (Tensor t : source_.outputs()) {
      const TensorInfo& info = source_.tensor(t);
      TO_ASSIGN_OR_RETURN(Tensor out, version(t, info.desc.dtype));
      target_.mark_output(out, info.name);
    }
    TO_RETURN_IF_ERROR(target_.status().with_context("precision pass"));
    return std::move(target_);
  }

 private:
  struct Versions {
    Tensor origin;
    std::map<DataType, Tensor> by_type;
  };

  bool is_fp32(Tensor t) const { return !t.valid() || source_.tensor(t).desc.dtype == DataType::kFloat32; }
  bool is_selector(Tensor t) const {
    const DataType type = source_.tensor(t).desc.dtype;
    return type == DataType::kInt32 || type == DataType::kInt64 || type == DataType::kBool;
  }

  // Empty when the layer converts; otherwise why it stays in its types.
  std::string keep_reason(const Node& node) const {
    if (node.kind == OpKind::kPlugin) return "plugin";
    if (node.kind == OpKind::kQuantize || node.kind == OpKind::kDequantize) return "quantize/dequantize";
    // Integer indices and bool conditions (a gather's, a select's, an attention mask) only pick
    // elements: the layer converts and reads them in their own types. Any other type (an integer
    // or bool result, int8, fp8, an existing 16-bit tensor) keeps the layer as it is.
    for (Tensor t : node.inputs)
      if (!is_fp32(t) && !is_selector(t)) return fmt::format("{} tensor", data_type_name(source_.tensor(t).desc.dtype));
    for (Tensor t : node.outputs)
      if (!is_fp32(t)) return fmt::format("{} tensor", data_type_name(source_.tensor(t).desc.dtype));
    // The cuda backend fuses a Q/DQ pattern only when the dequantize layers alone produce the
    // layer's operands and its result goes straight into the quantize (plan_lowering.h): a cast
    // between them would leave the quantized layer unfused, so its neighbours stay fp32.
    for (Tensor t : node.inputs) {
      const int64_t producer = t.valid() ? source_.tensor(t).producer : -1;
      if (producer >= 0 && source_.node(static_cast<size_t>(producer)).kind == OpKind::kDequantize)
        return "reads a dequantized tensor";
    }
    for (Tensor t : node.outputs)
      if (quantized_.count(t.id)) return "feeds a quantize layer";
    const std::string kind(op_kind_name(node.kind));
    if (keep_.count(kind)) return "keep-list " + kind;
    const std::string function = function_name(node);
    if (!function.empty() && keep_.count(function)) return "keep-list " + function;
    return "";
  }

  // Source tensor `t` in the target as `type`: the existing version, a constant built in that
  // type, or one cast from the tensor's origin.
  Result<Tensor> version(Tensor t, DataType type) {
    Versions& v = versions_[t.id];
    if (auto it = v.by_type.find(type); it != v.by_type.end()) return it->second;
    const TensorInfo& info = source_.tensor(t);
    if (info.producer >= 0 && source_.node(static_cast<size_t>(info.producer)).kind == OpKind::kConstant)
      return constant(t, source_.node(static_cast<size_t>(info.producer)), type);
    TO_ASSERT(v.origin.valid());
    Tensor built = v.origin;
    if (target_.tensor(v.origin).desc.dtype != type) {
      built = target_.cast(v.origin, CastAttributes().set_output_type(type).set_name(
                                         fmt::format("{}.to_{}", info.name, data_type_name(type))));
      ++report_.inserted_casts;
    }
    TO_RETURN_IF_ERROR(target_.status());
    v.by_type[type] = built;
    return built;
  }

  Result<Tensor> constant(Tensor t, const Node& node, DataType type) {
    Versions& v = versions_[t.id];
    const ArrayView& view = node.constant->view;
    Tensor built;
    if (view.dtype == type) {
      built = target_.add_constant(view, node.constant, node.name, node.constant->source);
    } else {
      // Only fp32 constants read by converted layers are asked for another type.
      TO_ASSERT(view.dtype == DataType::kFloat32);
      TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(type, view.shape));
      convert_elements(view.dtype, view.data, type, array.data(), static_cast<size_t>(view.element_count()));
      built = target_.add_constant(std::move(array), fmt::format("{}.{}", node.name, data_type_name(type)));
      ++report_.converted_constants;
    }
    TO_RETURN_IF_ERROR(target_.status());
    if (!v.origin.valid()) v.origin = built;
    v.by_type[type] = built;
    return built;
  }

  // The layer with its inputs in the types it computes in: converted, every fp32 tensor becomes
  // the compute type (indices and conditions keep theirs); kept, every tensor keeps its type.
  Status copy_layer(const Node& node, bool convert) {
    std::vector<Tensor> inputs;
    for (Tensor t : node.inputs) {
      if (!t.valid()) {
        inputs.push_back(Tensor{});
        continue;
      }
      const DataType own = source_.tensor(t).desc.dtype;
      TO_ASSIGN_OR_RETURN(Tensor in, version(t, convert && own == DataType::kFloat32 ? low_ : own));
      inputs.push_back(in);
    }
    std::vector<Tensor> outs = target_.add_layer(std::move(inputs), node.op_attributes);
    TO_RETURN_IF_ERROR(target_.status().with_context(fmt::format("precision pass, layer '{}'", node.name)));
    TO_ASSERT(outs.size() == node.outputs.size());
    for (size_t o = 0; o < outs.size(); ++o) set_origin(node.outputs[o], outs[o]);
    return target_.status();
  }

  // A cast of the source. To fp32, it emits nothing: its value's origin is the cast's input, so
  // each reader's version is one cast from there (int32 -> fp32 -> fp16 becomes int32 -> fp16, and
  // fp16 -> fp32 read by converted layers is the fp16 tensor itself). fp32 -> the compute type is
  // the input's compute-type version. Any other cast (to an integer, bool, fp8 or the other
  // 16-bit type) is kept as it is, reading its input's fp32 version.
  Status convert_cast(const Node& node) {
    const Tensor in = node.inputs[0];
    const Tensor out = node.outputs[0];
    const DataType in_type = source_.tensor(in).desc.dtype;
    const DataType out_type = source_.tensor(out).desc.dtype;
    if (out_type == DataType::kFloat32) {
      if (in_type == DataType::kFloat32) {
        TO_RETURN_IF_ERROR(version(in, in_type).status());  // the input's origin exists
        versions_[out.id] = versions_[in.id];
        return target_.status();
      }
      TO_ASSIGN_OR_RETURN(Tensor from, version(in, in_type));
      versions_[out.id].origin = from;
      versions_[out.id].by_type[in_type] = from;
      ++report_.folded_casts;
      return target_.status();
    }
    if (in_type == DataType::kFloat32 && out_type == low_) {
      TO_ASSIGN_OR_RETURN(Tensor from, version(in, low_));
      versions_[out.id].origin = from;
      versions_[out.id].by_type[low_] = from;
      ++report_.folded_casts;
      return target_.status();
    }
    ++report_.kept[fmt::format("cast to {}", data_type_name(out_type))];
    return copy_layer(node, false);
  }

  void set_origin(Tensor source_tensor, Tensor built) {
    Versions& v = versions_[source_tensor.id];
    v.origin = built;
    v.by_type[target_.tensor(built).desc.dtype] = built;
    const std::string& name = source_.tensor(source_tensor).name;
    // A converted output keeps its name for the fp32 cast that is marked.
    const bool converted_output = outputs_.count(source_tensor.id) && target_.tensor(built).desc.dtype != source_.tensor(source_tensor).desc.dtype;
    target_.set_tensor_name(built, converted_output ? fmt::format("{}.{}", name, data_type_name(target_.tensor(built).desc.dtype)) : name);
  }

  const Network& source_;
  const DataType low_;
  const std::set<std::string> keep_;
  PrecisionReport& report_;
  Network target_;
  std::vector<Versions> versions_;
  std::set<uint32_t> outputs_;
  std::set<uint32_t> quantized_;  // tensors a quantize layer reads
};

}  // namespace

std::vector<std::string> PrecisionOptions::default_keep_fp32() {
  // docs/precision.md says why each one: results that overflow fp16's range (or, for sum and
  // prod, grow with the reduced extent); everything else either stays bounded by its inputs or
  // accumulates in fp32 inside its kernels.
  return {"reduce.sum", "reduce.prod", "unary.exp", "elementwise.pow"};
}

Status check_keep_fp32_entry(const std::string& entry) {
  const size_t dot = entry.find('.');
  const std::string kind_name = entry.substr(0, dot);
  const std::optional<OpKind> kind = parse_op_kind(kind_name);
  if (!kind) {
    std::vector<std::string> kinds;
    for (OpKind k : all_op_kinds()) kinds.emplace_back(op_kind_name(k));
    return invalid_argument("keep-fp32 entry '{}': '{}' is not an op kind (one of: {})", entry, kind_name, fmt::join(kinds, ", "));
  }
  if (dot == std::string::npos) return Status::ok();
  const std::string function = entry.substr(dot + 1);
  bool known = false;
  switch (*kind) {
    case OpKind::kElementwise: known = names_contain<ElementwiseOp>(function); break;
    case OpKind::kUnary: known = names_contain<UnaryOp>(function); break;
    case OpKind::kActivation: known = names_contain<ActivationKind>(function); break;
    case OpKind::kReduce: known = names_contain<ReduceOp>(function); break;
    default:
      return invalid_argument("keep-fp32 entry '{}': '{}' has no functions (give the kind alone)", entry, kind_name);
  }
  if (!known) return invalid_argument("keep-fp32 entry '{}': '{}' is not a function of {}", entry, function, kind_name);
  return Status::ok();
}

std::vector<std::string> PrecisionReport::lines(DataType compute) const {
  std::vector<std::string> out;
  out.push_back(fmt::format("precision: {} layer(s) converted to {}, {} constant(s) converted, {} cast(s) inserted, {} "
                            "cast(s) of the network folded",
                            converted_layers, data_type_name(compute), converted_constants, inserted_casts, folded_casts));
  for (const auto& [reason, count] : kept) out.push_back(fmt::format("precision: {} layer(s) kept: {}", count, reason));
  return out;
}

Result<Network> convert_precision(const Network& network, const PrecisionOptions& options, PrecisionReport* report) {
  if (options.compute != DataType::kFloat16 && options.compute != DataType::kBFloat16)
    return invalid_argument("precision pass: compute type {} is not fp16 or bf16", data_type_name(options.compute));
  for (const std::string& entry : options.keep_fp32) TO_RETURN_IF_ERROR(check_keep_fp32_entry(entry));
  PrecisionReport local;
  Converter converter(network, options, report ? *report : local);
  return converter.run();
}

}  // namespace tensoracle::passes
