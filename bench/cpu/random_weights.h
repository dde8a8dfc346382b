// Seeded random constants for benchmark networks.
#pragma once

#include <cstdint>

#include "tensoracle/network.h"

namespace tensoracle::bench {

// A constant of `shape` uniform in [-scale, scale] (fp32).
Tensor random_constant(Network& net, const Dims& shape, float scale, uint64_t seed);

// A seeded fp32 array uniform in [-1, 1].
HostArray random_array(const Dims& shape, uint64_t seed);

}  // namespace tensoracle::bench
