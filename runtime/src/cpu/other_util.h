// other_util.h - helpers shared by the softmax, loss, layer-norm, optimizer
// and data-movement kernels: operand checks, index reading, ISA selection,
// an AVX2 exp and the log-softmax that the cross-entropy loss reuses.
//
// The CUDA kernels (cuda/other/common.h) share the operand checks: nvcc
// sees the header without the parts that only CPU code runs (OpenMP, ISA
// selection, AVX2), hidden by TIDALRT_OTHER_CPU_ONLY.
#ifndef TIDALRT_CPU_OTHER_UTIL_H
#define TIDALRT_CPU_OTHER_UTIL_H

#include "kernel.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

// Whether the CPU-only parts are compiled (not by nvcc).
#if defined(__CUDACC__)
#define TIDALRT_OTHER_CPU_ONLY 0
#else
#define TIDALRT_OTHER_CPU_ONLY 1
#include "simd.h"

#include <omp.h>
#endif

#if TIDALRT_OTHER_CPU_ONLY && (defined(__x86_64__) || defined(__i386__))
#define TIDALRT_OTHER_X86 1
// GCC 12 flags the deliberately undefined vectors inside avx512fintrin.h's
// intrinsics (_mm512_undefined_ps and friends) as maybe-uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#define TIDALRT_OTHER_X86 0
#endif

