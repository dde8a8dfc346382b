// Registers the attention families: cuDNN's fused kernel first (fastest where it applies), then
// the composed path that takes every attention layer.
#include "backends/cuda/attention/attention_families.h"

namespace tensoracle::backends::cuda {

void add_attention_families(FamilyTable& table) {
  table.add(OpKind::kAttention, make_cudnn_sdpa_family());
  table.add(OpKind::kAttention, make_composed_attention_family());
}

}  // namespace tensoracle::backends::cuda
