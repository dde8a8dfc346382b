// Validation of an engine's sections against each other, before any backend sees its plan
// (every file tensoracle reads is untrusted). The engine reader (engine_file.h) has proven the bytes are the ones a writer wrote
// (checksum) and that every section lies inside the file; a valid checksum says nothing about
// whether the sections make sense together. An engine restored from a shared or copied cache is
// untrusted input, so Engine::from_file and `tensoracle cache verify` run this first:
//
//   TO_ASSIGN_OR_RETURN(ValidatedEngine validated, validate_engine(file));
//   TO_ASSIGN_OR_RETURN(auto restored, backend->restore(file, validated.plan));
//
// What is checked, each error kCorruptData naming the engine, the section and the field:
//   - the plan section parses with the strict JSON reader and names the engine's backend;
//   - the network every plan carries: every name non-empty, every dimension in [-1, kMaxDimension]
//     and no recorded shape over kMaxTensorElements, every integer attribute within
//     +-kMaxAttributeMagnitude, no attribute list longer than kMaxAttributeElements nor with
//     integers multiplying past 2^62; it is then rebuilt (shape and type inference, every constant's
//     bytes checked against its blob: dtype x shape = blob size, SHA-256);
//   - the blob table: every blob is a constant of the network;
//   - every plugin layer names a plugin (and version) the environment section lists as needed;
//   - the I/O table against the network: the same inputs and outputs in the same order, with the
//     same types, the linear format, the network's rank and static dims, and output ranges equal
//     to shape inference at each profile's min, opt and max input shapes;
//   - sizes: at those shapes every tensor has at most kMaxTensorElements elements, and the
//     activation memory at each profile's min shapes fits the device (activation_limit).
// The backend then checks its own fields (Backend::check_plan).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "tensoracle/engine_file.h"

namespace tensoracle {

// Bounds that keep every later product of dims and attributes inside int64 and every allocation
// sane. Each is far beyond any network: int32 dims and attributes are what every kernel library
// takes.
inline constexpr int64_t kMaxDimension = (int64_t{1} << 31) - 1;
inline constexpr int64_t kMaxAttributeMagnitude = (int64_t{1} << 31) - 1;
inline constexpr size_t kMaxAttributeElements = 4096;
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

// The memory the engine's tensors may use, and where that limit comes from.
struct ActivationLimit {
  uint64_t bytes = 0;
  std::string source;  // "the memory of the GPU it was built for (NVIDIA H200)", "this machine's memory"
};
// The GPU's memory when the environment names a GPU (the compatibility check makes sure it is
// this one), else this machine's physical memory.
ActivationLimit activation_limit(const Environment& environment);

// The most memory the activations of `network` hold at once for concrete input shapes: network
// inputs, then each live layer's outputs, each freed after its last reader (network outputs stay),
// in the tensors' own types. A backend that reuses memory needs no more.
Result<uint64_t> peak_activation_bytes(const Network& network, const std::map<std::string, Dims>& input_shapes);

struct ValidatedEngine {
  backends::CheckedPlan plan;
  ActivationLimit limit;
  // Per profile: peak_activation_bytes at its min and at its max input shapes.
  std::vector<uint64_t> min_activation_bytes;
  std::vector<uint64_t> max_activation_bytes;
};

// `plugins`: what the plan's network's plugin layers resolve through (Network::plugins), for the
// backend's restore; validation itself needs none of them.
Result<ValidatedEngine> validate_engine(const EngineFile& file, const PluginRegistry& plugins = PluginRegistry());

// validate_engine, then the backend's own check of its plan (Backend::check_plan): everything
// Engine::from_file checks short of restoring the plan on a device. The cache runs it on every
// entry it opens and `cache verify` on every entry. An engine of a backend this build lacks gets
// the engine layer's checks only.
Status check_engine_file(const EngineFile& file);

}  // namespace tensoracle
