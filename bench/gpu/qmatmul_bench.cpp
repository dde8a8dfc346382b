// The GEMMs of a BERT-base encoder layer (QKV projection, attention output, FFN up + GELU, FFN
// down) at batch 1 and 32 (sequence 128): each as the cuda planner forms its step -- fp16
// "cublaslt.matmul" with the bias (and GELU) epilogue, and the int8 and fp8 Q/DQ patterns as
// "cublaslt.qmatmul" steps -- with every candidate timed (median of 20 runs after 5 warm-up, CUDA
// events); per path the fastest. One line per GEMM and batch (times in ms):
//
//   ffn_up 4096x768->3072 +bias+gelu: | fp16 cublaslt.matmul T | int8 explicit T fused T | fp8e4m3 explicit T fused T
//
// (a path missing from a line: the planner did not fuse that pattern; its step then names the
// family that took it). Each line ends with cuBLASLt's fp8 GEMM alone (same epilogue, GELU as
// tanh) at every heuristic rank, in its exact mode and in its fast-accumulation mode:
//
//   ... | lt fp8 exact T fast T vector-scaled T alpha-scaled T
//
// the last two in the exact mode with per-output-channel weight scales: as outer-vector scales
// beside the activation's per row (the only pairing cuBLASLt has algorithms for), and as alpha
// beside per-tensor scales; not a failure of the bench where cuBLASLt lacks the mode. Then
// whether those forms compute what LtGemmDesc says (vector scales with the activation's scale
// one value and per row, alpha; one line each), and which epilogues and outputs cuBLASLt takes
// with them. Last, one line per fp8 GEMM form that the planner once did not propose
// (qmatmul_plan.h: fp16 out with fp16 scales, fp32 out as the per-channel path runs it, fp8 out
// with a D scale): whether
// cuBLASLt runs it with its scale pointers 4 bytes apart (as they were when those forms failed
// on the H200) and 16 bytes apart (as the heuristic's placeholder pointers are aligned).
// Usage: qmatmul_bench
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cublaslt/lt_gemm.h"
#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/device.h"
#include "backends/cuda/plan_lowering.h"
#include "backends/cuda/planned_step.h"
#include "backends/plan_network.h"
#include "core/errors.h"
#include "passes/passes.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::backends::cuda {
namespace {

constexpr int kWarmup = 5;
constexpr int kTimed = 20;

struct Gemm {
  const char* name;
  int64_t tokens, k, n;
  bool gelu;
};

// x [tokens, k] · w [k, n] + bias (-> gelu_tanh), named "fc1"; with DQ on both operands when
// `quantized` is int8 or fp8 (the activation quantized per tensor, the weight per tensor).
Network network_of(const Gemm& g, DataType quantized) {
  Network net;
  const bool q = quantized != DataType::kFloat16;
  const auto constant = [&](DataType type, Dims shape, double value) {
    HostArray a = HostArray::zeros(type, shape).value();
    std::vector<double> v(static_cast<size_t>(a.element_count()));
    std::mt19937 rng(static_cast<uint32_t>(v.size()));
    std::uniform_real_distribution<double> u(-value, value);
    for (double& e : v) e = shape.rank() == 0 ? value : u(rng);
    convert_elements(DataType::kFloat64, v.data(), type, a.data(), v.size());
    return net.add_constant(std::move(a));
  };
  Tensor x = net.add_input("x", q ? quantized : DataType::kFloat16, {g.tokens, g.k});
  Tensor w = constant(q ? quantized : DataType::kFloat16, {g.k, g.n}, q ? 100 : 0.05);
  if (q) {
    x = net.dequantize(x, constant(DataType::kFloat32, {}, 0.01), DequantizeAttributes().set_output_type(DataType::kFloat16));
    w = net.dequantize(w, constant(DataType::kFloat32, {}, 0.0005), DequantizeAttributes().set_output_type(DataType::kFloat16));
  }
  Tensor y = net.matmul(x, w, MatMulAttributes().set_name("fc1"));
  y = net.add(y, constant(DataType::kFloat16, {g.n}, 0.5));
  if (g.gelu) y = net.activation(y, ActivationAttributes().set_kind(ActivationKind::kGeluTanh));
  net.mark_output(y, "y");
  return net;
}

Status fill(const DeviceTensor& t, uint32_t seed) {
  std::vector<float> values(static_cast<size_t>(t.element_count()));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const float range = t.dtype == DataType::kInt8 ? 100.0f : 1.0f;
  for (float& v : values) v = t.element_count() == 1 ? 0.01f : range * u(rng);
  std::vector<unsigned char> bytes(t.byte_size());
  convert_elements(DataType::kFloat32, values.data(), t.dtype, bytes.data(), values.size());
  TO_CUDA_RETURN_IF_ERROR(cudaMemcpy(t.data, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  return Status::ok();
}

// The fastest candidate of each path ("fused", "explicit", each CUTLASS tile, or the family name)
// for fc1's step.
Result<std::map<std::string, double>> time_step(const Gemm& g, DataType quantized, const DeviceInfo& device,
                                                 const RunContext& ctx, cudaEvent_t begin, cudaEvent_t end) {
  TO_ASSIGN_OR_RETURN(const Network net, passes::optimize_for_inference(network_of(g, quantized)));
  TO_ASSIGN_OR_RETURN(const std::vector<TensorDesc> desc, infer_tensor_descs(net, {{"x", Dims({g.tokens, g.k})}}));
  std::vector<std::string> log;
  const std::vector<PlannedStep> steps = lower_to_steps(net, desc, device, &log);
  const auto planned = std::find_if(steps.begin(), steps.end(), [&](const PlannedStep& s) { return net.node(s.anchor).name == "fc1"; });
  TO_ASSERT(planned != steps.end());
  TO_ASSIGN_OR_RETURN(const StepInstance step, instantiate(net, *planned, desc));
  std::vector<DeviceBuffer> memory;
  StepBuffers buffers;
  uint32_t seed = 1;
  for (const auto& [tensors, list] : {std::pair{&planned->inputs, &buffers.inputs}, std::pair{&planned->extra_inputs, &buffers.extra_inputs},
                                      std::pair{&planned->outputs, &buffers.outputs}})
    for (Tensor t : *tensors) {
      DeviceTensor d{desc[t.id].dtype, desc[t.id].shape, Layout::kLinear, nullptr};
      TO_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::allocate(std::max<size_t>(d.byte_size(), 1), "bench tensor"));
      d.data = b.data();
      memory.push_back(std::move(b));
      if (list != &buffers.outputs) TO_RETURN_IF_ERROR(fill(d, seed++));
      list->push_back(d);
    }
  std::map<std::string, double> best;
  for (const TacticFamily* family : accepting_families(step, device, nullptr)) {
    TO_ASSIGN_OR_RETURN(auto candidates, family->candidates(step, ctx, 16));
    for (const auto& tactic : candidates) {
      TO_ASSIGN_OR_RETURN(DeviceBuffer workspace, DeviceBuffer::allocate(std::max<size_t>(tactic->workspace_size(step), 1), "workspace"));
      buffers.workspace = workspace.data();
      buffers.workspace_bytes = tactic->workspace_size(step);
      std::vector<double> times;
      Status ran = Status::ok();
      for (int i = 0; i < kWarmup + kTimed && ran.is_ok(); ++i) {
        TO_CUDA_RETURN_IF_ERROR(cudaEventRecord(begin, ctx.stream));
        ran = tactic->run(step, buffers, ctx);
        TO_CUDA_RETURN_IF_ERROR(cudaEventRecord(end, ctx.stream));
        TO_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(end));
        float ms = 0;
        TO_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, begin, end));
        if (i >= kWarmup) times.push_back(ms);
      }
      if (!ran.is_ok()) continue;  // an algorithm that fails here is not the tactic's number
      std::sort(times.begin(), times.end());
      const std::string name = tactic->name();
      // Our CUTLASS kernels by tile (the timer's choice between them is itself worth seeing).
      const std::string path = name.find("#fused") != std::string::npos      ? "fused"
                               : name.find("#explicit") != std::string::npos ? "explicit"
                               : name.rfind("cutlass.", 0) == 0             ? name
                                                                              : family->name();
      const double ms = times[times.size() / 2];
      if (!best.count(path) || ms < best[path]) best[path] = ms;
    }
  }
  if (best.empty()) return unsupported("no candidate ran for {}", g.name);
  return best;
}

