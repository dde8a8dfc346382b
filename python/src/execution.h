// An Execution as Python holds it: the engine, the library's Execution, and the Python objects
// bound to its tensors (engine.cpp; bench.cpp times its enqueue path).
#pragma once

#include <nanobind/nanobind.h>

#include <map>
#include <string>

#include "buffers.h"
#include "tensoracle/engine.h"

namespace tensoracle::python {

class PyExecution {
 public:
  PyExecution(Engine engine, Execution execution);

  const Engine& engine() const { return engine_; }
  const Execution& execution() const { return execution_; }
  Execution& execution() { return execution_; }

  void set_input_shapes(const std::map<std::string, Dims>& shapes);
  void bind(const std::string& name, nanobind::handle buffer);
  // Checks the bindings (when shapes or bindings changed since the last check), then enqueues
  // with the GIL released.
  void enqueue(void* stream);
  nanobind::dict run(nanobind::handle inputs);
  // Every tensor bound, each buffer large enough for its tensor's current shape.
  void check_bindings();

 private:
  struct Bound {
    BufferInfo buffer;
    DataType dtype;
  };
  Engine engine_;
  Execution execution_;
  std::map<std::string, Bound> bound_;
  bool checked_ = false;
};

}  // namespace tensoracle::python