namespace tidalrt {
namespace other {

// The work per partial sum when a reduction is split (layer_norm.cpp's
// column split). Fixed: the split decides the summation order. Whether a
// loop runs in parallel is parallelGrain()'s (kernel.h).
constexpr int64_t kParallelMin = 32768;

#if TIDALRT_OTHER_CPU_ONLY
// Whether the AVX2+FMA code paths may run: simd::activeIsa() (the same
// selection as the element-wise kernels, TIDAL_CPU_ISA included) is AVX2 or
// AVX-512. Softmax, the losses, layer norm and transposes have no AVX-512
// code yet and run their AVX2 loops under either; the optimizer updates
// dispatch on simd::activeIsa() themselves. The variable is read on every
// call so that tests can compare the paths.
inline bool useAvx2() {
#if TIDALRT_OTHER_X86
  return simd::activeIsa() != simd::Isa::Scalar;
#else
  return false;
#endif
}
#endif // TIDALRT_OTHER_CPU_ONLY

inline const char *typeName(int32_t type) {
  return tidalrt_element_type_name((tidalrt_element_type_t)type);
}

// Fails unless tensor `i` is present and float32.
inline const TensorRef &requireF32(const OpCall &op, int i, const char *what) {
  const TensorRef &t = op[i];
  if (!t.present())
    fail(TIDALRT_INVALID_ARGUMENT, "%s is missing", what);
  if (t.type != TIDALRT_ELEMENT_TYPE_F32)
    fail(TIDALRT_UNSUPPORTED,
         "%s has element type %s; only float32 is supported", what,
         typeName(t.type));
  return t;
}

// Fails unless the call has `n` tensors.
inline void requireTensors(const OpCall &op, int n) {
  if (op.numTensors != n)
    fail(TIDALRT_INTERNAL, "expected %d tensors, the call has %d", n,
         op.numTensors);
}

// Whether `type` is an integer type that index operands may have.
inline bool isIndexType(int32_t type) {
  switch (type) {
  case TIDALRT_ELEMENT_TYPE_I8:
  case TIDALRT_ELEMENT_TYPE_I16:
  case TIDALRT_ELEMENT_TYPE_I32:
  case TIDALRT_ELEMENT_TYPE_I64:
  case TIDALRT_ELEMENT_TYPE_U8:
  case TIDALRT_ELEMENT_TYPE_U16:
  case TIDALRT_ELEMENT_TYPE_U32:
  case TIDALRT_ELEMENT_TYPE_U64:
    return true;
  default:
    return false;
  }
}

inline const TensorRef &requireIndex(const OpCall &op, int i,
                                     const char *what) {
  const TensorRef &t = op[i];
  if (!t.present())
    fail(TIDALRT_INVALID_ARGUMENT, "%s is missing", what);
  if (!isIndexType(t.type))
    fail(TIDALRT_UNSUPPORTED,
         "%s has element type %s; an integer type is required", what,
         typeName(t.type));
  return t;
}

// Reads element `i` of an integer tensor as int64 (u64 values above
// INT64_MAX read as INT64_MAX, which every range check rejects).
inline int64_t readIndex(const TensorRef &t, int64_t i) {
  switch (t.type) {
  case TIDALRT_ELEMENT_TYPE_I64:
    return static_cast<const int64_t *>(t.data)[i];
  case TIDALRT_ELEMENT_TYPE_I32:
    return static_cast<const int32_t *>(t.data)[i];
  case TIDALRT_ELEMENT_TYPE_I16:
    return static_cast<const int16_t *>(t.data)[i];
  case TIDALRT_ELEMENT_TYPE_I8:
    return static_cast<const int8_t *>(t.data)[i];
  case TIDALRT_ELEMENT_TYPE_U8:
    return static_cast<const uint8_t *>(t.data)[i];
  case TIDALRT_ELEMENT_TYPE_U16:
    return static_cast<const uint16_t *>(t.data)[i];
  case TIDALRT_ELEMENT_TYPE_U32:
    return static_cast<const uint32_t *>(t.data)[i];
  case TIDALRT_ELEMENT_TYPE_U64: {
    uint64_t v = static_cast<const uint64_t *>(t.data)[i];
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
  }
  default:
    return 0;
  }
}

// Formats the multi-index of flat position `flat` in a tensor of shape
// (`rank`, `dims`) as "[i, j, k]" into `buf`.
inline const char *formatIndex(char *buf, size_t size, int64_t flat, int rank,
                               const int64_t *dims) {
  int64_t idx[TIDALRT_MAX_RANK];
  for (int d = rank - 1; d >= 0; --d) {
    idx[d] = dims[d] ? flat % dims[d] : 0;
    flat = dims[d] ? flat / dims[d] : 0;
  }
  size_t n = 0;
  buf[n++] = '[';
  buf[n] = 0;
  for (int d = 0; d < rank && n + 2 < size; ++d) {
    int w =
        snprintf(buf + n, size - n, d ? ", %lld" : "%lld", (long long)idx[d]);
    if (w < 0)
      break;
    n = (size_t)w + n >= size ? size - 1 : n + (size_t)w;
  }
  if (n + 1 < size) {
    buf[n++] = ']';
    buf[n] = 0;
  }
  return buf;
}

// Resolves a possibly negative axis for `rank`, failing when out of range.
inline int normalizeAxis(int64_t axis, int rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    fail(TIDALRT_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
         (long long)axis, rank);
  return (int)a;
}

inline int64_t product(const int64_t *dims, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i)
    n *= dims[i];
  return n;
}

// Whether two tensors have the same shape.
inline bool sameShape(const TensorRef &a, const TensorRef &b) {
  if (a.rank != b.rank)
    return false;
  for (int i = 0; i < a.rank; ++i)
    if (a.dims[i] != b.dims[i])
      return false;
  return true;
}

#if TIDALRT_OTHER_CPU_ONLY
// Parallel memset/memcpy for large buffers (the split is fixed, so the
// result does not depend on the thread count).
inline void parallelZero(void *dst, size_t bytes) {
  constexpr size_t kChunk = (size_t)1 << 18;
  if (bytes < 4 * kChunk) {
    if (bytes)
      memset(dst, 0, bytes);
    return;
  }
  int64_t chunks = (int64_t)((bytes + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    size_t begin = (size_t)c * kChunk;
    size_t n = bytes - begin < kChunk ? bytes - begin : kChunk;
    memset(static_cast<char *>(dst) + begin, 0, n);
  }
}

inline void parallelCopy(void *dst, const void *src, size_t bytes) {
  constexpr size_t kChunk = (size_t)1 << 18;
  if (bytes < 4 * kChunk) {
    if (bytes)
      memcpy(dst, src, bytes);
    return;
  }
  int64_t chunks = (int64_t)((bytes + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    size_t begin = (size_t)c * kChunk;
    size_t n = bytes - begin < kChunk ? bytes - begin : kChunk;
    memcpy(static_cast<char *>(dst) + begin,
           static_cast<const char *>(src) + begin, n);
  }
}
#endif // TIDALRT_OTHER_CPU_ONLY

#if TIDALRT_OTHER_X86
// exp(x) for 8 floats: Cephes' range reduction and polynomial (about 1 ulp
// on [-87.3, 88.3]); results below exp(-87.3) are flushed to 0, inputs above
// 88.37 saturate at about 2.4e38 (callers pass x <= 0), NaN stays NaN.
__attribute__((target("avx2,fma"))) inline __m256 exp256(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.3762626647949f);
  const __m256 lo = _mm256_set1_ps(-87.3365447504f);
  __m256 underflow = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  __m256 isnan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  const __m256 x0 = x;
  x = _mm256_min_ps(x, hi);
  x = _mm256_max_ps(x, lo);
  // n = round(x / ln 2); r = x - n * ln 2 in two parts.
  __m256 n =
      _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500E-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507E-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073E-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894E-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459E-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201E-1f));
  __m256 r2 = _mm256_mul_ps(r, r);
  p = _mm256_fmadd_ps(p, r2, r);
  p = _mm256_add_ps(p, _mm256_set1_ps(1.0f));
  // Scale by 2^n (n in [-126, 127] after the clamps).
  __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
  e = _mm256_slli_epi32(e, 23);
  __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  y = _mm256_andnot_ps(underflow, y);
  return _mm256_blendv_ps(y, _mm256_add_ps(x0, x0), isnan);
}

// Sum and max of the 8 lanes.
__attribute__((target("avx2,fma"))) inline float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
__attribute__((target("avx2,fma"))) inline float hmax256(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
#endif

// The softmax family over a tensor seen as outer x n x inner around its
// axis (softmax.cpp). Rows are independent; each is computed in one thread,
// so results do not depend on the thread count.
enum class SoftmaxKind { Softmax, LogSoftmax };
void softmaxForward(const float *x, float *y, int64_t outer, int64_t n,
                    int64_t inner, SoftmaxKind kind);

} // namespace other
} // namespace tidalrt

#endif // TIDALRT_CPU_OTHER_UTIL_H
