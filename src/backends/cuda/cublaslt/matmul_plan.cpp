#include "backends/cuda/cublaslt/matmul_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"
#include "graph/attributes.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr uint32_t kAssumedBaseAlignment = 16;  // bytes; every planned buffer is at least this aligned

// A stored operand as a batch of row-major matrices (numpy: a rank-1 `a` is [1, K], a rank-1
// `b` is [K, 1]).
struct Operand {
  std::vector<int64_t> batch;
  int64_t rows = 0, cols = 0;
};

Operand as_matrices(const Dims& shape, bool is_a) {
  std::vector<int64_t> d = shape.values();
  if (d.size() == 1) d.insert(is_a ? d.begin() : d.end(), 1);
  Operand op;
  op.rows = d[d.size() - 2];
  op.cols = d[d.size() - 1];
  op.batch.assign(d.begin(), d.end() - 2);
  return op;
}

// One batch dim of the output with each operand's stride over it, in matrices (0: broadcast).
struct BatchDim {
  int64_t size = 1, stride_a = 0, stride_b = 0;
};

// The output's batch dims of size > 1 (outermost first) with the operands' matrix strides.
std::vector<BatchDim> batch_dims(const Operand& a, const Operand& b) {
  const size_t rank = std::max(a.batch.size(), b.batch.size());
  auto dim_of = [&](const std::vector<int64_t>& batch, size_t d) -> int64_t {
    const size_t lead = rank - batch.size();
    return d < lead ? 1 : batch[d - lead];
  };
  std::vector<int64_t> size(rank), stride_a(rank, 0), stride_b(rank, 0);
  int64_t outer_a = 1, outer_b = 1;  // running products of the operands' own dims (inner to outer)
  for (size_t d = rank; d-- > 0;) {
    const int64_t da = dim_of(a.batch, d), db = dim_of(b.batch, d);
    size[d] = da == 1 ? db : da;
    if (da != 1) stride_a[d] = outer_a;
    if (db != 1) stride_b[d] = outer_b;
    outer_a *= da;
    outer_b *= db;
  }
  std::vector<BatchDim> dims;
  for (size_t d = 0; d < rank; ++d)
    if (size[d] != 1) dims.push_back({size[d], stride_a[d], stride_b[d]});
  return dims;
}

// An operand whose broadcast to `out` depends only on the column index: [1,..,1,N]. (When `b` is
// a vector, N = 1 and the output has no column dim: only a [1,..,1] operand qualifies.)
bool is_row_vector(const Dims& shape, const Dims& out, int64_t n) {
  if (shape.rank() == 0 || shape.rank() > out.rank()) return false;
  for (size_t d = 0; d + 1 < shape.rank(); ++d)
    if (shape[d] != 1) return false;
  return shape[shape.rank() - 1] == n;
}

uint32_t alignment_of(int64_t byte_offset, uint32_t alignment) {
  while (alignment > 1 && byte_offset % alignment != 0) alignment /= 2;
  return alignment;
}

struct Epilogue {
  int bias = -1, residual = -1;  // program input registers
  LtActivation activation = LtActivation::kNone;
};

