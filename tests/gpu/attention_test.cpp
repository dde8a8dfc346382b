// Attention on the GPU: BERT-like shapes through create_backend("cuda") against the CPU
// reference, and the two attention families ("cudnn.sdpa", "kernel.attention") driven directly
// through their tactic interface: both must agree with each other and with the reference, write
// every output element, and replay their recorded choices exactly.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "backends/cuda/cuda_tactic.h"
#include "gpu/gpu_testing.h"
#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/network.h"

namespace tensoracle {
namespace {

using backends::cuda::CudaTactic;
using backends::cuda::DeviceInfo;
using backends::cuda::DeviceTensor;
using backends::cuda::Layout;
using backends::cuda::RunContext;
using backends::cuda::StepBuffers;
using backends::cuda::StepInstance;
using backends::cuda::TacticFamily;

// ---- inputs ----

// Seeded values uniform in [low, high] rounded to `dtype` (never all zero).
HostArray random_array(DataType dtype, const Dims& shape, uint32_t seed, float low, float high) {
  HostArray array = HostArray::zeros(dtype, shape).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<float> values(static_cast<size_t>(array.element_count()));
  for (float& v : values) v = uniform(rng);
  convert_elements(DataType::kFloat32, values.data(), dtype, array.data(), values.size());
  return array;
}

// BERT's padding mask [b, 1, 1, lk]: 0 for the first valid_b keys of batch b, -10000 after.
HostArray padding_mask(DataType dtype, int64_t batch, int64_t lk, uint32_t seed) {
  HostArray array = HostArray::zeros(dtype, {batch, 1, 1, lk}).value();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> valid(lk / 4, lk);
  std::vector<float> values(static_cast<size_t>(batch * lk));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t n = valid(rng);
    for (int64_t j = 0; j < lk; ++j) values[b * lk + j] = j < n ? 0.0f : -10000.0f;
  }
  convert_elements(DataType::kFloat32, values.data(), dtype, array.data(), values.size());
  return array;
}

// A random bool mask that keeps key 0 of every row (no fully masked row) unless told otherwise.
HostArray bool_mask(const Dims& shape, uint32_t seed, bool keep_first_key = true) {
  HostArray array = HostArray::zeros(DataType::kBool, shape).value();
  std::mt19937 rng(seed);
  std::bernoulli_distribution keep(0.6);
  auto* bytes = array.data_as<uint8_t>();
  const int64_t lk = shape[shape.rank() - 1];
  for (int64_t i = 0; i < array.element_count(); ++i) bytes[i] = (keep_first_key && i % lk == 0) || keep(rng) ? 1 : 0;
  return array;
}

// ---- one attention network ----

struct AttentionCase {
  AttentionCase(DataType type, Dims q_shape, Dims k_shape, Dims v_shape)
      : dtype(type), q(std::move(q_shape)), k(std::move(k_shape)), v(std::move(v_shape)) {}
  // Self-attention: q, k and v of one shape.
  static AttentionCase self(DataType type, const Dims& shape) { return AttentionCase(type, shape, shape, shape); }
  AttentionCase& with_mask(Dims shape, DataType type) {
    mask = std::move(shape);
    mask_dtype = type;
    return *this;
  }
  AttentionCase& with_causal() {
    causal = true;
    return *this;
  }
  AttentionCase& with_scale(double value) {
    scale = value;
    return *this;
  }

