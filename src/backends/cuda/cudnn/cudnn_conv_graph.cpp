#include "backends/cuda/cudnn/cudnn_conv_graph.h"

#include <cudnn_frontend.h>

#include <algorithm>
#include <exception>
#include <set>

#include "backends/cuda/cudnn_check.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {

namespace fe = cudnn_frontend;

namespace {

// Tensor uids in the variant pack; epilogue operand i is kOperandUid + i.
constexpr int64_t kXUid = 1, kWUid = 2, kBiasUid = 3, kYUid = 4, kOperandUid = 10;
// The scales of a quantized graph that computes the whole step (build_quantized).
constexpr int64_t kXScaleUid = 5, kWScaleUid = 6, kYScaleUid = 7;

Status fe_status(fe::error_t error, const char* what) {
  if (error.is_good()) return Status::ok();
  const bool unsupported_graph = error.get_code() == fe::error_code_t::GRAPH_NOT_SUPPORTED ||
                                 error.get_code() == fe::error_code_t::GRAPH_EXECUTION_PLAN_CREATION_FAILED;
  return make_error(unsupported_graph ? StatusCode::kUnsupported : StatusCode::kCudaError, "cuDNN {}: {}", what,
                    error.get_message());
}

fe::DataType_t fe_type(DataType t) {
  switch (t) {
    case DataType::kFloat16: return fe::DataType_t::HALF;
    case DataType::kBFloat16: return fe::DataType_t::BFLOAT16;
    case DataType::kInt8: return fe::DataType_t::INT8;
    case DataType::kFloat8E4M3: return fe::DataType_t::FP8_E4M3;
    case DataType::kInt32: return fe::DataType_t::INT32;
    default: return fe::DataType_t::FLOAT;
  }
}

// cuDNN sees at least 2 spatial dims: a 1-D convolution is a 2-D one of height 1.
size_t cudnn_spatial(const ConvProblem& p) { return std::max<size_t>(2, static_cast<size_t>(p.spatial_rank)); }

std::vector<int64_t> tail(const std::array<int64_t, 3>& a, size_t n) { return {a.end() - n, a.end()}; }

std::vector<int64_t> with_lead(int64_t a, int64_t b, const std::vector<int64_t>& rest) {
  std::vector<int64_t> v{a, b};
  v.insert(v.end(), rest.begin(), rest.end());
  return v;
}

std::vector<int64_t> contiguous(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * std::max<int64_t>(dims[d], 1);
  return s;
}

std::vector<int64_t> strides_in(const std::vector<int64_t>& dims, Layout layout) {
  if (layout == Layout::kNhwc && dims.size() == 4) return element_strides(Dims(dims), Layout::kNhwc);
  return contiguous(dims);
}

// The dgrad post-padding that makes the forward convolution of the deconvolution's output map
// back onto its input: post' in [post - op, post - op + stride - 1], post' >= 0.
Result<std::vector<int64_t>> dgrad_post_padding(const ConvProblem& p) {
  const size_t n = cudnn_spatial(p);
  std::vector<int64_t> post;
  for (size_t i = 3 - n; i < 3; ++i) {
    const int64_t base = p.post[i] - p.output_padding[i];
    if (base >= 0) post.push_back(base);
    else if (-base <= p.stride[i] - 1) post.push_back(0);
    else
      return unsupported("output_padding {} exceeds post padding {} by stride {} or more", p.output_padding[i], p.post[i],
                         p.stride[i]);
  }
  return post;
}

fe::PointwiseMode_t pointwise_mode(EpilogueOpKind kind) {
  switch (kind) {
    case EpilogueOpKind::kAddTensor: return fe::PointwiseMode_t::ADD;
    case EpilogueOpKind::kMulTensor: return fe::PointwiseMode_t::MUL;
    case EpilogueOpKind::kRelu: return fe::PointwiseMode_t::RELU_FWD;
    case EpilogueOpKind::kSigmoid: return fe::PointwiseMode_t::SIGMOID_FWD;
    case EpilogueOpKind::kTanh: return fe::PointwiseMode_t::TANH_FWD;
    case EpilogueOpKind::kGeluErf: return fe::PointwiseMode_t::GELU_FWD;  // cuDNN's exact (erf) GELU
    case EpilogueOpKind::kGeluTanh: return fe::PointwiseMode_t::GELU_APPROX_TANH_FWD;
    case EpilogueOpKind::kSilu: return fe::PointwiseMode_t::SWISH_FWD;  // x * sigmoid(beta x), beta 1
  }
  return fe::PointwiseMode_t::NOT_SET;
}

// Validates and builds `g` and lists its engine configurations, without those the header's
// filters drop (`fp32`: the fp32 filters too).
Status finalize(fe::graph::Graph& g, cudnnHandle_t handle, bool fp32) {
  TO_RETURN_IF_ERROR(fe_status(g.validate(), "graph validation"));
  TO_RETURN_IF_ERROR(fe_status(g.build_operation_graph(handle), "operation graph"));
  TO_RETURN_IF_ERROR(fe_status(g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}), "heuristics"));
  std::vector<fe::NumericalNote_t> excluded{fe::NumericalNote_t::REDUCED_PRECISION_REDUCTION};
  if (fp32)
    excluded.insert(excluded.end(), {fe::NumericalNote_t::TENSOR_CORE, fe::NumericalNote_t::DOWN_CONVERT_INPUTS,
                                     fe::NumericalNote_t::FFT, fe::NumericalNote_t::WINOGRAD,
                                     fe::NumericalNote_t::WINOGRAD_TILE_4x4, fe::NumericalNote_t::WINOGRAD_TILE_6x6,
                                     fe::NumericalNote_t::WINOGRAD_TILE_13x13});
  g.deselect_numeric_notes(excluded);
  g.deselect_workspace_greater_than(kMaxConvWorkspace);
  return Status::ok();
}

}  // namespace

