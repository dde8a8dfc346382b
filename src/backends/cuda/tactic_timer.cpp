#include "backends/cuda/tactic_timer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "backends/cuda/cuda_check.h"
#include "tensoracle/float_formats.h"

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
    d.inputs = step.computes_quantization() ? step.quantization.inputs : step.anchor.inputs;
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

Status TacticTimer::prepare_step(const StepInstance& step) {
  const size_t io = step_buffer_bytes(step);
  if (io_.size() < io) {
    io_ = DeviceBuffer();
    TO_ASSIGN_OR_RETURN(io_, DeviceBuffer::allocate(std::max(io, io_.size() * 2), "tactic timing"));
  }
  size_t used = 0;
  buffers_ = step_buffers_in(step, io_.data(), &used);
  reference_.clear();
  reference_tactic_.clear();
  // Seeded values in [-1, 1] for floating inputs and in [-7, 7] for int8 ones (quantized data,
  // kept small so that sums over a convolution's window stay finite in fp16), so that a wrong
  // candidate shows in its output; zeros for the other integer inputs (valid indices everywhere).
  uint32_t seed = 0x9E3779B9u;
  const auto next = [&seed] {
    seed = seed * 1664525u + 1013904223u;
    return seed;
  };
  std::vector<float> values;
  std::vector<unsigned char> bytes;
  for (const auto* list : {&buffers_.inputs, &buffers_.extra_inputs})
    for (const DeviceTensor& t : *list) {
      if (!t.data || t.byte_size() == 0) continue;
      if (!is_floating_point(t.dtype) && t.dtype != DataType::kInt8) {
        TO_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(t.data, 0, t.byte_size(), stream_));
        continue;
      }
      values.resize(static_cast<size_t>(t.element_count()));
      for (float& v : values)
        v = t.dtype == DataType::kInt8 ? static_cast<float>(static_cast<int>((next() >> 8) % 15u) - 7)
                                       : static_cast<float>(next() >> 8) / static_cast<float>(1u << 23) - 1.0f;
      bytes.resize(t.byte_size());
      convert_elements(DataType::kFloat32, values.data(), t.dtype, bytes.data(), values.size());
      TO_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(t.data, bytes.data(), bytes.size(), cudaMemcpyHostToDevice, stream_));
      TO_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));  // `bytes` is reused
    }
  return Status::ok();
}

Status TacticTimer::check_against_reference(const CudaTactic& tactic) {
  if (buffers_.outputs.empty() || !buffers_.outputs[0].data) return Status::ok();
  const DeviceTensor& out = buffers_.outputs[0];
  std::vector<unsigned char> bytes(out.byte_size());
  if (bytes.empty()) return Status::ok();
  TO_CUDA_RETURN_IF_ERROR(cudaMemcpy(bytes.data(), out.data, bytes.size(), cudaMemcpyDeviceToHost));
  std::vector<double> values(static_cast<size_t>(out.element_count()));
  convert_elements(out.dtype, bytes.data(), DataType::kFloat64, values.data(), values.size());
  if (reference_.empty()) {
    reference_ = std::move(values);
    reference_tactic_ = tactic.name();
    return Status::ok();
  }
  return agrees_with_reference(out.dtype, values, reference_).with_context(fmt::format("against {}", reference_tactic_));
}

Status agrees_with_reference(DataType type, const std::vector<double>& candidate, const std::vector<double>& reference) {
  if (candidate.size() != reference.size())
    return make_error(StatusCode::kInternal, "{} output elements, the reference has {}", candidate.size(), reference.size());
  double diff = 0, norm = 0;
  for (size_t i = 0; i < candidate.size(); ++i) {
    const double d = candidate[i] - reference[i];
    diff += d * d;
    norm += reference[i] * reference[i];
    if (std::isnan(candidate[i]) != std::isnan(reference[i])) diff = INFINITY;
  }
  const double rel = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  // Different algorithms round differently; these bounds are far above that and far below a
  // wrong result (which is off by about 1).
  const double limit = type == DataType::kFloat32 ? 1e-4 : type == DataType::kFloat16 ? 1e-2 : 5e-2;
  if (!(rel <= limit))
    return make_error(StatusCode::kInternal, "its output differs from the reference's by relative L2 {:.3g} (limit {:.0e}) on the same inputs",
                      rel, limit);
  return Status::ok();
}

Result<StepBuffers> TacticTimer::run_checked(CudaTactic& tactic, const StepInstance& step, const RunContext& ctx) {
  TO_RETURN_IF_ERROR(tactic.initialize(step, ctx));
  const size_t workspace = tactic.workspace_size(step);
  if (workspace > workspace_limit_)
    return unsupported("needs {} bytes of workspace, over the limit of {}", workspace, workspace_limit_);
  if (workspace_.size() < workspace) {
    workspace_ = DeviceBuffer();
    TO_ASSIGN_OR_RETURN(workspace_, DeviceBuffer::allocate(workspace, "tactic workspace"));
  }
  StepBuffers buffers = buffers_;
  buffers.workspace = workspace ? workspace_.data() : nullptr;
  buffers.workspace_bytes = workspace;
  TO_RETURN_IF_ERROR(tactic.prepare_constants(step, buffers, ctx));
  for (const DeviceTensor& t : buffers.outputs)  // poison: NaN in every floating type
    if (t.data) TO_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(t.data, 0xFF, t.byte_size(), stream_));
  for (int w = 0; w < 2; ++w) TO_RETURN_IF_ERROR(tactic.run(step, buffers, ctx));
  TO_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  TO_RETURN_IF_ERROR(check_against_reference(tactic));
  return buffers;
}

