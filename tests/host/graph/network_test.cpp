// The Network definition API: inputs, constants, names, outputs, sticky errors, dumps.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tensoracle/network.h"

namespace tensoracle {
namespace {

HostArray filled(DataType type, Dims shape) { return HostArray::zeros(type, std::move(shape)).value(); }

TEST(Network, InputsCarryNameTypeAndDynamicDims) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat16, {-1, 3, 8});
  ASSERT_TRUE(net.status().is_ok());
  EXPECT_EQ(net.tensor(x).name, "x");
  EXPECT_EQ(net.tensor(x).desc.to_string(), "fp16[-1,3,8]");
  EXPECT_EQ(net.tensor(x).producer, -1);
  ASSERT_EQ(net.inputs().size(), 1u);
}

TEST(Network, LayerOutputsAreInferredAndNamedAfterTheLayer) {
  Network net;
  Tensor a = net.add_input("a", DataType::kFloat32, {2, 3});
  Tensor b = net.add_input("b", DataType::kFloat32, {3});
  Tensor y = net.elementwise(a, b, ElementwiseAttributes().set_op(ElementwiseOp::kMul).set_name("scale"));
  ASSERT_TRUE(net.status().is_ok()) << net.status().to_string();
  EXPECT_EQ(net.tensor(y).name, "scale");
  EXPECT_EQ(net.tensor(y).desc.to_string(), "fp32[2,3]");
  const Node& node = net.node(static_cast<size_t>(net.tensor(y).producer));
  EXPECT_EQ(node.kind, OpKind::kElementwise);
  ASSERT_NE(node.attributes<ElementwiseAttributes>(), nullptr);
  EXPECT_EQ(node.attributes<ElementwiseAttributes>()->op, ElementwiseOp::kMul);
  EXPECT_EQ(node.attributes<ElementwiseAttributes>()->name, "scale");
  EXPECT_EQ(node.attributes<UnaryAttributes>(), nullptr);
  EXPECT_EQ(std::get<std::string>(node.attribute_map().at("op")), "mul");
}

TEST(Network, GeneratedLayerNamesAreUnique) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {4});
  Tensor y = net.relu(net.relu(x));
  ASSERT_TRUE(net.status().is_ok());
  EXPECT_EQ(net.node(0).name, "activation_0");
  EXPECT_EQ(net.node(1).name, "activation_1");
  EXPECT_EQ(net.tensor(y).name, "activation_1");
}

TEST(Network, DuplicateLayerNameIsAnError) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {4});
  net.activation(x, ActivationAttributes().set_name("act"));
  Tensor y = net.activation(x, ActivationAttributes().set_name("act"));
  EXPECT_FALSE(y.valid());
  EXPECT_NE(net.status().message().find("'act'"), std::string::npos) << net.status().message();
}

TEST(Network, ErrorsAreStickyAndNameLayerTensorAndValue) {
  Network net;
  Tensor a = net.add_input("a", DataType::kFloat32, {2, 3});
  Tensor b = net.add_input("b", DataType::kFloat32, {4, 5});
  Tensor bad = net.matmul(a, b, MatMulAttributes().set_name("proj"));
  EXPECT_FALSE(bad.valid());
  Tensor after = net.relu(bad);  // quietly invalid: the first error is kept
  EXPECT_FALSE(after.valid());
  const std::string msg = net.status().message();
  EXPECT_EQ(net.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(msg.find("layer 'proj' (matmul)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'a' (fp32[2,3])"), std::string::npos) << msg;
  EXPECT_NE(msg.find("K=3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("K=4"), std::string::npos) << msg;
}

TEST(Network, NoImplicitTypePromotion) {
  Network net;
  Tensor a = net.add_input("a", DataType::kFloat32, {2});
  Tensor b = net.add_input("b", DataType::kFloat16, {2});
  EXPECT_FALSE(net.add(a, b).valid());
  EXPECT_NE(net.status().message().find("add a cast"), std::string::npos) << net.status().message();
  Network ok;
  Tensor c = ok.add_input("a", DataType::kFloat32, {2});
  Tensor d = ok.add_input("b", DataType::kFloat16, {2});
  EXPECT_TRUE(ok.add(c, ok.cast(d, DataType::kFloat32)).valid());
  EXPECT_TRUE(ok.status().is_ok());
}

TEST(Network, ConstantsHaveContentHashes) {
  Network net;
  Tensor c1 = net.add_constant(filled(DataType::kFloat32, {2, 2}), "w1");
  Tensor c2 = net.add_constant(filled(DataType::kFloat32, {4}), "w2");
  ASSERT_TRUE(net.status().is_ok());
  const auto& h1 = net.node(static_cast<size_t>(net.tensor(c1).producer)).constant->content_sha256;
  const auto& h2 = net.node(static_cast<size_t>(net.tensor(c2).producer)).constant->content_sha256;
  EXPECT_EQ(h1.size(), 64u);
  EXPECT_NE(h1, h2) << "same bytes, different shape: different identity";
}

TEST(Network, MarkOutputRenamesAndRejectsTakenNames) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {4});
  Tensor y = net.relu(x);
  net.mark_output(y, "y");
  ASSERT_TRUE(net.status().is_ok());
  EXPECT_EQ(net.tensor(y).name, "y");
  ASSERT_EQ(net.outputs().size(), 1u);
  EXPECT_TRUE(net.find_tensor("y").is_ok());
  net.mark_output(net.relu(y), "x");
  EXPECT_FALSE(net.status().is_ok());
}

TEST(Network, InvalidDimsAreRejected) {
  Network net;
  net.add_input("x", DataType::kFloat32, {2, -3});
  EXPECT_NE(net.status().message().find("-3"), std::string::npos);
}

TEST(Network, JsonDumpListsLayersWithAttributes) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {1, 8});
  net.mark_output(net.softmax(x, SoftmaxAttributes().set_axis(1).set_name("probs")), "probs");
  auto doc = nlohmann::json::parse(to_json(net));
  ASSERT_EQ(doc["layers"].size(), 1u);
  EXPECT_EQ(doc["layers"][0]["kind"], "softmax");
  EXPECT_EQ(doc["layers"][0]["attributes"]["axis"], 1);
  EXPECT_EQ(doc["outputs"][0]["shape"], nlohmann::json({1, 8}));
  EXPECT_NE(to_text(net).find("layer  probs = softmax(x) [axis=1]"), std::string::npos) << to_text(net);
}

