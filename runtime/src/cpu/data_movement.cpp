// data_movement.cpp - transpose, concat, split, slice and slice's backward
// (gather and its relatives: gather.cpp).
//
// The forward ops move elements of any type by their size (1, 2, 4 or 8
// bytes). Transpose and slice run on one strided-copy engine: dimensions of
// size 1 are dropped and dimensions that stay contiguous in both tensors are
// merged, then contiguous runs are copied with memcpy, a transposition of
// the innermost dimension goes through 32x32 tiles, and anything else is an
// element loop. Large copies are split over OpenMP threads; every output
// element is written by exactly one work item, so results do not depend on
// the thread count.
#include "data_movement_checks.h"
#include "other_util.h"

#include <algorithm>

namespace tidalrt {
namespace other {
namespace {

//===----------------------------------------------------------------------===//
// Strided copy engine
//===----------------------------------------------------------------------===//

// dst[sum idx * dst] = src[sum idx * src] for every idx < dims (strides in
// elements; source strides may be negative).
struct Strided {
  int rank = 0;
  int64_t dims[TIDALRT_MAX_RANK];
  int64_t src[TIDALRT_MAX_RANK];
  int64_t dst[TIDALRT_MAX_RANK];

  int64_t total() const { return product(dims, 0, rank); }

  // Drops size-1 dimensions and merges neighbours contiguous in both.
  void simplify() {
    int r = 0;
    for (int d = 0; d < rank; ++d) {
      if (dims[d] == 1)
        continue;
      if (r > 0 && src[r - 1] == src[d] * dims[d] &&
          dst[r - 1] == dst[d] * dims[d]) {
        dims[r - 1] *= dims[d];
        src[r - 1] = src[d];
        dst[r - 1] = dst[d];
        continue;
      }
      dims[r] = dims[d];
      src[r] = src[d];
      dst[r] = dst[d];
      ++r;
    }
    rank = r;
  }
};

// Offsets of the first `n` dimensions of `g` at flat index `flat`.
inline void offsetsAt(const Strided &g, int n, int64_t flat, int64_t *s,
                      int64_t *d, int64_t *idx) {
  *s = *d = 0;
  for (int k = n - 1; k >= 0; --k) {
    idx[k] = flat % g.dims[k];
    flat /= g.dims[k];
    *s += idx[k] * g.src[k];
    *d += idx[k] * g.dst[k];
  }
}

// Advances the odometer over the first `n` dimensions.
inline void advance(const Strided &g, int n, int64_t *s, int64_t *d,
                    int64_t *idx) {
  for (int k = n - 1; k >= 0; --k) {
    if (++idx[k] < g.dims[k]) {
      *s += g.src[k];
      *d += g.dst[k];
      return;
    }
    idx[k] = 0;
    *s -= (g.dims[k] - 1) * g.src[k];
    *d -= (g.dims[k] - 1) * g.dst[k];
  }
}

// Copies rows of the last dimension; rows [r0, r1).
template <typename T>
void copyRows(const Strided &g, const T *src, T *dst, int64_t r0, int64_t r1) {
  int outer = g.rank - 1;
  int64_t n = g.dims[outer], ss = g.src[outer], ds = g.dst[outer];
  int64_t idx[TIDALRT_MAX_RANK], so, doff;
  offsetsAt(g, outer, r0, &so, &doff, idx);
  bool contiguous = ss == 1 && ds == 1;
  for (int64_t r = r0; r < r1; ++r) {
    if (contiguous) {
      memcpy(dst + doff, src + so, (size_t)n * sizeof(T));
    } else {
      const T *s = src + so;
      T *d = dst + doff;
      for (int64_t i = 0; i < n; ++i)
        d[i * ds] = s[i * ss];
    }
    advance(g, outer, &so, &doff, idx);
  }
}

#if TIDALRT_OTHER_X86
// Transposes 8x8 blocks of 4-byte elements: for i in [0, na) and j in
// [0, nl) (multiples of 8), d[i * da + j] = s[i + j * sl].
__attribute__((target("avx2,fma"))) void
transpose8x8Blocks(const uint32_t *s, uint32_t *d, int64_t na, int64_t nl,
                   int64_t da, int64_t sl) {
  const float *sf = reinterpret_cast<const float *>(s);
  float *df = reinterpret_cast<float *>(d);
  for (int64_t j = 0; j < nl; j += 8)
    for (int64_t i = 0; i < na; i += 8) {
      const float *p = sf + i + j * sl;
      __m256 r0 = _mm256_loadu_ps(p), r1 = _mm256_loadu_ps(p + sl),
             r2 = _mm256_loadu_ps(p + 2 * sl), r3 = _mm256_loadu_ps(p + 3 * sl),
             r4 = _mm256_loadu_ps(p + 4 * sl), r5 = _mm256_loadu_ps(p + 5 * sl),
             r6 = _mm256_loadu_ps(p + 6 * sl), r7 = _mm256_loadu_ps(p + 7 * sl);
      __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
             t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
             t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
             t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
      __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0)),
             u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2)),
             u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0)),
             u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2)),
             u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0)),
             u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2)),
             u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0)),
             u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
      float *q = df + i * da + j;
      _mm256_storeu_ps(q, _mm256_permute2f128_ps(u0, u4, 0x20));
      _mm256_storeu_ps(q + da, _mm256_permute2f128_ps(u1, u5, 0x20));
      _mm256_storeu_ps(q + 2 * da, _mm256_permute2f128_ps(u2, u6, 0x20));
      _mm256_storeu_ps(q + 3 * da, _mm256_permute2f128_ps(u3, u7, 0x20));
      _mm256_storeu_ps(q + 4 * da, _mm256_permute2f128_ps(u0, u4, 0x31));
      _mm256_storeu_ps(q + 5 * da, _mm256_permute2f128_ps(u1, u5, 0x31));
      _mm256_storeu_ps(q + 6 * da, _mm256_permute2f128_ps(u2, u6, 0x31));
      _mm256_storeu_ps(q + 7 * da, _mm256_permute2f128_ps(u3, u7, 0x31));
    }
}
#endif

