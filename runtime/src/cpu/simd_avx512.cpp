// simd_avx512.cpp - the AVX-512 float32 loops behind simd.h.
//
// Every function here carries TIDALRT_AVX512 (target "avx512f,avx2,fma")
// and uses AVX512F instructions only (no BW/DQ/VL: the float bitwise
// operations go through the integer ones, the byte masks through vpmovdb),
// so cpuHasAvx512() checks avx512f (with avx2 and fma) and nothing more.
//
// The vector math is simd_avx2.cpp's, lane for lane: the same operations
// in the same order, so a lane inside a function's fast range gets the AVX2
// code's bits. Two things differ, both in what the AVX2 code does with a
// whole vector:
//   - a lane outside the fast range is recomputed alone with the scalar
//     libm function (a mask register says which), instead of sending all 16
//     lanes to libm;
//   - the tail of fewer than 16 elements goes through the vector code with
//     masked loads and stores (the masked-off lanes read as 1.0 and are
//     never written), instead of a copy through a buffer or a scalar loop.
// Both keep every element's result independent of its position.
#include "simd_impl.h"

#if TIDALRT_HAVE_X86
// GCC 12 flags the deliberately undefined vectors inside avx512fintrin.h's
// intrinsics (_mm512_undefined_ps and friends) as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstring>

