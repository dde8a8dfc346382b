// Each inference pass keeps the network's results (up to the rounding it documents) and does
// what it says to the graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/registry.h"
#include "passes/passes.h"
#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"
#include "tinynet/tinynet.h"

namespace tensoracle::passes {
namespace {

size_t count(const Network& net, OpKind kind) {
  size_t c = 0;
  for (size_t i = 0; i < net.num_nodes(); ++i) c += net.node(i).kind == kind;
  return c;
}

HostArray seeded(DataType type, const Dims& shape, unsigned seed) {
  HostArray a = HostArray::zeros(DataType::kFloat64, shape).value();
  double* p = a.data_as<double>();
  for (int64_t i = 0; i < a.element_count(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = static_cast<double>(seed >> 8) / static_cast<double>(1u << 24) - 0.5;
  }
  HostArray out = HostArray::zeros(type, shape).value();
  convert_elements(DataType::kFloat64, a.data(), type, out.data(), static_cast<size_t>(a.element_count()));
  return out;
}

NamedArrays run_cpu(const Network& net, const NamedArrayViews& inputs) {
  auto cpu = backends::create_backend("cpu").value();
  auto out = cpu->execute(net, inputs);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? std::move(out).value() : NamedArrays{};
}

TEST(FoldBatchNorm, TinynetLosesEveryBatchNormAndKeepsItsOutput) {
  auto weights = Weights::open(std::string(TENSORACLE_FIXTURES_DIR) + "/examples/tinynet/weights.safetensors");
  ASSERT_TRUE(weights.is_ok()) << weights.status().to_string();
  Network net;
  ASSERT_TRUE(tinynet::define(net, *weights, {2, 3, 16, 16}).is_ok());
  ASSERT_EQ(count(net, OpKind::kBatchNorm), 3u);

  auto folded = fold_batch_norm(net);
  ASSERT_TRUE(folded.is_ok()) << folded.status().to_string();
  EXPECT_EQ(count(*folded, OpKind::kBatchNorm), 0u);
  EXPECT_EQ(count(*folded, OpKind::kConvolution), 3u);

  HostArray image = seeded(DataType::kFloat32, {2, 3, 16, 16}, 7);
  NamedArrays before = run_cpu(net, {{"image", image.view()}});
  NamedArrays after = run_cpu(*folded, {{"image", image.view()}});
  auto cmp = compare_outputs(after.at("probs").view(), before.at("probs").view());
  ASSERT_TRUE(cmp.is_ok());
  EXPECT_LT(cmp->rel_l2_error, 1e-6);
}

TEST(FoldBatchNorm, LeavesABatchNormWhoseConvolutionOutputIsAlsoUsedElsewhere) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {1, 2, 4, 4});
  Tensor w = net.add_constant(seeded(DataType::kFloat32, {2, 2, 1, 1}, 1));
  Tensor y = net.convolution(x, w, Tensor{});
  Tensor p = net.add_constant(seeded(DataType::kFloat32, {2}, 2));
  Tensor v = net.add_constant(HostArray::zeros(DataType::kFloat32, {2}).value());
  Tensor bn = net.batch_norm(y, p, p, p, net.add(v, v));  // variance is not a constant
  net.mark_output(net.add(bn, y), "out");
  auto folded = fold_batch_norm(net);
  ASSERT_TRUE(folded.is_ok()) << folded.status().to_string();
  EXPECT_EQ(count(*folded, OpKind::kBatchNorm), 1u);
}

TEST(FoldConstantCasts, CastWeightsBecomeConstantsOfTheCastType) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat16, {3, 4});
  Tensor w = net.cast(net.add_constant(seeded(DataType::kFloat32, {4, 5}, 3)), DataType::kFloat16);
  net.mark_output(net.matmul(x, w), "y");
  auto folded = optimize_for_inference(net);
  ASSERT_TRUE(folded.is_ok()) << folded.status().to_string();
  EXPECT_EQ(count(*folded, OpKind::kCast), 0u);
  // The fp32 original is gone (dead), only the fp16 constant remains.
  ASSERT_EQ(count(*folded, OpKind::kConstant), 1u);
  for (size_t i = 0; i < folded->num_nodes(); ++i)
    if (folded->node(i).kind == OpKind::kConstant) EXPECT_EQ(folded->node(i).constant->view.dtype, DataType::kFloat16);

  HostArray input = seeded(DataType::kFloat16, {3, 4}, 4);
  NamedArrays before = run_cpu(net, {{"x", input.view()}});
  NamedArrays after = run_cpu(*folded, {{"x", input.view()}});
  auto cmp = compare_outputs(after.at("y").view(), before.at("y").view());
  ASSERT_TRUE(cmp.is_ok());
  EXPECT_EQ(cmp->max_abs_error, 0.0);  // same rounding, same values
}

