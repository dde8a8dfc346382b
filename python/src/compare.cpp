// compare_outputs on NumPy arrays, dicts of them, or .npy/.npz/.safetensors paths (docs/compare.md).
// Per-output fields are named as in `tensoracle compare --json` (src/compare/report_json.cpp).
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "callbacks.h"
#include "errors.h"
#include "tensoracle/compare.h"
#include "tensoracle/npy.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tensoracle::python {
namespace {

// One side of a comparison: the arrays by name, and what keeps their bytes alive.
struct Side {
  NamedArrays loaded;                // read from a file
  std::vector<HostArrayArg> borrowed;  // NumPy arrays of the caller
  NamedArrayViews views;
};

Side read_side(nb::handle value, const char* role) {
  Side side;
  if (is_path(value)) {
    const std::string path = path_from_python(value);
    Result<NamedArrays> arrays = Status::ok();
    {
      nb::gil_scoped_release release;
      arrays = read_named_arrays(path);
    }
    side.loaded = unwrap(std::move(arrays));
    side.views = views_of(side.loaded);
  } else if (nb::isinstance<nb::dict>(value) || nb::hasattr(value, "keys")) {
    for (nb::handle key : nb::iter(value.attr("keys")())) {
      if (!nb::isinstance<nb::str>(key)) fail(std::string(role) + ": output names must be str, got " + python_repr(key));
      const std::string name = nb::cast<std::string>(key);
      HostArrayArg arg = host_array_from_python(value[key], std::string(role) + " '" + name + "'");
      side.views[name] = arg.view;
      side.borrowed.push_back(std::move(arg));
    }
  } else {
    HostArrayArg arg = host_array_from_python(value, role);
    side.views["output"] = arg.view;
    side.borrowed.push_back(std::move(arg));
  }
  return side;
}

Limits limits_from_python(nb::handle value) {
  if (value.is_none()) return Limits{};
  if (is_path(value)) {
    const std::string path = path_from_python(value);
    nb::gil_scoped_release release;
    return unwrap(read_limits_file(path));
  }
  const std::string text = nb::cast<std::string>(nb::module_::import_("json").attr("dumps")(value));
  return unwrap(parse_limits(text, "limits"));
}

// One output of a comparison as Python sees it: a comparison, or a shape mismatch.
struct OutputView {
  std::string name;
  std::optional<OutputComparison> comparison;
  std::optional<ComparisonReport::ShapeMismatch> mismatch;

