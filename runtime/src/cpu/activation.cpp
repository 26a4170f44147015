// activation.cpp - the CPU kernels of the activation family and the
// element-wise math ops (activation_math.h has the formulas): clip,
// hard_sigmoid, hard_swish, elu, selu, celu, softplus, softsign, mish, abs,
// reciprocal, sin, cos, sign, floor, ceil, round, and the backward kernels
// of the first nine.
//
// Forward: (input, output) of one type and element count (checkUnary);
// backward: (grad, saved = forward input, grad_input)
// (checkActivationBackward). Every element is computed by activation_math.h's
// formula, in parallel chunks. The ops MobileNets run at every layer (clip,
// hard_sigmoid, hard_swish, abs) and their backward ops also have AVX2 and
// AVX-512 (AVX512F) loops, written with the scalar formula's IEEE operations
// in its order (and no contraction into FMAs: -ffp-contract=off), so every
// ISA gives the same bits.
// The transcendental ones run the C library's functions per element.
#include "activation_checks.h"
#include "broadcast.h"
#include "elementwise_checks.h"
#include "kernel.h"
#include "simd.h"

#include <cmath>
#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TIDALRT_ACT_X86 1
#define TIDALRT_AVX2 __attribute__((target("avx2,fma")))
#define TIDALRT_AVX512 __attribute__((target("avx512f,avx2,fma")))
// GCC 12 flags the deliberately undefined vectors inside avx512fintrin.h's
// intrinsics as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#else
#define TIDALRT_ACT_X86 0
#endif

using namespace tidalrt;
using namespace tidalrt::ew;
using act::Kind;

namespace {

//===----------------------------------------------------------------------===//
// AVX2 loops (float32)
//===----------------------------------------------------------------------===//

#if TIDALRT_ACT_X86
TIDALRT_AVX2 inline __m256 set1(float v) { return _mm256_set1_ps(v); }

// max_ps(a, b) is a > b ? a : b and min_ps(a, b) is a < b ? a : b, NaN
// giving b: the scalar formula's comparisons exactly.
template <Kind K> struct ForwardV {
  __m256 a, b;
  TIDALRT_AVX2 __m256 operator()(__m256 x) const {
    if constexpr (K == Kind::Clip) {
      return _mm256_min_ps(b, _mm256_max_ps(a, x));
    } else if constexpr (K == Kind::HardSigmoid) {
      __m256 v = _mm256_add_ps(_mm256_mul_ps(a, x), b);
      return _mm256_max_ps(_mm256_setzero_ps(), _mm256_min_ps(set1(1.0f), v));
    } else if constexpr (K == Kind::HardSwish) {
      __m256 v =
          _mm256_max_ps(_mm256_setzero_ps(), _mm256_add_ps(x, set1(3.0f)));
      v = _mm256_min_ps(set1(6.0f), v);
      return _mm256_div_ps(_mm256_mul_ps(x, v), set1(6.0f));
    } else {
      static_assert(K == Kind::Abs, "kinds with an AVX2 forward loop");
      return _mm256_andnot_ps(set1(-0.0f), x);
    }
  }
};

template <Kind K> struct BackwardV {
  __m256 a, b;
  TIDALRT_AVX2 __m256 operator()(__m256 g, __m256 x) const {
    if constexpr (K == Kind::Clip) {
      __m256 in = _mm256_and_ps(_mm256_cmp_ps(a, x, _CMP_LT_OQ),
                                _mm256_cmp_ps(x, b, _CMP_LT_OQ));
      return _mm256_and_ps(g, in);
    } else if constexpr (K == Kind::HardSigmoid) {
      __m256 v = _mm256_add_ps(_mm256_mul_ps(a, x), b);
      __m256 in =
          _mm256_and_ps(_mm256_cmp_ps(_mm256_setzero_ps(), v, _CMP_LT_OQ),
                        _mm256_cmp_ps(v, set1(1.0f), _CMP_LT_OQ));
      return _mm256_and_ps(_mm256_mul_ps(a, g), in);
    } else {
      static_assert(K == Kind::HardSwish, "kinds with an AVX2 backward loop");
      __m256 mid = _mm256_mul_ps(
          g, _mm256_add_ps(_mm256_div_ps(x, set1(3.0f)), set1(0.5f)));
      __m256 r =
          _mm256_blendv_ps(g, mid, _mm256_cmp_ps(x, set1(3.0f), _CMP_LE_OQ));
      return _mm256_andnot_ps(_mm256_cmp_ps(x, set1(-3.0f), _CMP_LT_OQ), r);
    }
  }
};

template <Kind K>
TIDALRT_AVX2 void forwardAvx2(const float *x, float *y, int64_t n,
                              act::Params<float> p) {
  const ForwardV<K> f{set1(p.a), set1(p.b)};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i)
    y[i] = act::forward<K, float>(x[i], p);
}

