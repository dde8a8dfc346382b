// An execution bound once to its inputs and outputs in the engine's memory, which the harness
// times: the host version (cpu engines, steady_clock) and the CUDA version (device buffers,
// CUDA events; cuda_timed_execution.cpp, CUDA builds only).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tensoracle/bench.h"

namespace tensoracle::bench {

class TimedExecution {
 public:
  virtual ~TimedExecution() = default;
  // `enqueues` untimed calls, then waits for them.
  virtual Status warm_up(int enqueues) = 0;
  // Appends `count` samples in ms per enqueue: latency, one call each (waited for); throughput,
  // `group` calls back to back each (samples back to back too; waited for at the end).
  virtual Status time(TimingMode mode, int count, int group, std::vector<double>& samples_ms) = 0;
  virtual std::string clock() const = 0;      // "cuda_events", "steady_clock"
  virtual std::string execution() const = 0;  // "cuda_graph_replay", "cuda_direct", "host"
  virtual Result<std::vector<LayerTiming>> profile_layers(int iterations) = 0;
  // The GPU the engine runs on, for the load check; empty for the host.
  virtual std::string pci_bus_id() const = 0;
};

// An execution of `engine` in `profile` with every input's shape set from `inputs` (checked
// against the engine's I/O table: names and types).
Result<Execution> execution_for_inputs(const Engine& engine, const NamedArrayViews& inputs, size_t profile);

// The timed execution for the engine's backend, with copies of `inputs`.
Result<std::unique_ptr<TimedExecution>> make_timed_execution(const Engine& engine, const NamedArrayViews& inputs,
                                                             size_t profile);

// The CUDA version (an error naming the build in builds without CUDA).
Result<std::unique_ptr<TimedExecution>> make_cuda_timed_execution(Execution execution, const Engine& engine,
                                                                  const NamedArrayViews& inputs);

}  // namespace tensoracle::bench
