// The convolution families against the CPU reference.
//
// NetworkMatchesCpu runs each case as a whole network through create_backend("cuda") (the
// planner picks the fastest tactic and fuses what the families accept). EveryCandidateMatchesCpu
// drives the families directly on the case's step -- the fused chain included -- and checks
// every candidate of every family that accepts it (cudnn.* fused and plain, kernel.conv_direct),
// in linear and, for 2-D cases, nhwc layouts; outputs are poisoned (NaN) first, so an element
// left unwritten fails. For fp16/bf16 convolutions with few input channels it also requires a
// channel-padded cudnn.conv candidate (conv_pad_channels.h) to run and match in nhwc, and for
// every other case that none is offered.
//
// Tolerances: fp32 must agree to rel L2 1e-6 (no TF32 anywhere); fp16/bf16 to a few output
// roundings.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/cudnn/conv_problem.h"
#include "backends/cuda/device.h"
#include "backends/cuda/planned_step.h"
#include "backends/cuda/tactic_timer.h"
#include "backends/plan_network.h"
#include "gpu/gpu_testing.h"
#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/network.h"

namespace tensoracle {
namespace {

using backends::cuda::DeviceBuffer;
using backends::cuda::Layout;

// What follows the convolution in the case's network.
enum class Tail { kNone, kRelu, kResidualRelu, kChannelMulGelu, kSigmoid, kSilu, kGeluTanh, kTanh };

struct ConvCase {
  std::string name;
  bool deconv = false;
  std::vector<int64_t> x;       // input shape [N, C, spatial...]
  int64_t k = 0;                // output channels
  std::vector<int64_t> kernel;  // spatial kernel dims
  std::vector<int64_t> stride, dilation, pre, post, output_padding;
  int64_t groups = 1;
  bool bias = true;
  Tail tail = Tail::kNone;
};

std::vector<ConvCase> cases() {
  std::vector<ConvCase> c;
  c.push_back({"resnet_3x3_s1_p1_relu", false, {2, 16, 14, 14}, 32, {3, 3}, {}, {}, {1, 1}, {1, 1}, {}, 1, true, Tail::kRelu});
  c.push_back({"resnet_block_64", false, {2, 64, 28, 28}, 64, {3, 3}, {}, {}, {1, 1}, {1, 1}, {}, 1, true, Tail::kResidualRelu});
  c.push_back({"pointwise_1x1", false, {2, 32, 8, 8}, 16, {1, 1}, {}, {}, {}, {}, {}, 1, true, Tail::kNone});
  c.push_back({"stem_7x7_s2_p3", false, {1, 3, 32, 32}, 16, {7, 7}, {2, 2}, {}, {3, 3}, {3, 3}, {}, 1, true, Tail::kRelu});
  c.push_back({"grouped_g4", false, {2, 16, 10, 10}, 32, {3, 3}, {}, {}, {1, 1}, {1, 1}, {}, 4, true, Tail::kNone});
  c.push_back({"depthwise", false, {1, 8, 9, 9}, 8, {3, 3}, {}, {}, {1, 1}, {1, 1}, {}, 8, true, Tail::kRelu});
  c.push_back({"dilated_d2", false, {1, 8, 12, 12}, 8, {3, 3}, {}, {2, 2}, {2, 2}, {2, 2}, {}, 1, true, Tail::kNone});
  c.push_back({"asymmetric_padding_s2", false, {1, 4, 9, 9}, 8, {3, 3}, {2, 2}, {}, {0, 1}, {2, 0}, {}, 1, true, Tail::kNone});
  c.push_back({"conv1d_s2", false, {2, 8, 33}, 16, {5}, {2}, {}, {2}, {2}, {}, 1, true, Tail::kRelu});
  c.push_back({"conv3d", false, {1, 4, 6, 8, 8}, 8, {3, 3, 3}, {}, {}, {1, 1, 1}, {1, 1, 1}, {}, 1, true, Tail::kNone});
  c.push_back({"bias_residual_relu", false, {2, 16, 8, 8}, 16, {3, 3}, {}, {}, {1, 1}, {1, 1}, {}, 1, true, Tail::kResidualRelu});
  c.push_back({"channel_scale_gelu", false, {1, 8, 10, 10}, 16, {3, 3}, {}, {}, {1, 1}, {1, 1}, {}, 1, true, Tail::kChannelMulGelu});
  c.push_back({"no_bias_sigmoid", false, {1, 8, 10, 10}, 8, {3, 3}, {}, {}, {1, 1}, {1, 1}, {}, 1, false, Tail::kSigmoid});
  c.push_back({"silu", false, {1, 8, 10, 10}, 8, {3, 3}, {}, {}, {1, 1}, {1, 1}, {}, 1, true, Tail::kSilu});
  c.push_back({"gelu_tanh", false, {1, 8, 10, 10}, 8, {1, 1}, {}, {}, {}, {}, {}, 1, true, Tail::kGeluTanh});
  c.push_back({"tanh", false, {1, 8, 10, 10}, 8, {3, 3}, {}, {}, {1, 1}, {1, 1}, {}, 1, true, Tail::kTanh});
  // Few input channels (not a multiple of 8): cudnn.conv adds channel-padded candidates in fp16/bf16.
  c.push_back({"pad_stem_c3_k64", false, {2, 3, 40, 40}, 64, {7, 7}, {2, 2}, {}, {3, 3}, {3, 3}, {}, 1, true, Tail::kRelu});
  c.push_back({"pad_c5_3x3_residual", false, {2, 5, 12, 12}, 16, {3, 3}, {}, {}, {1, 1}, {1, 1}, {}, 1, true, Tail::kResidualRelu});
  c.push_back({"pad_c12_1x1", false, {2, 12, 9, 9}, 24, {1, 1}, {}, {}, {}, {}, {}, 1, true, Tail::kNone});
  c.push_back({"pad_c6_sigmoid", false, {1, 6, 10, 10}, 8, {3, 3}, {}, {}, {1, 1}, {1, 1}, {}, 1, false, Tail::kSigmoid});
  c.push_back({"deconv_s2_p1_op1", true, {1, 16, 8, 8}, 8, {3, 3}, {2, 2}, {}, {1, 1}, {1, 1}, {1, 1}, 1, true, Tail::kNone});
  c.push_back({"deconv_groups_dilation", true, {1, 8, 5, 5}, 4, {3, 3}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {}, 2, false, Tail::kNone});
  c.push_back({"deconv_4x4_s2_relu", true, {2, 8, 6, 6}, 8, {4, 4}, {2, 2}, {}, {1, 1}, {1, 1}, {}, 1, true, Tail::kRelu});
  return c;
}

std::string type_tag(DataType t) { return std::string(data_type_name(t)); }

// Uniform values in [-scale, scale] away from zero, rounded to `dtype`.
HostArray random_array(DataType dtype, const Dims& shape, uint64_t seed, double scale) {
  HostArray f32 = HostArray::zeros(DataType::kFloat32, shape).value();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.05f, 1.0f);
  float* p = f32.data_as<float>();
  for (int64_t i = 0; i < f32.element_count(); ++i) p[i] = static_cast<float>((rng() & 1 ? 1.0 : -1.0) * u(rng) * scale);
  HostArray out = HostArray::zeros(dtype, shape).value();
  convert_elements(DataType::kFloat32, f32.data(), dtype, out.data(), static_cast<size_t>(f32.element_count()));
  return out;
}

// The case's network, every tensor a named input ("x", "w", "b", "r", "s"), the output "y";
// returns the inputs with seeded values.
NamedArrays build(const ConvCase& c, DataType dtype, Network& net) {
  const size_t s = c.x.size() - 2;
  std::vector<int64_t> w{c.deconv ? c.x[1] : c.k, c.deconv ? c.k / c.groups : c.x[1] / c.groups};
  w.insert(w.end(), c.kernel.begin(), c.kernel.end());
  int64_t fan_in = w[1];
  for (int64_t d : c.kernel) fan_in *= d;
  NamedArrays inputs;
  inputs["x"] = random_array(dtype, Dims(c.x), 11, 1.0);
  inputs["w"] = random_array(dtype, Dims(w), 12, 1.0 / std::sqrt(static_cast<double>(fan_in)));
  Tensor x = net.add_input("x", dtype, Dims(c.x));
  Tensor wt = net.add_input("w", dtype, Dims(w));
  Tensor b;
  if (c.bias) {
    inputs["b"] = random_array(dtype, Dims{c.k}, 13, 0.5);
    b = net.add_input("b", dtype, Dims{c.k});
  }
  Tensor y;
  if (c.deconv) {
    y = net.deconvolution(x, wt, b, DeconvolutionAttributes().set_stride(c.stride).set_dilation(c.dilation)
                                        .set_pre_padding(c.pre).set_post_padding(c.post)
                                        .set_output_padding(c.output_padding).set_groups(c.groups).set_name("conv"));
  } else {
    y = net.convolution(x, wt, b, ConvolutionAttributes().set_stride(c.stride).set_dilation(c.dilation)
                                      .set_pre_padding(c.pre).set_post_padding(c.post).set_groups(c.groups).set_name("conv"));
  }
  const auto act = [&](ActivationKind kind) { return net.activation(y, ActivationAttributes().set_kind(kind)); };
  switch (c.tail) {
    case Tail::kNone: break;
    case Tail::kRelu: y = net.relu(y); break;
    case Tail::kSigmoid: y = act(ActivationKind::kSigmoid); break;
    case Tail::kSilu: y = act(ActivationKind::kSilu); break;
    case Tail::kGeluTanh: y = act(ActivationKind::kGeluTanh); break;
    case Tail::kTanh: y = act(ActivationKind::kTanh); break;
    case Tail::kResidualRelu: {
      const Dims shape = net.tensor(y).desc.shape;
      inputs["r"] = random_array(dtype, shape, 14, 1.0);
      y = net.relu(net.add(y, net.add_input("r", dtype, shape)));
      break;
    }
    case Tail::kChannelMulGelu: {
      std::vector<int64_t> shape(s + 1, 1);
      shape[0] = c.k;
      inputs["s"] = random_array(dtype, Dims(shape), 15, 2.0);
      y = net.gelu(net.mul(net.add_input("s", dtype, Dims(shape)), y));
      break;
    }
  }
  net.mark_output(y, "y");
  return inputs;
}

struct Limits {
  double atol, rtol, rel_l2;
};
Limits limits_for(DataType t) {
  if (t == DataType::kFloat16) return {4e-3, 4e-3, 2e-3};
  if (t == DataType::kBFloat16) return {3e-2, 3e-2, 1.5e-2};
  return {1e-5, 1e-5, 1e-6};
}

void expect_close(const HostArray& got, const HostArray& ref, const std::string& what) {
  ASSERT_EQ(got.shape(), ref.shape()) << what;
  const Limits lim = limits_for(ref.dtype());
  auto cmp = compare_outputs(got.view(), ref.view(), lim.atol, lim.rtol);
  ASSERT_TRUE(cmp.is_ok()) << what << ": " << cmp.status().to_string();
  EXPECT_GT(cmp->l2_reference, 0) << what << ": the reference is all zeros";
  EXPECT_EQ(cmp->candidate_non_finite.total(), 0) << what << ": non-finite outputs (unwritten elements?)";
  EXPECT_EQ(cmp->tolerance_check->outside_count, 0)
      << what << ": max abs error " << cmp->max_abs_error << ", rel L2 " << cmp->rel_l2_error;
  EXPECT_LE(cmp->rel_l2_error, lim.rel_l2) << what;
}

struct Param {
  ConvCase c;
  DataType dtype;
};
std::vector<Param> params() {
  std::vector<Param> out;
  for (const ConvCase& c : cases())
    for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) out.push_back({c, t});
  return out;
}
std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return info.param.c.name + "_" + type_tag(info.param.dtype);
}