// matmul(DQ(x_q), DQ(w_q [K, N])) with an int8 constant weight and a per-channel scale along N.
Network dequantized_matmul(bool x_dequantized, Dims w_shape = {6, 5}) {
  Network net;
  Tensor x = net.add_input("x", DataType::kInt8, {3, 6});
  if (x_dequantized)
    x = net.dequantize(x, net.add_constant(seeded(DataType::kFloat32, {}, 1)), DequantizeAttributes().set_name("x_dq"));
  else
    x = net.add_input("xf", DataType::kFloat32, {3, 6});
  HostArray codes = seeded(DataType::kFloat64, w_shape, 2);
  for (int64_t i = 0; i < codes.element_count(); ++i) codes.data_as<double>()[i] *= 250;
  HostArray w_codes = HostArray::zeros(DataType::kInt8, w_shape).value();
  convert_elements(DataType::kFloat64, codes.data(), DataType::kInt8, w_codes.data(), static_cast<size_t>(codes.element_count()));
  Tensor w = net.dequantize(net.add_constant(std::move(w_codes), "w_q"), net.add_constant(seeded(DataType::kFloat32, {w_shape[1]}, 3)),
                            DequantizeAttributes().set_axis(1).set_name("w_dq"));
  net.mark_output(net.matmul(x, w, MatMulAttributes().set_name("fc1")), "y");
  return net;
}

const MatMulAttributes* matmul_named(const Network& net, const std::string& name) {
  for (size_t i = 0; i < net.num_nodes(); ++i)
    if (net.node(i).name == name) return net.node(i).attributes<MatMulAttributes>();
  return nullptr;
}

TEST(TransposeDequantizedWeights, AQuantizedWeightIsStoredNkWithItsChannelAxisAndTheSameResult) {
  Network net = dequantized_matmul(true);
  std::vector<std::string> log;
  auto rewritten = optimize_for_inference(net, &log);
  ASSERT_TRUE(rewritten.is_ok()) << rewritten.status().to_string();
  const MatMulAttributes* mm = matmul_named(*rewritten, "fc1");
  ASSERT_NE(mm, nullptr);
  EXPECT_TRUE(mm->transpose_b);
  bool found = false;
  for (size_t i = 0; i < rewritten->num_nodes(); ++i) {
    const Node& node = rewritten->node(i);
    if (node.kind == OpKind::kConstant && node.constant->view.dtype == DataType::kInt8) {
      EXPECT_EQ(node.constant->view.shape, Dims({5, 6}));
      found = true;
    }
    if (node.name == "w_dq") {
      EXPECT_EQ(node.attributes<DequantizeAttributes>()->axis, 0);
    }
  }
  EXPECT_TRUE(found) << "no int8 weight constant left";
  EXPECT_NE(std::find(log.begin(), log.end(), "transpose_dequantized_weights: 1 quantized weight(s) stored transposed"), log.end())
      << ::testing::PrintToString(log);

  HostArray input = seeded(DataType::kFloat64, {3, 6}, 4);
  HostArray codes = HostArray::zeros(DataType::kInt8, {3, 6}).value();
  for (int64_t i = 0; i < input.element_count(); ++i) input.data_as<double>()[i] *= 250;
  convert_elements(DataType::kFloat64, input.data(), DataType::kInt8, codes.data(), 18);
  NamedArrays before = run_cpu(net, {{"x", codes.view()}});
  NamedArrays after = run_cpu(*rewritten, {{"x", codes.view()}});
  auto cmp = compare_outputs(after.at("y").view(), before.at("y").view());
  ASSERT_TRUE(cmp.is_ok());
  EXPECT_EQ(cmp->max_abs_error, 0.0);  // the same values, moved
}

TEST(TransposeDequantizedWeights, LeavesProductsThatAreNotQuantizedOnBothSides) {
  auto rewritten = optimize_for_inference(dequantized_matmul(false));
  ASSERT_TRUE(rewritten.is_ok()) << rewritten.status().to_string();
  ASSERT_NE(matmul_named(*rewritten, "fc1"), nullptr);
  EXPECT_FALSE(matmul_named(*rewritten, "fc1")->transpose_b);
}