  DataType dtype;
  Dims q, k, v;
  std::optional<Dims> mask;
  DataType mask_dtype = DataType::kFloat16;
  bool causal = false;
  std::optional<double> scale;
};

struct Built {
  Network net;
  NamedArrays inputs;
};

Built build(const AttentionCase& c, uint32_t seed) {
  Built b;
  Network& n = b.net;
  Tensor q = n.add_input("q", c.dtype, c.q), k = n.add_input("k", c.dtype, c.k), v = n.add_input("v", c.dtype, c.v);
  Tensor mask;
  // q and k span [-3, 3] so the softmax is peaked, not nearly uniform.
  b.inputs["q"] = random_array(c.dtype, c.q, seed, -3.0f, 3.0f);
  b.inputs["k"] = random_array(c.dtype, c.k, seed + 1, -3.0f, 3.0f);
  b.inputs["v"] = random_array(c.dtype, c.v, seed + 2, -1.0f, 1.0f);
  if (c.mask) {
    mask = n.add_input("mask", c.mask_dtype, *c.mask);
    if (c.mask_dtype == DataType::kBool) {
      b.inputs["mask"] = bool_mask(*c.mask, seed + 3);
    } else if (c.mask->rank() == 4 && (*c.mask)[1] == 1 && (*c.mask)[2] == 1) {
      b.inputs["mask"] = padding_mask(c.mask_dtype, (*c.mask)[0], (*c.mask)[3], seed + 3);
    } else {
      b.inputs["mask"] = random_array(c.mask_dtype, *c.mask, seed + 3, -2.0f, 2.0f);
    }
  }
  AttentionAttributes attrs;
  attrs.set_causal(c.causal).set_name("attention");
  if (c.scale) attrs.set_scale(*c.scale);
  n.mark_output(n.attention(q, k, v, mask, attrs), "y");
  EXPECT_TRUE(n.status().is_ok()) << n.status().message();
  return b;
}

HostArray run_backend(const char* name, const Built& b) {
  auto backend = backends::create_backend(name);
  EXPECT_TRUE(backend.is_ok()) << backend.status().message();
  if (!backend.is_ok()) return {};
  auto outputs = (*backend)->execute(b.net, views_of(b.inputs));
  EXPECT_TRUE(outputs.is_ok()) << name << ": " << outputs.status().message();
  if (!outputs.is_ok()) return {};
  return std::move(outputs->at("y"));
}

// rel L2 vs the CPU reference at most `max_rel_l2`, the same non-finite positions.
void expect_close(const HostArray& candidate, const HostArray& reference, double max_rel_l2, const std::string& what) {
  auto cmp = compare_outputs(candidate.view(), reference.view());
  ASSERT_TRUE(cmp.is_ok()) << what << ": " << cmp.status().message();
  EXPECT_LE(cmp->rel_l2_error, max_rel_l2) << what << " (max abs error " << cmp->max_abs_error << ")";
  EXPECT_EQ(cmp->candidate_non_finite.nan, cmp->reference_non_finite.nan) << what;
  EXPECT_EQ(cmp->candidate_non_finite.total(), cmp->reference_non_finite.total()) << what;
  EXPECT_GT(cmp->l2_reference, 0.0) << what << ": an all-zero reference proves nothing";
}

// Relative L2 bounds vs the fp64 reference: fp32 proves no TF32; fp16/bf16 allow the output's
// rounding plus the weights P stored in the input type before P·V (as flash attention does).
double bound(DataType t) { return t == DataType::kFloat32 ? 1e-6 : t == DataType::kFloat16 ? 2e-3 : 1e-2; }

class AttentionOnGpu : public ::testing::Test {
 protected:
  void SetUp() override { TO_SKIP_WITHOUT_GPU(); }