  const ToleranceCheck* check() const {
    return comparison && comparison->tolerance_check ? &*comparison->tolerance_check : nullptr;
  }
  const ToleranceCheck::Worst* worst() const {
    const ToleranceCheck* c = check();
    return c != nullptr && c->worst ? &*c->worst : nullptr;
  }
};

struct ComparisonResult {
  ComparisonReport report;
  GateResult gate;
  std::map<std::string, OutputView> outputs;
};

template <typename T>
std::optional<T> when(bool present, T value) {
  return present ? std::optional<T>(value) : std::nullopt;
}

// A Python metric: fn(candidate, reference) -> float on copies of the two arrays (NumPy; the
// library's views live only for the call), under the GIL.
MetricDefinition python_metric(const std::string& name, nb::handle fn) {
  if (!PyCallable_Check(fn.ptr())) fail("custom_metrics['" + name + "']: expected a callable, got " + python_repr(fn));
  auto shared = share(nb::borrow(fn));
  return MetricDefinition{name, "Python callable " + python_repr(fn), [name, shared](const MetricInput& in) -> Result<double> {
    nb::gil_scoped_acquire gil;
    try {
      nb::object candidate = numpy_from_host(unwrap(HostArray::copy_of(in.candidate)));
      nb::object reference = numpy_from_host(unwrap(HostArray::copy_of(in.reference)));
      nb::object value = shared->get()(candidate, reference);
      if (!nb::hasattr(value, "__float__"))
        return Status(StatusCode::kInvalidArgument, "returned " + python_repr(value) + ", not a number");
      return nb::cast<double>(value.attr("__float__")());
    } catch (nb::python_error& error) {
      return status_from_python_error(error, python_repr(shared->get()));
    }
  }};
}

ComparisonResult compare(nb::handle candidate, nb::handle reference, std::optional<double> atol,
                         std::optional<double> rtol, nb::handle limits_arg, std::vector<std::string> metrics,
                         nb::handle custom_metrics, unsigned threads) {
  if (atol.has_value() != rtol.has_value()) fail("atol and rtol must be given together");
  Side cand = read_side(candidate, "candidate");
  Side ref = read_side(reference, "reference");
  // Two single arrays are the same output whatever their names (as `tensoracle compare` does).
  if (cand.views.size() == 1 && ref.views.size() == 1 && cand.views.begin()->first != ref.views.begin()->first) {
    const ArrayView view = cand.views.begin()->second;
    cand.views.clear();
    cand.views[ref.views.begin()->first] = view;
  }
  Limits limits = limits_from_python(limits_arg);
  if (atol) {
    // The tolerance given here applies to every output, over any in the limits.
    const Tolerance tolerance{*atol, *rtol};
    limits.defaults.tolerance = tolerance;
    for (auto& entry : limits.outputs) entry.second.tolerance = tolerance;
  }
  MetricRegistry registry = builtin_metrics();
  if (!custom_metrics.is_none()) {
    for (nb::handle key : nb::iter(custom_metrics.attr("keys")())) {
      const std::string name = nb::cast<std::string>(key);
      check(registry.add(python_metric(name, custom_metrics[key])));
      if (std::find(metrics.begin(), metrics.end(), name) == metrics.end()) metrics.push_back(name);
    }
  }
  CompareOptions base;
  base.metrics = std::move(metrics);
  base.registry = &registry;
  base.threads = threads;
  const CompareOptions options = compare_options_for(limits, base);

  ComparisonResult result;
  {
    nb::gil_scoped_release release;
    result.report = unwrap(compare_outputs(cand.views, ref.views, options));
    result.gate = unwrap(evaluate_gate(result.report, limits));
  }
  for (const auto& [name, comparison] : result.report.outputs) result.outputs[name] = OutputView{name, comparison, {}};
  for (const auto& [name, mismatch] : result.report.shape_mismatches) result.outputs[name] = OutputView{name, {}, mismatch};
  return result;
}

void bind_output_view(nb::module_& m) {
  nb::class_<OutputView>(m, "OutputComparison",
                         "One output compared with its reference; fields as in `tensoracle compare --json`. Metric "
                         "fields are None for a shape mismatch (then `error` says so) and tolerance fields are None "
                         "when no tolerance was given.")
      .def_ro("name", &OutputView::name)
      .def_prop_ro("error", [](const OutputView& o) { return when<std::string>(o.mismatch.has_value(), "shape mismatch"); },
                   "\"shape mismatch\" when the two sides' shapes differ, else None")
      .def_prop_ro("shape", [](const OutputView& o) { return shape_tuple(o.comparison ? o.comparison->shape : o.mismatch->candidate_shape); },
                   "the candidate's shape")
      .def_prop_ro("reference_shape", [](const OutputView& o) { return shape_tuple(o.comparison ? o.comparison->shape : o.mismatch->reference_shape); })
      .def_prop_ro("dtype", [](const OutputView& o) {
        return std::string(data_type_name(o.comparison ? o.comparison->candidate_dtype : o.mismatch->candidate_dtype));
      }, "the candidate's type (\"fp32\", \"bf16\", ...)")
      .def_prop_ro("reference_dtype", [](const OutputView& o) {
        return std::string(data_type_name(o.comparison ? o.comparison->reference_dtype : o.mismatch->reference_dtype));
      })
#define TO_COMPARISON_FIELD_(name, expr)                                                            \
  def_prop_ro(name, [](const OutputView& o) { return o.comparison ? std::optional(o.comparison->expr) : std::nullopt; })
      .TO_COMPARISON_FIELD_("element_count", element_count)
      .TO_COMPARISON_FIELD_("candidate_nan", candidate_non_finite.nan)
      .TO_COMPARISON_FIELD_("candidate_posinf", candidate_non_finite.posinf)
      .TO_COMPARISON_FIELD_("candidate_neginf", candidate_non_finite.neginf)
      .TO_COMPARISON_FIELD_("reference_nan", reference_non_finite.nan)
      .TO_COMPARISON_FIELD_("reference_posinf", reference_non_finite.posinf)
      .TO_COMPARISON_FIELD_("reference_neginf", reference_non_finite.neginf)
      .TO_COMPARISON_FIELD_("finite_pair_count", finite_pair_count)
      .TO_COMPARISON_FIELD_("max_abs_error", max_abs_error)
      .TO_COMPARISON_FIELD_("rel_l2_error", rel_l2_error)
      .TO_COMPARISON_FIELD_("cosine_similarity", cosine_similarity)
      .TO_COMPARISON_FIELD_("metrics", metrics)
#undef TO_COMPARISON_FIELD_
      .def_prop_ro("atol", [](const OutputView& o) { return o.check() ? std::optional(o.check()->tolerance.atol) : std::nullopt; })
      .def_prop_ro("rtol", [](const OutputView& o) { return o.check() ? std::optional(o.check()->tolerance.rtol) : std::nullopt; })
      .def_prop_ro("outside_tolerance_count", [](const OutputView& o) { return o.check() ? std::optional(o.check()->outside_count) : std::nullopt; })
      .def_prop_ro("outside_tolerance_fraction", [](const OutputView& o) { return o.check() ? std::optional(o.check()->outside_fraction) : std::nullopt; })
      .def_prop_ro("worst_index", [](const OutputView& o) { return o.worst() ? std::optional(o.worst()->index) : std::nullopt; },
                   "multi-index of the element furthest outside atol + rtol*|ref|")
      .def_prop_ro("worst_candidate", [](const OutputView& o) { return o.worst() ? std::optional(o.worst()->candidate) : std::nullopt; })
      .def_prop_ro("worst_reference", [](const OutputView& o) { return o.worst() ? std::optional(o.worst()->reference) : std::nullopt; })
      .def_prop_ro("worst_excess", [](const OutputView& o) { return o.worst() ? std::optional(o.worst()->excess) : std::nullopt; })
      .def("__repr__", [](const OutputView& o) {
        if (o.mismatch) return "<OutputComparison '" + o.name + "': shape mismatch>";
        return "<OutputComparison '" + o.name + "': max_abs_error=" + std::to_string(o.comparison->max_abs_error) +
               " rel_l2_error=" + std::to_string(o.comparison->rel_l2_error) + ">";
      });
}

void bind_result(nb::module_& m) {
  nb::class_<Violation>(m, "Violation", "A limit an output missed.")
      .def_ro("output", &Violation::output)
      .def_ro("limit", &Violation::limit, "the limits key (\"max_abs_error\", \"metrics.psnr.min\", \"shape\", ...)")
      .def_ro("value", &Violation::value)
      .def_ro("threshold", &Violation::threshold)
      .def_ro("message", &Violation::message)
      .def("__repr__", [](const Violation& v) { return "<Violation " + v.message + ">"; });

  nb::class_<ComparisonResult>(m, "ComparisonResult",
                               "The comparison of named outputs and its gate: `passed`, the `reasons` it failed, "
                               "and each output's metrics by name (`result.outputs[name]` or `result[name]`).")
      .def_prop_ro("passed", [](const ComparisonResult& r) { return r.gate.passed; })
      .def_prop_ro("reasons", [](const ComparisonResult& r) {
        std::vector<std::string> reasons;
        for (const Violation& v : r.gate.violations) reasons.push_back(v.message);
        return reasons;
      }, "one sentence per violated limit (empty when passed)")
      .def_prop_ro("violations", [](const ComparisonResult& r) { return r.gate.violations; })
      .def_prop_ro("outputs", [](const ComparisonResult& r) { return r.outputs; },
                   "every output present on both sides, by name")
      .def_prop_ro("missing_outputs", [](const ComparisonResult& r) { return r.report.missing_outputs; },
                   "names in the reference only")
      .def_prop_ro("extra_outputs", [](const ComparisonResult& r) { return r.report.extra_outputs; },
                   "names in the candidate only")
      .def("__getitem__", [](const ComparisonResult& r, const std::string& name) {
        auto it = r.outputs.find(name);
        if (it == r.outputs.end()) {
          std::string names;
          for (const auto& entry : r.outputs) names += (names.empty() ? "'" : ", '") + entry.first + "'";
          throw nb::key_error(("no output '" + name + "' in the comparison (outputs: " + names + ")").c_str());
        }
        return it->second;
      })
      .def("__contains__", [](const ComparisonResult& r, const std::string& name) { return r.outputs.count(name) > 0; })
      .def("__len__", [](const ComparisonResult& r) { return r.outputs.size(); })
      .def("to_json", [](const ComparisonResult& r) { return comparison_json(r.report, r.gate); },
           "The report as `tensoracle compare --json` prints it.")
      .def("table", [](const ComparisonResult& r) { return comparison_table(r.report, r.gate); },
           "The report as `tensoracle compare` prints it.")
      .def("__repr__", [](const ComparisonResult& r) {
        return std::string("<ComparisonResult ") + (r.gate.passed ? "passed" : "failed") + ", " +
               std::to_string(r.outputs.size()) + " output(s), " + std::to_string(r.gate.violations.size()) +
               " violation(s)>";
      });
}

}  // namespace

