//===- ConvPoolOps.cpp - convolution and pooling kernels, with backwards --===//

#include "EvalSupport.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::eval;

namespace {
/// The geometry of an N-d sliding window over the spatial dims of an
/// `[N, C, D1..Dk]` input producing `[N, C', O1..Ok]`.
struct Window {
  SmallVector<int64_t> in, out, kernel, strides, padBegin, dilations;

  /// The spatial input position of output position `o` and kernel offset
  /// `k` as a flat index into the input's spatial dims, or -1 when it falls
  /// in the padding.
  int64_t inputFlat(ArrayRef<int64_t> o, ArrayRef<int64_t> k) const {
    int64_t flat = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      int64_t i = o[d] * strides[d] - padBegin[d] + k[d] * dilations[d];
      if (i < 0 || i >= in[d])
        return -1;
      flat = flat * in[d] + i;
    }
    return flat;
  }
};
} // namespace

/// Builds the window from the input and output shapes and the attributes,
/// checking their sizes. `dilations` may be empty (all 1).
static FailureOr<Window>
makeWindow(Operation *op, ArrayRef<int64_t> inShape, ArrayRef<int64_t> outShape,
           ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
           ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations) {
  if (inShape.size() < 2 || inShape.size() != outShape.size())
    return op->emitOpError("expects input and output of equal rank >= 2");
  size_t k = inShape.size() - 2;
  if (kernel.size() != k || strides.size() != k || pads.size() != 2 * k ||
      (!dilations.empty() && dilations.size() != k))
    return op->emitOpError("window attributes do not match ")
           << k << " spatial dimensions";
  Window w;
  w.in.assign(inShape.begin() + 2, inShape.end());
  w.out.assign(outShape.begin() + 2, outShape.end());
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides.assign(strides.begin(), strides.end());
  w.padBegin.assign(pads.begin(), pads.begin() + k);
  if (dilations.empty())
    w.dilations.assign(k, 1);
  else
    w.dilations.assign(dilations.begin(), dilations.end());
  return w;
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

namespace {
/// The index space shared by the forward convolution and its two backwards.
struct ConvGeometry {
  Window win;
  int64_t n, c, m, group, cg, mg, inSp, outSp, kSp;
};
} // namespace

static FailureOr<ConvGeometry>
makeConvGeometry(Operation *op, ArrayRef<int64_t> inShape,
                 ArrayRef<int64_t> wShape, ArrayRef<int64_t> outShape,
                 ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                 ArrayRef<int64_t> dilations, int64_t group) {
  if (wShape.size() != inShape.size())
    return op->emitOpError("weight rank differs from the input rank");
  FailureOr<Window> win = makeWindow(
      op, inShape, outShape, wShape.drop_front(2), strides, pads, dilations);
  if (failed(win))
    return failure();
  ConvGeometry g{*win, inShape[0], inShape[1], wShape[0], group, 0, 0, 0, 0, 0};
  if (group < 1 || g.c % group || g.m % group || wShape[1] != g.c / group ||
      outShape[1] != g.m || outShape[0] != g.n)
    return op->emitOpError("channels do not match: input ")
           << g.c << ", weight [" << g.m << ", " << wShape[1] << "], group "
           << group << ", output " << outShape[1];
  g.cg = g.c / group;
  g.mg = g.m / group;
  g.inSp = product(g.win.in);
  g.outSp = product(g.win.out);
  g.kSp = product(g.win.kernel);
  return g;
}

/// Calls f(inIndex, weightIndex, outIndex) for every multiply-add of the
/// convolution, skipping padding.
template <typename F> static void forEachConvTerm(const ConvGeometry &g, F f) {
  SmallVector<int64_t> o, k;
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t m = 0; m < g.m; ++m) {
      int64_t grp = m / g.mg;
      for (int64_t os = 0; os < g.outSp; ++os) {
        unravel(os, g.win.out, o);
        int64_t outIndex = (n * g.m + m) * g.outSp + os;
        for (int64_t c = 0; c < g.cg; ++c)
          for (int64_t ks = 0; ks < g.kSp; ++ks) {
            unravel(ks, g.win.kernel, k);
            int64_t is = g.win.inputFlat(o, k);
            if (is < 0)
              continue;
            int64_t inIndex = (n * g.c + grp * g.cg + c) * g.inSp + is;
            int64_t wIndex = (m * g.cg + c) * g.kSp + ks;
            f(inIndex, wIndex, outIndex);
          }
      }
    }
}