// y = DQ(Q(w)) + x with w a constant quantized per channel (axis 1) or per tensor: the quantize
// layer folds into a constant of the quantized type and y stays bit-identical.
void check_quantize_folds(DataType format, bool per_channel) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {4, 6});
  Tensor w = net.add_constant(seeded(DataType::kFloat32, {4, 6}, 5));
  HostArray scale_values = seeded(DataType::kFloat32, per_channel ? Dims({6}) : Dims({}), 6);
  for (int64_t i = 0; i < scale_values.element_count(); ++i)  // 0.001 .. 0.011: many values saturate
    scale_values.data_as<float>()[i] = std::fabs(scale_values.data_as<float>()[i]) / 50 + 0.001f;
  Tensor scale = net.add_constant(std::move(scale_values));
  Tensor q = net.quantize(w, scale, QuantizeAttributes().set_output_type(format));
  net.mark_output(net.add(net.dequantize(q, scale), x), "y");
  std::vector<std::string> log;
  auto folded = optimize_for_inference(net, &log);
  ASSERT_TRUE(folded.is_ok()) << folded.status().to_string();
  EXPECT_EQ(count(*folded, OpKind::kQuantize), 0u) << ::testing::PrintToString(log);
  EXPECT_NE(std::find(log.begin(), log.end(), "fold_constant_quantize: 1 quantize layer(s) of constants folded"), log.end())
      << ::testing::PrintToString(log);
  HostArray input = seeded(DataType::kFloat32, {4, 6}, 7);
  NamedArrays before = run_cpu(net, {{"x", input.view()}});
  NamedArrays after = run_cpu(*folded, {{"x", input.view()}});
  auto cmp = compare_outputs(after.at("y").view(), before.at("y").view());
  ASSERT_TRUE(cmp.is_ok());
  EXPECT_EQ(cmp->max_abs_error, 0.0) << data_type_name(format) << (per_channel ? " per channel" : " per tensor");
}

TEST(FoldConstantQuantize, Int8PerChannelWeightsFoldBitExactly) { check_quantize_folds(DataType::kInt8, true); }
TEST(FoldConstantQuantize, Fp8PerTensorWeightsFoldBitExactly) { check_quantize_folds(DataType::kFloat8E4M3, false); }
TEST(FoldConstantQuantize, Fp8PerChannelWeightsFoldBitExactly) { check_quantize_folds(DataType::kFloat8E4M3, true); }

// Four quantize layers of one activation, as calibration writes them (each its own scale): two
// with equal scale values merge; another scale, another output type, and a quantize that is
// itself a network output stay. Every output is bit-identical.
TEST(MergeDuplicateQuantize, QuantizeLayersOfOneTensorWithEqualScalesBecomeOne) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {4, 6});
  const auto scale = [&](float v) {
    HostArray a = HostArray::zeros(DataType::kFloat32, {}).value();
    a.data_as<float>()[0] = v;
    return net.add_constant(std::move(a));
  };
  const auto q = [&](float s, DataType format) {
    return net.quantize(x, scale(s), QuantizeAttributes().set_output_type(format));
  };
  const auto dq = [&](Tensor quantized, float s) { return net.dequantize(quantized, scale(s)); };
  net.mark_output(net.add(dq(q(0.01f, DataType::kInt8), 0.01f), x), "a");
  net.mark_output(net.add(dq(q(0.01f, DataType::kInt8), 0.01f), x), "b");             // = a's: merged
  net.mark_output(net.add(dq(q(0.02f, DataType::kInt8), 0.02f), x), "c");             // another scale
  net.mark_output(net.add(dq(q(0.01f, DataType::kFloat8E4M3), 0.01f), x), "d");       // another type
  net.mark_output(q(0.01f, DataType::kInt8), "e");                                     // an output
  ASSERT_TRUE(net.status().is_ok()) << net.status().to_string();
  ASSERT_EQ(count(net, OpKind::kQuantize), 5u);

  std::vector<std::string> log;
  auto merged = optimize_for_inference(net, &log);
  ASSERT_TRUE(merged.is_ok()) << merged.status().to_string();
  EXPECT_EQ(count(*merged, OpKind::kQuantize), 4u) << ::testing::PrintToString(log);
  EXPECT_NE(std::find(log.begin(), log.end(),
                      "merge_duplicate_quantize: 1 quantize layer(s) of a tensor already quantized so merged"),
            log.end())
      << ::testing::PrintToString(log);
  HostArray input = seeded(DataType::kFloat32, {4, 6}, 9);
  NamedArrays before = run_cpu(net, {{"x", input.view()}});
  NamedArrays after = run_cpu(*merged, {{"x", input.view()}});
  for (const char* name : {"a", "b", "c", "d", "e"}) {
    ASSERT_EQ(after.at(name).byte_size(), before.at(name).byte_size()) << name;
    EXPECT_EQ(std::memcmp(after.at(name).data(), before.at(name).data(), before.at(name).byte_size()), 0) << name;
  }
}

