// simd_avx2.cpp - the AVX2 + FMA float32 loops behind simd.h.
//
// Every function here carries __attribute__((target("avx2,fma"))) and
// nothing else in the runtime does, so the library runs on any x86-64 CPU
// and only calls these after activeIsa() has checked the CPU.
//
// Vector math (accuracy measured against double precision over dense sweeps
// in the unit tests, relative error below 1e-6 everywhere):
//   exp     Cody-Waite reduction by ln 2, Cephes' degree-5 polynomial.
//   log     Cephes' logf: mantissa in [sqrt(1/2), sqrt(2)), degree-8
//           polynomial.
//   tanh    Cephes' odd polynomial for |x| < 0.625, else
//           1 - 2 / (exp(2|x|) + 1); saturates at |x| > 9.1.
//   sigmoid 1 / (1 + e) or e / (1 + e) with e = exp(-|x|), exact divisions.
//   erf     x * P(x^2) for |x| < 1 (degree 6); else
//           1 - exp(-x^2) * R(1 / (1 + |x|/2) - 1/2) with R of degree 6
//           (fitted for relative error 3e-8 on [1, 4]) and exp(-x^2)
//           corrected for the rounding of x^2 (FMA); 1 for |x| >= 4.
//   gelu    x * Phi(x) with Phi(-a) = exp(-a^2/2) * P(q) / (1 + sqrt(2) a),
//           a = |x|, q = (a - 3 sqrt(2)) / (a + 3 sqrt(2)) in [-1, 0.5]
//           (Shepherd and Laframboise's form of erfc), P(q) = 1/2 +
//           (1 + q) R(q) with R of degree 9 (Chebyshev fit of
//           erfcx(a/sqrt2) (1 + sqrt(2) a) / 2 on a in [0, 12.5], relative
//           error 5e-9 with float coefficients, exact at a = 0) and
//           exp(-a^2/2) corrected for the rounding of a^2; Phi(x) is
//           Phi(-a) for x < 0 and 1 - Phi(-a) otherwise, so that negative x
//           keep their relative accuracy (no 1 + erf cancellation). The
//           backward factor Phi(x) + x phi(x) shares exp(-a^2/2):
//           [x >= 0] + exp(-a^2/2) (x / sqrt(2 pi) -+ P(q) / (1 + sqrt(2) a)).
//           Fast range -12.5 <= x <= FLT_MAX (x clamped to 12.5 where the
//           result is x, or the factor 1).
// Lanes outside a fast range (NaN, |x| > 87 for exp, non-normal or
// non-positive input for log, ...) make the whole vector take the scalar
// libm path.
#include "simd_impl.h"

#if TIDALRT_HAVE_X86
#include <immintrin.h>

