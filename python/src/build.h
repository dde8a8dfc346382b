// The build declaration as Python holds it: the library's EngineBuild plus the Python objects
// given for its graph function, progress callback and weights (build.cpp, engine.cpp).
#pragma once

#include <nanobind/nanobind.h>

#include "tensoracle/build.h"

namespace tensoracle::python {

struct PyEngineBuild {
  EngineBuild build;           // graph: a package's C++ function, or none; progress unset
  nanobind::object graph;      // a Python graph function, or None
  nanobind::object progress;   // a Python callable taking a message, or None
  nanobind::object weights;    // what was given as weights (a path or a Weights), or None
};

// The EngineBuild to give the library: Python callbacks wrapped to run under the GIL (the
// library calls them with the GIL released, possibly from another thread).
EngineBuild library_build(const PyEngineBuild& build);

// plugins= of build_serialized_engine / open_engine: None, or a sequence of plugin library paths
// loaded into one registry (plugin_registry.h; an unloadable library raises naming it).
PluginRegistry plugins_from_python(nanobind::handle plugins);

}  // namespace tensoracle::python
