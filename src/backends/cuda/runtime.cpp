#include "backends/cuda/runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/copy_strided.h"
#include "backends/plan_network.h"
#include "core/errors.h"
#include "core/lookup.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr uint64_t kAlign = 256;
uint64_t align_up(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

bool graphs_disabled_by_environment() {
  const char* v = std::getenv("TENSORACLE_CUDA_GRAPHS");
  return v != nullptr && std::strcmp(v, "0") == 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// The layout each constant is stored in: the one its reading steps give it (linear when none
// does). Steps that disagree make the plan invalid.
Result<std::vector<Layout>> constant_layouts(const CudaPlan& plan) {
  const Network& net = plan.network;
  std::vector<Layout> layouts(net.num_tensors(), Layout::kLinear);
  std::vector<bool> seen(net.num_tensors(), false);
  for (const PlannedStep& step : plan.steps) {
    const auto visit = [&](const std::vector<Tensor>& tensors, const std::vector<Layout>& given) -> Status {
      for (size_t i = 0; i < tensors.size() && i < given.size(); ++i) {
        const Tensor t = tensors[i];
        if (!t.valid() || net.tensor(t).producer < 0 ||
            net.node(static_cast<size_t>(net.tensor(t).producer)).kind != OpKind::kConstant)
          continue;
        if (seen[t.id] && layouts[t.id] != given[i])
          return corrupt_data("the plan reads constant '{}' as {} in one step and {} in another", net.tensor(t).name,
                              layout_name(layouts[t.id]), layout_name(given[i]));
        seen[t.id] = true;
        layouts[t.id] = given[i];
      }
      return Status::ok();
    };
    TO_RETURN_IF_ERROR(visit(step.inputs, step.input_layouts));
    TO_RETURN_IF_ERROR(visit(step.extra_inputs, step.extra_input_layouts));
  }
  return layouts;
}

// Copies the linear constant `from` into `to` stored in `layout` (device memory, same stream
// order as the uploads: the default stream).
Status reorder_constant(const void* from, void* to, DataType dtype, const Dims& shape, Layout layout) {
  const std::vector<int64_t> out = element_strides(shape, layout), in = element_strides(shape, Layout::kLinear);
  StridedCopy copy;
  if (shape.rank() > static_cast<size_t>(StridedCopy::kMaxRank))
    return unsupported("rank {} is beyond the reorder kernel's {}", shape.rank(), StridedCopy::kMaxRank);
  copy.rank = static_cast<int>(shape.rank());
  for (size_t d = 0; d < shape.rank(); ++d) {
    copy.shape[d] = shape[d];
    copy.in_stride[d] = in[d];
    copy.out_stride[d] = out[d];
  }
  TO_CUDA_RETURN_IF_ERROR(launch_strided_copy(from, to, data_type_size(dtype), copy, CopyKernel::kAuto, nullptr));
  return Status::ok();
}

}  // namespace

// ---- LoadedPlan ----

Result<std::shared_ptr<const LoadedPlan>> LoadedPlan::load(CudaPlan plan) {
  auto loaded = std::shared_ptr<LoadedPlan>(new LoadedPlan());
  TO_ASSIGN_OR_RETURN(loaded->device_, current_device());
  const Network& net = plan.network;
  loaded->constant_offsets_.assign(net.num_tensors(), -1);
  uint64_t total = 0;
  for (size_t i = 0; i < net.num_nodes(); ++i) {
    const Node& node = net.node(i);
    if (node.kind != OpKind::kConstant) continue;
    loaded->constant_offsets_[node.outputs[0].id] = static_cast<int64_t>(total);
    total += align_up(std::max<uint64_t>(node.constant->view.byte_size(), 1));
  }
  TO_ASSIGN_OR_RETURN(loaded->constants_, DeviceBuffer::allocate(total, "the engine's constants"));
  TO_ASSIGN_OR_RETURN(const std::vector<Layout> layouts, constant_layouts(plan));
  DeviceBuffer staging;  // a constant stored in another layout arrives linear, then is reordered
  for (size_t i = 0; i < net.num_nodes(); ++i) {
    const Node& node = net.node(i);
    if (node.kind != OpKind::kConstant || node.constant->view.byte_size() == 0) continue;
    const Tensor t = node.outputs[0];
    char* to = loaded->constants_.as<char>() + loaded->constant_offsets_[t.id];
    const ArrayView& view = node.constant->view;
    if (layouts[t.id] == Layout::kLinear) {
      TO_CUDA_RETURN_IF_ERROR(cudaMemcpy(to, view.data, view.byte_size(), cudaMemcpyHostToDevice));
      continue;
    }
    if (staging.size() < view.byte_size()) {
      TO_ASSIGN_OR_RETURN(staging, DeviceBuffer::allocate(view.byte_size(), "a constant being reordered"));
    }
    TO_CUDA_RETURN_IF_ERROR(cudaMemcpy(staging.data(), view.data, view.byte_size(), cudaMemcpyHostToDevice));
    TO_RETURN_IF_ERROR(reorder_constant(staging.data(), to, view.dtype, view.shape, layouts[t.id])
                           .with_context(fmt::format("constant '{}'", net.tensor(t).name)));
  }
  TO_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  loaded->plan_ = std::move(plan);
  return std::shared_ptr<const LoadedPlan>(std::move(loaded));
}

void* LoadedPlan::constant(Tensor t) const {
  if (!t.valid() || t.id >= constant_offsets_.size() || constant_offsets_[t.id] < 0) return nullptr;
  return constants_.as<char>() + constant_offsets_[t.id];
}

// ---- Runtime ----

Result<std::unique_ptr<Runtime>> Runtime::create(std::shared_ptr<const LoadedPlan> plan) {
  std::unique_ptr<Runtime> runtime(new Runtime(std::move(plan)));
  TO_ASSIGN_OR_RETURN(runtime->handles_, LibraryHandles::create());
  TO_ASSIGN_OR_RETURN(runtime->arena_, DeviceBuffer::allocate(runtime->loaded_->plan().memory.arena_bytes(), "activations"));
  const CudaPlan& loaded = runtime->loaded_->plan();
  runtime->tactics_.resize(loaded.steps.size());
  runtime->graph_failed_ = graphs_disabled_by_environment();
  TO_ASSIGN_OR_RETURN(runtime->schedule_, schedule_steps(loaded.network, loaded.steps));
  if (runtime->schedule_.uses_auxiliary) {
    TO_ASSIGN_OR_RETURN(runtime->aux_handles_, LibraryHandles::create());
    TO_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&runtime->aux_stream_, cudaStreamNonBlocking));
    const auto event = [](cudaEvent_t* e) { return cudaEventCreateWithFlags(e, cudaEventDisableTiming); };
    TO_CUDA_RETURN_IF_ERROR(event(&runtime->start_event_));
    TO_CUDA_RETURN_IF_ERROR(event(&runtime->aux_end_event_));
    runtime->fork_events_.assign(loaded.steps.size(), nullptr);
    runtime->done_events_.assign(loaded.steps.size(), nullptr);
    for (size_t s = 0; s < loaded.steps.size(); ++s) {
      if (runtime->schedule_.forks[s]) TO_CUDA_RETURN_IF_ERROR(event(&runtime->fork_events_[s]));
      if (loaded.steps[s].stream == kAuxiliaryStream) TO_CUDA_RETURN_IF_ERROR(event(&runtime->done_events_[s]));
    }
  }
  return runtime;
}

