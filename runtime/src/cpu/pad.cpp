// pad.cpp - the CPU kernels of tidal.pad (constant, reflect, edge) and
// pad_backward; the index arithmetic is pad_math.h's, shared with the CUDA
// kernels. Forward copies bits (only the element size matters, except for
// the constant fill value); backward gathers each input element's
// gradient in a fixed order, so both give the same bits as the GPU.
#include "broadcast.h"
#include "kernel.h"
#include "pad_checks.h"

#include <cstring>

using namespace tidalrt;
using namespace tidalrt::ew;
using pad::PadMap;

namespace {

// Fills the map from pads (begin then end) for a call whose output (or
// grad) is `out` and input (or grad_input) is `in`.
PadMap buildMap(const TensorRef &in, const TensorRef &out, const OpCall &op,
                const char *inName, const char *outName) {
  PadMap m;
  const int64_t *pads = nullptr;
  const int64_t count = op.getInts(1, &pads);
  const int64_t mode = op.getInt(0);
  if (mode < pad::Constant || mode > pad::Edge)
    fail(TIDALRT_INVALID_ARGUMENT,
         "mode %lld is not 0 (constant), 1 "
         "(reflect) or 2 (edge)",
         (long long)mode);
  if (in.rank != out.rank || count != 2 * (int64_t)in.rank)
    fail(TIDALRT_INVALID_ARGUMENT,
         "%s of rank %d, %s of rank %d and %lld pads; 2 per dimension "
         "expected",
         inName, in.rank, outName, out.rank, (long long)count);
  if (in.rank > PadMap::kMaxRank)
    fail(TIDALRT_UNSUPPORTED, "rank %d; at most %d is supported", in.rank,
         PadMap::kMaxRank);
  m.rank = in.rank;
  m.mode = (int)mode;
  for (int d = 0; d < in.rank; ++d) {
    const int64_t b = pads[d], e = pads[in.rank + d], n = in.dims[d];
    if (b < 0 || e < 0)
      fail(TIDALRT_INVALID_ARGUMENT, "negative padding on dimension %d", d);
    if (out.dims[d] != n + b + e) {
      char b1[160], b2[160];
      fail(TIDALRT_INVALID_ARGUMENT,
           "%s of shape %s padded is not the %s's shape %s", inName,
           shapeString(in, b1, sizeof b1), outName,
           shapeString(out, b2, sizeof b2));
    }
    if (mode == pad::Reflect && (b > n - 1 || e > n - 1) && (b || e))
      fail(TIDALRT_INVALID_ARGUMENT,
           "reflect padding (%lld, %lld) of dimension %d of size %lld "
           "exceeds the size minus one",
           (long long)b, (long long)e, d, (long long)n);
    if (mode == pad::Edge && n == 0 && (b || e))
      fail(TIDALRT_INVALID_ARGUMENT, "edge padding of the empty dimension %d",
           d);
    m.in[d] = n;
    m.out[d] = out.dims[d];
    m.begin[d] = b;
  }
  return m;
}

template <typename T> void fillValue(const OpCall &op, void *out) {
  const T v = (T)op.getFloat(2);
  std::memcpy(out, &v, sizeof v);
}

} // namespace

PadMap tidalrt::ew::checkPad(const OpCall &op, size_t &elementSize) {
  expectTensors(op, 2);
  const TensorRef &x = op[0], &y = op[1];
  if (x.type != y.type)
    fail(TIDALRT_INVALID_ARGUMENT, "input %s with a %s result; they must match",
         typeName(x.type), typeName(y.type));
  elementSize = tidalrt_element_type_size((tidalrt_element_type_t)x.type);
  if (elementSize != 1 && elementSize != 2 && elementSize != 4 &&
      elementSize != 8)
    fail(TIDALRT_UNSUPPORTED, "element type %s is not supported",
         typeName(x.type));
  return buildMap(x, y, op, "input", "output");
}

