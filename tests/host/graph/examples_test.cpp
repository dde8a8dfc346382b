// The example model packages on the CPU backend against PyTorch (fixtures from
// scripts/gen-example-models.py): relative L2 <= 1e-6 and max-abs <= 1e-5 against the fp32
// PyTorch output, and the same limits against PyTorch's fp64 output of the same weights.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <iostream>

#include "backends/registry.h"
#include "tensoracle/compare.h"
#include "tensoracle/safetensors.h"
#include "tiny_transformer/tiny_transformer.h"
#include "tinynet/tinynet.h"

namespace tensoracle {
namespace {

namespace fs = std::filesystem;

struct Example {
  const char* name;
  const char* input;
  const char* output;
  std::function<Status(Network&, const Weights&, const Dims&)> define;
};

void check_example(const Example& ex) {
  const fs::path dir = fs::path(TENSORACLE_FIXTURES_DIR) / "examples" / ex.name;
  if (!fs::exists(dir / "io.safetensors"))
    GTEST_SKIP() << "no fixtures in " << dir << ": run scripts/gen-example-models.py on a machine with torch";
  auto weights = Weights::open((dir / "weights.safetensors").string());
  ASSERT_TRUE(weights.is_ok()) << weights.status().to_string();
  auto io = Weights::open((dir / "io.safetensors").string());
  ASSERT_TRUE(io.is_ok()) << io.status().to_string();
  auto input = io->view(ex.input);
  ASSERT_TRUE(input.is_ok()) << input.status().to_string();

  Network net;
  ASSERT_TRUE(ex.define(net, *weights, input->shape).is_ok()) << net.status().to_string();
  auto cpu = backends::create_backend("cpu").value();
  auto outputs = cpu->execute(net, {{ex.input, *input}});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().to_string();
  const HostArray& got = outputs->at(ex.output);
  for (const std::string& ref_name : {std::string(ex.output), std::string(ex.output) + "_fp64"}) {
    auto reference = io->view(ref_name);
    ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
    auto cmp = compare_outputs(got.view(), *reference);
    ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
    EXPECT_LE(cmp->rel_l2_error, 1e-6) << ex.name << " vs " << ref_name;
    EXPECT_LE(cmp->max_abs_error, 1e-5) << ex.name << " vs " << ref_name;
    EXPECT_EQ(cmp->candidate_non_finite.total(), 0);
    std::cout << ex.name << " vs " << ref_name << ": rel L2 " << cmp->rel_l2_error << ", max abs "
              << cmp->max_abs_error << "\n";
  }
}

TEST(Examples, TinyNetMatchesPyTorch) {
  check_example({"tinynet", tinynet::kInput, tinynet::kOutput,
                 [](Network& net, const Weights& w, const Dims& shape) { return tinynet::define(net, w, shape); }});
}

TEST(Examples, TinyTransformerMatchesPyTorch) {
  check_example({"tiny_transformer", tiny_transformer::kInput, tiny_transformer::kOutput,
                 [](Network& net, const Weights& w, const Dims& shape) {
                   return tiny_transformer::define(net, w, shape[0], shape[1]);
                 }});
}

}  // namespace
}  // namespace tensoracle