class ConvGpu : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override { TO_SKIP_WITHOUT_GPU(); }
};

TEST_P(ConvGpu, NetworkMatchesCpu) {
  const auto& [c, dtype] = GetParam();
  Network net;
  const NamedArrays inputs = build(c, dtype, net);
  ASSERT_TRUE(net.status().is_ok()) << net.status().to_string();
  auto cuda = backends::create_backend("cuda");
  ASSERT_TRUE(cuda.is_ok()) << cuda.status().to_string();
  auto cpu = backends::create_backend("cpu").value();
  auto reference = cpu->execute(net, views_of(inputs));
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
  auto got = (*cuda)->execute(net, views_of(inputs));
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  expect_close(got->at("y"), reference->at("y"), c.name);
}

// [N, C, H, W] <-> [N, H, W, C] element moves.
HostArray permute(const HostArray& a, bool to_nhwc) {
  HostArray out = HostArray::zeros(a.dtype(), a.shape()).value();
  const int64_t n = a.shape()[0], c = a.shape()[1], h = a.shape()[2], w = a.shape()[3];
  const size_t es = data_type_size(a.dtype());
  const char* src = static_cast<const char*>(a.data());
  char* dst = static_cast<char*>(out.data());
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw) {
          const int64_t nchw = ((in * c + ic) * h + ih) * w + iw, nhwc = ((in * h + ih) * w + iw) * c + ic;
          std::memcpy(dst + (to_nhwc ? nhwc : nchw) * es, src + (to_nhwc ? nchw : nhwc) * es, es);
        }
  return out;
}