  void check_backend(const AttentionCase& c, uint32_t seed, double max_rel_l2 = -1) {
    const Built b = build(c, seed);
    const HostArray reference = run_backend("cpu", b);
    const HostArray cuda = run_backend("cuda", b);
    ASSERT_GT(cuda.element_count(), 0);
    expect_close(cuda, reference, max_rel_l2 > 0 ? max_rel_l2 : bound(c.dtype), "cuda vs cpu");
  }
};

const Dims kBert1{1, 12, 128, 64};
const Dims kBert32{32, 12, 128, 64};

TEST_F(AttentionOnGpu, BertBatch1Fp16) { check_backend(AttentionCase::self(DataType::kFloat16, kBert1), 1); }

TEST_F(AttentionOnGpu, BertBatch1Bf16) { check_backend(AttentionCase::self(DataType::kBFloat16, kBert1), 2); }

TEST_F(AttentionOnGpu, BertBatch32Fp16PaddingMask) {
  check_backend(AttentionCase::self(DataType::kFloat16, kBert32).with_mask(Dims{32, 1, 1, 128}, DataType::kFloat16), 3);
}

TEST_F(AttentionOnGpu, BertBatch32Bf16PaddingMask) {
  check_backend(AttentionCase::self(DataType::kBFloat16, kBert32).with_mask(Dims{32, 1, 1, 128}, DataType::kBFloat16), 4);
}

TEST_F(AttentionOnGpu, CausalFp16) {
  const AttentionCase c = AttentionCase::self(DataType::kFloat16, Dims{2, 12, 128, 64}).with_causal();
  check_backend(c, 5);
}

TEST_F(AttentionOnGpu, CausalBf16LongerKeysThanQueries) {
  const AttentionCase c =
      AttentionCase(DataType::kBFloat16, Dims{2, 8, 96, 64}, Dims{2, 8, 160, 64}, Dims{2, 8, 160, 64}).with_causal();
  check_backend(c, 6);
}

TEST_F(AttentionOnGpu, BoolMaskFp16) {
  const AttentionCase c =
      AttentionCase::self(DataType::kFloat16, Dims{2, 12, 128, 64}).with_mask(Dims{2, 1, 128, 128}, DataType::kBool);
  check_backend(c, 7);
}

TEST_F(AttentionOnGpu, FullAdditiveMaskFp16) {
  const AttentionCase c = AttentionCase(DataType::kFloat16, Dims{2, 4, 64, 64}, Dims{2, 4, 80, 64}, Dims{2, 4, 80, 32})
                              .with_mask(Dims{2, 4, 64, 80}, DataType::kFloat16);
  check_backend(c, 8);
}

// Masks cuDNN cannot read through strides: broadcast along the keys, and batch dims that do not
// collapse into one stride (cudnn.sdpa copies them into a dense bias first).
TEST_F(AttentionOnGpu, MaskBroadcastAlongKeysFp16) {
  check_backend(AttentionCase::self(DataType::kFloat16, Dims{2, 4, 64, 64}).with_mask(Dims{2, 1, 64, 1}, DataType::kFloat16), 17);
}

TEST_F(AttentionOnGpu, Rank5MaskOverSomeBatchDimsBf16) {
  check_backend(AttentionCase::self(DataType::kBFloat16, Dims{2, 3, 4, 32, 64})
                    .with_mask(Dims{2, 1, 4, 32, 32}, DataType::kBFloat16),
                18);
}

TEST_F(AttentionOnGpu, MultiQueryFp16) {  // one k/v head shared by every q head
  check_backend(AttentionCase(DataType::kFloat16, Dims{2, 8, 64, 64}, Dims{2, 1, 64, 64}, Dims{2, 1, 64, 64}), 9);
}

TEST_F(AttentionOnGpu, Fp32BertBatch32PaddingMask) {
  check_backend(AttentionCase::self(DataType::kFloat32, kBert32).with_mask(Dims{32, 1, 1, 128}, DataType::kFloat32), 10);
}

TEST_F(AttentionOnGpu, Fp32CausalBoolMaskOddShapes) {
  const AttentionCase c = AttentionCase(DataType::kFloat32, Dims{2, 3, 33, 40}, Dims{2, 3, 47, 40}, Dims{2, 3, 47, 24})
      .with_mask(Dims{3, 33, 47}, DataType::kBool).with_causal().with_scale(0.3);
  check_backend(c, 11);
}

TEST_F(AttentionOnGpu, Fp32BroadcastBatchDims) {  // k broadcast over heads, q over the batch: an outer loop of GEMMs
  check_backend(AttentionCase(DataType::kFloat32, Dims{1, 3, 17, 8}, Dims{2, 1, 19, 8}, Dims{2, 3, 19, 5}), 12);
  check_backend(AttentionCase(DataType::kFloat32, Dims{2, 3, 17, 8}, Dims{2, 1, 19, 8}, Dims{19, 5}), 13);
}

TEST_F(AttentionOnGpu, Fp32HeadDimNotMultipleOf8AndRank2) {
  check_backend(AttentionCase(DataType::kFloat32, Dims{37, 13}, Dims{29, 13}, Dims{29, 7}), 14);
}

TEST_F(AttentionOnGpu, Fp32LongSequenceRunsInChunks) {  // S alone is 512 MiB: more than one pass
  // 2048-key rows: fp32 sums 16x longer than BERT's, measured 1.01e-6 on the H200 (TF32 would
  // give ~1e-3), so this case allows 2e-6.
  check_backend(AttentionCase::self(DataType::kFloat32, Dims{2, 16, 2048, 32}), 15, 2e-6);
}

TEST_F(AttentionOnGpu, FullyMaskedRowIsNanLikeTheReference) {
  for (DataType t : {DataType::kFloat32, DataType::kFloat16}) {
    const AttentionCase c = AttentionCase(t, Dims{1, 2, 6, 8}, Dims{1, 2, 5, 8}, Dims{1, 2, 5, 8})
        .with_mask(Dims{6, 5}, DataType::kBool);
    Built b = build(c, 16);
    auto* keep = b.inputs["mask"].data_as<uint8_t>();
    for (int j = 0; j < 5; ++j) keep[2 * 5 + j] = 0;  // query 2 sees no key
    const HostArray reference = run_backend("cpu", b), cuda = run_backend("cuda", b);
    ASSERT_GT(cuda.element_count(), 0);
    auto cmp = compare_outputs(cuda.view(), reference.view());
    ASSERT_TRUE(cmp.is_ok());
    EXPECT_EQ(cmp->reference_non_finite.nan, 2 * 8) << "the reference makes row 2 of both heads NaN";
    EXPECT_EQ(cmp->candidate_non_finite.nan, cmp->reference_non_finite.nan);
    EXPECT_LE(cmp->rel_l2_error, bound(t));
  }
}

// ---- the families directly ----

struct DeviceMemory {
  void* ptr = nullptr;
  explicit DeviceMemory(size_t bytes) {
    if (bytes > 0) {
      EXPECT_EQ(cudaMalloc(&ptr, bytes), cudaSuccess);
    }
  }
  ~DeviceMemory() {
    if (ptr) (void)cudaFree(ptr);
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
};

class AttentionFamilies : public AttentionOnGpu {
 protected:
  void SetUp() override {
    AttentionOnGpu::SetUp();
    if (IsSkipped()) return;
    cudaDeviceProp props{};
    CUDA_OK(cudaGetDeviceProperties(&props, 0));
    info_.cc_major = props.major;
    info_.cc_minor = props.minor;
    info_.sm_count = props.multiProcessorCount;
    info_.l2_bytes = static_cast<size_t>(props.l2CacheSize);
    info_.shared_memory_per_block_optin = props.sharedMemPerBlockOptin;
    CUDA_OK(cudaStreamCreate(&stream_));
    ASSERT_EQ(cublasLtCreate(&lt_), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cudnnCreate(&dnn_), CUDNN_STATUS_SUCCESS);
    ctx_ = RunContext{stream_, lt_, dnn_, &info_};
  }
  void TearDown() override {
    if (dnn_) (void)cudnnDestroy(dnn_);
    if (lt_) (void)cublasLtDestroy(lt_);
    if (stream_) (void)cudaStreamDestroy(stream_);
  }