template <Kind K>
TIDALRT_AVX2 void backwardAvx2(const float *g, const float *x, float *y,
                               int64_t n, act::Params<float> p) {
  const BackwardV<K> f{set1(p.a), set1(p.b)};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(g + i), _mm256_loadu_ps(x + i)));
  for (; i < n; ++i)
    y[i] = act::backward<K, float>(g[i], x[i], p);
}
//===----------------------------------------------------------------------===//
// AVX-512 loops (float32): the AVX2 ones with mask registers, masked tails
//===----------------------------------------------------------------------===//

TIDALRT_AVX512 inline __m512 set1x16(float v) { return _mm512_set1_ps(v); }

template <Kind K> struct Forward512 {
  __m512 a, b;
  TIDALRT_AVX512 __m512 operator()(__m512 x) const {
    if constexpr (K == Kind::Clip) {
      return _mm512_min_ps(b, _mm512_max_ps(a, x));
    } else if constexpr (K == Kind::HardSigmoid) {
      __m512 v = _mm512_add_ps(_mm512_mul_ps(a, x), b);
      return _mm512_max_ps(_mm512_setzero_ps(),
                           _mm512_min_ps(set1x16(1.0f), v));
    } else if constexpr (K == Kind::HardSwish) {
      __m512 v =
          _mm512_max_ps(_mm512_setzero_ps(), _mm512_add_ps(x, set1x16(3.0f)));
      v = _mm512_min_ps(set1x16(6.0f), v);
      return _mm512_div_ps(_mm512_mul_ps(x, v), set1x16(6.0f));
    } else {
      static_assert(K == Kind::Abs, "kinds with an AVX-512 forward loop");
      // and_ps on zmm is AVX512DQ: the integer and.
      return _mm512_castsi512_ps(_mm512_and_si512(
          _mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff)));
    }
  }
};

template <Kind K> struct Backward512 {
  __m512 a, b;
  TIDALRT_AVX512 __m512 operator()(__m512 g, __m512 x) const {
    if constexpr (K == Kind::Clip) {
      __mmask16 in = _mm512_cmp_ps_mask(a, x, _CMP_LT_OQ) &
                     _mm512_cmp_ps_mask(x, b, _CMP_LT_OQ);
      return _mm512_maskz_mov_ps(in, g);
    } else if constexpr (K == Kind::HardSigmoid) {
      __m512 v = _mm512_add_ps(_mm512_mul_ps(a, x), b);
      __mmask16 in = _mm512_cmp_ps_mask(_mm512_setzero_ps(), v, _CMP_LT_OQ) &
                     _mm512_cmp_ps_mask(v, set1x16(1.0f), _CMP_LT_OQ);
      return _mm512_maskz_mov_ps(in, _mm512_mul_ps(a, g));
    } else {
      static_assert(K == Kind::HardSwish,
                    "kinds with an AVX-512 backward loop");
      __m512 mid = _mm512_mul_ps(
          g, _mm512_add_ps(_mm512_div_ps(x, set1x16(3.0f)), set1x16(0.5f)));
      __m512 r = _mm512_mask_blend_ps(
          _mm512_cmp_ps_mask(x, set1x16(3.0f), _CMP_LE_OQ), g, mid);
      return _mm512_maskz_mov_ps(
          (__mmask16)~_mm512_cmp_ps_mask(x, set1x16(-3.0f), _CMP_LT_OQ), r);
    }
  }
};