PadMap tidalrt::ew::checkPadBackward(const OpCall &op) {
  expectTensors(op, 2);
  const TensorRef &g = op[0], &gi = op[1];
  if (g.type != gi.type || (g.type != TIDALRT_ELEMENT_TYPE_F32 &&
                            g.type != TIDALRT_ELEMENT_TYPE_F64))
    fail(TIDALRT_UNSUPPORTED,
         "grad %s and grad_input %s; float32 or float64, matching, expected",
         typeName(g.type), typeName(gi.type));
  return buildMap(gi, g, op, "grad_input", "grad");
}

namespace {

template <typename T>
void runPad(const PadMap &m, const void *x, void *y, int64_t n,
            const unsigned char *fill) {
  const T *X = static_cast<const T *>(x);
  T *Y = static_cast<T *>(y);
  T v;
  std::memcpy(&v, fill, sizeof v);
  parallelChunks(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t s = m.sourceOffset(i);
      Y[i] = s < 0 ? v : X[s];
    }
  });
}

tidalrt_status_t padKernel(OpCall &op) {
  size_t size = 0;
  const PadMap m = checkPad(op, size);
  const TensorRef &x = op[0], &y = op[1];
  unsigned char fill[8] = {};
  switch (x.type) { // the fill value in the element type
  case TIDALRT_ELEMENT_TYPE_F32:
    fillValue<float>(op, fill);
    break;
  case TIDALRT_ELEMENT_TYPE_F64:
    fillValue<double>(op, fill);
    break;
  case TIDALRT_ELEMENT_TYPE_I64:
    fillValue<int64_t>(op, fill);
    break;
  case TIDALRT_ELEMENT_TYPE_I32:
    fillValue<int32_t>(op, fill);
    break;
  case TIDALRT_ELEMENT_TYPE_BOOL:
    fill[0] = op.getFloat(2) != 0.0;
    break;
  default:
    if (m.mode == pad::Constant && op.getFloat(2) != 0.0)
      fail(TIDALRT_UNSUPPORTED, "a constant fill of %g for element type %s",
           op.getFloat(2), typeName(x.type));
  }
  const int64_t n = y.numel();
  if (preparing(op.context) || n == 0)
    return ok();
  switch (size) {
  case 1:
    runPad<uint8_t>(m, x.data, y.data, n, fill);
    break;
  case 2:
    runPad<uint16_t>(m, x.data, y.data, n, fill);
    break;
  case 4:
    runPad<uint32_t>(m, x.data, y.data, n, fill);
    break;
  default:
    runPad<uint64_t>(m, x.data, y.data, n, fill);
    break;
  }
  return ok();
}

template <typename T> void runPadBackward(const PadMap &m, const OpCall &op) {
  const T *G = static_cast<const T *>(op[0].data);
  T *GI = static_cast<T *>(op[1].data);
  parallelChunks(op[1].numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      GI[i] = (T)m.gatherGrad(G, i);
  });
}

tidalrt_status_t padBackwardKernel(OpCall &op) {
  const PadMap m = checkPadBackward(op);
  if (preparing(op.context) || op[1].numel() == 0)
    return ok();
  if (op[0].type == TIDALRT_ELEMENT_TYPE_F32)
    runPadBackward<float>(m, op);
  else
    runPadBackward<double>(m, op);
  return ok();
}

} // namespace

extern "C" tidalrt_status_t tidalrt_k_pad(tidalrt_context_t *ctx,
                                          const int64_t *desc,
                                          void *const *buffers) {
  return runKernel(ctx, desc, buffers, "pad", padKernel);
}

extern "C" tidalrt_status_t tidalrt_k_pad_backward(tidalrt_context_t *ctx,
                                                   const int64_t *desc,
                                                   void *const *buffers) {
  return runKernel(ctx, desc, buffers, "pad_backward", padBackwardKernel);
}