// One tile: d[i * da + j * dl] = s[i * sa + j * sl] for i in [0, na), j in
// [0, nl), with the unit-stride layouts of a transposition specialised.
template <typename T>
void copyTile(const T *s, T *d, int64_t na, int64_t nl, int64_t sa, int64_t da,
              int64_t sl, int64_t dl, bool avx2) {
  if (dl == 1 && sa == 1) {
    int64_t na8 = 0, nl8 = 0;
#if TIDALRT_OTHER_X86
    if (sizeof(T) == 4 && avx2) {
      na8 = na & ~(int64_t)7;
      nl8 = nl & ~(int64_t)7;
      if (na8 && nl8)
        transpose8x8Blocks(reinterpret_cast<const uint32_t *>(s),
                           reinterpret_cast<uint32_t *>(d), na8, nl8, da, sl);
      else
        na8 = nl8 = 0;
    }
#endif
    (void)avx2;
    // The rest: rows [na8, na) over all columns, then the columns [nl8,
    // nl) of rows [0, na8).
    for (int64_t i = na8; i < na; ++i)
      for (int64_t j = 0; j < nl; ++j)
        d[i * da + j] = s[i + j * sl];
    for (int64_t i = 0; i < na8; ++i)
      for (int64_t j = nl8; j < nl; ++j)
        d[i * da + j] = s[i + j * sl];
    return;
  }
  if (sl == 1 && da == 1) {
    for (int64_t i = 0; i < na; ++i)
      for (int64_t j = 0; j < nl; ++j)
        d[i + j * dl] = s[i * sa + j];
    return;
  }
  for (int64_t i = 0; i < na; ++i)
    for (int64_t j = 0; j < nl; ++j)
      d[i * da + j * dl] = s[i * sa + j * sl];
}