namespace tidalrt {
namespace simd {
namespace avx2 {

TIDALRT_AVX2 inline __m256 set1(float v) { return _mm256_set1_ps(v); }

TIDALRT_AVX2 inline __m256 absV(__m256 x) {
  return _mm256_andnot_ps(set1(-0.0f), x);
}

// The sign bit of `from` on the (non-negative) magnitude `mag`.
TIDALRT_AVX2 inline __m256 copySignV(__m256 mag, __m256 from) {
  return _mm256_or_ps(mag, _mm256_and_ps(set1(-0.0f), from));
}

TIDALRT_AVX2 inline bool allTrue(__m256 mask) {
  return _mm256_movemask_ps(mask) == 0xff;
}

// Applies `f` lane by lane: the slow path for lanes outside a fast range.
template <typename F> TIDALRT_AVX2 inline __m256 perLane(__m256 x, F f) {
  alignas(32) float v[8];
  _mm256_store_ps(v, x);
  for (int k = 0; k < 8; ++k)
    v[k] = f(v[k]);
  return _mm256_load_ps(v);
}

// exp(x) for |x| <= 87 (normal results, no overflow).
TIDALRT_AVX2 inline __m256 expCore(__m256 x) {
  __m256 n = _mm256_round_ps(_mm256_mul_ps(x, set1(1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, set1(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, set1(-2.12194440e-4f), r);
  __m256 p = set1(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, set1(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, set1(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, set1(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, set1(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, set1(5.0000001201e-1f));
  __m256 r2 = _mm256_mul_ps(r, r);
  __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, r2, r), set1(1.0f));
  __m256i e = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

// log(x) for normal, positive, finite x.
TIDALRT_AVX2 inline __m256 logCore(__m256 x) {
  __m256i xi = _mm256_castps_si256(x);
  __m256 e = _mm256_cvtepi32_ps(
      _mm256_sub_epi32(_mm256_srli_epi32(xi, 23), _mm256_set1_epi32(126)));
  // The mantissa in [0.5, 1).
  __m256 m = _mm256_castsi256_ps(
      _mm256_or_si256(_mm256_and_si256(xi, _mm256_set1_epi32(0x007fffff)),
                      _mm256_set1_epi32(0x3f000000)));
  // m < sqrt(1/2): use 2m - 1 and e - 1, else m - 1.
  __m256 small = _mm256_cmp_ps(m, set1(0.707106781186547524f), _CMP_LT_OQ);
  __m256 t = _mm256_and_ps(small, m);
  m = _mm256_sub_ps(m, set1(1.0f));
  e = _mm256_sub_ps(e, _mm256_and_ps(small, set1(1.0f)));
  m = _mm256_add_ps(m, t);
  __m256 z = _mm256_mul_ps(m, m);
  __m256 p = set1(7.0376836292e-2f);
  p = _mm256_fmadd_ps(p, m, set1(-1.1514610310e-1f));
  p = _mm256_fmadd_ps(p, m, set1(1.1676998740e-1f));
  p = _mm256_fmadd_ps(p, m, set1(-1.2420140846e-1f));
  p = _mm256_fmadd_ps(p, m, set1(1.4249322787e-1f));
  p = _mm256_fmadd_ps(p, m, set1(-1.6668057665e-1f));
  p = _mm256_fmadd_ps(p, m, set1(2.0000714765e-1f));
  p = _mm256_fmadd_ps(p, m, set1(-2.4999993993e-1f));
  p = _mm256_fmadd_ps(p, m, set1(3.3333331174e-1f));
  __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, m), z);
  y = _mm256_fmadd_ps(e, set1(-2.12194440e-4f), y);
  y = _mm256_fnmadd_ps(z, set1(0.5f), y);
  __m256 r = _mm256_add_ps(m, y);
  return _mm256_fmadd_ps(e, set1(0.693359375f), r);
}

struct NegV {
  TIDALRT_AVX2 __m256 operator()(__m256 x) const {
    return _mm256_xor_ps(x, set1(-0.0f));
  }
};

struct ReluV {
  // max returns its second operand for NaN and for +-0: x > 0 ? x : 0.
  TIDALRT_AVX2 __m256 operator()(__m256 x) const {
    return _mm256_max_ps(x, _mm256_setzero_ps());
  }
};

struct LeakyReluV {
  __m256 alpha;
  TIDALRT_AVX2 __m256 operator()(__m256 x) const {
    __m256 ge = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ);
    return _mm256_blendv_ps(_mm256_mul_ps(x, alpha), x, ge);
  }
};

struct SqrtV {
  TIDALRT_AVX2 __m256 operator()(__m256 x) const { return _mm256_sqrt_ps(x); }
};

struct ExpV {
  TIDALRT_AVX2 __m256 operator()(__m256 x) const {
    if (!allTrue(_mm256_cmp_ps(absV(x), set1(87.0f), _CMP_LE_OQ)))
      return perLane(x, expS);
    return expCore(x);
  }
};

struct LogV {
  TIDALRT_AVX2 __m256 operator()(__m256 x) const {
    __m256 ok =
        _mm256_and_ps(_mm256_cmp_ps(x, set1(1.17549435e-38f), _CMP_GE_OQ),
                      _mm256_cmp_ps(x, set1(3.40282347e38f), _CMP_LE_OQ));
    if (!allTrue(ok))
      return perLane(x, logS);
    return logCore(x);
  }
};

struct TanhV {
  TIDALRT_AVX2 __m256 operator()(__m256 x) const {
    if (!allTrue(_mm256_cmp_ps(x, x, _CMP_ORD_Q)))
      return perLane(x, tanhS);
    __m256 a = absV(x);
    __m256 small = _mm256_cmp_ps(a, set1(0.625f), _CMP_LT_OQ);
    // |x| < 0.625: x + x^3 P(x^2).
    __m256 s = _mm256_mul_ps(x, x);
    __m256 p = set1(-5.70498872745e-3f);
    p = _mm256_fmadd_ps(p, s, set1(2.06390887954e-2f));
    p = _mm256_fmadd_ps(p, s, set1(-5.37397155531e-2f));
    p = _mm256_fmadd_ps(p, s, set1(1.33314422036e-1f));
    p = _mm256_fmadd_ps(p, s, set1(-3.33332819422e-1f));
    // The sign of x on the result: x^3 P + x rounds -0 to +0.
    __m256 ys = _mm256_or_ps(_mm256_fmadd_ps(_mm256_mul_ps(p, s), x, x),
                             _mm256_and_ps(set1(-0.0f), x));
    if (allTrue(small))
      return ys;
    // Else 1 - 2 / (exp(2|x|) + 1), which rounds to 1 beyond 9.1.
    __m256 e = expCore(_mm256_add_ps(_mm256_min_ps(a, set1(9.1f)),
                                     _mm256_min_ps(a, set1(9.1f))));
    __m256 yl = _mm256_sub_ps(
        set1(1.0f), _mm256_div_ps(set1(2.0f), _mm256_add_ps(e, set1(1.0f))));
    return _mm256_blendv_ps(copySignV(yl, x), ys, small);
  }
};

struct SigmoidV {
  TIDALRT_AVX2 __m256 operator()(__m256 x) const {
    __m256 a = absV(x);
    if (!allTrue(_mm256_cmp_ps(a, set1(87.0f), _CMP_LE_OQ)))
      return perLane(x, sigmoidScalar);
    __m256 e = expCore(_mm256_sub_ps(_mm256_setzero_ps(), a));
    __m256 d = _mm256_add_ps(set1(1.0f), e);
    __m256 pos = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ);
    return _mm256_div_ps(_mm256_blendv_ps(e, set1(1.0f), pos), d);
  }
};

// exp(-x^2) for |x| <= 9.3, with the rounding error of x^2 corrected.
TIDALRT_AVX2 inline __m256 expNegSquare(__m256 x) {
  __m256 h = _mm256_mul_ps(x, x);
  __m256 l = _mm256_fmsub_ps(x, x, h); // x^2 = h + l exactly
  __m256 e = expCore(_mm256_sub_ps(_mm256_setzero_ps(), h));
  return _mm256_fnmadd_ps(e, l, e); // e * (1 - l)
}

struct ErfV {
  TIDALRT_AVX2 __m256 operator()(__m256 x) const {
    if (!allTrue(_mm256_cmp_ps(x, x, _CMP_ORD_Q)))
      return perLane(x, erfS);
    __m256 a = absV(x);
    __m256 small = _mm256_cmp_ps(a, set1(1.0f), _CMP_LT_OQ);
    // |x| < 1: x * P(x^2).
    __m256 z = _mm256_mul_ps(x, x);
    __m256 p = set1(-2.666156433e-05f);
    p = _mm256_fmadd_ps(p, z, set1(-4.821057373e-04f));
    p = _mm256_fmadd_ps(p, z, set1(4.824896809e-03f));
    p = _mm256_fmadd_ps(p, z, set1(-2.666226216e-02f));
    p = _mm256_fmadd_ps(p, z, set1(1.127899811e-01f));
    p = _mm256_fmadd_ps(p, z, set1(-3.761222064e-01f));
    p = _mm256_fmadd_ps(p, z, set1(1.128379107e+00f));
    __m256 ys = _mm256_mul_ps(p, x);
    if (allTrue(small))
      return ys;
    // |x| >= 1: 1 - exp(-x^2) R(u), u = 1 / (1 + |x|/2) - 1/2.
    a = _mm256_min_ps(a, set1(4.0f));
    __m256 u = _mm256_sub_ps(
        _mm256_div_ps(set1(1.0f), _mm256_fmadd_ps(a, set1(0.5f), set1(1.0f))),
        set1(0.5f));
    __m256 r = set1(-5.948033556e-02f);
    r = _mm256_fmadd_ps(r, u, set1(-2.182082981e-01f));
    r = _mm256_fmadd_ps(r, u, set1(5.996031687e-02f));
    r = _mm256_fmadd_ps(r, u, set1(6.317557693e-01f));
    r = _mm256_fmadd_ps(r, u, set1(9.666302800e-01f));
    r = _mm256_fmadd_ps(r, u, set1(8.543719053e-01f));
    r = _mm256_fmadd_ps(r, u, set1(2.553956807e-01f));
    __m256 yl = _mm256_fnmadd_ps(expNegSquare(a), r, set1(1.0f));
    return _mm256_blendv_ps(copySignV(yl, x), ys, small);
  }
};

// gelu's fast range: -12.5 <= x <= FLT_MAX (not NaN).
TIDALRT_AVX2 inline bool geluFast(__m256 x) {
  return allTrue(
      _mm256_and_ps(_mm256_cmp_ps(x, set1(-12.5f), _CMP_GE_OQ),
                    _mm256_cmp_ps(x, set1(3.40282347e38f), _CMP_LE_OQ)));
}

// For 0 <= a <= 12.5: e = exp(-a^2/2) and r = Phi(-a) / e =
// erfcx(a / sqrt(2)) / 2 (see the file comment).
TIDALRT_AVX2 inline void geluParts(__m256 a, __m256 &e, __m256 &r) {
  __m256 h = _mm256_mul_ps(a, a);
  __m256 l = _mm256_fmsub_ps(a, a, h); // a^2 = h + l exactly
  __m256 eh = expCore(_mm256_mul_ps(h, set1(-0.5f)));
  e = _mm256_fnmadd_ps(eh, _mm256_mul_ps(l, set1(0.5f)), eh); // eh (1 - l/2)
  // s = 1 + q = 2a / (a + k), k = 3 sqrt(2) rounded to float (the fit's
  // k); P(q) = 1/2 + s R(q) is exact at a = 0.
  const __m256 k = set1(4.24264049530029296875f);
  __m256 s = _mm256_div_ps(_mm256_add_ps(a, a), _mm256_add_ps(a, k));
  __m256 q = _mm256_sub_ps(s, set1(1.0f));
  __m256 p = set1(-1.469210692e-04f);
  p = _mm256_fmadd_ps(p, q, set1(-2.771690197e-04f));
  p = _mm256_fmadd_ps(p, q, set1(1.252057729e-03f));
  p = _mm256_fmadd_ps(p, q, set1(3.872242814e-05f));
  p = _mm256_fmadd_ps(p, q, set1(-1.192333549e-02f));
  p = _mm256_fmadd_ps(p, q, set1(4.607304558e-02f));
  p = _mm256_fmadd_ps(p, q, set1(-1.057107002e-01f));
  p = _mm256_fmadd_ps(p, q, set1(1.705334783e-01f));
  p = _mm256_fmadd_ps(p, q, set1(-1.943145692e-01f));
  p = _mm256_fmadd_ps(p, q, set1(1.265040189e-01f));
  p = _mm256_fmadd_ps(p, s, set1(0.5f));
  r = _mm256_div_ps(
      p, _mm256_fmadd_ps(a, set1(1.41421353816986083984375f), set1(1.0f)));
}

struct GeluV {
  TIDALRT_AVX2 __m256 operator()(__m256 x) const {
    if (!geluFast(x))
      return perLane(x, geluScalar);
    __m256 e, r;
    geluParts(_mm256_min_ps(absV(x), set1(12.5f)), e, r);
    __m256 c = _mm256_mul_ps(e, r); // Phi(-|x|)
    // Sign bit set (-0 included): x * c, else x - x * c.
    return _mm256_blendv_ps(_mm256_fnmadd_ps(x, c, x), _mm256_mul_ps(x, c), x);
  }
};

// y[i] = op(x[i]); the tail goes through the same vector code, padded
// with ones, so that every element's result is independent of its position.
template <typename Op>
TIDALRT_AVX2 void mapAvx2(const float *x, float *y, int64_t n, const Op &op) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, op(_mm256_loadu_ps(x + i)));
  if (i < n) {
    alignas(32) float buf[8];
    for (int64_t k = 0; k < 8; ++k)
      buf[k] = i + k < n ? x[i + k] : 1.0f;
    _mm256_store_ps(buf, op(_mm256_load_ps(buf)));
    for (int64_t k = 0; i + k < n; ++k)
      y[i + k] = buf[k];
  }
}

TIDALRT_AVX2 void unaryF32(Unary op, const float *x, float *y, int64_t n,
                           float alpha) {
  switch (op) {
  case Unary::Neg:
    return mapAvx2(x, y, n, NegV());
  case Unary::Relu:
    return mapAvx2(x, y, n, ReluV());
  case Unary::Sigmoid:
    return mapAvx2(x, y, n, SigmoidV());
  case Unary::Tanh:
    return mapAvx2(x, y, n, TanhV());
  case Unary::Sqrt:
    return mapAvx2(x, y, n, SqrtV());
  case Unary::Erf:
    return mapAvx2(x, y, n, ErfV());
  case Unary::Exp:
    return mapAvx2(x, y, n, ExpV());
  case Unary::Log:
    return mapAvx2(x, y, n, LogV());
  case Unary::LeakyRelu:
    return mapAvx2(x, y, n, LeakyReluV{set1(alpha)});
  case Unary::Gelu:
    return mapAvx2(x, y, n, GeluV());
  }
}

struct AddV {
  TIDALRT_AVX2 __m256 operator()(__m256 a, __m256 b) const {
    return _mm256_add_ps(a, b);
  }
};
struct SubV {
  TIDALRT_AVX2 __m256 operator()(__m256 a, __m256 b) const {
    return _mm256_sub_ps(a, b);
  }
};
struct MulV {
  TIDALRT_AVX2 __m256 operator()(__m256 a, __m256 b) const {
    return _mm256_mul_ps(a, b);
  }
};
struct DivV {
  TIDALRT_AVX2 __m256 operator()(__m256 a, __m256 b) const {
    return _mm256_div_ps(a, b);
  }
};

// A tail of fewer than 8 elements through the vector code (padded with
// ones).
template <typename Op>
TIDALRT_AVX2 inline void zipTail(const float *a, int64_t as, const float *b,
                                 int64_t bs, float *y, int64_t n,
                                 const Op &op) {
  alignas(32) float ab[8], bb[8];
  for (int64_t k = 0; k < 8; ++k) {
    ab[k] = k < n ? a[k * as] : 1.0f;
    bb[k] = k < n ? b[k * bs] : 1.0f;
  }
  _mm256_store_ps(ab, op(_mm256_load_ps(ab), _mm256_load_ps(bb)));
  for (int64_t k = 0; k < n; ++k)
    y[k] = ab[k];
}

template <typename Op>
TIDALRT_AVX2 void zipAvx2(const float *a, int64_t as, const float *b,
                          int64_t bs, float *y, int64_t n, const Op &op) {
  int64_t i = 0;
  if (as == 1 && bs == 1) {
    for (; i + 16 <= n; i += 16) {
      __m256 r0 = op(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
      __m256 r1 = op(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
      _mm256_storeu_ps(y + i, r0);
      _mm256_storeu_ps(y + i + 8, r1);
    }
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(y + i,
                       op(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  } else if (as == 1) {
    __m256 bv = _mm256_set1_ps(b[0]);
    for (; i + 16 <= n; i += 16) {
      __m256 r0 = op(_mm256_loadu_ps(a + i), bv);
      __m256 r1 = op(_mm256_loadu_ps(a + i + 8), bv);
      _mm256_storeu_ps(y + i, r0);
      _mm256_storeu_ps(y + i + 8, r1);
    }
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(y + i, op(_mm256_loadu_ps(a + i), bv));
  } else if (bs == 1) {
    __m256 av = _mm256_set1_ps(a[0]);
    for (; i + 16 <= n; i += 16) {
      __m256 r0 = op(av, _mm256_loadu_ps(b + i));
      __m256 r1 = op(av, _mm256_loadu_ps(b + i + 8));
      _mm256_storeu_ps(y + i, r0);
      _mm256_storeu_ps(y + i + 8, r1);
    }
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(y + i, op(av, _mm256_loadu_ps(b + i)));
  } else {
    __m256 v = op(_mm256_set1_ps(a[0]), _mm256_set1_ps(b[0]));
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(y + i, v);
  }
  if (i < n)
    zipTail(a + i * as, as, b + i * bs, bs, y + i, n - i, op);
}

TIDALRT_AVX2 void binaryF32(Binary op, const float *a, int64_t as,
                            const float *b, int64_t bs, float *y, int64_t n) {
  switch (op) {
  case Binary::Add:
    return zipAvx2(a, as, b, bs, y, n, AddV());
  case Binary::Sub:
    return zipAvx2(a, as, b, bs, y, n, SubV());
  case Binary::Mul:
    return zipAvx2(a, as, b, bs, y, n, MulV());
  case Binary::Div:
    return zipAvx2(a, as, b, bs, y, n, DivV());
  }
}

struct ReluGradV {
  TIDALRT_AVX2 __m256 operator()(__m256 g, __m256 y) const {
    return _mm256_and_ps(g, _mm256_cmp_ps(y, _mm256_setzero_ps(), _CMP_GT_OQ));
  }
};
struct LeakyReluGradV {
  __m256 alpha;
  TIDALRT_AVX2 __m256 operator()(__m256 g, __m256 x) const {
    __m256 gt = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ);
    return _mm256_blendv_ps(_mm256_mul_ps(g, alpha), g, gt);
  }
};
struct SigmoidGradV {
  TIDALRT_AVX2 __m256 operator()(__m256 g, __m256 y) const {
    return _mm256_mul_ps(_mm256_mul_ps(g, y), _mm256_sub_ps(set1(1.0f), y));
  }
};
struct TanhGradV {
  TIDALRT_AVX2 __m256 operator()(__m256 g, __m256 y) const {
    return _mm256_mul_ps(g, _mm256_fnmadd_ps(y, y, set1(1.0f)));
  }
};
struct ErfGradV {
  TIDALRT_AVX2 __m256 operator()(__m256 g, __m256 x) const {
    if (!allTrue(_mm256_cmp_ps(absV(x), set1(9.3f), _CMP_LE_OQ))) {
      alignas(32) float gv[8], xv[8];
      _mm256_store_ps(gv, g);
      _mm256_store_ps(xv, x);
      for (int k = 0; k < 8; ++k)
        gv[k] = erfBackwardScalar(gv[k], xv[k]);
      return _mm256_load_ps(gv);
    }
    return _mm256_mul_ps(
        g, _mm256_mul_ps(expNegSquare(x), set1((float)kTwoOverSqrtPi)));
  }
};

struct GeluGradV {
  TIDALRT_AVX2 __m256 operator()(__m256 g, __m256 x) const {
    if (!geluFast(x)) {
      alignas(32) float gv[8], xv[8];
      _mm256_store_ps(gv, g);
      _mm256_store_ps(xv, x);
      for (int k = 0; k < 8; ++k)
        gv[k] = geluBackwardScalar(gv[k], xv[k]);
      return _mm256_load_ps(gv);
    }
    __m256 xc = _mm256_min_ps(x, set1(12.5f));
    __m256 e, r;
    geluParts(absV(xc), e, r);
    // [x >= 0] + e * (x / sqrt(2 pi) - copysign(r, x)).
    __m256 t = _mm256_fmsub_ps(xc, set1((float)kInvSqrt2Pi), copySignV(r, x));
    __m256 base = _mm256_blendv_ps(set1(1.0f), _mm256_setzero_ps(), x);
    return _mm256_mul_ps(g, _mm256_fmadd_ps(e, t, base));
  }
};

TIDALRT_AVX2 void gradF32(Grad op, const float *g, const float *s, float *y,
                          int64_t n, float alpha) {
  switch (op) {
  case Grad::Relu:
    return zipAvx2(g, 1, s, 1, y, n, ReluGradV());
  case Grad::LeakyRelu:
    return zipAvx2(g, 1, s, 1, y, n, LeakyReluGradV{set1(alpha)});
  case Grad::Sigmoid:
    return zipAvx2(g, 1, s, 1, y, n, SigmoidGradV());
  case Grad::Tanh:
    return zipAvx2(g, 1, s, 1, y, n, TanhGradV());
  case Grad::Erf:
    return zipAvx2(g, 1, s, 1, y, n, ErfGradV());
  case Grad::Gelu:
    return zipAvx2(g, 1, s, 1, y, n, GeluGradV());
  }
}

TIDALRT_AVX2 void maskScaleF32(const float *x, const uint8_t *mask, float scale,
                               float *y, int64_t n) {
  __m256 sv = set1(scale);
  __m256i zero = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i m = _mm256_cvtepu8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i *>(mask + i)));
    __m256 keep = _mm256_castsi256_ps(_mm256_cmpgt_epi32(m, zero));
    _mm256_storeu_ps(
        y + i, _mm256_and_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), sv), keep));
  }
  for (; i < n; ++i)
    y[i] = mask[i] ? x[i] * scale : 0.0f;
}

