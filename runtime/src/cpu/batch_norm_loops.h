// batch_norm_loops.h - the loops of the batch-norm kernels (batch_norm.cpp):
// per-channel sums in double and the element-wise parts, over dense and
// channel-blocked tensors, in parallel, scalar or AVX2 (same bits).
//
// A data tensor `[N, C, spatial...]` is seen as N x G runs of R contiguous
// floats: dense G = C, R = S (one channel per run); blocked G = C / B, R =
// S * B (B = tidalrt_channel_block() channels interleaved, channel g * B +
// (i % B) at offset i).
//
// Summation order, fixed by the shape alone (so no thread count or ISA
// changes a bit): runs of at least kShortRun elements are summed per channel
// group in pieces of kPiece elements (partial sums added in piece order),
// each piece in 16 double lanes (element j of a run segment into lane j %
// 16, so lane l holds channel l % B), the lanes of a channel added in lane
// order; shorter runs (small spatial sizes) sum each channel with one
// double accumulator in (n, spatial) order.
#ifndef TIDALRT_CPU_BATCH_NORM_LOOPS_H
#define TIDALRT_CPU_BATCH_NORM_LOOPS_H

#include "dnnl_checks.h"
#include "kernel.h"

#include <cstddef>
#include <cstdint>

namespace tidalrt {
namespace bn {

struct Runs {
  int64_t n = 0, groups = 0, run = 0;
  int block = 1; // B; 1 for dense

  int64_t perGroup() const { return n * run; }
};

// The runs of call tensor `t` with channels `ch`; fails (INVALID_ARGUMENT)
// for a blocked tensor whose channels are not a multiple of the block.
Runs runsOf(const TensorRef &t, const dnnlutil::Channels &ch);

// The scratch doubles the sums need for `r`.
size_t partialDoubles(const Runs &r);

// Each channel's first element (image 0, spatial position 0), or 0 for an
// empty batch: the shift of the one-pass statistics.
void firstElements(const Runs &r, const float *x, double *out);

// Per channel c, with d = x - m[c]: a[c] = sum(d), b[c] = sum(d * d).
void momentSums(const Runs &r, const float *x, const double *m,
                double *partials, double *a, double *b);
// Per channel c, with d = x - m[c]: a[c] = sum(dy), b[c] = sum(d * dy).
void backwardSums(const Runs &r, const float *x, const float *dy,
                  const double *m, double *partials, double *a, double *b);

// Per-channel float32 coefficients of the element-wise parts (pointers to
// channel 0), and the clip epilogue's bounds.
struct Coefficients {
  const float *alpha = nullptr, *beta = nullptr; // forward
  const float *gm = nullptr, *mean = nullptr, *k = nullptr, *w = nullptr;
  float lo = 0.0f, hi = 0.0f; // Epilogue::Clip
};

// What the forward output takes after the affine map: nothing, relu's
// max(y, 0) (NaN -> 0), or clip's min(max(y, lo), hi) (NaN kept), each
// bit for bit the unfused kernel's formula.
enum class Epilogue { None, Relu, Clip };

// out = epilogue(x * alpha + beta) per channel.
void affine(const Runs &r, const float *x, float *out, const Coefficients &c,
            Epilogue e);
// out = (dy - gm - (x - mean) * k) * w per channel.
void backwardData(const Runs &r, const float *dy, const float *x, float *out,
                  const Coefficients &c);

} // namespace bn
} // namespace tidalrt

#endif // TIDALRT_CPU_BATCH_NORM_LOOPS_H
