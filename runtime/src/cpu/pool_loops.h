// pool_loops.h - the direct pooling loops: what runs where oneDNN's
// pooling does not compute what the evaluator does (dnnl_pool.cpp).
#ifndef TIDALRT_CPU_POOL_LOOPS_H
#define TIDALRT_CPU_POOL_LOOPS_H

#include "dnnl_checks.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace tidalrt {
namespace dnnlutil {

// The flat in-bounds input positions of every output position, in window
// order, and (for average pooling) the evaluator's divisor.
struct WindowTable {
  std::vector<int64_t> start; // outSp + 1 offsets into `positions`
  std::vector<int64_t> positions;
  std::vector<int64_t> divisor;
};

// Fills `t` for window `w` (`average`: with the divisors).
void buildTable(const Window &w, bool average, bool countIncludePad,
                WindowTable &t);

// Whether a loop over `w` opens an OpenMP team (parallelGrain()).
bool parallel(const Window &w);

// The lowest value a max starts from: -inf for floats.
template <typename T> T lowest() {
  return std::numeric_limits<T>::has_infinity
             ? -std::numeric_limits<T>::infinity()
             : std::numeric_limits<T>::lowest();
}

// Max pooling of the planes of `x` (dense) into `y`.
template <typename T>
void maxPoolLoop(const Window &w, const WindowTable &t, const T *x, T *y) {
#pragma omp parallel for if (parallel(w))
  for (int64_t p = 0; p < w.planes; ++p) {
    const T *xp = x + p * w.inSp;
    T *yp = y + p * w.outSp;
    for (int64_t os = 0; os < w.outSp; ++os) {
      T best = lowest<T>();
      for (int64_t j = t.start[os]; j < t.start[os + 1]; ++j)
        if (best < xp[t.positions[j]])
          best = xp[t.positions[j]];
      yp[os] = best;
    }
  }
}

// Routes `g` to the first maximum of each window of `x`, into `gx`.
void maxPoolBackwardLoop(const Window &w, const WindowTable &t, const float *g,
                         const float *x, float *gx);
void averagePoolLoop(const Window &w, const WindowTable &t, const float *x,
                     float *y);
void averagePoolBackwardLoop(const Window &w, const WindowTable &t,
                             const float *g, float *gx);

} // namespace dnnlutil
} // namespace tidalrt

#endif // TIDALRT_CPU_POOL_LOOPS_H