struct CudnnConvGraph::Impl {
  std::shared_ptr<fe::graph::Graph> graph;
  bool bias = false;                // the bias tensor is in the graph
  std::vector<int> operand_extra;   // per epilogue operand uid: its StepBuffers::extra_inputs index
  std::vector<std::pair<int64_t, size_t>> step_inputs;  // other tensors read: uid, StepBuffers::inputs index
};

Status cudnn_conv_expressible(const ConvProblem& p) {
  if (p.c == 0) return unsupported("a convolution over zero input channels");
  if (p.transposed) return dgrad_post_padding(p).status();
  return Status::ok();
}

CudnnConvGraph::~CudnnConvGraph() = default;

Result<std::shared_ptr<CudnnConvGraph>> CudnnConvGraph::build(const ConvProblem& p, const ConvEpilogue& epilogue,
                                                              bool fused, cudnnContext* handle) {
  TO_RETURN_IF_ERROR(cudnn_conv_expressible(p));
  std::shared_ptr<CudnnConvGraph> out(new CudnnConvGraph());
  out->fused_ = fused;
  out->handle_ = handle;
  out->impl_ = std::make_unique<Impl>();
  Impl& impl = *out->impl_;
  try {
    const size_t ns = cudnn_spatial(p);
    const fe::DataType_t io = fe_type(p.dtype);
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(io).set_intermediate_data_type(fe::DataType_t::FLOAT).set_compute_data_type(fe::DataType_t::FLOAT);

    const std::vector<int64_t> x_dims = with_lead(p.n, p.c, tail(p.in, ns));
    const std::vector<int64_t> y_dims = with_lead(p.n, p.k, tail(p.out, ns));
    const std::vector<int64_t> w_dims = p.transposed ? with_lead(p.c, p.k / p.groups, tail(p.kernel, ns))
                                                     : with_lead(p.k, p.c / p.groups, tail(p.kernel, ns));
    auto x = g->tensor(fe::graph::Tensor_attributes().set_name("x").set_dim(x_dims).set_stride(strides_in(x_dims, p.x_layout))
                           .set_data_type(io).set_uid(kXUid));
    auto w = g->tensor(fe::graph::Tensor_attributes().set_name("w").set_dim(w_dims).set_stride(strides_in(w_dims, p.w_layout))
                           .set_data_type(io).set_uid(kWUid));
    std::shared_ptr<fe::graph::Tensor_attributes> y;
    if (!p.transposed) {
      y = g->conv_fprop(x, w,
                        fe::graph::Conv_fprop_attributes()
                            .set_name("conv")
                            .set_pre_padding(tail(p.pre, ns))
                            .set_post_padding(tail(p.post, ns))
                            .set_stride(tail(p.stride, ns))
                            .set_dilation(tail(p.dilation, ns))
                            .set_compute_data_type(fe::DataType_t::FLOAT));
    } else {
      TO_ASSIGN_OR_RETURN(std::vector<int64_t> post, dgrad_post_padding(p));
      y = g->conv_dgrad(x, w,
                        fe::graph::Conv_dgrad_attributes()
                            .set_name("deconv")
                            .set_pre_padding(tail(p.pre, ns))
                            .set_post_padding(post)
                            .set_stride(tail(p.stride, ns))
                            .set_dilation(tail(p.dilation, ns))
                            .set_compute_data_type(fe::DataType_t::FLOAT));
    }
    y->set_dim(y_dims);

    auto current = y;
    const auto pointwise = [&](std::shared_ptr<fe::graph::Tensor_attributes> operand, EpilogueOpKind kind) {
      auto attrs = fe::graph::Pointwise_attributes().set_mode(pointwise_mode(kind)).set_compute_data_type(fe::DataType_t::FLOAT);
      if (kind == EpilogueOpKind::kSilu) attrs.set_swish_beta(1.0f);
      current = operand ? g->pointwise(current, operand, attrs) : g->pointwise(current, attrs);
      current->set_dim(y_dims);
    };
    if (fused && p.has_bias) {
      std::vector<int64_t> b_dims(y_dims.size(), 1);
      b_dims[1] = p.k;
      auto b = g->tensor(fe::graph::Tensor_attributes().set_name("bias").set_dim(b_dims).set_stride(contiguous(b_dims))
                             .set_data_type(io).set_uid(kBiasUid));
      pointwise(b, EpilogueOpKind::kAddTensor);
      impl.bias = true;
    }
    if (fused) {
      for (size_t i = 0; i < epilogue.ops.size(); ++i) {
        const ConvEpilogueOp& op = epilogue.ops[i];
        std::shared_ptr<fe::graph::Tensor_attributes> operand;
        if (op.extra >= 0) {
          std::vector<int64_t> dims;
          for (size_t d = 0; d < op.operand.rank(); ++d) dims.push_back(op.operand[d]);
          if (p.spatial_rank == 1) dims.insert(dims.begin() + 2, 1);  // the added height
          operand = g->tensor(fe::graph::Tensor_attributes()
                                  .set_name("operand" + std::to_string(i))
                                  .set_dim(dims)
                                  .set_stride(strides_in(dims, op.layout))
                                  .set_data_type(io)
                                  .set_uid(kOperandUid + static_cast<int64_t>(impl.operand_extra.size())));
          impl.operand_extra.push_back(op.extra);
        }
        pointwise(operand, op.kind);
      }
    }
    current->set_output(true).set_data_type(io).set_dim(y_dims).set_stride(strides_in(y_dims, p.y_layout)).set_uid(kYUid);

    TO_RETURN_IF_ERROR(finalize(*g, handle, p.dtype == DataType::kFloat32));
    impl.graph = std::move(g);
  } catch (const std::exception& e) {
    return make_error(StatusCode::kCudaError, "cuDNN graph construction threw: {}", e.what());
  }
  return out;
}

