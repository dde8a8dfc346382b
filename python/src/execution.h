// An Execution as Python holds it: the engine, the library's Execution, and the Python objects
// bound to its tensors (engine.cpp; bench.cpp times its enqueue path).
#pragma once

#include <nanobind/nanobind.h>

#include <atomic>
#include <map>
#include <string>

#include "buffers.h"
#include "tensoracle/engine.h"

namespace tensoracle::python {

// The library's Execution is used by one thread at a time. Python threads share objects freely,
// and enqueue and run release the GIL, so every call that uses the Execution claims it first:
// a second thread gets a FailedPreconditionError instead of a data race.
class PyExecution {
 public:
  PyExecution(Engine engine, Execution execution);
  PyExecution(PyExecution&& other) noexcept
      : engine_(std::move(other.engine_)), execution_(std::move(other.execution_)), bound_(std::move(other.bound_)),
        checked_(other.checked_) {}

  // Holds the Execution for one call (see above).
  class Claim {
   public:
    explicit Claim(PyExecution& execution);
    ~Claim() { busy_.store(false, std::memory_order_release); }
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;

   private:
    std::atomic<bool>& busy_;
  };

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
  std::atomic<bool> busy_{false};
};

}  // namespace tensoracle::python
