// tensoracle._tensoracle: the extension module under the tensoracle package (docs/python.md).
#include <nanobind/nanobind.h>

#include "bindings.h"

NB_MODULE(_tensoracle, m) {
  m.doc() = "tensoracle's C++ library (the tensoracle package re-exports it; docs/python.md)";
  m.attr("__version__") = TENSORACLE_PYTHON_MODULE_VERSION;
  using namespace tensoracle::python;
  bind_errors(m);
  bind_compare(m);
  bind_weights(m);
  bind_network(m);
  bind_build(m);
  bind_onnx(m);
  bind_engine(m);
  bind_cache(m);
  bind_bundle(m);
  bind_convert(m);
  bind_bench(m);
  bind_workflow(m);
  bind_overhead(m);
}
