// The graph's op registry, expanded from the op table (layers.h): every kind's definition is
// `graph::k<Kind>Op`, defined in ops/<name>.cpp (docs/network.md, "How to add an op").
#include "graph/op_def.h"

namespace tensoracle::graph {

#define TO_DECLARE_OP_DEF_(Kind, name, Attributes, category) extern const OpDef k##Kind##Op;
TENSORACLE_OP_KINDS(TO_DECLARE_OP_DEF_)
#undef TO_DECLARE_OP_DEF_

const OpDef* find_op_def(OpKind kind) {
  switch (kind) {
#define TO_OP_DEF_CASE_(Kind, name, Attributes, category) \
  case OpKind::k##Kind: return &k##Kind##Op;
    TENSORACLE_OP_KINDS(TO_OP_DEF_CASE_)
#undef TO_OP_DEF_CASE_
  }
  return nullptr;
}

}  // namespace tensoracle::graph
