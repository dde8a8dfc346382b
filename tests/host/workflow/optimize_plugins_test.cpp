// `tensoracle optimize` with plugin libraries, on the cpu backend (the plugins' CPU
// implementations): the deformable example's pipeline through all four stages with its plugin
// candidates (tensoracle::dcnv2, and the example's own deformable::deform_sample), --plugin merged with [model] plugins, the errors that exit 2
// (a library that does not load, a plugin identity two libraries register), a candidate whose
// plugin no library provides, and the libraries' record in the reports.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "host/cache/cache_testing.h"
#include "host/workflow/optimize_testing.h"
#include "tensoracle/hashing.h"

namespace tensoracle {
namespace {

using namespace workflow_testing;

const std::string kPluginsLibrary = TENSORACLE_PLUGINS_LIBRARY;  // tensoracle::dcnv2
const std::string kDeformSampleLibrary = DEFORM_SAMPLE_PLUGIN_LIBRARY;  // deformable::deform_sample
const std::string kTestPluginsLibrary = TEST_PLUGINS_LIBRARY;    // test::scale_add
const std::string kExample = kSource + "/examples/deformable";
const std::string kFixture = kSource + "/tests/fixtures/examples/deformable/io.safetensors";

// Replaces the one occurrence of `what` (it must be there: the test says what it rewrites).
std::string replaced(std::string text, const std::string& what, const std::string& with) {
  const size_t at = text.find(what);
  EXPECT_NE(at, std::string::npos) << what;
  return at == std::string::npos ? text : text.replace(at, what.size(), with);
}

class OptimizeWithPlugins : public ::testing::Test {
 protected:
  CliRun optimize(const std::string& pipeline, const std::string& extra = "") {
    return run("TENSORACLE_CACHE_DIR=" + cache_.path() + " " + TENSORACLE_CLI_PATH + " optimize " + pipeline +
               " --package " + TENSORACLE_DEFORMABLE_PACKAGE + " --out " + out_.path() + " " + extra);
  }
  json report() const { return json::parse(read_file(out_.path() + "/report.json")); }
  // The example's pipeline, its stages and limits unchanged, in the temporary folder: its paths
  // made absolute and its plugin libraries this build's (the file names the release preset's).
  std::string example_pipeline() const {
    std::string text = read_file(kExample + "/pipeline.toml");
    text = replaced(text, "\"../../build/release/plugins/libtensoracle_plugins.so\"", "\"" + kPluginsLibrary + "\"");
    text = replaced(text, "\"../../build/release/examples/deformable/custom_plugin/libdeform_sample_plugin.so\"",
                    "\"" + kDeformSampleLibrary + "\"");
    text = replaced(text, "\"../../tests/fixtures/", "\"" + kSource + "/tests/fixtures/");
    text = replaced(text, "\"../../tests/fixtures/", "\"" + kSource + "/tests/fixtures/");
    text = replaced(text, "\"limits.json\"", "\"" + kExample + "/limits.json\"");
    return write_pipeline(text);
  }
  // A pipeline on the deformable fixture with the [model] plugins line and the stages given.
  std::string pipeline(const std::string& plugins_line, const std::string& stages) const {
    return write_pipeline("[model]\npackage = \"unused.so\"\n" + plugins_line + "\n[inputs]\nfile = \"" + kFixture +
                          "\"\narrays = [\"image\"]\n[reference]\nfile = \"" + kFixture + "\"\narrays = [\"out\"]\n" +
                          stages);
  }
  std::string write_pipeline(const std::string& text) const {
    const std::string path = out_.path() + "/pipeline.toml";
    std::ofstream(path) << text;
    return path;
  }
  testing::TempDir cache_, out_;
};

const std::string kPluginStage1 = R"(
[stage1]
graph = "deformable_plugin"
limits = { default = { max_abs_error = 1e-5 } }
)";

TEST_F(OptimizeWithPlugins, TheDeformablePipelineAcceptsBothPluginFormsInStage3) {
  const CliRun r = optimize(example_pipeline());
  ASSERT_LE(r.exit_code, 1) << r.output;
  const json rep = report();
  EXPECT_EQ(rep["backend"], "cpu");
  EXPECT_EQ(candidate(stage(rep, 1), "deformable")["decision"], "accepted");
  EXPECT_EQ(candidate(stage(rep, 2), "fp16")["decision"], "accepted");

  // Stage 3: each plugin form passes stage 1 against PyTorch, its fp16 form stage 2 against the
  // composition's fp32 engine, with the limits the composition passed.
  struct PluginForm {
    const char* candidate;
    const char* graph;
    std::string library;
    const char* plugin;
  };
  const PluginForm forms[] = {{"dcnv2_plugin", "deformable_plugin", kPluginsLibrary, "tensoracle::dcnv2 "},
                              {"custom_plugin", "deformable_custom", kDeformSampleLibrary, "deformable::deform_sample "}};
  const json& libraries = rep["model"]["plugin_libraries"];
  ASSERT_EQ(libraries.size(), 2u) << libraries.dump();
  for (size_t i = 0; i < 2; ++i) {
    const PluginForm& form = forms[i];
    const std::string fp16_graph = std::string(form.graph) + "_fp16";
    const json& plugin = candidate(stage(rep, 3), form.candidate);
    EXPECT_EQ(plugin["decision"], "accepted") << plugin["failures"].dump();
    ASSERT_EQ(plugin["gates"].size(), 2u);
    EXPECT_EQ(plugin["gates"][0]["gate"], "stage 1 gate");
    EXPECT_EQ(plugin["gates"][0]["against"], "the fixed reference");
    EXPECT_EQ(plugin["gates"][0]["graph"], form.graph);
    EXPECT_EQ(plugin["gates"][1]["gate"], "stage 2 gate");
    EXPECT_EQ(plugin["gates"][1]["against"], "the accepted fp32 engine ('deformable')");
    EXPECT_EQ(plugin["gates"][1]["graph"], fp16_graph);
    EXPECT_EQ(plugin["engine"], fp16_graph);

    // The library is recorded with its hash, and that hash is in its plugin engines' keys.
    const std::string sha256 = *sha256_file_hex(form.library);
    EXPECT_EQ(libraries[i]["path"], form.library);
    EXPECT_EQ(libraries[i]["sha256"], sha256);
    ASSERT_EQ(libraries[i]["plugins"].size(), 1u);
    EXPECT_EQ(libraries[i]["plugins"][0].get<std::string>().rfind(form.plugin, 0), 0u) << libraries.dump();
    for (const std::string& graph : {std::string(form.graph), fp16_graph}) {
      const json& used = rep["engines"][graph]["key_manifest"]["plugins"];
      ASSERT_EQ(used.size(), 1u) << graph << used.dump();
      EXPECT_EQ(used[0]["library_sha256"], sha256) << graph;
      EXPECT_FALSE(used[0]["bundle_manifest_sha256"].get<std::string>().empty()) << graph << ": loaded with its bundle";
    }
    EXPECT_NE(read_file(out_.path() + "/report.html").find(sha256), std::string::npos);
  }
  EXPECT_TRUE(rep["engines"]["deformable"]["key_manifest"]["plugins"].empty());

  // Stage 4 times every candidate against the composition. On the cpu backend whether any meets
  // the target is the machine's to say: the form is checked, not the speed.
  const json& s4 = stage(rep, 4);
  ASSERT_EQ(s4["ran"], true) << s4.dump();
  for (const char* name : {"fp16", "dcnv2_plugin", "custom_plugin"}) {
    const json& c = candidate(s4, name);
    EXPECT_TRUE(c["decision"] == "accepted" || c["decision"] == "rejected") << name;
    EXPECT_EQ(c["timing"]["runs"][0]["candidate"]["samples_ms"].size(), 100u) << name;
  }
  EXPECT_EQ(rep["exit_status"], r.exit_code);
  if (r.exit_code == 0) {
    EXPECT_TRUE(rep["final"]["implementation"] == "fp16" || rep["final"]["implementation"] == "dcnv2_plugin" ||
                rep["final"]["implementation"] == "custom_plugin");
  } else {
    EXPECT_EQ(rep["final"]["implementation"], "deformable");
  }
}

TEST_F(OptimizeWithPlugins, PluginFlagsAddToThePipelinesLibrariesAndOneFileLoadsOnce) {
  const CliRun r = optimize(pipeline("plugins = [\"" + kPluginsLibrary + "\"]", kPluginStage1),
                            "--plugin " + kTestPluginsLibrary + " --plugin " + kPluginsLibrary);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json libraries = report()["model"]["plugin_libraries"];
  ASSERT_EQ(libraries.size(), 2u) << libraries.dump();
  EXPECT_EQ(libraries[0]["path"], kPluginsLibrary);
  EXPECT_EQ(libraries[1]["path"], kTestPluginsLibrary);
  EXPECT_EQ(libraries[1]["sha256"], *sha256_file_hex(kTestPluginsLibrary));
}

TEST_F(OptimizeWithPlugins, TheFlagAloneProvidesThePlugins) {
  const CliRun r = optimize(pipeline("", kPluginStage1), "--plugin " + kPluginsLibrary);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(report()["model"]["plugin_libraries"][0]["path"], kPluginsLibrary);
}

TEST_F(OptimizeWithPlugins, ALibraryThatDoesNotLoadExits2NamingWhereItWasGiven) {
  const CliRun in_pipeline = optimize(pipeline("plugins = [\"missing/libnothing.so\"]", kPluginStage1));
  EXPECT_EQ(in_pipeline.exit_code, 2) << in_pipeline.output;
  EXPECT_NE(in_pipeline.output.find("model.plugins[0]"), std::string::npos) << in_pipeline.output;
  EXPECT_NE(in_pipeline.output.find(out_.path() + "/missing/libnothing.so"), std::string::npos) << in_pipeline.output;

  const CliRun not_a_library = optimize(pipeline("", kPluginStage1), "--plugin " + kFixture);
  EXPECT_EQ(not_a_library.exit_code, 2) << not_a_library.output;
  EXPECT_NE(not_a_library.output.find("--plugin: plugin library '" + kFixture + "' cannot be loaded"), std::string::npos) << not_a_library.output;
}

TEST_F(OptimizeWithPlugins, TwoLibrariesRegisteringOnePluginExit2) {
  const std::string copy = out_.path() + "/libtensoracle_plugins_copy.so";
  std::filesystem::copy_file(kPluginsLibrary, copy);
  // With its cubin bundle, found beside it under the copy's name: the copy loads, and only then
  // does registering dcnv2 a second time fail.
  std::filesystem::copy(std::filesystem::path(kPluginsLibrary).parent_path() / "tensoracle_plugins_bundle",
                        out_.path() + "/tensoracle_plugins_copy_bundle", std::filesystem::copy_options::recursive);
  const CliRun r = optimize(pipeline("plugins = [\"" + kPluginsLibrary + "\"]", kPluginStage1), "--plugin " + copy);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--plugin"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tensoracle::dcnv2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("registered twice"), std::string::npos) << r.output;
}

TEST_F(OptimizeWithPlugins, ACandidateWhosePluginNoLibraryProvidesIsRejectedWithTheReason) {
  const CliRun r = optimize(pipeline("", R"(
[stage1]
graph = "deformable"
limits = { default = { max_abs_error = 1e-5 } }
[[stage3.candidate]]
name = "dcnv2_plugin"
graph = "deformable_plugin"
)"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const json rep = report();
  EXPECT_TRUE(rep["model"]["plugin_libraries"].empty());
  EXPECT_EQ(candidate(stage(rep, 1), "deformable")["decision"], "accepted");
  const json& c = candidate(stage(rep, 3), "dcnv2_plugin");
  EXPECT_EQ(c["decision"], "rejected");
  ASSERT_FALSE(c["failures"].empty());
  const std::string why = c["failures"][0];
  EXPECT_NE(why.find("stage 1 gate: the engine of graph 'deformable_plugin' could not be built"), std::string::npos) << why;
  EXPECT_NE(why.find("tensoracle::dcnv2"), std::string::npos) << why;
}

}  // namespace
}  // namespace tensoracle