// How an fp8 GEMM takes per-output-channel weight scales: not at all (per-tensor scales), as
// cuBLASLt's outer vectors on both operands (the activation's scale repeated per row), or as its
// alpha vector beside per-tensor A/B scales.
enum class ChannelScales { kNone, kVectors, kAlpha };

void set_channel_scales(LtGemmDesc& desc, ChannelScales form) {
  desc.b_scale_per_column = desc.a_scale_per_row = form == ChannelScales::kVectors;
  desc.alpha_per_column = form == ChannelScales::kAlpha;
}

// The fastest heuristic rank of cuBLASLt's fp8 GEMM for `g` (fp16 output, bias, tanh GELU), in
// the exact or the fast-accumulation mode, with the weight scales in `form`.
Result<double> time_lt_fp8(const Gemm& g, bool fast, const RunContext& ctx, cudaEvent_t begin, cudaEvent_t end,
                           ChannelScales form = ChannelScales::kNone) {
  LtGemmDesc desc;
  desc.input_type = DataType::kFloat8E4M3;
  desc.output_type = DataType::kFloat16;
  desc.m = g.tokens, desc.n = g.n, desc.k = g.k;
  desc.transpose_b = true;
  desc.use_bias = true;
  desc.activation = g.gelu ? LtActivation::kGeluTanh : LtActivation::kNone;
  desc.fast_accumulation = fast;
  set_channel_scales(desc, form);
  std::vector<DeviceBuffer> memory;
  const auto tensor = [&](DataType type, Dims shape) -> Result<DeviceTensor> {
    DeviceTensor t{type, shape, Layout::kLinear, nullptr};
    TO_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::allocate(t.byte_size(), "bench tensor"));
    t.data = b.data();
    memory.push_back(std::move(b));
    TO_RETURN_IF_ERROR(fill(t, static_cast<uint32_t>(memory.size())));
    return t;
  };
  TO_ASSIGN_OR_RETURN(const DeviceTensor a, tensor(DataType::kFloat8E4M3, Dims({g.tokens, g.k})));
  TO_ASSIGN_OR_RETURN(const DeviceTensor b, tensor(DataType::kFloat8E4M3, Dims({g.n, g.k})));
  TO_ASSIGN_OR_RETURN(const DeviceTensor bias, tensor(DataType::kFloat16, Dims({g.n})));
  TO_ASSIGN_OR_RETURN(const DeviceTensor d, tensor(DataType::kFloat16, Dims({g.tokens, g.n})));
  TO_ASSIGN_OR_RETURN(const DeviceTensor scale, tensor(DataType::kFloat32, Dims({})));
  TO_ASSIGN_OR_RETURN(const DeviceTensor row_scales, tensor(DataType::kFloat32, Dims({g.tokens})));
  TO_ASSIGN_OR_RETURN(const DeviceTensor column_scales, tensor(DataType::kFloat32, Dims({g.n})));
  TO_ASSIGN_OR_RETURN(DeviceBuffer workspace, DeviceBuffer::allocate(kLtWorkspaceLimit, "workspace"));
  LtGemmArgs args;
  args.a = a.data, args.b = b.data, args.d = d.data, args.bias = bias.data;
  args.a_scale = static_cast<const float*>(desc.a_scale_per_row ? row_scales.data : scale.data);
  args.b_scale = static_cast<const float*>(desc.b_scale_per_column ? column_scales.data : scale.data);
  if (desc.alpha_per_column) args.alpha_per_column = static_cast<const float*>(column_scales.data);
  TO_ASSIGN_OR_RETURN(auto first, LtGemm::create(ctx.cublaslt, desc));
  double best = -1;
  for (int rank = 0; rank < first->algorithm_count(); ++rank) {
    TO_ASSIGN_OR_RETURN(auto gemm, LtGemm::create(ctx.cublaslt, desc, rank));
    std::vector<double> times;
    for (int i = 0; i < kWarmup + kTimed; ++i) {
      TO_CUDA_RETURN_IF_ERROR(cudaEventRecord(begin, ctx.stream));
      TO_RETURN_IF_ERROR(gemm->run(ctx.cublaslt, args, ctx.stream, workspace.data(), kLtWorkspaceLimit));
      TO_CUDA_RETURN_IF_ERROR(cudaEventRecord(end, ctx.stream));
      TO_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(end));
      float ms = 0;
      TO_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, begin, end));
      if (i >= kWarmup) times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    const double ms = times[times.size() / 2];
    if (best < 0 || ms < best) best = ms;
  }
  return best;
}

