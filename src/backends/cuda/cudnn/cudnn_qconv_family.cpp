// Family "cudnn.qconv": Q/DQ-fused convolutions (qconv_plan.h says what it takes and how each
// path runs). Candidates are the explicit path's engines, then the graph path's, then the fused
// path's, so the tactic timer checks the others against the explicit form and picks by
// measurement. Where cuDNN offers no engine for the fused graph, one fused candidate is still
// listed: its initialize fails with cuDNN's reason, which the timer writes to the build log
// naming the layer, and the explicit form runs. The graph path is listed only where cuDNN offers
// engines for it. Where cuDNN has no engine for the explicit form's convolution either, that
// form runs on the direct kernel ("cudnn.qconv#explicit_direct", engine "kernel.conv_direct").
// Where the dequantized convolution has few input channels (an image stem's 3: cudnn.conv's
// pad_channels_applicable), the explicit path is also offered with the dequantized x and w
// copied channel-padded to 8, as cudnn.conv's padded candidates convolve them
// ("cudnn.qconv#explicit<i>+pad8"): cuDNN's tensor-core engines need the padding.
// Tactic "cudnn.qconv#<path><i>", choice {"path": "explicit" | "graph" | "fused", "engine":
// "<cuDNN engine tag>"[, "pad_channels": 8]}; replay rebuilds the path's graph and takes the
// engine with that tag (the heuristics' first when the tag is not offered at these shapes, as
// cudnn.conv).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cudnn/conv_families.h"
#include "backends/cuda/cudnn/cudnn_conv_graph.h"
#include "backends/cuda/cudnn/qconv_kernels.h"
#include "backends/cuda/cudnn/qconv_plan.h"
#include "backends/cuda/kernels/quantize_args.h"
#include "backends/cuda/step_shapes.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr const char* kFamilyName = "cudnn.qconv";
// The explicit path's engine where cuDNN offers none for the dequantized convolution (an fp32
// channels-last one, say): the direct kernel of conv_kernels.h, so that the family always has a
// working candidate.
constexpr const char* kDirectEngine = "kernel.conv_direct";
constexpr size_t kAlignment = 256;  // cuDNN wants aligned pointers: each workspace piece starts on this

size_t aligned(int64_t bytes) { return (static_cast<size_t>(bytes) + kAlignment - 1) / kAlignment * kAlignment; }

// qconv_plan.h's three ways of running the step.
enum class Path { kExplicit, kGraph, kFused };
constexpr const char* path_name(Path path) {
  return path == Path::kExplicit ? "explicit" : path == Path::kGraph ? "graph" : "fused";
}

// The workspace pieces of one path, in order, before the engine's own workspace.
// fused: the packed x and w (where they are packed), the accumulator; graph: the packed x and w;
// explicit: the dequantized x and w, the product before the trailing quantize, and where the
// channels are padded the padded copies of x and w.
struct Scratch {
  size_t x = 0, w = 0, product = 0, x_padded = 0, w_padded = 0;
  size_t total() const { return x + w + product + x_padded + w_padded; }
};

Result<Scratch> scratch_of(const QuantizedConvPlan& plan, Path path, int64_t pad_channels) {
  Scratch s;
  if (path != Path::kExplicit) {
    const ConvProblem& q = plan.packed;
    TO_ASSIGN_OR_RETURN(const int64_t x, q.x_shape.byte_size(q.dtype));
    TO_ASSIGN_OR_RETURN(const int64_t w, q.w_shape.byte_size(q.dtype));
    TO_ASSIGN_OR_RETURN(const int64_t acc, q.y_shape.byte_size(plan.accumulator));
    s.x = plan.pack_x ? aligned(x) : 0;
    s.w = plan.pack_w ? aligned(w) : 0;
    s.product = path == Path::kFused ? aligned(acc) : 0;
    return s;
  }
  const ConvProblem& p = plan.problem;
  TO_ASSIGN_OR_RETURN(const int64_t x, p.x_shape.byte_size(p.dtype));
  TO_ASSIGN_OR_RETURN(const int64_t w, p.w_shape.byte_size(p.dtype));
  TO_ASSIGN_OR_RETURN(const int64_t y, p.y_shape.byte_size(p.dtype));
  s.x = aligned(x), s.w = aligned(w), s.product = plan.requantize ? aligned(y) : 0;
  if (pad_channels != 0) {
    const ConvProblem padded = with_padded_channels(p, pad_channels);
    TO_ASSIGN_OR_RETURN(const int64_t xp, padded.x_shape.byte_size(p.dtype));
    TO_ASSIGN_OR_RETURN(const int64_t wp, padded.w_shape.byte_size(p.dtype));
    s.x_padded = aligned(xp), s.w_padded = aligned(wp);
  }
  return s;
}