static LogicalResult evalConv(ConvOp op, EvalState &st, Tensor &out) {
  const Tensor &x = st.get(op.getInput()), &w = st.get(op.getWeight());
  FailureOr<ConvGeometry> g =
      makeConvGeometry(op, x.shape, w.shape, out.shape, op.getStrides(),
                       op.getPads(), op.getDilations(), op.getGroup());
  if (failed(g))
    return failure();
  if (op.getBias()) {
    const Tensor &b = st.get(op.getBias());
    if (b.numElements() != g->m)
      return op.emitOpError("bias has ")
             << b.numElements() << " elements, expected " << g->m;
    for (int64_t i = 0, e = out.numElements(); i < e; ++i)
      out.data[i] = b.data[(i / g->outSp) % g->m];
  }
  forEachConvTerm(*g, [&](int64_t in, int64_t wi, int64_t o) {
    out.data[o] += x.data[in] * w.data[wi];
  });
  return success();
}

static LogicalResult evalConvBackwardData(ConvBackwardDataOp op, EvalState &st,
                                          Tensor &out) {
  const Tensor &dy = st.get(op.getGrad()), &w = st.get(op.getWeight());
  FailureOr<ConvGeometry> g =
      makeConvGeometry(op, out.shape, w.shape, dy.shape, op.getStrides(),
                       op.getPads(), op.getDilations(), op.getGroup());
  if (failed(g))
    return failure();
  forEachConvTerm(*g, [&](int64_t in, int64_t wi, int64_t o) {
    out.data[in] += dy.data[o] * w.data[wi];
  });
  return success();
}

