// batch_norm_loops.cpp - the loops of the batch-norm kernels: per-channel
// sums in double and the element-wise parts (batch_norm_loops.h).
//
// Each loop has a scalar body written once (always_inline) and two
// instantiations, a baseline one and an AVX2 one (target attribute) that the
// compiler vectorizes; the long-run sums have explicit AVX2 code. This file
// is compiled without floating-point contraction, so both round alike.
#include "batch_norm_loops.h"

#include "simd.h"

#include "tidalrt/tidalrt.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#define TIDALRT_BN_X86 1
#define TIDALRT_AVX2 __attribute__((target("avx2,fma")))
#include <immintrin.h>
#else
#define TIDALRT_BN_X86 0
#endif

using namespace tidalrt;
using namespace tidalrt::bn;
using tidalrt::dnnlutil::Channels;

namespace {

// Elements of one channel group per partial sum. Fixed: it decides the
// summation order. A multiple of 16, so blocked pieces start on a block.
constexpr int64_t kPiece = 16384;
// Partial-sum lanes: element j of a run segment (segments start on a
// channel block) adds into lane j % kLanes, so lane l holds channel l % B
// of a blocked tensor.
constexpr int kLanes = 16;

int64_t piecesOf(const Runs &r) { return (r.perGroup() + kPiece - 1) / kPiece; }

// What a reduction pass sums per lane, in double, with d = x - m (m: the
// lane's channel's shift or mean):
enum class Sum {
  Moments,  // a += d; b += d * d
  Backward, // a += dy; b += d * dy
};

// Element `at`'s terms added to a and b: x[at] with mean (or shift) m,
// and dy[at] (Backward only; dy is null otherwise). Every scalar summing
// loop below goes through it.
template <Sum K>
__attribute__((always_inline)) inline void
addTerms(const float *x, const float *dy, int64_t at, double m, double &a,
         double &b) {
  double d = (double)x[at] - m;
  if (K == Sum::Moments) {
    a += d;
    b += d * d;
  } else {
    double g = dy[at];
    a += g;
    b += d * g;
  }
}

// Adds element j in [0, len) into lane j % kLanes of a and b, in order of
// j. The scalar reference of the AVX2 loop below, which adds in the same
// order.
template <Sum K>
void accumulateScalar(const float *x, const float *dy, int64_t len,
                      const double *m, double *a, double *b) {
  for (int64_t j = 0; j < len; ++j) {
    int l = (int)(j % kLanes);
    addTerms<K>(x, dy, j, m[l], a[l], b[l]);
  }
}

#if TIDALRT_BN_X86
// Lanes 4q .. 4q + 3 are register q: a multiply and an add per element
// (no FMA), as the scalar loop rounds.
template <Sum K>
TIDALRT_AVX2 void accumulateAvx2(const float *x, const float *dy, int64_t len,
                                 const double *m, double *a, double *b) {
  __m256d acc[4], acc2[4], mean[4];
  for (int q = 0; q < 4; ++q) {
    acc[q] = _mm256_loadu_pd(a + 4 * q);
    acc2[q] = _mm256_loadu_pd(b + 4 * q);
    mean[q] = _mm256_loadu_pd(m + 4 * q);
  }
  int64_t full = len - len % kLanes, j = 0;
  for (; j < full; j += kLanes) {
    for (int h = 0; h < 2; ++h) {
      __m256 v8 = _mm256_loadu_ps(x + j + 8 * h);
      __m256d v[2] = {_mm256_cvtps_pd(_mm256_castps256_ps128(v8)),
                      _mm256_cvtps_pd(_mm256_extractf128_ps(v8, 1))};
      __m256d g[2];
      if (K == Sum::Backward) {
        __m256 g8 = _mm256_loadu_ps(dy + j + 8 * h);
        g[0] = _mm256_cvtps_pd(_mm256_castps256_ps128(g8));
        g[1] = _mm256_cvtps_pd(_mm256_extractf128_ps(g8, 1));
      }
      for (int k = 0; k < 2; ++k) {
        int q = 2 * h + k;
        __m256d d = _mm256_sub_pd(v[k], mean[q]);
        if (K == Sum::Moments) {
          acc[q] = _mm256_add_pd(acc[q], d);
          acc2[q] = _mm256_add_pd(acc2[q], _mm256_mul_pd(d, d));
        } else {
          acc[q] = _mm256_add_pd(acc[q], g[k]);
          acc2[q] = _mm256_add_pd(acc2[q], _mm256_mul_pd(d, g[k]));
        }
      }
    }
  }
  for (int q = 0; q < 4; ++q) {
    _mm256_storeu_pd(a + 4 * q, acc[q]);
    _mm256_storeu_pd(b + 4 * q, acc2[q]);
  }
  // The tail starts at lane 0 (full is a multiple of kLanes).
  accumulateScalar<K>(x + full, dy ? dy + full : nullptr, len - full, m, a, b);
}
#endif

// Whether the AVX2 loops run: simd::activeIsa() (TIDAL_CPU_ISA included),
// read once per call so that tests can compare the paths. Both give the
// same bits (and nothing in this file is contracted: -ffp-contract=off).
bool haveAvx2() {
#if TIDALRT_BN_X86
  return simd::activeIsa() != simd::Isa::Scalar;
#else
  return false;
#endif
}

// One piece [begin, end) of group g's N * R elements into lanes a (and b),
// zeroed first.
template <Sum K>
void sumPiece(bool avx2, const Runs &r, const float *x, const float *dy,
              int64_t g, int64_t begin, int64_t end, const double *m, double *a,
              double *b) {
  (void)avx2;
  for (int l = 0; l < kLanes; ++l)
    a[l] = b[l] = 0.0;
  while (begin < end) {
    int64_t n = begin / r.run, off = begin % r.run;
    int64_t len = std::min(end - begin, r.run - off);
    int64_t at = (n * r.groups + g) * r.run + off;
    const float *d = dy ? dy + at : nullptr;
    // Element j of the segment into lane j % kLanes: segments start on a
    // channel block, so lane l keeps channel l % B.
#if TIDALRT_BN_X86
    if (avx2)
      accumulateAvx2<K>(x + at, d, len, m, a, b);
    else
#endif
      accumulateScalar<K>(x + at, d, len, m, a, b);
    begin += len;
  }
}

// The scratch doubles of channelSums' partial sums.

// Runs shorter than this (small spatial sizes: the last stages of a CNN)
// take the short-run loops below, which sum each channel with one
// accumulator in (n, spatial) order and vectorize across the channels of a
// block instead of along a run. Which loops run is fixed by the shape.
constexpr int64_t kShortRun = 256;

// Short runs: channel groups [g0, g1) into a and b (per channel, zeroed).
// One element per channel and image (spatial size 1: BatchNorm1d, a
// classifier head): image n's channels [c0, c1) are contiguous at n * C.
// Each channel still adds its images in order, as shortSums does.
template <Sum K>
__attribute__((always_inline)) inline void
pointSums(const Runs &r, const float *x, const float *dy, const double *m,
          double *a, double *b, int64_t c0, int64_t c1) {
  int64_t c = r.groups * r.block;
  for (int64_t ch = c0; ch < c1; ++ch)
    a[ch] = b[ch] = 0.0;
  for (int64_t n = 0; n < r.n; ++n)
    for (int64_t ch = c0; ch < c1; ++ch)
      addTerms<K>(x, dy, n * c + ch, m[ch], a[ch], b[ch]);
}

template <int B, Sum K>
__attribute__((always_inline)) inline void
shortSums(const Runs &r, const float *x, const float *dy, const double *m,
          double *a, double *b, int64_t g0, int64_t g1) {
  if (r.run == B)
    return pointSums<K>(r, x, dy, m, a, b, g0 * B, g1 * B);
  int64_t s = r.run / B;
  for (int64_t g = g0; g < g1; ++g) {
    double acc[B], acc2[B], mean[B];
    for (int l = 0; l < B; ++l) {
      acc[l] = acc2[l] = 0.0;
      mean[l] = m[g * B + l];
    }
    for (int64_t n = 0; n < r.n; ++n) {
      int64_t base = (n * r.groups + g) * r.run;
      for (int64_t i = 0; i < s; ++i)
        for (int l = 0; l < B; ++l) {
          addTerms<K>(x, dy, base + i * B + l, mean[l], acc[l], acc2[l]);
        }
    }
    for (int l = 0; l < B; ++l) {
      a[g * B + l] = acc[l];
      b[g * B + l] = acc2[l];
    }
  }
}

template <Sum K>
void shortSumsDefault(const Runs &r, const float *x, const float *dy,
                      const double *m, double *a, double *b, int64_t g0,
                      int64_t g1) {
  if (r.block == 16)
    shortSums<16, K>(r, x, dy, m, a, b, g0, g1);
  else if (r.block == 8)
    shortSums<8, K>(r, x, dy, m, a, b, g0, g1);
  else
    shortSums<1, K>(r, x, dy, m, a, b, g0, g1);
}

#if TIDALRT_BN_X86
template <Sum K>
TIDALRT_AVX2 void shortSumsAvx2(const Runs &r, const float *x, const float *dy,
                                const double *m, double *a, double *b,
                                int64_t g0, int64_t g1) {
  if (r.block == 16)
    shortSums<16, K>(r, x, dy, m, a, b, g0, g1);
  else if (r.block == 8)
    shortSums<8, K>(r, x, dy, m, a, b, g0, g1);
  else
    shortSums<1, K>(r, x, dy, m, a, b, g0, g1);
}
#endif

template <Sum K>
void shortSumsAny(bool avx2, const Runs &r, const float *x, const float *dy,
                  const double *m, double *a, double *b, int64_t g0,
                  int64_t g1) {
  (void)avx2;
#if TIDALRT_BN_X86
  if (avx2)
    return shortSumsAvx2<K>(r, x, dy, m, a, b, g0, g1);
#endif
  shortSumsDefault<K>(r, x, dy, m, a, b, g0, g1);
}

// Per-channel sums over the whole batch: out[c] and out2[c] for every
// channel, each the piece partials added in piece order, then the lanes of
// the channel in lane order. `mean`: the shift (Moments) or mean
// (Backward) per channel.
// `partials`: scratch of partialDoubles(r) doubles.
template <Sum K>
void channelSums(const Runs &r, const float *x, const float *dy,
                 const double *mean, double *partials, double *out,
                 double *out2) {
  bool parallel = r.groups * r.perGroup() >= parallelGrain();
  bool avx2 = haveAvx2();
  if (r.run < kShortRun) {
    // Each channel on one thread, whole: any split of the groups (here 64
    // channels per task).
    int64_t per = std::max<int64_t>(1, 64 / r.block);
    int64_t tasks = (r.groups + per - 1) / per;
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t t = 0; t < tasks; ++t)
      shortSumsAny<K>(avx2, r, x, dy, mean, out, out2, t * per,
                      std::min(r.groups, (t + 1) * per));
    return;
  }
  int64_t pieces = piecesOf(r), tasks = r.groups * pieces;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t t = 0; t < tasks; ++t) {
    int64_t g = t / pieces, p = t % pieces;
    double m[kLanes];
    for (int l = 0; l < kLanes; ++l)
      m[l] = mean[g * r.block + l % r.block];
    double *a = partials + (size_t)t * kLanes * 2, *b = a + kLanes;
    int64_t begin = p * kPiece, end = std::min(begin + kPiece, r.perGroup());
    sumPiece<K>(avx2, r, x, dy, g, begin, end, m, a, b);
  }
  for (int64_t g = 0; g < r.groups; ++g) {
    double a[kLanes] = {}, b[kLanes] = {};
    for (int64_t p = 0; p < pieces; ++p) {
      const double *pa = partials + (size_t)(g * pieces + p) * kLanes * 2;
      for (int l = 0; l < kLanes; ++l) {
        a[l] += pa[l];
        b[l] += pa[kLanes + l];
      }
    }
    for (int c = 0; c < r.block; ++c) {
      double sa = 0.0, sb = 0.0;
      for (int l = c; l < kLanes; l += r.block) {
        sa += a[l];
        sb += b[l];
      }
      out[g * r.block + c] = sa;
      out2[g * r.block + c] = sb;
    }
  }
}