// A path's graph and engine, ready to run one step's shapes.
struct Prepared {
  StepShapes shapes;
  QuantizedConvPlan plan;
  Scratch scratch;
  cudnnContext* handle = nullptr;
  std::shared_ptr<CudnnConvGraph> graph;
  CudnnConvPlan engine;
  std::unordered_map<int64_t, void*> pack;
  PadChannelsLaunch pad;  // the explicit path's channel padding (pad_channels != 0), pointers still null

  size_t workspace_size() const { return scratch.total() + static_cast<size_t>(engine.workspace); }
};

// The plan, scratch and graph of `path` for `step` (no graph for the direct kernel), no engine
// chosen yet; the explicit path's channels padded to `pad_channels` when that is not 0.
Result<Prepared> describe(const StepInstance& step, Path path, const RunContext& ctx, bool direct = false,
                          int64_t pad_channels = 0) {
  Prepared p;
  p.shapes = StepShapes::of(step);
  TO_ASSIGN_OR_RETURN(p.plan, plan_quantized_conv(step, ctx.device ? ctx.device->compute_capability() : 0));
  if (pad_channels != 0) {
    if (path != Path::kExplicit || direct)
      return invalid_argument("layer '{}': only the explicit path's cuDNN engines pad channels", step.anchor.node.name);
    if (pad_channels != kPadChannelsTo)
      return invalid_argument("layer '{}': channels are padded to {}, not {}", step.anchor.node.name, kPadChannelsTo,
                              pad_channels);
    TO_RETURN_IF_ERROR(pad_channels_applicable(p.plan.problem).with_context(fmt::format("layer '{}'", step.anchor.node.name)));
    p.pad = pad_channels_launch(p.plan.problem, pad_channels);
  }
  TO_ASSIGN_OR_RETURN(p.scratch, scratch_of(p.plan, path, pad_channels));
  if (p.scratch.total() > ctx.workspace_bytes)
    return unsupported("layer '{}': the {} path needs {} bytes of scratch, more than the {} bytes of workspace given",
                       step.anchor.node.name, path_name(path), p.scratch.total(), ctx.workspace_bytes);
  p.handle = ctx.cudnn;
  if (direct) return p;
  auto graph = path == Path::kExplicit
                   ? CudnnConvGraph::build(pad_channels ? with_padded_channels(p.plan.problem, pad_channels) : p.plan.problem,
                                           p.plan.epilogue, /*fused=*/false, ctx.cudnn)
                   : CudnnConvGraph::build_quantized(p.plan, /*whole_step=*/path == Path::kGraph, ctx.cudnn);
  if (!graph.is_ok())
    return graph.status().with_context(fmt::format("layer '{}': {} {} graph", step.anchor.node.name,
                                                   data_type_name(p.plan.quantized), path_name(path)));
  p.graph = *std::move(graph);
  return p;
}

int64_t engine_room(const Prepared& p, const RunContext& ctx) {
  return static_cast<int64_t>(std::min<size_t>(ctx.workspace_bytes - p.scratch.total(), static_cast<size_t>(kMaxConvWorkspace)));
}

class QuantizedConvTactic final : public CudaTactic {
 public:
  QuantizedConvTactic(Path path, int index, std::string engine, int64_t pad_channels = 0)
      : path_(path), index_(index), engine_(std::move(engine)), pad_channels_(pad_channels) {}

  std::string name() const override {
    if (direct()) return fmt::format("{}#explicit_direct", kFamilyName);
    if (pad_channels_) return fmt::format("{}#{}{}+pad{}", kFamilyName, path_name(path_), index_, pad_channels_);
    return fmt::format("{}#{}{}", kFamilyName, path_name(path_), index_);
  }
  nlohmann::json choice() const override {
    nlohmann::json c = {{"path", path_name(path_)}, {"engine", engine_}};
    if (pad_channels_) c["pad_channels"] = pad_channels_;
    return c;
  }