namespace {

// One attempt at the quantized graph with the convolution's result typed `conv_result` (cuDNN's
// int8 engines are described either way in its samples: an int32 result, or an fp32 virtual
// tensor feeding pointwise operations).
Status describe_quantized(const QuantizedConvPlan& plan, bool whole_step, fe::DataType_t conv_result, fe::graph::Graph& g,
                          std::vector<std::pair<int64_t, size_t>>& step_inputs, std::vector<int>& operand_extra,
                          bool& bias) {
  const ConvProblem& p = plan.packed;
  const bool int8 = p.dtype == DataType::kInt8;
  const fe::DataType_t compute = int8 ? fe::DataType_t::INT32 : fe::DataType_t::FLOAT;
  g.set_io_data_type(fe_type(p.dtype))
      .set_intermediate_data_type(whole_step ? fe::DataType_t::FLOAT : compute)
      .set_compute_data_type(compute);
  const std::vector<int64_t> x_dims = with_lead(p.n, p.c, tail(p.in, 2));
  const std::vector<int64_t> y_dims = with_lead(p.n, p.k, tail(p.out, 2));
  const std::vector<int64_t> w_dims = with_lead(p.k, p.c / p.groups, tail(p.kernel, 2));
  auto x = g.tensor(fe::graph::Tensor_attributes().set_name("x_q").set_dim(x_dims).set_stride(strides_in(x_dims, Layout::kNhwc))
                        .set_data_type(fe_type(p.dtype)).set_uid(kXUid));
  auto w = g.tensor(fe::graph::Tensor_attributes().set_name("w_q").set_dim(w_dims).set_stride(strides_in(w_dims, Layout::kNhwc))
                        .set_data_type(fe_type(p.dtype)).set_uid(kWUid));
  auto current = g.conv_fprop(x, w,
                              fe::graph::Conv_fprop_attributes()
                                  .set_name("qconv")
                                  .set_pre_padding(tail(p.pre, 2))
                                  .set_post_padding(tail(p.post, 2))
                                  .set_stride(tail(p.stride, 2))
                                  .set_dilation(tail(p.dilation, 2))
                                  .set_compute_data_type(compute));
  current->set_dim(y_dims).set_data_type(conv_result);
  if (!whole_step) {
    auto y = g.pointwise(current, fe::graph::Pointwise_attributes().set_mode(fe::PointwiseMode_t::IDENTITY)
                                      .set_compute_data_type(compute));
    y->set_output(true).set_data_type(fe_type(plan.accumulator)).set_dim(y_dims).set_stride(strides_in(y_dims, Layout::kNhwc))
        .set_uid(kYUid);
    return Status::ok();
  }
  const ConvProblem& d = plan.problem;
  const auto tensor = [&](const char* name, std::vector<int64_t> dims, DataType type, int64_t uid, Layout layout) {
    return g.tensor(fe::graph::Tensor_attributes().set_name(name).set_dim(dims).set_stride(strides_in(dims, layout))
                        .set_data_type(fe_type(type)).set_uid(uid));
  };
  const auto pointwise = [&](std::shared_ptr<fe::graph::Tensor_attributes> operand, fe::PointwiseMode_t mode) {
    auto attrs = fe::graph::Pointwise_attributes().set_mode(mode).set_compute_data_type(fe::DataType_t::FLOAT);
    if (mode == fe::PointwiseMode_t::SWISH_FWD) attrs.set_swish_beta(1.0f);
    current = operand ? g.pointwise(current, operand, attrs) : g.pointwise(current, attrs);
    current->set_dim(y_dims).set_data_type(fe::DataType_t::FLOAT);
  };
  const std::vector<int64_t> one{1, 1, 1, 1}, per_channel{1, p.k, 1, 1};
  pointwise(tensor("x_scale", one, plan.x_scale_type, kXScaleUid, Layout::kLinear), fe::PointwiseMode_t::MUL);
  step_inputs.emplace_back(kXScaleUid, plan.x_scale);
  pointwise(tensor("w_scale", plan.w_per_channel ? per_channel : one, plan.w_scale_type, kWScaleUid, Layout::kLinear),
            fe::PointwiseMode_t::MUL);
  step_inputs.emplace_back(kWScaleUid, plan.w_scale);
  if (d.has_bias) {
    pointwise(tensor("bias", per_channel, d.dtype, kBiasUid, Layout::kLinear), fe::PointwiseMode_t::ADD);
    bias = true;
  }
  for (size_t i = 0; i < plan.epilogue.ops.size(); ++i) {
    const ConvEpilogueOp& op = plan.epilogue.ops[i];
    std::shared_ptr<fe::graph::Tensor_attributes> operand;
    if (op.extra >= 0) {
      std::vector<int64_t> dims;
      for (size_t k = 0; k < op.operand.rank(); ++k) dims.push_back(op.operand[k]);
      const int64_t uid = kOperandUid + static_cast<int64_t>(operand_extra.size());
      operand = tensor(("operand" + std::to_string(i)).c_str(), dims, d.dtype, uid, op.layout);
      operand_extra.push_back(op.extra);
    }
    pointwise(operand, pointwise_mode(op.kind));
  }
  if (plan.requantize) {
    pointwise(tensor("y_scale", one, plan.y_scale_type, kYScaleUid, Layout::kLinear), fe::PointwiseMode_t::DIV);
    step_inputs.emplace_back(kYScaleUid, plan.y_scale);
  }
  current->set_output(true).set_data_type(fe_type(plan.output_type)).set_stride(strides_in(y_dims, d.y_layout)).set_uid(kYUid);
  return Status::ok();
}

}  // namespace