static LogicalResult evalConvBackwardWeights(ConvBackwardWeightsOp op,
                                             EvalState &st, Tensor &out) {
  const Tensor &dy = st.get(op.getGrad()), &x = st.get(op.getInput());
  FailureOr<ConvGeometry> g =
      makeConvGeometry(op, x.shape, out.shape, dy.shape, op.getStrides(),
                       op.getPads(), op.getDilations(), op.getGroup());
  if (failed(g))
    return failure();
  forEachConvTerm(*g, [&](int64_t in, int64_t wi, int64_t o) {
    out.data[wi] += dy.data[o] * x.data[in];
  });
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Calls f(plane, outFlat, window) for each output position of each
/// [n, c] plane, where `window` lists the in-bounds spatial input positions
/// in window order.
template <typename F>
static void forEachWindow(const Window &w, int64_t planes, F f) {
  int64_t outSp = product(w.out), kSp = product(w.kernel);
  SmallVector<int64_t> o, k, positions;
  for (int64_t os = 0; os < outSp; ++os) {
    unravel(os, w.out, o);
    positions.clear();
    for (int64_t ks = 0; ks < kSp; ++ks) {
      unravel(ks, w.kernel, k);
      int64_t is = w.inputFlat(o, k);
      if (is >= 0)
        positions.push_back(is);
    }
    for (int64_t p = 0; p < planes; ++p)
      f(p, os, positions);
  }
}

/// The divisor of average pooling at output position `os`: the in-bounds
/// count, or with `count_include_pad` the window clipped to the padded input
/// (PyTorch's rule, which ONNX follows).
static int64_t averageDivisor(const Window &w, ArrayRef<int64_t> pads,
                              int64_t os, bool countIncludePad,
                              int64_t inBounds) {
  if (!countIncludePad)
    return inBounds;
  SmallVector<int64_t> o;
  unravel(os, w.out, o);
  int64_t size = 1;
  size_t k = w.in.size();
  for (size_t d = 0; d < k; ++d) {
    int64_t start = o[d] * w.strides[d] - w.padBegin[d];
    int64_t end = std::min(start + w.kernel[d], w.in[d] + pads[k + d]);
    size *= end - start;
  }
  return size;
}

static LogicalResult evalMaxPool(MaxPoolOp op, EvalState &st, Tensor &out) {
  const Tensor &x = st.get(op.getInput());
  FailureOr<Window> w =
      makeWindow(op, x.shape, out.shape, op.getKernelShape(), op.getStrides(),
                 op.getPads(), op.getDilations());
  if (failed(w))
    return failure();
  int64_t inSp = product(w->in), outSp = product(w->out);
  forEachWindow(*w, x.shape[0] * x.shape[1],
                [&](int64_t p, int64_t os, ArrayRef<int64_t> window) {
                  double best = -std::numeric_limits<double>::infinity();
                  for (int64_t is : window)
                    best = std::max(best, x.data[p * inSp + is]);
                  out.data[p * outSp + os] = best;
                });
  return success();
}

static LogicalResult evalMaxPoolBackward(MaxPoolBackwardOp op, EvalState &st,
                                         Tensor &out) {
  const Tensor &dy = st.get(op.getGrad()), &x = st.get(op.getInput());
  FailureOr<Window> w =
      makeWindow(op, x.shape, dy.shape, op.getKernelShape(), op.getStrides(),
                 op.getPads(), op.getDilations());
  if (failed(w))
    return failure();
  int64_t inSp = product(w->in), outSp = product(w->out);
  forEachWindow(*w, x.shape[0] * x.shape[1],
                [&](int64_t p, int64_t os, ArrayRef<int64_t> window) {
                  int64_t arg = -1;
                  for (int64_t is : window)
                    if (arg < 0 ||
                        x.data[p * inSp + is] > x.data[p * inSp + arg])
                      arg = is;
                  if (arg >= 0)
                    out.data[p * inSp + arg] += dy.data[p * outSp + os];
                });
  return success();
}

static LogicalResult evalAveragePool(AveragePoolOp op, EvalState &st,
                                     Tensor &out) {
  const Tensor &x = st.get(op.getInput());
  FailureOr<Window> w = makeWindow(op, x.shape, out.shape, op.getKernelShape(),
                                   op.getStrides(), op.getPads(), {});
  if (failed(w))
    return failure();
  int64_t inSp = product(w->in), outSp = product(w->out);
  bool include = op.getCountIncludePad();
  forEachWindow(*w, x.shape[0] * x.shape[1],
                [&](int64_t p, int64_t os, ArrayRef<int64_t> window) {
                  double sum = 0.0;
                  for (int64_t is : window)
                    sum += x.data[p * inSp + is];
                  int64_t div = averageDivisor(*w, op.getPads(), os, include,
                                               window.size());
                  out.data[p * outSp + os] = div > 0 ? sum / div : 0.0;
                });
  return success();
}

static LogicalResult evalAveragePoolBackward(AveragePoolBackwardOp op,
                                             EvalState &st, Tensor &out) {
  const Tensor &dy = st.get(op.getGrad());
  FailureOr<Window> w = makeWindow(op, out.shape, dy.shape, op.getKernelShape(),
                                   op.getStrides(), op.getPads(), {});
  if (failed(w))
    return failure();
  int64_t inSp = product(w->in), outSp = product(w->out);
  bool include = op.getCountIncludePad();
  forEachWindow(*w, out.shape[0] * out.shape[1],
                [&](int64_t p, int64_t os, ArrayRef<int64_t> window) {
                  int64_t div = averageDivisor(*w, op.getPads(), os, include,
                                               window.size());
                  if (div <= 0)
                    return;
                  for (int64_t is : window)
                    out.data[p * inSp + is] += dy.data[p * outSp + os] / div;
                });
  return success();
}

static LogicalResult evalGlobalAveragePool(GlobalAveragePoolOp op,
                                           EvalState &st, Tensor &out) {
  const Tensor &x = st.get(op.getInput());
  if (x.shape.size() < 2)
    return op.emitOpError("expects an input of rank >= 2");
  int64_t planes = x.shape[0] * x.shape[1];
  int64_t sp = planes ? x.numElements() / planes : 0;
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0.0;
    for (int64_t i = 0; i < sp; ++i)
      sum += x.data[p * sp + i];
    out.data[p] = sp ? sum / sp : 0.0;
  }
  return success();
}

Handled eval::evalConvPoolOp(Operation *op, EvalState &st,
                             MutableArrayRef<Tensor> results) {
  return llvm::TypeSwitch<Operation *, Handled>(op)
      .Case([&](ConvOp o) { return done(evalConv(o, st, results[0])); })
      .Case([&](ConvBackwardDataOp o) {
        return done(evalConvBackwardData(o, st, results[0]));
      })
      .Case([&](ConvBackwardWeightsOp o) {
        return done(evalConvBackwardWeights(o, st, results[0]));
      })
      .Case([&](MaxPoolOp o) { return done(evalMaxPool(o, st, results[0])); })
      .Case([&](MaxPoolBackwardOp o) {
        return done(evalMaxPoolBackward(o, st, results[0]));
      })
      .Case([&](AveragePoolOp o) {
        return done(evalAveragePool(o, st, results[0]));
      })
      .Case([&](AveragePoolBackwardOp o) {
        return done(evalAveragePoolBackward(o, st, results[0]));
      })
      .Case([&](GlobalAveragePoolOp o) {
        return done(evalGlobalAveragePool(o, st, results[0]));
      })
      .Default([](Operation *) -> Handled { return false; });
}