  void adopt(Prepared prepared) { active_ = std::make_unique<Prepared>(std::move(prepared)); }

  size_t workspace_size(const StepInstance& step) const override {
    if (active_ && active_->shapes.matches(step)) return active_->workspace_size();
    // Before initialize() at these shapes: the scratch these shapes need and cuDNN's bound.
    auto plan = plan_quantized_conv(step, 90);
    auto scratch = plan.is_ok() ? scratch_of(*plan, path_, pad_channels_) : Result<Scratch>(plan.status());
    return (scratch.is_ok() ? scratch->total() : 0) + static_cast<size_t>(kMaxConvWorkspace);
  }

  Status initialize(const StepInstance& step, const RunContext& ctx) override {
    if (active_ && active_->handle == ctx.cudnn && active_->shapes.matches(step) &&
        active_->workspace_size() <= ctx.workspace_bytes)
      return Status::ok();
    active_.reset();
    TO_ASSIGN_OR_RETURN(Prepared p, describe(step, path_, ctx, direct(), pad_channels_));
    if (p.graph) {
      TO_ASSIGN_OR_RETURN_CONTEXT(p.engine, p.graph->plan_for(engine_, engine_room(p, ctx)),
                                  fmt::format("layer '{}': {}", step.anchor.node.name, name()));
      p.pack = p.graph->variant_pack();
    }
    adopt(std::move(p));
    return Status::ok();
  }

  Status run(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx) override {
    if (!active_ || active_->handle != ctx.cudnn || !active_->shapes.matches(step)) return not_prepared_for(step, name());
    Prepared& p = *active_;
    const QuantizedConvPlan& plan = p.plan;
    TO_RETURN_IF_ERROR(check_buffer_layouts(step, plan.problem, plan.epilogue, buffers));
    char* workspace = static_cast<char*>(buffers.workspace);
    // A step that needs no workspace (the graph path on unpacked operands, say) may get none.
    const bool workspace_ok = p.workspace_size() == 0 || (workspace != nullptr &&
                                                           reinterpret_cast<uintptr_t>(workspace) % kAlignment == 0 &&
                                                           buffers.workspace_bytes >= p.workspace_size());
    if (!workspace_ok ||
        std::max({plan.x_data, plan.x_scale, plan.w_data, plan.w_scale, plan.y_scale}) >= buffers.inputs.size())
      return make_error(StatusCode::kFailedPrecondition,
                        "layer '{}': {} needs {} bytes of workspace aligned to {} bytes and every step input, {} bytes "
                        "given at {}",
                        step.anchor.node.name, name(), p.workspace_size(), kAlignment, buffers.workspace_bytes,
                        static_cast<const void*>(workspace));
    CudnnConvOperands operands;
    operands.x = workspace;
    operands.w = workspace + p.scratch.x;
    char* product = workspace + p.scratch.x + p.scratch.w;
    operands.workspace = workspace + p.scratch.total();
    operands.workspace_bytes = buffers.workspace_bytes - p.scratch.total();
    if (path_ == Path::kExplicit) return run_explicit(step, buffers, ctx, operands, product);
    TO_RETURN_IF_ERROR(pack_operands(buffers, ctx, operands));
    if (path_ == Path::kGraph) {
      operands.y = buffers.outputs[0].data;
      return p.graph->execute(p.engine, operands, buffers, p.pack, ctx.cudnn, ctx.stream);
    }
    return run_fused(buffers, ctx, operands, product);
  }

  bool runs_quantization_explicitly() const override { return path_ == Path::kExplicit; }

 private:
  bool direct() const { return path_ == Path::kExplicit && engine_ == kDirectEngine; }
  const void* input(const StepBuffers& buffers, size_t i) const { return buffers.inputs[i].data; }

