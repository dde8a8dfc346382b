// run_workflow (workflow.h): the four stages and their decisions.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include "backends/registry.h"
#include "core/errors.h"
#include "core/lookup.h"
#include "workflow/gates.h"
#include "workflow/measures.h"
#include "workflow/plugin_libraries.h"
#include "workflow/report.h"
#include "workflow/run_context.h"
#include "workflow/speed_stage.h"

namespace tensoracle {

namespace {

using nlohmann::json;
using workflow::CandidateEngine;
using workflow::RunContext;

// A candidate after its quality gates.
struct Gated {
  bool passed = false;
  std::vector<std::string> failures;
  json gates = json::array();
  std::optional<Engine> engine;  // the engine stage 4 would time
  std::string engine_graph;
  NamedArrays outputs;
};

// Builds `graph`, runs it on the fixed inputs and gates it against `reference`. An engine that
// cannot be built or run fails the gate (with the reason); only bad input is an error.
Result<Gated> gate_graph(RunContext& ctx, const std::string& graph, const std::string& gate, const std::string& against,
                         const NamedArrays& reference, const Limits& limits) {
  Gated g;
  g.engine_graph = graph;
  auto opened = workflow::open_candidate_engine(ctx, graph);
  if (!opened.is_ok()) {
    g.failures.push_back(fmt::format("{}: the engine of graph '{}' could not be built: {}", gate, graph, opened.status().message()));
    g.gates.push_back({{"gate", gate}, {"against", against}, {"passed", false}, {"error", opened.status().message()}});
    return g;
  }
  auto outputs = workflow::run_on_fixed_inputs(ctx, opened->engine);
  if (!outputs.is_ok()) {
    g.failures.push_back(fmt::format("{}: the engine of graph '{}' failed on the fixed inputs: {}", gate, graph,
                                     outputs.status().message()));
    g.gates.push_back({{"gate", gate}, {"against", against}, {"passed", false}, {"error", outputs.status().message()}});
    return g;
  }
  TO_ASSIGN_OR_RETURN(workflow::GateOutcome outcome,
                      workflow::quality_gate(gate, against, *outputs, reference, limits, ctx.registry));
  g.passed = outcome.passed;
  g.failures = outcome.failures;
  outcome.record["graph"] = graph;
  g.gates.push_back(std::move(outcome.record));
  g.engine = std::move(opened->engine);
  g.outputs = *std::move(outputs);
  return g;
}

json candidate_record(const CandidateSpec& c, const Gated& g) {
  json r = {{"name", c.name},         {"kind", c.kind},          {"graph", c.graph},
            {"engine", g.engine_graph}, {"gates", g.gates},        {"decision", g.passed ? "accepted" : "rejected"},
            {"failures", g.failures}};
  if (!c.lower_precision_graph.empty()) r["lower_precision_graph"] = c.lower_precision_graph;
  return r;
}

std::string summary_line(int stage, const std::string& name, bool accepted, const std::string& detail) {
  return fmt::format("stage {}  {:<26} {:<9} {}\n", stage, name, accepted ? "accepted" : "REJECTED", detail);
}

std::string first_failure(const Gated& g) { return g.failures.empty() ? std::string() : g.failures.front(); }

Status check_graphs(const Pipeline& p, const ModelPackage& package) {
  std::vector<std::pair<std::string, std::string>> named = {{p.fp32_graph, "stage1.graph"}};
  for (const CandidateSpec& c : p.stage2) named.push_back({c.graph, c.where});
  for (const CandidateSpec& c : p.stage3) {
    named.push_back({c.graph, c.where});
    if (!c.lower_precision_graph.empty()) named.push_back({c.lower_precision_graph, c.where});
  }
  for (const auto& [graph, where] : named) {
    auto found = package.graph(graph);
    if (!found.is_ok()) return found.status().with_context(fmt::format("{}: {}", p.path, where));
  }
  return Status::ok();
}

Status prepare(RunContext& ctx) {
  const Pipeline& p = ctx.pipeline;
  TO_RETURN_IF_ERROR(check_graphs(p, ctx.package));
  TO_ASSIGN_OR_RETURN(EngineBuild probe, ctx.package.engine_build(p.fp32_graph));
  if (!p.weights.empty()) probe.weights_path = p.weights;
  probe.backend = ctx.backend;
  probe.plugins = ctx.plugins;
  TO_ASSIGN_OR_RETURN(PreparedBuild prepared, prepare_build(probe));
  for (const Tensor t : prepared.network.inputs()) ctx.input_names.push_back(prepared.network.tensor(t).name);
  for (const Tensor t : prepared.network.outputs()) ctx.output_names.push_back(prepared.network.tensor(t).name);
  TO_ASSIGN_OR_RETURN(ctx.inputs, workflow::read_fixed_arrays(p.inputs, ctx.input_names, "inputs"));
  TO_ASSIGN_OR_RETURN(ctx.reference, workflow::read_fixed_arrays(p.reference, ctx.output_names, "reference"));
  for (const auto& [name, a] : ctx.inputs.arrays) {
    if (a.shape().rank() == 0) return invalid_argument("inputs: '{}' is a scalar: the workflow needs a batch dim (dim 0)", name);
    if (ctx.fixed_batch == 0) ctx.fixed_batch = a.shape()[0];
    if (a.shape()[0] != ctx.fixed_batch)
      return invalid_argument("inputs: '{}' has {} rows in dim 0, another input {} (the batch dim must agree)", name,
                              a.shape()[0], ctx.fixed_batch);
  }
  ctx.timing_batch = p.stage4.batch > 0 ? p.stage4.batch : ctx.fixed_batch;
  // One profile per engine, covering the fixed inputs' batch and the timing batch (opt): the
  // engine that is timed is the engine that was gated.
  for (const std::string& name : ctx.input_names) {
    const HostArray* array = lookup(ctx.inputs.arrays, name);
    TO_ASSERT(array != nullptr);  // read_fixed_arrays selects an array for every input
    const Dims& shape = array->shape();
    Dims lo = shape, opt = shape, hi = shape;
    lo[0] = std::min(ctx.fixed_batch, ctx.timing_batch);
    opt[0] = ctx.timing_batch;
    hi[0] = std::max(ctx.fixed_batch, ctx.timing_batch);
    ctx.declaration.push_back(InputDeclaration{name, {}, {ShapeRange{lo, opt, hi}}});
  }
  TO_ASSIGN_OR_RETURN(ctx.timing_inputs, arrays_at_batch(views_of(ctx.inputs.arrays), ctx.timing_batch));
  TO_ASSIGN_OR_RETURN(ctx.registry, workflow::measure_registry(p.measures, ctx.scratch));
  return Status::ok();
}

}  // namespace

Result<WorkflowOutcome> run_workflow(const Pipeline& p, const WorkflowOptions& o) {
  const std::string backend = o.backend.empty() ? p.backend : o.backend;
  TO_RETURN_IF_ERROR(backends::create_backend(backend).status());  // one of this build's, or an error naming them
  TO_ASSIGN_OR_RETURN(PluginRegistry plugins, workflow::load_plugin_libraries(p, o));
  TO_ASSIGN_OR_RETURN(ModelPackage package, ModelPackage::load(o.package.empty() ? p.package : o.package));
  char scratch[] = "/tmp/tensoracle-workflow-XXXXXX";
  if (!mkdtemp(scratch)) return io_error("cannot make a scratch directory: {}", std::strerror(errno));
  struct RemoveScratch {
    std::string path;
    ~RemoveScratch() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } remove_scratch{scratch};
  RunContext ctx{p, o, backend, std::move(package), std::move(plugins), {}, {}, {}, {}, 0, 0, {}, {}, {}, scratch};
  TO_RETURN_IF_ERROR(prepare(ctx));
  const std::vector<std::string> known = backends::backend_names();
  for (const auto& [name, target] : p.stage4.backend_min_speedup)
    if (std::find(known.begin(), known.end(), name) == known.end())
      ctx.progress(fmt::format("note: {}: [stage4.backend.{}] names no backend of this build ({}); its target {:g}x "
                               "never applies here",
                               p.path, name, fmt::join(known, ", "), target));
  TO_ASSIGN_OR_RETURN(Limits stage2_limits, workflow::limits_with_measures(p.stage2_limits, p.measures, ctx.output_names));

  WorkflowOutcome outcome;
  std::string summary;
  json stages = json::array();
  bool every_stage_accepted = true;

  // ---- Stage 1: the fp32 engine against the fixed PyTorch reference.
  ctx.progress(fmt::format("== stage 1: fp32 graph '{}' against the fixed reference ({})", p.fp32_graph, backend));
  const std::string reference_name = "the fixed reference";
  TO_ASSIGN_OR_RETURN(Gated fp32, gate_graph(ctx, p.fp32_graph, "stage 1 gate", reference_name, ctx.reference.arrays, p.stage1_limits));
  const CandidateSpec fp32_spec{p.fp32_graph, "graph", p.fp32_graph, "", "stage1"};
  stages.push_back({{"stage", 1},
                    {"name", "fp32 reference"},
                    {"ran", true},
                    {"limits_source", p.stage1_limits_source},
                    {"limits", workflow::limits_json(p.stage1_limits)},
                    {"candidates", json::array({candidate_record(fp32_spec, fp32)})},
                    {"decision", fp32.passed ? "accepted" : "rejected"}});
  summary += summary_line(1, p.fp32_graph, fp32.passed, fp32.passed ? "against the fixed reference" : first_failure(fp32));
  ctx.progress(fp32.passed ? "   accepted" : "   REJECTED: " + first_failure(fp32));
  outcome.final_implementation = p.fp32_graph;
  json final_choice = {{"implementation", p.fp32_graph}, {"graph", p.fp32_graph}};

  std::vector<workflow::SpeedCandidate> speed_candidates;
  const std::string fp32_name = fmt::format("the accepted fp32 engine ('{}')", p.fp32_graph);
  // A quality decision: said on stderr and stdout, recorded, and a passing candidate kept for stage 4.
  const auto conclude = [&](int stage, const CandidateSpec& c, Gated& g, const char* passed, json& records) {
    ctx.progress(g.passed ? "   accepted" : "   REJECTED: " + first_failure(g));
    summary += summary_line(stage, c.name, g.passed, g.passed ? passed : first_failure(g));
    records.push_back(candidate_record(c, g));
    if (g.passed) speed_candidates.push_back({c.name, stage, g.engine_graph, std::move(*g.engine)});
    return g.passed;
  };
  const auto not_run = [&](int stage, const char* name, const std::string& why) {
    stages.push_back({{"stage", stage}, {"name", name}, {"ran", false}, {"reason", why}, {"candidates", json::array()}});
  };

  if (!fp32.passed) {
    every_stage_accepted = false;
    const std::string why = "stage 1 rejected the fp32 engine: correct the graph or the inputs before lower precision";
    not_run(2, "lower precision", why);
    not_run(3, "replacements", why);
    not_run(4, "speed", why);
    final_choice["why"] = "stage 1 failed: there is no accepted implementation";
    final_choice["implementation"] = nullptr;
    outcome.final_implementation.clear();
  } else {
    // ---- Stage 2: lower precision against the accepted fp32 engine's outputs.
    json stage2 = json::array();
    bool any2 = false;
    for (const CandidateSpec& c : p.stage2) {
      ctx.progress(fmt::format("== stage 2: candidate '{}' (graph '{}') against {}", c.name, c.graph, fp32_name));
      TO_ASSIGN_OR_RETURN(Gated g, gate_graph(ctx, c.graph, "stage 2 gate", fp32_name, fp32.outputs, stage2_limits));
      any2 = conclude(2, c, g, "against the fp32 engine", stage2) || any2;
    }
    if (p.stage2.empty()) {
      not_run(2, "lower precision", "the pipeline has no stage-2 candidates");
    } else {
      stages.push_back({{"stage", 2},
                        {"name", "lower precision"},
                        {"ran", true},
                        {"limits_source", p.stage2_limits_source},
                        {"limits", workflow::limits_json(stage2_limits)},
                        {"measures", json::array()},
                        {"candidates", stage2},
                        {"decision", any2 ? "accepted" : "rejected"}});
      for (const MeasureSpec& m : p.measures)
        stages.back()["measures"].push_back({{"name", m.name}, {"kind", m.kind}, {"outputs", m.outputs},
                                             {"min", m.min ? json(*m.min) : json(nullptr)},
                                             {"max", m.max ? json(*m.max) : json(nullptr)}});
      every_stage_accepted = every_stage_accepted && any2;
    }

    // ---- Stage 3: replacements re-gated through stage 1 (and stage 2 for a lower precision).
    json stage3 = json::array();
    bool any3 = false;
    for (const CandidateSpec& c : p.stage3) {
      ctx.progress(fmt::format("== stage 3: replacement '{}' (graph '{}') re-gated through stage 1", c.name, c.graph));
      TO_ASSIGN_OR_RETURN(Gated g, gate_graph(ctx, c.graph, "stage 1 gate", reference_name, ctx.reference.arrays, p.stage1_limits));
      if (g.passed && !c.lower_precision_graph.empty()) {
        ctx.progress(fmt::format("   its lower precision '{}' re-gated through stage 2", c.lower_precision_graph));
        TO_ASSIGN_OR_RETURN(Gated lower, gate_graph(ctx, c.lower_precision_graph, "stage 2 gate", fp32_name, fp32.outputs,
                                                    stage2_limits));
        for (auto& gate : lower.gates) g.gates.push_back(gate);
        g.failures = lower.failures;
        g.passed = lower.passed;
        g.engine = std::move(lower.engine);
        g.engine_graph = lower.engine_graph;
      }
      any3 = conclude(3, c, g, "re-gated with the same limits", stage3) || any3;
    }
    if (p.stage3.empty()) {
      not_run(3, "replacements", "the pipeline has no stage-3 replacements");
    } else {
      stages.push_back({{"stage", 3}, {"name", "replacements"}, {"ran", true}, {"candidates", stage3},
                        {"decision", any3 ? "accepted" : "rejected"}});
      every_stage_accepted = every_stage_accepted && any3;
    }

    // ---- Stage 4: speed against the fp32 engine, interleaved, under isolated load.
    if (!p.stage4.enabled) {
      not_run(4, "speed", "the pipeline has no [stage4]: nothing is timed, and no candidate is used in place of fp32");
      final_choice["why"] = "no speed stage: the fp32 engine stays in use (the candidates that passed quality are listed)";
    } else if (speed_candidates.empty()) {
      not_run(4, "speed", "no candidate passed its quality gates");
      final_choice["why"] = "no candidate passed its quality gates: the accepted fp32 engine stays in use";
    } else {
      TO_ASSIGN_OR_RETURN(workflow::SpeedOutcome speed,
                          workflow::run_speed_stage(ctx, *fp32.engine, p.fp32_graph, speed_candidates));
      stages.push_back(speed.record);
      summary += speed.summary;
      if (speed.chosen.empty()) {
        every_stage_accepted = false;
        final_choice["why"] = "no candidate met the speed target: the accepted fp32 engine stays in use";
      } else {
        outcome.final_implementation = speed.chosen;
        final_choice = {{"implementation", speed.chosen},
                        {"graph", speed.chosen_graph},
                        {"why", "the fastest candidate that passed every quality gate and met the speed target"}};
      }
    }
  }

  // Where the time of the implementation in use goes.
  json layers = nullptr;
  if (!outcome.final_implementation.empty()) {
    const std::string graph = final_choice.value("graph", p.fp32_graph);
    const Engine* engine = fp32.engine ? &*fp32.engine : nullptr;
    for (const workflow::SpeedCandidate& c : speed_candidates)
      if (c.name == outcome.final_implementation) engine = &c.engine;
    if (engine) layers = workflow::engine_layers(ctx, *engine, graph);
  }

  outcome.exit_status = every_stage_accepted ? 0 : 1;
  summary += outcome.final_implementation.empty()
                 ? "final: none (stage 1 failed)\n"
                 : fmt::format("final: {} ({})\n", outcome.final_implementation, final_choice.value("why", ""));
  outcome.summary = summary;
  const json report = workflow::assemble_report(ctx, stages, final_choice, layers, outcome.exit_status);
  outcome.report_json = report.dump(2) + "\n";
  outcome.report_html = workflow::report_html(report);
  return outcome;
}

}  // namespace tensoracle
