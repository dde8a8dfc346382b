// Checks the correction step the sm90 quantizing epilogue divides by (sm90_qgemm_kernel.cuh,
// requantize): q = RN(a·r), r = RN(1/b), then RN(q + RN(a − q·b)·r) with q's sign against RN(a/b),
// sign included, for a of fp16 magnitudes and ±0 and b in [2^-100, 2^100], mantissas near 1 and
// near 2 included.
//   g++ -O2 -ffp-contract=off -o reciprocal_division scripts/fits/reciprocal_division.cpp && ./reciprocal_division
// 2026-12-07: "0 of 200000000 differ".
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>
int main() {
  std::mt19937_64 g(1);
  long bad = 0, n = 0;
  auto f = [](uint32_t u){ float x; std::memcpy(&x,&u,4); return x; };
  for (long i = 0; i < 200000000; ++i) {
    // a: any fp16-representable magnitude range; b in [2^-100, 2^100] with random mantissa
    uint32_t ua = (uint32_t(g()) & 0x807FFFFFu) | (uint32_t(127 - 24 + g() % 40) << 23);
    uint32_t ub = (uint32_t(g()) & 0x807FFFFFu) | (uint32_t(127 - 100 + g() % 200) << 23);
    if (i % 7 == 0) ub = (ub & 0xFF800000u) | (0x7FFFFFu - (g() % 4));  // mantissas near all ones
    if (i % 11 == 0) ub = (ub & 0xFF800000u) | (g() % 4);               // near 1.0
    float a = f(ua), b = f(ub);
    if (i % 13 == 0) a = std::copysign(0.0f, a);  // signed zeros: e4m3 has a code for each
    volatile float r = 1.0f / b;
    float q0 = a * r;
    float rem = std::fma(-q0, b, a);
    float q = std::copysign(std::fma(rem, r, q0), q0);
    volatile float want = a / b;
    ++n;
    if (q != want || std::signbit(q) != std::signbit(want)) { if (bad < 5) std::printf("a=%a b=%a q=%a want=%a\n", a, b, q, want); ++bad; }
  }
  std::printf("%ld of %ld differ\n", bad, n);
}