// Runs f(at, len, g) over every run segment of the tensor (g: its channel
// group) in element-wise chunks (any split: the result does not depend on
// it).
template <typename F> void forEachSegment(const Runs &r, F &&f) {
  int64_t total = r.n * r.groups * r.run;
  if (total <= 0)
    return;
  constexpr int64_t kChunk = 16384; // a multiple of 16
  int64_t chunks = (total + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (total >= parallelGrain())
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t at = c * kChunk, end = std::min(at + kChunk, total);
    while (at < end) {
      int64_t runIndex = at / r.run, off = at % r.run;
      int64_t len = std::min(end - at, r.run - off);
      f(at, len, runIndex % r.groups);
      at += len;
    }
  }
}

// The element-wise parts over one segment of a channel group, channel j % B
// of the group at element j (B = 1: one channel). Per-channel coefficients
// in float.
//   forward:  y = x * alpha + beta, then the epilogue E: none, max(y, 0)
//             (relu's formula: NaN -> 0), or min(max(y, lo), hi) (clip's:
//             NaN kept)
//   backward: dx = (dy - gm - (x - mean) * k) * w
enum Mode : int { Affine, AffineRelu, AffineClip, Backward };

template <int E>
__attribute__((always_inline)) inline float epilogue(float v, float lo,
                                                     float hi) {
  if (E == AffineRelu)
    return v > 0.0f ? v : 0.0f;
  if (E == AffineClip) {
    float t = lo > v ? lo : v; // max(v, lo), NaN kept
    return hi < t ? hi : t;    // min(t, hi)
  }
  return v;
}

