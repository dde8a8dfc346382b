// Cubin bundles (include/tensoracle/bundle.h): compile_bundle, inspect_bundle,
// inspect_wheel and plugin declarations. tensoracle.producer and tensoracle.bundle
// (python/tensoracle/) are the seed's names for them.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "errors.h"
#include "tensoracle/bundle.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tensoracle::python {
namespace {

// A declaration given as PluginDeclaration, a dict in the JSON format, or a path to that JSON.
std::optional<PluginDeclaration> declaration_from_python(nb::handle value) {
  if (value.is_none()) return std::nullopt;
  if (nb::isinstance<PluginDeclaration>(value)) return nb::cast<PluginDeclaration>(value);
  if (is_path(value)) return unwrap(read_plugin_declaration(path_from_python(value)));
  if (nb::isinstance<nb::dict>(value)) {
    const std::string text = nb::cast<std::string>(nb::module_::import_("json").attr("dumps")(value));
    return unwrap(plugin_declaration_from_json(text));
  }
  fail("plugin: expected a PluginDeclaration, a dict in the declaration format or a path to one, got " + python_repr(value));
}

InspectOptions inspect_options(nb::handle plugin, bool check_no_tf32, std::optional<std::string> cuobjdump) {
  InspectOptions options;
  options.plugin = declaration_from_python(plugin);
  options.check_no_tf32 = check_no_tf32;
  if (cuobjdump) options.cuobjdump = *cuobjdump;
  return options;
}

// inspect_bundle / inspect_wheel with the options as Python gives them, the GIL released.
using InspectFn = Result<InspectReport> (*)(const std::string&, const InspectOptions&);
auto inspector(InspectFn inspect) {
  return [inspect](nb::handle path, nb::handle plugin, bool check_no_tf32, std::optional<std::string> cuobjdump) {
    const std::string target = path_from_python(path);
    const InspectOptions options = inspect_options(plugin, check_no_tf32, std::move(cuobjdump));
    nb::gil_scoped_release release;
    return unwrap(inspect(target, options));
  };
}

std::vector<BundleCheck> checks_named(const InspectReport& report, const std::string& name) {
  std::vector<BundleCheck> out;
  for (const BundleCheck& check : report.checks)
    if (check.name == name) out.push_back(check);
  return out;
}

void bind_declarations(nb::module_& m) {
  nb::class_<PluginDeclaration>(m, "PluginDeclaration",
                                "What a plugin declares: identity, PluginIO, the kernels it needs per architecture "
                                "(docs/bundles.md has the JSON format).")
      .def_static("from_json", [](const std::string& text) { return unwrap(plugin_declaration_from_json(text)); }, "text"_a)
      .def_static("read", [](nb::handle path) { return unwrap(read_plugin_declaration(path_from_python(path))); }, "path"_a,
                  nb::sig("def read(path: str | os.PathLike[str]) -> PluginDeclaration"))
      .def_prop_ro("name", [](const PluginDeclaration& d) { return d.identity.name; })
      .def_prop_ro("version", [](const PluginDeclaration& d) { return d.identity.version; })
      .def_prop_ro("namespace", [](const PluginDeclaration& d) { return d.identity.plugin_namespace; })
      .def_prop_ro("kernels", [](const PluginDeclaration& d) { return d.bundle.kernels; })
      .def_prop_ro("architectures", [](const PluginDeclaration& d) {
        std::vector<std::string> names;
        for (const GpuArch& arch : d.bundle.architectures) names.push_back(arch.name());
        return names;
      })
      .def("to_json", &plugin_declaration_to_json)
      .def("__repr__", [](const PluginDeclaration& d) { return "<PluginDeclaration " + plugin_display_name(d.identity) + ">"; });
}

void bind_manifest(nb::module_& m) {
  nb::class_<BundleSource>(m, "BundleSource", "A kernel source in a bundle manifest.")
      .def_ro("name", &BundleSource::name)
      .def_ro("sha256", &BundleSource::sha256)
      .def_ro("kernels", &BundleSource::kernels);
  nb::class_<BundleCubin>(m, "BundleCubin", "One cubin: one source compiled for one architecture.")
      .def_prop_ro("arch", [](const BundleCubin& c) { return c.arch.name(); })
      .def_ro("source", &BundleCubin::source)
      .def_ro("path", &BundleCubin::path, "relative to the bundle directory")
      .def_ro("sha256", &BundleCubin::sha256)
      .def_ro("size", &BundleCubin::size)
      .def_ro("kernels", &BundleCubin::kernels)
      .def("__repr__", [](const BundleCubin& c) { return "<BundleCubin " + c.path + ">"; });
  nb::class_<BundleManifest>(m, "BundleManifest", "A bundle's manifest.json.")
      .def_ro("name", &BundleManifest::name)
      .def_ro("version", &BundleManifest::version)
      .def_ro("format_version", &BundleManifest::format_version)
      .def_prop_ro("compiler_version", [](const BundleManifest& b) { return b.compiler.version; })
      .def_prop_ro("compiler_flags", [](const BundleManifest& b) { return b.compiler.flags; })
      .def_ro("sources", &BundleManifest::sources)
      .def_ro("cubins", &BundleManifest::cubins)
      .def("to_json", &bundle_manifest_to_json)
      .def_static("read", [](nb::handle dir) { return unwrap(read_bundle_manifest(path_from_python(dir))); }, "bundle_dir"_a,
                  nb::sig("def read(bundle_dir: str | os.PathLike[str]) -> BundleManifest"))
      .def("__repr__", [](const BundleManifest& b) {
        return "<BundleManifest '" + b.name + "' " + b.version + ", " + std::to_string(b.cubins.size()) + " cubin(s)>";
      });
}

void bind_reports(nb::module_& m) {
  nb::class_<BundleCheck>(m, "BundleCheck", "One check of an inspection.")
      .def_ro("name", &BundleCheck::name, "the check (\"cubin_sha256\", \"path_safety\", ...; docs/bundles.md)")
      .def_ro("subject", &BundleCheck::subject, "what was checked (\"sm_90/elementwise.cubin\")")
      .def_ro("passed", &BundleCheck::passed)
      .def_ro("reason", &BundleCheck::reason)
      .def("__repr__", [](const BundleCheck& c) {
        return std::string("<BundleCheck ") + (c.passed ? "PASS " : "FAIL ") + c.name + " " + c.subject + ">";
      });
  nb::class_<InspectReport>(m, "InspectReport",
                            "The checks of a bundle or wheel inspection. A failed check is part of the report, not an "
                            "exception: `passed` says whether every check passed.")
      .def_ro("target", &InspectReport::target)
      .def_ro("checks", &InspectReport::checks)
      .def_prop_ro("passed", &InspectReport::passed, "every check passed (and there is at least one)")
      .def_prop_ro("failures", &InspectReport::failures)
      .def("check", &checks_named, "name"_a, "The checks named `name` (one per subject), empty when none ran.")
      .def("__getitem__", [](const InspectReport& r, const std::string& name) {
        std::vector<BundleCheck> checks = checks_named(r, name);
        if (checks.empty()) {
          std::string names;
          for (const BundleCheck& c : r.checks)
            if (names.find("'" + c.name + "'") == std::string::npos) names += (names.empty() ? "'" : ", '") + c.name + "'";
          throw nb::key_error(("no check '" + name + "' in the report (checks: " + names + ")").c_str());
        }
        return checks;
      }, "name"_a)
      .def("to_json", &inspect_report_to_json, "as `tensoracle bundle inspect --json` prints it")
      .def("to_text", &inspect_report_to_text, "as `tensoracle bundle inspect` prints it")
      .def("__repr__", [](const InspectReport& r) {
        return std::string("<InspectReport ") + (r.passed() ? "passed" : "failed") + " '" + r.target + "', " +
               std::to_string(r.checks.size()) + " checks, " + std::to_string(r.failures().size()) + " failed>";
      });
}

}  // namespace

