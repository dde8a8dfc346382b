// The cuBLASLt matmul family ("cublaslt.matmul") against the CPU reference backend.
//
// - MatmulPlanTest (no GPU needed): how steps map onto GEMM calls (batch folding, strided
//   broadcast, outer loops, alignment) and which epilogues and types are refused, with reasons.
// - CublasLtFamilyOnGpu: every candidate the family offers (every heuristic rank), run directly
//   on device buffers filled with NaN first, and a replayed choice, vs the CPU backend running the
//   same unfused network.
// - CublasLtNetworkOnGpu: the same networks through create_backend("cuda")->execute.
//
// fp32 bounds prove there is no TF32: TF32 rounds inputs to 10 mantissa bits, a relative L2
// error near 1e-4 on these mixed-sign inputs; fp32 accumulation stays near 1e-7 (growing like
// sqrt(K): sequential fp32 sums of 4096 terms reach ~1.2e-6, so the bound scales with sqrt(K/1024)).
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "backends/cuda/cublaslt/lt_gemm.h"
#include "backends/cuda/cublaslt/matmul_plan.h"
#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/device.h"
#include "gpu/gpu_testing.h"
#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/network.h"

namespace tensoracle::backends::cuda {
namespace {

enum class Act { kNone, kRelu, kGeluTanh, kGeluErf };

struct Case {
  std::string name;
  DataType type = DataType::kFloat32;
  std::vector<int64_t> a, b;  // stored shapes
  bool ta = false, tb = false;
  bool bias = false, residual = false;
  Act act = Act::kNone;
};

std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.name << "_" << data_type_name(c.type); }

// matmul -> [add bias [N]] -> [add residual (output shape)] -> [activation], output "y".
Network network_for(const Case& c) {
  Network net;
  Tensor a = net.add_input("a", c.type, Dims(c.a));
  Tensor b = net.add_input("b", c.type, Dims(c.b));
  Tensor y = net.matmul(a, b, MatMulAttributes().set_transpose_a(c.ta).set_transpose_b(c.tb).set_name("mm"));
  const Dims out = net.tensor(y).desc.shape;
  if (c.bias) y = net.add(y, net.add_input("bias", c.type, Dims({out[out.rank() - 1]})));
  if (c.residual) y = net.add(y, net.add_input("residual", c.type, out));
  if (c.act == Act::kRelu) y = net.relu(y);
  if (c.act == Act::kGeluTanh) y = net.activation(y, ActivationAttributes().set_kind(ActivationKind::kGeluTanh));
  if (c.act == Act::kGeluErf) y = net.activation(y, ActivationAttributes().set_kind(ActivationKind::kGeluErf));
  net.mark_output(y, "y");
  return net;
}

// Seeded, never zero, mixed signs, full fp32 mantissas (so TF32 rounding would show).
HostArray random_array(DataType type, const Dims& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> magnitude(0.1f, 1.0f);
  std::bernoulli_distribution negative(0.5);
  HostArray array = HostArray::zeros(type, shape).value();
  std::vector<float> values(static_cast<size_t>(array.element_count()));
  for (float& v : values) v = negative(rng) ? -magnitude(rng) : magnitude(rng);
  convert_elements(DataType::kFloat32, values.data(), type, array.data(), values.size());
  return array;
}

NamedArrays inputs_for(const Network& net) {
  NamedArrays inputs;
  uint32_t seed = 7;
  for (Tensor t : net.inputs()) {
    const TensorInfo& info = net.tensor(t);
    inputs[info.name] = random_array(info.desc.dtype, info.desc.shape, seed++);
  }
  return inputs;
}

int64_t inner_dim(const Case& c) {
  if (c.a.size() == 1) return c.a[0];
  return c.ta ? c.a[c.a.size() - 2] : c.a.back();
}

double rel_l2_bound(const Case& c) {
  switch (c.type) {
    case DataType::kFloat16: return 2e-3;   // fp16 output rounding (2^-11) plus the reference's per-layer roundings
    case DataType::kBFloat16: return 1.5e-2;  // the same with bf16's 2^-8
    default: return 1e-6 * std::max(1.0, std::sqrt(static_cast<double>(inner_dim(c)) / 1024.0));
  }
}

void expect_close(const Case& c, const ArrayView& candidate, const ArrayView& reference, const std::string& what) {
  auto cmp = compare_outputs(candidate, reference);
  ASSERT_TRUE(cmp.is_ok()) << what << ": " << cmp.status().to_string();
  EXPECT_EQ(cmp->candidate_non_finite.total(), 0) << what << ": unwritten (NaN-poisoned) or non-finite outputs";
  EXPECT_LE(cmp->rel_l2_error, rel_l2_bound(c)) << what << " (max abs error " << cmp->max_abs_error << ")";
  if (cmp->element_count > 0 && inner_dim(c) > 0) {
    EXPECT_GT(cmp->l2_reference, 0.0) << what << ": the reference is all zeros, the test proves nothing";
  }
}

// A step as the planner forms it: the matmul anchor plus the epilogue program of the layers
// after it (registers: 0 = product, then bias and residual, then one per instruction).
struct StepFixture {
  Network net;
  std::vector<TensorDesc> anchor_inputs;
  StepInstance step;

