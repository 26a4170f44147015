//===- OverlapScan.cpp - lifetimes overlapping a range, vectorised --------===//

#include "tidal/Dialect/Tidal/Analysis/OverlapScan.h"

#include <array>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TIDAL_SCAN_X86 1
#endif

using namespace mlir;
using namespace mlir::tidal;

namespace {

size_t scanScalar(const int32_t *starts, const int32_t *ends, size_t n,
                  int32_t start, int32_t end, uint32_t *out, size_t i = 0,
                  size_t count = 0) {
  // Branchless: which lifetime overlaps follows no pattern a branch
  // predictor could learn.
  for (; i < n; ++i) {
    out[count] = static_cast<uint32_t>(i);
    count += (starts[i] <= end) & (start <= ends[i]);
  }
  return count;
}

#ifdef TIDAL_SCAN_X86

/// For each 8-bit mask, the lanes it selects, in order, first: the
/// permutation that packs an AVX2 register's selected lanes to its bottom.
struct PackLanes {
  alignas(32) std::array<std::array<uint32_t, 8>, 256> lanes{};
  PackLanes() {
    for (unsigned mask = 0; mask < 256; ++mask) {
      unsigned k = 0;
      for (unsigned lane = 0; lane < 8; ++lane)
        if (mask & (1u << lane))
          lanes[mask][k++] = lane;
    }
  }
};
const PackLanes packLanes;

__attribute__((target("avx2,popcnt"))) size_t
scanAvx2(const int32_t *starts, const int32_t *ends, size_t n, int32_t start,
         int32_t end, uint32_t *out) {
  const __m256i vStart = _mm256_set1_epi32(start);
  const __m256i vEnd = _mm256_set1_epi32(end);
  const __m256i eight = _mm256_set1_epi32(8);
  __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  size_t count = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i s =
        _mm256_loadu_si256(reinterpret_cast<const __m256i *>(starts + i));
    __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(ends + i));
    // Disjoint: it starts after `end` or ends before `start`.
    __m256i disjoint = _mm256_or_si256(_mm256_cmpgt_epi32(s, vEnd),
                                       _mm256_cmpgt_epi32(vStart, e));
    unsigned mask = ~static_cast<unsigned>(
                        _mm256_movemask_ps(_mm256_castsi256_ps(disjoint))) &
                    0xffu;
    __m256i lanes = _mm256_load_si256(
        reinterpret_cast<const __m256i *>(packLanes.lanes[mask].data()));
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + count),
                        _mm256_permutevar8x32_epi32(index, lanes));
    count += static_cast<size_t>(_mm_popcnt_u32(mask));
    index = _mm256_add_epi32(index, eight);
  }
  return scanScalar(starts, ends, n, start, end, out, i, count);
}

__attribute__((target("avx512f,popcnt"))) size_t
scanAvx512(const int32_t *starts, const int32_t *ends, size_t n, int32_t start,
           int32_t end, uint32_t *out) {
  const __m512i vStart = _mm512_set1_epi32(start);
  const __m512i vEnd = _mm512_set1_epi32(end);
  const __m512i sixteen = _mm512_set1_epi32(16);
  __m512i index =
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  size_t count = 0, i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i s = _mm512_loadu_si512(starts + i);
    __m512i e = _mm512_loadu_si512(ends + i);
    __mmask16 mask =
        _mm512_cmple_epi32_mask(s, vEnd) & _mm512_cmple_epi32_mask(vStart, e);
    // A compress into a register and a full store: the compressing store
    // is microcoded and slow on some CPUs.
    _mm512_storeu_si512(out + count, _mm512_maskz_compress_epi32(mask, index));
    count += static_cast<size_t>(_mm_popcnt_u32(mask));
    index = _mm512_add_epi32(index, sixteen);
  }
  return scanScalar(starts, ends, n, start, end, out, i, count);
}

#endif // TIDAL_SCAN_X86

} // namespace

bool tidal::scanIsaSupported(ScanIsa isa) {
  switch (isa) {
  case ScanIsa::Scalar:
    return true;
#ifdef TIDAL_SCAN_X86
  case ScanIsa::Avx2:
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  case ScanIsa::Avx512:
    return __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("popcnt");
#else
  case ScanIsa::Avx2:
  case ScanIsa::Avx512:
    return false;
#endif
  }
  return false;
}

ScanIsa tidal::bestScanIsa() {
  static const ScanIsa best =
      scanIsaSupported(ScanIsa::Avx512) ? ScanIsa::Avx512
      : scanIsaSupported(ScanIsa::Avx2) ? ScanIsa::Avx2
                                        : ScanIsa::Scalar;
  return best;
}

size_t tidal::scanOverlapping(ScanIsa isa, const int32_t *starts,
                              const int32_t *ends, size_t n, int32_t start,
                              int32_t end, uint32_t *out) {
  switch (isa) {
#ifdef TIDAL_SCAN_X86
  case ScanIsa::Avx512:
    return scanAvx512(starts, ends, n, start, end, out);
  case ScanIsa::Avx2:
    return scanAvx2(starts, ends, n, start, end, out);
#else
  case ScanIsa::Avx512:
  case ScanIsa::Avx2:
#endif
  case ScanIsa::Scalar:
    break;
  }
  return scanScalar(starts, ends, n, start, end, out);
}