namespace tidalrt {
namespace simd {
namespace avx512 {

using M = __mmask16;

TIDALRT_AVX512 inline __m512 set1(float v) { return _mm512_set1_ps(v); }

// The first n < 16 lanes.
TIDALRT_AVX512 inline M headMask(int64_t n) {
  return (M)((1u << (unsigned)n) - 1u);
}

// Float bitwise operations through the integer ones (the _ps forms are
// AVX512DQ).
TIDALRT_AVX512 inline __m512 andPs(__m512 a, __m512 b) {
  return _mm512_castsi512_ps(
      _mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
TIDALRT_AVX512 inline __m512 orPs(__m512 a, __m512 b) {
  return _mm512_castsi512_ps(
      _mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
TIDALRT_AVX512 inline __m512 xorPs(__m512 a, __m512 b) {
  return _mm512_castsi512_ps(
      _mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}

TIDALRT_AVX512 inline __m512 absV(__m512 x) {
  return _mm512_castsi512_ps(
      _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff)));
}

// The sign bit of `from` on the (non-negative) magnitude `mag`.
TIDALRT_AVX512 inline __m512 copySignV(__m512 mag, __m512 from) {
  return orPs(mag, andPs(set1(-0.0f), from));
}

// The lanes whose sign bit is set (-0 and negative NaNs included).
TIDALRT_AVX512 inline M signMask(__m512 x) {
  return _mm512_cmplt_epi32_mask(_mm512_castps_si512(x),
                                 _mm512_setzero_si512());
}

// A comparison's lanes (a macro: the predicate must be a constant).
#define TIDALRT_CMP(a, b, pred) _mm512_cmp_ps_mask(a, b, pred)

// The slow path: lanes `bad` of y recomputed from x with the scalar `f`.
template <typename F>
TIDALRT_AVX512 __attribute__((noinline)) __m512 fixLanes(__m512 y, __m512 x,
                                                         M bad, F f) {
  alignas(64) float xv[16], yv[16];
  _mm512_store_ps(xv, x);
  _mm512_store_ps(yv, y);
  for (int k = 0; k < 16; ++k)
    if (bad >> k & 1)
      yv[k] = f(xv[k]);
  return _mm512_load_ps(yv);
}
template <typename F>
TIDALRT_AVX512 __attribute__((noinline)) __m512
fixLanes2(__m512 y, __m512 g, __m512 x, M bad, F f) {
  alignas(64) float gv[16], xv[16], yv[16];
  _mm512_store_ps(gv, g);
  _mm512_store_ps(xv, x);
  _mm512_store_ps(yv, y);
  for (int k = 0; k < 16; ++k)
    if (bad >> k & 1)
      yv[k] = f(gv[k], xv[k]);
  return _mm512_load_ps(yv);
}

// exp(x) for |x| <= 87 (normal results, no overflow).
TIDALRT_AVX512 inline __m512 expCore(__m512 x) {
  __m512 n =
      _mm512_roundscale_ps(_mm512_mul_ps(x, set1(1.44269504088896341f)),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, set1(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, set1(-2.12194440e-4f), r);
  __m512 p = set1(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, set1(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, set1(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, set1(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, set1(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, set1(5.0000001201e-1f));
  __m512 r2 = _mm512_mul_ps(r, r);
  __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, r2, r), set1(1.0f));
  __m512i e = _mm512_slli_epi32(
      _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_mul_ps(y, _mm512_castsi512_ps(e));
}

// log(x) for normal, positive, finite x.
TIDALRT_AVX512 inline __m512 logCore(__m512 x) {
  __m512i xi = _mm512_castps_si512(x);
  __m512 e = _mm512_cvtepi32_ps(
      _mm512_sub_epi32(_mm512_srli_epi32(xi, 23), _mm512_set1_epi32(126)));
  // The mantissa in [0.5, 1).
  __m512 m = _mm512_castsi512_ps(
      _mm512_or_si512(_mm512_and_si512(xi, _mm512_set1_epi32(0x007fffff)),
                      _mm512_set1_epi32(0x3f000000)));
  // m < sqrt(1/2): use 2m - 1 and e - 1, else m - 1.
  M small = TIDALRT_CMP(m, set1(0.707106781186547524f), _CMP_LT_OQ);
  __m512 t = _mm512_maskz_mov_ps(small, m);
  m = _mm512_sub_ps(m, set1(1.0f));
  e = _mm512_sub_ps(e, _mm512_maskz_mov_ps(small, set1(1.0f)));
  m = _mm512_add_ps(m, t);
  __m512 z = _mm512_mul_ps(m, m);
  __m512 p = set1(7.0376836292e-2f);
  p = _mm512_fmadd_ps(p, m, set1(-1.1514610310e-1f));
  p = _mm512_fmadd_ps(p, m, set1(1.1676998740e-1f));
  p = _mm512_fmadd_ps(p, m, set1(-1.2420140846e-1f));
  p = _mm512_fmadd_ps(p, m, set1(1.4249322787e-1f));
  p = _mm512_fmadd_ps(p, m, set1(-1.6668057665e-1f));
  p = _mm512_fmadd_ps(p, m, set1(2.0000714765e-1f));
  p = _mm512_fmadd_ps(p, m, set1(-2.4999993993e-1f));
  p = _mm512_fmadd_ps(p, m, set1(3.3333331174e-1f));
  __m512 y = _mm512_mul_ps(_mm512_mul_ps(p, m), z);
  y = _mm512_fmadd_ps(e, set1(-2.12194440e-4f), y);
  y = _mm512_fnmadd_ps(z, set1(0.5f), y);
  __m512 r = _mm512_add_ps(m, y);
  return _mm512_fmadd_ps(e, set1(0.693359375f), r);
}

struct NegV {
  TIDALRT_AVX512 __m512 operator()(__m512 x) const {
    return xorPs(x, set1(-0.0f));
  }
};

struct ReluV {
  // max returns its second operand for NaN and for +-0: x > 0 ? x : 0.
  TIDALRT_AVX512 __m512 operator()(__m512 x) const {
    return _mm512_max_ps(x, _mm512_setzero_ps());
  }
};

struct LeakyReluV {
  __m512 alpha;
  TIDALRT_AVX512 __m512 operator()(__m512 x) const {
    M ge = TIDALRT_CMP(x, _mm512_setzero_ps(), _CMP_GE_OQ);
    return _mm512_mask_blend_ps(ge, _mm512_mul_ps(x, alpha), x);
  }
};

struct SqrtV {
  TIDALRT_AVX512 __m512 operator()(__m512 x) const { return _mm512_sqrt_ps(x); }
};

struct ExpV {
  TIDALRT_AVX512 __m512 operator()(__m512 x) const {
    M bad = ~TIDALRT_CMP(absV(x), set1(87.0f), _CMP_LE_OQ);
    __m512 y = expCore(x);
    return bad ? fixLanes(y, x, bad, expS) : y;
  }
};

struct LogV {
  TIDALRT_AVX512 __m512 operator()(__m512 x) const {
    M ok = TIDALRT_CMP(x, set1(1.17549435e-38f), _CMP_GE_OQ) &
           TIDALRT_CMP(x, set1(3.40282347e38f), _CMP_LE_OQ);
    __m512 y = logCore(x);
    return ok != 0xffff ? fixLanes(y, x, (M)~ok, logS) : y;
  }
};

struct TanhV {
  TIDALRT_AVX512 __m512 operator()(__m512 x) const {
    __m512 a = absV(x);
    M small = TIDALRT_CMP(a, set1(0.625f), _CMP_LT_OQ);
    // |x| < 0.625: x + x^3 P(x^2).
    __m512 s = _mm512_mul_ps(x, x);
    __m512 p = set1(-5.70498872745e-3f);
    p = _mm512_fmadd_ps(p, s, set1(2.06390887954e-2f));
    p = _mm512_fmadd_ps(p, s, set1(-5.37397155531e-2f));
    p = _mm512_fmadd_ps(p, s, set1(1.33314422036e-1f));
    p = _mm512_fmadd_ps(p, s, set1(-3.33332819422e-1f));
    // The sign of x on the result: x^3 P + x rounds -0 to +0.
    __m512 ys =
        orPs(_mm512_fmadd_ps(_mm512_mul_ps(p, s), x, x), andPs(set1(-0.0f), x));
    if (small == 0xffff) // no NaN either
      return ys;
    // Else 1 - 2 / (exp(2|x|) + 1), which rounds to 1 beyond 9.1.
    __m512 e = expCore(_mm512_add_ps(_mm512_min_ps(a, set1(9.1f)),
                                     _mm512_min_ps(a, set1(9.1f))));
    __m512 yl = _mm512_sub_ps(
        set1(1.0f), _mm512_div_ps(set1(2.0f), _mm512_add_ps(e, set1(1.0f))));
    __m512 y = _mm512_mask_blend_ps(small, copySignV(yl, x), ys);
    M nan = TIDALRT_CMP(x, x, _CMP_UNORD_Q);
    return nan ? fixLanes(y, x, nan, tanhS) : y;
  }
};

struct SigmoidV {
  TIDALRT_AVX512 __m512 operator()(__m512 x) const {
    __m512 a = absV(x);
    M bad = ~TIDALRT_CMP(a, set1(87.0f), _CMP_LE_OQ);
    __m512 e = expCore(_mm512_sub_ps(_mm512_setzero_ps(), a));
    __m512 d = _mm512_add_ps(set1(1.0f), e);
    M pos = TIDALRT_CMP(x, _mm512_setzero_ps(), _CMP_GE_OQ);
    __m512 y = _mm512_div_ps(_mm512_mask_blend_ps(pos, e, set1(1.0f)), d);
    return bad ? fixLanes(y, x, bad, sigmoidScalar) : y;
  }
};

// exp(-x^2) for |x| <= 9.3, with the rounding error of x^2 corrected.
TIDALRT_AVX512 inline __m512 expNegSquare(__m512 x) {
  __m512 h = _mm512_mul_ps(x, x);
  __m512 l = _mm512_fmsub_ps(x, x, h); // x^2 = h + l exactly
  __m512 e = expCore(_mm512_sub_ps(_mm512_setzero_ps(), h));
  return _mm512_fnmadd_ps(e, l, e); // e * (1 - l)
}

struct ErfV {
  TIDALRT_AVX512 __m512 operator()(__m512 x) const {
    __m512 a = absV(x);
    M small = TIDALRT_CMP(a, set1(1.0f), _CMP_LT_OQ);
    // |x| < 1: x * P(x^2).
    __m512 z = _mm512_mul_ps(x, x);
    __m512 p = set1(-2.666156433e-05f);
    p = _mm512_fmadd_ps(p, z, set1(-4.821057373e-04f));
    p = _mm512_fmadd_ps(p, z, set1(4.824896809e-03f));
    p = _mm512_fmadd_ps(p, z, set1(-2.666226216e-02f));
    p = _mm512_fmadd_ps(p, z, set1(1.127899811e-01f));
    p = _mm512_fmadd_ps(p, z, set1(-3.761222064e-01f));
    p = _mm512_fmadd_ps(p, z, set1(1.128379107e+00f));
    __m512 ys = _mm512_mul_ps(p, x);
    if (small == 0xffff) // no NaN either
      return ys;
    // |x| >= 1: 1 - exp(-x^2) R(u), u = 1 / (1 + |x|/2) - 1/2.
    a = _mm512_min_ps(a, set1(4.0f));
    __m512 u = _mm512_sub_ps(
        _mm512_div_ps(set1(1.0f), _mm512_fmadd_ps(a, set1(0.5f), set1(1.0f))),
        set1(0.5f));
    __m512 r = set1(-5.948033556e-02f);
    r = _mm512_fmadd_ps(r, u, set1(-2.182082981e-01f));
    r = _mm512_fmadd_ps(r, u, set1(5.996031687e-02f));
    r = _mm512_fmadd_ps(r, u, set1(6.317557693e-01f));
    r = _mm512_fmadd_ps(r, u, set1(9.666302800e-01f));
    r = _mm512_fmadd_ps(r, u, set1(8.543719053e-01f));
    r = _mm512_fmadd_ps(r, u, set1(2.553956807e-01f));
    __m512 yl = _mm512_fnmadd_ps(expNegSquare(a), r, set1(1.0f));
    __m512 y = _mm512_mask_blend_ps(small, copySignV(yl, x), ys);
    M nan = TIDALRT_CMP(x, x, _CMP_UNORD_Q);
    return nan ? fixLanes(y, x, nan, erfS) : y;
  }
};

// The lanes outside gelu's fast range -12.5 <= x <= FLT_MAX (NaN included).
TIDALRT_AVX512 inline M geluSlow(__m512 x) {
  return (M) ~(TIDALRT_CMP(x, set1(-12.5f), _CMP_GE_OQ) &
               TIDALRT_CMP(x, set1(3.40282347e38f), _CMP_LE_OQ));
}

// For 0 <= a <= 12.5: e = exp(-a^2/2) and r = Phi(-a) / e =
// erfcx(a / sqrt(2)) / 2 (see simd_avx2.cpp's file comment).
TIDALRT_AVX512 inline void geluParts(__m512 a, __m512 &e, __m512 &r) {
  __m512 h = _mm512_mul_ps(a, a);
  __m512 l = _mm512_fmsub_ps(a, a, h); // a^2 = h + l exactly
  __m512 eh = expCore(_mm512_mul_ps(h, set1(-0.5f)));
  e = _mm512_fnmadd_ps(eh, _mm512_mul_ps(l, set1(0.5f)), eh); // eh (1 - l/2)
  const __m512 k = set1(4.24264049530029296875f);
  __m512 s = _mm512_div_ps(_mm512_add_ps(a, a), _mm512_add_ps(a, k));
  __m512 q = _mm512_sub_ps(s, set1(1.0f));
  __m512 p = set1(-1.469210692e-04f);
  p = _mm512_fmadd_ps(p, q, set1(-2.771690197e-04f));
  p = _mm512_fmadd_ps(p, q, set1(1.252057729e-03f));
  p = _mm512_fmadd_ps(p, q, set1(3.872242814e-05f));
  p = _mm512_fmadd_ps(p, q, set1(-1.192333549e-02f));
  p = _mm512_fmadd_ps(p, q, set1(4.607304558e-02f));
  p = _mm512_fmadd_ps(p, q, set1(-1.057107002e-01f));
  p = _mm512_fmadd_ps(p, q, set1(1.705334783e-01f));
  p = _mm512_fmadd_ps(p, q, set1(-1.943145692e-01f));
  p = _mm512_fmadd_ps(p, q, set1(1.265040189e-01f));
  p = _mm512_fmadd_ps(p, s, set1(0.5f));
  r = _mm512_div_ps(
      p, _mm512_fmadd_ps(a, set1(1.41421353816986083984375f), set1(1.0f)));
}

struct GeluV {
  TIDALRT_AVX512 __m512 operator()(__m512 x) const {
    __m512 e, r;
    geluParts(_mm512_min_ps(absV(x), set1(12.5f)), e, r);
    __m512 c = _mm512_mul_ps(e, r); // Phi(-|x|)
    // Sign bit set (-0 included): x * c, else x - x * c.
    __m512 y = _mm512_mask_blend_ps(signMask(x), _mm512_fnmadd_ps(x, c, x),
                                    _mm512_mul_ps(x, c));
    M bad = geluSlow(x);
    return bad ? fixLanes(y, x, bad, geluScalar) : y;
  }
};

// y[i] = op(x[i]); the tail through the same vector code with masked loads
// (the other lanes read 1.0) and stores.
template <typename Op>
TIDALRT_AVX512 void map(const float *x, float *y, int64_t n, const Op &op) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, op(_mm512_loadu_ps(x + i)));
  if (i < n) {
    M m = headMask(n - i);
    _mm512_mask_storeu_ps(y + i, m,
                          op(_mm512_mask_loadu_ps(set1(1.0f), m, x + i)));
  }
}

TIDALRT_AVX512 void unaryF32(Unary op, const float *x, float *y, int64_t n,
                             float alpha) {
  switch (op) {
  case Unary::Neg:
    return map(x, y, n, NegV());
  case Unary::Relu:
    return map(x, y, n, ReluV());
  case Unary::Sigmoid:
    return map(x, y, n, SigmoidV());
  case Unary::Tanh:
    return map(x, y, n, TanhV());
  case Unary::Sqrt:
    return map(x, y, n, SqrtV());
  case Unary::Erf:
    return map(x, y, n, ErfV());
  case Unary::Exp:
    return map(x, y, n, ExpV());
  case Unary::Log:
    return map(x, y, n, LogV());
  case Unary::LeakyRelu:
    return map(x, y, n, LeakyReluV{set1(alpha)});
  case Unary::Gelu:
    return map(x, y, n, GeluV());
  }
}

struct AddV {
  TIDALRT_AVX512 __m512 operator()(__m512 a, __m512 b) const {
    return _mm512_add_ps(a, b);
  }
};
struct SubV {
  TIDALRT_AVX512 __m512 operator()(__m512 a, __m512 b) const {
    return _mm512_sub_ps(a, b);
  }
};
struct MulV {
  TIDALRT_AVX512 __m512 operator()(__m512 a, __m512 b) const {
    return _mm512_mul_ps(a, b);
  }
};
struct DivV {
  TIDALRT_AVX512 __m512 operator()(__m512 a, __m512 b) const {
    return _mm512_div_ps(a, b);
  }
};

// A contiguous operand or a broadcast scalar (stride 0).
struct Operand {
  const float *p;
  bool contiguous;
  __m512 broadcast;
  TIDALRT_AVX512 __m512 load(int64_t i) const {
    return contiguous ? _mm512_loadu_ps(p + i) : broadcast;
  }
  TIDALRT_AVX512 __m512 loadHead(int64_t i, M m) const {
    return contiguous ? _mm512_mask_loadu_ps(set1(1.0f), m, p + i) : broadcast;
  }
};

template <typename Op, bool A, bool B>
TIDALRT_AVX512 inline void zipLoop(Operand a, Operand b, float *y, int64_t n,
                                   const Op &op) {
  a.contiguous = A;
  b.contiguous = B;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 r0 = op(a.load(i), b.load(i));
    __m512 r1 = op(a.load(i + 16), b.load(i + 16));
    _mm512_storeu_ps(y + i, r0);
    _mm512_storeu_ps(y + i + 16, r1);
  }
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, op(a.load(i), b.load(i)));
  if (i < n) {
    M m = headMask(n - i);
    _mm512_mask_storeu_ps(y + i, m, op(a.loadHead(i, m), b.loadHead(i, m)));
  }
}

template <typename Op>
TIDALRT_AVX512 void zip(const float *a, int64_t as, const float *b, int64_t bs,
                        float *y, int64_t n, const Op &op) {
  Operand av{a, as == 1, as == 1 ? set1(1.0f) : _mm512_set1_ps(a[0])};
  Operand bv{b, bs == 1, bs == 1 ? set1(1.0f) : _mm512_set1_ps(b[0])};
  if (as == 1 && bs == 1)
    return zipLoop<Op, true, true>(av, bv, y, n, op);
  if (as == 1)
    return zipLoop<Op, true, false>(av, bv, y, n, op);
  if (bs == 1)
    return zipLoop<Op, false, true>(av, bv, y, n, op);
  __m512 v = op(av.broadcast, bv.broadcast);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, v);
  if (i < n)
    _mm512_mask_storeu_ps(y + i, headMask(n - i), v);
}

TIDALRT_AVX512 void binaryF32(Binary op, const float *a, int64_t as,
                              const float *b, int64_t bs, float *y, int64_t n) {
  switch (op) {
  case Binary::Add:
    return zip(a, as, b, bs, y, n, AddV());
  case Binary::Sub:
    return zip(a, as, b, bs, y, n, SubV());
  case Binary::Mul:
    return zip(a, as, b, bs, y, n, MulV());
  case Binary::Div:
    return zip(a, as, b, bs, y, n, DivV());
  }
}

struct ReluGradV {
  TIDALRT_AVX512 __m512 operator()(__m512 g, __m512 y) const {
    return _mm512_maskz_mov_ps(TIDALRT_CMP(y, _mm512_setzero_ps(), _CMP_GT_OQ),
                               g);
  }
};
struct LeakyReluGradV {
  __m512 alpha;
  TIDALRT_AVX512 __m512 operator()(__m512 g, __m512 x) const {
    M gt = TIDALRT_CMP(x, _mm512_setzero_ps(), _CMP_GT_OQ);
    return _mm512_mask_blend_ps(gt, _mm512_mul_ps(g, alpha), g);
  }
};
struct SigmoidGradV {
  TIDALRT_AVX512 __m512 operator()(__m512 g, __m512 y) const {
    return _mm512_mul_ps(_mm512_mul_ps(g, y), _mm512_sub_ps(set1(1.0f), y));
  }
};
struct TanhGradV {
  TIDALRT_AVX512 __m512 operator()(__m512 g, __m512 y) const {
    return _mm512_mul_ps(g, _mm512_fnmadd_ps(y, y, set1(1.0f)));
  }
};
struct ErfGradV {
  TIDALRT_AVX512 __m512 operator()(__m512 g, __m512 x) const {
    M bad = ~TIDALRT_CMP(absV(x), set1(9.3f), _CMP_LE_OQ);
    __m512 y = _mm512_mul_ps(
        g, _mm512_mul_ps(expNegSquare(x), set1((float)kTwoOverSqrtPi)));
    return bad ? fixLanes2(y, g, x, bad, erfBackwardScalar) : y;
  }
};

struct GeluGradV {
  TIDALRT_AVX512 __m512 operator()(__m512 g, __m512 x) const {
    __m512 xc = _mm512_min_ps(x, set1(12.5f));
    __m512 e, r;
    geluParts(absV(xc), e, r);
    // [x >= 0] + e * (x / sqrt(2 pi) - copysign(r, x)).
    __m512 t = _mm512_fmsub_ps(xc, set1((float)kInvSqrt2Pi), copySignV(r, x));
    __m512 base =
        _mm512_mask_blend_ps(signMask(x), set1(1.0f), _mm512_setzero_ps());
    __m512 y = _mm512_mul_ps(g, _mm512_fmadd_ps(e, t, base));
    M bad = geluSlow(x);
    return bad ? fixLanes2(y, g, x, bad, geluBackwardScalar) : y;
  }
};

TIDALRT_AVX512 void gradF32(Grad op, const float *g, const float *s, float *y,
                            int64_t n, float alpha) {
  switch (op) {
  case Grad::Relu:
    return zip(g, 1, s, 1, y, n, ReluGradV());
  case Grad::LeakyRelu:
    return zip(g, 1, s, 1, y, n, LeakyReluGradV{set1(alpha)});
  case Grad::Sigmoid:
    return zip(g, 1, s, 1, y, n, SigmoidGradV());
  case Grad::Tanh:
    return zip(g, 1, s, 1, y, n, TanhGradV());
  case Grad::Erf:
    return zip(g, 1, s, 1, y, n, ErfGradV());
  case Grad::Gelu:
    return zip(g, 1, s, 1, y, n, GeluGradV());
  }
}

TIDALRT_AVX512 void maskScaleF32(const float *x, const uint8_t *mask,
                                 float scale, float *y, int64_t n) {
  __m512 sv = set1(scale);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i m = _mm512_cvtepu8_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(mask + i)));
    _mm512_storeu_ps(y + i, _mm512_maskz_mul_ps(_mm512_test_epi32_mask(m, m),
                                                _mm512_loadu_ps(x + i), sv));
  }
  if (i < n) {
    // Byte-masked loads are AVX512BW: copy the last mask bytes.
    alignas(16) uint8_t mb[16] = {};
    memcpy(mb, mask + i, (size_t)(n - i));
    __m512i m =
        _mm512_cvtepu8_epi32(_mm_load_si128(reinterpret_cast<__m128i *>(mb)));
    M h = headMask(n - i);
    _mm512_mask_storeu_ps(y + i, h,
                          _mm512_maskz_mul_ps(_mm512_test_epi32_mask(m, m),
                                              _mm512_maskz_loadu_ps(h, x + i),
                                              sv));
  }
}

// Four accumulators of 8 double lanes; masked-off lanes keep their value.
TIDALRT_AVX512 double sumF32(const float *x, int64_t n) {
  __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm256_loadu_ps(x + i)));
    a1 = _mm512_add_pd(a1, _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8)));
    a2 = _mm512_add_pd(a2, _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 16)));
    a3 = _mm512_add_pd(a3, _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 24)));
  }
  for (; i + 8 <= n; i += 8)
    a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm256_loadu_ps(x + i)));
  if (i < n) {
    M m = headMask(n - i);
    __m256 v = _mm512_castps512_ps256(_mm512_maskz_loadu_ps(m, x + i));
    a1 = _mm512_mask_add_pd(a1, (__mmask8)m, a1, _mm512_cvtps_pd(v));
  }
  __m512d s = _mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3));
  alignas(64) double v[8];
  _mm512_store_pd(v, s);
  return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