// The coefficients are copied into locals first: the compiler may then keep
// them in registers (they cannot alias the output).
template <int B, int E>
__attribute__((always_inline)) inline void
affineLoop(const float *x, float *y, int64_t len, const Coefficients &c) {
  float alpha[B], beta[B], lo = c.lo, hi = c.hi;
  for (int l = 0; l < B; ++l) {
    alpha[l] = c.alpha[l];
    beta[l] = c.beta[l];
  }
  for (int64_t j = 0; j < len; j += B)
    for (int l = 0; l < B; ++l)
      y[j + l] = epilogue<E>(x[j + l] * alpha[l] + beta[l], lo, hi);
}

template <int B>
__attribute__((always_inline)) inline void
backwardLoop(const float *dy, const float *x, float *dx, int64_t len,
             const Coefficients &c) {
  float gm[B], mean[B], k[B], w[B];
  for (int l = 0; l < B; ++l) {
    gm[l] = c.gm[l];
    mean[l] = c.mean[l];
    k[l] = c.k[l];
    w[l] = c.w[l];
  }
  for (int64_t j = 0; j < len; j += B)
    for (int l = 0; l < B; ++l)
      dx[j + l] = (dy[j + l] - gm[l] - (x[j + l] - mean[l]) * k[l]) * w[l];
}

