#include "backends/cuda/kernels/pointwise_launch.h"

#include <algorithm>
#include <cstdint>

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

bool is_vector_type(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

int64_t vector_width(DataType t) { return 16 / static_cast<int64_t>(data_type_size(t)); }

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// The vector kernel's geometry for merged arguments `a` (pointers aside: vector_path() checks
// those), or kNone where only the interpreter applies.
PointwiseVector plan_vector(const PointwiseKernelArgs& a) {
  if (a.fp64 || a.count == 0 || !is_vector_type(a.lane_type)) return PointwiseVector::kNone;
  for (int k = 0; k < a.num_inputs; ++k)
    if (!is_vector_type(a.in_type[k])) return PointwiseVector::kNone;
  // The output contiguous in the merged order.
  int64_t dense = 1;
  for (int d = a.rank - 1; d >= 0; --d) {
    if (a.out_stride[d] != dense) return PointwiseVector::kNone;
    dense *= a.shape[d];
  }
  if (a.rank <= 1) {
    bool flat = true;
    for (int k = 0; k < a.num_inputs; ++k) {
      const int64_t stride = a.rank ? a.in_stride[k][0] : 0;
      flat = flat && (stride == 0 || (stride == 1 && a.in_type[k] == a.lane_type));
    }
    if (flat) return PointwiseVector::kFlat;
  }
  // kStrided: 32-bit coordinates, at least one dim to walk.
  if (a.rank == 0 || a.count >= (int64_t{1} << 31)) return PointwiseVector::kNone;
  return PointwiseVector::kStrided;
}

// The vector kernel's lane type (PointwiseKernelArgs::lane_type): the output's, or that of the
// value a final quantize reads.
DataType lane_type_of(const PointwiseProgram& program) {
  const PointwiseInstr& last = program.instrs.back();
  if (last.code != PointwiseCode::kQuantize) return last.type;
  return program.register_type(last.a).value_or(last.type);  // check() has vetted the register
}

// Gives each computed register read by an instruction other than the one right after it a slot
// of the vector kernel's kept array (every other register: -1); returns how many slots that
// takes. Inputs need none: the kernel loads them where they are read.
int assign_kept_slots(const PointwiseProgram& program, int8_t (&slot)[kMaxPointwiseRegisters]) {
  const int inputs = static_cast<int>(program.inputs.size());
  bool kept[kMaxPointwiseRegisters] = {};
  for (size_t n = 0; n < program.instrs.size(); ++n) {
    const PointwiseInstr& in = program.instrs[n];
    const int previous = inputs + static_cast<int>(n) - 1;
    for (int r : {in.a, in.b, in.c})
      if (r >= inputs && r != previous) kept[r] = true;
  }
  int slots = 0;
  for (int r = 0; r < kMaxPointwiseRegisters; ++r) {
    slot[r] = static_cast<int8_t>(kept[r] && slots < kMaxPointwiseKept ? slots : -1);
    slots += kept[r] ? 1 : 0;
  }
  return slots;
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
    out.operands = static_cast<int8_t>(in.c >= 0 ? 3 : in.b >= 0 ? 2 : 1);
    out.alpha = in.alpha;
    out.beta = in.beta;
    fp32 = fp32 && fits_fp32(in.type);
  }
  a.fp64 = !fp32;
  a.lane_type = lane_type_of(program);

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
  // Walk the dims in the output's storage order (its strides descending), so the output is
  // written contiguously whatever its layout; results are per element, so the order changes no
  // bits. Then merge neighbouring dims wherever every tensor walks them as one (size-1 dims
  // vanish), so most steps take the flat path and the rest divide over few dims.
  std::vector<size_t> order;
  for (size_t d = 0; d < shape.rank(); ++d)
    if (shape[d] != 1) order.push_back(d);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return geo[0].stride[x] > geo[0].stride[y]; });
  int rank = 0;
  std::vector<TensorGeometry> merged(geo.size());  // apart from geo: `order` revisits its slots
  for (size_t d : order) {
    bool merge = rank > 0;
    for (size_t t = 0; merge && t < geo.size(); ++t)
      merge = merged[t].stride[rank - 1] == geo[t].stride[d] * shape[d];
    if (merge) {
      a.shape[rank - 1] *= shape[d];
      for (size_t t = 0; t < geo.size(); ++t) merged[t].stride[rank - 1] = geo[t].stride[d];
      continue;
    }
    a.shape[rank] = shape[d];
    for (size_t t = 0; t < geo.size(); ++t) merged[t].stride[rank] = geo[t].stride[d];
    ++rank;
  }
  a.rank = rank;
  for (int d = 0; d < rank; ++d) {
    a.out_stride[d] = merged[0].stride[d];
    for (int k = 0; k < a.num_inputs; ++k) a.in_stride[k][d] = merged[1 + k].stride[d];
  }
  a.kept = assign_kept_slots(program, a.kept_slot);
  a.vector = a.kept <= kMaxPointwiseKept ? plan_vector(a) : PointwiseVector::kNone;
  return launch;
}

PointwiseInput plan_vector_input(const PointwiseKernelArgs& args, PointwiseVector vector, int k, const void* pointer) {
  const int64_t width = vector_width(args.lane_type);
  if (vector == PointwiseVector::kFlat)
    return args.rank == 0 || args.in_stride[k][0] == 0 ? PointwiseInput::kBroadcast : PointwiseInput::kVector;
  const int inner = args.rank - 1;
  if (args.shape[inner] % width != 0) return PointwiseInput::kGather;  // a vector's lanes span rows
  const int64_t stride = args.in_stride[k][inner];
  if (stride == 0) return PointwiseInput::kBroadcast;
  if (stride != 1 || args.in_type[k] != args.lane_type || !aligned(pointer)) return PointwiseInput::kGather;
  const int64_t bytes = static_cast<int64_t>(data_type_size(args.in_type[k]));
  for (int d = 0; d < inner; ++d)
    if (args.in_stride[k][d] * bytes % 16 != 0) return PointwiseInput::kGather;
  return PointwiseInput::kVector;
}

PointwiseVector PointwiseLaunch::vector_path(const void* const* inputs, const void* output) const {
  const PointwiseKernelArgs& a = args_;
  if (a.vector == PointwiseVector::kNone || !aligned(output)) return PointwiseVector::kNone;
  if (a.vector == PointwiseVector::kFlat) {
    bool aligned_inputs = true;
    for (int k = 0; k < a.num_inputs; ++k)
      aligned_inputs = aligned_inputs && (a.rank == 0 || a.in_stride[k][0] == 0 || aligned(inputs[k]));
    if (aligned_inputs) return PointwiseVector::kFlat;
    // A misaligned contiguous input is read lane by lane by the strided kernel.
    return a.count < (int64_t{1} << 31) && a.rank == 1 ? PointwiseVector::kStrided : PointwiseVector::kNone;
  }
  return a.vector;
}

Status PointwiseLaunch::run(const void* const* inputs, void* output, cudaStream_t stream) const {
  if (args_.count == 0) return Status::ok();
  PointwiseKernelArgs args = args_;
  for (int k = 0; k < args.num_inputs; ++k) args.in[k] = inputs[k];
  args.out = output;
  args.vector = vector_path(inputs, output);
  if (args.vector != PointwiseVector::kNone)
    for (int k = 0; k < args.num_inputs; ++k) args.in_mode[k] = plan_vector_input(args, args.vector, k, inputs[k]);
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