// The step of the case's network: the convolution with the layers after it fused; x, y and a
// residual in `layout`, the weight in `weight_layout` (nhwc: KRSC).
backends::cuda::PlannedStep conv_step(const Network& net, Layout layout, Layout weight_layout = Layout::kLinear) {
  backends::cuda::PlannedStep step;
  for (size_t i = 0; i < net.num_nodes(); ++i) {
    const Node& node = net.node(i);
    if (node.kind == OpKind::kConvolution || node.kind == OpKind::kDeconvolution) {
      step.anchor = i;
      step.inputs = node.inputs;
    } else if (node.kind != OpKind::kConstant) {
      step.fused.push_back(i);
      for (Tensor t : node.inputs)
        if (net.tensor(t).producer < 0) step.extra_inputs.push_back(t);
    }
  }
  step.outputs = {net.outputs().at(0)};
  step.input_layouts.assign(step.inputs.size(), Layout::kLinear);
  step.input_layouts[0] = layout;
  step.input_layouts[1] = weight_layout;
  step.output_layouts = {layout};
  // A residual takes the output's layout; broadcast operands stay linear.
  const Dims& out = net.tensor(step.outputs[0]).desc.shape;
  for (Tensor t : step.extra_inputs) step.extra_input_layouts.push_back(net.tensor(t).desc.shape == out ? layout : Layout::kLinear);
  return step;
}