  // Points operands.x and .w at the step's x_q and w_q, or at channels-last copies in the
  // workspace where the plan packs them.
  Status pack_operands(const StepBuffers& buffers, const RunContext& ctx, CudnnConvOperands& operands) const {
    const Prepared& p = *active_;
    const QuantizedConvPlan& plan = p.plan;
    const ConvProblem& q = plan.packed;
    const auto pack = [&](size_t data, const Dims& shape, const std::array<int64_t, 5>& strides, int64_t padded_a,
                          int64_t padded_c, const void* packed) {
      PackChannelsLastArgs a;
      a.data = input(buffers, data);
      for (int d = 0; d < 4; ++d) a.shape[d] = shape[static_cast<size_t>(d)];
      a.stride[0] = strides[0], a.stride[1] = strides[1], a.stride[2] = strides[3], a.stride[3] = strides[4];
      a.padded_a = padded_a;
      a.padded_c = padded_c;
      a.packed = const_cast<void*>(packed);
      return cuda_status(launch_pack_channels_last(a, ctx.stream), "channels-last packing (Q/DQ-fused convolution)");
    };
    const ConvProblem& d = plan.problem;
    if (plan.pack_x) TO_RETURN_IF_ERROR(pack(plan.x_data, d.x_shape, d.x_strides(), d.n, q.c, operands.x));
    else operands.x = input(buffers, plan.x_data);
    if (plan.pack_w) TO_RETURN_IF_ERROR(pack(plan.w_data, d.w_shape, d.w_strides(), q.k, q.c / q.groups, operands.w));
    else operands.w = input(buffers, plan.w_data);
    return Status::ok();
  }

  // Convolves the packed operands into the accumulator, then the epilogue kernel.
  Status run_fused(const StepBuffers& buffers, const RunContext& ctx, CudnnConvOperands& operands, char* accumulator) {
    const Prepared& p = *active_;
    const QuantizedConvPlan& plan = p.plan;
    const ConvProblem& q = plan.packed;
    const ConvProblem& d = plan.problem;
    operands.y = accumulator;
    TO_RETURN_IF_ERROR(p.graph->execute(p.engine, operands, buffers, active_->pack, ctx.cudnn, ctx.stream));

    QuantizedConvEpilogueArgs e;
    e.acc_type = plan.accumulator;
    e.acc_channels = q.k;
    const auto y_strides = d.y_strides();
    for (int i = 0; i < 4; ++i) e.shape[i] = d.y_shape[static_cast<size_t>(i)];
    e.y_stride[0] = y_strides[0], e.y_stride[1] = y_strides[1], e.y_stride[2] = y_strides[3], e.y_stride[3] = y_strides[4];
    e.product_type = d.dtype;
    e.x_scale = input(buffers, plan.x_scale);
    e.x_scale_type = plan.x_scale_type;
    e.w_scale = input(buffers, plan.w_scale);
    e.w_scale_type = plan.w_scale_type;
    e.w_per_channel = plan.w_per_channel;
    e.epilogue = epilogue_launch(d, plan.epilogue, buffers, /*with_bias=*/true);
    e.y_scale = plan.requantize ? input(buffers, plan.y_scale) : nullptr;
    e.y_scale_type = plan.y_scale_type;
    e.output_type = plan.output_type;
    return cuda_status(launch_quantized_conv_epilogue(accumulator, buffers.outputs[0].data, e, ctx.stream),
                       "quantized convolution epilogue kernel");
  }

