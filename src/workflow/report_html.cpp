// report.html (report.h): the decision table first, then the plots, then provenance.
#include <fmt/format.h>

#include "workflow/report.h"
#include "workflow/svg_plots.h"

namespace tensoracle::workflow {

using nlohmann::json;

namespace {

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}.accepted{color:#11691f;font-weight:600}.rejected{color:#a11;font-weight:600}.not_run{color:#777}
figure{margin:1em 0}figcaption{font-size:.9em;color:#444}pre{background:#f7f7f7;padding:.5em;overflow:auto;max-height:30em}
.plot .axis,.plot .tick{stroke:#444}.plot .bar{fill:#4a78b5}.plot .limit{stroke:#c22;stroke-dasharray:4 3;stroke-width:1.5}
.plot text{font:11px sans-serif;fill:#333}.plot .limit-label{fill:#c22}
.plot .series-a{fill:none;stroke:#777;stroke-width:1.5}.plot .series-b{fill:none;stroke:#1d6fd1;stroke-width:1.5}
.plot .median-a{stroke:#777;stroke-dasharray:3 2}.plot .median-b{stroke:#1d6fd1;stroke-dasharray:3 2}
.plot .legend-a{fill:#555}.plot .legend-b{fill:#1d6fd1}
)";

std::string str(const json& j, const char* key, const std::string& fallback = "") {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// A number of the report with 4 significant digits (strings such as "inf" as they are).
std::string num(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return str(j, key);
  return fmt::format("{:.4g}", it->get<double>());
}

std::string cell(const std::string& s) { return "<td>" + html_escape(s) + "</td>"; }

std::string decision_cell(const std::string& d) {
  return fmt::format(R"(<td class="{}">{}</td>)", html_escape(d), html_escape(d));
}

std::string decisions_table(const json& report) {
  std::string s = "<table class=\"decisions\"><tr><th>stage</th><th>candidate</th><th>engine graph</th><th>decision</th><th>"
                  "which gate, output, by how much</th></tr>\n";
  for (const json& stage : report["stages"]) {
    const std::string n = str(stage, "stage");
    if (!stage.value("ran", false)) {
      s += "<tr>" + cell(n) + cell("—") + cell("") + decision_cell("not_run") + cell(str(stage, "reason")) + "</tr>\n";
      continue;
    }
    for (const json& c : stage["candidates"]) {
      std::string why;
      for (const json& f : c["failures"]) why += (why.empty() ? "" : "<br>") + html_escape(f.get<std::string>());
      if (why.empty() && c.contains("speedup"))
        why = html_escape(fmt::format("speed-up {} [{}, {}] ≥ target {}x", num(c["speedup"], "estimate"), num(c["speedup"], "low"),
                                      num(c["speedup"], "high"), num(c, "target")));
      if (why.empty()) why = "every limit met";
      s += "<tr>" + cell(n) + cell(str(c, "name")) + cell(str(c, "engine")) + decision_cell(str(c, "decision")) + "<td>" +
           why + "</td></tr>\n";
    }
  }
  return s + "</table>\n";
}

std::string histograms(const json& report) {
  std::string s;
  for (const json& stage : report["stages"]) {
    if (!stage.value("ran", false) || str(stage, "stage") == "4") continue;
    for (const json& c : stage["candidates"])
      for (const json& gate : c["gates"]) {
        if (!gate.contains("error_histograms")) continue;
        for (const auto& [output, h] : gate["error_histograms"].items()) {
          std::vector<double> counts;
          for (const json& v : h["counts"]) counts.push_back(v.get<double>());
          std::vector<LimitLine> limits;
          for (const json& l : h["limits"]) limits.push_back({l["name"].get<std::string>(), l["value"].get<double>()});
          s += "<figure>" +
               error_histogram_svg(counts, h["low_exponent"].get<int>(), h["bins_per_decade"].get<int>(), limits,
                                   h["zero_count"].get<double>(), h["non_finite_count"].get<double>()) +
               "<figcaption>" +
               html_escape(fmt::format("stage {}, {} — output '{}', {} against {}: {}", str(stage, "stage"), str(c, "name"),
                                       output, str(gate, "gate"), str(gate, "against"),
                                       gate.value("passed", false) ? "passed" : "failed")) +
               "</figcaption></figure>\n";
        }
      }
  }
  return s.empty() ? "<p>No comparison ran.</p>\n" : s;
}

std::string latencies(const json& report) {
  std::string s;
  for (const json& stage : report["stages"]) {
    if (str(stage, "stage") != "4" || !stage.value("ran", false)) continue;
    s += "<p>" + html_escape(fmt::format("Target: {}x in {} mode at batch {} on the {} backend; clock: {}. Rule: {}.",
                                         str(stage["target"], "min_speedup"), str(stage["target"], "mode"),
                                         str(stage["target"], "batch"), str(stage["target"], "backend"), str(stage, "clock"),
                                         str(stage["target"], "rule"))) +
         "</p>\n";
    for (const json& c : stage["candidates"]) {
      const json& run = c["timing"]["runs"][0];
      std::vector<double> a = run["baseline"]["samples_ms"].get<std::vector<double>>();
      std::vector<double> b = run["candidate"]["samples_ms"].get<std::vector<double>>();
      const json& load = c["timing"]["load_check"];
      s += "<figure>" + latency_svg(a, b, "baseline " + str(stage, "baseline"), str(c, "name")) + "<figcaption>" +
           html_escape(fmt::format("{} vs baseline '{}': speed-up {} [{}, {}], {}; {}; load check: {}{}", str(c, "name"),
                                   str(stage, "baseline"), num(c["speedup"], "estimate"), num(c["speedup"], "low"),
                                   num(c["speedup"], "high"), str(c, "decision"), str(run["ratio"], "method"),
                                   str(load, "status"), load.value("reason", "").empty() ? "" : " (" + str(load, "reason") + ")")) +
           "</figcaption></figure>\n";
    }
  }
  return s.empty() ? "<p>Stage 4 did not run.</p>\n" : s;
}

std::string layers(const json& report) {
  const json& l = report["accepted_engine_layers"];
  if (l.is_null()) return "<p>No implementation is in use (stage 1 failed).</p>\n";
  std::string s = "<p>" + html_escape(fmt::format("Engine of graph '{}': {}", str(l, "graph"), str(l, "note"))) + "</p>\n";
  std::vector<BarItem> items;
  for (const json& step : l["layers"]) items.push_back({str(step, "kind") + " " + str(step, "layers"), step["median_ms"].get<double>()});
  if (!items.empty()) s += "<figure>" + bars_svg(items, "ms", 30) + "<figcaption>the 30 slowest steps</figcaption></figure>\n";
  return s;
}

std::string provenance(const json& report) {
  std::string s = "<table>";
  const auto row = [&](const std::string& k, const std::string& v) { s += "<tr><th>" + html_escape(k) + "</th>" + cell(v) + "</tr>\n"; };
  row("pipeline", str(report["pipeline"], "path") + "  sha256 " + str(report["pipeline"], "sha256"));
  row("model package", str(report["model"], "package") + "  sha256 " + str(report["model"], "package_sha256"));
  row("weights", str(report["model"], "weights"));
  for (const json& library : report["model"]["plugin_libraries"])
    row("plugin library", fmt::format("{}  sha256 {}  plugins: {}", str(library, "path"), str(library, "sha256"),
                                      fmt::join(library["plugins"].get<std::vector<std::string>>(), ", ")));
  for (const char* side : {"fixed_inputs", "fixed_reference"}) {
    const json& f = report[side];
    row(side, str(f, "file") + "  sha256 " + str(f, "file_sha256"));
    for (const auto& [name, a] : f["arrays"].items())
      row(std::string(side) + " / " + name, fmt::format("array '{}' {} {} sha256 {}", str(a, "array"), str(a, "dtype"),
                                                        a["shape"].dump(), str(a, "sha256")));
  }
  row("batch", report["batch"].dump());
  for (const auto& [graph, e] : report["engines"].items())
    row("engine " + graph, fmt::format("key {}  sha256 {}  {}", str(e, "key"), str(e, "engine_sha256"),
                                       e.value("built", false) ? fmt::format("built in {} s", str(e, "build_seconds"))
                                                               : std::string("reused from the cache")));
  s += "</table>\n";
  for (const auto& [graph, e] : report["engines"].items())
    s += "<details><summary>" + html_escape("key manifest of " + graph) + "</summary><pre>" +
         html_escape(e["key_manifest"].dump(2)) + "</pre></details>\n";
  s += "<details><summary>environment</summary><pre>" + html_escape(report["environment"].dump(2)) + "</pre></details>\n";
  return s;
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string report_html(const json& report) {
  const json& final = report["final"];
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" +
                  html_escape("tensoracle optimize: " + str(report, "title")) + "</title>\n<style>" + kStyle +
                  "</style></head><body>\n";
  s += "<h1>" + html_escape("tensoracle optimize: " + str(report, "title")) + "</h1>\n";
  s += "<p class=\"summary\">" +
       html_escape(fmt::format("In use: {} — {}. Backend {}. Exit status {}: {}.", str(final, "implementation", "none"),
                               str(final, "why", "every stage accepted a candidate"), str(report, "backend"),
                               str(report, "exit_status"), str(report, "exit_meaning"))) +
       "</p>\n";
  s += "<h2 id=\"decisions\">Decisions</h2>\n" + decisions_table(report);
  s += "<h2 id=\"errors\">Error histograms</h2>\n<p>|candidate − reference| per element on a log axis; dashed lines are the "
       "output's limits (max_abs_error, atol).</p>\n" +
       histograms(report);
  s += "<h2 id=\"latency\">Latency: baseline vs candidate</h2>\n" + latencies(report);
  s += "<h2 id=\"layers\">Per-step time of the implementation in use</h2>\n" + layers(report);
  s += "<h2 id=\"provenance\">Provenance</h2>\n" + provenance(report);
  return s + "</body></html>\n";
}

}  // namespace tensoracle::workflow
