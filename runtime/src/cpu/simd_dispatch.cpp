// simd_dispatch.cpp - run-time ISA selection (activeIsa) and the dispatch of
// simd.h's loops to their scalar or vector variant.
#include "simd_impl.h"

#include <cstdlib>
#include <strings.h>

namespace tidalrt {
namespace simd {

bool cpuHasAvx2Fma() {
#if TIDALRT_HAVE_X86
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
#else
  return false;
#endif
}

Isa activeIsa() {
  if (!cpuHasAvx2Fma())
    return Isa::Scalar;
  const char *v = getenv("TIDAL_CPU_ISA");
  if (v && strcasecmp(v, "scalar") == 0)
    return Isa::Scalar;
  return Isa::Avx2;
}

const char *isaName(Isa isa) { return isa == Isa::Avx2 ? "avx2" : "scalar"; }

void unaryF32(Isa isa, Unary op, const float *x, float *y, int64_t n,
              float alpha) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx2)
    return avx2::unaryF32(op, x, y, n, alpha);
#endif
  (void)isa;
  scalar::unaryF32(op, x, y, n, alpha);
}

void binaryF32(Isa isa, Binary op, const float *a, int64_t aStride,
               const float *b, int64_t bStride, float *y, int64_t n) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx2)
    return avx2::binaryF32(op, a, aStride, b, bStride, y, n);
#endif
  (void)isa;
  scalar::binaryF32(op, a, aStride, b, bStride, y, n);
}

void gradF32(Isa isa, Grad op, const float *grad, const float *saved, float *y,
             int64_t n, float alpha) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx2)
    return avx2::gradF32(op, grad, saved, y, n, alpha);
#endif
  (void)isa;
  scalar::gradF32(op, grad, saved, y, n, alpha);
}

void maskScaleF32(Isa isa, const float *x, const uint8_t *mask, float scale,
                  float *y, int64_t n) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx2)
    return avx2::maskScaleF32(x, mask, scale, y, n);
#endif
  (void)isa;
  scalar::maskScaleF32(x, mask, scale, y, n);
}

double sumF32(Isa isa, const float *x, int64_t n) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx2)
    return avx2::sumF32(x, n);
#endif
  (void)isa;
  return scalar::sumF32(x, n);
}

void accumulateF32(Isa isa, const float *x, double *acc, int64_t n) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx2)
    return avx2::accumulateF32(x, acc, n);
#endif
  (void)isa;
  scalar::accumulateF32(x, acc, n);
}

void accumulate4F32(Isa isa, const float *const *rows, double *acc, int64_t n) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx2)
    return avx2::accumulate4F32(rows, acc, n);
#endif
  (void)isa;
  scalar::accumulate4F32(rows, acc, n);
}

void dropoutF32(Isa isa, const DropoutStream &s, uint32_t first, const float *x,
                float *y, uint8_t *mask, int64_t n, float scale) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx2)
    return avx2::dropoutF32(s, first, x, y, mask, n, scale);
#endif
  (void)isa;
  scalar::dropoutF32(s, first, x, y, mask, n, scale);
}

} // namespace simd
} // namespace tidalrt
