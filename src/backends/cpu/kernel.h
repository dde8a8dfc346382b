// CPU kernels: one function per node kind (one file per op family), fp64 buffers in and out.
// The executor rounds every output to its tensor's type afterwards, so kernels compute in fp64
// and need not know the storage type, except where semantics depend on it (integer division,
// quantization, casts).
#pragma once

#include <vector>

#include "backends/backend.h"
#include "core/errors.h"
#include "graph/attributes.h"

namespace tensoracle::backends::cpu {

struct KernelContext {
  const NodeInstance& instance;
  const std::vector<const double*>& inputs;  // nullptr: omitted optional input
  const std::vector<double*>& outputs;

  // The node's attribute struct; kInternal naming the layer if the node is another op's.
  template <typename T>
  Result<const T*> attributes() const {
    return graph::attributes_of<T>(instance.node);
  }
  // `axis` of an input of `rank` dims, in [0, rank).
  Result<int64_t> axis(int64_t value, size_t rank) const { return graph::axis_of(instance.node, value, rank); }
  const std::string& layer() const { return instance.node.name; }
  bool has(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  const TensorDesc& in_desc(size_t i) const { return *instance.inputs[i]; }
  const Dims& in_shape(size_t i) const { return instance.inputs[i]->shape; }
  const Dims& out_shape(size_t i) const { return instance.outputs[i].shape; }
  const double* in(size_t i) const { return inputs[i]; }
  double* out(size_t i) const { return outputs[i]; }
};

using KernelFn = Status (*)(const KernelContext&);

// nullptr when the CPU backend has no kernel for `kind`.
KernelFn find_kernel(OpKind kind);

// Rounds `count` fp64 values in place to values representable in `type` (the storage rule).
void round_to_type(DataType type, double* data, int64_t count);

}  // namespace tensoracle::backends::cpu
