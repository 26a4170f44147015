//===- PadOps.cpp - tidal.pad and pad_backward ----------------------------===//
//
// The forward pass as NumPy pads; the backward pass scatters every output
// gradient to the input element it read (the runtime gathers instead, so
// the two are independent).
//
//===----------------------------------------------------------------------===//

#include "EvalSupport.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::eval;

/// The input offset of output element `flat`, or -1 for the fill value.
static int64_t sourceOf(int64_t flat, ArrayRef<int64_t> in,
                        ArrayRef<int64_t> out, ArrayRef<int64_t> pads,
                        PadMode mode) {
  SmallVector<int64_t> idx;
  unravel(flat, out, idx);
  int64_t off = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t n = in[d], i = idx[d] - pads[d];
    if (i < 0 || i >= n) {
      if (mode == PadMode::constant)
        return -1;
      if (mode == PadMode::edge)
        i = i < 0 ? 0 : n - 1;
      while (i < 0 || i >= n) // reflect
        i = i < 0 ? -i : 2 * (n - 1) - i;
    }
    off = off * n + i;
  }
  return off;
}

Handled eval::evalPadOp(Operation *op, EvalState &st,
                        MutableArrayRef<Tensor> results) {
  if (results.empty())
    return false;
  Tensor &out = results.front();
  return llvm::TypeSwitch<Operation *, Handled>(op)
      .Case([&](PadOp o) {
        const Tensor &in = st.get(o.getInput());
        double value = o.getValue().convertToDouble();
        for (int64_t i = 0, e = out.numElements(); i < e; ++i) {
          int64_t s =
              sourceOf(i, in.shape, out.shape, o.getPads(), o.getMode());
          out.data[i] = s < 0 ? value : in.data[s];
        }
        return true;
      })
      .Case([&](PadBackwardOp o) {
        const Tensor &g = st.get(o.getGrad());
        for (int64_t i = 0, e = g.numElements(); i < e; ++i) {
          int64_t s = sourceOf(i, out.shape, g.shape, o.getPads(), o.getMode());
          if (s >= 0)
            out.data[s] += g.data[i];
        }
        return true;
      })
      .Default([](Operation *) -> Handled { return false; });
}
