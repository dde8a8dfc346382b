// The precision pass (passes.h, docs/precision.md): an fp32 network becomes the fp16 / bf16
// network one would write by hand (fp32 I/O, casts only at region boundaries), keeps the listed op
// kinds and every integer, bool and quantized layer in their types, and stays within the
// documented tolerance of the fp32 network on the cpu reference backend.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "backends/registry.h"
#include "passes/passes.h"
#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::passes {
namespace {

HostArray seeded(DataType type, const Dims& shape, unsigned seed, double scale = 1.0, double offset = 0.0) {
  HostArray a = HostArray::zeros(DataType::kFloat64, shape).value();
  double* p = a.data_as<double>();
  for (int64_t i = 0; i < a.element_count(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = (static_cast<double>(seed >> 8) / static_cast<double>(1u << 24) - 0.5) * scale + offset;
  }
  HostArray out = HostArray::zeros(type, shape).value();
  convert_elements(DataType::kFloat64, a.data(), type, out.data(), static_cast<size_t>(a.element_count()));
  return out;
}

// A constant of fp32 values (from `seed`) stored as `type`: what a hand-written fp16 graph holds.
Tensor constant(Network& net, DataType type, const Dims& shape, unsigned seed, double scale = 1.0, double offset = 0.0) {
  HostArray fp32 = seeded(DataType::kFloat32, shape, seed, scale, offset);
  if (type == DataType::kFloat32) return net.add_constant(std::move(fp32));
  HostArray typed = HostArray::zeros(type, shape).value();
  convert_elements(DataType::kFloat32, fp32.data(), type, typed.data(), static_cast<size_t>(fp32.element_count()));
  return net.add_constant(std::move(typed));
}

// A network written in `compute` with fp32 I/O (`compute` fp32: the plain fp32 network).
using Definition = std::function<void(Network&, DataType compute)>;

// x [4, 16] -> matmul + bias -> relu -> matmul + bias -> softmax: "probs".
void mlp(Network& net, DataType compute) {
  Tensor x = net.add_input("x", DataType::kFloat32, {4, 16});
  if (compute != DataType::kFloat32) x = net.cast(x, compute);
  Tensor h = net.add(net.matmul(x, constant(net, compute, {16, 32}, 1)), constant(net, compute, {32}, 2));
  h = net.relu(h);
  Tensor y = net.add(net.matmul(h, constant(net, compute, {32, 8}, 3)), constant(net, compute, {8}, 4));
  y = net.softmax(y);
  if (compute != DataType::kFloat32) y = net.cast(y, DataType::kFloat32);
  net.mark_output(y, "probs");
}

// image [2, 3, 8, 8] -> convolution -> batch norm -> relu -> average pooling: "features".
void conv_block(Network& net, DataType compute) {
  Tensor x = net.add_input("image", DataType::kFloat32, {2, 3, 8, 8});
  if (compute != DataType::kFloat32) x = net.cast(x, compute);
  Tensor y = net.convolution(x, constant(net, compute, {4, 3, 3, 3}, 5), constant(net, compute, {4}, 6),
                             ConvolutionAttributes().set_padding({1, 1}));
  Tensor variance = constant(net, compute, {4}, 9, 1.0, 1.0);  // in [0.5, 1.5)
  y = net.batch_norm(y, constant(net, compute, {4}, 7), constant(net, compute, {4}, 8), constant(net, compute, {4}, 10), variance);
  y = net.relu(y);
  y = net.pooling(y, PoolingAttributes().set_kind(PoolingKind::kAverage).set_window({2, 2}));
  if (compute != DataType::kFloat32) y = net.cast(y, DataType::kFloat32);
  net.mark_output(y, "features");
}

Network define(const Definition& definition, DataType compute) {
  Network net;
  definition(net, compute);
  EXPECT_TRUE(net.status().is_ok()) << net.status().to_string();
  return net;
}

Network convert(const Network& net, DataType compute, PrecisionReport* report = nullptr,
                std::optional<std::vector<std::string>> keep = std::nullopt) {
  PrecisionOptions options;
  options.compute = compute;
  if (keep) options.keep_fp32 = *keep;
  auto converted = convert_precision(net, options, report);
  EXPECT_TRUE(converted.is_ok()) << converted.status().to_string();
  return converted.is_ok() ? std::move(converted).value() : Network{};
}

NamedArrays run_cpu(const Network& net, const NamedArrayViews& inputs) {
  auto cpu = backends::create_backend("cpu").value();
  auto out = cpu->execute(net, inputs);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? std::move(out).value() : NamedArrays{};
}

// The invariants of every converted network: inputs and outputs keep their source types, no cast
// reads a cast, and a layer that computes in fp16/bf16 has no other tensor than int32/int64
// indices or bool conditions among its inputs (no integer result, no quantized tensor).
void expect_well_formed(const Network& source, const Network& converted) {
  ASSERT_EQ(converted.inputs().size(), source.inputs().size());
  for (size_t i = 0; i < source.inputs().size(); ++i)
    EXPECT_EQ(converted.tensor(converted.inputs()[i]).desc.dtype, source.tensor(source.inputs()[i]).desc.dtype);
  ASSERT_EQ(converted.outputs().size(), source.outputs().size());
  for (size_t i = 0; i < source.outputs().size(); ++i) {
    EXPECT_EQ(converted.tensor(converted.outputs()[i]).name, source.tensor(source.outputs()[i]).name);
    EXPECT_EQ(converted.tensor(converted.outputs()[i]).desc.dtype, source.tensor(source.outputs()[i]).desc.dtype);
  }
  for (size_t i = 0; i < converted.num_nodes(); ++i) {
    const Node& node = converted.node(i);
    if (node.kind == OpKind::kCast) {
      const int64_t producer = converted.tensor(node.inputs[0]).producer;
      EXPECT_FALSE(producer >= 0 && converted.node(static_cast<size_t>(producer)).kind == OpKind::kCast)
          << "cast '" << node.name << "' reads a cast";
      continue;
    }
    if (node.kind == OpKind::kConstant) continue;
    bool low = false, other = false;
    for (const std::vector<Tensor>* tensors : {&node.inputs, &node.outputs})
      for (Tensor t : *tensors) {
        if (!t.valid()) continue;
        const DataType type = converted.tensor(t).desc.dtype;
        const bool selector = tensors == &node.inputs &&
                              (type == DataType::kInt32 || type == DataType::kInt64 || type == DataType::kBool);
        low |= type == DataType::kFloat16 || type == DataType::kBFloat16;
        other |= type != DataType::kFloat16 && type != DataType::kBFloat16 && type != DataType::kFloat32 && !selector;
      }
    EXPECT_FALSE(low && other) << "layer '" << node.name << "' computes in 16 bits beside an integer or quantized tensor";
  }
}

bool bit_equal(const HostArray& a, const HostArray& b) {
  return a.view().byte_size() == b.view().byte_size() && std::memcmp(a.data(), b.data(), a.view().byte_size()) == 0;
}

// The pass on the fp32 network gives the hand-written network (same structural hash, the same
// output bits) and stays within `tolerance` (relative L2 error) of the fp32 network.
void check_matches_hand_written(const Definition& definition, DataType compute, const std::string& input, const Dims& shape,
                                const std::string& output, double tolerance) {
  SCOPED_TRACE(std::string(data_type_name(compute)));
  const Network fp32 = define(definition, DataType::kFloat32);
  const Network by_hand = define(definition, compute);
  const Network converted = convert(fp32, compute);
  expect_well_formed(fp32, converted);
  EXPECT_EQ(structural_hash(converted).value(), structural_hash(by_hand).value()) << canonical_form(converted).value();

  HostArray x = seeded(DataType::kFloat32, shape, 11, 4.0);
  NamedArrays reference = run_cpu(fp32, {{input, x.view()}});
  NamedArrays hand = run_cpu(by_hand, {{input, x.view()}});
  NamedArrays ours = run_cpu(converted, {{input, x.view()}});
  ASSERT_TRUE(reference.count(output) && hand.count(output) && ours.count(output));
  EXPECT_EQ(ours.at(output).dtype(), DataType::kFloat32);
  EXPECT_TRUE(bit_equal(ours.at(output), hand.at(output)));
  auto cmp = compare_outputs(ours.at(output).view(), reference.at(output).view());
  ASSERT_TRUE(cmp.is_ok());
  EXPECT_GT(cmp->rel_l2_error, 0.0) << "the conversion changed nothing: the test would not see a wrong type";
  EXPECT_LT(cmp->rel_l2_error, tolerance);
}

// docs/precision.md: the tolerances of the converted networks against fp32.
constexpr double kFp16Tolerance = 5e-3;
constexpr double kBf16Tolerance = 4e-2;

TEST(ConvertPrecision, AnMlpWithSoftmaxIsTheHandWrittenFp16AndBf16Network) {
  check_matches_hand_written(mlp, DataType::kFloat16, "x", {4, 16}, "probs", kFp16Tolerance);
  check_matches_hand_written(mlp, DataType::kBFloat16, "x", {4, 16}, "probs", kBf16Tolerance);
}

TEST(ConvertPrecision, AConvolutionBlockWithBatchNormIsTheHandWrittenFp16AndBf16Network) {
  check_matches_hand_written(conv_block, DataType::kFloat16, "image", {2, 3, 8, 8}, "features", kFp16Tolerance);
  check_matches_hand_written(conv_block, DataType::kBFloat16, "image", {2, 3, 8, 8}, "features", kBf16Tolerance);
}

size_t count(const Network& net, OpKind kind) {
  size_t c = 0;
  for (size_t i = 0; i < net.num_nodes(); ++i) c += net.node(i).kind == kind;
  return c;
}

// The layer named `name` (layer names carry over; a marked output renames only its tensor).
const Node* layer(const Network& net, const std::string& name) {
  for (size_t i = 0; i < net.num_nodes(); ++i)
    if (net.node(i).name == name) return &net.node(i);
  ADD_FAILURE() << "no layer '" << name << "'";
  return nullptr;
}

// The output type of layer `name`; fp64 (no network's type here) when there is no such layer.
DataType output_type(const Network& net, const std::string& name) {
  const Node* node = layer(net, name);
  return node ? net.tensor(node->outputs[0]).desc.dtype : DataType::kFloat64;
}
DataType output_type(const Network& net, const Node& node) { return net.tensor(node.outputs[0]).desc.dtype; }

// x -> matmul -> exp -> sum over the last axis -> "total"; the exp and the sum are on the default
// keep-list.
Network kept_chain() {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {4, 16});
  Tensor h = net.matmul(x, net.add_constant(seeded(DataType::kFloat32, {16, 8}, 1)), MatMulAttributes().set_name("mm"));
  h = net.unary(h, UnaryAttributes().set_op(UnaryOp::kExp).set_name("exp"));
  h = net.reduce(h, ReduceAttributes().set_op(ReduceOp::kSum).set_axes({-1}).set_name("sum"));
  net.mark_output(h, "total");
  EXPECT_TRUE(net.status().is_ok()) << net.status().to_string();
  return net;
}

TEST(ConvertPrecision, TheKeepListStaysFp32WithOneCastAtEachBoundary) {
  const Network fp32 = kept_chain();
  PrecisionReport report;
  const Network converted = convert(fp32, DataType::kFloat16, &report);
  expect_well_formed(fp32, converted);
  EXPECT_EQ(output_type(converted, "mm"), DataType::kFloat16);
  EXPECT_EQ(output_type(converted, "exp"), DataType::kFloat32);
  // x -> fp16 before the matmul, its result -> fp32 before the exp; exp and sum meet in fp32.
  EXPECT_EQ(count(converted, OpKind::kCast), 2u);
  EXPECT_EQ(report.inserted_casts, 2u);
  EXPECT_EQ(report.converted_layers, 1u);
  EXPECT_EQ(report.converted_constants, 1u);
  EXPECT_EQ(report.kept, (std::map<std::string, size_t>{{"keep-list reduce.sum", 1}, {"keep-list unary.exp", 1}}));
  const std::vector<std::string> lines = report.lines(DataType::kFloat16);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "precision: 1 layer(s) converted to fp16, 1 constant(s) converted, 2 cast(s) inserted, 0 cast(s) of the network folded");
  EXPECT_EQ(lines[1], "precision: 1 layer(s) kept: keep-list reduce.sum");
}

