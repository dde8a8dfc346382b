// The ResNet-50 and BERT encoder graph functions on the CPU reference backend, at reduced sizes
// (same structure and state_dict names, smaller Config) with seeded random weights: they read
// exactly the tensors torchvision's / Hugging Face's state_dicts hold, infer the documented
// shapes, honour the padding mask the way Hugging Face does, and put every layer in the requested
// precision. Their agreement with PyTorch is checked on the GPU machine (tests/gpu/models_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>

#include "backends/registry.h"
#include "bert_encoder/bert_encoder.h"
#include "host/io/io_test_support.h"
#include "host/models/state_dicts.h"
#include "resnet50/resnet50.h"
#include "tensoracle/compare.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

using testing::bert_state_dict;
using testing::ends_with;
using testing::random_state_dict;
using testing::resnet_state_dict;
using testing::small_bert;
using testing::small_resnet;
using testing::StateDictShapes;
using testing::write_weights;

// The weight names a network reads (its constants whose source is "weights:<name>").
std::set<std::string> weights_read(const Network& net) {
  std::set<std::string> names;
  for (size_t i = 0; i < net.num_nodes(); ++i) {
    const Node& node = net.node(i);
    if (node.kind == OpKind::kConstant && node.constant && node.constant->source.rfind("weights:", 0) == 0)
      names.insert(node.constant->source.substr(8));
  }
  return names;
}

std::set<std::string> names_of(const StateDictShapes& shapes, const std::string& skip_prefix = "") {
  std::set<std::string> names;
  for (const auto& entry : shapes)
    if (skip_prefix.empty() || entry.first.rfind(skip_prefix, 0) != 0) names.insert(entry.first);
  return names;
}

// Every layer that computes (not the casts at the edges, the integer mask handling or the
// constants) produces `precision`.
void expect_layers_in(const Network& net, DataType precision) {
  int computing = 0;
  for (size_t i = 0; i < net.num_nodes(); ++i) {
    const Node& node = net.node(i);
    switch (node.kind) {
      case OpKind::kConvolution:
      case OpKind::kBatchNorm:
      case OpKind::kMatMul:
      case OpKind::kElementwise:
      case OpKind::kActivation:
      case OpKind::kPooling:
      case OpKind::kLayerNorm:
      case OpKind::kAttention:
      case OpKind::kGather:
        ++computing;
        EXPECT_EQ(net.tensor(node.outputs[0]).desc.dtype, precision)
            << node.name << " (" << op_kind_name(node.kind) << ") in a " << data_type_name(precision) << " network";
        break;
      default:
        break;
    }
  }
  EXPECT_GT(computing, 0);
}

HostArray random_image(const Dims& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  HostArray a = HostArray::zeros(DataType::kFloat32, shape).value();
  for (int64_t i = 0; i < a.element_count(); ++i) a.data_as<float>()[i] = dist(rng);
  return a;
}

HostArray int64_array(const Dims& shape, const std::vector<int64_t>& values) {
  HostArray a = HostArray::zeros(DataType::kInt64, shape).value();
  EXPECT_EQ(static_cast<size_t>(a.element_count()), values.size());
  for (size_t i = 0; i < values.size(); ++i) a.data_as<int64_t>()[i] = values[i];
  return a;
}

void expect_all_finite(const HostArray& a) {
  ASSERT_EQ(a.dtype(), DataType::kFloat32);
  const float* p = a.data_as<float>();
  double sum_sq = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    ASSERT_TRUE(std::isfinite(p[i])) << "element " << i;
    sum_sq += static_cast<double>(p[i]) * p[i];
  }
  EXPECT_GT(sum_sq, 0.0);
}

NamedArrays run_cpu(const Network& net, const NamedArrayViews& inputs) {
  auto cpu = backends::create_backend("cpu").value();
  auto out = cpu->execute(net, inputs);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? std::move(*out) : NamedArrays{};
}

// ---- ResNet-50 ----