Result<std::shared_ptr<CudnnConvGraph>> CudnnConvGraph::build_quantized(const QuantizedConvPlan& plan, bool whole_step,
                                                                        cudnnContext* handle) {
  const ConvProblem& p = plan.packed;
  if (p.transposed || p.spatial_rank != 2 || p.x_layout != Layout::kNhwc || p.w_layout != Layout::kNhwc ||
      p.y_layout != Layout::kNhwc || (p.dtype != DataType::kInt8 && p.dtype != DataType::kFloat8E4M3))
    return make_error(StatusCode::kInternal, "cuDNN quantized convolution: needs a channels-last int8/fp8 2-D problem");
  if (whole_step && p.k != plan.problem.k)
    return unsupported("the whole step in cuDNN's graph needs unpadded output channels ({} padded to {})", plan.problem.k,
                       p.k);
  std::shared_ptr<CudnnConvGraph> out(new CudnnConvGraph());
  out->fused_ = whole_step;
  out->handle_ = handle;
  Status last = Status::ok();
  const bool int8 = p.dtype == DataType::kInt8;
  // The whole step: the fp32 result first (cuDNN's int8 scale-bias-activation form), then int32.
  std::vector<fe::DataType_t> results{int8 ? fe::DataType_t::INT32 : fe::DataType_t::FLOAT};
  if (whole_step && int8) results.insert(results.begin(), fe::DataType_t::FLOAT);
  for (const fe::DataType_t result : results) {
    auto impl = std::make_unique<Impl>();
    try {
      auto g = std::make_shared<fe::graph::Graph>();
      TO_RETURN_IF_ERROR(describe_quantized(plan, whole_step, result, *g, impl->step_inputs, impl->operand_extra, impl->bias));
      last = finalize(*g, handle, false);
      if (!last.is_ok()) continue;
      impl->graph = std::move(g);
      out->impl_ = std::move(impl);
      return out;
    } catch (const std::exception& e) {
      return make_error(StatusCode::kCudaError, "cuDNN quantized graph construction threw: {}", e.what());
    }
  }
  return last;
}

