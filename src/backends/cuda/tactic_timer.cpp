#include "backends/cuda/tactic_timer.h"

#include <fmt/format.h>

#include <algorithm>

#include "backends/cuda/cuda_check.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr size_t kAlign = 256;
size_t align_up(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

size_t bytes_of(const TensorDesc& d) {
  auto b = d.shape.byte_size(d.dtype);
  return b.is_ok() ? static_cast<size_t>(*b) : 0;
}

// The descriptions of the step's buffers, in StepBuffers order.
struct BufferDescs {
  std::vector<const TensorDesc*> inputs, extra, outputs;
};

BufferDescs descs_of(const StepInstance& step) {
  BufferDescs d;
  if (is_pointwise(step.anchor.node.kind)) {
    for (const TensorDesc& t : step.program.inputs) d.inputs.push_back(&t);
  } else {
    d.inputs = step.anchor.inputs;
    for (size_t i = 1; i < step.program.inputs.size(); ++i) d.extra.push_back(&step.program.inputs[i]);
  }
  for (const TensorDesc& t : step.outputs) d.outputs.push_back(&t);
  return d;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

size_t step_buffer_bytes(const StepInstance& step) {
  const BufferDescs d = descs_of(step);
  size_t total = 0;
  for (const auto* list : {&d.inputs, &d.extra, &d.outputs})
    for (const TensorDesc* t : *list)
      if (t) total += align_up(std::max<size_t>(bytes_of(*t), 1));
  return total;
}

StepBuffers step_buffers_in(const StepInstance& step, void* base, size_t* used) {
  const BufferDescs d = descs_of(step);
  StepBuffers buffers;
  auto place = [&](const std::vector<const TensorDesc*>& descs, const std::vector<Layout>* layouts,
                   std::vector<DeviceTensor>& out) {
    for (size_t i = 0; i < descs.size(); ++i) {
      const TensorDesc* t = descs[i];
      DeviceTensor dt;
      if (t) {
        dt = DeviceTensor{t->dtype, t->shape, layouts && i < layouts->size() ? (*layouts)[i] : Layout::kLinear,
                          static_cast<char*>(base) + *used};
        *used += align_up(std::max<size_t>(bytes_of(*t), 1));
      }
      out.push_back(dt);
    }
  };
  place(d.inputs, &step.input_layouts, buffers.inputs);
  place(d.extra, &step.extra_input_layouts, buffers.extra_inputs);
  place(d.outputs, &step.output_layouts, buffers.outputs);
  return buffers;
}

TacticTimer::~TacticTimer() {
  if (begin_) cudaEventDestroy(begin_);
  if (end_) cudaEventDestroy(end_);
  if (stream_) cudaStreamDestroy(stream_);
}

Status TacticTimer::start(const DeviceInfo& device) {
  device_ = device;
  TO_ASSIGN_OR_RETURN(handles_, LibraryHandles::create());
  TO_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  TO_CUDA_RETURN_IF_ERROR(cudaEventCreate(&begin_));
  TO_CUDA_RETURN_IF_ERROR(cudaEventCreate(&end_));
  return Status::ok();
}

Status TacticTimer::ensure_scratch(size_t bytes) {
  if (scratch_.size() >= bytes) return Status::ok();
  scratch_ = DeviceBuffer();
  TO_ASSIGN_OR_RETURN(scratch_, DeviceBuffer::allocate(std::max(bytes, scratch_.size() * 2), "tactic timing"));
  // Finite, non-zero values in every floating type (0x3C3C... is 1.06 in fp16, 0.0115 in fp32,
  // 0.0115 in bf16); integer inputs are zeroed per step (valid indices).
  TO_CUDA_RETURN_IF_ERROR(cudaMemset(scratch_.data(), 0x3C, scratch_.size()));
  return Status::ok();
}

Result<double> TacticTimer::time(CudaTactic& tactic, const StepInstance& step, double best_ms) {
  const RunContext ctx = handles_->context(stream_, &device_);
  TO_RETURN_IF_ERROR(tactic.initialize(step, ctx));
  const size_t workspace = tactic.workspace_size(step);
  if (workspace > workspace_limit_)
    return unsupported("needs {} bytes of workspace, over the limit of {}", workspace, workspace_limit_);
  const size_t io = step_buffer_bytes(step);
  TO_RETURN_IF_ERROR(ensure_scratch(io + align_up(workspace)));
  size_t used = 0;
  StepBuffers buffers = step_buffers_in(step, scratch_.data(), &used);
  buffers.workspace = workspace ? static_cast<char*>(scratch_.data()) + io : nullptr;
  buffers.workspace_bytes = workspace;
  for (const auto* list : {&buffers.inputs, &buffers.extra_inputs})
    for (const DeviceTensor& t : *list)
      if (t.data && !is_floating_point(t.dtype)) TO_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(t.data, 0, t.byte_size(), stream_));
  for (int w = 0; w < 2; ++w) TO_RETURN_IF_ERROR(tactic.run(step, buffers, ctx));
  TO_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  std::vector<double> times;
  for (int i = 0; i < iterations_; ++i) {
    TO_CUDA_RETURN_IF_ERROR(cudaEventRecord(begin_, stream_));
    TO_RETURN_IF_ERROR(tactic.run(step, buffers, ctx));
    TO_CUDA_RETURN_IF_ERROR(cudaEventRecord(end_, stream_));
    TO_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(end_));
    float ms = 0;
    TO_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, begin_, end_));
    times.push_back(ms);
    // Early stop: clearly slower than the best candidate so far.
    if (best_ms > 0 && times.size() >= 3 && median(times) > 2 * best_ms) break;
  }
  return median(times);
}

