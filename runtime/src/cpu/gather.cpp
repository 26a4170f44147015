// gather.cpp - gather, gather_backward and scatter_extreme.
//
// gather moves elements of any type by their size (1, 2, 4 or 8 bytes), a
// row per work item. gather_backward scatter-adds float32 gradients, and
// scatter_extreme keeps the largest (smallest) float32 value, with each
// output column owned by one work item that visits the indices in order,
// so results do not depend on the thread count.
#include "data_movement_checks.h"
#include "other_util.h"

#include <algorithm>
#include <cstring>

namespace tidalrt {
namespace other {
namespace {

//===----------------------------------------------------------------------===//
// gather: data, indices -> output; axis (0). gather_backward: grad, indices
// -> grad_input; axis (0).
//===----------------------------------------------------------------------===//

// Checks every index against [-dim, dim).
void checkIndices(const TensorRef &indices, int64_t dim) {
  for (int64_t j = 0, n = indices.numel(); j < n; ++j) {
    int64_t v = readIndex(indices, j);
    if (v < -dim || v >= dim) {
      char where[512];
      fail(TIDALRT_INVALID_ARGUMENT,
           "index %lld at indices%s is out of range [%lld, %lld)", (long long)v,
           formatIndex(where, sizeof where, j, indices.rank, indices.dims),
           (long long)-dim, (long long)dim);
    }
  }
}

// Calls f(p) with the indices as a typed pointer.
template <typename F> void withIndices(const TensorRef &t, F f) {
  switch (t.type) {
  case TIDALRT_ELEMENT_TYPE_I64:
  case TIDALRT_ELEMENT_TYPE_U64:
    return f(static_cast<const int64_t *>(t.data));
  case TIDALRT_ELEMENT_TYPE_I32:
    return f(static_cast<const int32_t *>(t.data));
  case TIDALRT_ELEMENT_TYPE_U32:
    return f(static_cast<const uint32_t *>(t.data));
  case TIDALRT_ELEMENT_TYPE_I16:
    return f(static_cast<const int16_t *>(t.data));
  case TIDALRT_ELEMENT_TYPE_U16:
    return f(static_cast<const uint16_t *>(t.data));
  case TIDALRT_ELEMENT_TYPE_I8:
    return f(static_cast<const int8_t *>(t.data));
  default:
    return f(static_cast<const uint8_t *>(t.data));
  }
}

template <typename T, typename I>
void gatherT(const GatherLayout &l, const T *data, const I *idx, T *out) {
  int64_t items = l.outer * l.n;
  bool parallel = items * l.inner >= parallelGrain();
  size_t bytes = (size_t)l.inner * sizeof(T);
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t item = 0; item < items; ++item) {
    int64_t o = item / l.n, j = item % l.n;
    int64_t k = (int64_t)idx[j];
    if (k < 0)
      k += l.dim;
    const T *src = data + (o * l.dim + k) * l.inner;
    T *dst = out + item * l.inner;
    if (l.inner == 1)
      *dst = *src;
    else
      memcpy(dst, src, bytes);
  }
}

tidalrt_status_t gather(OpCall &op) {
  GatherLayout l;
  size_t es = checkGather(op, l);
  const TensorRef &data = op[0], &indices = op[1], &out = op[2];
  if (preparing(op.context))
    return ok();
  checkIndices(indices, l.dim);
  if (out.numel() == 0)
    return ok();
  withIndices(indices, [&](auto idx) {
    switch (es) {
    case 1:
      return gatherT(l, static_cast<const uint8_t *>(data.data), idx,
                     static_cast<uint8_t *>(out.data));
    case 2:
      return gatherT(l, static_cast<const uint16_t *>(data.data), idx,
                     static_cast<uint16_t *>(out.data));
    case 4:
      return gatherT(l, static_cast<const uint32_t *>(data.data), idx,
                     static_cast<uint32_t *>(out.data));
    default:
      return gatherT(l, static_cast<const uint64_t *>(data.data), idx,
                     static_cast<uint64_t *>(out.data));
    }
  });
  return ok();
}

// Scatters src (gathered shape) into out (data shape) in index order:
// combine(dst, src, w) merges a run of w columns. Each work item owns a
// block of 64 output columns, so no two touch one element.
template <typename I, typename Combine>
void scatterColumns(const GatherLayout &l, const float *src, const I *idx,
                    float *out, Combine combine) {
  constexpr int64_t kCols = 64;
  int64_t blocks = (l.inner + kCols - 1) / kCols;
  int64_t items = l.outer * blocks;
  bool parallel = l.outer * l.n * l.inner >= parallelGrain();
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t item = 0; item < items; ++item) {
    int64_t o = item / blocks, c0 = (item % blocks) * kCols;
    int64_t w = std::min(kCols, l.inner - c0);
    for (int64_t j = 0; j < l.n; ++j) {
      int64_t k = (int64_t)idx[j];
      if (k < 0)
        k += l.dim;
      combine(out + (o * l.dim + k) * l.inner + c0,
              src + (o * l.n + j) * l.inner + c0, w);
    }
  }
}

template <typename I>
void gatherBackwardT(const GatherLayout &l, const float *grad, const I *idx,
                     float *out) {
  scatterColumns(l, grad, idx, out,
                 [](float *dst, const float *src, int64_t w) {
                   for (int64_t i = 0; i < w; ++i)
                     dst[i] += src[i];
                 });
}

tidalrt_status_t gatherBackward(OpCall &op) {
  GatherLayout l = checkGatherBackward(op);
  const TensorRef &grad = op[0], &indices = op[1], &out = op[2];
  if (preparing(op.context))
    return ok();
  checkIndices(indices, l.dim);
  parallelZero(out.data, out.bytes());
  if (grad.numel() == 0)
    return ok();
  withIndices(indices, [&](auto idx) {
    gatherBackwardT(l, grad.f32(), idx, out.f32());
  });
  return ok();
}

//===----------------------------------------------------------------------===//
// scatter_extreme: data, indices, updates -> output; axis (0), largest (1).
//===----------------------------------------------------------------------===//

template <typename I>
void scatterExtremeT(const GatherLayout &l, const float *upd, const I *idx,
                     float *out, bool largest) {
  // A NaN wins and stays (every comparison with it is false).
  scatterColumns(
      l, upd, idx, out, [largest](float *dst, const float *src, int64_t w) {
        for (int64_t i = 0; i < w; ++i)
          if (src[i] != src[i] || (largest ? src[i] > dst[i] : src[i] < dst[i]))
            dst[i] = src[i];
      });
}

tidalrt_status_t scatterExtreme(OpCall &op) {
  GatherLayout l = checkScatterExtreme(op);
  const TensorRef &data = op[0], &indices = op[1], &updates = op[2],
                  &out = op[3];
  if (preparing(op.context))
    return ok();
  checkIndices(indices, l.dim);
  if (out.data != data.data)
    std::memcpy(out.data, data.data, out.bytes());
  if (updates.numel() == 0)
    return ok();
  bool largest = op.getInt(1) != 0;
  withIndices(indices, [&](auto idx) {
    scatterExtremeT(l, updates.f32(), idx, out.f32(), largest);
  });
  return ok();
}

//===----------------------------------------------------------------------===//
// Checks (data_movement_checks.h), shared with the CUDA kernels
//===----------------------------------------------------------------------===//

// Checks `full` (data) and `gathered` (output) shapes around `indices`.
GatherLayout gatherLayout(const OpCall &op, const TensorRef &full,
                          const TensorRef &indices, const TensorRef &gathered,
                          const char *gatheredName) {
  if (full.rank < 1)
    fail(TIDALRT_INVALID_ARGUMENT, "data must have rank >= 1");
  int axis = normalizeAxis(op.getInt(0), full.rank);
  bool match = gathered.rank == full.rank - 1 + indices.rank;
  for (int d = 0; match && d < axis; ++d)
    match = gathered.dims[d] == full.dims[d];
  for (int d = 0; match && d < indices.rank; ++d)
    match = gathered.dims[axis + d] == indices.dims[d];
  for (int d = axis + 1; match && d < full.rank; ++d)
    match = gathered.dims[indices.rank + d - 1] == full.dims[d];
  if (!match)
    fail(TIDALRT_INVALID_ARGUMENT,
         "%s shape is not data[:axis] + indices + data[axis+1:] (axis %d)",
         gatheredName, axis);
  return {product(full.dims, 0, axis), full.dims[axis],
          product(full.dims, axis + 1, full.rank), indices.numel()};
}

} // namespace