Result<std::vector<CudnnConvPlan>> CudnnConvGraph::plans(int limit, int64_t max_workspace) {
  std::vector<CudnnConvPlan> out;
  std::set<std::string> seen;
  std::string last_error = "no engine configuration passed the filters";
  try {
    const int64_t count = impl_->graph->get_execution_plan_count();
    for (int64_t i = 0; i < count && static_cast<int>(out.size()) < std::max(limit, 1); ++i) {
      CudnnConvPlan plan;
      plan.index = i;
      if (impl_->graph->get_plan_name_at_index(i, plan.engine).is_bad() || seen.count(plan.engine)) continue;
      fe::error_t built = impl_->graph->build_plan_at_index(i);
      if (built.is_bad()) {
        last_error = built.get_message();
        continue;
      }
      if (impl_->graph->get_workspace_size_plan_at_index(i, plan.workspace).is_bad() ||
          plan.workspace > std::min(max_workspace, kMaxConvWorkspace)) {
        last_error = fmt::format("engine {} needs {} bytes of workspace, more than the {} given", plan.engine,
                                 plan.workspace, std::min(max_workspace, kMaxConvWorkspace));
        continue;
      }
      seen.insert(plan.engine);
      out.push_back(std::move(plan));
    }
  } catch (const std::exception& e) {
    return make_error(StatusCode::kCudaError, "cuDNN plan building threw: {}", e.what());
  }
  if (out.empty()) return unsupported("no cuDNN engine runs this {} graph: {}", fused_ ? "fused" : "plain", last_error);
  return out;
}