  static std::unique_ptr<StepFixture> make(const Case& c) { return std::unique_ptr<StepFixture>(new StepFixture(c)); }

 private:
  explicit StepFixture(const Case& c)
      : net(network_for(c)), anchor_inputs(descs(net)), step{anchor_of(net, anchor_inputs), {}, {}, {}, {}, {}, {}} {
    step.input_layouts = {Layout::kLinear, Layout::kLinear};
    step.output_layouts = {Layout::kLinear};
    const TensorDesc product = step.anchor.outputs[0];
    PointwiseProgram& p = step.program;
    p.inputs.push_back(product);
    const auto desc_of = [&](const char* name) { return net.tensor(net.find_tensor(name).value()).desc; };
    if (c.bias) p.inputs.push_back(desc_of("bias"));
    if (c.residual) p.inputs.push_back(desc_of("residual"));
    step.extra_input_layouts.assign(p.inputs.size() - 1, Layout::kLinear);
    int current = 0;
    const auto append = [&](PointwiseCode code, int operand) {
      PointwiseInstr in;
      in.code = code;
      in.a = current;
      in.b = operand;
      in.type = product.dtype;
      p.instrs.push_back(in);
      current = p.output_register();
    };
    int next_input = 1;
    if (c.bias) append(PointwiseCode::kAdd, next_input++);
    if (c.residual) append(PointwiseCode::kAdd, next_input++);
    if (c.act == Act::kRelu) append(PointwiseCode::kRelu, -1);
    if (c.act == Act::kGeluTanh) append(PointwiseCode::kGeluTanh, -1);
    if (c.act == Act::kGeluErf) append(PointwiseCode::kGeluErf, -1);
    step.outputs = {product};
  }

