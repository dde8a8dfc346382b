// From an unpickled object tree to named tensors: the --key selection and the naming rule of
// PthCheckpoint (dict keys and list indices joined with '.'), with a note for every skipped value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "io/pth/pickle.h"

namespace tensoracle::pth {

struct NamedTensorRef {
  std::string name;
  const TensorRef* tensor;
};

struct CollectedTensors {
  std::vector<NamedTensorRef> tensors;  // in pickle order
  std::vector<std::string> notes;
};

// Selects `key` (dotted path; empty = root) and collects every tensor below it. Errors: a key
// that does not exist (listing what does), two tensors with one name, a dict key that is neither
// a string nor an int, nesting deeper than limits.max_depth, a shared-object graph that would
// make more names than limits.max_objects.
Result<CollectedTensors> collect_tensors(const PickleObject& root, std::string_view key, const PthLimits& limits);

}  // namespace tensoracle::pth
