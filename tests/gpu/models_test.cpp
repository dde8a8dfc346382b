// ResNet-50 and the BERT-base encoder as fp32 cuda engines against PyTorch fp32 (TF32 off):
// relative L2 error <= 1e-5 (issue 5's bar), no non-finite value. That bar compares two fp32
// results, so it can hold only where PyTorch's own fp32 output is well inside it; where PyTorch
// fp32 is itself further than half the bar from the fp64 result of the same weights and inputs
// (ResNet-50 with seeded weights: 1.2e-5), the engine must instead be at least as close to the
// fp64 result as PyTorch fp32 is (within 10%). Both numbers are printed. The weights, inputs and
// references are too big to commit; scripts/gen-model-references.py writes them and
// TENSORACLE_MODEL_FIXTURES names its --out directory (the test skips without it).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <iostream>
#include <vector>

#include "bert_encoder/bert_encoder.h"
#include "gpu/engine_on_device.h"
#include "resnet50/resnet50.h"
#include "tensoracle/compare.h"

namespace tensoracle {
namespace {

namespace fs = std::filesystem;

constexpr double kMaxRelL2 = 1e-5;

struct Model {
  std::string name;
  std::vector<std::string> inputs;
  std::string output;
  EngineBuild build;
};

void expect_matches_pytorch(Model model) {
  TO_SKIP_WITHOUT_GPU();
  const char* root = std::getenv("TENSORACLE_MODEL_FIXTURES");
  if (root == nullptr || *root == '\0')
    GTEST_SKIP() << "TENSORACLE_MODEL_FIXTURES is not set: run scripts/gen-model-references.py --out DIR "
                    "(needs torch) and point it at DIR";
  const fs::path dir = fs::path(root) / model.name;
  auto io = Weights::open((dir / "io.safetensors").string());
  ASSERT_TRUE(io.is_ok()) << io.status().to_string();

  NamedArrayViews inputs;
  for (const std::string& name : model.inputs) {
    auto view = io->view(name);
    ASSERT_TRUE(view.is_ok()) << view.status().to_string();
    inputs.emplace(name, *view);
    model.build.add_input(name, view->shape);
  }
  model.build.weights_path = (dir / "weights.safetensors").string();
  auto engine = testing::build_cuda_engine(model.build);
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  auto outputs = testing::run_on_device(*engine, inputs);
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().to_string();
  const HostArray& got = outputs->at(model.output);

  const auto reference = [&](const std::string& name) {
    auto view = io->view(name);
    EXPECT_TRUE(view.is_ok()) << view.status().to_string();
    return view.is_ok() ? *view : ArrayView{};
  };
  const auto error_vs = [&](const ArrayView& want, const char* what) {
    auto cmp = compare_outputs(got.view(), want);
    EXPECT_TRUE(cmp.is_ok()) << cmp.status().to_string();
    if (!cmp.is_ok()) return 1.0;
    std::cout << model.name << " cuda fp32 vs " << what << ": rel L2 " << cmp->rel_l2_error << ", max abs "
              << cmp->max_abs_error << " (max |reference| " << cmp->max_abs_reference << ")\n";
    EXPECT_EQ(cmp->candidate_non_finite.total(), 0);
    return cmp->rel_l2_error;
  };
  const ArrayView torch_fp32 = reference(model.output), torch_fp64 = reference(model.output + "_fp64");
  ASSERT_TRUE(torch_fp32.data != nullptr && torch_fp64.data != nullptr);
  const double vs_fp32 = error_vs(torch_fp32, "PyTorch fp32");
  const double vs_fp64 = error_vs(torch_fp64, "PyTorch fp64");
  auto torch_own = compare_outputs(torch_fp32, torch_fp64);
  ASSERT_TRUE(torch_own.is_ok()) << torch_own.status().to_string();
  std::cout << model.name << " PyTorch fp32 vs PyTorch fp64: rel L2 " << torch_own->rel_l2_error << "\n";
  if (torch_own->rel_l2_error <= kMaxRelL2 / 2) {
    EXPECT_LE(vs_fp32, kMaxRelL2);
  } else {
    std::cout << model.name << ": PyTorch fp32 is itself " << torch_own->rel_l2_error
              << " from fp64, so the bar is accuracy against fp64 no worse than PyTorch fp32's\n";
    EXPECT_LE(vs_fp64, 1.1 * torch_own->rel_l2_error);
  }
}

TEST(ModelsOnCuda, ResNet50Fp32MatchesPyTorch) {
  Model model{"resnet50", {resnet50::kInput}, resnet50::kOutput, {}};
  model.build.name = "resnet50";
  model.build.graph_version = "1";
  model.build.graph = [](Network& net, const Weights& w) {
    return resnet50::define(net, w, {2, 3, 224, 224}, DataType::kFloat32);
  };
  expect_matches_pytorch(std::move(model));
}

TEST(ModelsOnCuda, BertEncoderFp32MatchesPyTorch) {
  Model model{"bert_encoder", {bert_encoder::kInputIds, bert_encoder::kAttentionMask}, bert_encoder::kOutput, {}};
  model.build.name = "bert_encoder";
  model.build.graph_version = "1";
  model.build.graph = [](Network& net, const Weights& w) {
    return bert_encoder::define(net, w, 2, 128, DataType::kFloat32);
  };
  expect_matches_pytorch(std::move(model));
}

}  // namespace
}  // namespace tensoracle
