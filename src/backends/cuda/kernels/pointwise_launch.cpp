#include "backends/cuda/kernels/pointwise_launch.h"

#include "backends/cuda/cuda_check.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {

namespace {

// Types whose every value, and every result the reference computes for them, fp32 holds or
// rounds exactly as fp64-then-round would; anything else (fp64, 32- and 64-bit integers) makes
// the program compute in fp64.
bool fits_fp32(DataType t) {
  switch (t) {
    case DataType::kFloat32:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
    case DataType::kBool:
    case DataType::kInt8:
    case DataType::kUInt8:
    case DataType::kInt16:
    case DataType::kUInt16: return true;
    default: return false;
  }
}

}  // namespace

Status PointwiseLaunch::check(const PointwiseProgram& program) {
  if (program.instrs.empty()) return unsupported("pointwise program is empty");
  if (program.inputs.size() > static_cast<size_t>(kMaxPointwiseInputs))
    return unsupported("pointwise program reads {} inputs; the kernel takes at most {}", program.inputs.size(),
                       kMaxPointwiseInputs);
  if (program.instrs.size() > static_cast<size_t>(kMaxPointwiseInstrs))
    return unsupported("pointwise program has {} instructions; the kernel takes at most {}", program.instrs.size(),
                       kMaxPointwiseInstrs);
  for (size_t k = 0; k < program.instrs.size(); ++k) {
    const PointwiseInstr& in = program.instrs[k];
    const int own = static_cast<int>(program.inputs.size() + k);
    for (int r : {in.a, in.b, in.c})
      if (r >= own) return unsupported("pointwise instruction {} reads register r{}, not yet computed", k, r);
    if (in.a < 0) return unsupported("pointwise instruction {} has no operand", k);
  }
  return Status::ok();
}

Result<PointwiseLaunch> PointwiseLaunch::prepare(const PointwiseProgram& program, const std::vector<Layout>& input_layouts,
                                                 const TensorDesc& output, Layout output_layout, int threads) {
  TO_RETURN_IF_ERROR(check(program));
  if (program.output_type() != output.dtype)
    return invalid_argument("pointwise program computes {} but its output tensor is {}",
                            data_type_name(program.output_type()), output.to_string());
  if (threads <= 0 || threads > 512 || threads % 32)
    return invalid_argument("pointwise kernel: {} threads per block (a multiple of 32 up to 512)", threads);
  PointwiseLaunch launch;
  launch.threads_ = threads;
  PointwiseKernelArgs& a = launch.args_;
  a.num_inputs = static_cast<int>(program.inputs.size());
  a.num_instrs = static_cast<int>(program.instrs.size());
  a.out_type = output.dtype;
  bool fp32 = fits_fp32(output.dtype);
  for (int k = 0; k < a.num_inputs; ++k) {
    a.in_type[k] = program.inputs[k].dtype;
    fp32 = fp32 && fits_fp32(a.in_type[k]);
  }
  for (int n = 0; n < a.num_instrs; ++n) {
    const PointwiseInstr& in = program.instrs[n];
    PointwiseKernelInstr& out = a.instrs[n];
    out.code = in.code;
    out.type = in.type;
    out.a = static_cast<int8_t>(in.a);
    out.b = static_cast<int8_t>(in.b < 0 ? 0 : in.b);
    out.c = static_cast<int8_t>(in.c < 0 ? 0 : in.c);
    out.alpha = in.alpha;
    out.beta = in.beta;
    fp32 = fp32 && fits_fp32(in.type);
  }
  a.fp64 = !fp32;

  TO_ASSIGN_OR_RETURN(int64_t count, output.shape.element_count());
  a.count = count;
  if (count == 0) return launch;

  // Geometries of the output and of every input read at the output's coordinates.
  const Dims& shape = output.shape;
  std::vector<TensorGeometry> geo(1 + program.inputs.size());
  TO_ASSIGN_OR_RETURN(geo[0], geometry_of(DeviceTensor{output.dtype, shape, output_layout, nullptr}));
  for (size_t k = 0; k < program.inputs.size(); ++k) {
    const Layout layout = k < input_layouts.size() ? input_layouts[k] : Layout::kLinear;
    auto g = broadcast_geometry(DeviceTensor{program.inputs[k].dtype, program.inputs[k].shape, layout, nullptr}, shape);
    if (!g.is_ok()) return invalid_argument("pointwise input {}: {}", k, g.status().message());
    geo[1 + k] = *g;
  }
  // Merge neighbouring dims wherever every tensor walks them as one (size-1 dims vanish), so
  // most steps take the kernel's flat path and the rest divide over few dims.
  int rank = 0;
  for (size_t d = 0; d < shape.rank(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = rank > 0;
    for (size_t t = 0; merge && t < geo.size(); ++t)
      merge = geo[t].stride[rank - 1] == geo[t].stride[d] * shape[d];
    if (merge) {
      a.shape[rank - 1] *= shape[d];
      for (size_t t = 0; t < geo.size(); ++t) geo[t].stride[rank - 1] = geo[t].stride[d];
      continue;
    }
    a.shape[rank] = shape[d];
    for (size_t t = 0; t < geo.size(); ++t) geo[t].stride[rank] = geo[t].stride[d];
    ++rank;
  }
  a.rank = rank;
  for (int d = 0; d < rank; ++d) {
    a.out_stride[d] = geo[0].stride[d];
    for (int k = 0; k < a.num_inputs; ++k) a.in_stride[k][d] = geo[1 + k].stride[d];
  }
  return launch;
}

Status PointwiseLaunch::run(const void* const* inputs, void* output, cudaStream_t stream) const {
  if (args_.count == 0) return Status::ok();
  PointwiseKernelArgs args = args_;
  for (int k = 0; k < args.num_inputs; ++k) args.in[k] = inputs[k];
  args.out = output;
  return cuda_status(launch_pointwise_kernel(args, threads_, stream), "pointwise kernel");
}

Status launch_pointwise_program(const PointwiseProgram& program, const std::vector<DeviceTensor>& inputs,
                                const DeviceTensor& output, cudaStream_t stream) {
  if (inputs.size() != program.inputs.size())
    return invalid_argument("pointwise program reads {} inputs, {} given", program.inputs.size(), inputs.size());
  std::vector<Layout> layouts;
  std::vector<const void*> pointers;
  for (const DeviceTensor& t : inputs) {
    layouts.push_back(t.layout);
    pointers.push_back(t.data);
  }
  TO_ASSIGN_OR_RETURN(PointwiseLaunch launch,
                      PointwiseLaunch::prepare(program, layouts, TensorDesc{output.dtype, output.shape}, output.layout));
  return launch.run(pointers.data(), output.data, stream);
}

}  // namespace tensoracle::backends::cuda