Runtime::~Runtime() {
  drop_graph();
  for (const auto* list : {&fork_events_, &done_events_})
    for (cudaEvent_t e : *list)
      if (e) cudaEventDestroy(e);
  if (start_event_) cudaEventDestroy(start_event_);
  if (aux_end_event_) cudaEventDestroy(aux_end_event_);
  if (aux_stream_) cudaStreamDestroy(aux_stream_);
}

const LibraryHandles& Runtime::handles_of(size_t step) const {
  return loaded_->plan().steps[step].stream == kAuxiliaryStream ? *aux_handles_ : *handles_;
}

void Runtime::drop_graph() {
  if (graph_) cudaGraphExecDestroy(graph_);
  graph_ = nullptr;
  graph_stream_ = nullptr;
}

Result<std::vector<TensorDesc>> Runtime::infer(const std::map<std::string, Dims>& input_shapes) const {
  const CudaPlan& plan = loaded_->plan();
  const Network& net = plan.network;
  TO_ASSIGN_OR_RETURN(std::vector<TensorDesc> desc, infer_tensor_descs(net, input_shapes));
  for (size_t t = 0; t < desc.size(); ++t) {
    if (plan.memory.offsets[t] < 0) continue;
    auto bytes = desc[t].shape.byte_size(desc[t].dtype);
    if (!bytes.is_ok() || static_cast<uint64_t>(*bytes) > plan.memory.bytes[t])
      return invalid_argument("tensor '{}' would be {} at these input shapes, larger than the {} bytes planned for it",
                              net.tensor(Tensor{static_cast<uint32_t>(t)}).name, desc[t].to_string(), plan.memory.bytes[t]);
  }
  return desc;
}

