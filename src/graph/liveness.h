// Which layers contribute to a network's outputs (the others are dead: never planned or run).
#pragma once

#include <vector>

#include "tensoracle/network.h"

namespace tensoracle::graph {

// live[i] is true when node i's results reach a marked output.
std::vector<bool> live_nodes(const Network& network);

}  // namespace tensoracle::graph
