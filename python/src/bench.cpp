// The timing harness (include/tensoracle/bench.h): bench_engine and bench_ab on host
// arrays or seeded synthetic inputs, their reports, and the settings. tensoracle.bench
// (python/tensoracle/bench.py) groups them.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "errors.h"
#include "tensoracle/bench.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tensoracle::python {
namespace {

// A report with the settings it was measured under (its JSON records them).
struct PyBenchReport {
  BenchReport report;
  BenchSettings settings;
};
struct PyAbReport {
  AbReport report;
  BenchSettings settings;
};

// The arrays to time on: the caller's (dim 0 set to `batch` when > 0), or synthetic ones.
NamedArrays bench_inputs(const Engine& engine, nb::handle inputs, int64_t batch, size_t profile) {
  if (inputs.is_none()) return unwrap(synthetic_inputs(engine, profile, batch));
  std::vector<HostArrayArg> arrays;
  NamedArrayViews views;
  for (nb::handle key : nb::iter(inputs.attr("keys")())) {
    const std::string name = nb::cast<std::string>(key);
    HostArrayArg arg = host_array_from_python(inputs[key], "input '" + name + "'");
    views[name] = arg.view;
    arrays.push_back(std::move(arg));
  }
  if (batch > 0) return unwrap(arrays_at_batch(views, batch));
  NamedArrays copies;
  for (const auto& [name, view] : views) copies[name] = unwrap(HostArray::copy_of(view));
  return copies;
}

std::vector<std::string> mode_names(const std::vector<TimingMode>& modes) {
  std::vector<std::string> names;
  for (TimingMode m : modes) names.emplace_back(timing_mode_name(m));
  return names;
}

void bind_settings(nb::module_& m) {
  nb::class_<BootstrapSettings>(m, "BootstrapSettings", "The percentile bootstrap of a median ratio.")
      .def(nb::init<>())
      .def_rw("resamples", &BootstrapSettings::resamples)
      .def_rw("confidence", &BootstrapSettings::confidence, "in (0, 1)")
      .def_rw("seed", &BootstrapSettings::seed, "the resampling is deterministic for a seed");

  nb::class_<BenchSettings>(m, "BenchSettings", "What bench_engine and bench_ab measure (docs/bench.md).")
      .def(nb::init<>())
      .def_rw("warmup", &BenchSettings::warmup, "enqueues per execution before timing")
      .def_rw("iterations", &BenchSettings::iterations, "timed samples per mode (per side for bench_ab)")
      .def_rw("placements", &BenchSettings::placements,
              "bench_ab: executions per side, each with its own device memory; the interval resamples them")
      .def_rw("throughput_group", &BenchSettings::throughput_group, "enqueues per throughput sample")
      .def_prop_rw("modes", [](const BenchSettings& s) { return mode_names(s.modes); },
                   [](BenchSettings& s, const std::vector<std::string>& names) {
                     std::vector<TimingMode> modes;
                     for (const std::string& n : names) modes.push_back(unwrap(parse_timing_mode(n)));
                     s.modes = std::move(modes);
                   }, "\"latency\" and/or \"throughput\"")
      .def_rw("load_check", &BenchSettings::load_check)
      .def_rw("max_utilization_before_percent", &BenchSettings::max_utilization_before_percent)
      .def_rw("max_other_cpu_percent", &BenchSettings::max_other_cpu_percent)
      .def_rw("profile_layers", &BenchSettings::profile_layers, "also time each step alone (cuda only)")
      .def_rw("profile_iterations", &BenchSettings::profile_iterations)
      .def_rw("bootstrap", &BenchSettings::bootstrap)
      .def_rw("profile", &BenchSettings::profile, "the engine's optimization profile");
}

void bind_results(nb::module_& m) {
  nb::class_<TimingStats>(m, "TimingStats", "Statistics of one mode's samples, in milliseconds per enqueue.")
      .def_ro("count", &TimingStats::count)
      .def_ro("min_ms", &TimingStats::min_ms)
      .def_ro("median_ms", &TimingStats::median_ms)
      .def_ro("mean_ms", &TimingStats::mean_ms)
      .def_ro("p90_ms", &TimingStats::p90_ms)
      .def_ro("p99_ms", &TimingStats::p99_ms)
      .def_ro("max_ms", &TimingStats::max_ms)
      .def_ro("stddev_ms", &TimingStats::stddev_ms)
      .def_ro("cv", &TimingStats::cv, "coefficient of variation, stddev / mean");

  nb::class_<TimingRun>(m, "TimingRun", "One timing mode's samples and statistics.")
      .def_prop_ro("mode", [](const TimingRun& r) { return std::string(timing_mode_name(r.mode)); })
      .def_ro("clock", &TimingRun::clock, "\"cuda_events\" or \"steady_clock\"")
      .def_ro("execution", &TimingRun::execution, "\"cuda_graph_replay\", \"cuda_direct\" or \"host\"")
      .def_ro("group", &TimingRun::group)
      .def_ro("samples_ms", &TimingRun::samples_ms)
      .def_ro("stats", &TimingRun::stats)
      .def_ro("items_per_second", &TimingRun::items_per_second);

  nb::class_<RatioInterval>(m, "RatioInterval", "median(candidate) / median(baseline) with its confidence interval.")
      .def_ro("estimate", &RatioInterval::estimate)
      .def_ro("low", &RatioInterval::low)
      .def_ro("high", &RatioInterval::high)
      .def_ro("confidence", &RatioInterval::confidence)
      .def_ro("method", &RatioInterval::method);

  nb::class_<LoadCheck>(m, "LoadCheck", "Whether anything else used the GPU (NVML) or the host while timing.")
      .def_ro("status", &LoadCheck::status, "\"nvml\", \"host\", \"unavailable\" or \"off\"")
      .def_ro("reason", &LoadCheck::reason)
      .def_ro("isolated", &LoadCheck::isolated)
      .def_ro("invalid_reasons", &LoadCheck::invalid_reasons)
      .def_ro("notes", &LoadCheck::notes)
      .def_ro("host_other_cpu_percent", &LoadCheck::host_other_cpu_percent);

  nb::class_<PyBenchReport>(m, "BenchReport", "bench_engine's result (valid: no load was seen).")
      .def_prop_ro("backend", [](const PyBenchReport& r) { return r.report.backend; })
      .def_prop_ro("batch", [](const PyBenchReport& r) { return r.report.batch; })
      .def_prop_ro("runs", [](const PyBenchReport& r) { return r.report.runs; }, "one per mode")
      .def_prop_ro("load", [](const PyBenchReport& r) { return r.report.load; })
      .def_prop_ro("valid", [](const PyBenchReport& r) { return r.report.valid; })
      .def_prop_ro("layers", [](const PyBenchReport& r) {
        nb::list out;
        for (const LayerTiming& l : r.report.layers)
          out.append(nb::make_tuple(l.layers, l.kind, l.tactic, l.median_ms));
        return out;
      }, "per step (settings.profile_layers): (layers, kind, tactic, median_ms)")
      .def("to_json", [](const PyBenchReport& r) { return bench_report_json(r.report, r.settings); },
           "as `tensoracle bench --json` prints it")
      .def("to_text", [](const PyBenchReport& r) { return bench_report_text(r.report); });

  nb::class_<AbRun>(m, "AbRun", "One mode of an interleaved A/B run.")
      .def_prop_ro("mode", [](const AbRun& r) { return std::string(timing_mode_name(r.mode)); })
      .def_ro("candidate", &AbRun::candidate)
      .def_ro("baseline", &AbRun::baseline)
      .def_ro("ratio", &AbRun::ratio, "candidate / baseline: below 1 the candidate is faster");

  nb::class_<PyAbReport>(m, "AbReport", "bench_ab's result (valid: no load was seen).")
      .def_prop_ro("backend", [](const PyAbReport& r) { return r.report.backend; })
      .def_prop_ro("batch", [](const PyAbReport& r) { return r.report.batch; })
      .def_prop_ro("runs", [](const PyAbReport& r) { return r.report.runs; })
      .def_prop_ro("load", [](const PyAbReport& r) { return r.report.load; })
      .def_prop_ro("valid", [](const PyAbReport& r) { return r.report.valid; })
      .def("to_json", [](const PyAbReport& r) { return ab_report_json(r.report, r.settings); })
      .def("to_text", [](const PyAbReport& r) { return ab_report_text(r.report); });
}

}  // namespace