TEST(ConvertPrecision, TheKeepListIsReplacedByKindOrByFunction) {
  const Network fp32 = kept_chain();
  // Nothing kept: the one cast back is after the sum, before the output.
  PrecisionReport nothing;
  const Network all = convert(fp32, DataType::kFloat16, &nothing, std::vector<std::string>{});
  EXPECT_EQ(output_type(all, "sum"), DataType::kFloat16);
  EXPECT_EQ(nothing.converted_layers, 3u);
  EXPECT_TRUE(nothing.kept.empty());
  EXPECT_EQ(count(all, OpKind::kCast), 2u);
  // A kind alone keeps each of its functions.
  PrecisionReport by_kind;
  const Network reduce_kept = convert(fp32, DataType::kFloat16, &by_kind, std::vector<std::string>{"reduce"});
  EXPECT_EQ(output_type(reduce_kept, "exp"), DataType::kFloat16);
  EXPECT_EQ(output_type(reduce_kept, "sum"), DataType::kFloat32);
  EXPECT_EQ(by_kind.kept, (std::map<std::string, size_t>{{"keep-list reduce", 1}}));
}

TEST(ConvertPrecision, AnUnknownKeepListEntryIsRefusedNamingIt) {
  PrecisionOptions options;
  options.keep_fp32 = {"unary.expp"};
  auto bad_function = convert_precision(kept_chain(), options);
  ASSERT_FALSE(bad_function.is_ok());
  EXPECT_NE(bad_function.status().message().find("'expp' is not a function of unary"), std::string::npos)
      << bad_function.status().message();
  options.keep_fp32 = {"softmaxx"};
  auto bad_kind = convert_precision(kept_chain(), options);
  ASSERT_FALSE(bad_kind.is_ok());
  EXPECT_NE(bad_kind.status().message().find("'softmaxx' is not an op kind"), std::string::npos) << bad_kind.status().message();
  options.keep_fp32 = {"softmax.max"};
  EXPECT_FALSE(convert_precision(kept_chain(), options).is_ok());
  options.keep_fp32 = {};
  options.compute = DataType::kInt8;
  EXPECT_FALSE(convert_precision(kept_chain(), options).is_ok());
}