Result<std::map<std::string, Dims>> Runtime::output_shapes(const std::map<std::string, Dims>& input_shapes) const {
  const Network& net = loaded_->plan().network;
  const bool prepared = input_shapes == prepared_shapes_ && !instances_.empty();
  std::vector<TensorDesc> inferred;
  if (!prepared) {
    TO_ASSIGN_OR_RETURN(inferred, infer(input_shapes));
  }
  const std::vector<TensorDesc>& desc = prepared ? desc_ : inferred;
  std::map<std::string, Dims> outputs;
  for (Tensor t : net.outputs()) outputs[net.tensor(t).name] = desc[t.id].shape;
  return outputs;
}

Result<std::map<std::string, Dims>> Runtime::prepare(const std::map<std::string, Dims>& input_shapes) {
  const CudaPlan& plan = loaded_->plan();
  const Network& net = plan.network;
  std::map<std::string, Dims> outputs;
  if (input_shapes == prepared_shapes_ && !instances_.empty()) {
    for (Tensor t : net.outputs()) outputs[net.tensor(t).name] = desc_[t.id].shape;
    return outputs;
  }
  drop_graph();
  instances_.clear();
  buffers_.clear();
  patches_.clear();
  copies_.clear();
  prepared_shapes_.clear();
  TO_ASSIGN_OR_RETURN(desc_, infer(input_shapes));
  std::map<uint32_t, std::string> io_names;
  for (Tensor t : net.inputs()) io_names[t.id] = net.tensor(t).name;
  for (Tensor t : net.outputs()) io_names[t.id] = net.tensor(t).name;

  char* arena = arena_.as<char>();
  instances_.reserve(plan.steps.size());  // tactics may keep references to their instance
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlannedStep& step = plan.steps[s];
    TO_ASSIGN_OR_RETURN_CONTEXT(StepInstance inst, instantiate(net, step, desc_),
                                fmt::format("step {} ({})", s, net.node(step.anchor).name));
    instances_.push_back(std::move(inst));
    const StepInstance& instance = instances_.back();
    if (!tactics_[s]) {
      const TacticFamily* family = tactic_families().find(step.family);
      if (family == nullptr)
        return unsupported("layer '{}': the plan uses tactic family '{}', which this build does not have",
                           net.node(step.anchor).name, step.family);
      if (!family->traits(instance.anchor.node).covers_quantization_of(instance))
        return corrupt_data("layer '{}': the plan gives a step with quantize/dequantize layers to family '{}', which computes none",
                            net.node(step.anchor).name, step.family);
      TO_ASSIGN_OR_RETURN_CONTEXT(tactics_[s], family->replay(instance, step.choice),
                                  fmt::format("layer '{}'", net.node(step.anchor).name));
    }
    // Each stream's steps share a workspace of their own; the tactic plans within it.
    const bool auxiliary = step.stream == kAuxiliaryStream;
    const uint64_t planned = auxiliary ? plan.memory.aux_workspace_bytes : plan.memory.workspace_bytes;
    const RunContext ctx = handles_of(s).context(nullptr, &loaded_->device(), planned);
    Status init = tactics_[s]->initialize(instance, ctx);
    if (!init.is_ok()) return init.with_context(fmt::format("layer '{}' ({})", net.node(step.anchor).name, step.tactic));
    const size_t workspace = tactics_[s]->workspace_size(instance);
    if (workspace > planned)
      return invalid_argument("layer '{}': tactic {} needs {} bytes of workspace at these shapes, {} were planned",
                              net.node(step.anchor).name, step.tactic, workspace, planned);

    StepBuffers buffers;
    const uint64_t workspace_offset = plan.memory.activation_bytes + (auxiliary ? plan.memory.workspace_bytes : 0);
    buffers.workspace = planned ? arena + workspace_offset : nullptr;
    buffers.workspace_bytes = planned;
    auto fill = [&](const std::vector<Tensor>& tensors, const std::vector<Layout>* layouts, int list,
                    std::vector<DeviceTensor>& out) {
      for (size_t i = 0; i < tensors.size(); ++i) {
        const Tensor t = tensors[i];
        DeviceTensor dt;
        if (t.valid()) {
          dt.dtype = desc_[t.id].dtype;
          dt.shape = desc_[t.id].shape;
          dt.layout = layouts && i < layouts->size() ? (*layouts)[i] : Layout::kLinear;
          if (plan.memory.offsets[t.id] >= 0) dt.data = arena + plan.memory.offsets[t.id];
          else if (void* c = loaded_->constant(t)) dt.data = c;
          else if (auto io = io_names.find(t.id); io != io_names.end()) patches_.push_back(Patch{s, list, i, io->second});
        }
        out.push_back(dt);
      }
    };
    fill(step.inputs, &step.input_layouts, 0, buffers.inputs);
    fill(step.extra_inputs, &step.extra_input_layouts, 1, buffers.extra_inputs);
    fill(step.outputs, &step.output_layouts, 2, buffers.outputs);
    Status constants = tactics_[s]->prepare_constants(instance, buffers, ctx);
    if (!constants.is_ok()) return constants.with_context(fmt::format("layer '{}' ({})", net.node(step.anchor).name, step.tactic));
    buffers_.push_back(std::move(buffers));
  }
  // What prepare_constants queued ends before the caller's first run, on whatever stream.
  TO_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(nullptr));
  // Outputs no step writes: network inputs or constants marked as outputs.
  std::vector<bool> written(net.num_tensors(), false);
  for (const PlannedStep& step : plan.steps)
    for (Tensor t : step.outputs) written[t.id] = true;
  for (Tensor t : net.outputs()) {
    if (written[t.id]) continue;
    OutputCopy copy{net.tensor(t).name, {}, loaded_->constant(t), 0};
    if (!copy.constant) copy.input = net.tensor(t).name;  // an input marked as output shares its name
    auto bytes = desc_[t.id].shape.byte_size(desc_[t.id].dtype);
    copy.bytes = bytes.is_ok() ? static_cast<size_t>(*bytes) : 0;
    TO_ASSERT(copy.constant || net.tensor(t).producer < 0);  // the planner gives every computed output a step
    copies_.push_back(std::move(copy));
  }
  bound_.assign(patches_.size(), nullptr);
  prepared_shapes_ = input_shapes;
  for (Tensor t : net.outputs()) outputs[net.tensor(t).name] = desc_[t.id].shape;
  return outputs;
}