  // The step of the network's attention node with its concrete shapes.
  struct Step {
    std::vector<TensorDesc> descs;  // q, k, v[, mask]
    std::unique_ptr<StepInstance> step;
  };
  Step step_of(const Network& net) {
    Step s;
    const Node& node = net.node(net.find_node("attention").value());
    for (Tensor t : node.inputs)
      if (t.valid()) s.descs.push_back(net.tensor(t).desc);
    std::vector<const TensorDesc*> inputs;
    for (const TensorDesc& d : s.descs) inputs.push_back(&d);
    if (inputs.size() == 3) inputs.push_back(nullptr);
    const TensorDesc out = net.tensor(node.outputs[0]).desc;
    const std::vector<TensorDesc> outputs{out};
    s.step = std::make_unique<StepInstance>(StepInstance{backends::NodeInstance{node, inputs, outputs},
                                                         std::vector<Layout>(inputs.size(), Layout::kLinear),
                                                         std::vector<Layout>{Layout::kLinear},
                                                         std::vector<Layout>{},  // no epilogue inputs
                                                         backends::cuda::PointwiseProgram{}, outputs, {}, &net.plugins()});
    return s;
  }

  // Runs `tactic` on the built inputs into a poisoned output and returns the output.
  HostArray run_tactic(CudaTactic& tactic, const StepInstance& step, const Built& b) {
    EXPECT_TRUE(tactic.initialize(step, ctx_).is_ok());
    std::vector<std::unique_ptr<DeviceMemory>> memory;
    StepBuffers buffers;
    for (const char* name : {"q", "k", "v", "mask"}) {
      auto it = b.inputs.find(name);
      if (it == b.inputs.end()) continue;
      memory.push_back(std::make_unique<DeviceMemory>(it->second.byte_size()));
      const HostArray& host = it->second;
      EXPECT_EQ(cudaMemcpy(memory.back()->ptr, host.data(), host.byte_size(), cudaMemcpyHostToDevice), cudaSuccess);
      buffers.inputs.push_back(DeviceTensor{host.dtype(), host.shape(), Layout::kLinear, memory.back()->ptr});
    }
    const TensorDesc& out = step.outputs[0];
    HostArray result = HostArray::zeros(out.dtype, out.shape).value();
    DeviceMemory output(result.byte_size());
    EXPECT_EQ(cudaMemset(output.ptr, 0xFF, result.byte_size()), cudaSuccess);  // NaN in every float type
    buffers.outputs.push_back(DeviceTensor{out.dtype, out.shape, Layout::kLinear, output.ptr});
    DeviceMemory workspace(tactic.workspace_size(step));
    buffers.workspace = workspace.ptr;
    buffers.workspace_bytes = tactic.workspace_size(step);
    const Status status = tactic.run(step, buffers, ctx_);
    EXPECT_TRUE(status.is_ok()) << tactic.name() << ": " << status.message();
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(result.data(), output.ptr, result.byte_size(), cudaMemcpyDeviceToHost), cudaSuccess);
    return result;
  }

