// The workflow's reports: report.json (every stage, candidate, gate, limit, decision, timing,
// and the provenance of everything used) and report.html, drawn from the same object.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "workflow/run_context.h"

namespace tensoracle::workflow {

// The whole report (schema in docs/workflow.md).
nlohmann::json assemble_report(const RunContext& ctx, const nlohmann::json& stages, const nlohmann::json& final_choice,
                               const nlohmann::json& layers, int exit_status);

// The environment this run used: the backend's (environment.h) plus the host's CPU and load.
nlohmann::json environment_record(const std::string& backend);

// report.html: one self-contained page (inline CSS and SVG, no script, nothing fetched), every
// string from the report escaped. Sections: decisions, error histograms, latency distributions,
// per-step time, provenance.
std::string report_html(const nlohmann::json& report);

// HTML text escaping (& < > " ').
std::string html_escape(const std::string& text);

}  // namespace tensoracle::workflow