// A dense segment: one channel, its coefficients broadcast.
template <int E>
__attribute__((always_inline)) inline void
affineDense(const float *x, float *y, int64_t len, const Coefficients &c) {
  float a = c.alpha[0], b = c.beta[0], lo = c.lo, hi = c.hi;
  for (int64_t j = 0; j < len; ++j)
    y[j] = epilogue<E>(x[j] * a + b, lo, hi);
}

__attribute__((always_inline)) inline void
backwardDense(const float *dy, const float *x, float *dx, int64_t len,
              const Coefficients &c) {
  float gm = c.gm[0], mean = c.mean[0], k = c.k[0], w = c.w[0];
  for (int64_t j = 0; j < len; ++j)
    dx[j] = (dy[j] - gm - (x[j] - mean) * k) * w;
}

template <int E>
__attribute__((always_inline)) inline void affineAny(int block, const float *x,
                                                     float *out, int64_t len,
                                                     const Coefficients &c) {
  if (block == 16)
    affineLoop<16, E>(x, out, len, c);
  else if (block == 8)
    affineLoop<8, E>(x, out, len, c);
  else
    affineDense<E>(x, out, len, c);
}

// One segment of the element-wise part, the block size and mode resolved
// (Backward: dx from dy, x; else y from x).
__attribute__((always_inline)) inline void
segment(int block, Mode mode, const float *dy, const float *x, float *out,
        int64_t len, const Coefficients &c) {
  switch (mode) {
  case Backward:
    if (block == 16)
      backwardLoop<16>(dy, x, out, len, c);
    else if (block == 8)
      backwardLoop<8>(dy, x, out, len, c);
    else
      backwardDense(dy, x, out, len, c);
    return;
  case AffineRelu:
    return affineAny<AffineRelu>(block, x, out, len, c);
  case AffineClip:
    return affineAny<AffineClip>(block, x, out, len, c);
  case Affine:
    return affineAny<Affine>(block, x, out, len, c);
  }
}