// Tiled copy for a transposition: dimension `a` is contiguous in one
// tensor and the last dimension in the other.
template <typename T>
void copyTiled(const Strided &g, int a, const T *src, T *dst, bool parallel) {
  constexpr int64_t kTile = 32;
  int last = g.rank - 1;
  // The other dimensions form the batch.
  Strided batch;
  for (int k = 0; k < g.rank; ++k)
    if (k != a && k != last) {
      batch.dims[batch.rank] = g.dims[k];
      batch.src[batch.rank] = g.src[k];
      batch.dst[batch.rank] = g.dst[k];
      ++batch.rank;
    }
  int64_t na = g.dims[a], nl = g.dims[last];
  int64_t ta = (na + kTile - 1) / kTile, tl = (nl + kTile - 1) / kTile;
  int64_t items = batch.total() * ta * tl;
  int64_t sa = g.src[a], da = g.dst[a], sl = g.src[last], dl = g.dst[last];
  bool avx2 = useAvx2();
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t item = 0; item < items; ++item) {
    int64_t b = item / (ta * tl), rest = item % (ta * tl);
    int64_t a0 = (rest / tl) * kTile, l0 = (rest % tl) * kTile;
    int64_t a1 = std::min(na, a0 + kTile), l1 = std::min(nl, l0 + kTile);
    int64_t idx[TIDALRT_MAX_RANK], so, doff;
    offsetsAt(batch, batch.rank, b, &so, &doff, idx);
    copyTile(src + so + a0 * sa + l0 * sl, dst + doff + a0 * da + l0 * dl,
             a1 - a0, l1 - l0, sa, da, sl, dl, avx2);
  }
}

template <typename T> void stridedCopyT(Strided g, const T *src, T *dst) {
  int64_t total = g.total();
  if (total == 0)
    return;
  g.simplify();
  if (g.rank == 0) {
    *dst = *src;
    return;
  }
  bool parallel = total >= parallelGrain();
  int last = g.rank - 1;
  if (g.rank == 1 && g.src[0] == 1 && g.dst[0] == 1) {
    parallelCopy(dst, src, (size_t)total * sizeof(T));
    return;
  }
  if (!(g.src[last] == 1 && g.dst[last] == 1) && g.rank >= 2) {
    // A transposition of the innermost dimension: tile it.
    for (int a = 0; a < last; ++a)
      if ((g.dst[last] == 1 && g.src[a] == 1) ||
          (g.src[last] == 1 && g.dst[a] == 1)) {
        copyTiled(g, a, src, dst, parallel);
        return;
      }
  }
  int64_t rows = total / g.dims[last];
  constexpr int64_t kRowChunk = 64;
  if (!parallel || rows < 2) {
    copyRows(g, src, dst, 0, rows);
    return;
  }
  int64_t chunks = (rows + kRowChunk - 1) / kRowChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c)
    copyRows(g, src, dst, c * kRowChunk, std::min(rows, (c + 1) * kRowChunk));
}

void stridedCopy(const Strided &g, const void *src, void *dst, size_t es) {
  switch (es) {
  case 1:
    return stridedCopyT(g, static_cast<const uint8_t *>(src),
                        static_cast<uint8_t *>(dst));
  case 2:
    return stridedCopyT(g, static_cast<const uint16_t *>(src),
                        static_cast<uint16_t *>(dst));
  case 4:
    return stridedCopyT(g, static_cast<const uint32_t *>(src),
                        static_cast<uint32_t *>(dst));
  default:
    return stridedCopyT(g, static_cast<const uint64_t *>(src),
                        static_cast<uint64_t *>(dst));
  }
}

//===----------------------------------------------------------------------===//
// transpose: input -> output; perm (0)
//===----------------------------------------------------------------------===//

tidalrt_status_t transpose(OpCall &op) {
  const int64_t *perm;
  size_t es = checkTranspose(op, &perm);
  const TensorRef &in = op[0], &out = op[1];
  if (preparing(op.context))
    return ok();
  Strided g;
  int64_t inStrides[TIDALRT_MAX_RANK];
  denseStrides(in, inStrides);
  denseStrides(out, g.dst);
  g.rank = out.rank;
  for (int j = 0; j < out.rank; ++j) {
    g.dims[j] = out.dims[j];
    g.src[j] = inStrides[perm[j]];
  }
  stridedCopy(g, in.data, out.data, es);
  return ok();
}

//===----------------------------------------------------------------------===//
// concat: inputs... -> output; axis (0). split: input -> outputs...; axis
// (0), sizes (1).
//===----------------------------------------------------------------------===//

