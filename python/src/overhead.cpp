// The C++ side of the Python enqueue-overhead measurement (scripts/python-enqueue-overhead.py):
// the same Execution enqueued from a C++ loop, each call timed on the host clock, so the script
// can compare it with the same loop written in Python.
#include <nanobind/stl/vector.h>

#include <chrono>
#include <vector>

#include "bindings.h"
#include "buffers.h"
#include "errors.h"
#include "execution.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tensoracle::python {

void bind_overhead(nb::module_& m) {
  m.def("_enqueue_loop_seconds", [](PyExecution& exec, nb::handle stream, int iterations) {
    if (iterations < 1) fail("iterations must be at least 1, got " + std::to_string(iterations));
    void* handle = stream_from_python(stream);
    PyExecution::Claim claim(exec);
    exec.check_bindings();
    std::vector<double> seconds(static_cast<size_t>(iterations));
    Status status;
    {
      nb::gil_scoped_release release;
      for (double& s : seconds) {
        const auto start = std::chrono::steady_clock::now();
        status = exec.execution().enqueue(handle);
        s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (!status.is_ok()) break;
      }
    }
    check(status);
    return seconds;
  }, "execution"_a, "stream"_a.none(), "iterations"_a,
        "Host seconds of each of `iterations` consecutive Execution::enqueue calls made from C++ (measurement only).");
}

}  // namespace tensoracle::python
