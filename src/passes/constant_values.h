// Reading the values of constant tensors during a pass.
#pragma once

#include <optional>
#include <vector>

#include "tensoracle/network.h"

namespace tensoracle::passes {

struct ConstantValues {
  Dims shape;
  std::vector<double> values;
};

// The constant layer that produces `t`, or nullptr (not a constant, or no tensor).
const Node* constant_producer(const Network& network, Tensor t);

// The values of `t` when it is a constant, or a chain of casts of a constant between floating
// types (then the values are the original constant's, before any cast rounding). nullopt otherwise.
std::optional<ConstantValues> constant_values(const Network& network, Tensor t);

}  // namespace tensoracle::passes