// Copies between the parts and the whole along `axis`; `toWhole` is concat.
void copyParts(const OpCall &op, int firstPart, int numParts, int whole,
               int axis, size_t es, bool toWhole) {
  const TensorRef &w = op[whole];
  int64_t outer = product(w.dims, 0, axis);
  size_t inner = (size_t)product(w.dims, axis + 1, w.rank) * es;
  size_t wholeChunk = (size_t)w.dims[axis] * inner;
  char *wp = static_cast<char *>(w.data);
  auto partPtr = [&](int p) { return static_cast<char *>(op[p].data); };
  auto partChunk = [&](int p) { return (size_t)op[p].dims[axis] * inner; };
  if (outer == 1) {
    size_t offset = 0;
    for (int p = firstPart; p < firstPart + numParts; ++p) {
      size_t bytes = partChunk(p);
      if (toWhole)
        parallelCopy(wp + offset, partPtr(p), bytes);
      else
        parallelCopy(partPtr(p), wp + offset, bytes);
      offset += bytes;
    }
    return;
  }
  bool parallel = (int64_t)(outer * wholeChunk / es) >= parallelGrain();
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t o = 0; o < outer; ++o) {
    size_t offset = (size_t)o * wholeChunk;
    for (int p = firstPart; p < firstPart + numParts; ++p) {
      size_t bytes = partChunk(p);
      if (bytes == 0)
        continue;
      char *part = partPtr(p) + (size_t)o * bytes;
      if (toWhole)
        memcpy(wp + offset, part, bytes);
      else
        memcpy(part, wp + offset, bytes);
      offset += bytes;
    }
  }
}

tidalrt_status_t concat(OpCall &op) {
  int axis;
  size_t es = checkConcat(op, &axis);
  int parts = op.numTensors - 1;
  if (preparing(op.context))
    return ok();
  copyParts(op, 0, parts, parts, axis, es, /*toWhole=*/true);
  return ok();
}

tidalrt_status_t split(OpCall &op) {
  int axis;
  size_t es = checkSplit(op, &axis);
  int parts = op.numTensors - 1;
  if (preparing(op.context))
    return ok();
  copyParts(op, 1, parts, 0, axis, es, /*toWhole=*/false);
  return ok();
}

//===----------------------------------------------------------------------===//
// slice: input -> output; ends (0), starts (1), steps (2). slice_backward:
// grad -> grad_input, same attributes.
//===----------------------------------------------------------------------===//

// The CPU copy engine's view of a slice `s` of a full tensor producing
// `part`: part element idx from full element base + idx * strides.
Strided sliceCopy(const SliceGeometry &s, const TensorRef &part) {
  Strided g;
  g.rank = s.rank;
  denseStrides(part, g.dst);
  for (int d = 0; d < s.rank; ++d) {
    g.dims[d] = s.counts[d];
    g.src[d] = s.strides[d];
  }
  return g;
}

tidalrt_status_t slice(OpCall &op) {
  SliceGeometry s;
  size_t es = checkSlice(op, s);
  const TensorRef &in = op[0], &out = op[1];
  if (preparing(op.context) || out.numel() == 0)
    return ok();
  stridedCopy(sliceCopy(s, out),
              static_cast<const char *>(in.data) + s.base * (int64_t)es,
              out.data, es);
  return ok();
}