// The upper 8 floats of v.
TIDALRT_AVX512 inline __m256 upper8(__m512 v) {
  return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

TIDALRT_AVX512 void accumulateF32(const float *x, double *acc, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 v = _mm512_loadu_ps(x + i);
    _mm512_storeu_pd(acc + i,
                     _mm512_add_pd(_mm512_loadu_pd(acc + i),
                                   _mm512_cvtps_pd(_mm512_castps512_ps256(v))));
    _mm512_storeu_pd(acc + i + 8, _mm512_add_pd(_mm512_loadu_pd(acc + i + 8),
                                                _mm512_cvtps_pd(upper8(v))));
  }
  if (i < n) {
    M m = headMask(n - i);
    __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    __mmask8 lo = (__mmask8)m, hi = (__mmask8)(m >> 8);
    _mm512_mask_storeu_pd(
        acc + i, lo,
        _mm512_add_pd(_mm512_maskz_loadu_pd(lo, acc + i),
                      _mm512_cvtps_pd(_mm512_castps512_ps256(v))));
    _mm512_mask_storeu_pd(acc + i + 8, hi,
                          _mm512_add_pd(_mm512_maskz_loadu_pd(hi, acc + i + 8),
                                        _mm512_cvtps_pd(upper8(v))));
  }
}