// "ok" or the error of one fp8 GEMM of `output` type whose A, B (and D) scale pointers are
// `spacing` bytes apart in one buffer.
std::string run_with_scale_spacing(DataType output, size_t spacing, const RunContext& ctx) {
  LtGemmDesc desc;
  desc.input_type = DataType::kFloat8E4M3;
  desc.output_type = output;
  desc.c_type = DataType::kFloat16;  // read only for an fp8 output
  desc.m = 32, desc.n = 32, desc.k = 64;
  desc.transpose_b = true;
  auto gemm = LtGemm::create(ctx.cublaslt, desc);
  if (!gemm.is_ok()) return "create: " + gemm.status().to_string();
  std::vector<DeviceBuffer> memory;
  for (const size_t bytes : {size_t{32 * 64}, size_t{32 * 64}, size_t{32 * 32 * 4}, size_t{32 * 32 * 2}, size_t{256}})
    memory.push_back(DeviceBuffer::allocate(bytes, "probe").value());
  std::vector<float> ones(64, 1.0f);
  if (cudaMemset(memory[0].data(), 0x38, 32 * 64) != cudaSuccess || cudaMemset(memory[1].data(), 0x38, 32 * 64) != cudaSuccess ||
      cudaMemset(memory[3].data(), 0, 32 * 32 * 2) != cudaSuccess ||
      cudaMemcpy(memory[4].data(), ones.data(), 256, cudaMemcpyHostToDevice) != cudaSuccess)
    return "setup failed";
  DeviceBuffer workspace = DeviceBuffer::allocate(std::max<size_t>((*gemm)->workspace_size(), 1), "workspace").value();
  const char* scales = static_cast<const char*>(memory[4].data());
  LtGemmArgs args;
  args.a = memory[0].data(), args.b = memory[1].data(), args.d = memory[2].data(), args.c = memory[3].data();
  args.a_scale = reinterpret_cast<const float*>(scales);
  args.b_scale = reinterpret_cast<const float*>(scales + spacing);
  args.d_scale = reinterpret_cast<const float*>(scales + 2 * spacing);
  const Status ran = (*gemm)->run(ctx.cublaslt, args, ctx.stream, workspace.data(), (*gemm)->workspace_size());
  if (!ran.is_ok()) return ran.to_string();
  const cudaError_t synced = cudaStreamSynchronize(ctx.stream);
  return synced == cudaSuccess ? "ok" : cudaGetErrorString(synced);
}

