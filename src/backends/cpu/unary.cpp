// unary and activation: elementwise functions of one operand (docs/ops.md "Unary", "Activation").
#include <cmath>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/parallel.h"

namespace tensoracle::backends::cpu {

namespace {
template <typename F>
void unary_map(const KernelContext& k, F f) {
  const int64_t n = count_of(k.out_shape(0));
  const double* x = k.in(0);
  double* out = k.out(0);
  parallel_for(n, 1 << 15, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = f(x[i]);
  });
}
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
}  // namespace

Status unary_kernel(const KernelContext& k) {
  TO_ASSIGN_OR_RETURN(const UnaryAttributes* a, k.attributes<UnaryAttributes>());
  switch (a->op) {
    case UnaryOp::kExp: unary_map(k, [](double x) { return std::exp(x); }); break;
    case UnaryOp::kLog: unary_map(k, [](double x) { return std::log(x); }); break;
    case UnaryOp::kSqrt: unary_map(k, [](double x) { return std::sqrt(x); }); break;
    case UnaryOp::kRsqrt: unary_map(k, [](double x) { return 1.0 / std::sqrt(x); }); break;
    case UnaryOp::kRecip: unary_map(k, [](double x) { return 1.0 / x; }); break;
    case UnaryOp::kAbs: unary_map(k, [](double x) { return std::fabs(x); }); break;
    case UnaryOp::kNeg: unary_map(k, [](double x) { return -x; }); break;
    // -1, 0 or 1; both zeros give +0 and NaN stays NaN (numpy.sign).
    case UnaryOp::kSign: unary_map(k, [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x; }); break;
    case UnaryOp::kSin: unary_map(k, [](double x) { return std::sin(x); }); break;
    case UnaryOp::kCos: unary_map(k, [](double x) { return std::cos(x); }); break;
    case UnaryOp::kErf: unary_map(k, [](double x) { return std::erf(x); }); break;
    case UnaryOp::kFloor: unary_map(k, [](double x) { return std::floor(x); }); break;
    case UnaryOp::kCeil: unary_map(k, [](double x) { return std::ceil(x); }); break;
    // Halves round to even (IEEE default mode), as numpy and PyTorch do.
    case UnaryOp::kRound: unary_map(k, [](double x) { return std::nearbyint(x); }); break;
  }
  return Status::ok();
}

Status activation_kernel(const KernelContext& k) {
  TO_ASSIGN_OR_RETURN(const ActivationAttributes* a, k.attributes<ActivationAttributes>());
  const double alpha = a->alpha_value();
  const double beta = a->beta_value();
  constexpr double kSqrt2OverPi = 0.79788456080286535588;
  constexpr double kSqrtHalf = 0.70710678118654752440;
  switch (a->kind) {
    case ActivationKind::kRelu: unary_map(k, [](double x) { return x < 0 ? 0.0 : x; }); break;
    case ActivationKind::kLeakyRelu: unary_map(k, [&](double x) { return x < 0 ? alpha * x : x; }); break;
    case ActivationKind::kSigmoid: unary_map(k, [](double x) { return sigmoid(x); }); break;
    case ActivationKind::kTanh: unary_map(k, [](double x) { return std::tanh(x); }); break;
    case ActivationKind::kGeluErf: unary_map(k, [&](double x) { return 0.5 * x * (1.0 + std::erf(x * kSqrtHalf)); }); break;
    case ActivationKind::kGeluTanh:
      unary_map(k, [&](double x) { return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x))); });
      break;
    case ActivationKind::kSilu: unary_map(k, [](double x) { return x * sigmoid(x); }); break;
    case ActivationKind::kSoftplus:
      unary_map(k, [&](double x) {
        const double ax = alpha * x;  // log(1 + e^ax) without overflow
        return (ax > 0 ? ax + std::log1p(std::exp(-ax)) : std::log1p(std::exp(ax))) / alpha;
      });
      break;
    case ActivationKind::kClip: unary_map(k, [&](double x) { return std::isnan(x) ? x : std::min(beta, std::max(alpha, x)); }); break;
    case ActivationKind::kHardSigmoid:
      unary_map(k, [&](double x) { return std::isnan(x) ? x : std::min(1.0, std::max(0.0, alpha * x + beta)); });
      break;
    case ActivationKind::kHardSwish:
      unary_map(k, [&](double x) { return std::isnan(x) ? x : x * std::min(1.0, std::max(0.0, alpha * x + beta)); });
      break;
  }
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
