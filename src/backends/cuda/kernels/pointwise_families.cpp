// Placeholder until this group's families land: registers nothing.
#include "backends/cuda/cuda_tactic.h"

namespace tensoracle::backends::cuda {

void add_pointwise_families(FamilyTable&) {}

}  // namespace tensoracle::backends::cuda