// Whether cudnn.conv should offer channel-padded candidates for the case (conv_pad_channels.h):
// fp16/bf16 2-D convolutions of one group whose input channels are few and not a multiple of 8.
bool expects_padding(const ConvCase& c, DataType dtype) {
  const int64_t channels = c.x.at(1);
  return (dtype == DataType::kFloat16 || dtype == DataType::kBFloat16) && !c.deconv && c.x.size() == 4 && c.groups == 1 &&
         channels % 8 != 0 && channels <= 32;
}

bool is_padded(const backends::cuda::CudaTactic& tactic) { return tactic.choice().contains("pad_channels"); }

// One case's step on the GPU: its network and CPU result, the step in the given layouts, device
// buffers with the inputs uploaded, and a way to run a tactic into a poisoned output.
class StepRig {
 public:
  StepRig() = default;
  StepRig(const StepRig&) = delete;
  StepRig& operator=(const StepRig&) = delete;
  ~StepRig() {
    if (stream_) cudaStreamDestroy(stream_);
  }

  // ASSERTs inside: callers check HasFatalFailure() after.
  void prepare(const ConvCase& c, DataType dtype, Layout layout, Layout weight_layout) {
    namespace cu = backends::cuda;
    inputs_ = build(c, dtype, net_);
    ASSERT_TRUE(net_.status().is_ok()) << net_.status().to_string();
    auto reference = backends::create_backend("cpu").value()->execute(net_, views_of(inputs_));
    ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
    expected_ = HostArray::copy_of(reference->at("y").view()).value();

    std::map<std::string, Dims> shapes;
    for (const auto& [name, array] : inputs_) shapes[name] = array.shape();
    auto desc = backends::infer_tensor_descs(net_, shapes);
    ASSERT_TRUE(desc.is_ok()) << desc.status().to_string();
    desc_ = std::move(desc).value();  // the step points into it
    planned_ = conv_step(net_, layout, weight_layout);
    auto step = cu::instantiate(net_, planned_, desc_);
    ASSERT_TRUE(step.is_ok()) << step.status().to_string();
    step_.emplace(std::move(step).value());

    auto device = cu::current_device();
    ASSERT_TRUE(device.is_ok()) << device.status().to_string();
    device_ = *device;
    auto handles = cu::LibraryHandles::create();
    ASSERT_TRUE(handles.is_ok()) << handles.status().to_string();
    handles_ = std::move(handles).value();
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
    ctx_ = handles_->context(stream_, &device_);

    auto io = DeviceBuffer::allocate(cu::step_buffer_bytes(*step_), "conv test io");
    ASSERT_TRUE(io.is_ok()) << io.status().to_string();
    io_ = std::move(io).value();
    size_t used = 0;
    buffers_ = cu::step_buffers_in(*step_, io_.data(), &used);
    const auto upload = [&](Tensor t, const cu::DeviceTensor& dt) {
      HostArray host = HostArray::copy_of(inputs_.at(net_.tensor(t).name).view()).value();
      if (dt.layout == Layout::kNhwc) host = permute(host, true);
      ASSERT_EQ(cudaMemcpy(dt.data, host.data(), host.byte_size(), cudaMemcpyHostToDevice), cudaSuccess);
    };
    for (size_t i = 0; i < planned_.inputs.size(); ++i)
      if (planned_.inputs[i].valid()) upload(planned_.inputs[i], buffers_.inputs[i]);
    for (size_t i = 0; i < planned_.extra_inputs.size(); ++i) upload(planned_.extra_inputs[i], buffers_.extra_inputs[i]);
  }

  const backends::cuda::StepInstance& step() const { return *step_; }
  const backends::cuda::DeviceInfo& device() const { return device_; }
  const backends::cuda::RunContext& ctx() const { return ctx_; }
  const HostArray& expected() const { return expected_; }  // the CPU backend's y

