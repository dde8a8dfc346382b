// The four-stage optimization workflow (docs/workflow.md): a pipeline file names a
// model package, fixed inputs, a fixed PyTorch reference and the candidates of each stage; the
// runner gates them and writes one report.
//
//   TO_ASSIGN_OR_RETURN(Pipeline pipeline, load_pipeline("examples/tinynet/pipeline.toml"));
//   WorkflowOptions options;
//   options.backend = "cpu";                       // overrides the pipeline's
//   TO_ASSIGN_OR_RETURN(WorkflowOutcome outcome, run_workflow(pipeline, options));
//   TO_RETURN_IF_ERROR(write_workflow_reports(outcome, "out/"));   // report.json, report.html
//   return outcome.exit_status;                    // 0 every stage accepted, 1 one rejected all (2: an error above)
//
// The stages (the seed's semantics, exactly):
//   1. the fp32 graph's engine against the fixed reference, under the stage-1 limits;
//   2. each lower-precision candidate against the accepted fp32 engine's outputs, under the
//      stage-2 limits and the model-specific measures;
//   3. each replacement re-gated through stage 1 (its fp32 graph, the fixed reference, the
//      stage-1 limits) and, when it has a lower-precision form, stage 2 (the same reference and
//      limits as stage 2);
//   4. every candidate that passed its quality gates timed against the stage-1 engine,
//      interleaved, under isolated load; it is used only when its speed-up meets the target.
// The inputs and references never change between stages, no limit is ever relaxed, a failed
// gate keeps the accepted implementation, and every failure names its gate, output and margin.
//
// Candidates have a kind: "graph" (another graph of the package) is the one that exists today;
// the schema leaves room for kinds that produce engines otherwise (docs/workflow.md).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tensoracle/bench.h"
#include "tensoracle/cache.h"
#include "tensoracle/compare.h"
#include "tensoracle/status.h"

namespace tensoracle {

// Arrays taken from one file (.npz, .npy, .safetensors): engine tensor name -> array name in
// the file. Empty `arrays`: every engine tensor of that side, under its own name.
struct ArraySelection {
  std::string file;
  std::map<std::string, std::string> arrays;
};

// A model-specific measure of stage 2, bounded per output.
struct MeasureSpec {
  std::string name;                  // lower-case [a-z0-9_]; its bounds appear as metrics.<name>
  std::string kind;                  // "psnr", "snr", "topk_agreement" or "command"
  int k = 1;                         // topk_agreement
  std::vector<std::string> command;  // command: argv; "{candidate}" and "{reference}" are .npy paths
  double timeout_seconds = 60;
  std::vector<std::string> outputs;  // empty: every output
  std::optional<double> min, max;
  std::string where;                 // "pipeline.toml:30" for messages
};

struct CandidateSpec {
  std::string name;   // unique across the pipeline
  std::string kind = "graph";
  std::string graph;  // stage 2: the lower-precision graph; stage 3: the replacement's fp32 graph
  std::string lower_precision_graph;  // stage 3 only, optional
  std::string where;
};

struct SpeedStage {
  bool enabled = false;
  double min_speedup = 1.0;                      // baseline median / candidate median
  std::map<std::string, double> backend_min_speedup;  // per backend, over min_speedup
  int64_t batch = 0;                             // 0: the fixed inputs' batch
  TimingMode mode = TimingMode::kLatency;        // the mode whose ratio decides
  BenchSettings bench;
};

struct Pipeline {
  std::string path;         // the pipeline file
  std::string sha256;       // of its bytes
  std::string title;
  std::string package;      // model package (resolved path)
  std::string weights;      // empty: the package's
  // Plugin libraries ([model] plugins, resolved paths), loaded in order into the one registry
  // every build and engine of the run uses (plugin_registry.h).
  std::vector<std::string> plugins;
  std::string backend = "cpu";
  int optimization_level = -1;  // -1: the builder's default
  // Every candidate's build may let fused fp8 GEMMs accumulate in cuBLASLt's fast mode
  // (BuilderSettings::fp8_fast_accumulation; [model] fp8_fast_accumulation).
  bool fp8_fast_accumulation = false;
  ArraySelection inputs;
  ArraySelection reference;
  std::string fp32_graph;
  Limits stage1_limits;
  std::string stage1_limits_source;
  Limits stage2_limits;
  std::string stage2_limits_source;
  std::vector<MeasureSpec> measures;
  std::vector<CandidateSpec> stage2;
  std::vector<CandidateSpec> stage3;
  SpeedStage stage4;
};

// Reads and checks a pipeline file (TOML). Relative paths are relative to the file's folder;
// ${NAME} in a path is the environment variable NAME. Errors (kInvalidArgument) name the file,
// the line and column, the key and the reason: unknown keys, wrong types, missing keys, values
// out of range, duplicate candidate names, a limits file that does not parse. Plugin libraries
// are loaded by run_workflow, not here.
Result<Pipeline> load_pipeline(const std::string& path);

struct WorkflowOptions {
  std::string backend;   // empty: the pipeline's
  std::string package;   // empty: the pipeline's
  // Plugin libraries loaded after the pipeline's (the CLI's --plugin); a file the pipeline names
  // too is loaded once. Load errors name them `plugins_option` ("--plugin: PATH: ...").
  std::vector<std::string> plugins;
  std::string plugins_option = "--plugin";
  CachePolicy cache_policy = CachePolicy::kReuse;
  CacheOptions cache;
  // Progress lines (stage, candidate, build progress); unset: stderr. quiet: none.
  std::function<void(const std::string&)> progress;
  bool quiet = false;
};

struct WorkflowOutcome {
  // 0: stage 1 passed and every later stage that ran accepted at least one candidate;
  // 1: a stage rejected every candidate it had (stage 1: the fp32 engine); the report says why.
  int exit_status = 0;
  std::string final_implementation;  // the candidate used, or the fp32 graph when none is
  std::string summary;               // a few lines for a terminal: each stage's decisions
  std::string report_json;           // report.json's text (schema in docs/workflow.md)
  std::string report_html;           // report.html: self-contained, no script, inline SVG
};

// Runs the stages. Errors are bad input or an environment that cannot run the pipeline (a
// package that does not load, a plugin library that does not load or registers a plugin identity
// another library registered (named by model.plugins[i] or --plugin, with the path), a graph it
// lacks, arrays missing from a file, an engine that fails to build or run): the CLI's exit status
// 2. Rejections are not errors: a candidate whose plugin layer no library provides is rejected.
Result<WorkflowOutcome> run_workflow(const Pipeline& pipeline, const WorkflowOptions& options);

// Writes report.json and report.html into `directory` (created when absent), each atomically.
Status write_workflow_reports(const WorkflowOutcome& outcome, const std::string& directory);

}  // namespace tensoracle
