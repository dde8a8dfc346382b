// The three forms of the deformable example's deformable convolution (examples/deformable: the
// grid_sample composition, the bundled tensoracle::dcnv2 plugin, the example's own
// deformable::deform_sample cubin plugin) timed against each other on the cuda backend, fp32 and
// fp16, at each batch; with the quality of each engine and the time of the deformable block in
// each form, the stage-3 comparison of issue 15.
//
//   deformable_bench [--json FILE] [--batches 1,32] [--size 16] [--warmup 20] [--iterations 100]
//                    [--no-profile]
//
// The weights are the example's fixture (tests/fixtures/examples/deformable/weights.safetensors;
// they do not depend on the image size). At batch 1 and size 16 the input is the fixture's image
// and every fp32 engine is compared with PyTorch's output (torchvision's deform_conv2d: stage 1's
// limits, examples/deformable/limits.json, rel L2 1e-6 and max abs 1e-5); otherwise the input is
// a seeded image. Every engine is compared with the composition's fp32 engine on the same input.
// Timing: the timing harness (docs/bench.md), one enqueue per sample between CUDA events
// (throughput mode, group 1, as model_bench), with the NVML load check; then each step alone
// (profile_layers), and the steps of the deformable block (the layers named offset*, mask*,
// dcn*: the offset and mask convolutions, the sampling, the weight) summed per form.
// Exit status: 0 when every fp32 engine compared with PyTorch passed, 1 otherwise or on an error.
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "deformable/deformable.h"
#include "tensoracle/bench.h"
#include "tensoracle/build.h"
#include "tensoracle/compare.h"
#include "tensoracle/engine.h"
#include "tensoracle/plugin_registry.h"

