// The CPU reference backend against PyTorch. Fixtures (tests/fixtures/ops/*.safetensors) come
// from scripts/gen-op-references.py: per case, its inputs "<case>.in.<name>", torch's fp64
// outputs "<case>.out.<name>", and in the metadata "cases" a JSON list describing each case's
// layer ({"name", "op", "inputs": [name or null], "attrs": {...}, "outputs": [...],
// "atol", "rtol"}). Each case is built through the generic Network::add_layer, so the fixture
// also checks that the attribute names used here match the layer methods'.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "backends/registry.h"
#include "tensoracle/compare.h"
#include "tensoracle/safetensors.h"

namespace tensoracle::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> fixture_files() {
  std::vector<std::string> files;
  const fs::path dir = fs::path(TENSORACLE_FIXTURES_DIR) / "ops";
  if (fs::is_directory(dir))
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().extension() == ".safetensors") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

AttributeValue to_attribute(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  bool any_float = false;
  for (const auto& e : v) any_float |= e.is_number_float();
  if (any_float) return v.get<std::vector<double>>();
  return v.get<std::vector<int64_t>>();
}

class OpReference : public ::testing::TestWithParam<std::string> {};

TEST_P(OpReference, CpuBackendMatchesPyTorch) {
  auto file = Weights::open(GetParam());
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  const auto cases = nlohmann::json::parse(file->metadata().at("cases"));
  ASSERT_FALSE(cases.empty());
  auto cpu = backends::create_backend("cpu").value();
  for (const auto& c : cases) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    Network net;
    NamedArrayViews inputs;
    std::vector<Tensor> layer_inputs;
    for (const auto& in : c["inputs"]) {
      if (in.is_null()) {
        layer_inputs.push_back(Tensor{});
        continue;
      }
      const std::string tensor = in;
      auto view = file->view(name + ".in." + tensor);
      ASSERT_TRUE(view.is_ok()) << view.status().to_string();
      layer_inputs.push_back(net.add_input(tensor, view->dtype, view->shape));
      inputs[tensor] = *view;
    }
    AttributeMap attrs;
    for (const auto& [key, value] : c["attrs"].items()) attrs[key] = to_attribute(value);
    auto kind = parse_op_kind(c["op"].get<std::string>());
    ASSERT_TRUE(kind.has_value()) << c["op"];
    std::vector<Tensor> outs = net.add_layer(*kind, layer_inputs, attrs);
    ASSERT_TRUE(net.status().is_ok()) << net.status().to_string();
    ASSERT_EQ(outs.size(), c["outputs"].size());
    for (size_t i = 0; i < outs.size(); ++i) net.mark_output(outs[i], c["outputs"][i].get<std::string>());
    auto result = cpu->execute(net, inputs);
    ASSERT_TRUE(result.is_ok()) << result.status().to_string();
    for (const auto& out : c["outputs"]) {
      const std::string out_name = out;
      auto expected = file->view(name + ".out." + out_name);
      ASSERT_TRUE(expected.is_ok()) << expected.status().to_string();
      auto cmp = compare_outputs(result->at(out_name).view(), *expected, c["atol"].get<double>(), c["rtol"].get<double>());
      ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
      EXPECT_EQ(cmp->tolerance_check->outside_count, 0)
          << out_name << ": max abs error " << cmp->max_abs_error << ", rel L2 " << cmp->rel_l2_error << ", worst at "
          << (cmp->tolerance_check->worst ? Dims(cmp->tolerance_check->worst->index).to_string() : "-") << " got "
          << (cmp->tolerance_check->worst ? cmp->tolerance_check->worst->candidate : 0) << " want "
          << (cmp->tolerance_check->worst ? cmp->tolerance_check->worst->reference : 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, OpReference, ::testing::ValuesIn(fixture_files()), [](const auto& test_info) {
  return fs::path(test_info.param).stem().string();
});
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OpReference);

TEST(OpReferenceFixtures, Present) {
  if (fixture_files().empty())
    GTEST_SKIP() << "no tests/fixtures/ops/*.safetensors yet: run scripts/gen-op-references.py on a machine with torch";
}

}  // namespace
}  // namespace tensoracle::testing
