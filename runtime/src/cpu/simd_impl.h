// simd_impl.h - what the ISA variants of simd.h's loops share (internal to
// simd_*.cpp): the per-ISA entry points, the scalar helpers that the vector
// code falls back on lane by lane, and the constants of the math.
//
// Each ISA has a namespace with the same functions as simd.h's *F32 loops,
// less the Isa argument; simd_dispatch.cpp picks one. The vector entry
// points carry their target attribute on the declaration too, so that the
// declaration and the definition are the same function to GCC.
#ifndef TIDALRT_CPU_SIMD_IMPL_H
#define TIDALRT_CPU_SIMD_IMPL_H

#include "simd.h"

#include <cmath>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#define TIDALRT_HAVE_X86 1
#define TIDALRT_AVX2 __attribute__((target("avx2,fma")))
#define TIDALRT_AVX512 __attribute__((target("avx512f,avx2,fma")))
#else
#define TIDALRT_HAVE_X86 0
#define TIDALRT_AVX2
#define TIDALRT_AVX512
#endif

namespace tidalrt {
namespace simd {

constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

inline float negS(float x) { return -x; }
inline float reluS(float x) { return x > 0.0f ? x : 0.0f; }
inline float sqrtS(float x) { return std::sqrt(x); }
inline float expS(float x) { return std::exp(x); }
inline float logS(float x) { return std::log(x); }
inline float tanhS(float x) { return std::tanh(x); }
inline float erfS(float x) { return std::erf(x); }

#define TIDALRT_SIMD_DECLARE_LOOPS(ATTR)                                       \
  ATTR void unaryF32(Unary op, const float *x, float *y, int64_t n,            \
                     float alpha);                                             \
  ATTR void binaryF32(Binary op, const float *a, int64_t aStride,              \
                      const float *b, int64_t bStride, float *y, int64_t n);   \
  ATTR void gradF32(Grad op, const float *grad, const float *saved, float *y,  \
                    int64_t n, float alpha);                                   \
  ATTR void maskScaleF32(const float *x, const uint8_t *mask, float scale,     \
                         float *y, int64_t n);                                 \
  ATTR double sumF32(const float *x, int64_t n);                               \
  ATTR void accumulateF32(const float *x, double *acc, int64_t n);             \
  ATTR void accumulate4F32(const float *const *rows, double *acc, int64_t n);  \
  ATTR void dropoutF32(const DropoutStream &s, uint32_t first, const float *x, \
                       float *y, uint8_t *mask, int64_t n, float scale);

// simd_scalar.cpp
namespace scalar {
TIDALRT_SIMD_DECLARE_LOOPS()
} // namespace scalar

#if TIDALRT_HAVE_X86
// simd_avx2.cpp
namespace avx2 {
TIDALRT_SIMD_DECLARE_LOOPS(TIDALRT_AVX2)
} // namespace avx2

// simd_avx512.cpp
namespace avx512 {
TIDALRT_SIMD_DECLARE_LOOPS(TIDALRT_AVX512)
} // namespace avx512
#endif

#undef TIDALRT_SIMD_DECLARE_LOOPS

} // namespace simd
} // namespace tidalrt

#endif // TIDALRT_CPU_SIMD_IMPL_H