  static std::vector<TensorDesc> descs(const Network& net) {
    const Node& mm = net.node(net.find_node("mm").value());
    return {net.tensor(mm.inputs[0]).desc, net.tensor(mm.inputs[1]).desc};
  }
  static NodeInstance anchor_of(const Network& net, const std::vector<TensorDesc>& inputs) {
    const Node& mm = net.node(net.find_node("mm").value());
    return NodeInstance{mm, {&inputs[0], &inputs[1]}, {net.tensor(mm.outputs[0]).desc}};
  }
};

Result<MatmulPlan> plan_of(const Case& c) { return plan_matmul(StepFixture::make(c)->step); }

// ---------------------------------------------------------------- planning (host only)

TEST(MatmulPlanTest, BroadcastRhsWithUntransposedLhsFoldsTheBatchIntoM) {
  auto plan = plan_of({"fold", DataType::kFloat32, {3, 33, 40}, {40, 24}});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_EQ(plan->gemm.m, 3 * 33);
  EXPECT_EQ(plan->gemm.batch_count, 1);
  EXPECT_EQ(plan->calls.size(), 1u);
}

TEST(MatmulPlanTest, TransposedLhsCannotFoldAndBroadcastsRhsWithStrideZero) {
  auto plan = plan_of({"nofold", DataType::kFloat32, {3, 40, 33}, {40, 24}, true});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_EQ(plan->gemm.m, 33);
  EXPECT_EQ(plan->gemm.batch_count, 3);
  EXPECT_EQ(plan->gemm.batch_stride_a, 40 * 33);
  EXPECT_EQ(plan->gemm.batch_stride_b, 0);
  EXPECT_EQ(plan->gemm.batch_stride_d, 33 * 24);
}

TEST(MatmulPlanTest, BroadcastLhsIsAStrideZeroBatch) {
  auto plan = plan_of({"lhs_broadcast", DataType::kFloat32, {33, 40}, {3, 40, 24}});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_EQ(plan->gemm.batch_count, 3);
  EXPECT_EQ(plan->gemm.batch_stride_a, 0);
  EXPECT_EQ(plan->gemm.batch_stride_b, 40 * 24);
  EXPECT_EQ(plan->calls.size(), 1u);
}

TEST(MatmulPlanTest, CrossBroadcastBatchesLoopOverTheOuterDims) {
  // a [2,1,...] x b [3,...]: batch [2,3]; the inner dim has strides (0, 1), the outer (1, 0).
  auto plan = plan_of({"cross", DataType::kFloat32, {2, 1, 17, 40}, {3, 40, 24}});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_EQ(plan->gemm.batch_count, 3);
  EXPECT_EQ(plan->gemm.batch_stride_a, 0);
  ASSERT_EQ(plan->calls.size(), 2u);
  EXPECT_EQ(plan->calls[1].a, 17 * 40);
  EXPECT_EQ(plan->calls[1].b, 0);
  EXPECT_EQ(plan->calls[1].d, 3 * 17 * 24);
}

TEST(MatmulPlanTest, PartlyBroadcastBatchMergesOnlyWhatHasOneStride) {
  // a [2,3] batches, b [3]: the inner dim merges, the outer one (b broadcast) loops.
  auto plan = plan_of({"partial", DataType::kFloat32, {2, 3, 17, 40}, {3, 40, 24}});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_EQ(plan->gemm.batch_count, 3);
  EXPECT_EQ(plan->gemm.batch_stride_a, 17 * 40);
  EXPECT_EQ(plan->gemm.batch_stride_b, 40 * 24);
  ASSERT_EQ(plan->calls.size(), 2u);
  EXPECT_EQ(plan->calls[1].a, 3 * 17 * 40);
}

TEST(MatmulPlanTest, SameBatchOnBothSidesIsOneStridedBatch) {
  auto plan = plan_of({"batched", DataType::kFloat16, {4, 5, 17, 40}, {4, 5, 40, 24}});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_EQ(plan->gemm.batch_count, 20);
  EXPECT_EQ(plan->calls.size(), 1u);
}

TEST(MatmulPlanTest, VectorOperandsAreRowAndColumnMatrices) {
  auto row = plan_of({"vec_a", DataType::kFloat32, {40}, {40, 24}});
  ASSERT_TRUE(row.is_ok()) << row.status().to_string();
  EXPECT_EQ(row->gemm.m, 1);
  EXPECT_EQ(row->gemm.n, 24);
  auto column = plan_of({"vec_b", DataType::kFloat32, {3, 17, 40}, {40}, false, true});  // transpose_b ignored
  ASSERT_TRUE(column.is_ok()) << column.status().to_string();
  EXPECT_EQ(column->gemm.m, 3 * 17);
  EXPECT_EQ(column->gemm.n, 1);
  EXPECT_FALSE(column->gemm.transpose_b);
}

TEST(MatmulPlanTest, OddBatchOffsetsLowerThePointerAlignment) {
  // fp16 7x5 matrices: the second call starts 35 elements (70 bytes) in: 2-byte alignment.
  auto plan = plan_of({"odd", DataType::kFloat16, {2, 1, 7, 5}, {3, 5, 3}});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_EQ(plan->gemm.pointer_alignment, 2u);
  auto aligned = plan_of({"even", DataType::kFloat16, {2, 1, 8, 8}, {3, 8, 8}});
  ASSERT_TRUE(aligned.is_ok());
  EXPECT_EQ(aligned->gemm.pointer_alignment, 16u);
}

TEST(MatmulPlanTest, EmptyOutputsDoNothingAndZeroKFillsZeros) {
  auto empty = plan_of({"empty", DataType::kFloat32, {0, 40}, {40, 24}});
  ASSERT_TRUE(empty.is_ok());
  EXPECT_EQ(empty->kind, MatmulPlan::Kind::kEmpty);
  auto zero_k = plan_of({"zero_k", DataType::kFloat32, {33, 0}, {0, 24}});
  ASSERT_TRUE(zero_k.is_ok());
  EXPECT_EQ(zero_k->kind, MatmulPlan::Kind::kZeroFill);
  auto zero_k_bias = plan_of({"zero_k_bias", DataType::kFloat32, {33, 0}, {0, 24}, false, false, true});
  EXPECT_EQ(zero_k_bias.status().code(), StatusCode::kUnsupported);
}

TEST(MatmulPlanTest, EpilogueMapsBiasResidualAndActivation) {
  auto plan = plan_of({"all", DataType::kBFloat16, {3, 33, 40}, {40, 24}, false, false, true, true, Act::kGeluTanh});
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_TRUE(plan->gemm.use_bias);
  EXPECT_TRUE(plan->gemm.use_c);
  EXPECT_EQ(plan->gemm.activation, LtActivation::kGeluTanh);
  EXPECT_EQ(plan->bias_input, 0);
  EXPECT_EQ(plan->residual_input, 1);
}

TEST(MatmulPlanTest, BiasOperandOrderDoesNotMatter) {
  auto fixture = StepFixture::make({"swapped", DataType::kFloat32, {33, 40}, {40, 24}, false, false, true});
  std::swap(fixture->step.program.instrs[0].a, fixture->step.program.instrs[0].b);  // add(bias, product)
  auto plan = plan_matmul(fixture->step);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_TRUE(plan->gemm.use_bias);
}

void expect_refused(const Result<MatmulPlan>& plan, const std::string& words) {
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(plan.status().message().find(words), std::string::npos) << plan.status().message();
  EXPECT_NE(plan.status().message().find("layer 'mm'"), std::string::npos) << plan.status().message();
}

TEST(MatmulPlanTest, RefusesGeluErfBecauseCublasLtGeluIsTheTanhForm) {
  expect_refused(plan_of({"erf", DataType::kFloat16, {33, 40}, {40, 24}, false, false, true, false, Act::kGeluErf}),
                 "gelu_erf");
}

TEST(MatmulPlanTest, RefusesACastInTheEpilogue) {
  auto fixture = StepFixture::make({"cast", DataType::kFloat16, {33, 40}, {40, 24}, false, false, false, false, Act::kRelu});
  fixture->step.program.instrs[0].type = DataType::kFloat32;
  expect_refused(plan_matmul(fixture->step), "fuses no casts");
}

TEST(MatmulPlanTest, RefusesABiasAfterTheResidual) {
  auto fixture = StepFixture::make({"order", DataType::kFloat32, {33, 40}, {40, 24}, false, false, true, true});
  auto& p = fixture->step.program;
  std::swap(p.instrs[0].b, p.instrs[1].b);  // add residual first, then bias
  expect_refused(plan_matmul(fixture->step), "neither a bias");
}

TEST(MatmulPlanTest, RefusesAColumnVectorAdd) {
  auto fixture = StepFixture::make({"column", DataType::kFloat32, {33, 40}, {40, 24}, false, false, true});
  fixture->step.program.inputs[1].shape = Dims({33, 1});
  expect_refused(plan_matmul(fixture->step), "neither a bias");
}

TEST(MatmulPlanTest, RefusesFp64AndNonLinearLayouts) {
  auto fp64 = StepFixture::make({"fp64", DataType::kFloat32, {33, 40}, {40, 24}});
  for (TensorDesc& in : fp64->anchor_inputs) in.dtype = DataType::kFloat64;  // the graph itself has no fp64 matmul
  expect_refused(plan_matmul(fp64->step), "fp64");
  auto fixture = StepFixture::make({"nhwc", DataType::kFloat16, {1, 2, 8, 8}, {8, 8}});
  fixture->step.input_layouts[0] = Layout::kNhwc;
  expect_refused(plan_matmul(fixture->step), "layout nhwc");
  auto extra = StepFixture::make({"extra_nhwc", DataType::kFloat16, {1, 2, 8, 8}, {8, 8}, false, false, false, true});
  extra->step.extra_input_layouts[0] = Layout::kNhwc;
  expect_refused(plan_matmul(extra->step), "epilogue input layout nhwc");
}

// fp8's modes (fast accumulation, outer-vector scales, an alpha vector) exist only for fp8
// inputs: asked of another GEMM, LtGemm refuses them by name before any cuBLASLt call.
TEST(MatmulPlanTest, TheFp8ModesAreRefusedForOtherInputs) {
  const auto with = [](auto set) {
    LtGemmDesc d;
    d.input_type = d.output_type = DataType::kFloat16;
    d.m = d.n = d.k = 16;
    set(d);
    return d;
  };
  const LtGemmDesc modes[] = {with([](LtGemmDesc& d) { d.fast_accumulation = true; }),
                              with([](LtGemmDesc& d) { d.b_scale_per_column = d.a_scale_per_row = true; }),
                              with([](LtGemmDesc& d) { d.alpha_per_column = true; })};
  for (const LtGemmDesc& desc : modes) {
    auto gemm = LtGemm::create(nullptr, desc);
    ASSERT_FALSE(gemm.is_ok()) << desc.to_string();
    EXPECT_EQ(gemm.status().code(), StatusCode::kInvalidArgument) << gemm.status().to_string();
    EXPECT_NE(gemm.status().message().find("fp8 mode"), std::string::npos) << gemm.status().to_string();
  }
  EXPECT_NE(modes[2].to_string().find("alpha per column"), std::string::npos) << modes[2].to_string();
}

TEST(MatmulPlanTest, FamilyIsRegisteredForMatMul) {
  const TacticFamily* family = tactic_families().find("cublaslt.matmul");
  ASSERT_NE(family, nullptr);
  const auto& for_matmul = tactic_families().for_kind(OpKind::kMatMul);
  EXPECT_FALSE(for_matmul.empty());
  auto fixture = StepFixture::make({"plain", DataType::kBFloat16, {33, 40}, {40, 24}});
  DeviceInfo ampere;
  ampere.cc_major = 8;
  DeviceInfo turing;
  turing.cc_major = 7;
  turing.cc_minor = 5;
  EXPECT_TRUE(family->can_implement(fixture->step, ampere).is_ok());
  EXPECT_EQ(family->can_implement(fixture->step, turing).code(), StatusCode::kUnsupported);
  EXPECT_FALSE(family->replay(fixture->step, nlohmann::json{{"rank", -1}}).is_ok());
  EXPECT_FALSE(family->replay(fixture->step, nlohmann::json::object()).is_ok());
  auto replayed = family->replay(fixture->step, nlohmann::json{{"rank", 3}});
  ASSERT_TRUE(replayed.is_ok());
  EXPECT_EQ((*replayed)->name(), "cublaslt.matmul#3");
  EXPECT_EQ((*replayed)->choice(), (nlohmann::json{{"rank", 3}}));
}

// ---------------------------------------------------------------- the cases run on a GPU

std::vector<Case> gpu_cases() {
  std::vector<Case> cases;
  for (DataType type : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    const auto add = [&](Case c) {
      c.type = type;
      cases.push_back(c);
    };
    add({"nn", type, {65, 48}, {48, 80}});
    add({"tn", type, {48, 65}, {48, 80}, true});
    add({"nt", type, {65, 48}, {80, 48}, false, true});
    add({"tt", type, {48, 65}, {80, 48}, true, true});
    add({"bias", type, {65, 48}, {48, 80}, false, false, true});
    add({"bias_relu", type, {65, 48}, {80, 48}, false, true, true, false, Act::kRelu});
    add({"bias_gelu", type, {48, 65}, {48, 80}, true, false, true, false, Act::kGeluTanh});
    add({"residual", type, {65, 48}, {48, 80}, false, false, false, true});
    add({"residual_relu", type, {48, 65}, {80, 48}, true, true, false, true, Act::kRelu});
    add({"bias_residual_gelu", type, {65, 48}, {48, 80}, false, false, true, true, Act::kGeluTanh});
    add({"relu", type, {65, 48}, {48, 80}, false, false, false, false, Act::kRelu});
    add({"gelu", type, {65, 48}, {48, 80}, false, false, false, false, Act::kGeluTanh});
    add({"batch_fold", type, {3, 33, 40}, {40, 24}});
    add({"batch_fold_epilogue", type, {3, 33, 40}, {40, 24}, false, false, true, true, Act::kRelu});
    add({"batch_lhs_transposed", type, {3, 40, 33}, {24, 40}, true, true, true});
    add({"batch_lhs_broadcast", type, {33, 40}, {3, 40, 24}, false, false, true, true});
    add({"batch_both", type, {2, 3, 17, 40}, {2, 3, 40, 24}, false, false, false, true, Act::kGeluTanh});
    add({"batch_cross", type, {2, 1, 17, 40}, {3, 40, 24}, false, false, true, true});
    add({"batch_partial", type, {2, 3, 17, 40}, {3, 24, 40}, false, true});
    add({"batch_odd_offsets", type, {2, 1, 7, 5}, {3, 5, 3}, false, false, true});
    add({"vector_lhs", type, {40}, {40, 24}, false, false, true});
    add({"vector_rhs", type, {3, 17, 40}, {40}});
    add({"vector_both", type, {40}, {40}});
    add({"vector_lhs_batched_rhs", type, {40}, {3, 40, 24}, false, false, false, true});
    add({"k1", type, {33, 1}, {1, 24}, false, false, true, false, Act::kRelu});
    add({"k4096", type, {64, 4096}, {4096, 48}});
    add({"k4096_transposed", type, {4096, 64}, {48, 4096}, true, true, true, true, Act::kGeluTanh});
    add({"large", type, {512, 1024}, {1024, 768}, false, false, true});
    add({"empty", type, {0, 40}, {40, 24}});
    add({"k0", type, {33, 0}, {0, 24}});
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.name + "_" + std::string(data_type_name(info.param.type));
}

Result<NamedArrays> run_on(const char* backend, const Network& net, const NamedArrays& inputs) {
  TO_ASSIGN_OR_RETURN(auto b, create_backend(backend));
  return b->execute(net, views_of(inputs));
}

class CublasLtFamilyOnGpu : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    TO_SKIP_WITHOUT_GPU();
    cudaDeviceProp properties{};
    CUDA_OK(cudaGetDeviceProperties(&properties, 0));
    device_.cc_major = properties.major;
    device_.cc_minor = properties.minor;
    device_.sm_count = properties.multiProcessorCount;
    CUDA_OK(cudaStreamCreate(&stream_));
    ASSERT_EQ(cublasLtCreate(&handle_), CUBLAS_STATUS_SUCCESS);
  }
  void TearDown() override {
    if (handle_) cublasLtDestroy(handle_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  RunContext context() const { return RunContext{stream_, handle_, nullptr, &device_}; }

  DeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t handle_ = nullptr;
};

// Runs `tactic` on device copies of `inputs` (output poisoned with NaN) and returns the output.
void run_tactic(CudaTactic& tactic, const StepInstance& step, const NamedArrays& inputs, const RunContext& ctx,
                HostArray* result) {
  std::vector<DeviceBuffer> owned;
  const auto upload = [&](const HostArray& host) {
    auto buffer = DeviceBuffer::allocate(std::max<size_t>(host.byte_size(), 1), "a test tensor");
    EXPECT_TRUE(buffer.is_ok()) << buffer.status().to_string();
    owned.push_back(buffer.is_ok() ? std::move(buffer).value() : DeviceBuffer());
    EXPECT_EQ(cudaMemcpy(owned.back().data(), host.data(), host.byte_size(), cudaMemcpyHostToDevice), cudaSuccess);
    return DeviceTensor{host.dtype(), host.shape(), Layout::kLinear, owned.back().data()};
  };
  StepBuffers buffers;
  buffers.inputs = {upload(inputs.at("a")), upload(inputs.at("b"))};
  if (inputs.count("bias")) buffers.extra_inputs.push_back(upload(inputs.at("bias")));
  if (inputs.count("residual")) buffers.extra_inputs.push_back(upload(inputs.at("residual")));
  HostArray out = HostArray::zeros(step.outputs[0].dtype, step.outputs[0].shape).value();
  DeviceTensor d = upload(out);
  CUDA_OK(cudaMemset(d.data, 0xFF, std::max<size_t>(out.byte_size(), 1)));  // NaN in every float type
  buffers.outputs = {d};
  buffers.workspace_bytes = tactic.workspace_size(step);
  auto workspace = DeviceBuffer::allocate(buffers.workspace_bytes, "the workspace");
  ASSERT_TRUE(workspace.is_ok()) << workspace.status().to_string();
  buffers.workspace = workspace->data();
  const Status status = tactic.run(step, buffers, ctx);
  ASSERT_TRUE(status.is_ok()) << tactic.name() << ": " << status.to_string();
  CUDA_OK(cudaStreamSynchronize(ctx.stream));
  CUDA_OK(cudaMemcpy(out.data(), d.data, out.byte_size(), cudaMemcpyDeviceToHost));
  *result = std::move(out);
}

TEST_P(CublasLtFamilyOnGpu, EveryCandidateAndAReplayMatchTheCpuReference) {
  const Case& c = GetParam();
  if (c.type == DataType::kBFloat16 && device_.compute_capability() < 80) GTEST_SKIP() << "bf16 needs sm_80+";
  auto fixture = StepFixture::make(c);
  ASSERT_TRUE(fixture->net.status().is_ok()) << fixture->net.status().to_string();
  const NamedArrays inputs = inputs_for(fixture->net);
  auto reference = run_on("cpu", fixture->net, inputs);
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
  const ArrayView expected = reference->at("y").view();

  const TacticFamily* family = tactic_families().find("cublaslt.matmul");
  ASSERT_NE(family, nullptr);
  const Status can = family->can_implement(fixture->step, device_);
  ASSERT_TRUE(can.is_ok()) << can.to_string();
  auto candidates = family->candidates(fixture->step, context(), kLtMaxAlgorithms);
  ASSERT_TRUE(candidates.is_ok()) << candidates.status().to_string();
  ASSERT_FALSE(candidates->empty());
  for (auto& tactic : *candidates) {
    HostArray out;
    ASSERT_NO_FATAL_FAILURE(run_tactic(*tactic, fixture->step, inputs, context(), &out));
    expect_close(c, out.view(), expected, tactic->name());
  }
  auto replayed = family->replay(fixture->step, candidates->back()->choice());
  ASSERT_TRUE(replayed.is_ok()) << replayed.status().to_string();
  EXPECT_EQ((*replayed)->name(), candidates->back()->name());
  ASSERT_TRUE((*replayed)->initialize(fixture->step, context()).is_ok());
  HostArray out;
  ASSERT_NO_FATAL_FAILURE(run_tactic(**replayed, fixture->step, inputs, context(), &out));
  expect_close(c, out.view(), expected, "replayed " + (*replayed)->name());
}

INSTANTIATE_TEST_SUITE_P(Cases, CublasLtFamilyOnGpu, ::testing::ValuesIn(gpu_cases()), case_name);

class CublasLtNetworkOnGpu : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    TO_SKIP_WITHOUT_GPU();
  }
};

TEST_P(CublasLtNetworkOnGpu, CudaBackendMatchesCpuBackend) {
  const Case& c = GetParam();
  const Network net = network_for(c);
  ASSERT_TRUE(net.status().is_ok()) << net.status().to_string();
  const NamedArrays inputs = inputs_for(net);
  auto reference = run_on("cpu", net, inputs);
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
  auto candidate = run_on("cuda", net, inputs);
  ASSERT_TRUE(candidate.is_ok()) << candidate.status().to_string();
  expect_close(c, candidate->at("y").view(), reference->at("y").view(), "cuda backend");
}

INSTANTIATE_TEST_SUITE_P(Cases, CublasLtNetworkOnGpu, ::testing::ValuesIn(gpu_cases()), case_name);

}  // namespace
}  // namespace tensoracle::backends::cuda