  // The layers as they would run unfused, inside one step.
  Status run_explicit(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx,
                      CudnnConvOperands& operands, char* product) const {
    const Prepared& p = *active_;
    const QuantizedConvPlan& plan = p.plan;
    const ConvProblem& d = plan.problem;
    const FusedDequantize& x = step.quantization.dequantized[0];
    const FusedDequantize& w = step.quantization.dequantized[1];
    TO_ASSIGN_OR_RETURN(const QuantizeArgs qx, quantize_args_of(*x.layer, *x.data, *x.scale, d.dtype));
    TO_ASSIGN_OR_RETURN(const QuantizeArgs qw, quantize_args_of(*w.layer, *w.data, *w.scale, d.dtype));
    TO_CUDA_RETURN_IF_ERROR(launch_quantize(input(buffers, plan.x_data), input(buffers, plan.x_scale),
                                            const_cast<void*>(operands.x), qx, ctx.stream));
    TO_CUDA_RETURN_IF_ERROR(launch_quantize(input(buffers, plan.w_data), input(buffers, plan.w_scale),
                                            const_cast<void*>(operands.w), qw, ctx.stream));
    if (pad_channels_) {  // the dequantized x and w, copied channel-padded after the product
      PadChannelsLaunch pad = p.pad;
      pad.x.data = operands.x;
      pad.w.data = operands.w;
      pad.x.padded = product + p.scratch.product;
      pad.w.padded = static_cast<char*>(pad.x.padded) + p.scratch.x_padded;
      TO_CUDA_RETURN_IF_ERROR(launch_pad_channels(pad, ctx.stream));
      operands.x = pad.x.padded;
      operands.w = pad.w.padded;
    }
    void* y = plan.requantize ? product : buffers.outputs[0].data;
    operands.y = y;
    if (!p.graph) {  // the direct kernel: bias and epilogue included
      TO_CUDA_RETURN_IF_ERROR(launch_direct_conv(
          direct_conv_launch(d, operands.x, operands.w, y, epilogue_launch(d, plan.epilogue, buffers, /*with_bias=*/true)),
          ctx.stream));
    } else {
      TO_RETURN_IF_ERROR(p.graph->execute(p.engine, operands, buffers, active_->pack, ctx.cudnn, ctx.stream));
    }
    if (p.graph && (d.has_bias || !plan.epilogue.empty())) {
      const EpilogueLaunch e = epilogue_launch(d, plan.epilogue, buffers, /*with_bias=*/true);
      const auto shape = d.y_shape5();
      const auto strides = d.y_strides();
      TO_CUDA_RETURN_IF_ERROR(launch_conv_epilogue(conv_element(d.dtype), shape.data(), y, strides.data(), e, ctx.stream));
    }
    if (!plan.requantize) return Status::ok();
    const FusedQuantize& q = *step.quantization.requantize;
    TO_ASSIGN_OR_RETURN(const QuantizeArgs args, quantize_args_of(*q.layer, q.before, *q.scale, plan.output_type));
    return cuda_status(launch_quantize(product, input(buffers, plan.y_scale), buffers.outputs[0].data, args, ctx.stream),
                       "quantize kernel (Q/DQ-fused convolution)");
  }

  Path path_;
  int index_;
  std::string engine_;
  int64_t pad_channels_;  // explicit path only; 0: unpadded
  std::unique_ptr<Prepared> active_;
};

class QuantizedConvFamily final : public TacticFamily {
 public:
  std::string name() const override { return kFamilyName; }
  FamilyTraits traits(const Node& node) const override {
    FamilyTraits t = conv_traits(node);
    t.quantize_fusion = true;
    return t;
  }

  Status can_implement(const StepInstance& step, const DeviceInfo& device) const override {
    if (!step.fuses_quantization())
      return unsupported("layer '{}': {} takes convolutions with fused quantize/dequantize layers only",
                         step.anchor.node.name, kFamilyName);
    TO_ASSIGN_OR_RETURN(const QuantizedConvPlan plan, plan_quantized_conv(step, device.compute_capability()));
    if (Status s = cudnn_conv_expressible(plan.problem); !s.is_ok())
      return unsupported("layer '{}': cuDNN cannot express it: {}", step.anchor.node.name, s.message());
    return Status::ok();
  }

  // The explicit path's engines (a third of `limit`; the direct kernel where cuDNN has none),
  // the graph path's (a third), then the fused path's (the rest, at least one); a path that
  // offers none leaves its room to the next. At `limit` 1 the fused path's first engine alone.
  // Where the channels can be padded, the padded explicit path's engines come on top (a third
  // of `limit` more).
  Result<std::vector<std::unique_ptr<CudaTactic>>> candidates(const StepInstance& step, const RunContext& ctx,
                                                              int limit) const override {
    limit = std::max(limit, 1);
    std::vector<std::unique_ptr<CudaTactic>> out;
    Status explicit_failure = offer(step, ctx, Path::kExplicit, limit / 3, out);
    const size_t explicit_count = out.size();
    // The graph path is an extra: where cuDNN has no engine for it, the others run.
    (void)offer(step, ctx, Path::kGraph, limit / 3, out);
    const Status fused_failure = offer(step, ctx, Path::kFused, limit - static_cast<int>(out.size()), out);
    if (!fused_failure.is_ok()) {
      // Listed so that the timer logs why (its initialize fails again with the reason).
      out.push_back(std::make_unique<QuantizedConvTactic>(Path::kFused, 0, ""));
      if (explicit_count == 0) explicit_failure = offer(step, ctx, Path::kExplicit, std::max(limit - 1, 1), out);
    }
    (void)offer_padded_explicit(step, ctx, limit / 3, out);
    if (out.size() == 1 && !fused_failure.is_ok())
      return unsupported("layer '{}': no path runs: explicit: {}; fused: {}", step.anchor.node.name,
                         explicit_failure.message(), fused_failure.message());
    return out;
  }