// Eight floats of row r from i (the first `m` of them, the rest 0).
TIDALRT_AVX512 inline __m512d load8(const float *r, int64_t i, M m) {
  return _mm512_cvtps_pd(
      _mm512_castps512_ps256(_mm512_maskz_loadu_ps(m, r + i)));
}

TIDALRT_AVX512 void accumulate4F32(const float *const *rows, double *acc,
                                   int64_t n) {
  const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m512d a = _mm512_add_pd(_mm512_cvtps_pd(_mm256_loadu_ps(r0 + i)),
                              _mm512_cvtps_pd(_mm256_loadu_ps(r1 + i)));
    __m512d b = _mm512_add_pd(_mm512_cvtps_pd(_mm256_loadu_ps(r2 + i)),
                              _mm512_cvtps_pd(_mm256_loadu_ps(r3 + i)));
    _mm512_storeu_pd(
        acc + i, _mm512_add_pd(_mm512_loadu_pd(acc + i), _mm512_add_pd(a, b)));
  }
  if (i < n) {
    M m = headMask(n - i);
    __mmask8 m8 = (__mmask8)m;
    __m512d a = _mm512_add_pd(load8(r0, i, m), load8(r1, i, m));
    __m512d b = _mm512_add_pd(load8(r2, i, m), load8(r3, i, m));
    _mm512_mask_storeu_pd(
        acc + i, m8,
        _mm512_add_pd(_mm512_maskz_loadu_pd(m8, acc + i), _mm512_add_pd(a, b)));
  }
}

