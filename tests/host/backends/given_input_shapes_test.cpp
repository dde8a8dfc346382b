// The inputs of a direct run (Backend::execute), checked once for every backend
// (backends/plan_network.h given_input_shapes): each error names the backend, the input and what
// is wrong with it.
#include <gtest/gtest.h>

#include "backends/plan_network.h"

namespace tensoracle::backends {
namespace {

struct TwoInputs {
  Network net;
  HostArray x = HostArray::zeros(DataType::kFloat32, {3, 4}).value();
  HostArray y = HostArray::zeros(DataType::kFloat32, {1, 4}).value();
  TwoInputs() {
    Tensor a = net.add_input("x", DataType::kFloat32, {-1, 4});
    Tensor b = net.add_input("y", DataType::kFloat32, {1, 4});
    net.mark_output(net.add(a, b), "z");
  }
};

std::string error_of(const Network& net, const NamedArrayViews& inputs) {
  auto shapes = given_input_shapes(net, inputs, "cpu backend");
  return shapes.is_ok() ? "ok" : shapes.status().to_string();
}

TEST(GivenInputShapes, AreTheArraysShapesWhenEveryInputFits) {
  TwoInputs t;
  auto shapes = given_input_shapes(t.net, {{"x", t.x.view()}, {"y", t.y.view()}}, "cpu backend");
  ASSERT_TRUE(shapes.is_ok()) << shapes.status().to_string();
  EXPECT_EQ(shapes->at("x"), Dims({3, 4}));
  EXPECT_EQ(shapes->at("y"), Dims({1, 4}));
}

TEST(GivenInputShapes, NameTheBackendTheInputAndTheMismatch) {
  TwoInputs t;
  EXPECT_EQ(error_of(t.net, {{"x", t.x.view()}}), "invalid_argument: cpu backend: input 'y' (fp32[1,4]) was not given");
  EXPECT_EQ(error_of(t.net, {{"x", t.x.view()}, {"y", t.y.view()}, {"z", t.y.view()}}),
            "invalid_argument: cpu backend: 'z' is not an input of the network");
  EXPECT_EQ(error_of(t.net, {{"x", t.x.view()}, {"y", t.x.view()}}),
            "invalid_argument: cpu backend: input 'y' is fp32[3,4] but the network declares fp32[1,4]");
  HostArray ints = HostArray::zeros(DataType::kInt32, {3, 4}).value();
  EXPECT_EQ(error_of(t.net, {{"x", ints.view()}, {"y", t.y.view()}}),
            "invalid_argument: cpu backend: input 'x' is int32[3,4] but the network declares fp32[-1,4]");
}

}  // namespace
}  // namespace tensoracle::backends