Result<Epilogue> parse_epilogue(const StepInstance& step, const std::string& layer, const TensorDesc& out, int64_t n,
                               EpilogueKernel kernel) {
  Epilogue e;
  const PointwiseProgram& p = step.program;
  if (p.inputs.empty() || !(p.inputs[0] == out))
    return unsupported("layer '{}': epilogue input 0 is {}, not the product {}", layer,
                       p.inputs.empty() ? std::string("missing") : p.inputs[0].to_string(), out.to_string());
  const int inputs = static_cast<int>(p.inputs.size());
  int current = 0;  // the register holding the value so far
  int stage = 0;    // 0: nothing yet, 1: bias added, 2: residual added, 3: activation applied
  for (size_t k = 0; k < p.instrs.size(); ++k) {
    const PointwiseInstr& in = p.instrs[k];
    if (in.type != out.dtype)
      return unsupported("layer '{}': epilogue instruction {} produces {}, the product is {} (cuBLASLt fuses no casts)",
                         layer, k, data_type_name(in.type), data_type_name(out.dtype));
    if (in.code == PointwiseCode::kAdd) {
      const int other = in.a == current ? in.b : in.b == current ? in.a : -1;
      if ((in.a != current && in.b != current) || other < 1 || other >= inputs || other == e.bias)
        return unsupported("layer '{}': epilogue instruction {} is not an add of the product and a step input", layer, k);
      const TensorDesc& operand = p.inputs[static_cast<size_t>(other)];
      if (operand.dtype != out.dtype)
        return unsupported("layer '{}': epilogue operand {} is {}, the product is {}", layer, operand.to_string(),
                           data_type_name(operand.dtype), data_type_name(out.dtype));
      if (stage == 0 && is_row_vector(operand.shape, out.shape, n)) {
        e.bias = other;
        stage = 1;
      } else if (stage <= 1 && operand.shape == out.shape) {
        e.residual = other;
        stage = 2;
      } else {
        return unsupported(
            "layer '{}': epilogue add of {} is neither a bias (shape [N] or [1,..,1,N], N={}, before any residual) nor a "
            "residual of the output shape {} (before any activation)",
            layer, operand.to_string(), n, out.shape.to_string());
      }
    } else if (in.code == PointwiseCode::kRelu || in.code == PointwiseCode::kGeluTanh ||
               (in.code == PointwiseCode::kGeluErf && kernel == EpilogueKernel::kOwn)) {
      if (stage == 3 || in.a != current)
        return unsupported("layer '{}': epilogue instruction {} is a second activation or does not read the product",
                           layer, k);
      e.activation = in.code == PointwiseCode::kRelu       ? LtActivation::kRelu
                     : in.code == PointwiseCode::kGeluTanh ? LtActivation::kGeluTanh
                                                           : LtActivation::kGeluErf;
      stage = 3;
    } else {
      if (kernel == EpilogueKernel::kOwn)
        return unsupported("layer '{}': epilogue instruction {} is not add, relu, gelu_tanh or gelu_erf", layer, k);
      return unsupported(
          "layer '{}': epilogue instruction {} is not add, relu or gelu_tanh (cuBLASLt fuses [add bias] [add residual] "
          "[relu | gelu_tanh]; gelu_erf is not its GELU)",
          layer, k);
    }
    current = inputs + static_cast<int>(k);
  }
  return e;
}

}  // namespace

std::string MatmulPlan::to_string() const {
  switch (kind) {
    case Kind::kEmpty: return "empty";
    case Kind::kZeroFill: return "zero fill (K = 0)";
    case Kind::kGemm: break;
  }
  return fmt::format("{} x {} call(s){}{}", gemm.to_string(), calls.size(),
                     bias_input >= 0 ? fmt::format(", bias = extra input {}", bias_input) : std::string(),
                     residual_input >= 0 ? fmt::format(", residual = extra input {}", residual_input) : std::string());
}