// The per-channel coefficients from channel c0 on.
Coefficients from(const Coefficients &p, int64_t c0) {
  Coefficients c = p;
  for (const float **q : {&c.alpha, &c.beta, &c.gm, &c.mean, &c.k, &c.w})
    if (*q)
      *q += c0;
  return c;
}

// One element per channel and image: channels [c0, c1) of one image, at
// `at`, coefficients indexed by channel.
template <int E>
__attribute__((always_inline)) inline void pointAffine(const float *x, float *y,
                                                       int64_t c0, int64_t c1,
                                                       const Coefficients &p) {
  float lo = p.lo, hi = p.hi;
  for (int64_t ch = c0; ch < c1; ++ch)
    y[ch] = epilogue<E>(x[ch] * p.alpha[ch] + p.beta[ch], lo, hi);
}

__attribute__((always_inline)) inline void
pointBackward(const float *dy, const float *x, float *dx, int64_t c0,
              int64_t c1, const Coefficients &p) {
  for (int64_t ch = c0; ch < c1; ++ch)
    dx[ch] = (dy[ch] - p.gm[ch] - (x[ch] - p.mean[ch]) * p.k[ch]) * p.w[ch];
}

// The runs of image n, groups [g0, g1), of a tensor of short runs.
__attribute__((always_inline)) inline void
shortRuns(const Runs &r, int64_t n, int64_t g0, int64_t g1, Mode mode,
          const float *dy, const float *x, float *out, const Coefficients &p) {
  if (r.run == r.block) {
    // Spatial size 1: the image's channels are one contiguous row, the
    // same element-wise formulas over it (a loop over channels, not a
    // call per channel group).
    int64_t at = n * r.groups * r.run, c0 = g0 * r.block, c1 = g1 * r.block;
    const float *xi = x + at;
    float *o = out + at;
    switch (mode) {
    case Backward:
      return pointBackward(dy + at, xi, o, c0, c1, p);
    case AffineRelu:
      return pointAffine<AffineRelu>(xi, o, c0, c1, p);
    case AffineClip:
      return pointAffine<AffineClip>(xi, o, c0, c1, p);
    case Affine:
      return pointAffine<Affine>(xi, o, c0, c1, p);
    }
  }
  for (int64_t g = g0; g < g1; ++g) {
    int64_t at = (n * r.groups + g) * r.run;
    segment(r.block, mode, dy ? dy + at : nullptr, x + at, out + at, r.run,
            from(p, g * r.block));
  }
}

void segmentDefault(int block, Mode mode, const float *dy, const float *x,
                    float *out, int64_t len, const Coefficients &c) {
  segment(block, mode, dy, x, out, len, c);
}

void shortRunsDefault(const Runs &r, int64_t n, int64_t g0, int64_t g1,
                      Mode mode, const float *dy, const float *x, float *out,
                      const Coefficients &p) {
  shortRuns(r, n, g0, g1, mode, dy, x, out, p);
}

