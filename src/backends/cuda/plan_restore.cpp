// Reading a cuda plan back (plan_json.h deserialize_plan): every field the cuda backend alone
// understands, checked against the network the engine layer has already checked and rebuilt.
#include <limits>

#include "backends/cuda/plan_json.h"
#include "backends/cuda/step_schedule.h"
#include "core/errors.h"
#include "core/quoted.h"
#include "io/json_field.h"

namespace tensoracle::backends::cuda {

using nlohmann::json;

namespace {

Result<Tensor> tensor_named(const Network& net, const JsonField& name) {
  TO_ASSIGN_OR_RETURN(const std::string text, name.as_name());
  auto t = net.find_tensor(text);
  if (!t.is_ok()) return name.error("names {}, which the network does not have", quote(text));
  return *t;
}

Result<std::vector<Tensor>> tensors_named(const Network& net, const JsonField& names) {
  TO_ASSIGN_OR_RETURN(const size_t count, names.array_size());
  std::vector<Tensor> out;
  for (size_t i = 0; i < count; ++i) {
    if (names.element(i).is_null()) {
      out.push_back(Tensor{});
      continue;
    }
    TO_ASSIGN_OR_RETURN(const Tensor t, tensor_named(net, names.element(i)));
    out.push_back(t);
  }
  return out;
}

Result<std::vector<Layout>> layouts_named(const JsonField& names, size_t expected) {
  TO_ASSIGN_OR_RETURN(const size_t count, names.array_size());
  if (count != expected) return names.error("lists {} layouts, the step has {} tensors there", count, expected);
  std::vector<Layout> out;
  for (size_t i = 0; i < count; ++i) {
    TO_ASSIGN_OR_RETURN(const std::string s, names.element(i).as_string());
    if (s == "linear") out.push_back(Layout::kLinear);
    else if (s == "nhwc") out.push_back(Layout::kNhwc);
    else if (s == "bshd") out.push_back(Layout::kBshd);
    else return names.element(i).error("unknown layout {} (expected linear, nhwc or bshd)", quote(s));
  }
  return out;
}

Result<size_t> node_named(const Network& net, const JsonField& name) {
  TO_ASSIGN_OR_RETURN(const std::string text, name.as_name());
  auto index = net.find_node(text);
  if (!index.is_ok()) return name.error("names layer {}, which the network does not have", quote(text));
  return *index;
}

// A recorded choice is an object of small values (a plugin step's formats are one small object);
// the tactic family checks its meaning on replay.
constexpr size_t kMaxChoiceValueChars = 4096;

Status check_choice(const JsonField& choice) {
  if (choice.is_null()) return Status::ok();
  TO_RETURN_IF_ERROR(choice.require_object());
  if (choice.json().size() > 64) return choice.error("has {} members, more than a tactic records", choice.json().size());
  for (const auto& item : choice.json().items()) {
    TO_ASSIGN_OR_RETURN(const JsonField value, choice.member(item.key()));
    if (value.json().is_number_integer())
      TO_RETURN_IF_ERROR(value.as_int(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()).status());
    else if (!value.json().is_primitive() && value.json().dump().size() > kMaxChoiceValueChars)
      return value.error("is larger than a tactic records ({} characters at most)", kMaxChoiceValueChars);
  }
  return Status::ok();
}

Result<PlannedStep> read_step(const Network& net, const JsonField& layer) {
  TO_RETURN_IF_ERROR(layer.allow_keys({"name", "kind", "tactic", "family", "choice", "precision", "compute",
                                       "graph_layers", "fused", "inputs", "extra_inputs", "outputs", "input_layouts",
                                       "extra_input_layouts", "output_layouts", "build_median_ms", "stream"}));
  PlannedStep step;
  TO_ASSIGN_OR_RETURN(const JsonField name, layer.member("name"));
  TO_ASSIGN_OR_RETURN(step.anchor, node_named(net, name));
  const Node& anchor = net.node(step.anchor);
  if (anchor.kind == OpKind::kConstant) return name.error("names constant {}, which no step computes", quote(anchor.name));
  TO_ASSIGN_OR_RETURN(const std::string kind, layer.get_string("kind"));
  if (kind != op_kind_name(anchor.kind))
    return layer.error("step {} says kind {}, the network's layer is {}", quote(anchor.name), quote(kind),
                       op_kind_name(anchor.kind));
  TO_ASSIGN_OR_RETURN(const JsonField fused, layer.member("fused"));
  TO_ASSIGN_OR_RETURN(const size_t fused_count, fused.array_size());
  for (size_t i = 0; i < fused_count; ++i) {
    TO_ASSIGN_OR_RETURN(const size_t index, node_named(net, fused.element(i)));
    step.fused.push_back(index);
  }
  TO_ASSIGN_OR_RETURN(const JsonField inputs, layer.member("inputs"));
  TO_ASSIGN_OR_RETURN(step.inputs, tensors_named(net, inputs));
  TO_ASSIGN_OR_RETURN(const JsonField extra_inputs, layer.member("extra_inputs"));
  TO_ASSIGN_OR_RETURN(step.extra_inputs, tensors_named(net, extra_inputs));
  TO_ASSIGN_OR_RETURN(const JsonField outputs, layer.member("outputs"));
  TO_ASSIGN_OR_RETURN(step.outputs, tensors_named(net, outputs));
  if (step.outputs.empty()) return outputs.error("step {} has no output", quote(anchor.name));
  for (const Tensor t : step.outputs)
    if (!t.valid()) return outputs.error("step {} lists a null output", quote(anchor.name));
  TO_ASSIGN_OR_RETURN(const JsonField input_layouts, layer.member("input_layouts"));
  TO_ASSIGN_OR_RETURN(step.input_layouts, layouts_named(input_layouts, step.inputs.size()));
  TO_ASSIGN_OR_RETURN(const JsonField extra_layouts, layer.member("extra_input_layouts"));
  TO_ASSIGN_OR_RETURN(step.extra_input_layouts, layouts_named(extra_layouts, step.extra_inputs.size()));
  TO_ASSIGN_OR_RETURN(const JsonField output_layouts, layer.member("output_layouts"));
  TO_ASSIGN_OR_RETURN(step.output_layouts, layouts_named(output_layouts, step.outputs.size()));
  TO_ASSIGN_OR_RETURN(step.family, layer.get_name("family"));
  TO_ASSIGN_OR_RETURN(step.tactic, layer.get_name("tactic"));
  TO_ASSIGN_OR_RETURN(const JsonField choice, layer.member("choice"));
  TO_RETURN_IF_ERROR(check_choice(choice));
  step.choice = choice.json();
  TO_ASSIGN_OR_RETURN(const std::optional<JsonField> median, layer.optional_member("build_median_ms"));
  if (median) {
    TO_ASSIGN_OR_RETURN(step.time_ms, median->as_number());
  }
  TO_ASSIGN_OR_RETURN(const int64_t stream, layer.get_int("stream", 0, kAuxiliaryStream));
  step.stream = static_cast<int>(stream);
  return step;
}

// The largest shapes of every profile of the I/O table, as the planner sized the arena for them.
std::vector<std::map<std::string, ShapeRange>> profiles_of(const IoTable& io) {
  std::vector<std::map<std::string, ShapeRange>> profiles;
  for (const IoTensor& t : io.tensors) {
    if (!t.is_input) continue;
    profiles.resize(std::max(profiles.size(), t.profiles.size()));
    for (size_t p = 0; p < t.profiles.size(); ++p) profiles[p][t.name] = t.profiles[p];
  }
  return profiles;
}

Status read_memory(const JsonField& memory, const EngineFile& file, CudaPlan& plan) {
  const Network& net = plan.network;
  TO_RETURN_IF_ERROR(
      memory.allow_keys({"weights_bytes", "activation_arena_bytes", "workspace_bytes", "aux_workspace_bytes", "tensors"}));
  TO_RETURN_IF_ERROR(memory.get_uint("weights_bytes").status());
  // The whole arena must fit the GPU the engine was built for (the compatibility check makes sure
  // that is this one): no allocation is attempted for an arena that cannot exist.
  const uint64_t gpu_bytes = file.environment().gpu ? static_cast<uint64_t>(file.environment().gpu->total_memory_bytes)
                                                    : std::numeric_limits<uint64_t>::max();
  TO_ASSIGN_OR_RETURN(plan.memory.activation_bytes, memory.get_uint("activation_arena_bytes", gpu_bytes));
  TO_ASSIGN_OR_RETURN(plan.memory.workspace_bytes, memory.get_uint("workspace_bytes", gpu_bytes));
  TO_ASSIGN_OR_RETURN(plan.memory.aux_workspace_bytes, memory.get_uint("aux_workspace_bytes", gpu_bytes));
  if (plan.memory.workspace_bytes > gpu_bytes - plan.memory.activation_bytes ||
      plan.memory.aux_workspace_bytes > gpu_bytes - plan.memory.activation_bytes - plan.memory.workspace_bytes)
    return memory.error("the arena ({} + {} + {} bytes) is larger than the {} bytes of the GPU the engine was built for",
                        plan.memory.activation_bytes, plan.memory.workspace_bytes, plan.memory.aux_workspace_bytes,
                        gpu_bytes);
  plan.memory.offsets.assign(net.num_tensors(), -1);
  plan.memory.bytes.assign(net.num_tensors(), 0);
  TO_ASSIGN_OR_RETURN(const std::vector<uint64_t> needed, max_tensor_bytes(net, profiles_of(file.io_table())));
  TO_ASSIGN_OR_RETURN(const JsonField tensors, memory.member("tensors"));
  TO_RETURN_IF_ERROR(tensors.require_object());
  for (const auto& item : tensors.json().items()) {
    TO_ASSIGN_OR_RETURN(const JsonField slot, tensors.member(item.key()));
    auto t = net.find_tensor(item.key());
    if (!t.is_ok()) return slot.error("names tensor {}, which the network does not have", quote(item.key()));
    TO_RETURN_IF_ERROR(slot.allow_keys({"offset", "bytes"}));
    const uint64_t arena = plan.memory.activation_bytes;
    TO_ASSIGN_OR_RETURN(const uint64_t offset, slot.get_uint("offset", arena));
    TO_ASSIGN_OR_RETURN(const uint64_t bytes, slot.get_uint("bytes", arena - offset));
    if (bytes < needed[t->id])
      return slot.error("reserves {} bytes for tensor {}, which needs {} at the largest shapes of its profiles", bytes,
                        quote(item.key()), needed[t->id]);
    plan.memory.offsets[t->id] = static_cast<int64_t>(offset);
    plan.memory.bytes[t->id] = bytes;
  }
  return Status::ok();
}

// Every tensor a step touches has memory: an arena slot, a constant, or a caller's binding.
Status check_step_tensors(const CudaPlan& plan) {
  const Network& net = plan.network;
  std::vector<bool> bound(net.num_tensors(), false);
  for (Tensor t : net.inputs()) bound[t.id] = true;
  for (Tensor t : net.outputs()) bound[t.id] = true;
  for (const PlannedStep& step : plan.steps)
    for (const std::vector<Tensor>* list : {&step.inputs, &step.extra_inputs, &step.outputs})
      for (Tensor t : *list) {
        if (!t.valid() || bound[t.id] || plan.memory.offsets[t.id] >= 0) continue;
        const int64_t producer = net.tensor(t).producer;
        if (producer >= 0 && net.node(static_cast<size_t>(producer)).kind == OpKind::kConstant) continue;
        return corrupt_data("step {} uses tensor {}, which has no place in the memory plan", quote(net.node(step.anchor).name),
                            quote(net.tensor(t).name));
      }
  return Status::ok();
}

}  // namespace

Result<CudaPlan> deserialize_plan(const CheckedPlan& checked, const EngineFile& file) {
  const std::string source = fmt::format("engine '{}', plan", file.label());
  const JsonField doc(checked.json, source);
  TO_RETURN_IF_ERROR(
      doc.allow_keys({"backend", "plan_version", "network", "constants", "layers", "memory", "build_log"}));
  TO_ASSIGN_OR_RETURN(const int64_t version, doc.get_int("plan_version"));
  if (version != kCudaPlanVersion)
    return unsupported("{}: cuda plan version {} (this build reads {}; rebuild the engine)", source, version,
                       kCudaPlanVersion);
  CudaPlan plan;
  plan.network = *checked.network;
  const Network& net = plan.network;
  TO_ASSIGN_OR_RETURN(const JsonField layers, doc.member("layers"));
  TO_ASSIGN_OR_RETURN(const size_t count, layers.array_size());
  for (size_t i = 0; i < count; ++i) {
    TO_ASSIGN_OR_RETURN(PlannedStep step, read_step(net, layers.element(i)));
    plan.steps.push_back(std::move(step));
  }
  TO_ASSIGN_OR_RETURN(const JsonField memory, doc.member("memory"));
  TO_RETURN_IF_ERROR(read_memory(memory, file, plan));
  TO_RETURN_IF_ERROR(check_step_tensors(plan).with_context(source));
  TO_ASSIGN_OR_RETURN(const std::optional<JsonField> log, doc.optional_member("build_log"));
  if (log) {
    TO_ASSIGN_OR_RETURN(const size_t lines, log->array_size());
    for (size_t i = 0; i < lines; ++i) {
      TO_ASSIGN_OR_RETURN(std::string line, log->element(i).as_string());
      plan.log.push_back(std::move(line));
    }
  }
  return plan;
}

}  // namespace tensoracle::backends::cuda
