// The deformable example (examples/deformable) on the cpu backend, the three forms of its
// deformable convolution: the composition (grid_sample + mask + matmul), the tensoracle::dcnv2
// plugin (libtensoracle_plugins.so) and the example's own deformable::deform_sample cubin plugin
// (libdeform_sample_plugin.so) followed by a matmul. Against PyTorch with torchvision's
// deform_conv2d (fixtures from scripts/gen-deformable-references.py):
// - each fp32 form within rel L2 1e-6 and max abs 1e-5 of PyTorch's fp32 and fp64 outputs;
// - the plugin forms' fp32 outputs within rel L2 1e-6 of the composition's;
// - each fp16 form within rel L2 5e-3 of its fp32 form (fp16 layers; the composition's sampling
//   grid in fp16 moves samples by up to ~0.004 pixel).
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include "backends/registry.h"
#include "deformable/deformable.h"
#include "tensoracle/compare.h"
#include "tensoracle/plugin_registry.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

namespace fs = std::filesystem;
using deformable::Form;

const fs::path kFixtures = fs::path(TENSORACLE_FIXTURES_DIR) / "examples" / "deformable";

struct Fixtures {
  Weights weights;
  Weights io;
};

Fixtures open_fixtures() {
  auto weights = Weights::open((kFixtures / "weights.safetensors").string());
  EXPECT_TRUE(weights.is_ok()) << weights.status().to_string();
  auto io = Weights::open((kFixtures / "io.safetensors").string());
  EXPECT_TRUE(io.is_ok()) << io.status().to_string();
  return {std::move(*weights), std::move(*io)};
}

HostArray run(const Fixtures& f, DataType precision, Form form) {
  PluginRegistry plugins;
  for (const char* library : {TENSORACLE_PLUGINS_LIBRARY, DEFORM_SAMPLE_PLUGIN_LIBRARY}) {
    const Status loaded = plugins.load_library(library);
    EXPECT_TRUE(loaded.is_ok()) << loaded.to_string();
  }
  const ArrayView image = f.io.view(deformable::kInput).value();
  Network net;
  net.set_plugins(plugins);
  const Status defined = deformable::define(net, f.weights, image.shape, precision, form);
  EXPECT_TRUE(defined.is_ok()) << defined.to_string();
  auto cpu = backends::create_backend("cpu").value();
  auto outputs = cpu->execute(net, {{deformable::kInput, image}});
  EXPECT_TRUE(outputs.is_ok()) << outputs.status().to_string();
  return outputs.is_ok() ? std::move(outputs->at(deformable::kOutput)) : HostArray{};
}

OutputComparison compare(const HostArray& got, const ArrayView& reference, const std::string& what) {
  auto cmp = compare_outputs(got.view(), reference);
  EXPECT_TRUE(cmp.is_ok()) << cmp.status().to_string();
  if (!cmp.is_ok()) return {};
  EXPECT_EQ(cmp->candidate_non_finite.total(), 0) << what;
  std::cout << what << ": rel L2 " << cmp->rel_l2_error << ", max abs " << cmp->max_abs_error << "\n";
  return *cmp;
}

const char* form_name(Form form) {
  switch (form) {
    case Form::kComposition: return "composition form";
    case Form::kPlugin: return "dcnv2 plugin form";
    case Form::kCustomPlugin: return "custom plugin form";
  }
  return "?";
}

constexpr Form kForms[] = {Form::kComposition, Form::kPlugin, Form::kCustomPlugin};

TEST(DeformableExample, EachFp32FormMatchesPyTorch) {
  const Fixtures f = open_fixtures();
  for (Form form : kForms) {
    const HostArray got = run(f, DataType::kFloat32, form);
    for (const char* reference : {"out", "out_fp64"}) {
      const OutputComparison cmp =
          compare(got, f.io.view(reference).value(), std::string(form_name(form)) + " vs PyTorch " + reference);
      EXPECT_LE(cmp.rel_l2_error, 1e-6) << form_name(form) << " vs " << reference;
      EXPECT_LE(cmp.max_abs_error, 1e-5) << form_name(form) << " vs " << reference;
    }
  }
}

TEST(DeformableExample, ThePluginFormsMatchTheComposition) {
  const Fixtures f = open_fixtures();
  const HostArray composed = run(f, DataType::kFloat32, Form::kComposition);
  for (Form form : {Form::kPlugin, Form::kCustomPlugin}) {
    const HostArray plugin = run(f, DataType::kFloat32, form);
    EXPECT_LE(compare(plugin, composed.view(), std::string(form_name(form)) + " vs composition form").rel_l2_error, 1e-6);
  }
}

TEST(DeformableExample, Fp16FormsMatchTheirFp32Form) {
  const Fixtures f = open_fixtures();
  for (Form form : kForms) {
    const HostArray fp32 = run(f, DataType::kFloat32, form);
    const HostArray fp16 = run(f, DataType::kFloat16, form);
    const OutputComparison cmp = compare(fp16, fp32.view(), std::string(form_name(form)) + " fp16 vs fp32");
    EXPECT_LE(cmp.rel_l2_error, 5e-3) << form_name(form);
    EXPECT_GT(cmp.rel_l2_error, 0.0) << form_name(form) << ": the fp16 form computes in fp16";
  }
}

}  // namespace
}  // namespace tensoracle