namespace tensoracle {
namespace {

using json = nlohmann::json;
using deformable::Form;

const std::string kFixtures = std::string(TENSORACLE_SOURCE_DIR) + "/tests/fixtures/examples/deformable";

struct Options {
  std::string json_path = "deformable_bench.json";
  std::vector<int64_t> batches = {1, 32};
  int64_t size = 16;
  int warmup = 20;
  int iterations = 100;
  bool profile = true;
};

const char* form_name(Form form) {
  switch (form) {
    case Form::kComposition: return "composition";
    case Form::kPlugin: return "dcnv2_plugin";
    case Form::kCustomPlugin: return "custom_plugin";
  }
  return "?";
}

// A seeded image in [-1, 1).
HostArray seeded_image(const Dims& shape) {
  HostArray a = HostArray::zeros(DataType::kFloat32, shape).value();
  float* p = a.data_as<float>();
  for (int64_t i = 0; i < a.element_count(); ++i)
    p[i] = static_cast<float>(static_cast<double>((static_cast<uint64_t>(i) * 2654435761u) & 0xFFFFFFFFu) / 4294967296.0 * 2.0 - 1.0);
  return a;
}

Result<Engine> build_engine(const Weights& weights, const PluginRegistry& plugins, const Dims& shape, DataType precision,
                            Form form) {
  EngineBuild build;
  build.name = std::string("deformable_bench_") + form_name(form) + "_" + std::string(data_type_name(precision));
  build.graph_version = "1";
  build.graph = [shape, precision, form](Network& net, const Weights& w) { return deformable::define(net, w, shape, precision, form); };
  build.weights = weights;
  build.add_input(deformable::kInput, shape);
  build.backend = "cuda";
  build.quiet = true;
  build.plugins = plugins;
  TO_ASSIGN_OR_RETURN(std::string bytes, build_serialized_engine(build));
  return Engine::deserialize(bytes.data(), bytes.size(), build.name + ".engine", plugins);
}

Result<json> compare(const HostArray& got, const ArrayView& reference, const std::string& label) {
  TO_ASSIGN_OR_RETURN(OutputComparison c, compare_outputs(got.view(), reference));
  std::printf("    %-30s rel L2 %.3e  max abs %.3e  non-finite %lld\n", label.c_str(), c.rel_l2_error, c.max_abs_error,
              static_cast<long long>(c.candidate_non_finite.total()));
  return json{{"rel_l2_error", c.rel_l2_error},
              {"max_abs_error", c.max_abs_error},
              {"candidate_non_finite", c.candidate_non_finite.total()}};
}

// The steps of the deformable block: what differs between the forms.
bool in_deformable_block(const std::string& layers) {
  for (const char* prefix : {"offset", "mask", "dcn"})
    if (layers.rfind(prefix, 0) == 0 || layers.find(std::string("+") + prefix) != std::string::npos) return true;
  return false;
}

json profile_json(const std::vector<LayerTiming>& steps) {
  json all = json::array();
  double total = 0, block = 0;
  for (const LayerTiming& s : steps) {
    const bool deformable = in_deformable_block(s.layers);
    all.push_back({{"layers", s.layers}, {"kind", s.kind}, {"tactic", s.tactic}, {"median_ms", s.median_ms},
                   {"deformable_block", deformable}});
    total += s.median_ms;
    if (deformable) {
      block += s.median_ms;
      std::printf("      %8.4f ms  %-12s %-24s %s\n", s.median_ms, s.kind.c_str(), s.tactic.c_str(), s.layers.substr(0, 70).c_str());
    }
  }
  std::printf("    steps timed alone: sum %.4f ms, deformable block %.4f ms\n", total, block);
  return {{"steps", all}, {"sum_ms", total}, {"deformable_block_ms", block}};
}

// Builds, checks and times every form and precision at one batch; false when an fp32 engine
// compared with PyTorch failed or anything went wrong.
bool bench_batch(const Options& o, const Weights& weights, const Weights& io, const PluginRegistry& plugins, int64_t batch,
                 json& out) {
  const Dims shape{batch, 8, o.size, o.size};
  const bool fixture = batch == 1 && o.size == 16;
  HostArray seeded = seeded_image(shape);
  const ArrayView image = fixture ? io.view(deformable::kInput).value() : seeded.view();
  const NamedArrayViews inputs{{deformable::kInput, image}};
  std::printf("== batch %lld, image %s (%s)\n", static_cast<long long>(batch), shape.to_string().c_str(),
              fixture ? "the fixture's" : "seeded");
  bool passed = true;
  HostArray composition_fp32;
  for (DataType precision : {DataType::kFloat32, DataType::kFloat16}) {
    for (Form form : {Form::kComposition, Form::kPlugin, Form::kCustomPlugin}) {
      const std::string label = std::string(form_name(form)) + " " + std::string(data_type_name(precision));
      std::printf("  %s\n", label.c_str());
      json record{{"form", form_name(form)}, {"precision", data_type_name(precision)}, {"batch", batch}, {"size", o.size}};
      auto engine = build_engine(weights, plugins, shape, precision, form);
      if (!engine.is_ok()) {
        std::printf("    build failed: %s\n", engine.status().to_string().c_str());
        record["error"] = engine.status().to_string();
        out.push_back(record);
        passed = false;
        continue;
      }
      auto outputs = engine->create_execution()->run_on_host(inputs);
      if (!outputs.is_ok()) {
        std::printf("    run failed: %s\n", outputs.status().to_string().c_str());
        record["error"] = outputs.status().to_string();
        out.push_back(record);
        passed = false;
        continue;
      }
      HostArray& got = outputs->at(deformable::kOutput);
      if (fixture && precision == DataType::kFloat32) {
        auto vs_torch = compare(got, io.view(deformable::kOutput).value(), "vs PyTorch (torchvision)");
        if (vs_torch.is_ok()) {
          const bool ok = (*vs_torch)["rel_l2_error"] <= 1e-6 && (*vs_torch)["max_abs_error"] <= 1e-5 &&
                          (*vs_torch)["candidate_non_finite"] == 0;
          (*vs_torch)["passed"] = ok;
          passed = passed && ok;
          record["vs_pytorch"] = *vs_torch;
        }
      }
      if (form == Form::kComposition && precision == DataType::kFloat32) composition_fp32 = std::move(got);
      else if (composition_fp32.element_count() > 0) {
        auto vs_composition = compare(got, composition_fp32.view(), "vs the composition fp32 engine");
        if (vs_composition.is_ok()) record["vs_composition_fp32"] = *vs_composition;
      }

      BenchSettings settings;
      settings.warmup = o.warmup;
      settings.iterations = o.iterations;
      settings.modes = {TimingMode::kThroughput};
      settings.throughput_group = 1;
      settings.profile_layers = o.profile;
      auto report = bench_engine(*engine, inputs, settings);
      if (!report.is_ok()) {
        std::printf("    timing failed: %s\n", report.status().to_string().c_str());
        record["error"] = report.status().to_string();
        out.push_back(record);
        passed = false;
        continue;
      }
      const TimingStats& stats = report->runs.front().stats;
      std::printf("    median %.4f ms (p90 %.4f, cv %.3f)%s\n", stats.median_ms, stats.p90_ms, stats.cv,
                  report->valid ? "" : "  INVALID: the GPU was loaded");
      record["median_ms"] = stats.median_ms;
      record["p90_ms"] = stats.p90_ms;
      record["cv"] = stats.cv;
      record["valid"] = report->valid;
      if (!report->layers.empty()) record["profile"] = profile_json(report->layers);
      else if (o.profile) record["profile_note"] = report->profile_note;
      out.push_back(record);
    }
  }
  return passed;
}

int run(const Options& o) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("deformable_bench: no CUDA GPU; nothing to time\n");
    return 0;
  }
  auto weights = Weights::open(kFixtures + "/weights.safetensors");
  auto io = Weights::open(kFixtures + "/io.safetensors");
  if (!weights.is_ok() || !io.is_ok()) {
    std::printf("deformable_bench: %s\n", (weights.is_ok() ? io.status() : weights.status()).to_string().c_str());
    return 1;
  }
  PluginRegistry plugins;
  for (const char* library : {TENSORACLE_PLUGINS_LIBRARY, DEFORM_SAMPLE_PLUGIN_LIBRARY}) {
    const Status loaded = plugins.load_library(library);
    if (!loaded.is_ok()) {
      std::printf("deformable_bench: %s\n", loaded.to_string().c_str());
      return 1;
    }
  }
  json runs = json::array();
  bool passed = true;
  for (int64_t batch : o.batches) passed = bench_batch(o, *weights, *io, plugins, batch, runs) && passed;
  std::ofstream(o.json_path) << json{{"runs", runs}, {"passed", passed}}.dump(2) << "\n";
  std::printf("wrote %s; %s\n", o.json_path.c_str(), passed ? "every fp32 engine passed against PyTorch" : "FAILED");
  return passed ? 0 : 1;
}

}  // namespace
}  // namespace tensoracle

int main(int argc, char** argv) {
  tensoracle::Options o;
  CLI::App app{"Time the deformable example's three forms (composition, dcnv2 plugin, custom cubin plugin) on cuda"};
  app.add_option("--json", o.json_path, "Where to write the results");
  app.add_option("--batches", o.batches, "Batches to time")->delimiter(',');
  app.add_option("--size", o.size, "Image height and width (16: the fixture's)")->check(CLI::Range(2, 4096));
  app.add_option("--warmup", o.warmup, "Untimed enqueues first")->check(CLI::NonNegativeNumber);
  app.add_option("--iterations", o.iterations, "Timed enqueues")->check(CLI::Range(2, 1000000));
  bool no_profile = false;
  app.add_flag("--no-profile", no_profile, "Do not time each step alone");
  CLI11_PARSE(app, argc, argv);
  o.profile = !no_profile;
  return tensoracle::run(o);
}