TIDALRT_AVX2 double sumF32(const float *x, int64_t n) {
  __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
    a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)));
    a2 = _mm256_add_pd(a2, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 8)));
    a3 = _mm256_add_pd(a3, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 12)));
  }
  for (; i + 4 <= n; i += 4)
    a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
  __m256d s = _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3));
  alignas(32) double v[4];
  _mm256_store_pd(v, s);
  double sum = (v[0] + v[1]) + (v[2] + v[3]);
  for (; i < n; ++i)
    sum += x[i];
  return sum;
}

TIDALRT_AVX2 void accumulateF32(const float *x, double *acc, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    _mm256_storeu_pd(acc + i,
                     _mm256_add_pd(_mm256_loadu_pd(acc + i),
                                   _mm256_cvtps_pd(_mm256_castps256_ps128(v))));
    _mm256_storeu_pd(
        acc + i + 4,
        _mm256_add_pd(_mm256_loadu_pd(acc + i + 4),
                      _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))));
  }
  for (; i < n; ++i)
    acc[i] += x[i];
}

TIDALRT_AVX2 void accumulate4F32(const float *const *rows, double *acc,
                                 int64_t n) {
  const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256d a = _mm256_add_pd(_mm256_cvtps_pd(_mm_loadu_ps(r0 + i)),
                              _mm256_cvtps_pd(_mm_loadu_ps(r1 + i)));
    __m256d b = _mm256_add_pd(_mm256_cvtps_pd(_mm_loadu_ps(r2 + i)),
                              _mm256_cvtps_pd(_mm_loadu_ps(r3 + i)));
    _mm256_storeu_pd(
        acc + i, _mm256_add_pd(_mm256_loadu_pd(acc + i), _mm256_add_pd(a, b)));
  }
  for (; i < n; ++i)
    acc[i] += ((double)r0[i] + (double)r1[i]) + ((double)r2[i] + (double)r3[i]);
}