tidalrt_status_t sliceBackward(OpCall &op) {
  SliceGeometry s;
  size_t es = checkSliceBackward(op, s);
  const TensorRef &grad = op[0], &out = op[1];
  Strided g = sliceCopy(s, grad);
  if (preparing(op.context))
    return ok();
  parallelZero(out.data, out.bytes());
  if (grad.numel() == 0)
    return ok();
  // Reverse the copy: the dense grad is the source.
  for (int d = 0; d < g.rank; ++d)
    std::swap(g.src[d], g.dst[d]);
  stridedCopy(g, grad.data,
              static_cast<char *>(out.data) + s.base * (int64_t)es, es);
  return ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// Checks (data_movement_checks.h), shared with the CUDA kernels
//===----------------------------------------------------------------------===//

namespace {

// Checks parts [first, first + n) against the whole along `axis`.
void checkParts(const OpCall &op, int first, int n, int whole, int axis,
                const char *partName) {
  const TensorRef &w = op[whole];
  int64_t sum = 0;
  for (int p = first; p < first + n; ++p) {
    const TensorRef &t = op[p];
    requireSameType(t, partName, w, "the whole");
    bool match = t.rank == w.rank;
    for (int d = 0; match && d < w.rank; ++d)
      match = d == axis || t.dims[d] == w.dims[d];
    if (!match)
      fail(TIDALRT_INVALID_ARGUMENT,
           "%s %d does not match the whole outside axis %d", partName,
           p - first, axis);
    sum += t.dims[axis];
  }
  if (sum != w.dims[axis])
    fail(TIDALRT_INVALID_ARGUMENT,
         "%ss add up to %lld along axis %d, the whole has %lld", partName,
         (long long)sum, axis, (long long)w.dims[axis]);
}

// The geometry of a slice of `full` producing `part`. Fails on a position
// out of range.
void sliceGeometry(const OpCall &op, const TensorRef &full,
                   const TensorRef &part, SliceGeometry &s) {
  const int64_t *ends, *starts, *steps;
  int64_t ne = op.getInts(0, &ends), ns = op.getInts(1, &starts),
          nt = op.getInts(2, &steps);
  (void)ends; // the part's shape already holds the counts
  if (ne != full.rank || ns != full.rank || nt != full.rank ||
      part.rank != full.rank)
    fail(TIDALRT_INVALID_ARGUMENT,
         "slice attributes (%lld, %lld, %lld entries) and ranks (%d, %d) do "
         "not match",
         (long long)ne, (long long)ns, (long long)nt, full.rank, part.rank);
  int64_t fullStrides[TIDALRT_MAX_RANK];
  denseStrides(full, fullStrides);
  s.rank = full.rank;
  s.base = 0;
  for (int d = 0; d < full.rank; ++d) {
    int64_t cnt = part.dims[d];
    if (steps[d] == 0)
      fail(TIDALRT_INVALID_ARGUMENT, "step of dimension %d is 0", d);
    if (cnt > 0) {
      int64_t first = starts[d], last = starts[d] + (cnt - 1) * steps[d];
      bool badFirst = first < 0 || first >= full.dims[d];
      bool badLast = last < 0 || last >= full.dims[d];
      if (badFirst || badLast)
        fail(TIDALRT_INVALID_ARGUMENT,
             "slice index %lld is out of range [0, %lld) in dimension %d",
             (long long)(badFirst ? first : last), (long long)full.dims[d], d);
    }
    s.counts[d] = cnt;
    s.starts[d] = starts[d];
    s.steps[d] = steps[d];
    s.strides[d] = steps[d] * fullStrides[d];
    s.base += starts[d] * fullStrides[d];
  }
}

} // namespace

size_t elementSize(const TensorRef &t, const char *name) {
  size_t es = tidalrt_element_type_size((tidalrt_element_type_t)t.type);
  if (es != 1 && es != 2 && es != 4 && es != 8)
    fail(TIDALRT_UNSUPPORTED, "%s has unsupported element type %s (code %d)",
         name, typeName(t.type), (int)t.type);
  return es;
}

void requireSameType(const TensorRef &a, const char *an, const TensorRef &b,
                     const char *bn) {
  if (a.type != b.type)
    fail(TIDALRT_INVALID_ARGUMENT, "%s has element type %s but %s has %s", an,
         typeName(a.type), bn, typeName(b.type));
}

size_t checkTranspose(const OpCall &op, const int64_t **permOut) {
  requireTensors(op, 2);
  const TensorRef &in = op[0], &out = op[1];
  size_t es = elementSize(in, "input");
  requireSameType(in, "input", out, "output");
  const int64_t *perm;
  int64_t np = op.getInts(0, &perm);
  if (np != in.rank || out.rank != in.rank)
    fail(TIDALRT_INVALID_ARGUMENT,
         "perm has %lld entries for an input of rank %d and output of rank %d",
         (long long)np, in.rank, out.rank);
  bool seen[TIDALRT_MAX_RANK] = {};
  for (int j = 0; j < in.rank; ++j) {
    if (perm[j] < 0 || perm[j] >= in.rank || seen[perm[j]])
      fail(TIDALRT_INVALID_ARGUMENT, "perm is not a permutation of [0, %d)",
           in.rank);
    seen[perm[j]] = true;
  }
  for (int j = 0; j < in.rank; ++j) {
    if (out.dims[j] != in.dims[perm[j]])
      fail(TIDALRT_INVALID_ARGUMENT,
           "output dimension %d is %lld, expected input dimension %lld (%lld)",
           j, (long long)out.dims[j], (long long)perm[j],
           (long long)in.dims[perm[j]]);
  }
  *permOut = perm;
  return es;
}

size_t checkConcat(const OpCall &op, int *axisOut) {
  if (op.numTensors < 2)
    fail(TIDALRT_INVALID_ARGUMENT, "expects at least one input");
  int parts = op.numTensors - 1;
  const TensorRef &out = op[parts];
  size_t es = elementSize(out, "output");
  if (out.rank < 1)
    fail(TIDALRT_INVALID_ARGUMENT, "output must have rank >= 1");
  int axis = normalizeAxis(op.getInt(0), out.rank);
  checkParts(op, 0, parts, parts, axis, "input");
  *axisOut = axis;
  return es;
}

size_t checkSplit(const OpCall &op, int *axisOut) {
  if (op.numTensors < 2)
    fail(TIDALRT_INVALID_ARGUMENT, "expects at least one output");
  int parts = op.numTensors - 1;
  const TensorRef &in = op[0];
  size_t es = elementSize(in, "input");
  if (in.rank < 1)
    fail(TIDALRT_INVALID_ARGUMENT, "input must have rank >= 1");
  int axis = normalizeAxis(op.getInt(0), in.rank);
  const int64_t *sizes;
  int64_t ns = op.getInts(1, &sizes);
  if (ns != parts)
    fail(TIDALRT_INVALID_ARGUMENT, "sizes has %lld entries for %d outputs",
         (long long)ns, parts);
  for (int p = 0; p < parts; ++p)
    if (op[1 + p].rank != in.rank || op[1 + p].dims[axis] != sizes[p])
      fail(TIDALRT_INVALID_ARGUMENT,
           "output %d does not have size %lld along axis %d", p,
           (long long)sizes[p], axis);
  checkParts(op, 1, parts, 0, axis, "output");
  *axisOut = axis;
  return es;
}

size_t checkSlice(const OpCall &op, SliceGeometry &s) {
  requireTensors(op, 2);
  const TensorRef &in = op[0], &out = op[1];
  size_t es = elementSize(in, "input");
  requireSameType(in, "input", out, "output");
  sliceGeometry(op, in, out, s);
  return es;
}

size_t checkSliceBackward(const OpCall &op, SliceGeometry &s) {
  requireTensors(op, 2);
  const TensorRef &grad = op[0], &out = op[1];
  size_t es = elementSize(grad, "grad");
  requireSameType(grad, "grad", out, "grad_input");
  sliceGeometry(op, out, grad, s);
  return es;
}

} // namespace other
} // namespace tidalrt

using namespace tidalrt;

extern "C" tidalrt_status_t tidalrt_k_transpose(tidalrt_context_t *ctx,
                                                const int64_t *desc,
                                                void *const *buffers) {
  return runKernel(ctx, desc, buffers, "transpose", other::transpose);
}

extern "C" tidalrt_status_t tidalrt_k_concat(tidalrt_context_t *ctx,
                                             const int64_t *desc,
                                             void *const *buffers) {
  return runKernel(ctx, desc, buffers, "concat", other::concat);
}

extern "C" tidalrt_status_t tidalrt_k_split(tidalrt_context_t *ctx,
                                            const int64_t *desc,
                                            void *const *buffers) {
  return runKernel(ctx, desc, buffers, "split", other::split);
}

extern "C" tidalrt_status_t tidalrt_k_slice(tidalrt_context_t *ctx,
                                            const int64_t *desc,
                                            void *const *buffers) {
  return runKernel(ctx, desc, buffers, "slice", other::slice);
}

extern "C" tidalrt_status_t tidalrt_k_slice_backward(tidalrt_context_t *ctx,
                                                     const int64_t *desc,
                                                     void *const *buffers) {
  return runKernel(ctx, desc, buffers, "slice_backward", other::sliceBackward);
}
