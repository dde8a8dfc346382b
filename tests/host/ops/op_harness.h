// The op-test harness (after ggml's test-backend-ops): each case is a struct naming its op and
// parameters, with a tolerance per output precision, that builds a one-layer network. The
// harness runs it on every registered backend and compares with the CPU reference backend.
// Filter with --gtest_filter on "<op>__<params>" names, e.g. --gtest_filter='*convolution*'.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tensoracle/array.h"
#include "tensoracle/compare.h"
#include "tensoracle/network.h"

namespace tensoracle::testing {

struct OpCase {
  OpCase(std::string op_name, std::string parameters, std::function<void(Network&)> builder)
      : op(std::move(op_name)), params(std::move(parameters)), build(std::move(builder)) {}

  std::string op;      // the op kind name: the first filter key
  std::string params;  // human-readable parameters, unique within the op
  // Declares inputs (filled by the harness with seeded random values), adds the layer under test
  // (constants as needed) and marks its outputs.
  std::function<void(Network&)> build;
  // Range of random floating inputs (some ops need positive inputs).
  double low = -1.0, high = 1.0;
  // Per output precision; absent types use default_tolerance.
  std::map<DataType, Tolerance> tolerance;

  std::string id() const;  // "<op>__<params>" with non-alphanumerics as '_'
};

// Tolerance between a backend and the CPU reference for outputs of `type`.
Tolerance default_tolerance(DataType type);
Tolerance tolerance_for(const OpCase& c, DataType type);

// Seeded random values for every network input, never all zeros: floats uniform in [low, high]
// rounded to their type, bool 0/1, int8 the full range, other integers in [0, 16).
Result<NamedArrays> seeded_inputs(const Network& net, uint64_t seed, double low, double high);

// The case's network in another floating precision: every fp32 input, constant and type
// attribute (cast / dequantize output types) becomes `type`; other types stay. Fails when the
// layers do not accept the result (the variant then does not exist).
Result<Network> with_float_type(const Network& net, DataType type);

// Every case of every op (op_cases.cpp).
const std::vector<OpCase>& all_op_cases();

// A seeded constant of `type` and `shape`, uniform in [low, high].
HostArray random_array(DataType type, const Dims& shape, uint64_t seed, double low = -1.0, double high = 1.0);

}  // namespace tensoracle::testing