TIDALRT_AVX2 inline __m256i lowbias32V(__m256i x) {
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
  x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0x7feb352d));
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
  x = _mm256_mullo_epi32(x, _mm256_set1_epi32((int)0x846ca68bu));
  return _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
}

TIDALRT_AVX2 void dropoutF32(const DropoutStream &s, uint32_t first,
                             const float *x, float *y, uint8_t *mask, int64_t n,
                             float scale) {
  int64_t i = 0;
  if (s.threshold <= 0xffffffffu) {
    const __m256i k1 = _mm256_set1_epi32((int)s.k1);
    const __m256i k2 = _mm256_set1_epi32((int)s.k2);
    const __m256i thr = _mm256_set1_epi32((int)(uint32_t)s.threshold);
    const __m256i one = _mm256_set1_epi32(1);
    const __m256 sv = set1(scale);
    __m256i idx = _mm256_add_epi32(_mm256_set1_epi32((int)first),
                                   _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (; i + 8 <= n; i += 8) {
      __m256i u = lowbias32V(
          _mm256_xor_si256(lowbias32V(_mm256_add_epi32(idx, k1)), k2));
      // u >= thr (unsigned) <=> max(u, thr) == u.
      __m256i keep = _mm256_cmpeq_epi32(_mm256_max_epu32(u, thr), u);
      _mm256_storeu_ps(y + i,
                       _mm256_and_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), sv),
                                     _mm256_castsi256_ps(keep)));
      __m256i m = _mm256_and_si256(keep, one);
      __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(m),
                                   _mm256_extracti128_si256(m, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i *>(mask + i),
                       _mm_packus_epi16(w, w));
      idx = _mm256_add_epi32(idx, _mm256_set1_epi32(8));
    }
  }
  for (; i < n; ++i) {
    bool keep = dropoutKeep(s, first + (uint32_t)i);
    mask[i] = keep;
    y[i] = keep ? x[i] * scale : 0.0f;
  }
}

} // namespace avx2
} // namespace simd
} // namespace tidalrt
#endif // TIDALRT_HAVE_X86