TIDALRT_AVX512 inline __m512i lowbias32V(__m512i x) {
  x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 16));
  x = _mm512_mullo_epi32(x, _mm512_set1_epi32(0x7feb352d));
  x = _mm512_xor_si512(x, _mm512_srli_epi32(x, 15));
  x = _mm512_mullo_epi32(x, _mm512_set1_epi32((int)0x846ca68bu));
  return _mm512_xor_si512(x, _mm512_srli_epi32(x, 16));
}

TIDALRT_AVX512 void dropoutF32(const DropoutStream &s, uint32_t first,
                               const float *x, float *y, uint8_t *mask,
                               int64_t n, float scale) {
  if (s.threshold > 0xffffffffu) // drops everything
    return scalar::dropoutF32(s, first, x, y, mask, n, scale);
  const __m512i k1 = _mm512_set1_epi32((int)s.k1);
  const __m512i k2 = _mm512_set1_epi32((int)s.k2);
  const __m512i thr = _mm512_set1_epi32((int)(uint32_t)s.threshold);
  const __m512i one = _mm512_set1_epi32(1);
  const __m512 sv = set1(scale);
  __m512i idx = _mm512_add_epi32(
      _mm512_set1_epi32((int)first),
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  for (int64_t i = 0; i < n; i += 16) {
    M h = n - i >= 16 ? (M)0xffff : headMask(n - i);
    __m512i u =
        lowbias32V(_mm512_xor_si512(lowbias32V(_mm512_add_epi32(idx, k1)), k2));
    M keep = _mm512_cmpge_epu32_mask(u, thr);
    _mm512_mask_storeu_ps(
        y + i, h,
        _mm512_maskz_mul_ps(keep, _mm512_maskz_loadu_ps(h, x + i), sv));
    _mm512_mask_cvtepi32_storeu_epi8(mask + i, h,
                                     _mm512_maskz_mov_epi32(keep, one));
    idx = _mm512_add_epi32(idx, _mm512_set1_epi32(16));
  }
}

#undef TIDALRT_CMP

} // namespace avx512
} // namespace simd
} // namespace tidalrt
#endif // TIDALRT_HAVE_X86