Status Runtime::bind(const std::map<std::string, void*>& bindings) {
  if (instances_.size() != loaded_->plan().steps.size()) return make_error(StatusCode::kFailedPrecondition, "enqueue before prepare");
  for (size_t p = 0; p < patches_.size(); ++p) {
    const Patch& patch = patches_[p];
    auto it = bindings.find(patch.name);
    if (it == bindings.end() || it->second == nullptr) return invalid_argument("no device buffer bound for '{}'", patch.name);
    if (bound_[p] == it->second) continue;
    bound_[p] = it->second;
    StepBuffers& b = buffers_[patch.step];
    std::vector<DeviceTensor>& list = patch.list == 0 ? b.inputs : patch.list == 1 ? b.extra_inputs : b.outputs;
    list[patch.index].data = it->second;
    drop_graph();
  }
  for (const OutputCopy& copy : copies_)
    if (bindings.find(copy.output) == bindings.end() || (!copy.constant && bindings.find(copy.input) == bindings.end()))
      return invalid_argument("no device buffer bound for '{}'", copy.output);
  return Status::ok();
}

Status Runtime::run_steps(cudaStream_t stream) {
  const CudaPlan& plan = loaded_->plan();
  const RunContext main = handles_->context(stream, &loaded_->device());
  const bool two_streams = schedule_.uses_auxiliary;
  const RunContext aux = two_streams ? aux_handles_->context(aux_stream_, &loaded_->device()) : main;
  if (two_streams) TO_CUDA_RETURN_IF_ERROR(cudaEventRecord(start_event_, stream));
  for (size_t s = 0; s < tactics_.size(); ++s) {
    const bool auxiliary = plan.steps[s].stream == kAuxiliaryStream;
    if (auxiliary) {
      const int64_t fork = schedule_.fork_after[s];
      TO_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(aux_stream_, fork < 0 ? start_event_ : fork_events_[static_cast<size_t>(fork)], 0));
    }
    for (size_t j : schedule_.joins[s]) TO_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, done_events_[j], 0));
    Status status = tactics_[s]->run(instances_[s], buffers_[s], auxiliary ? aux : main);
    if (!status.is_ok())
      return status.with_context(fmt::format("layer '{}' ({})", plan.network.node(plan.steps[s].anchor).name, plan.steps[s].tactic));
    if (auxiliary) TO_CUDA_RETURN_IF_ERROR(cudaEventRecord(done_events_[s], aux_stream_));
    else if (two_streams && schedule_.forks[s]) TO_CUDA_RETURN_IF_ERROR(cudaEventRecord(fork_events_[s], stream));
  }
  if (two_streams) {  // the caller's stream (and a capture) ends only when the auxiliary work has
    TO_CUDA_RETURN_IF_ERROR(cudaEventRecord(aux_end_event_, aux_stream_));
    TO_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, aux_end_event_, 0));
  }
  return Status::ok();
}