TEST(ResNet50Graph, DefaultConfigIsTorchvisionResNet50) {
  const resnet50::Config cfg;
  EXPECT_EQ(cfg.blocks, std::vector<int64_t>({3, 4, 6, 3}));
  EXPECT_EQ(cfg.width, 64);
  EXPECT_EQ(cfg.num_classes, 1000);
  // torchvision documents 25,557,032 parameters for resnet50 (running statistics are buffers).
  int64_t parameters = 0;
  for (const auto& [name, shape] : resnet_state_dict(cfg))
    if (!ends_with(name, "running_mean") && !ends_with(name, "running_var"))
      parameters += shape.element_count().value();
  EXPECT_EQ(parameters, 25557032);
}

TEST(ResNet50Graph, ReadsExactlyTheStateDictAndGivesLogitsForAnyBatchAndResolution) {
  testing::TempDir dir;
  const resnet50::Config cfg = small_resnet();
  const StateDictShapes shapes = resnet_state_dict(cfg);
  Weights w = write_weights(dir, random_state_dict(shapes, 1), "resnet.safetensors");

  Network net;
  ASSERT_TRUE(resnet50::define(net, w, {-1, 3, -1, -1}, DataType::kFloat32, cfg).is_ok()) << net.status().to_string();
  EXPECT_EQ(weights_read(net), names_of(shapes));
  auto logits = net.find_tensor(resnet50::kOutput);
  ASSERT_TRUE(logits.is_ok());
  EXPECT_EQ(net.tensor(*logits).desc.to_string(), "fp32[-1,10]");

  for (const Dims& shape : {Dims{2, 3, 32, 32}, Dims{1, 3, 40, 48}}) {
    HostArray image = random_image(shape, 2);
    NamedArrays out = run_cpu(net, {{resnet50::kInput, image.view()}});
    ASSERT_EQ(out.count(resnet50::kOutput), 1u);
    EXPECT_EQ(out.at(resnet50::kOutput).shape(), Dims({shape[0], 10}));
    expect_all_finite(out.at(resnet50::kOutput));
  }
}

TEST(ResNet50Graph, LowerPrecisionPutsEveryLayerInThatTypeAndKeepsFp32Io) {
  testing::TempDir dir;
  const resnet50::Config cfg = small_resnet();
  Weights w = write_weights(dir, random_state_dict(resnet_state_dict(cfg), 3), "resnet.safetensors");
  HostArray image = random_image({2, 3, 32, 32}, 4);

  Network fp32;
  ASSERT_TRUE(resnet50::define(fp32, w, image.shape(), DataType::kFloat32, cfg).is_ok()) << fp32.status().to_string();
  NamedArrays fp32_outputs = run_cpu(fp32, {{resnet50::kInput, image.view()}});
  const HostArray& reference = fp32_outputs.at(resnet50::kOutput);

  // Loose bounds: a sanity check that casting is wired through, not an accuracy claim (the
  // precision reports on the GPU measure that).
  for (auto [precision, max_rel_l2] : {std::pair{DataType::kFloat16, 1e-2}, std::pair{DataType::kBFloat16, 5e-2}}) {
    SCOPED_TRACE(data_type_name(precision));
    Network net;
    ASSERT_TRUE(resnet50::define(net, w, image.shape(), precision, cfg).is_ok()) << net.status().to_string();
    expect_layers_in(net, precision);
    EXPECT_EQ(net.tensor(net.inputs()[0]).desc.dtype, DataType::kFloat32);
    NamedArrays out = run_cpu(net, {{resnet50::kInput, image.view()}});
    ASSERT_EQ(out.count(resnet50::kOutput), 1u);
    expect_all_finite(out.at(resnet50::kOutput));
    auto cmp = compare_outputs(out.at(resnet50::kOutput).view(), reference.view());
    ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
    EXPECT_GT(cmp->rel_l2_error, 0.0);  // the lower precision really rounds
    EXPECT_LE(cmp->rel_l2_error, max_rel_l2);
  }
}