Result<ChosenTactic> TacticTimer::choose(const StepInstance& step, const std::vector<const TacticFamily*>& families, int limit,
                                         const std::map<std::string, std::pair<std::string, nlohmann::json>>& replay,
                                         const std::string& label, std::vector<std::string>& log) {
  if (auto it = replay.find(step.anchor.node.name); it != replay.end()) {
    for (const TacticFamily* family : families) {
      if (family->name() != it->second.first) continue;
      auto tactic = family->replay(step, it->second.second);
      if (!tactic.is_ok()) return tactic.status().with_context(fmt::format("replaying the recorded tactic of '{}'", label));
      return ChosenTactic{family->name(), std::move(tactic).value(), -1};
    }
    return make_error(StatusCode::kFailedPrecondition, "'{}': the recorded tactic family '{}' cannot implement it here", label, it->second.first);
  }
  std::vector<std::pair<const TacticFamily*, std::unique_ptr<CudaTactic>>> candidates;
  const RunContext ctx = handles_->context(stream_, &device_);
  for (const TacticFamily* family : families) {
    const int room = limit - static_cast<int>(candidates.size());
    if (room <= 0) break;
    auto list = family->candidates(step, ctx, room);
    if (!list.is_ok()) {
      log.push_back(fmt::format("{}: {} offered no candidates: {}", label, family->name(), list.status().message()));
      continue;
    }
    for (auto& c : *list) candidates.emplace_back(family, std::move(c));
  }
  if (candidates.empty()) return unsupported("'{}': no tactic candidate (see the build log)", label);
  if (candidates.size() == 1) return ChosenTactic{candidates[0].first->name(), std::move(candidates[0].second), -1};

  size_t best = candidates.size();
  double best_ms = -1;
  std::vector<std::string> failures;
  for (size_t i = 0; i < candidates.size(); ++i) {
    auto ms = time(*candidates[i].second, step, best_ms);
    if (!ms.is_ok()) {
      // A failure that poisons the context (an illegal address) makes every later call fail too;
      // clear what can be cleared and go on, the next candidate's error will tell.
      cudaGetLastError();
      failures.push_back(fmt::format("{}: {}", candidates[i].second->name(), ms.status().message()));
      log.push_back(fmt::format("{}: skipped tactic {}: {}", label, candidates[i].second->name(), ms.status().message()));
      continue;
    }
    if (best == candidates.size() || *ms < best_ms) best = i, best_ms = *ms;
  }
  if (best == candidates.size())
    return unsupported("'{}': every tactic candidate failed: {}", label, fmt::join(failures, "; "));
  return ChosenTactic{candidates[best].first->name(), std::move(candidates[best].second), best_ms};
}

}  // namespace tensoracle::backends::cuda