// ids (int32) -> gather of an fp32 embedding table -> matmul -> "logits".
TEST(ConvertPrecision, AGatherOfEmbeddingsByIntegerIdsConvertsAndKeepsItsIdsInTheirType) {
  Network net;
  Tensor ids = net.add_input("ids", DataType::kInt32, {2, 3});
  Tensor table = net.add_constant(seeded(DataType::kFloat32, {10, 8}, 1), "table");
  Tensor e = net.gather(table, ids, GatherAttributes().set_name("embed"));
  Tensor y = net.matmul(e, net.add_constant(seeded(DataType::kFloat32, {8, 4}, 2)), MatMulAttributes().set_name("proj"));
  net.mark_output(y, "logits");
  ASSERT_TRUE(net.status().is_ok()) << net.status().to_string();

  for (DataType compute : {DataType::kFloat16, DataType::kBFloat16}) {
    PrecisionReport report;
    const Network converted = convert(net, compute, &report);
    expect_well_formed(net, converted);
    EXPECT_EQ(output_type(converted, "embed"), compute);
    EXPECT_EQ(converted.tensor(converted.inputs()[0]).desc.dtype, DataType::kInt32);
    EXPECT_EQ(output_type(converted, "proj"), compute);
    EXPECT_TRUE(report.kept.empty());
    EXPECT_EQ(report.inserted_casts, 1u);  // the output back to fp32, nothing around the gather

    const int32_t id_values[6] = {0, 9, 3, 3, 7, 1};
    const ArrayView id_view{DataType::kInt32, Dims{2, 3}, id_values};
    NamedArrays reference = run_cpu(net, {{"ids", id_view}});
    NamedArrays ours = run_cpu(converted, {{"ids", id_view}});
    ASSERT_TRUE(reference.count("logits") && ours.count("logits"));
    auto cmp = compare_outputs(ours.at("logits").view(), reference.at("logits").view());
    ASSERT_TRUE(cmp.is_ok());
    EXPECT_LT(cmp->rel_l2_error, compute == DataType::kFloat16 ? kFp16Tolerance : kBf16Tolerance);
  }
}