Status Runtime::enqueue(const std::map<std::string, void*>& bindings, cudaStream_t stream) {
  TO_RETURN_IF_ERROR(bind(bindings));
  for (const OutputCopy& copy : copies_) {
    // bind has checked that both are bound.
    void* const* to = lookup(bindings, copy.output);
    void* const* input = copy.constant ? nullptr : lookup(bindings, copy.input);
    TO_ASSERT(to != nullptr && (copy.constant || input != nullptr));
    const void* from = copy.constant ? copy.constant : *input;
    TO_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(*to, from, copy.bytes, cudaMemcpyDeviceToDevice, stream));
  }
  last_used_graph_ = false;
  if (graph_ && graph_stream_ != stream) drop_graph();
  if (graph_) {
    last_used_graph_ = true;
    TO_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(graph_, stream));
    return Status::ok();
  }
  const bool capturable = stream != nullptr && stream != cudaStreamLegacy;
  if (!graph_failed_ && capturable) {
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
      Status captured = run_steps(stream);
      cudaGraph_t graph = nullptr;
      const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
      cudaGraphExec_t exec = nullptr;
      if (captured.is_ok() && ended == cudaSuccess && graph && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
        cudaGraphDestroy(graph);
        graph_ = exec;
        graph_stream_ = stream;
        last_used_graph_ = true;
        TO_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(graph_, stream));
        return Status::ok();
      }
      if (graph) cudaGraphDestroy(graph);
    }
    // Some step cannot be captured (or the stream is in another capture): run directly from
    // now on; a real error shows up in the direct run.
    cudaGetLastError();
    graph_failed_ = true;
  }
  return run_steps(stream);
}

Result<std::vector<LayerTiming>> Runtime::profile_steps(const std::map<std::string, void*>& bindings, cudaStream_t stream,
                                                       int iterations) {
  TO_RETURN_IF_ERROR(bind(bindings));
  const CudaPlan& plan = loaded_->plan();
  cudaEvent_t begin = nullptr, end = nullptr;
  TO_CUDA_RETURN_IF_ERROR(cudaEventCreate(&begin));
  TO_CUDA_RETURN_IF_ERROR(cudaEventCreate(&end));
  std::vector<LayerTiming> out;
  Status status = Status::ok();
  for (size_t s = 0; s < tactics_.size() && status.is_ok(); ++s) {
    std::vector<double> times;
    for (int i = 0; i < iterations + 1 && status.is_ok(); ++i) {  // the first run warms up
      status = cuda_status(cudaEventRecord(begin, stream), "cudaEventRecord");
      if (status.is_ok()) status = tactics_[s]->run(instances_[s], buffers_[s], handles_of(s).context(stream, &loaded_->device()));
      if (status.is_ok()) status = cuda_status(cudaEventRecord(end, stream), "cudaEventRecord");
      if (status.is_ok()) status = cuda_status(cudaEventSynchronize(end), "cudaEventSynchronize");
      float ms = 0;
      if (status.is_ok()) status = cuda_status(cudaEventElapsedTime(&ms, begin, end), "cudaEventElapsedTime");
      if (i > 0) times.push_back(ms);
    }
    const PlannedStep& step = plan.steps[s];
    std::string layers;
    for (size_t n : step.nodes()) layers += (layers.empty() ? "" : "+") + plan.network.node(n).name;
    out.push_back(LayerTiming{layers, std::string(op_kind_name(plan.network.node(step.anchor).kind)), step.tactic, median(times)});
  }
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  TO_RETURN_IF_ERROR(status);
  return out;
}

}  // namespace tensoracle::backends::cuda