Result<CudnnConvPlan> CudnnConvGraph::plan_for(const std::string& engine, int64_t max_workspace) {
  try {
    const int64_t count = impl_->graph->get_execution_plan_count();
    for (int64_t i = 0; i < count && !engine.empty(); ++i) {
      CudnnConvPlan plan;
      plan.index = i;
      if (impl_->graph->get_plan_name_at_index(i, plan.engine).is_bad() || plan.engine != engine) continue;
      if (impl_->graph->build_plan_at_index(i).is_bad()) break;
      if (impl_->graph->get_workspace_size_plan_at_index(i, plan.workspace).is_bad()) break;
      if (plan.workspace > max_workspace) break;
      return plan;
    }
  } catch (const std::exception& e) {
    return make_error(StatusCode::kCudaError, "cuDNN plan building threw: {}", e.what());
  }
  TO_ASSIGN_OR_RETURN(std::vector<CudnnConvPlan> first, plans(1, max_workspace));
  return first.front();
}

std::unordered_map<int64_t, void*> CudnnConvGraph::variant_pack() const {
  std::unordered_map<int64_t, void*> pack{{kXUid, nullptr}, {kWUid, nullptr}, {kYUid, nullptr}};
  if (impl_->bias) pack[kBiasUid] = nullptr;
  for (size_t i = 0; i < impl_->operand_extra.size(); ++i) pack[kOperandUid + static_cast<int64_t>(i)] = nullptr;
  for (const auto& [uid, input] : impl_->step_inputs) pack[uid] = nullptr;
  return pack;
}

Status CudnnConvGraph::execute(const CudnnConvPlan& plan, const CudnnConvOperands& operands, const StepBuffers& buffers,
                               std::unordered_map<int64_t, void*>& pack, cudnnContext* handle, cudaStream_t stream) const {
  if (plan.workspace > 0 && (operands.workspace == nullptr || operands.workspace_bytes < static_cast<size_t>(plan.workspace)))
    return make_error(StatusCode::kFailedPrecondition, "cuDNN engine {} needs {} bytes of workspace, {} given", plan.engine,
                      plan.workspace, operands.workspace_bytes);
  // cuDNN's variant pack takes non-const pointers; the graph only reads x and w.
  pack[kXUid] = const_cast<void*>(operands.x);
  pack[kWUid] = const_cast<void*>(operands.w);
  // The caller has run check_buffer_layouts on `buffers` for the problem and epilogue this graph
  // was built from: y, the bias and every epilogue operand are there.
  pack[kYUid] = operands.y ? operands.y : buffers.outputs[0].data;
  if (impl_->bias) pack[kBiasUid] = buffers.inputs[2].data;
  for (size_t i = 0; i < impl_->operand_extra.size(); ++i)
    pack[kOperandUid + static_cast<int64_t>(i)] = buffers.extra_inputs[static_cast<size_t>(impl_->operand_extra[i])].data;
  for (const auto& [uid, input] : impl_->step_inputs) {
    if (input >= buffers.inputs.size())
      return make_error(StatusCode::kFailedPrecondition, "cuDNN graph: step input {} is missing", input);
    pack[uid] = const_cast<void*>(buffers.inputs[input].data);
  }
  TO_CUDNN_RETURN_IF_ERROR(cudnnSetStream(handle, stream));
  try {
    return fe_status(impl_->graph->execute_plan_at_index(handle, pack, operands.workspace, plan.index), "execute");
  } catch (const std::exception& e) {
    return make_error(StatusCode::kCudaError, "cuDNN execute threw: {}", e.what());
  }
}

}  // namespace tensoracle::backends::cuda