// x -> matmul -> gather by constant int64 indices (a token picked, a split of q/k/v) -> select by
// a bool mask -> matmul -> "y": the picks sit inside the converted region, with no cast around
// them; only an integer result (the comparison building the mask) keeps its layer.
TEST(ConvertPrecision, IndexAndConditionInputsDoNotSplitTheConvertedRegion) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {4, 8});
  Tensor h = net.matmul(x, net.add_constant(seeded(DataType::kFloat32, {8, 8}, 1)), MatMulAttributes().set_name("in"));
  HostArray index = HostArray::zeros(DataType::kInt64, {2}).value();
  index.data_as<int64_t>()[0] = 3;
  index.data_as<int64_t>()[1] = -4;
  Tensor picked = net.gather(h, net.add_constant(std::move(index)), GatherAttributes().set_name("pick"));
  Tensor positive = net.elementwise(picked, net.add_constant(seeded(DataType::kFloat32, {}, 2, 0.0)),
                                    ElementwiseAttributes().set_op(ElementwiseOp::kGreater).set_name("positive"));
  Tensor kept = net.select(positive, picked, net.add_constant(seeded(DataType::kFloat32, {2, 8}, 3)),
                           SelectAttributes().set_name("where"));
  Tensor y = net.matmul(kept, net.add_constant(seeded(DataType::kFloat32, {8, 4}, 4)), MatMulAttributes().set_name("out"));
  net.mark_output(y, "y");
  ASSERT_TRUE(net.status().is_ok()) << net.status().to_string();

  PrecisionReport report;
  const Network converted = convert(net, DataType::kFloat16, &report);
  expect_well_formed(net, converted);
  EXPECT_EQ(output_type(converted, "pick"), DataType::kFloat16);
  EXPECT_EQ(output_type(converted, "where"), DataType::kFloat16);
  EXPECT_EQ(report.kept, (std::map<std::string, size_t>{{"bool tensor", 1}}));
  // x in, y out, and the comparison's fp32 operand and threshold: nothing at the gather or select.
  size_t casts = 0;
  for (size_t i = 0; i < converted.num_nodes(); ++i)
    if (converted.node(i).kind == OpKind::kCast) {
      ++casts;
      const Tensor read = converted.node(i).inputs[0];
      EXPECT_NE(converted.tensor(read).name, "where") << "a cast reads the select";
    }
  EXPECT_EQ(casts, report.inserted_casts);
  EXPECT_EQ(report.inserted_casts, 3u);

  const float x_values[32] = {0.5f, -1, 2, 0.25f, 1, -0.5f, 0, 1.5f, -2, 1, 0.75f, -0.25f, 0.5f, 1, -1, 2,
                              1, 1, -1, 0.5f, 0.5f, -0.75f, 2, 0, 0.25f, 0.5f, -1.5f, 1, 1, -2, 0.5f, 0.25f};
  const ArrayView x_view{DataType::kFloat32, Dims{4, 8}, x_values};
  NamedArrays reference = run_cpu(net, {{"x", x_view}});
  NamedArrays ours = run_cpu(converted, {{"x", x_view}});
  ASSERT_TRUE(reference.count("y") && ours.count("y"));
  auto cmp = compare_outputs(ours.at("y").view(), reference.at("y").view());
  ASSERT_TRUE(cmp.is_ok());
  EXPECT_LT(cmp->rel_l2_error, kFp16Tolerance);
}