  const TacticFamily& family(const char* name) {
    const TacticFamily* f = backends::cuda::tactic_families().find(name);
    EXPECT_NE(f, nullptr) << name;
    return *f;
  }

  DeviceInfo info_;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
  RunContext ctx_;
};

TEST_F(AttentionFamilies, BothFamiliesAgreeWhereBothApply) {
  const AttentionCase c = AttentionCase::self(DataType::kFloat16, Dims{2, 12, 128, 64})
      .with_mask(Dims{2, 1, 1, 128}, DataType::kFloat16).with_causal();
  const Built b = build(c, 21);
  Step s = step_of(b.net);
  const TacticFamily &sdpa = family("cudnn.sdpa"), &composed = family("kernel.attention");
  ASSERT_TRUE(sdpa.can_implement(*s.step, info_).is_ok()) << sdpa.can_implement(*s.step, info_).message();
  ASSERT_TRUE(composed.can_implement(*s.step, info_).is_ok());
  auto sdpa_tactics = sdpa.candidates(*s.step, ctx_, 4);
  auto composed_tactics = composed.candidates(*s.step, ctx_, 4);
  ASSERT_TRUE(sdpa_tactics.is_ok()) << sdpa_tactics.status().message();
  ASSERT_TRUE(composed_tactics.is_ok()) << composed_tactics.status().message();
  ASSERT_FALSE(sdpa_tactics->empty());

  const HostArray reference = run_backend("cpu", b);
  const HostArray from_composed = run_tactic(*composed_tactics->front(), *s.step, b);
  expect_close(from_composed, reference, bound(c.dtype), "kernel.attention vs cpu");
  for (auto& tactic : *sdpa_tactics) {
    const HostArray from_sdpa = run_tactic(*tactic, *s.step, b);
    expect_close(from_sdpa, reference, bound(c.dtype), tactic->name() + " vs cpu");
    expect_close(from_sdpa, from_composed, bound(c.dtype), tactic->name() + " vs kernel.attention");
  }
}

TEST_F(AttentionFamilies, ReplayedChoicesGiveIdenticalOutputs) {
  const Built b = build(AttentionCase::self(DataType::kBFloat16, Dims{4, 8, 128, 64})
      .with_mask(Dims{4, 1, 1, 128}, DataType::kBFloat16),
                        22);
  Step s = step_of(b.net);
  for (const char* name : {"cudnn.sdpa", "kernel.attention"}) {
    auto tactics = family(name).candidates(*s.step, ctx_, 2);
    ASSERT_TRUE(tactics.is_ok()) << name << ": " << tactics.status().message();
    CudaTactic& original = *tactics->front();
    auto replayed = family(name).replay(*s.step, original.choice());
    ASSERT_TRUE(replayed.is_ok()) << name << ": " << replayed.status().message();
    EXPECT_EQ((*replayed)->name(), original.name());
    const HostArray first = run_tactic(original, *s.step, b);
    const HostArray again = run_tactic(**replayed, *s.step, b);
    ASSERT_EQ(first.byte_size(), again.byte_size());
    EXPECT_EQ(std::memcmp(first.data(), again.data(), first.byte_size()), 0) << name << " replay differs";
  }
}

TEST_F(AttentionFamilies, SdpaCopiesAMaskItCannotStrideIntoADenseBias) {
  const Built b =
      build(AttentionCase::self(DataType::kFloat16, Dims{2, 4, 64, 64}).with_mask(Dims{2, 1, 64, 1}, DataType::kFloat16), 27);
  Step s = step_of(b.net);
  auto tactics = family("cudnn.sdpa").candidates(*s.step, ctx_, 1);
  ASSERT_TRUE(tactics.is_ok()) << tactics.status().message();
  EXPECT_EQ(tactics->front()->choice().at("dense_mask"), true);
  EXPECT_GE(tactics->front()->workspace_size(*s.step), size_t{2 * 64 * 64 * 2});
  expect_close(run_tactic(*tactics->front(), *s.step, b), run_backend("cpu", b), bound(DataType::kFloat16),
               "dense bias vs cpu");
}

TEST_F(AttentionFamilies, SdpaRefusesWhatItCannotRunWithReasons) {
  const TacticFamily& sdpa = family("cudnn.sdpa");
  const Built fp32 = build(AttentionCase::self(DataType::kFloat32, kBert1), 23);
  const Status s32 = sdpa.can_implement(*step_of(fp32.net).step, info_);
  EXPECT_EQ(s32.code(), StatusCode::kUnsupported);
  EXPECT_NE(s32.message().find("fp32"), std::string::npos) << s32.message();
  const Built boolean = build(AttentionCase::self(DataType::kFloat16, kBert1)
      .with_mask(Dims{128, 128}, DataType::kBool), 24);
  const Status sb = sdpa.can_implement(*step_of(boolean.net).step, info_);
  EXPECT_EQ(sb.code(), StatusCode::kUnsupported);
  EXPECT_NE(sb.message().find("bool mask"), std::string::npos) << sb.message();
  const Built odd = build(AttentionCase::self(DataType::kFloat16, Dims{1, 2, 16, 12}), 25);
  const Status so = sdpa.can_implement(*step_of(odd.net).step, info_);
  EXPECT_EQ(so.code(), StatusCode::kUnsupported);
  EXPECT_NE(so.message().find("multiples of 8"), std::string::npos) << so.message();
  // ... and the composed path takes all three.
  for (const Built* b : {&fp32, &boolean, &odd})
    EXPECT_TRUE(family("kernel.attention").can_implement(*step_of(b->net).step, info_).is_ok());
}

TEST_F(AttentionFamilies, ComposedPathWithNoKeysGivesZeros) {
  const Built b = build(AttentionCase(DataType::kFloat32, Dims{2, 3, 4}, Dims{2, 0, 4}, Dims{2, 0, 5}), 26);
  Step s = step_of(b.net);
  auto tactics = family("kernel.attention").candidates(*s.step, ctx_, 1);
  ASSERT_TRUE(tactics.is_ok()) << tactics.status().message();
  const HostArray y = run_tactic(*tactics->front(), *s.step, b);
  ASSERT_EQ(y.element_count(), 2 * 3 * 5);
  for (int64_t i = 0; i < y.element_count(); ++i) EXPECT_EQ(y.data_as<float>()[i], 0.0f) << i;
}

}  // namespace
}  // namespace tensoracle