// Whether cuBLASLt's per-column weight scales do what LtGemmDesc says: A and B all ones (k = 64),
// the weight scales b[j] = (j + 1) / 16 as outer vectors or as alpha (`form`), and the
// activation's one value 0.5 or (a_per_row) a[i] = 1 + i / 32, so D[i, j] = 64 · a · b[j] exactly
// in fp16. "ok", the first wrong element, or cuBLASLt's error.
std::string check_channel_scales(ChannelScales form, bool a_per_row, const RunContext& ctx) {
  constexpr int64_t m = 32, n = 48, k = 64;
  LtGemmDesc desc;
  desc.input_type = DataType::kFloat8E4M3;
  desc.output_type = DataType::kFloat16;
  desc.m = m, desc.n = n, desc.k = k;
  desc.transpose_b = true;
  set_channel_scales(desc, form);
  desc.a_scale_per_row = a_per_row;
  auto gemm = LtGemm::create(ctx.cublaslt, desc);
  if (!gemm.is_ok()) return "create: " + gemm.status().to_string();
  std::vector<float> a_scales(m), b_scales(n);
  for (int64_t i = 0; i < m; ++i) a_scales[static_cast<size_t>(i)] = a_per_row ? 1.0f + static_cast<float>(i) / 32 : 0.5f;
  for (int64_t j = 0; j < n; ++j) b_scales[static_cast<size_t>(j)] = static_cast<float>(j + 1) / 16;
  std::vector<DeviceBuffer> memory;
  for (const size_t bytes : {size_t{m * k}, size_t{n * k}, size_t{m * n * 2}, size_t{m * 4}, size_t{n * 4}, size_t{4}})
    memory.push_back(DeviceBuffer::allocate(bytes, "probe").value());
  const float one = 1.0f;
  if (cudaMemset(memory[0].data(), 0x38, m * k) != cudaSuccess || cudaMemset(memory[1].data(), 0x38, n * k) != cudaSuccess ||
      cudaMemcpy(memory[3].data(), a_scales.data(), m * 4, cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(memory[4].data(), b_scales.data(), n * 4, cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(memory[5].data(), &one, 4, cudaMemcpyHostToDevice) != cudaSuccess)
    return "setup failed";
  DeviceBuffer workspace = DeviceBuffer::allocate(std::max<size_t>((*gemm)->workspace_size(), 1), "workspace").value();
  LtGemmArgs args;
  args.a = memory[0].data(), args.b = memory[1].data(), args.d = memory[2].data();
  args.a_scale = static_cast<const float*>(memory[3].data());
  args.b_scale = static_cast<const float*>(memory[form == ChannelScales::kAlpha ? 5 : 4].data());
  if (form == ChannelScales::kAlpha) args.alpha_per_column = static_cast<const float*>(memory[4].data());
  const Status ran = (*gemm)->run(ctx.cublaslt, args, ctx.stream, workspace.data(), (*gemm)->workspace_size());
  if (!ran.is_ok()) return ran.to_string();
  if (const cudaError_t synced = cudaStreamSynchronize(ctx.stream); synced != cudaSuccess) return cudaGetErrorString(synced);
  std::vector<uint16_t> d(m * n);
  std::vector<float> got(m * n);
  if (cudaMemcpy(d.data(), memory[2].data(), d.size() * 2, cudaMemcpyDeviceToHost) != cudaSuccess) return "copy failed";
  convert_elements(DataType::kFloat16, d.data(), DataType::kFloat32, got.data(), got.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float want = 64.0f * a_scales[static_cast<size_t>(i)] * b_scales[static_cast<size_t>(j)];
      const float value = got[static_cast<size_t>(i * n + j)];
      if (std::fabs(value - want) > 1e-3f * want)
        return fmt::format("D[{}, {}] = {}, expected {}", i, j, value, want);
    }
  return "ok";
}

// Which epilogues and outputs cuBLASLt has an algorithm for with both outer-vector scales and
// with the alpha vector (the forms qmatmul_plan.h's kChannelScalesInGemm and
// kChannelScalesAsAlpha ask for): "ok" or the heuristic's refusal.
void probe_channel_scale_epilogues(const RunContext& ctx) {
  struct Probe {
    const char* name;
    DataType output;
    bool bias;
    LtActivation activation;
  };
  for (const Probe& probe : {Probe{"fp16", DataType::kFloat16, false, LtActivation::kNone},
                             Probe{"fp16 + bias", DataType::kFloat16, true, LtActivation::kNone},
                             Probe{"fp16 + bias + gelu", DataType::kFloat16, true, LtActivation::kGeluTanh},
                             Probe{"bf16 + bias + relu", DataType::kBFloat16, true, LtActivation::kRelu},
                             Probe{"fp8", DataType::kFloat8E4M3, false, LtActivation::kNone},
                             Probe{"fp8 + bias", DataType::kFloat8E4M3, true, LtActivation::kNone},
                             Probe{"fp8 + bias + gelu", DataType::kFloat8E4M3, true, LtActivation::kGeluTanh}}) {
    LtGemmDesc desc;
    desc.input_type = DataType::kFloat8E4M3;
    desc.output_type = probe.output;
    desc.c_type = DataType::kFloat16;
    desc.m = 128, desc.n = 768, desc.k = 768;
    desc.transpose_b = true;
    desc.use_bias = probe.bias;
    desc.activation = probe.activation;
    for (const ChannelScales form : {ChannelScales::kVectors, ChannelScales::kAlpha}) {
      set_channel_scales(desc, form);
      auto gemm = LtGemm::create(ctx.cublaslt, desc);
      std::printf("fp8 %s -> %s: %s\n", form == ChannelScales::kAlpha ? "alpha per column" : "vector scales", probe.name,
                  gemm.is_ok() ? "ok" : gemm.status().to_string().c_str());
    }
  }
}

int run() {
  auto device = current_device();
  if (!device.is_ok()) {
    std::fprintf(stderr, "qmatmul_bench: %s\n", device.status().to_string().c_str());
    return 1;
  }
  auto handles = LibraryHandles::create();
  cudaStream_t stream = nullptr;
  cudaEvent_t begin = nullptr, end = nullptr;
  if (!handles.is_ok() || cudaStreamCreate(&stream) != cudaSuccess || cudaEventCreate(&begin) != cudaSuccess ||
      cudaEventCreate(&end) != cudaSuccess) {
    std::fprintf(stderr, "qmatmul_bench: cannot create library handles, a stream or events\n");
    return 1;
  }
  const RunContext ctx = (*handles)->context(stream, &*device);
  std::printf("qmatmul_bench: BERT-base GEMMs as planned steps; fastest candidate per path, median of %d after %d warm-up\n",
              kTimed, kWarmup);
  int status = 0;
  for (const int64_t tokens : {int64_t{128}, int64_t{32 * 128}}) {
    for (const Gemm& base : {Gemm{"qkv", 0, 768, 2304, false}, Gemm{"attn_out", 0, 768, 768, false},
                             Gemm{"ffn_up", 0, 768, 3072, true}, Gemm{"ffn_down", 0, 3072, 768, false}}) {
      Gemm g = base;
      g.tokens = tokens;
      std::string line = fmt::format("{} {}x{}->{} +bias{}:", g.name, g.tokens, g.k, g.n, g.gelu ? "+gelu" : "");
      for (const DataType type : {DataType::kFloat16, DataType::kInt8, DataType::kFloat8E4M3}) {
        auto best = time_step(g, type, *device, ctx, begin, end);
        if (!best.is_ok()) {
          line += fmt::format(" | {} FAILED {}", data_type_name(type), best.status().to_string());
          status = 1;
          continue;
        }
        line += fmt::format(" | {}", data_type_name(type));
        for (const auto& [path, ms] : *best) line += fmt::format(" {} {:.4f} ms", path, ms);
      }
      line += " | lt fp8";
      for (const bool fast : {false, true}) {
        auto ms = time_lt_fp8(g, fast, ctx, begin, end);
        if (!ms.is_ok()) {
          line += fmt::format(" {} FAILED {}", fast ? "fast" : "exact", ms.status().to_string());
          status = 1;
          continue;
        }
        line += fmt::format(" {} {:.4f} ms", fast ? "fast" : "exact", *ms);
      }
      // Per-column weight scales alone have no algorithm (the probe below): only both vectors.
      for (const auto& [form, label] : {std::pair{ChannelScales::kVectors, "vector-scaled"},
                                        std::pair{ChannelScales::kAlpha, "alpha-scaled"}}) {
        auto ms = time_lt_fp8(g, false, ctx, begin, end, form);
        line += ms.is_ok() ? fmt::format(" {} {:.4f} ms", label, *ms)
                           : fmt::format(" {} FAILED {}", label, ms.status().to_string());
      }
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    }
  }
  for (const DataType output : {DataType::kFloat16, DataType::kFloat32, DataType::kFloat8E4M3})
    for (const size_t spacing : {size_t{4}, size_t{16}})
      std::printf("fp8 -> %s, scale pointers %zu bytes apart: %s\n", std::string(data_type_name(output)).c_str(), spacing,
                  run_with_scale_spacing(output, spacing, ctx).c_str());
  for (const bool a_per_row : {false, true})
    std::printf("fp8 -> fp16, weight scales per column, activation scale %s: %s\n", a_per_row ? "per row" : "one value",
                check_channel_scales(ChannelScales::kVectors, a_per_row, ctx).c_str());
  std::printf("fp8 -> fp16, weight scales as alpha per column, activation scale one value: %s\n",
              check_channel_scales(ChannelScales::kAlpha, false, ctx).c_str());
  probe_channel_scale_epilogues(ctx);
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  cudaStreamDestroy(stream);
  return status;
}

}  // namespace
}  // namespace tensoracle::backends::cuda

int main() { return tensoracle::backends::cuda::run(); }