size_t checkGather(const OpCall &op, GatherLayout &l) {
  requireTensors(op, 3);
  const TensorRef &data = op[0], &out = op[2];
  const TensorRef &indices = requireIndex(op, 1, "indices");
  size_t es = elementSize(data, "data");
  requireSameType(data, "data", out, "output");
  l = gatherLayout(op, data, indices, out, "output");
  return es;
}

GatherLayout checkGatherBackward(const OpCall &op) {
  requireTensors(op, 3);
  const TensorRef &grad = requireF32(op, 0, "grad");
  const TensorRef &indices = requireIndex(op, 1, "indices");
  const TensorRef &out = requireF32(op, 2, "grad_input");
  return gatherLayout(op, out, indices, grad, "grad");
}

GatherLayout checkScatterExtreme(const OpCall &op) {
  requireTensors(op, 4);
  const TensorRef &data = requireF32(op, 0, "data");
  const TensorRef &indices = requireIndex(op, 1, "indices");
  const TensorRef &updates = requireF32(op, 2, "updates");
  const TensorRef &out = requireF32(op, 3, "output");
  bool same = out.rank == data.rank;
  for (int d = 0; same && d < data.rank; ++d)
    same = out.dims[d] == data.dims[d];
  if (!same)
    fail(TIDALRT_INVALID_ARGUMENT, "output shape differs from data's");
  return gatherLayout(op, data, indices, updates, "updates");
}

} // namespace other
} // namespace tidalrt

using namespace tidalrt;

extern "C" tidalrt_status_t tidalrt_k_gather(tidalrt_context_t *ctx,
                                             const int64_t *desc,
                                             void *const *buffers) {
  return runKernel(ctx, desc, buffers, "gather", other::gather);
}

extern "C" tidalrt_status_t tidalrt_k_gather_backward(tidalrt_context_t *ctx,
                                                      const int64_t *desc,
                                                      void *const *buffers) {
  return runKernel(ctx, desc, buffers, "gather_backward",
                   other::gatherBackward);
}

extern "C" tidalrt_status_t tidalrt_k_scatter_extreme(tidalrt_context_t *ctx,
                                                      const int64_t *desc,
                                                      void *const *buffers) {
  return runKernel(ctx, desc, buffers, "scatter_extreme",
                   other::scatterExtreme);
}