  Result<std::unique_ptr<CudaTactic>> replay(const StepInstance& step, const nlohmann::json& choice) const override {
    const auto path = choice.is_object() ? choice.find("path") : choice.end();
    const auto engine = choice.is_object() ? choice.find("engine") : choice.end();
    std::optional<Path> chosen;
    for (const Path p : {Path::kExplicit, Path::kGraph, Path::kFused})
      if (path != choice.end() && path->is_string() && *path == path_name(p)) chosen = p;
    if (!chosen || engine == choice.end() || !engine->is_string())
      return invalid_argument(
          "layer '{}': {} choice {} needs \"path\": \"explicit\", \"graph\" or \"fused\" and \"engine\" (a string)",
          step.anchor.node.name, kFamilyName, choice.dump());
    int64_t pad_channels = 0;
    if (const auto pad = choice.find("pad_channels"); pad != choice.end()) {
      if (*chosen != Path::kExplicit || !pad->is_number_integer() || pad->get<int64_t>() != kPadChannelsTo)
        return invalid_argument("layer '{}': {} choice {}: \"pad_channels\" is {} and only on the explicit path",
                                step.anchor.node.name, kFamilyName, choice.dump(), kPadChannelsTo);
      pad_channels = kPadChannelsTo;
    }
    return std::unique_ptr<CudaTactic>(
        std::make_unique<QuantizedConvTactic>(*chosen, 0, engine->get<std::string>(), pad_channels));
  }

 private:
  // Appends up to `room` candidates of one path, each with its engine built; the reason when the
  // path offers none (the explicit path then offers the direct kernel).
  static Status offer(const StepInstance& step, const RunContext& ctx, Path path, int room,
                      std::vector<std::unique_ptr<CudaTactic>>& out) {
    if (room <= 0) return Status::ok();
    const Status offered = offer_engines(step, ctx, path, room, out);
    if (offered.is_ok() || path != Path::kExplicit) return offered;
    auto direct = std::make_unique<QuantizedConvTactic>(Path::kExplicit, 0, kDirectEngine);
    if (auto base = describe(step, Path::kExplicit, ctx, /*direct=*/true); base.is_ok()) {
      direct->adopt(*std::move(base));
      out.push_back(std::move(direct));
    }
    return offered;
  }

  // The explicit path with its channels padded (describe()), where cudnn.conv would pad them.
  static Status offer_padded_explicit(const StepInstance& step, const RunContext& ctx, int room,
                                      std::vector<std::unique_ptr<CudaTactic>>& out) {
    if (room <= 0) return Status::ok();
    TO_ASSIGN_OR_RETURN(const QuantizedConvPlan plan,
                        plan_quantized_conv(step, ctx.device ? ctx.device->compute_capability() : 0));
    if (!pad_channels_applicable(plan.problem).is_ok()) return Status::ok();
    return offer_engines(step, ctx, Path::kExplicit, room, out, kPadChannelsTo);
  }

  static Status offer_engines(const StepInstance& step, const RunContext& ctx, Path path, int room,
                              std::vector<std::unique_ptr<CudaTactic>>& out, int64_t pad_channels = 0) {
    TO_ASSIGN_OR_RETURN(Prepared base, describe(step, path, ctx, /*direct=*/false, pad_channels));
    TO_ASSIGN_OR_RETURN(std::vector<CudnnConvPlan> engines, base.graph->plans(room, engine_room(base, ctx)));
    for (size_t i = 0; i < engines.size(); ++i) {
      auto tactic = std::make_unique<QuantizedConvTactic>(path, static_cast<int>(i), engines[i].engine, pad_channels);
      Prepared p = base;
      p.engine = engines[i];
      p.pack = p.graph->variant_pack();
      tactic->adopt(std::move(p));
      out.push_back(std::move(tactic));
    }
    return Status::ok();
  }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_cudnn_qconv_family() { return std::make_shared<QuantizedConvFamily>(); }

}  // namespace tensoracle::backends::cuda
