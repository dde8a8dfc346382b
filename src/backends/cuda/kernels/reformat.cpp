#include "backends/cuda/kernels/reformat.h"

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/copy_strided.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {

Status launch_reformat(const DeviceTensor& in, const DeviceTensor& out, cudaStream_t stream) {
  if (in.dtype != out.dtype || in.shape != out.shape)
    return invalid_argument("reformat from {}{} ({}) to {}{} ({}): type and shape must agree", data_type_name(in.dtype),
                            in.shape.to_string(), layout_name(in.layout), data_type_name(out.dtype),
                            out.shape.to_string(), layout_name(out.layout));
  TO_ASSIGN_OR_RETURN(const TensorGeometry from, geometry_of(in));
  TO_ASSIGN_OR_RETURN(const TensorGeometry to, geometry_of(out));
  StridedCopy copy;
  copy.rank = from.rank;
  for (int d = 0; d < from.rank; ++d) {
    copy.shape[d] = from.shape[d];
    copy.in_stride[d] = from.stride[d];
    copy.out_stride[d] = to.stride[d];
  }
  return cuda_status(launch_strided_copy(in.data, out.data, data_type_size(in.dtype), copy, CopyKernel::kAuto, stream),
                     "reformat kernel");
}

}  // namespace tensoracle::backends::cuda