// Attention as a Hugging Face BERT exports it to ONNX: heads split by reshape + transpose, k^T
// as one Transpose(0, 2, 3, 1), the scores scaled by a constant, an additive [N, 1, 1, L] mask,
// softmax over the last axis, the product with v, heads merged back.
struct WrittenOutAttention {
  enum class Scaling { kMul, kDiv, kNone };
  Scaling scaling = Scaling::kMul;
  bool mask = true;
  bool key_transposed_by_the_product = false;  // matmul(q, k, transpose_b) instead of a Transpose
  int64_t softmax_axis = -1;
  bool scores_are_an_output = false;

  static constexpr int64_t kN = 2, kL = 5, kHeads = 3, kD = 4;

  Network build() const {
    Network n;
    const auto heads = [&](Tensor x, std::vector<int64_t> perm) {
      return n.transpose(n.reshape(x, ReshapeAttributes().set_shape({kN, kL, kHeads, kD})),
                         TransposeAttributes().set_perm(std::move(perm)));
    };
    const Dims hidden{kN, kL, kHeads * kD};
    Tensor q = heads(n.add_input("q", DataType::kFloat32, hidden), {0, 2, 1, 3});
    Tensor v = heads(n.add_input("v", DataType::kFloat32, hidden), {0, 2, 1, 3});
    Tensor k_in = n.add_input("k", DataType::kFloat32, hidden);
    Tensor scores = key_transposed_by_the_product
                        ? n.matmul(q, heads(k_in, {0, 2, 1, 3}), MatMulAttributes().set_transpose_b(true))
                        : n.matmul(q, heads(k_in, {0, 2, 3, 1}));
    if (scores_are_an_output) n.mark_output(scores, "scores");
    HostArray c = HostArray::zeros(DataType::kFloat32, {}).value();
    c.data_as<float>()[0] = scaling == Scaling::kDiv ? 2.0f : 0.5f;
    if (scaling == Scaling::kMul) scores = n.mul(scores, n.add_constant(std::move(c)));
    if (scaling == Scaling::kDiv) scores = n.div(scores, n.add_constant(std::move(c)));
    if (mask) scores = n.add(scores, n.add_input("mask", DataType::kFloat32, {kN, 1, 1, kL}));
    Tensor probabilities = n.softmax(scores, SoftmaxAttributes().set_axis(softmax_axis));
    Tensor out = n.transpose(n.matmul(probabilities, v), TransposeAttributes().set_perm({0, 2, 1, 3}));
    n.mark_output(n.reshape(out, ReshapeAttributes().set_shape({kN, kL, kHeads * kD})), "y");
    EXPECT_TRUE(n.status().is_ok()) << n.status().to_string();
    return n;
  }

  NamedArrays inputs() const {
    NamedArrays in;
    in["q"] = seeded(DataType::kFloat32, {kN, kL, kHeads * kD}, 1);
    in["k"] = seeded(DataType::kFloat32, {kN, kL, kHeads * kD}, 2);
    in["v"] = seeded(DataType::kFloat32, {kN, kL, kHeads * kD}, 3);
    HostArray m = HostArray::zeros(DataType::kFloat32, {kN, 1, 1, kL}).value();
    m.data_as<float>()[kL - 1] = -1e4f;  // the first sequence's last position masked out
    if (mask) in["mask"] = std::move(m);
    return in;
  }
};

NamedArrayViews views(const NamedArrays& arrays) {
  NamedArrayViews out;
  for (const auto& [name, array] : arrays) out[name] = array.view();
  return out;
}

