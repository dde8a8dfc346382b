// comparison_table: the human-readable report printed by `tensoracle compare`.
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/counted.h"
#include "tensoracle/compare.h"

namespace tensoracle {
namespace {

using Row = std::vector<std::string>;

std::string render(const std::vector<Row>& rows) {
  std::vector<size_t> widths;
  for (const Row& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string text;
  for (const Row& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    text += line + "\n";
  }
  return text;
}

std::string sci(double value) { return std::isfinite(value) ? fmt::format("{:.3e}", value) : fmt::format("{}", value); }

std::string counts(const NonFiniteCounts& c) { return c.total() == 0 ? "0" : non_finite_text(c); }

std::string dtypes(DataType candidate, DataType reference) {
  if (candidate == reference) return std::string(data_type_name(candidate));
  return fmt::format("{}/{}", data_type_name(candidate), data_type_name(reference));
}

Row output_row(const std::string& name, const OutputComparison& c) {
  std::string outside = "-";
  std::string worst = "-";
  if (c.tolerance_check) {
    const ToleranceCheck& check = *c.tolerance_check;
    outside = fmt::format("{} ({:.4g}%)", check.outside_count, 100.0 * check.outside_fraction);
    if (check.worst) {
      worst = fmt::format("[{}] {:.7g} vs {:.7g}", fmt::join(check.worst->index, ","), check.worst->candidate,
                          check.worst->reference);
    }
  }
  return {name,
          c.shape.to_string(),
          dtypes(c.candidate_dtype, c.reference_dtype),
          counts(c.candidate_non_finite),
          counts(c.reference_non_finite),
          sci(c.max_abs_error),
          sci(c.rel_l2_error),
          fmt::format("{:.9f}", c.cosine_similarity),
          outside,
          worst};
}

}  // namespace

std::string comparison_table(const ComparisonReport& report, const GateResult& gate) {
  std::vector<Row> rows = {{"output", "shape", "dtype", "cand non-finite", "ref non-finite", "max_abs_err",
                            "rel_l2_err", "cosine", "outside tol", "worst (cand vs ref)"}};
  for (const auto& [name, comparison] : report.outputs) rows.push_back(output_row(name, comparison));
  for (const auto& [name, m] : report.shape_mismatches) {
    rows.push_back({name, fmt::format("{} vs {}", m.candidate_shape.to_string(), m.reference_shape.to_string()),
                    dtypes(m.candidate_dtype, m.reference_dtype), "shape mismatch"});
  }
  std::string text = render(rows);

  for (const auto& [name, comparison] : report.outputs) {
    if (comparison.metrics.empty()) continue;
    std::string line;
    for (const auto& [metric, value] : comparison.metrics) line += fmt::format("  {} {:.6g}", metric, value);
    text += fmt::format("{}:{}\n", name, line);
  }
  if (!report.missing_outputs.empty())
    text += fmt::format("missing in candidate: {}\n", fmt::join(report.missing_outputs, ", "));
  if (!report.extra_outputs.empty())
    text += fmt::format("only in candidate: {}\n", fmt::join(report.extra_outputs, ", "));
  for (const Violation& v : gate.violations) text += fmt::format("violation: {}\n", v.message);
  text += gate.passed ? "PASSED\n" : "FAILED (" + counted(gate.violations.size(), "violation") + ")\n";
  return text;
}

}  // namespace tensoracle