void bind_bundle(nb::module_& m) {
  bind_declarations(m);
  bind_manifest(m);
  bind_reports(m);

  m.def("compile_bundle", [](const std::string& name, const std::string& version, nb::handle sources,
                             const std::vector<std::string>& architectures, nb::handle out, std::optional<std::string> nvcc,
                             std::vector<std::string> extra_flags, unsigned jobs) {
    CompileBundleOptions options;
    options.name = name;
    options.version = version;
    for (nb::handle source : nb::iter(sources)) options.sources.push_back(path_from_python(source));
    for (const std::string& arch : architectures) options.architectures.push_back(unwrap(parse_gpu_arch(arch)));
    options.out_dir = path_from_python(out);
    if (nvcc) options.nvcc = *nvcc;
    options.extra_flags = std::move(extra_flags);
    options.jobs = jobs;
    nb::gil_scoped_release release;
    return unwrap(compile_bundle(options));
  }, nb::kw_only(), "name"_a, "version"_a, "sources"_a, "architectures"_a, "out"_a, "nvcc"_a = nb::none(),
        "extra_flags"_a = std::vector<std::string>{}, "jobs"_a = 0,
        nb::sig("def compile_bundle(*, name: str, version: str, sources: typing.Sequence[str | os.PathLike[str]], "
                "architectures: typing.Sequence[str], out: str | os.PathLike[str], nvcc: str | None = None, "
                "extra_flags: typing.Sequence[str] = (), jobs: int = 0) -> BundleManifest"),
        "Compiles each .cu source for each architecture (\"sm_90\", ...) into a cubin and writes the bundle directory "
        "`out` with its manifest.json, atomically (`tensoracle bundle compile`). The GIL is released while nvcc runs.");

  m.def("inspect_bundle", inspector(&inspect_bundle), "path"_a, "plugin"_a = nb::none(), nb::kw_only(),
        "check_no_tf32"_a = false, "cuobjdump"_a = nb::none(),
        nb::sig("def inspect_bundle(path: str | os.PathLike[str], plugin: PluginDeclaration | dict[str, typing.Any] | str "
                "| os.PathLike[str] | None = None, *, check_no_tf32: bool = False, cuobjdump: str | None = None) -> "
                "InspectReport"),
        "Checks a bundle directory (`tensoracle bundle inspect`); with `plugin`, also that every kernel it declares "
        "exists for every architecture it declares. Raises only when the directory cannot be examined at all.");

  m.def("inspect_wheel", inspector(&inspect_wheel), "path"_a, "plugin"_a = nb::none(), nb::kw_only(),
        "check_no_tf32"_a = false, "cuobjdump"_a = nb::none(),
        nb::sig("def inspect_wheel(path: str | os.PathLike[str], plugin: PluginDeclaration | dict[str, typing.Any] | str "
                "| os.PathLike[str] | None = None, *, check_no_tf32: bool = False, cuobjdump: str | None = None) -> "
                "InspectReport"),
        "Checks every bundle inside a wheel or zip in place (`tensoracle bundle inspect-wheel`).");
}

}  // namespace tensoracle::python