template <Kind K>
TIDALRT_AVX512 void forwardAvx512(const float *x, float *y, int64_t n,
                                  act::Params<float> p) {
  const Forward512<K> f{set1x16(p.a), set1x16(p.b)};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, f(_mm512_loadu_ps(x + i)));
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (unsigned)(n - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, m, f(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

template <Kind K>
TIDALRT_AVX512 void backwardAvx512(const float *g, const float *x, float *y,
                                   int64_t n, act::Params<float> p) {
  const Backward512<K> f{set1x16(p.a), set1x16(p.b)};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, f(_mm512_loadu_ps(g + i), _mm512_loadu_ps(x + i)));
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (unsigned)(n - i)) - 1u);
    _mm512_mask_storeu_ps(
        y + i, m,
        f(_mm512_maskz_loadu_ps(m, g + i), _mm512_maskz_loadu_ps(m, x + i)));
  }
}
#endif

constexpr bool hasAvx2Forward(Kind k) {
  return k == Kind::Clip || k == Kind::HardSigmoid || k == Kind::HardSwish ||
         k == Kind::Abs;
}
constexpr bool hasAvx2Backward(Kind k) {
  return k == Kind::Clip || k == Kind::HardSigmoid || k == Kind::HardSwish;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

template <Kind K, typename T>
void forwardRange(const T *x, T *y, int64_t n, act::Params<T> p,
                  simd::Isa isa) {
#if TIDALRT_ACT_X86
  if constexpr (std::is_same_v<T, float> && hasAvx2Forward(K)) {
    if (isa == simd::Isa::Avx512)
      return forwardAvx512<K>(x, y, n, p);
    if (isa == simd::Isa::Avx2)
      return forwardAvx2<K>(x, y, n, p);
  }
#endif
  (void)isa;
  for (int64_t i = 0; i < n; ++i)
    y[i] = act::forward<K, T>(x[i], p);
}

template <Kind K, typename T>
void runForward(const OpCall &op, int64_t n, const act::Params<double> &p) {
  const T *X = static_cast<const T *>(op[0].data);
  T *Y = static_cast<T *>(op[1].data);
  const act::Params<T> pt = act::castParams<T>(p);
  const simd::Isa isa = simd::activeIsa();
  parallelChunks(n, [&](int64_t b, int64_t e) {
    forwardRange<K, T>(X + b, Y + b, e - b, pt, isa);
  });
}

template <Kind K> tidalrt_status_t forwardKernel(OpCall &op) {
  const int64_t n = checkUnary(op, act::takesIntegers(K));
  const act::Params<double> p = activationParams(K, op);
  if (preparing(op.context) || n == 0)
    return ok();
  switch (op[0].type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    runForward<K, float>(op, n, p);
    break;
  case TIDALRT_ELEMENT_TYPE_F64:
    runForward<K, double>(op, n, p);
    break;
  case TIDALRT_ELEMENT_TYPE_I64:
    if constexpr (act::takesIntegers(K))
      runForward<K, int64_t>(op, n, p);
    break;
  case TIDALRT_ELEMENT_TYPE_I32:
    if constexpr (act::takesIntegers(K))
      runForward<K, int32_t>(op, n, p);
    break;
  }
  return ok();
}

template <Kind K, typename T>
void backwardRange(const T *g, const T *x, T *y, int64_t n, act::Params<T> p,
                   simd::Isa isa) {
#if TIDALRT_ACT_X86
  if constexpr (std::is_same_v<T, float> && hasAvx2Backward(K)) {
    if (isa == simd::Isa::Avx512)
      return backwardAvx512<K>(g, x, y, n, p);
    if (isa == simd::Isa::Avx2)
      return backwardAvx2<K>(g, x, y, n, p);
  }
#endif
  (void)isa;
  for (int64_t i = 0; i < n; ++i)
    y[i] = act::backward<K, T>(g[i], x[i], p);
}

template <Kind K, typename T>
void runBackward(const OpCall &op, int64_t n, const act::Params<double> &p) {
  const T *G = static_cast<const T *>(op[0].data);
  const T *X = static_cast<const T *>(op[1].data);
  T *Y = static_cast<T *>(op[2].data);
  const act::Params<T> pt = act::castParams<T>(p);
  const simd::Isa isa = simd::activeIsa();
  parallelChunks(n, [&](int64_t b, int64_t e) {
    backwardRange<K, T>(G + b, X + b, Y + b, e - b, pt, isa);
  });
}

template <Kind K> tidalrt_status_t backwardKernel(OpCall &op) {
  const int64_t n = checkActivationBackward(op);
  const act::Params<double> p = activationParams(K, op);
  if (preparing(op.context) || n == 0)
    return ok();
  if (op[0].type == TIDALRT_ELEMENT_TYPE_F32)
    runBackward<K, float>(op, n, p);
  else
    runBackward<K, double>(op, n, p);
  return ok();
}

} // namespace