Result<double> TacticTimer::time(CudaTactic& tactic, const StepInstance& step, double best_ms) {
  const RunContext ctx = handles_->context(stream_, &device_, workspace_limit_);
  TO_ASSIGN_OR_RETURN(const StepBuffers buffers, run_checked(tactic, step, ctx));
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

std::string explicit_quantization_note(const StepInstance& step, const ChosenTactic& chosen, const std::string& label) {
  if (!step.fuses_quantization() || !chosen.tactic || !chosen.tactic->runs_quantization_explicitly()) return {};
  const std::string head = fmt::format("{}: Q/DQ run explicitly by {}", label, chosen.tactic->name());
  if (chosen.median_ms < 0) return head + ": not timed (the only candidate, or a recorded choice)";
  const CandidateTime* fastest_fused = nullptr;
  for (const CandidateTime& c : chosen.timed)
    if (!c.explicit_quantization && (!fastest_fused || c.median_ms < fastest_fused->median_ms)) fastest_fused = &c;
  if (!fastest_fused) return fmt::format("{} ({:.4f} ms): no fused candidate ran (see the lines above)", head, chosen.median_ms);
  return fmt::format("{} ({:.4f} ms): faster than every fused candidate (the fastest, {}, {:.4f} ms)", head, chosen.median_ms,
                     fastest_fused->tactic, fastest_fused->median_ms);
}

Result<ChosenTactic> TacticTimer::choose(const StepInstance& step, const std::vector<const TacticFamily*>& families, int limit,
                                         const std::map<std::string, std::pair<std::string, nlohmann::json>>& replay,
                                         const std::string& label, std::vector<std::string>& log) {
  if (auto it = replay.find(step.anchor.node.name); it != replay.end()) {
    for (const TacticFamily* family : families) {
      if (family->name() != it->second.first) continue;
      TO_ASSIGN_OR_RETURN_CONTEXT(std::unique_ptr<CudaTactic> tactic, family->replay(step, it->second.second),
                                  fmt::format("replaying the recorded tactic of '{}'", label));
      return ChosenTactic{family->name(), std::move(tactic), -1, {}};
    }
    return make_error(StatusCode::kFailedPrecondition, "'{}': the recorded tactic family '{}' cannot implement it here", label, it->second.first);
  }
  std::vector<std::pair<const TacticFamily*, std::unique_ptr<CudaTactic>>> candidates;
  const RunContext ctx = handles_->context(stream_, &device_, workspace_limit_);
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
  const TacticFamily* reference_family = nullptr;
  for (const TacticFamily* family : families)
    if (family->is_reference()) {
      reference_family = family;
      break;
    }
  // One candidate that is itself the reference, or with nothing to check it against: no need to run it.
  if (candidates.size() == 1 && (reference_family == nullptr || candidates[0].first == reference_family))
    return ChosenTactic{candidates[0].first->name(), std::move(candidates[0].second), -1, {}};

  TO_RETURN_IF_ERROR(prepare_step(step));
  // The reference runs first (untimed), so every candidate, the heuristics' first choice included,
  // is checked against our own kernel rather than against another library engine.
  std::unique_ptr<CudaTactic> reference;
  if (reference_family != nullptr) {
    auto made = reference_family->candidates(step, ctx, 1);
    Status ran = made.is_ok() ? run_checked(*made->front(), step, ctx).status() : made.status();
    if (ran.is_ok()) {
      reference = std::move(made->front());
    } else {
      cudaGetLastError();
      reference_.clear();
      log.push_back(fmt::format("{}: reference {} did not run ({}); candidates are checked against the first working one",
                                label, reference_family->name(), ran.message()));
    }
  }
  size_t best = candidates.size();
  double best_ms = -1;
  std::vector<std::string> failures;
  std::vector<CandidateTime> timed;
  for (size_t i = 0; i < candidates.size(); ++i) {
    // A lone candidate (optimization level 0) is checked, not timed.
    Result<double> ms = -1.0;
    if (candidates.size() > 1)
      ms = time(*candidates[i].second, step, best_ms);
    else if (Status checked = run_checked(*candidates[i].second, step, ctx).status(); !checked.is_ok())
      ms = checked;
    if (!ms.is_ok()) {
      // A failure that poisons the context (an illegal address) makes every later call fail too;
      // clear what can be cleared and go on, the next candidate's error will tell.
      cudaGetLastError();
      failures.push_back(fmt::format("{}: {}", candidates[i].second->name(), ms.status().message()));
      log.push_back(fmt::format("{}: skipped tactic {}: {}", label, candidates[i].second->name(), ms.status().message()));
      continue;
    }
    if (*ms >= 0)
      timed.push_back(CandidateTime{candidates[i].second->name(), *ms, candidates[i].second->runs_quantization_explicitly()});
    if (best == candidates.size() || *ms < best_ms) best = i, best_ms = *ms;
  }
  if (best < candidates.size())
    return ChosenTactic{candidates[best].first->name(), std::move(candidates[best].second), best_ms, std::move(timed)};
  if (reference) {
    log.push_back(fmt::format("{}: every candidate failed; using the reference {}", label, reference_family->name()));
    return ChosenTactic{reference_family->name(), std::move(reference), -1, {}};
  }
  return unsupported("'{}': every tactic candidate failed: {}", label, fmt::join(failures, "; "));
}

}  // namespace tensoracle::backends::cuda
