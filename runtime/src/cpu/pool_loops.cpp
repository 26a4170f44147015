// pool_loops.cpp - the direct pooling loops (pool_loops.h).
#include "pool_loops.h"

#include "kernel.h"

#include <algorithm>

namespace tidalrt {
namespace dnnlutil {

void buildTable(const Window &w, bool average, bool countIncludePad,
                WindowTable &t) {
  int64_t kSp = 1;
  for (int64_t kd : w.kernel)
    kSp *= kd;
  std::vector<int64_t> o(w.k), kk(w.k);
  t.start.assign(1, 0);
  for (int64_t os = 0; os < w.outSp; ++os) {
    int64_t r = os;
    for (int d = w.k; d-- > 0;) {
      o[d] = r % w.out[d];
      r /= w.out[d];
    }
    for (int64_t ks = 0; ks < kSp; ++ks) {
      int64_t q = ks;
      for (int d = w.k; d-- > 0;) {
        kk[d] = q % w.kernel[d];
        q /= w.kernel[d];
      }
      int64_t flat = 0;
      bool inside = true;
      for (int d = 0; d < w.k && inside; ++d) {
        int64_t i =
            o[d] * w.strides[d] - w.padBegin[d] + kk[d] * w.dilations[d];
        inside = i >= 0 && i < w.in[d];
        flat = flat * w.in[d] + i;
      }
      if (inside)
        t.positions.push_back(flat);
    }
    int64_t count = (int64_t)t.positions.size() - t.start.back();
    t.start.push_back((int64_t)t.positions.size());
    if (!average)
      continue;
    int64_t div = count;
    if (countIncludePad) {
      // The window clipped to the padded input (PyTorch's rule).
      div = 1;
      for (int d = 0; d < w.k; ++d) {
        int64_t s = o[d] * w.strides[d] - w.padBegin[d];
        div *= std::min(s + w.kernel[d], w.in[d] + w.padEnd[d]) - s;
      }
    }
    t.divisor.push_back(div);
  }
}

bool parallel(const Window &w) {
  int64_t kSp = 1;
  for (int64_t kd : w.kernel)
    kSp *= kd;
  return w.planes * w.outSp * kSp > parallelGrain();
}

void maxPoolBackwardLoop(const Window &w, const WindowTable &t, const float *g,
                         const float *x, float *gx) {
#pragma omp parallel for if (parallel(w))
  for (int64_t p = 0; p < w.planes; ++p) {
    const float *xp = x + p * w.inSp, *gp = g + p * w.outSp;
    float *gxp = gx + p * w.inSp;
    std::fill(gxp, gxp + w.inSp, 0.0f);
    for (int64_t os = 0; os < w.outSp; ++os) {
      int64_t arg = -1;
      for (int64_t j = t.start[os]; j < t.start[os + 1]; ++j) {
        int64_t i = t.positions[j];
        if (arg < 0 || xp[i] > xp[arg])
          arg = i;
      }
      if (arg >= 0)
        gxp[arg] += gp[os];
    }
  }
}

void averagePoolLoop(const Window &w, const WindowTable &t, const float *x,
                     float *y) {
#pragma omp parallel for if (parallel(w))
  for (int64_t p = 0; p < w.planes; ++p) {
    const float *xp = x + p * w.inSp;
    float *yp = y + p * w.outSp;
    for (int64_t os = 0; os < w.outSp; ++os) {
      double sum = 0.0;
      for (int64_t j = t.start[os]; j < t.start[os + 1]; ++j)
        sum += xp[t.positions[j]];
      int64_t div = t.divisor[os];
      yp[os] = div > 0 ? (float)(sum / (double)div) : 0.0f;
    }
  }
}

void averagePoolBackwardLoop(const Window &w, const WindowTable &t,
                             const float *g, float *gx) {
#pragma omp parallel for if (parallel(w))
  for (int64_t p = 0; p < w.planes; ++p) {
    const float *gp = g + p * w.outSp;
    float *gxp = gx + p * w.inSp;
    std::fill(gxp, gxp + w.inSp, 0.0f);
    for (int64_t os = 0; os < w.outSp; ++os) {
      int64_t div = t.divisor[os];
      if (div <= 0)
        continue;
      float v = (float)((double)gp[os] / (double)div);
      for (int64_t j = t.start[os]; j < t.start[os + 1]; ++j)
        gxp[t.positions[j]] += v;
    }
  }
}

} // namespace dnnlutil
} // namespace tidalrt
