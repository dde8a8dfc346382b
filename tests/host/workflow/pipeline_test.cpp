// Reading pipeline files: the bundled example, and every kind of bad input named by file, line,
// key and reason.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "host/cache/cache_testing.h"
#include "tensoracle/workflow.h"

namespace tensoracle {
namespace {

const std::string kExample = std::string(TENSORACLE_SOURCE_DIR) + "/examples/tinynet/pipeline.toml";

TEST(Pipeline, TheBundledExampleReads) {
  auto p = load_pipeline(kExample);
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->fp32_graph, "tinynet");
  EXPECT_EQ(p->backend, "cpu");
  EXPECT_EQ(p->inputs.arrays.at("image"), "image");
  EXPECT_EQ(p->reference.arrays.at("probs"), "probs");
  EXPECT_NE(p->inputs.file.find("tests/fixtures/examples/tinynet/io.safetensors"), std::string::npos) << p->inputs.file;
  ASSERT_EQ(p->stage2.size(), 2u);
  EXPECT_EQ(p->stage2[1].name, "bf16");
  EXPECT_EQ(p->stage2[1].kind, "graph");
  ASSERT_EQ(p->stage3.size(), 2u);
  ASSERT_EQ(p->measures.size(), 1u);
  EXPECT_EQ(p->measures[0].kind, "topk_agreement");
  EXPECT_TRUE(p->stage4.enabled);
  EXPECT_EQ(p->stage4.batch, 32);
  EXPECT_EQ(p->stage4.min_speedup, 1.2);
  EXPECT_EQ(p->stage4.backend_min_speedup.at("cpu"), 0.8);
  EXPECT_EQ(p->stage1_limits.defaults.max_abs_error, 1e-5);  // examples/tinynet/limits.json
  EXPECT_EQ(p->stage2_limits.defaults.max_rel_l2_error, 1e-3);
  EXPECT_EQ(p->sha256.size(), 64u);
}

class BadPipeline : public ::testing::Test {
 protected:
  // Writes `text` as a pipeline (with a limits file beside it) and returns the load error.
  std::string error_of(const std::string& text) {
    std::ofstream(dir_.path() + "/limits.json") << R"({"default": {"max_abs_error": 1e-5}})";
    const std::string path = dir_.path() + "/pipeline.toml";
    std::ofstream(path) << text;
    auto p = load_pipeline(path);
    EXPECT_FALSE(p.is_ok()) << "accepted:\n" << text;
    return p.is_ok() ? "" : p.status().message();
  }
  testing::TempDir dir_;
};

const std::string kMinimal = R"(
[model]
package = "pkg.so"
[inputs]
file = "io.npz"
[reference]
file = "io.npz"
[stage1]
graph = "net"
limits = "limits.json"
)";

TEST_F(BadPipeline, AMinimalPipelineReads) {
  std::ofstream(dir_.path() + "/limits.json") << R"({"default": {"max_abs_error": 1e-5}})";
  std::ofstream(dir_.path() + "/pipeline.toml") << kMinimal;
  auto p = load_pipeline(dir_.path() + "/pipeline.toml");
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->package, dir_.path() + "/pkg.so");
  EXPECT_TRUE(p->inputs.arrays.empty());
  EXPECT_TRUE(p->stage2.empty());
  EXPECT_FALSE(p->stage4.enabled);
  EXPECT_FALSE(p->fp8_fast_accumulation);
}

TEST_F(BadPipeline, Fp8FastAccumulationIsABooleanOfTheModel) {
  std::ofstream(dir_.path() + "/limits.json") << R"({"default": {"max_abs_error": 1e-5}})";
  std::string text = kMinimal;
  text.insert(text.find("[inputs]"), "fp8_fast_accumulation = true\n");
  std::ofstream(dir_.path() + "/pipeline.toml") << text;
  auto p = load_pipeline(dir_.path() + "/pipeline.toml");
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_TRUE(p->fp8_fast_accumulation);
  text.replace(text.find("= true"), 6, "= \"yes\"");
  const std::string e = error_of(text);
  EXPECT_NE(e.find("model.fp8_fast_accumulation: expected true or false, found string"), std::string::npos) << e;
}

TEST_F(BadPipeline, SyntaxErrorsGiveLineAndColumn) {
  const std::string e = error_of("[model\npackage = 1\n");
  EXPECT_NE(e.find("pipeline.toml:1:"), std::string::npos) << e;
}

TEST_F(BadPipeline, UnknownKeysAreNamedWithTheirLine) {
  const std::string e = error_of(kMinimal + "[[stage2.candidate]]\ngrpah = \"x\"\n");
  EXPECT_NE(e.find("stage2"), std::string::npos) << e;
  const std::string e2 = error_of(kMinimal + "[stage4]\nmin_speedup = 1.2\nbatchh = 3\n");
  EXPECT_NE(e2.find("pipeline.toml:13:"), std::string::npos) << e2;
  EXPECT_NE(e2.find("stage4.batchh: unknown key"), std::string::npos) << e2;
  const std::string e3 = error_of(std::string("titel = \"x\"\n") + kMinimal);
  EXPECT_NE(e3.find("titel: unknown key"), std::string::npos) << e3;
}