#if TIDALRT_BN_X86
TIDALRT_AVX2 void segmentAvx2(int block, Mode mode, const float *dy,
                              const float *x, float *out, int64_t len,
                              const Coefficients &c) {
  segment(block, mode, dy, x, out, len, c);
}

TIDALRT_AVX2 void shortRunsAvx2(const Runs &r, int64_t n, int64_t g0,
                                int64_t g1, Mode mode, const float *dy,
                                const float *x, float *out,
                                const Coefficients &p) {
  shortRuns(r, n, g0, g1, mode, dy, x, out, p);
}
#endif

// The element-wise part over the whole tensor; coefficients per channel.
void elementwise(const Runs &r, Mode mode, const float *dy, const float *x,
                 float *out, const Coefficients &perChannel) {
  bool avx2 = haveAvx2();
  (void)avx2;
  if (r.run < kShortRun) {
    // Whole runs per task: a call per image and kGroups channel groups.
    constexpr int64_t kGroups = 64;
    int64_t parts = (r.groups + kGroups - 1) / kGroups, tasks = r.n * parts;
    bool parallel = r.n * r.groups * r.run >= parallelGrain();
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t t = 0; t < tasks; ++t) {
      int64_t n = t / parts, g0 = (t % parts) * kGroups,
              g1 = std::min(r.groups, g0 + kGroups);
#if TIDALRT_BN_X86
      if (avx2) {
        shortRunsAvx2(r, n, g0, g1, mode, dy, x, out, perChannel);
        continue;
      }
#endif
      shortRunsDefault(r, n, g0, g1, mode, dy, x, out, perChannel);
    }
    return;
  }
  forEachSegment(r, [&](int64_t at, int64_t len, int64_t g) {
    Coefficients c = from(perChannel, g * r.block);
    const float *d = dy ? dy + at : nullptr;
#if TIDALRT_BN_X86
    if (avx2)
      return segmentAvx2(r.block, mode, d, x + at, out + at, len, c);
#endif
    segmentDefault(r.block, mode, d, x + at, out + at, len, c);
  });
}

} // namespace

Runs bn::runsOf(const TensorRef &t, const Channels &ch) {
  Runs r;
  r.n = ch.n;
  if (t.blocked()) {
    r.block = tidalrt_channel_block();
    if (ch.c % r.block)
      fail(TIDALRT_INVALID_ARGUMENT,
           "a channel-blocked input has %lld channels, not a multiple of %d",
           (long long)ch.c, r.block);
  }
  r.groups = ch.c / r.block;
  r.run = ch.s * r.block;
  return r;
}

size_t bn::partialDoubles(const Runs &r) {
  return (size_t)(r.groups * piecesOf(r) * kLanes * 2);
}

void bn::firstElements(const Runs &r, const float *x, double *out) {
  for (int64_t g = 0; g < r.groups; ++g)
    for (int l = 0; l < r.block; ++l)
      out[g * r.block + l] = r.perGroup() ? x[g * r.run + l] : 0.0;
}

void bn::momentSums(const Runs &r, const float *x, const double *m,
                    double *partials, double *a, double *b) {
  channelSums<Sum::Moments>(r, x, nullptr, m, partials, a, b);
}

void bn::backwardSums(const Runs &r, const float *x, const float *dy,
                      const double *m, double *partials, double *a, double *b) {
  channelSums<Sum::Backward>(r, x, dy, m, partials, a, b);
}

void bn::affine(const Runs &r, const float *x, float *out,
                const Coefficients &c, Epilogue e) {
  Mode mode = e == Epilogue::Relu   ? AffineRelu
              : e == Epilogue::Clip ? AffineClip
                                    : Affine;
  elementwise(r, mode, nullptr, x, out, c);
}

void bn::backwardData(const Runs &r, const float *dy, const float *x,
                      float *out, const Coefficients &c) {
  elementwise(r, Backward, dy, x, out, c);
}
