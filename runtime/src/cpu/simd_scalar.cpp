// simd_scalar.cpp - the scalar loops behind simd.h: the reference that the
// vector variants are tested against, and the fallback on CPUs without them
// (or with TIDAL_CPU_ISA=scalar).
#include "simd_impl.h"

#include <cmath>

namespace tidalrt {
namespace simd {

float sigmoidScalar(float x) {
  if (x >= 0.0f)
    return 1.0f / (1.0f + std::exp(-x));
  float e = std::exp(x);
  return e / (1.0f + e);
}

float erfBackwardScalar(float g, float x) {
  double xd = x;
  return (float)((double)g * kTwoOverSqrtPi * std::exp(-xd * xd));
}

float geluScalar(float x) {
  if (std::isinf(x)) // -inf * Phi(-inf) is -inf * 0
    return x > 0.0f ? x : -0.0f;
  double xd = x;
  return (float)(0.5 * xd * std::erfc(-xd * kSqrtHalf));
}

float geluBackwardScalar(float g, float x) {
  double xd = x, d;
  if (std::isinf(xd))
    d = xd > 0.0 ? 1.0 : 0.0;
  else // x^2 is exact in double
    d = 0.5 * std::erfc(-xd * kSqrtHalf) +
        xd * kInvSqrt2Pi * std::exp(-0.5 * (xd * xd));
  return (float)((double)g * d);
}

namespace scalar {

template <typename F> void mapScalar(const float *x, float *y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = f(x[i]);
}

void unaryF32(Unary op, const float *x, float *y, int64_t n, float alpha) {
  switch (op) {
  case Unary::Neg:
    return mapScalar(x, y, n, negS);
  case Unary::Relu:
    return mapScalar(x, y, n, reluS);
  case Unary::Sigmoid:
    return mapScalar(x, y, n, sigmoidScalar);
  case Unary::Tanh:
    return mapScalar(x, y, n, tanhS);
  case Unary::Sqrt:
    return mapScalar(x, y, n, sqrtS);
  case Unary::Erf:
    return mapScalar(x, y, n, erfS);
  case Unary::Exp:
    return mapScalar(x, y, n, expS);
  case Unary::Log:
    return mapScalar(x, y, n, logS);
  case Unary::LeakyRelu:
    return mapScalar(x, y, n,
                     [alpha](float v) { return v >= 0.0f ? v : alpha * v; });
  case Unary::Gelu:
    return mapScalar(x, y, n, geluScalar);
  }
}

template <typename F>
void zipScalar(const float *a, int64_t as, const float *b, int64_t bs, float *y,
               int64_t n, F f) {
  if (as == 1 && bs == 1) {
    for (int64_t i = 0; i < n; ++i)
      y[i] = f(a[i], b[i]);
  } else if (as == 1) {
    float bv = b[0];
    for (int64_t i = 0; i < n; ++i)
      y[i] = f(a[i], bv);
  } else if (bs == 1) {
    float av = a[0];
    for (int64_t i = 0; i < n; ++i)
      y[i] = f(av, b[i]);
  } else {
    float v = f(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i)
      y[i] = v;
  }
}

void binaryF32(Binary op, const float *a, int64_t as, const float *b,
               int64_t bs, float *y, int64_t n) {
  switch (op) {
  case Binary::Add:
    return zipScalar(a, as, b, bs, y, n,
                     [](float u, float v) { return u + v; });
  case Binary::Sub:
    return zipScalar(a, as, b, bs, y, n,
                     [](float u, float v) { return u - v; });
  case Binary::Mul:
    return zipScalar(a, as, b, bs, y, n,
                     [](float u, float v) { return u * v; });
  case Binary::Div:
    return zipScalar(a, as, b, bs, y, n,
                     [](float u, float v) { return u / v; });
  }
}

void gradF32(Grad op, const float *g, const float *s, float *y, int64_t n,
             float alpha) {
  switch (op) {
  case Grad::Relu:
    for (int64_t i = 0; i < n; ++i)
      y[i] = s[i] > 0.0f ? g[i] : 0.0f;
    return;
  case Grad::LeakyRelu:
    for (int64_t i = 0; i < n; ++i)
      y[i] = s[i] > 0.0f ? g[i] : alpha * g[i];
    return;
  case Grad::Sigmoid:
    for (int64_t i = 0; i < n; ++i)
      y[i] = g[i] * s[i] * (1.0f - s[i]);
    return;
  case Grad::Tanh:
    for (int64_t i = 0; i < n; ++i)
      y[i] = g[i] * (1.0f - s[i] * s[i]);
    return;
  case Grad::Erf:
    for (int64_t i = 0; i < n; ++i)
      y[i] = erfBackwardScalar(g[i], s[i]);
    return;
  case Grad::Gelu:
    for (int64_t i = 0; i < n; ++i)
      y[i] = geluBackwardScalar(g[i], s[i]);
    return;
  }
}

void maskScaleF32(const float *x, const uint8_t *mask, float scale, float *y,
                  int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = mask[i] ? x[i] * scale : 0.0f;
}

double sumF32(const float *x, int64_t n) {
  // Four interleaved accumulators, as the vector code has lanes.
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += x[i];
    s1 += x[i + 1];
    s2 += x[i + 2];
    s3 += x[i + 3];
  }
  double sum = (s0 + s1) + (s2 + s3);
  for (; i < n; ++i)
    sum += x[i];
  return sum;
}

void accumulateF32(const float *x, double *acc, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    acc[i] += x[i];
}

void accumulate4F32(const float *const *rows, double *acc, int64_t n) {
  const float *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
  for (int64_t i = 0; i < n; ++i)
    acc[i] += ((double)r0[i] + (double)r1[i]) + ((double)r2[i] + (double)r3[i]);
}

void dropoutF32(const DropoutStream &s, uint32_t first, const float *x,
                float *y, uint8_t *mask, int64_t n, float scale) {
  for (int64_t i = 0; i < n; ++i) {
    bool keep = dropoutKeep(s, first + (uint32_t)i);
    mask[i] = keep;
    y[i] = keep ? x[i] * scale : 0.0f;
  }
}

} // namespace scalar
} // namespace simd
} // namespace tidalrt