  // Initializes and runs `tactic` into a poisoned output; its result in NCHW order.
  std::optional<HostArray> run(backends::cuda::CudaTactic& tactic, const std::string& what) {
    Status initialized = tactic.initialize(*step_, ctx_);
    EXPECT_TRUE(initialized.is_ok()) << what << ": " << initialized.to_string();
    auto workspace = DeviceBuffer::allocate(std::max<size_t>(tactic.workspace_size(*step_), 1), "conv test workspace");
    EXPECT_TRUE(workspace.is_ok()) << workspace.status().to_string();
    if (!initialized.is_ok() || !workspace.is_ok()) return std::nullopt;
    backends::cuda::StepBuffers buffers = buffers_;
    buffers.workspace = workspace->data();
    buffers.workspace_bytes = workspace->size();
    const backends::cuda::DeviceTensor& out = buffers.outputs.at(0);
    EXPECT_EQ(cudaMemset(out.data, 0xFF, out.byte_size()), cudaSuccess);  // NaN in every float type
    Status ran = tactic.run(*step_, buffers, ctx_);
    EXPECT_TRUE(ran.is_ok()) << what << ": " << ran.to_string();
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess) << what;
    HostArray got = HostArray::zeros(out.dtype, out.shape).value();
    EXPECT_EQ(cudaMemcpy(got.data(), out.data, got.byte_size(), cudaMemcpyDeviceToHost), cudaSuccess);
    if (!ran.is_ok()) return std::nullopt;
    if (out.layout == Layout::kNhwc) return permute(got, false);
    return got;
  }

 private:
  Network net_;
  NamedArrays inputs_;
  HostArray expected_;
  std::vector<TensorDesc> desc_;
  backends::cuda::PlannedStep planned_;
  std::optional<backends::cuda::StepInstance> step_;
  backends::cuda::DeviceInfo device_;
  std::unique_ptr<backends::cuda::LibraryHandles> handles_;
  cudaStream_t stream_ = nullptr;
  backends::cuda::RunContext ctx_;
  DeviceBuffer io_;
  backends::cuda::StepBuffers buffers_;
};

std::vector<double> as_doubles(const HostArray& a) {
  std::vector<double> v(static_cast<size_t>(a.element_count()));
  convert_elements(a.dtype(), a.data(), DataType::kFloat64, v.data(), v.size());
  return v;
}

// How many channel-padded cuDNN candidates a run offered, and how many of those passed.
struct PaddedCount {
  int offered = 0, checked = 0;
};

PaddedCount run_every_candidate(const ConvCase& c, DataType dtype, Layout layout, Layout weight_layout = Layout::kLinear) {
  namespace cu = backends::cuda;
  PaddedCount padded;
  StepRig rig;
  rig.prepare(c, dtype, layout, weight_layout);
  if (::testing::Test::HasFatalFailure()) return padded;
  const cu::StepInstance& step = rig.step();
  const std::string tag =
      c.name + " " + type_tag(dtype) + " " + cu::layout_name(layout) + " weight " + cu::layout_name(weight_layout) + " ";

  // The reference family's kernel matches the CPU; every library candidate the tactic timer's
  // reference check accepts matches the CPU too (the check rejects the others at build time).
  const cu::TacticFamily* reference_family = nullptr;
  for (const auto& family : cu::tactic_families().for_kind(step.anchor.node.kind))
    if (family->is_reference()) reference_family = family.get();
  EXPECT_NE(reference_family, nullptr);
  if (reference_family == nullptr) return padded;
  EXPECT_TRUE(reference_family->can_implement(step, rig.device()).is_ok()) << tag;
  auto reference_tactic = reference_family->candidates(step, rig.ctx(), 1);
  EXPECT_TRUE(reference_tactic.is_ok()) << reference_tactic.status().to_string();
  if (!reference_tactic.is_ok()) return padded;
  const std::optional<HostArray> gpu_reference = rig.run(*reference_tactic->front(), tag + reference_family->name());
  EXPECT_TRUE(gpu_reference.has_value());
  if (!gpu_reference) return padded;
  expect_close(*gpu_reference, rig.expected(), tag + reference_family->name());

  int checked = 0;
  for (const auto& family : cu::tactic_families().for_kind(step.anchor.node.kind)) {
    if (family.get() == reference_family) continue;
    if (Status s = family->can_implement(step, rig.device()); !s.is_ok()) {
      std::cout << "  " << family->name() << " refuses: " << s.message() << "\n";
      continue;
    }
    // 4: with channel padding, two unpadded and at least two padded candidates.
    auto candidates = family->candidates(step, rig.ctx(), 4);
    if (!candidates.is_ok()) {  // it accepted the step, so it must offer something; go on with the next family
      ADD_FAILURE() << tag << family->name() << " accepted the step but offers no candidate: " << candidates.status().to_string();
      continue;
    }
    for (auto& tactic : *candidates) {
      const std::string what = tag + tactic->name() + " " + tactic->choice().dump();
      padded.offered += is_padded(*tactic);
      const std::optional<HostArray> got = rig.run(*tactic, what);
      if (!got) continue;
      if (Status agrees = cu::agrees_with_reference(dtype, as_doubles(*got), as_doubles(*gpu_reference)); !agrees.is_ok()) {
        std::cout << "  " << what << " is rejected by the reference check: " << agrees.message() << "\n";
        continue;
      }
      expect_close(*got, rig.expected(), what);
      ++checked;
      padded.checked += is_padded(*tactic);
    }
  }
  EXPECT_GE(checked, 1) << "some cuDNN engine should take " << c.name;
  return padded;
}

