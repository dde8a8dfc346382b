// Which layers contribute to a network's outputs (the others are dead: never planned or run), and
// when each tensor is read for the last time (an executor frees it then).
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "tensoracle/network.h"

namespace tensoracle::graph {

// live[i] is true when node i's results reach a marked output.
std::vector<bool> live_nodes(const Network& network);

// last_reader[t]: the index of the last live node that reads tensor t, after which t may be freed;
// kKeptToTheEnd for the network's outputs (the caller reads them after every node) and for
// tensors no live node reads.
constexpr size_t kKeptToTheEnd = std::numeric_limits<size_t>::max();
std::vector<size_t> last_readers(const Network& network, const std::vector<bool>& live);

}  // namespace tensoracle::graph
