// The CPU reference backend against PyTorch and NumPy. Fixtures come from
// scripts/gen-op-references.py (tests/fixtures/ops/*.safetensors: torch's fp64 results, compared
// within each case's tolerances) and scripts/gen-numpy-op-references.py
// (tests/fixtures/ops_numpy/*.safetensors: NumPy's results of functions it defines exactly on
// edge cases, compared bit for bit: NaN to NaN, and the sign of zeros). Per case a file holds its
// inputs "<case>.in.<name>", the reference outputs "<case>.out.<name>", and in the metadata
// "cases" a JSON list describing each case's layer ({"name", "op", "inputs": [name or null],
// "attrs": {...}, "outputs": [...], and for PyTorch "atol", "rtol"}). Each case is built through
// the generic Network::add_layer, so the fixtures also check that the attribute names used here
// match the layer methods'.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "backends/registry.h"
#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/safetensors.h"

namespace tensoracle::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> fixture_files(const char* folder) {
  std::vector<std::string> files;
  const fs::path dir = fs::path(TENSORACLE_FIXTURES_DIR) / folder;
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

// The case's one-layer network, with its inputs' views into the fixture.
void build_case(const Weights& file, const nlohmann::json& c, Network& net, NamedArrayViews& inputs) {
  const std::string name = c["name"];
  std::vector<Tensor> layer_inputs;
  for (const auto& in : c["inputs"]) {
    if (in.is_null()) {
      layer_inputs.push_back(Tensor{});
      continue;
    }
    const std::string tensor = in;
    auto view = file.view(name + ".in." + tensor);
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
}

// Runs every case of the fixture `path` on the CPU backend and hands each output, with the case
// and the fixture's expected array, to `check`.
void for_each_output(const std::string& path,
                     const std::function<void(const nlohmann::json& c, const HostArray& got, const ArrayView& expected)>& check) {
  auto file = Weights::open(path);
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  const auto cases = nlohmann::json::parse(file->metadata().at("cases"));
  ASSERT_FALSE(cases.empty());
  auto cpu = backends::create_backend("cpu").value();
  for (const auto& c : cases) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    Network net;
    NamedArrayViews inputs;
    ASSERT_NO_FATAL_FAILURE(build_case(*file, c, net, inputs));
    auto result = cpu->execute(net, inputs);
    ASSERT_TRUE(result.is_ok()) << result.status().to_string();
    for (const auto& out : c["outputs"]) {
      const std::string out_name = out;
      SCOPED_TRACE(out_name);
      auto expected = file->view(name + ".out." + out_name);
      ASSERT_TRUE(expected.is_ok()) << expected.status().to_string();
      check(c, result->at(out_name), *expected);
    }
  }
}

class OpReference : public ::testing::TestWithParam<std::string> {};

TEST_P(OpReference, CpuBackendMatchesPyTorch) {
  for_each_output(GetParam(), [](const nlohmann::json& c, const HostArray& got, const ArrayView& expected) {
    auto cmp = compare_outputs(got.view(), expected, c["atol"].get<double>(), c["rtol"].get<double>());
    ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
    EXPECT_EQ(cmp->tolerance_check->outside_count, 0)
        << "max abs error " << cmp->max_abs_error << ", rel L2 " << cmp->rel_l2_error << ", worst at "
        << (cmp->tolerance_check->worst ? Dims(cmp->tolerance_check->worst->index).to_string() : "-") << " got "
        << (cmp->tolerance_check->worst ? cmp->tolerance_check->worst->candidate : 0) << " want "
        << (cmp->tolerance_check->worst ? cmp->tolerance_check->worst->reference : 0);
  });
}

class NumpyReference : public ::testing::TestWithParam<std::string> {};

TEST_P(NumpyReference, CpuBackendMatchesNumpyBitForBit) {
  for_each_output(GetParam(), [](const nlohmann::json&, const HostArray& got, const ArrayView& expected) {
    ASSERT_EQ(got.dtype(), expected.dtype);
    ASSERT_EQ(got.shape(), expected.shape);
    for (int64_t i = 0; i < got.element_count(); ++i) {
      const double g = load_as_double(got.dtype(), got.data(), static_cast<size_t>(i));
      const double e = load_as_double(expected.dtype, expected.data, static_cast<size_t>(i));
      const bool same = (std::isnan(g) && std::isnan(e)) || (g == e && std::signbit(g) == std::signbit(e));
      EXPECT_TRUE(same) << "element " << i << ": got " << g << ", numpy " << e;
    }
  });
}

std::string stem(const ::testing::TestParamInfo<std::string>& info) { return fs::path(info.param).stem().string(); }

INSTANTIATE_TEST_SUITE_P(Fixtures, OpReference, ::testing::ValuesIn(fixture_files("ops")), stem);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OpReference);
INSTANTIATE_TEST_SUITE_P(Fixtures, NumpyReference, ::testing::ValuesIn(fixture_files("ops_numpy")), stem);

TEST(OpReferenceFixtures, Present) {
  EXPECT_FALSE(fixture_files("ops_numpy").empty()) << "scripts/gen-numpy-op-references.py writes them (numpy only)";
  if (fixture_files("ops").empty())
    GTEST_SKIP() << "no tests/fixtures/ops/*.safetensors yet: run scripts/gen-op-references.py on a machine with torch";
}

}  // namespace
}  // namespace tensoracle::testing