TEST_P(ConvGpu, EveryCandidateMatchesCpu) {
  const auto& [c, dtype] = GetParam();
  const PaddedCount linear = run_every_candidate(c, dtype, Layout::kLinear);
  PaddedCount nhwc, krsc;
  if (c.x.size() == 4) nhwc = run_every_candidate(c, dtype, Layout::kNhwc);
  if (c.x.size() == 4 && !c.deconv) krsc = run_every_candidate(c, dtype, Layout::kNhwc, Layout::kNhwc);  // KRSC weights
  if (!expects_padding(c, dtype)) {
    EXPECT_EQ(linear.offered + nhwc.offered + krsc.offered, 0) << "channel padding offered for " << c.name;
    return;
  }
  // Channels-last data is what padding is for (ResNet's stem): there a padded engine must run
  // and match, with the weight as a network input (KCRS) and as a stored constant (KRSC).
  std::cout << "  padded candidates checked / offered: linear " << linear.checked << "/" << linear.offered << ", nhwc "
            << nhwc.checked << "/" << nhwc.offered << ", nhwc+KRSC " << krsc.checked << "/" << krsc.offered << "\n";
  EXPECT_GE(nhwc.checked, 1) << c.name << ": no padded candidate offered and checked in nhwc";
  EXPECT_GE(krsc.checked, 1) << c.name << ": no padded candidate offered and checked in nhwc with KRSC weights";
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvGpu, ::testing::ValuesIn(params()), param_name);

// Replaying a recorded choice on a fresh tactic gives the same engine and the same result.
TEST(ConvGpuReplay, RecordedChoiceReplays) {
  TO_SKIP_WITHOUT_GPU();
  namespace cu = backends::cuda;
  const ConvCase c = cases().at(0);
  Network net;
  const NamedArrays inputs = build(c, DataType::kFloat16, net);
  std::map<std::string, Dims> shapes;
  for (const auto& [name, array] : inputs) shapes[name] = array.shape();
  auto desc = backends::infer_tensor_descs(net, shapes);
  ASSERT_TRUE(desc.is_ok());
  auto step = cu::instantiate(net, conv_step(net, Layout::kLinear), *desc);
  ASSERT_TRUE(step.is_ok()) << step.status().to_string();
  auto device = cu::current_device();
  auto handles = cu::LibraryHandles::create();
  ASSERT_TRUE(device.is_ok() && handles.is_ok());
  const cu::RunContext ctx = (*handles)->context(nullptr, &*device);
  const cu::TacticFamily* family = cu::tactic_families().find("cudnn.conv");
  ASSERT_NE(family, nullptr);
  auto candidates = family->candidates(*step, ctx, 2);
  ASSERT_TRUE(candidates.is_ok()) << candidates.status().to_string();
  const auto& recorded = candidates->back();
  auto replayed = family->replay(*step, recorded->choice());
  ASSERT_TRUE(replayed.is_ok()) << replayed.status().to_string();
  ASSERT_TRUE((*replayed)->initialize(*step, ctx).is_ok());
  EXPECT_EQ((*replayed)->name(), recorded->name());
  EXPECT_EQ((*replayed)->workspace_size(*step), recorded->workspace_size(*step));
  // Bad choices are refused with the reason.
  EXPECT_FALSE(family->replay(*step, nlohmann::json{{"plan", -1}}).is_ok());
}

