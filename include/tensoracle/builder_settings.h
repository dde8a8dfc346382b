// The settings a build runs with (part of the build declaration, build.h), in a header of their
// own because every backend reads them while planning (src/backends/backend.h).
//
//   BuilderSettings settings;
//   settings.optimization_level = 0;  // first candidate per layer, nothing timed
//   settings.workspace_limit_bytes = uint64_t{256} << 20;
//
// Every setting can change the engine, so every one enters the key manifest (to_manifest()).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tensoracle/types.h"

namespace tensoracle {

// fp32 math never uses TF32 (recorded as "tf32": "off").
struct BuilderSettings {
  uint64_t workspace_limit_bytes = uint64_t{1} << 30;
  int optimization_level = 3;     // 0..5: how hard to search tactics
  int timing_iterations = 10;     // per tactic candidate when tactics are timed
  // cuda: 1 lets independent branches (a downsample convolution, sibling projections) run on an
  // auxiliary stream beside the main one; 0 runs every layer on the caller's stream.
  int auxiliary_streams = 1;
  // Replay the tactic choices recorded in `tactic_record` (an engine file of the same network and
  // backend) instead of timing: a rebuild that makes the same engine. The record's SHA-256
  // enters the key manifest; layers the record lacks are timed (the build log names them).
  bool deterministic_replay = false;
  std::string tactic_record;
  // The compute precision of an fp32 network (docs/precision.md). kFloat32 builds the network's
  // types as they are; kFloat16 or kBFloat16 converts its fp32 layers to that type, with fp32
  // inputs and outputs, except the op kinds of `keep_fp32` (unset: the default keep-list,
  // "reduce.sum", "reduce.prod", "unary.exp", "elementwise.pow"; entries are op kinds, or op
  // kinds with their function). Both enter the key manifest when precision is not fp32.
  DataType precision = DataType::kFloat32;
  std::optional<std::vector<std::string>> keep_fp32;
  // cuda, Q/DQ-fused fp8 matrix products: let cuBLASLt accumulate in its fast mode, whose
  // tensor-core partial sums are not promoted to fp32 as they grow (faster; about 14 bits kept
  // across the whole K instead of within a block; docs/quantization.md). Off: fp32 accumulation.
  // Listed in the key manifest only when on.
  bool fp8_fast_accumulation = false;

  // The settings in canonical text form, as the key manifest lists them ("optimization_level": "3").
  std::map<std::string, std::string> to_manifest() const;
};

// Where a build reports what it is doing ("layer 12/80 conv3: tactic cpu.reference").
using BuildProgressFn = std::function<void(const std::string& message)>;

}  // namespace tensoracle