TEST(ResNet50Graph, MissingWeightAndUnsupportedPrecisionAreNamed) {
  testing::TempDir dir;
  const resnet50::Config cfg = small_resnet();
  NamedArrays arrays = random_state_dict(resnet_state_dict(cfg), 5);
  arrays.erase("layer3.0.downsample.1.running_var");
  Weights w = write_weights(dir, arrays, "resnet.safetensors");

  Network net;
  Status s = resnet50::define(net, w, {1, 3, 32, 32}, DataType::kFloat32, cfg);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("layer3.0.downsample.1.running_var"), std::string::npos) << s.message();

  Network int8;
  s = resnet50::define(int8, w, {1, 3, 32, 32}, DataType::kInt8, cfg);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("precision int8"), std::string::npos) << s.message();
}

// ---- BERT ----


constexpr int64_t kBatch = 2;
constexpr int64_t kLength = 6;

// Sequence 0 is whole; sequence 1 has its last two positions padded.
const std::vector<int64_t> kIds = {7, 3, 41, 12, 9, 30, 5, 18, 27, 44, 0, 0};
const std::vector<int64_t> kMask = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0};

HostArray run_bert(const Network& net, const std::vector<int64_t>& ids, const std::vector<int64_t>& mask) {
  HostArray ids_array = int64_array({kBatch, kLength}, ids);
  HostArray mask_array = int64_array({kBatch, kLength}, mask);
  NamedArrays out =
      run_cpu(net, {{bert_encoder::kInputIds, ids_array.view()}, {bert_encoder::kAttentionMask, mask_array.view()}});
  EXPECT_EQ(out.count(bert_encoder::kOutput), 1u);
  return out.count(bert_encoder::kOutput) ? std::move(out.at(bert_encoder::kOutput)) : HostArray{};
}

TEST(BertEncoderGraph, DefaultConfigIsBertBase) {
  const bert_encoder::Config cfg;
  const StateDictShapes shapes = bert_state_dict(cfg);
  int64_t elements = 0;
  for (const auto& entry : shapes) elements += entry.second.element_count().value();
  // BertModel(BertConfig()) has 109,482,240 parameters (the pooler's 590,592 included).
  EXPECT_EQ(elements, 109482240);
  EXPECT_EQ(cfg.layer_norm_eps, 1e-12);
}

TEST(BertEncoderGraph, ReadsEveryWeightButThePoolerAndGivesTheLastHiddenState) {
  testing::TempDir dir;
  const bert_encoder::Config cfg = small_bert();
  const StateDictShapes shapes = bert_state_dict(cfg);
  Weights w = write_weights(dir, random_state_dict(shapes, 6), "bert.safetensors");

  Network net;
  ASSERT_TRUE(bert_encoder::define(net, w, -1, kLength, DataType::kFloat32, cfg).is_ok()) << net.status().to_string();
  EXPECT_EQ(weights_read(net), names_of(shapes, "pooler."));
  auto out_tensor = net.find_tensor(bert_encoder::kOutput);
  ASSERT_TRUE(out_tensor.is_ok());
  EXPECT_EQ(net.tensor(*out_tensor).desc.to_string(), "fp32[-1,6,16]");

  HostArray out = run_bert(net, kIds, kMask);
  EXPECT_EQ(out.shape(), Dims({kBatch, kLength, cfg.hidden}));
  expect_all_finite(out);
}

// Hugging Face's mask: a padded key gets finfo.min added to its scores, so it receives no
// attention at all: what a padded position holds cannot reach the other positions.
TEST(BertEncoderGraph, PaddedPositionsDoNotReachTheOthers) {
  testing::TempDir dir;
  const bert_encoder::Config cfg = small_bert();
  Weights w = write_weights(dir, random_state_dict(bert_state_dict(cfg), 7), "bert.safetensors");
  Network net;
  ASSERT_TRUE(bert_encoder::define(net, w, kBatch, kLength, DataType::kFloat32, cfg).is_ok())
      << net.status().to_string();

  const HostArray base = run_bert(net, kIds, kMask);
  std::vector<int64_t> other_padding = kIds;
  other_padding[10] = 33;
  other_padding[11] = 2;
  const HostArray changed = run_bert(net, other_padding, kMask);
  const int64_t h = cfg.hidden;
  const float* a = base.data_as<float>();
  const float* b = changed.data_as<float>();
  for (int64_t pos = 0; pos < kBatch * kLength; ++pos) {
    const bool padded = kMask[pos] == 0;
    bool same = true;
    for (int64_t j = 0; j < h; ++j) same = same && a[pos * h + j] == b[pos * h + j];
    EXPECT_EQ(same, !padded) << "position " << pos;
  }

  // Without the mask, the padding does reach them.
  const std::vector<int64_t> no_mask(kMask.size(), 1);
  const HostArray unmasked = run_bert(net, kIds, no_mask);
  auto cmp = compare_outputs(unmasked.view(), base.view());
  ASSERT_TRUE(cmp.is_ok());
  EXPECT_GT(cmp->max_abs_error, 0.0);
}

