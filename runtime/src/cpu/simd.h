// simd.h - run-time ISA dispatch and the float32 inner loops of the
// element-wise, dropout and reduction kernels.
//
// Every loop has three variants: AVX-512 (simd_avx512.cpp, AVX512F only),
// AVX2 with FMA (simd_avx2.cpp) and scalar (simd_scalar.cpp). The vector
// code is our own, compiled with per-function target attributes so the rest
// of the runtime stays baseline x86-64. activeIsa() (simd_dispatch.cpp)
// picks the best ISA the CPU has; TIDAL_CPU_ISA=scalar, avx2 or avx512 in
// the environment forces one (tests run all three). A forced ISA that the
// CPU lacks falls back to the best one below it, with a warning on stderr
// (once per process); an unknown value is ignored with a warning. The vector
// exp/log/tanh/sigmoid/erf/gelu are accurate to a few ulp (relative error
// below 1e-6), the same operations lane for lane in both vector ISAs; lanes
// outside a function's fast range (NaN, overflow, denormals) are computed
// with the scalar libm function.
//
// The loops take contiguous arrays; the kernels split the work into chunks
// and rows (broadcast.h) and run those in parallel.
#ifndef TIDALRT_CPU_SIMD_H
#define TIDALRT_CPU_SIMD_H

#include "dropout_hash.h"

#include <cstdint>

namespace tidalrt {
namespace simd {

// In increasing order of width.
enum class Isa { Scalar, Avx2, Avx512 };

// True when the CPU supports AVX2 and FMA (checked once).
bool cpuHasAvx2Fma();

// True when the CPU and the OS support AVX512F, and AVX2 and FMA (checked
// once). The AVX-512 code uses no other AVX-512 subset.
bool cpuHasAvx512();

// Whether the CPU can run `isa`'s code (Scalar always).
bool isaAvailable(Isa isa);

// The widest ISA the CPU has.
Isa bestIsa();

// The ISA the kernels use now: bestIsa(), unless the environment variable
// TIDAL_CPU_ISA names one ("scalar", "avx2", "avx512", any case). A named ISA
// the CPU lacks gives the best one below it, an unknown name bestIsa(); both
// warn on stderr, once per process. The variable is read at every call
// (kernels call this once per call), so tests can switch.
Isa activeIsa();

// "scalar", "avx2" or "avx512".
const char *isaName(Isa isa);

// The ISA named `name` (as isaName spells it, any case); false if none.
bool parseIsa(const char *name, Isa &out);

enum class Unary {
  Neg,
  Relu,
  Sigmoid,
  Tanh,
  Sqrt,
  Erf,
  Exp,
  Log,
  LeakyRelu,
  Gelu
};

// y[i] = f(x[i]) for i < n; `alpha` is LeakyRelu's slope. y may alias x.
void unaryF32(Isa isa, Unary op, const float *x, float *y, int64_t n,
              float alpha);

enum class Binary { Add, Sub, Mul, Div };

// y[i] = a[i * aStride] op b[i * bStride] for i < n, with strides 0 (a
// scalar) or 1. y may alias a contiguous a or b.
void binaryF32(Isa isa, Binary op, const float *a, int64_t aStride,
               const float *b, int64_t bStride, float *y, int64_t n);

enum class Grad { Relu, LeakyRelu, Sigmoid, Tanh, Erf, Gelu };

// y[i] = grad[i] * f'(saved[i]) for the activation backward ops: `saved` is
// the forward output for Relu, Sigmoid and Tanh, the forward input for
// LeakyRelu, Erf and Gelu.
void gradF32(Isa isa, Grad op, const float *grad, const float *saved, float *y,
             int64_t n, float alpha);

// y[i] = mask[i] ? x[i] * scale : 0 (mask bytes are 0 or 1).
void maskScaleF32(Isa isa, const float *x, const uint8_t *mask, float scale,
                  float *y, int64_t n);

// The sum of x[0..n) accumulated in double (a fixed order for a given ISA
// and n).
double sumF32(Isa isa, const float *x, int64_t n);

// acc[i] += x[i] for i < n, in double.
void accumulateF32(Isa isa, const float *x, double *acc, int64_t n);

// acc[i] += (rows[0][i] + rows[1][i]) + (rows[2][i] + rows[3][i]) for
// i < n, in double.
void accumulate4F32(Isa isa, const float *const *rows, double *acc, int64_t n);

// The dropout stream (dropout.cpp): element i draws the 32-bit value
// lowbias32(lowbias32(i + k1) ^ k2) (Wellons' lowbias32 integer hash) and is
// kept when the draw is >= threshold = ceil(ratio * 2^32) (so the drop
// probability is ratio to within 2^-32; threshold 2^32 drops everything).
// Integer arithmetic only: every ISA draws the same masks.
struct DropoutStream {
  uint32_t k1 = 0, k2 = 0;
  uint64_t threshold = 0;
};

using dropout::lowbias32; // dropout_hash.h

inline bool dropoutKeep(const DropoutStream &s, uint32_t index) {
  return lowbias32(lowbias32(index + s.k1) ^ s.k2) >= s.threshold;
}

// For i < n: mask[i] = dropoutKeep(s, first + i), y[i] = mask[i] ? x[i] *
// scale : 0. y may alias x.
void dropoutF32(Isa isa, const DropoutStream &s, uint32_t first, const float *x,
                float *y, uint8_t *mask, int64_t n, float scale);

// Scalar reference functions (also the fallback of the vector code).
float sigmoidScalar(float x);
float erfBackwardScalar(float g, float x);
// gelu(x) = x * Phi(x) (Phi the standard normal CDF, PyTorch's exact GELU)
// and g * gelu'(x) = g * (Phi(x) + x * phi(x)), both evaluated in double
// with erfc (no cancellation for x < 0) and rounded once; -inf gives -0
// and a gradient factor of 0, +inf gives +inf and 1.
float geluScalar(float x);
float geluBackwardScalar(float g, float x);

} // namespace simd
} // namespace tidalrt

#endif // TIDALRT_CPU_SIMD_H