TEST(FuseAttention, AnExportedBertAttentionBecomesOneLayerWithTheSameResult) {
  using S = WrittenOutAttention::Scaling;
  for (const S scaling : {S::kMul, S::kDiv, S::kNone}) {
    for (const bool mask : {true, false}) {
      for (const bool transpose_b : {false, true}) {
        WrittenOutAttention a;
        a.scaling = scaling;
        a.mask = mask;
        a.key_transposed_by_the_product = transpose_b;
        SCOPED_TRACE(::testing::Message() << "scaling " << static_cast<int>(scaling) << ", mask " << mask
                                          << ", transpose_b " << transpose_b);
        const Network written = a.build();
        std::vector<std::string> log;
        auto fused = optimize_for_inference(written, &log);
        ASSERT_TRUE(fused.is_ok()) << fused.status().to_string();
        EXPECT_EQ(count(*fused, OpKind::kAttention), 1u);
        EXPECT_EQ(count(*fused, OpKind::kSoftmax), 0u);
        EXPECT_EQ(count(*fused, OpKind::kMatMul), 0u);
        EXPECT_EQ(count(*fused, OpKind::kElementwise), 0u);
        // q, k and v each split by the same transpose (0, 2, 1, 3): k's two transposes cancel
        // into it; one more merges the heads back.
        EXPECT_EQ(count(*fused, OpKind::kTranspose), 4u);
        for (size_t i = 0; i < fused->num_nodes(); ++i) {
          if (const auto* t = fused->node(i).attributes<TransposeAttributes>()) {
            EXPECT_EQ(t->perm, (std::vector<int64_t>{0, 2, 1, 3}));
          }
        }
        EXPECT_NE(std::find(log.begin(), log.end(), "fuse_attention: 1 attention pattern(s) became attention layers"),
                  log.end());
        const NamedArrays in = a.inputs();
        const NamedArrays before = run_cpu(written, views(in));
        const NamedArrays after = run_cpu(*fused, views(in));
        auto cmp = compare_outputs(after.at("y").view(), before.at("y").view());
        ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
        EXPECT_LT(cmp->rel_l2_error, 1e-6);  // fp32 layers rounding apart, the layer once
      }
    }
  }
}

// k^T that no transpose produces (here a network input already [N, heads, d, L]) is read
// through one transpose of its last two dims.
TEST(FuseAttention, AKeyGivenTransposedIsReadThroughATranspose) {
  Network n;
  Tensor q = n.add_input("q", DataType::kFloat32, {2, 3, 5, 4});
  Tensor kt = n.add_input("kt", DataType::kFloat32, {2, 3, 4, 6});
  Tensor v = n.add_input("v", DataType::kFloat32, {2, 3, 6, 7});
  n.mark_output(n.matmul(n.softmax(n.matmul(q, kt)), v), "y");
  ASSERT_TRUE(n.status().is_ok()) << n.status().to_string();
  auto fused = optimize_for_inference(n);
  ASSERT_TRUE(fused.is_ok()) << fused.status().to_string();
  ASSERT_EQ(count(*fused, OpKind::kAttention), 1u);
  ASSERT_EQ(count(*fused, OpKind::kTranspose), 1u);
  for (size_t i = 0; i < fused->num_nodes(); ++i) {
    if (const auto* t = fused->node(i).attributes<TransposeAttributes>()) {
      EXPECT_EQ(t->perm, (std::vector<int64_t>{0, 1, 3, 2}));
    }
    if (const auto* a = fused->node(i).attributes<AttentionAttributes>()) {
      EXPECT_EQ(a->scale, std::optional<double>(1.0)) << "no scaling layer: scale 1, not 1/sqrt(d)";
    }
  }
  NamedArrays in;
  in["q"] = seeded(DataType::kFloat32, {2, 3, 5, 4}, 4);
  in["kt"] = seeded(DataType::kFloat32, {2, 3, 4, 6}, 5);
  in["v"] = seeded(DataType::kFloat32, {2, 3, 6, 7}, 6);
  auto cmp = compare_outputs(run_cpu(*fused, views(in)).at("y").view(), run_cpu(n, views(in)).at("y").view());
  ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
  EXPECT_LT(cmp->rel_l2_error, 1e-6);
}

TEST(FuseAttention, LeavesPatternsThatAreNotAttention) {
  WrittenOutAttention over_queries;
  over_queries.softmax_axis = 2;  // normalizes over the queries, not the keys
  WrittenOutAttention scores_read_elsewhere;
  scores_read_elsewhere.scores_are_an_output = true;
  for (const WrittenOutAttention& a : {over_queries, scores_read_elsewhere}) {
    auto fused = fuse_attention(a.build());
    ASSERT_TRUE(fused.is_ok()) << fused.status().to_string();
    EXPECT_EQ(count(*fused, OpKind::kAttention), 0u);
    EXPECT_EQ(count(*fused, OpKind::kSoftmax), 1u);
  }
}

TEST(RemoveDeadLayers, KeepsOnlyWhatReachesAnOutput) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {4});
  net.relu(x);  // dead
  net.mark_output(net.add(x, x), "y");
  auto pruned = remove_dead_layers(net);
  ASSERT_TRUE(pruned.is_ok());
  EXPECT_EQ(pruned->num_nodes(), 1u);
  EXPECT_EQ(pruned->tensor(pruned->outputs()[0]).name, "y");
}

}  // namespace
}  // namespace tensoracle::passes