// x -> relu -> quantize (int8) -> dequantize -> matmul -> relu -> "y": the Q/DQ pair and its
// scales are untouched, and so are the layers next to it (the cuda backend fuses the pattern only
// when nothing stands between them), while the relu after the matmul converts.
TEST(ConvertPrecision, QuantizeAndDequantizeLayersAndTheirNeighboursKeepTheirTypes) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {4, 8});
  Tensor r = net.activation(x, ActivationAttributes().set_kind(ActivationKind::kRelu).set_name("before"));
  Tensor scale = net.add_constant(seeded(DataType::kFloat32, {}, 3, 0.1, 0.1), "scale");
  Tensor q = net.quantize(r, scale, QuantizeAttributes().set_name("q"));
  Tensor dq = net.dequantize(q, scale, DequantizeAttributes().set_name("dq"));
  Tensor y = net.matmul(dq, net.add_constant(seeded(DataType::kFloat32, {8, 4}, 4)), MatMulAttributes().set_name("mm"));
  y = net.activation(y, ActivationAttributes().set_kind(ActivationKind::kRelu).set_name("after"));
  net.mark_output(y, "y");
  ASSERT_TRUE(net.status().is_ok()) << net.status().to_string();

  PrecisionReport report;
  const Network converted = convert(net, DataType::kFloat16, &report);
  expect_well_formed(net, converted);
  EXPECT_EQ(output_type(converted, "q"), DataType::kInt8);
  EXPECT_EQ(output_type(converted, "dq"), DataType::kFloat32);
  EXPECT_EQ(converted.tensor(*converted.find_tensor("scale")).desc.dtype, DataType::kFloat32);
  EXPECT_EQ(output_type(converted, "before"), DataType::kFloat32);
  EXPECT_EQ(output_type(converted, "mm"), DataType::kFloat32);
  EXPECT_EQ(output_type(converted, "after"), DataType::kFloat16);
  EXPECT_EQ(report.kept, (std::map<std::string, size_t>{
                             {"quantize/dequantize", 2}, {"reads a dequantized tensor", 1}, {"feeds a quantize layer", 1}}));
}