// A recorded channel-padded choice (ResNet's stem in fp16, channels-last, KRSC weights) replays
// to a padded tactic of the same engine that computes the same output, bit for bit; choices
// without "pad_channels" replay unpadded, and a padding other than 8 is refused.
TEST(ConvGpuReplay, RecordedPaddedChoiceReplaysPadded) {
  TO_SKIP_WITHOUT_GPU();
  namespace cu = backends::cuda;
  const ConvCase c{"stem", false, {2, 3, 24, 24}, 64, {7, 7}, {2, 2}, {}, {3, 3}, {3, 3}, {}, 1, true, Tail::kRelu};
  StepRig rig;
  rig.prepare(c, DataType::kFloat16, Layout::kNhwc, Layout::kNhwc);
  ASSERT_FALSE(HasFatalFailure());
  const cu::TacticFamily* family = cu::tactic_families().find("cudnn.conv");
  ASSERT_NE(family, nullptr);
  auto candidates = family->candidates(rig.step(), rig.ctx(), 8);
  ASSERT_TRUE(candidates.is_ok()) << candidates.status().to_string();
  cu::CudaTactic* recorded = nullptr;
  for (const auto& tactic : *candidates)
    if (is_padded(*tactic) && recorded == nullptr) recorded = tactic.get();
  ASSERT_NE(recorded, nullptr) << "no padded candidate for a 3-channel fp16 convolution";
  const nlohmann::json choice = recorded->choice();
  EXPECT_EQ(choice.at("pad_channels"), 8);
  EXPECT_NE(recorded->name().find("+pad8"), std::string::npos) << recorded->name();

  auto replayed = family->replay(rig.step(), choice);
  ASSERT_TRUE(replayed.is_ok()) << replayed.status().to_string();
  const std::optional<HostArray> got = rig.run(**replayed, "replayed " + choice.dump());
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ((*replayed)->name(), recorded->name());
  EXPECT_EQ((*replayed)->choice(), choice);
  EXPECT_EQ((*replayed)->workspace_size(rig.step()), recorded->workspace_size(rig.step()));
  expect_close(*got, rig.expected(), "replayed " + choice.dump());
  const std::optional<HostArray> again = rig.run(*recorded, "recorded " + choice.dump());
  ASSERT_TRUE(again.has_value());
  ASSERT_EQ(got->byte_size(), again->byte_size());
  EXPECT_EQ(std::memcmp(got->data(), again->data(), got->byte_size()), 0) << "the replayed engine computes differently";

  nlohmann::json unpadded = choice;
  unpadded.erase("pad_channels");
  auto old_style = family->replay(rig.step(), unpadded);
  ASSERT_TRUE(old_style.is_ok()) << old_style.status().to_string();
  EXPECT_FALSE(is_padded(**old_style));
  nlohmann::json bad = choice;
  bad["pad_channels"] = 4;
  EXPECT_FALSE(family->replay(rig.step(), bad).is_ok());
}

// Which convolutions get channel-padded candidates, and the problem their graph is built for
// (host only: no GPU needed).
TEST(ConvPadChannels, PaddedProblemsAndWhoGetsThem) {
  namespace cu = backends::cuda;
  const auto problem = [](const ConvCase& c, DataType dtype, Layout layout) -> Result<cu::ConvProblem> {
    Network net;
    const NamedArrays inputs = build(c, dtype, net);
    std::map<std::string, Dims> shapes;
    for (const auto& [name, array] : inputs) shapes[name] = array.shape();
    TO_ASSIGN_OR_RETURN(const std::vector<TensorDesc> desc, backends::infer_tensor_descs(net, shapes));
    TO_ASSIGN_OR_RETURN(const cu::StepInstance step, cu::instantiate(net, conv_step(net, layout), desc));
    return cu::conv_problem(step);
  };
  const ConvCase stem{"stem", false, {2, 3, 24, 24}, 64, {7, 7}, {2, 2}, {}, {3, 3}, {3, 3}, {}, 1, true, Tail::kRelu};
  for (const Layout layout : {Layout::kLinear, Layout::kNhwc}) {
    auto p = problem(stem, DataType::kFloat16, layout);
    ASSERT_TRUE(p.is_ok()) << p.status().to_string();
    ASSERT_TRUE(cu::pad_channels_applicable(*p).is_ok());
    const cu::ConvProblem padded = cu::with_padded_channels(*p, cu::kPadChannelsTo);
    EXPECT_EQ(padded.c, 8);
    EXPECT_EQ(padded.x_shape, (Dims{2, 8, 24, 24}));
    EXPECT_EQ(padded.w_shape, (Dims{64, 8, 7, 7}));
    EXPECT_EQ(padded.x_layout, Layout::kNhwc);
    EXPECT_EQ(padded.w_layout, Layout::kNhwc);
    EXPECT_EQ(padded.y_shape, p->y_shape);  // the output, its layout and the geometry stay
    EXPECT_EQ(padded.y_layout, p->y_layout);
    EXPECT_EQ(padded.out, p->out);
    EXPECT_EQ(padded.kernel, p->kernel);
    EXPECT_EQ(padded.pre, p->pre);
  }
  ConvCase c12 = stem;
  c12.x[1] = 12;
  auto p12 = problem(c12, DataType::kBFloat16, Layout::kNhwc);
  ASSERT_TRUE(p12.is_ok()) << p12.status().to_string();
  EXPECT_TRUE(cu::pad_channels_applicable(*p12).is_ok());
  EXPECT_EQ(cu::with_padded_channels(*p12, cu::kPadChannelsTo).c, 16);

  // Refused, each with a reason: fp32, channels already a multiple of 8 or above 32, groups,
  // deconvolutions, 1-D and 3-D convolutions; the rule is expects_padding's for every test case.
  const auto refused = [&](const ConvCase& c, DataType dtype) {
    auto p = problem(c, dtype, Layout::kLinear);
    EXPECT_TRUE(p.is_ok()) << c.name << ": " << p.status().to_string();
    if (!p.is_ok()) return;
    const Status s = cu::pad_channels_applicable(*p);
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << c.name << " " << type_tag(dtype);
    EXPECT_FALSE(s.message().empty());
  };
  refused(stem, DataType::kFloat32);
  for (const int64_t channels : {8, 16, 36}) {
    ConvCase c = stem;
    c.x[1] = channels;
    refused(c, DataType::kFloat16);
  }
  for (const ConvCase& c : cases())
    for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
      auto p = problem(c, dtype, Layout::kLinear);
      ASSERT_TRUE(p.is_ok()) << c.name << ": " << p.status().to_string();
      EXPECT_EQ(cu::pad_channels_applicable(*p).is_ok(), expects_padding(c, dtype)) << c.name << " " << type_tag(dtype);
    }
}