// The mask is read as bool (Hugging Face casts it with .bool()): any non-zero value keeps.
TEST(BertEncoderGraph, AnyNonZeroMaskValueKeeps) {
  testing::TempDir dir;
  const bert_encoder::Config cfg = small_bert();
  Weights w = write_weights(dir, random_state_dict(bert_state_dict(cfg), 8), "bert.safetensors");
  Network net;
  ASSERT_TRUE(bert_encoder::define(net, w, kBatch, kLength, DataType::kFloat32, cfg).is_ok())
      << net.status().to_string();
  std::vector<int64_t> other_values = kMask;
  for (int64_t& m : other_values) m = m != 0 ? 3 : 0;
  other_values[0] = -1;
  const HostArray a = run_bert(net, kIds, kMask);
  const HostArray b = run_bert(net, kIds, other_values);
  ASSERT_EQ(a.byte_size(), b.byte_size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.byte_size()), 0);
}

TEST(BertEncoderGraph, LowerPrecisionPutsEveryLayerInThatTypeAndKeepsFp32Output) {
  testing::TempDir dir;
  const bert_encoder::Config cfg = small_bert();
  Weights w = write_weights(dir, random_state_dict(bert_state_dict(cfg), 9), "bert.safetensors");
  Network fp32;
  ASSERT_TRUE(bert_encoder::define(fp32, w, kBatch, kLength, DataType::kFloat32, cfg).is_ok());
  const HostArray reference = run_bert(fp32, kIds, kMask);

  for (auto [precision, max_rel_l2] : {std::pair{DataType::kFloat16, 1e-2}, std::pair{DataType::kBFloat16, 5e-2}}) {
    SCOPED_TRACE(data_type_name(precision));
    Network net;
    ASSERT_TRUE(bert_encoder::define(net, w, kBatch, kLength, precision, cfg).is_ok()) << net.status().to_string();
    expect_layers_in(net, precision);
    const HostArray out = run_bert(net, kIds, kMask);
    expect_all_finite(out);
    auto cmp = compare_outputs(out.view(), reference.view());
    ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
    EXPECT_GT(cmp->rel_l2_error, 0.0);
    EXPECT_LE(cmp->rel_l2_error, max_rel_l2);
  }
}

TEST(BertEncoderGraph, BadLengthShapeOrPrecisionIsNamed) {
  testing::TempDir dir;
  bert_encoder::Config cfg = small_bert();
  Weights w = write_weights(dir, random_state_dict(bert_state_dict(cfg), 10), "bert.safetensors");
  Network too_long;
  Status s = bert_encoder::define(too_long, w, 1, 17, DataType::kFloat32, cfg);
  EXPECT_NE(s.message().find("sequence length 17 is outside [1, 16]"), std::string::npos) << s.message();
  Network fp64;
  s = bert_encoder::define(fp64, w, 1, 4, DataType::kFloat64, cfg);
  EXPECT_NE(s.message().find("precision fp64"), std::string::npos) << s.message();
  cfg.heads = 3;
  Network heads;
  s = bert_encoder::define(heads, w, 1, 4, DataType::kFloat32, cfg);
  EXPECT_NE(s.message().find("hidden size 16 is not a multiple of 3 heads"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tensoracle