TEST(Network, CopiesAreIndependent) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {4});
  Network copy = net;
  copy.relu(x);
  EXPECT_EQ(net.num_nodes(), 0u);
  EXPECT_EQ(copy.num_nodes(), 1u);
}

}  // namespace
}  // namespace tensoracle

namespace tensoracle {
namespace {

TEST(NetworkJson, RoundTripKeepsTheStructuralHash) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {-1, 3, 8, 8});
  HostArray w = HostArray::zeros(DataType::kFloat32, {4, 3, 3, 3}).value();
  for (int64_t i = 0; i < w.element_count(); ++i) w.data_as<float>()[i] = 0.01f * static_cast<float>(i);
  Tensor y = net.convolution(x, net.add_constant(std::move(w), "w"), {},
                             ConvolutionAttributes().set_padding({1, 1}).set_name("conv"));
  y = net.activation(y, ActivationAttributes().set_kind(ActivationKind::kLeakyRelu).set_alpha(0.2));
  TopKOutputs top = net.top_k(net.reduce(y, ReduceAttributes().set_axes({2, 3})), TopKAttributes().set_k(2));
  net.mark_output(top.values, "values");
  net.mark_output(top.indices, "indices");
  ASSERT_TRUE(net.status().is_ok()) << net.status().to_string();

  const Node& constant = net.node(0);
  ConstantResolver resolver = [&](const std::string& layer, const std::string&, const std::string&) -> Result<ConstantBytes> {
    EXPECT_EQ(layer, "w");
    return ConstantBytes{constant.constant->view, constant.constant->owner};
  };
  auto back = network_from_json(to_json(net), resolver);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(structural_hash(*back).value(), structural_hash(net).value());
  EXPECT_EQ(to_json(*back), to_json(net));
}

TEST(NetworkJson, RejectsConstantsWithOtherBytesAndMalformedDocuments) {
  Network net;
  Tensor c = net.add_constant(HostArray::zeros(DataType::kFloat32, {2}).value(), "c");
  net.mark_output(net.relu(c), "y");
  auto other = std::make_shared<HostArray>(HostArray::zeros(DataType::kFloat32, {2}).value());
  other->data_as<float>()[1] = 1.0f;
  ConstantResolver resolver = [&](const std::string&, const std::string&, const std::string&) -> Result<ConstantBytes> {
    return ConstantBytes{other->view(), other};
  };
  auto back = network_from_json(to_json(net), resolver);
  EXPECT_EQ(back.status().code(), StatusCode::kCorruptData) << back.status().to_string();
  EXPECT_NE(back.status().message().find("network JSON: /layers/0: constant 'c'"), std::string::npos) << back.status().message();
  EXPECT_FALSE(network_from_json("not json", resolver).is_ok());
  // A malformed document is an error naming the field (a caller's mistake), never an exception.
  struct Malformed {
    std::string text, message;
    StatusCode code;
  };
  for (const Malformed& m : std::vector<Malformed>{
           {"{\"inputs\": 3}", "network JSON: /inputs: expected an array, got 3", StatusCode::kInvalidArgument},
           {"{\"inputs\": [{\"name\": \"x\", \"dtype\": \"fp32\"}]}", "network JSON: /inputs/0: missing field 'shape'",
            StatusCode::kInvalidArgument},
           {"{\"inputs\": [], \"layers\": [{\"name\": 7}]}", "network JSON: /layers/0/name: expected a string, got 7",
            StatusCode::kInvalidArgument},
           {"{\"inputs\": [], \"layers\": [], \"outputs\": [{\"name\": \"nowhere\"}]}",
            "network JSON: /outputs/0: ", StatusCode::kNotFound}}) {
    auto bad = network_from_json(m.text, resolver);
    ASSERT_FALSE(bad.is_ok()) << m.text;
    EXPECT_EQ(bad.status().code(), m.code) << bad.status().to_string();
    EXPECT_EQ(bad.status().message().rfind(m.message, 0), 0u) << bad.status().message();
  }
}

}  // namespace
}  // namespace tensoracle