Result<MatmulPlan> plan_matmul(const StepInstance& step, EpilogueKernel epilogue_kernel) {
  const Node& node = step.anchor.node;
  const std::string& layer = node.name;
  if (node.kind != OpKind::kMatMul) return unsupported("layer '{}': not a matmul", layer);
  if (step.anchor.inputs.size() != 2 || !step.anchor.inputs[0] || !step.anchor.inputs[1] ||
      step.anchor.outputs.size() != 1 || step.outputs.size() != 1)
    return unsupported("layer '{}': a matmul step has two inputs and one output", layer);
  for (Layout layout : step.input_layouts)
    if (layout != Layout::kLinear) return unsupported("layer '{}': input layout {} (takes linear)", layer, layout_name(layout));
  for (Layout layout : step.output_layouts)
    if (layout != Layout::kLinear) return unsupported("layer '{}': output layout {} (takes linear)", layer, layout_name(layout));
  for (Layout layout : step.extra_input_layouts)
    if (layout != Layout::kLinear)
      return unsupported("layer '{}': epilogue input layout {} (takes linear)", layer, layout_name(layout));

  const TensorDesc& a_desc = *step.anchor.inputs[0];
  const TensorDesc& b_desc = *step.anchor.inputs[1];
  const TensorDesc& out = step.anchor.outputs[0];
  const DataType type = a_desc.dtype;
  if (type != DataType::kFloat32 && type != DataType::kFloat16 && type != DataType::kBFloat16)
    return unsupported("layer '{}': {} operands (cuBLASLt matmul takes fp32, fp16, bf16)", layer, data_type_name(type));
  if (b_desc.dtype != type || out.dtype != type)
    return unsupported("layer '{}': operand/output types {}, {} -> {} differ", layer, data_type_name(type),
                       data_type_name(b_desc.dtype), data_type_name(out.dtype));
  if (!a_desc.shape.is_static() || !b_desc.shape.is_static() || !out.shape.is_static() || a_desc.shape.rank() == 0 ||
      b_desc.shape.rank() == 0)
    return unsupported("layer '{}': needs concrete shapes of rank >= 1 ({} x {})", layer, a_desc.to_string(),
                       b_desc.to_string());
  if (step.outputs[0].dtype != type || step.outputs[0].shape != out.shape)
    return unsupported("layer '{}': the step's output {} is not of the product's type and shape {}", layer,
                       step.outputs[0].to_string(), out.to_string());

  const Operand a = as_matrices(a_desc.shape, true);
  const Operand b = as_matrices(b_desc.shape, false);
  TO_ASSIGN_OR_RETURN(const MatMulAttributes* attrs, graph::attributes_of<MatMulAttributes>(node));
  const bool ta = attrs->transpose_a && a_desc.shape.rank() > 1;
  const bool tb = attrs->transpose_b && b_desc.shape.rank() > 1;
  const int64_t m = ta ? a.cols : a.rows;
  const int64_t k = ta ? a.rows : a.cols;
  const int64_t n = tb ? b.rows : b.cols;
  const int64_t kb = tb ? b.cols : b.rows;
  if (kb != k) return unsupported("layer '{}': inner dims differ ({} vs {})", layer, k, kb);

  MatmulPlan plan;
  Epilogue epilogue;
  if (step.has_epilogue()) {
    TO_ASSIGN_OR_RETURN(epilogue, parse_epilogue(step, layer, out, n, epilogue_kernel));
    plan.bias_input = epilogue.bias - 1;
    plan.residual_input = epilogue.residual - 1;
  }

  TO_ASSIGN_OR_RETURN(const int64_t elements, out.shape.element_count());
  if (elements == 0) {
    plan.kind = MatmulPlan::Kind::kEmpty;
    return plan;
  }
  if (k == 0) {
    if (step.has_epilogue())
      return unsupported("layer '{}': K = 0 (an all-zero product) with a fused epilogue", layer);
    plan.kind = MatmulPlan::Kind::kZeroFill;
    return plan;
  }

  // Inner strided batch: merge batch dims from the innermost outwards while both operands keep
  // one stride each; the dims left over become an outer loop of calls.
  const std::vector<BatchDim> dims = batch_dims(a, b);
  int64_t count = 1, stride_a = 0, stride_b = 0;
  size_t inner_begin = dims.size();
  while (inner_begin > 0) {
    const BatchDim& d = dims[inner_begin - 1];
    if (count == 1) {
      stride_a = d.stride_a;
      stride_b = d.stride_b;
    } else if (d.stride_a != stride_a * count || d.stride_b != stride_b * count) {
      break;
    }
    count *= d.size;
    --inner_begin;
  }

  LtGemmDesc& g = plan.gemm;
  g.input_type = type;
  g.output_type = type;
  g.m = m;
  g.n = n;
  g.k = k;
  g.transpose_a = ta;
  g.transpose_b = tb;
  g.use_bias = epilogue.bias >= 0;
  g.use_c = epilogue.residual >= 0;
  g.activation = epilogue.activation;
  const int64_t a_matrix = m * k, b_matrix = k * n, d_matrix = m * n;
  if (count > 1 && !ta && stride_a == 1 && stride_b == 0) {
    g.m = m * count;  // consecutive untransposed A matrices are one tall matrix
  } else if (count > 1) {
    g.batch_count = count;
    g.batch_stride_a = stride_a * a_matrix;
    g.batch_stride_b = stride_b * b_matrix;
    g.batch_stride_c = g.batch_stride_d = d_matrix;
  }

  // Outer calls over dims[0, inner_begin), row-major.
  int64_t outer = 1;
  for (size_t d = 0; d < inner_begin; ++d) outer *= dims[d].size;
  std::vector<int64_t> index(inner_begin, 0);
  const size_t element = data_type_size(type);
  uint32_t alignment = kAssumedBaseAlignment;
  for (int64_t call = 0; call < outer; ++call) {
    MatmulPlan::Call c;
    for (size_t d = 0; d < inner_begin; ++d) {
      c.a += index[d] * dims[d].stride_a * a_matrix;
      c.b += index[d] * dims[d].stride_b * b_matrix;
    }
    c.d = call * count * d_matrix;
    for (int64_t offset : {c.a, c.b, c.d}) alignment = alignment_of(offset * static_cast<int64_t>(element), alignment);
    plan.calls.push_back(c);
    for (size_t d = inner_begin; d-- > 0;) {
      if (++index[d] < dims[d].size) break;
      index[d] = 0;
    }
  }
  g.pointer_alignment = alignment;
  return plan;
}

}  // namespace tensoracle::backends::cuda