void bind_compare(nb::module_& m) {
  bind_output_view(m);
  bind_result(m);
  m.def("compare_outputs", &compare, "candidate"_a, "reference"_a, "atol"_a = nb::none(), "rtol"_a = nb::none(),
        nb::kw_only(), "limits"_a = nb::none(), "metrics"_a = std::vector<std::string>{}, "custom_metrics"_a = nb::none(),
        "threads"_a = 0,
        nb::sig("def compare_outputs(candidate: numpy.typing.ArrayLike | typing.Mapping[str, numpy.typing.ArrayLike] | "
                "str | os.PathLike[str], reference: numpy.typing.ArrayLike | typing.Mapping[str, numpy.typing.ArrayLike] "
                "| str | os.PathLike[str], atol: float | None = None, rtol: float | None = None, *, limits: "
                "typing.Mapping[str, typing.Any] | str | os.PathLike[str] | None = None, metrics: typing.Sequence[str] "
                "= (), custom_metrics: typing.Mapping[str, typing.Callable[[numpy.typing.NDArray[typing.Any], "
                "numpy.typing.NDArray[typing.Any]], float]] | None = None, threads: int = 0) -> ComparisonResult"),
        "Compares candidate outputs with reference outputs and gates them.\n\n"
        "Each side is one array (then `.outputs` has one entry, named after the reference when it comes from a file, "
        "else \"output\"), a mapping of names to arrays, or a .npy / .npz / .safetensors path. Arrays may be of any "
        "layout; every tensoracle type is accepted (bf16 and fp8 as ml_dtypes arrays).\n\n"
        "atol and rtol (given together) add the element-wise check |c - r| <= atol + rtol*|r| for every output. "
        "`limits` is the JSON limits format of docs/compare.md as a dict, or a path to such a file; without it the "
        "gate is \"all finite, and within the tolerance when one is given\". `metrics` adds extra metrics (psnr, "
        "snr, mse); `custom_metrics` adds model-specific ones, name -> fn(candidate, reference) -> float, computed "
        "for every output and bounded by limits like the built-in ones (\"metrics\": {name: {\"min\": ...}}). A shape mismatch or a missing output fails the gate (result.passed is False and result.reasons "
        "says why); unreadable files and bad limits raise tensoracle.Error.");
}

}  // namespace tensoracle::python