TEST(ConvertPrecision, CastsOfTheNetworkFoldAndAConstantIsConvertedOnce) {
  Network net;
  Tensor n = net.add_input("n", DataType::kInt32, {4, 8});
  Tensor x = net.add_input("x", DataType::kFloat32, {4, 8});
  Tensor w = net.add_constant(seeded(DataType::kFloat32, {8, 8}, 5), "w");
  // int32 -> fp32 read by a converted add: one cast int32 -> fp16, never int32 -> fp32 -> fp16.
  Tensor sum = net.add(net.cast(n, DataType::kFloat32), x);
  Tensor a = net.matmul(sum, w, MatMulAttributes().set_name("a"));
  Tensor b = net.matmul(a, w, MatMulAttributes().set_name("b"));
  net.mark_output(b, "y");
  ASSERT_TRUE(net.status().is_ok()) << net.status().to_string();

  PrecisionReport report;
  const Network converted = convert(net, DataType::kFloat16, &report);
  expect_well_formed(net, converted);
  size_t fp16_constants = 0;
  for (size_t i = 0; i < converted.num_nodes(); ++i)
    if (converted.node(i).kind == OpKind::kConstant) fp16_constants += output_type(converted, converted.node(i)) == DataType::kFloat16;
  EXPECT_EQ(fp16_constants, 1u);
  EXPECT_EQ(report.converted_constants, 1u);
  EXPECT_EQ(report.folded_casts, 1u);
  // n -> fp16, x -> fp16, b -> fp32.
  EXPECT_EQ(count(converted, OpKind::kCast), 3u);
  bool int_to_fp16 = false;
  for (size_t i = 0; i < converted.num_nodes(); ++i) {
    const Node& node = converted.node(i);
    if (node.kind == OpKind::kCast && converted.tensor(node.inputs[0]).desc.dtype == DataType::kInt32)
      int_to_fp16 = output_type(converted, node) == DataType::kFloat16;
  }
  EXPECT_TRUE(int_to_fp16);
}

TEST(ConvertPrecision, AnFp16NetworkIsLeftAsItIs) {
  const Network by_hand = define(mlp, DataType::kFloat16);
  PrecisionReport report;
  const Network converted = convert(by_hand, DataType::kFloat16, &report);
  expect_well_formed(by_hand, converted);
  EXPECT_EQ(structural_hash(converted).value(), structural_hash(by_hand).value());
  EXPECT_EQ(report.converted_layers, 0u);
  EXPECT_EQ(count(converted, OpKind::kCast), count(by_hand, OpKind::kCast));
}

}  // namespace
}  // namespace tensoracle::passes
