// What every stage of a workflow run shares: the pipeline, the package, the fixed arrays (never
// changed after they are read), the engines' declaration and the report being written.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tensoracle/package.h"
#include "tensoracle/plugin_registry.h"
#include "tensoracle/workflow.h"

namespace tensoracle::workflow {

struct FixedArrays {
  NamedArrays arrays;        // by engine tensor name
  nlohmann::json provenance;  // file, its SHA-256, each array's name in the file, dtype, shape, SHA-256
};

// An engine of one candidate graph, with where it came from.
struct CandidateEngine {
  Engine engine;
  nlohmann::json provenance;  // graph, key, path, hit/built, build seconds, SHA-256, key manifest
};

struct RunContext {
  const Pipeline& pipeline;
  const WorkflowOptions& options;
  std::string backend;
  ModelPackage package;
  PluginRegistry plugins;  // every library of the run (plugin_libraries.h): every build resolves through it
  std::vector<std::string> input_names, output_names;  // of the fp32 graph
  FixedArrays inputs;     // the fixed inputs
  FixedArrays reference;  // the fixed PyTorch reference
  int64_t fixed_batch = 0;
  int64_t timing_batch = 0;
  NamedArrays timing_inputs;  // the fixed inputs at the timing batch (rows repeated)
  std::vector<InputDeclaration> declaration;  // one profile covering both batches
  MetricRegistry registry;    // built-in metrics plus stage 2's measures
  std::string scratch;        // a temporary directory for external measures
  nlohmann::json engines = nlohmann::json::object();  // provenance by graph name

  void progress(const std::string& line) const;
};

// Reads the selected arrays of one side: `names` are the engine's tensors of that side.
Result<FixedArrays> read_fixed_arrays(const ArraySelection& selection, const std::vector<std::string>& names,
                                      const std::string& side);

// Opens `graph`'s engine through the cache with the run's declaration, settings and backend
// (build progress goes to the run's progress), and records its provenance in ctx.engines.
Result<CandidateEngine> open_candidate_engine(RunContext& ctx, const std::string& graph);

// Runs an engine on the fixed inputs; returns the outputs the reference holds.
Result<NamedArrays> run_on_fixed_inputs(const RunContext& ctx, const Engine& engine);

}  // namespace tensoracle::workflow
