// The four-stage workflow runner (include/tensoracle/workflow.h): a pipeline file in,
// the decisions and the reports out, as `tensoracle optimize`. tensoracle.workflow
// (python/tensoracle/workflow.py) wraps it.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>

#include "arrays.h"
#include "bindings.h"
#include "callbacks.h"
#include "errors.h"
#include "tensoracle/workflow.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tensoracle::python {

void bind_workflow(nb::module_& m) {
  nb::class_<Pipeline>(m, "Pipeline", "A checked pipeline file (docs/workflow.md).")
      .def_static("load", [](nb::handle path) {
        const std::string p = path_from_python(path);
        nb::gil_scoped_release release;
        return unwrap(load_pipeline(p));
      }, "path"_a, nb::sig("def load(path: str | os.PathLike[str]) -> Pipeline"))
      .def_ro("path", &Pipeline::path)
      .def_ro("sha256", &Pipeline::sha256)
      .def_ro("title", &Pipeline::title)
      .def_ro("package", &Pipeline::package)
      .def_ro("plugins", &Pipeline::plugins, "[model] plugins: the plugin libraries' resolved paths")
      .def_ro("backend", &Pipeline::backend)
      .def_ro("fp32_graph", &Pipeline::fp32_graph)
      .def("__repr__", [](const Pipeline& p) { return "<Pipeline '" + p.title + "' from '" + p.path + "'>"; });

  nb::class_<WorkflowOutcome>(m, "WorkflowOutcome", "What the workflow decided, and its reports.")
      .def_ro("exit_status", &WorkflowOutcome::exit_status,
              "0: stage 1 passed and every later stage that ran accepted a candidate; 1: a stage rejected them all")
      .def_ro("final_implementation", &WorkflowOutcome::final_implementation)
      .def_ro("summary", &WorkflowOutcome::summary)
      .def_ro("report_json", &WorkflowOutcome::report_json)
      .def_ro("report_html", &WorkflowOutcome::report_html)
      .def("write_reports", [](const WorkflowOutcome& o, nb::handle directory) {
        const std::string dir = path_from_python(directory);
        nb::gil_scoped_release release;
        check(write_workflow_reports(o, dir));
      }, "directory"_a, nb::sig("def write_reports(self, directory: str | os.PathLike[str]) -> None"),
           "report.json and report.html into `directory`, each atomically");

  m.def("run_workflow", [](const Pipeline& pipeline, std::optional<std::string> backend, std::optional<std::string> package,
                           nb::handle plugins, const std::string& policy, nb::handle cache_dir, nb::object progress,
                           bool quiet) {
    WorkflowOptions options;
    if (backend) options.backend = *backend;
    if (package) options.package = *package;
    if (!plugins.is_none())
      for (nb::handle library : plugins) options.plugins.push_back(path_from_python(library));
    options.plugins_option = "plugins";
    options.cache_policy = unwrap(parse_cache_policy(policy));
    if (!cache_dir.is_none()) options.cache.directory = path_from_python(cache_dir);
    options.quiet = quiet;
    if (!progress.is_none()) {
      auto fn = share(std::move(progress));
      options.progress = [fn](const std::string& line) {
        nb::gil_scoped_acquire gil;
        try {
          fn->get()(line);
        } catch (nb::python_error& error) {
          error.discard_as_unraisable("tensoracle workflow progress callback");
        }
      };
    }
    nb::gil_scoped_release release;
    return unwrap(run_workflow(pipeline, options));
  }, "pipeline"_a, nb::kw_only(), "backend"_a = nb::none(), "package"_a = nb::none(), "plugins"_a = nb::none(),
        "policy"_a = "reuse", "cache_dir"_a = nb::none(), "progress"_a = nb::none(), "quiet"_a = false,
        nb::sig("def run_workflow(pipeline: Pipeline, *, backend: str | None = None, package: str | None = None, "
                "plugins: typing.Sequence[str | os.PathLike[str]] | None = None, policy: str = 'reuse', "
                "cache_dir: str | os.PathLike[str] | None = None, progress: "
                "typing.Callable[[str], None] | None = None, quiet: bool = False) -> WorkflowOutcome"),
        "Runs the four stages of `pipeline` (`tensoracle optimize`). plugins: plugin libraries loaded after the "
        "pipeline's [model] plugins (`--plugin`). Rejections are part of the outcome; bad input or an environment that "
        "cannot run the pipeline raises.");
}

}  // namespace tensoracle::python
