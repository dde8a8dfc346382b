// Which kernel runs each node kind, expanded from the op table (layers.h): every pointwise and
// compute op has `Status <name>_kernel(const KernelContext&)` in the file of its family
// (docs/network.md, "How to add an op"); data (constants) run none, and plugin layers run their
// plugin's CPU implementation (plugin_kernel.h).
#include "backends/cpu/kernel.h"

namespace tensoracle::backends::cpu {

#define TO_DECLARE_KERNEL_pointwise(name) Status name##_kernel(const KernelContext&);
#define TO_DECLARE_KERNEL_compute(name) Status name##_kernel(const KernelContext&);
#define TO_DECLARE_KERNEL_data(name)
#define TO_DECLARE_KERNEL_plugin(name)
#define TO_DECLARE_KERNEL_(Kind, name, Attributes, category) TO_DECLARE_KERNEL_##category(name)
TENSORACLE_OP_KINDS(TO_DECLARE_KERNEL_)
#undef TO_DECLARE_KERNEL_

KernelFn find_kernel(OpKind kind) {
#define TO_KERNEL_pointwise(name) &name##_kernel
#define TO_KERNEL_compute(name) &name##_kernel
#define TO_KERNEL_data(name) nullptr
#define TO_KERNEL_plugin(name) nullptr
#define TO_KERNEL_CASE_(Kind, name, Attributes, category) \
  case OpKind::k##Kind: return TO_KERNEL_##category(name);
  switch (kind) { TENSORACLE_OP_KINDS(TO_KERNEL_CASE_) }
#undef TO_KERNEL_CASE_
  return nullptr;
}

}  // namespace tensoracle::backends::cpu
