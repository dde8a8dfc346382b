// GELU with the error function, x·Φ(x), in float without a branch: for epilogues that run it on
// every element of a GEMM tile, where erff's two code paths (and the registers they hold) cost
// more than the product itself.
//
// Φ(x) = 1 - erfc(z)/2 for x >= 0 and erfc(z)/2 for x < 0, z = |x|/√2, with
// erfc(z) ≈ t·exp(P(t) - z²), t = 1/(1 + z/2), P of degree 7 fitted by scripts/fits/erfc_fit.py.
// erfc's relative error (the script evaluates the formula in float) is at most 1.2e-6 for z < 3
// and 2.4e-6 for z < 7, where the rounding of z² and of exp's argument dominates, plus exp2f's
// 2 ulp; so Φ's is at most about 1.5e-6 where x > -4.2: far below half an fp16 step (2.4e-4),
// which is what the GEMM epilogues round the result to.
#pragma once

namespace tensoracle::backends::cuda::device {

__device__ __forceinline__ float gelu_erf(float x) {
  constexpr float kSqrtHalf = 0.70710678118654752440f, kLog2e = 1.44269504088896340736f;
  const float z = fabsf(x) * kSqrtHalf;
  const float t = __fdividef(1.0f, fmaf(0.5f, z, 1.0f));
  float p = -0.18845126f;
  p = fmaf(p, t, 0.754124224f);
  p = fmaf(p, t, -1.00495267f);
  p = fmaf(p, t, 0.352873236f);
  p = fmaf(p, t, -0.0408658683f);
  p = fmaf(p, t, 0.394172609f);
  p = fmaf(p, t, 0.998576939f);
  p = fmaf(p, t, -1.2654779f);
  const float half_erfc = 0.5f * t * exp2f(fmaf(-z, z, p) * kLog2e);
  return x * (x >= 0.0f ? 1.0f - half_erfc : half_erfc);
}

}  // namespace tensoracle::backends::cuda::device