// A library engine that writes a wrong result (here: zeros) loses to the reference kernel even as
// the first candidate offered, and even as the only one (optimization level 0).
TEST(ConvGpuTiming, AWrongFirstCandidateIsRejectedAgainstTheReferenceKernel) {
  TO_SKIP_WITHOUT_GPU();
  namespace cu = backends::cuda;
  class Zeros final : public cu::CudaTactic {
   public:
    std::string name() const override { return "test.zeros"; }
    Status run(const cu::StepInstance&, const cu::StepBuffers& b, const cu::RunContext& ctx) override {
      return cudaMemsetAsync(b.outputs[0].data, 0, b.outputs[0].byte_size(), ctx.stream) == cudaSuccess
                 ? Status::ok()
                 : Status(StatusCode::kCudaError, "memset failed");
    }
  };
  class ZerosFamily final : public cu::TacticFamily {
   public:
    std::string name() const override { return "test.zeros"; }
    Status can_implement(const cu::StepInstance&, const cu::DeviceInfo&) const override { return Status::ok(); }
    Result<std::vector<std::unique_ptr<cu::CudaTactic>>> candidates(const cu::StepInstance&, const cu::RunContext&,
                                                                    int) const override {
      std::vector<std::unique_ptr<cu::CudaTactic>> out;
      out.push_back(std::make_unique<Zeros>());
      return out;
    }
    Result<std::unique_ptr<cu::CudaTactic>> replay(const cu::StepInstance&, const nlohmann::json&) const override {
      return std::unique_ptr<cu::CudaTactic>(std::make_unique<Zeros>());
    }
  };

  Network net;
  build(cases().at(1), DataType::kFloat16, net);
  std::map<std::string, Dims> shapes;
  for (size_t i = 0; i < net.inputs().size(); ++i) shapes[net.tensor(net.inputs()[i]).name] = net.tensor(net.inputs()[i]).desc.shape;
  auto desc = backends::infer_tensor_descs(net, shapes);
  ASSERT_TRUE(desc.is_ok()) << desc.status().to_string();
  auto step = cu::instantiate(net, conv_step(net, Layout::kNhwc), *desc);
  ASSERT_TRUE(step.is_ok()) << step.status().to_string();
  auto device = cu::current_device();
  ASSERT_TRUE(device.is_ok()) << device.status().to_string();
  const ZerosFamily zeros;
  const cu::TacticFamily* direct = nullptr;
  for (const auto& family : cu::tactic_families().for_kind(OpKind::kConvolution))
    if (family->is_reference()) direct = family.get();
  ASSERT_NE(direct, nullptr);

  for (const int limit : {1, 4}) {
    SCOPED_TRACE(limit);
    cu::TacticTimer timer(3, uint64_t{1} << 30);
    ASSERT_TRUE(timer.start(*device).is_ok());
    std::vector<std::string> log;
    auto chosen = timer.choose(*step, {&zeros, direct}, limit, {}, "conv", log);
    ASSERT_TRUE(chosen.is_ok()) << chosen.status().to_string();
    EXPECT_EQ(chosen->family, direct->name());
    bool rejected = false;
    for (const std::string& line : log) rejected = rejected || line.find("skipped tactic test.zeros") != std::string::npos;
    EXPECT_TRUE(rejected) << ::testing::PrintToString(log);
  }
}

}  // namespace
}  // namespace tensoracle