TEST_F(BadPipeline, WrongTypesNameBothTypes) {
  const std::string e = error_of(kMinimal + "[stage4]\nmin_speedup = \"fast\"\n");
  EXPECT_NE(e.find("stage4.min_speedup: expected a number, found string"), std::string::npos) << e;
  const std::string e2 = error_of(kMinimal + "[stage4]\nmin_speedup = 1.2\nbatch = 3.5\n");
  EXPECT_NE(e2.find("stage4.batch: expected an integer, found float"), std::string::npos) << e2;
}

TEST_F(BadPipeline, MissingTablesAndKeysAreNamed) {
  EXPECT_NE(error_of("[inputs]\nfile = \"a\"\n").find("[model] is required"), std::string::npos);
  const std::string e = error_of(R"(
[model]
package = "p.so"
[inputs]
file = "io.npz"
[reference]
file = "io.npz"
[stage1]
limits = "limits.json"
)");
  EXPECT_NE(e.find("stage1: the key 'graph' is required"), std::string::npos) << e;
  EXPECT_NE(error_of(kMinimal + "[stage4]\nbatch = 3\n").find("'min_speedup' is required"), std::string::npos);
}

TEST_F(BadPipeline, ValuesOutOfRangeAreRefused) {
  EXPECT_NE(error_of(kMinimal + "[stage4]\nmin_speedup = -1\n").find("must be > 0"), std::string::npos);
  EXPECT_NE(error_of(kMinimal + "[stage4]\nmin_speedup = 1\nconfidence = 1.5\n").find("stage4.confidence"), std::string::npos);
  EXPECT_NE(error_of(kMinimal + "[stage4]\nmin_speedup = 1\nmode = \"fastest\"\n").find("unknown timing mode"), std::string::npos);
  EXPECT_NE(error_of(kMinimal + "[stage4]\nmin_speedup = 1\n[stage4.backend.tpu]\nmin_speedup = -2\n").find("stage4.backend.tpu.min_speedup"),
            std::string::npos);
}

TEST_F(BadPipeline, CandidateKindsOfLaterVersionsAreRefusedByName) {
  const std::string e = error_of(kMinimal + "[stage2]\nlimits = \"limits.json\"\n[[stage2.candidate]]\ngraph = \"g\"\nkind = \"plugin\"\n");
  EXPECT_NE(e.find("'plugin' is not a candidate kind of this version"), std::string::npos) << e;
}

TEST_F(BadPipeline, CandidateNamesAreUnique) {
  const std::string e = error_of(kMinimal +
                                 "[stage2]\nlimits = \"limits.json\"\n[[stage2.candidate]]\ngraph = \"a\"\nname = \"x\"\n"
                                 "[[stage2.candidate]]\ngraph = \"b\"\nname = \"x\"\n");
  EXPECT_NE(e.find("'x' is used twice"), std::string::npos) << e;
}

TEST_F(BadPipeline, AMeasureNeedsABoundAndItsKindsKeys) {
  const std::string head = kMinimal + "[stage2]\nlimits = \"limits.json\"\n[[stage2.measure]]\nname = \"m\"\n";
  EXPECT_NE(error_of(head + "kind = \"psnr\"\n").find("needs a bound"), std::string::npos);
  EXPECT_NE(error_of(head + "kind = \"command\"\nmin = 1\n").find("needs command"), std::string::npos);
  EXPECT_NE(error_of(head + "kind = \"psnr\"\nk = 3\nmin = 1\n").find("only a topk_agreement measure has k"), std::string::npos);
  EXPECT_NE(error_of(head + "kind = \"ssim\"\nmin = 1\n").find("known: psnr, snr, topk_agreement, command"), std::string::npos);
  EXPECT_NE(error_of(kMinimal + "[stage2]\nlimits = \"limits.json\"\n[[stage2.measure]]\nname = \"Top-1\"\nkind = \"psnr\"\nmin = 1\n")
                .find("lower-case"),
            std::string::npos);
}

TEST_F(BadPipeline, InlineLimitsAreCheckedLikeALimitsFile) {
  const std::string e = error_of(kMinimal + "[stage2]\nlimits = { default = { max_abs_eror = 1 } }\n");
  EXPECT_NE(e.find("max_abs_eror"), std::string::npos) << e;
  EXPECT_NE(e.find("stage2.limits"), std::string::npos) << e;
}