#define TIDALRT_ACTIVATION_KERNEL(name, kind)                                  \
  extern "C" tidalrt_status_t tidalrt_k_##name(                                \
      tidalrt_context_t *ctx, const int64_t *desc, void *const *buffers) {     \
    return runKernel(ctx, desc, buffers, #name, [](OpCall &op) {               \
      return forwardKernel<Kind::kind>(op);                                    \
    });                                                                        \
  }
#define TIDALRT_ACTIVATION_BACKWARD_KERNEL(name, kind)                         \
  extern "C" tidalrt_status_t tidalrt_k_##name##_backward(                     \
      tidalrt_context_t *ctx, const int64_t *desc, void *const *buffers) {     \
    return runKernel(ctx, desc, buffers, #name "_backward", [](OpCall &op) {   \
      return backwardKernel<Kind::kind>(op);                                   \
    });                                                                        \
  }

TIDALRT_ACTIVATION_KERNEL(clip, Clip)
TIDALRT_ACTIVATION_KERNEL(hard_sigmoid, HardSigmoid)
TIDALRT_ACTIVATION_KERNEL(hard_swish, HardSwish)
TIDALRT_ACTIVATION_KERNEL(elu, Elu)
TIDALRT_ACTIVATION_KERNEL(selu, Selu)
TIDALRT_ACTIVATION_KERNEL(celu, Celu)
TIDALRT_ACTIVATION_KERNEL(softplus, Softplus)
TIDALRT_ACTIVATION_KERNEL(softsign, Softsign)
TIDALRT_ACTIVATION_KERNEL(mish, Mish)
TIDALRT_ACTIVATION_KERNEL(abs, Abs)
TIDALRT_ACTIVATION_KERNEL(reciprocal, Reciprocal)
TIDALRT_ACTIVATION_KERNEL(sin, Sin)
TIDALRT_ACTIVATION_KERNEL(cos, Cos)
TIDALRT_ACTIVATION_KERNEL(tan, Tan)
TIDALRT_ACTIVATION_KERNEL(asin, Asin)
TIDALRT_ACTIVATION_KERNEL(acos, Acos)
TIDALRT_ACTIVATION_KERNEL(atan, Atan)
TIDALRT_ACTIVATION_KERNEL(sinh, Sinh)
TIDALRT_ACTIVATION_KERNEL(cosh, Cosh)
TIDALRT_ACTIVATION_KERNEL(asinh, Asinh)
TIDALRT_ACTIVATION_KERNEL(acosh, Acosh)
TIDALRT_ACTIVATION_KERNEL(atanh, Atanh)
TIDALRT_ACTIVATION_KERNEL(sign, Sign)
TIDALRT_ACTIVATION_KERNEL(floor, Floor)
TIDALRT_ACTIVATION_KERNEL(ceil, Ceil)
TIDALRT_ACTIVATION_KERNEL(round, Round)
TIDALRT_ACTIVATION_BACKWARD_KERNEL(clip, Clip)
TIDALRT_ACTIVATION_BACKWARD_KERNEL(hard_sigmoid, HardSigmoid)
TIDALRT_ACTIVATION_BACKWARD_KERNEL(hard_swish, HardSwish)
TIDALRT_ACTIVATION_BACKWARD_KERNEL(elu, Elu)
TIDALRT_ACTIVATION_BACKWARD_KERNEL(selu, Selu)
TIDALRT_ACTIVATION_BACKWARD_KERNEL(celu, Celu)
TIDALRT_ACTIVATION_BACKWARD_KERNEL(softplus, Softplus)
TIDALRT_ACTIVATION_BACKWARD_KERNEL(softsign, Softsign)
TIDALRT_ACTIVATION_BACKWARD_KERNEL(mish, Mish)