void bind_bench(nb::module_& m) {
  bind_settings(m);
  bind_results(m);
  m.def("bench_engine", [](const Engine& engine, nb::handle inputs, std::optional<BenchSettings> settings, int64_t batch) {
    PyBenchReport out{{}, settings.value_or(BenchSettings{})};
    const NamedArrays arrays = bench_inputs(engine, inputs, batch, out.settings.profile);
    nb::gil_scoped_release release;
    out.report = unwrap(bench_engine(engine, views_of(arrays), out.settings));
    return out;
  }, "engine"_a, "inputs"_a = nb::none(), "settings"_a = nb::none(), nb::kw_only(), "batch"_a = 0,
        nb::sig("def bench_engine(engine: Engine, inputs: typing.Mapping[str, numpy.typing.ArrayLike] | None = None, "
                "settings: BenchSettings | None = None, *, batch: int = 0) -> BenchReport"),
        "Times an engine (`tensoracle bench`): on `inputs` (host arrays by input name) or, without them, seeded "
        "synthetic inputs at the profile's opt shape; `batch` > 0 sets dim 0 of every input. The GIL is released.");
  m.def("bench_ab", [](const Engine& candidate, const Engine& baseline, nb::handle inputs,
                       std::optional<BenchSettings> settings, int64_t batch) {
    PyAbReport out{{}, settings.value_or(BenchSettings{})};
    const NamedArrays arrays = bench_inputs(baseline, inputs, batch, out.settings.profile);
    nb::gil_scoped_release release;
    out.report = unwrap(bench_ab(candidate, baseline, views_of(arrays), out.settings));
    return out;
  }, "candidate"_a, "baseline"_a, "inputs"_a = nb::none(), "settings"_a = nb::none(), nb::kw_only(), "batch"_a = 0,
        nb::sig("def bench_ab(candidate: Engine, baseline: Engine, inputs: typing.Mapping[str, numpy.typing.ArrayLike] | "
                "None = None, settings: BenchSettings | None = None, *, batch: int = 0) -> AbReport"),
        "Times two engines of one backend with the same I/O interleaved, with a confidence interval on the ratio "
        "of their medians (`tensoracle bench --baseline`).");
}

}  // namespace tensoracle::python
