// simd_dispatch.cpp - run-time ISA selection (activeIsa) and the dispatch of
// simd.h's loops to their scalar or vector variant.
#include "simd_impl.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
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

bool cpuHasAvx512() {
#if TIDALRT_HAVE_X86
  // libgcc's check includes the OS's support of the zmm and mask state
  // (XCR0), not only CPUID.
  static const bool has = [] {
    __builtin_cpu_init();
    return cpuHasAvx2Fma() && __builtin_cpu_supports("avx512f");
  }();
  return has;
#else
  return false;
#endif
}

bool isaAvailable(Isa isa) {
  switch (isa) {
  case Isa::Scalar:
    return true;
  case Isa::Avx2:
    return cpuHasAvx2Fma();
  case Isa::Avx512:
    return cpuHasAvx512();
  }
  return false;
}

Isa bestIsa() {
  if (cpuHasAvx512())
    return Isa::Avx512;
  return cpuHasAvx2Fma() ? Isa::Avx2 : Isa::Scalar;
}

bool parseIsa(const char *name, Isa &out) {
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512})
    if (strcasecmp(name, isaName(isa)) == 0) {
      out = isa;
      return true;
    }
  return false;
}

namespace {
// One warning per process and kind of problem: kernels read the variable at
// every call.
std::atomic<bool> warnedUnknown{false}, warnedUnavailable{false};
} // namespace

Isa activeIsa() {
  const char *v = getenv("TIDAL_CPU_ISA");
  if (!v || !*v)
    return bestIsa();
  Isa want;
  if (!parseIsa(v, want)) {
    if (!warnedUnknown.exchange(true))
      fprintf(stderr,
              "tidalrt: ignoring TIDAL_CPU_ISA=%s (expected scalar, avx2 or "
              "avx512); using %s\n",
              v, isaName(bestIsa()));
    return bestIsa();
  }
  if (isaAvailable(want))
    return want;
  // The best ISA below the one asked for.
  Isa got = want == Isa::Avx512 && cpuHasAvx2Fma() ? Isa::Avx2 : Isa::Scalar;
  if (!warnedUnavailable.exchange(true))
    fprintf(stderr,
            "tidalrt: TIDAL_CPU_ISA=%s but this CPU lacks it; using %s\n", v,
            isaName(got));
  return got;
}

const char *isaName(Isa isa) {
  switch (isa) {
  case Isa::Scalar:
    return "scalar";
  case Isa::Avx2:
    return "avx2";
  case Isa::Avx512:
    return "avx512";
  }
  return "?";
}

void unaryF32(Isa isa, Unary op, const float *x, float *y, int64_t n,
              float alpha) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx512)
    return avx512::unaryF32(op, x, y, n, alpha);
  if (isa == Isa::Avx2)
    return avx2::unaryF32(op, x, y, n, alpha);
#endif
  (void)isa;
  scalar::unaryF32(op, x, y, n, alpha);
}

void binaryF32(Isa isa, Binary op, const float *a, int64_t aStride,
               const float *b, int64_t bStride, float *y, int64_t n) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx512)
    return avx512::binaryF32(op, a, aStride, b, bStride, y, n);
  if (isa == Isa::Avx2)
    return avx2::binaryF32(op, a, aStride, b, bStride, y, n);
#endif
  (void)isa;
  scalar::binaryF32(op, a, aStride, b, bStride, y, n);
}

void gradF32(Isa isa, Grad op, const float *grad, const float *saved, float *y,
             int64_t n, float alpha) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx512)
    return avx512::gradF32(op, grad, saved, y, n, alpha);
  if (isa == Isa::Avx2)
    return avx2::gradF32(op, grad, saved, y, n, alpha);
#endif
  (void)isa;
  scalar::gradF32(op, grad, saved, y, n, alpha);
}

void maskScaleF32(Isa isa, const float *x, const uint8_t *mask, float scale,
                  float *y, int64_t n) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx512)
    return avx512::maskScaleF32(x, mask, scale, y, n);
  if (isa == Isa::Avx2)
    return avx2::maskScaleF32(x, mask, scale, y, n);
#endif
  (void)isa;
  scalar::maskScaleF32(x, mask, scale, y, n);
}

double sumF32(Isa isa, const float *x, int64_t n) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx512)
    return avx512::sumF32(x, n);
  if (isa == Isa::Avx2)
    return avx2::sumF32(x, n);
#endif
  (void)isa;
  return scalar::sumF32(x, n);
}

void accumulateF32(Isa isa, const float *x, double *acc, int64_t n) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx512)
    return avx512::accumulateF32(x, acc, n);
  if (isa == Isa::Avx2)
    return avx2::accumulateF32(x, acc, n);
#endif
  (void)isa;
  scalar::accumulateF32(x, acc, n);
}

void accumulate4F32(Isa isa, const float *const *rows, double *acc, int64_t n) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx512)
    return avx512::accumulate4F32(rows, acc, n);
  if (isa == Isa::Avx2)
    return avx2::accumulate4F32(rows, acc, n);
#endif
  (void)isa;
  scalar::accumulate4F32(rows, acc, n);
}

void dropoutF32(Isa isa, const DropoutStream &s, uint32_t first, const float *x,
                float *y, uint8_t *mask, int64_t n, float scale) {
#if TIDALRT_HAVE_X86
  if (isa == Isa::Avx512)
    return avx512::dropoutF32(s, first, x, y, mask, n, scale);
  if (isa == Isa::Avx2)
    return avx2::dropoutF32(s, first, x, y, mask, n, scale);
#endif
  (void)isa;
  scalar::dropoutF32(s, first, x, y, mask, n, scale);
}

} // namespace simd
} // namespace tidalrt
