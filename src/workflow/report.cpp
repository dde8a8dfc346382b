// report.json's assembly and the writing of both reports (report.h, workflow.h).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "core/errors.h"
#include "io/atomic_file.h"
#include "tensoracle/environment.h"
#include "tensoracle/hashing.h"
#include "tensoracle/version.h"
#include "workflow/plugin_libraries.h"
#include "workflow/report.h"

namespace tensoracle {

namespace workflow {

using nlohmann::json;

namespace {

std::string first_line_with(const std::string& path, const std::string& prefix) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

}  // namespace

json environment_record(const std::string& backend) {
  json env = json::object();
  if (auto probed = probe_environment(backend); probed.is_ok()) {
    env = json::parse(environment_to_json(*probed), nullptr, false);
    if (!probed->cuda_unavailable_reason.empty()) env["cuda_unavailable_reason"] = probed->cuda_unavailable_reason;
  }
  std::string cpu = first_line_with("/proc/cpuinfo", "model name");
  if (const size_t colon = cpu.find(':'); colon != std::string::npos) cpu = cpu.substr(colon + 2);
  std::string load;
  std::getline(std::ifstream("/proc/loadavg") >> std::ws, load);
  env["host"] = {{"cpu_model", cpu}, {"hardware_threads", std::thread::hardware_concurrency()}, {"load_average", load}};
  return env;
}

json assemble_report(const RunContext& ctx, const json& stages, const json& final_choice, const json& layers, int exit_status) {
  const Pipeline& p = ctx.pipeline;
  const std::string package_path = ctx.package.path();
  auto package_sha = sha256_file_hex(package_path);
  json report = {
      {"report_version", 1},
      {"tensoracle_version", TENSORACLE_VERSION_STRING},
      {"title", p.title},
      {"pipeline", {{"path", p.path}, {"sha256", p.sha256}}},
      {"backend", ctx.backend},
      {"model",
       {{"package", package_path},
        {"package_name", ctx.package.name()},
        {"package_sha256", package_sha.is_ok() ? *package_sha : ""},
        {"weights", p.weights.empty() ? "the package's default" : p.weights},
        {"plugin_libraries", plugin_libraries_record(ctx.plugins)},
        {"inputs", ctx.input_names},
        {"outputs", ctx.output_names}}},
      {"fixed_inputs", ctx.inputs.provenance},
      {"fixed_reference", ctx.reference.provenance},
      {"batch", {{"fixed", ctx.fixed_batch},
                 {"timing", ctx.timing_batch},
                 {"timing_inputs", ctx.timing_batch == ctx.fixed_batch
                                       ? "the fixed inputs"
                                       : "the fixed inputs' rows repeated cyclically along dim 0 to the timing batch"}}},
      {"stages", stages},
      {"final", final_choice},
      {"accepted_engine_layers", layers},
      {"engines", ctx.engines},
      {"environment", environment_record(ctx.backend)},
      {"exit_status", exit_status},
      {"exit_meaning", exit_status == 0 ? "stage 1 passed and every later stage that ran accepted a candidate"
                                        : "a stage rejected every candidate it had (see the failures)"}};
  return report;
}

}  // namespace workflow

Status write_workflow_reports(const WorkflowOutcome& outcome, const std::string& directory) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) return io_error("cannot create the report directory '{}': {}", directory, ec.message());
  TO_RETURN_IF_ERROR(write_file_atomically(directory + "/report.json", outcome.report_json.data(), outcome.report_json.size()));
  return write_file_atomically(directory + "/report.html", outcome.report_html.data(), outcome.report_html.size());
}

}  // namespace tensoracle