TEST_F(BadPipeline, ALimitsFileThatDoesNotExistIsNamed) {
  const std::string e = error_of(kMinimal + "[stage2]\nlimits = \"nowhere.json\"\n");
  EXPECT_NE(e.find("nowhere.json"), std::string::npos) << e;
}

TEST_F(BadPipeline, EnvironmentVariablesInPathsMustBeSet) {
  ::unsetenv("TENSORACLE_TEST_UNSET_VARIABLE");
  std::string text = kMinimal;
  text.replace(text.find("pkg.so"), 6, "${TENSORACLE_TEST_UNSET_VARIABLE}/pkg.so");
  const std::string e = error_of(text);
  EXPECT_NE(e.find("TENSORACLE_TEST_UNSET_VARIABLE, which is not set"), std::string::npos) << e;
  ::setenv("TENSORACLE_TEST_SET_VARIABLE", "/opt/models", 1);
  text = kMinimal;
  text.replace(text.find("pkg.so"), 6, "${TENSORACLE_TEST_SET_VARIABLE}/pkg.so");
  std::ofstream(dir_.path() + "/limits.json") << R"({"default": {"max_abs_error": 1e-5}})";
  std::ofstream(dir_.path() + "/p2.toml") << text;
  auto p = load_pipeline(dir_.path() + "/p2.toml");
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->package, "/opt/models/pkg.so");
}

TEST_F(BadPipeline, AMissingFileIsNamed) {
  auto p = load_pipeline(dir_.path() + "/absent.toml");
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("absent.toml"), std::string::npos);
}

}  // namespace
}  // namespace tensoracle

namespace tensoracle {
namespace {

TEST(Pipeline, TheGpuPipelinesRead) {
  ::setenv("TENSORACLE_MODEL_FIXTURES", "/models", 1);
  for (const char* model : {"resnet50", "bert_encoder"}) {
    auto p = load_pipeline(std::string(TENSORACLE_SOURCE_DIR) + "/examples/" + model + "/pipeline.toml");
    ASSERT_TRUE(p.is_ok()) << model << ": " << p.status().to_string();
    EXPECT_EQ(p->backend, "cuda") << model;
    EXPECT_EQ(p->weights, std::string("/models/") + model + "/weights.safetensors");
    EXPECT_EQ(p->fp32_graph, model);
    ASSERT_EQ(p->stage2.size(), 2u);
    EXPECT_EQ(p->stage2[0].graph, std::string(model) + "_fp16");
    EXPECT_EQ(p->stage4.batch, 32);
    EXPECT_EQ(p->stage4.min_speedup, 1.2);
  }
}

TEST(Pipeline, TheDeformablePipelineNamesItsPluginLibrariesRelativeToItself) {
  auto p = load_pipeline(std::string(TENSORACLE_SOURCE_DIR) + "/examples/deformable/pipeline.toml");
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  ASSERT_EQ(p->plugins.size(), 2u);
  EXPECT_EQ(p->plugins[0], std::string(TENSORACLE_SOURCE_DIR) + "/build/release/plugins/libtensoracle_plugins.so");
  EXPECT_EQ(p->plugins[1], std::string(TENSORACLE_SOURCE_DIR) +
                               "/build/release/examples/deformable/custom_plugin/libdeform_sample_plugin.so");
  ASSERT_EQ(p->stage3.size(), 2u);
  EXPECT_EQ(p->stage3[0].graph, "deformable_plugin");
  EXPECT_EQ(p->stage3[0].lower_precision_graph, "deformable_plugin_fp16");
  EXPECT_EQ(p->stage3[1].graph, "deformable_custom");
  EXPECT_EQ(p->stage3[1].lower_precision_graph, "deformable_custom_fp16");
}

TEST_F(BadPipeline, PluginLibrariesAreAListOfPathsResolvedLikeTheOthers) {
  std::string text = kMinimal;
  text.insert(text.find("[inputs]"), "plugins = [\"libs/liba.so\", \"/opt/libb.so\"]\n");
  std::ofstream(dir_.path() + "/limits.json") << R"({"default": {"max_abs_error": 1e-5}})";
  std::ofstream(dir_.path() + "/pipeline.toml") << text;
  auto p = load_pipeline(dir_.path() + "/pipeline.toml");
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->plugins, (std::vector<std::string>{dir_.path() + "/libs/liba.so", "/opt/libb.so"}));

  text = kMinimal;
  EXPECT_NE(error_of(text.insert(text.find("[inputs]"), "plugins = \"liba.so\"\n")).find("model.plugins"), std::string::npos);
  text = kMinimal;
  const std::string empty = error_of(text.insert(text.find("[inputs]"), "plugins = [\"liba.so\", \"\"]\n"));
  EXPECT_NE(empty.find("model.plugins[1]: must not be empty"), std::string::npos) << empty;
}

}  // namespace
}  // namespace tensoracle
