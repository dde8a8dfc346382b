// InspectReport: the verdict and its text and JSON forms.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "tensoracle/bundle.h"

namespace tensoracle {

bool InspectReport::passed() const {
  return !checks.empty() && std::all_of(checks.begin(), checks.end(), [](const BundleCheck& c) { return c.passed; });
}

std::vector<BundleCheck> InspectReport::failures() const {
  std::vector<BundleCheck> out;
  std::copy_if(checks.begin(), checks.end(), std::back_inserter(out), [](const BundleCheck& c) { return !c.passed; });
  return out;
}

std::string inspect_report_to_json(const InspectReport& report) {
  nlohmann::json json;
  json["target"] = report.target;
  json["passed"] = report.passed();
  json["checks"] = nlohmann::json::array();
  for (const BundleCheck& check : report.checks) {
    json["checks"].push_back(
        {{"check", check.name}, {"subject", check.subject}, {"passed", check.passed}, {"reason", check.reason}});
  }
  return json.dump(2) + "\n";
}

std::string inspect_report_to_text(const InspectReport& report) {
  size_t name_width = 0, subject_width = 0;
  for (const BundleCheck& check : report.checks) {
    name_width = std::max(name_width, check.name.size());
    subject_width = std::max(subject_width, check.subject.size());
  }
  std::string out;
  for (const BundleCheck& check : report.checks) {
    out += fmt::format("{} {:<{}}  {:<{}}  {}\n", check.passed ? "PASS" : "FAIL", check.name, name_width,
                       check.subject, subject_width, check.reason);
  }
  const size_t failed = report.failures().size();
  out += fmt::format("{}: {} check(s), {} failed — {}\n", report.target, report.checks.size(), failed,
                     report.passed() ? "OK" : "FAILED");
  return out;
}

}  // namespace tensoracle
