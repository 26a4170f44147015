//===- LinalgOps.cpp - gemm, matmul, reductions, argmax and argmin --------===//

#include "EvalSupport.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::eval;

static LogicalResult evalGemm(GemmOp op, EvalState &st, Tensor &out) {
  const Tensor &a = st.get(op.getA()), &b = st.get(op.getB());
  bool ta = op.getTransA(), tb = op.getTransB();
  int64_t m = out.shape[0], n = out.shape[1];
  int64_t k = ta ? a.shape[0] : a.shape[1];
  int64_t kb = tb ? b.shape[1] : b.shape[0];
  if (k != kb)
    return op.emitOpError("inner dimensions differ: ") << k << " vs " << kb;
  double alpha = toDouble(op.getAlpha()), beta = toDouble(op.getBeta());
  const Tensor *c = op.getC() ? &st.get(op.getC()) : nullptr;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        double av = ta ? a.data[p * m + i] : a.data[i * k + p];
        double bv = tb ? b.data[j * k + p] : b.data[p * n + j];
        acc += av * bv;
      }
      double v = alpha * acc;
      if (c) {
        int64_t idx[2] = {i, j};
        v += beta * c->data[broadcastFlat(idx, c->shape)];
      }
      out.data[i * n + j] = v;
    }
  }
  return success();
}

static LogicalResult evalMatMul(MatMulOp op, EvalState &st, Tensor &out) {
  const Tensor &a = st.get(op.getLhs()), &b = st.get(op.getRhs());
  // Promote 1-D operands to matrices as NumPy does.
  SmallVector<int64_t> as(a.shape), bs(b.shape);
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back();
  int64_t kb = bs[bs.size() - 2], n = bs.back();
  if (k != kb)
    return op.emitOpError("inner dimensions differ: ") << k << " vs " << kb;
  ArrayRef<int64_t> aBatch = ArrayRef<int64_t>(as).drop_back(2);
  ArrayRef<int64_t> bBatch = ArrayRef<int64_t>(bs).drop_back(2);
  size_t rank = std::max(aBatch.size(), bBatch.size());
  SmallVector<int64_t> batch(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da =
        i + aBatch.size() >= rank ? aBatch[i + aBatch.size() - rank] : 1;
    int64_t db =
        i + bBatch.size() >= rank ? bBatch[i + bBatch.size() - rank] : 1;
    if (da != db && da != 1 && db != 1)
      return op.emitOpError("batch dimensions do not broadcast");
    batch[i] = std::max(da, db);
  }
  int64_t nBatch = product(batch);
  if (nBatch * m * n != out.numElements())
    return op.emitOpError("result type does not match the operands");
  SmallVector<int64_t> idx;
  for (int64_t bi = 0; bi < nBatch; ++bi) {
    unravel(bi, batch, idx);
    int64_t aOff = broadcastFlat(idx, aBatch) * m * k;
    int64_t bOff = broadcastFlat(idx, bBatch) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int64_t p = 0; p < k; ++p)
          acc += a.data[aOff + i * k + p] * b.data[bOff + p * n + j];
        out.data[(bi * m + i) * n + j] = acc;
      }
  }
  return success();
}

namespace {
enum class ReduceKind { sum, mean, max, min, prod, argmax, argmin };
} // namespace

/// Whether `v` replaces `best` as the extreme of an arg reduction: NaN beats
/// any number (torch.argmax); ties go to the later element with `last`.
static bool beats(double v, double best, bool isMax, bool last) {
  if (std::isnan(best))
    return last && std::isnan(v);
  if (std::isnan(v))
    return true;
  if (v == best)
    return last;
  return isMax ? v > best : v < best;
}

/// Reduces `in` over `axes` into `out` (keepdims or not: the flat order is
/// the same). Max and min propagate NaN; an empty max is -inf, an empty min
/// +inf, an empty product 1 (each then rounded to the element type). The
/// arg kinds reduce one axis to the index along it.
static LogicalResult reduce(Operation *op, const Tensor &in,
                            ArrayRef<int64_t> axes, ReduceKind kind,
                            Tensor &out, bool lastIndex = false) {
  SmallVector<bool> reduced(in.shape.size(), false);
  int64_t count = 1;
  for (int64_t a : axes) {
    if (a < 0 || a >= static_cast<int64_t>(in.shape.size()))
      return op->emitOpError("axis ") << a << " is out of range";
    reduced[a] = true;
    count *= in.shape[a];
  }
  SmallVector<int64_t> kept(in.shape);
  for (size_t i = 0; i < kept.size(); ++i)
    if (reduced[i])
      kept[i] = 1;
  if (product(kept) != out.numElements())
    return op->emitOpError("result type does not match the reduction");
  bool arg = kind == ReduceKind::argmax || kind == ReduceKind::argmin;
  if (arg && count == 0 && out.numElements() > 0)
    return op->emitOpError("takes an index along an empty axis");
  double init = kind == ReduceKind::max    ? -INFINITY
                : kind == ReduceKind::min  ? INFINITY
                : kind == ReduceKind::prod ? 1.0
                                           : 0.0;
  std::fill(out.data.begin(), out.data.end(), init);
  // The extreme value so far of each arg result.
  std::vector<double> best(arg ? out.data.size() : 0);
  std::vector<bool> seen(best.size(), false);
  SmallVector<int64_t> keptStrides = stridesOf(kept), idx;
  for (int64_t i = 0, e = in.numElements(); i < e; ++i) {
    unravel(i, in.shape, idx);
    int64_t pos = 0; // the index along the reduced axis (arg kinds)
    for (size_t d = 0; d < idx.size(); ++d)
      if (reduced[d]) {
        pos = idx[d];
        idx[d] = 0;
      }
    int64_t o = ravel(idx, keptStrides);
    double v = in.data[i], &y = out.data[o];
    switch (kind) {
    case ReduceKind::sum:
    case ReduceKind::mean:
      y += v;
      break;
    case ReduceKind::max:
    case ReduceKind::min:
      if (std::isnan(v) || (kind == ReduceKind::max ? v > y : v < y))
        y = std::isnan(y) ? y : v;
      break;
    case ReduceKind::prod:
      y *= v;
      break;
    case ReduceKind::argmax:
    case ReduceKind::argmin:
      if (!seen[o] ||
          beats(v, best[o], kind == ReduceKind::argmax, lastIndex)) {
        seen[o] = true;
        best[o] = v;
        y = static_cast<double>(pos);
      }
      break;
    }
  }
  if (kind == ReduceKind::mean && count > 0)
    for (double &v : out.data)
      v /= static_cast<double>(count);
  return success();
}

Handled eval::evalLinalgOp(Operation *op, EvalState &st,
                           MutableArrayRef<Tensor> results) {
  auto over = [&](auto o, ReduceKind kind) {
    return done(reduce(o, st.get(o.getInput()), o.getAxes(), kind, results[0]));
  };
  auto along = [&](auto o, ReduceKind kind) {
    int64_t axis = o.getAxis();
    return done(reduce(o, st.get(o.getInput()), axis, kind, results[0],
                       o.getSelectLastIndex()));
  };
  return llvm::TypeSwitch<Operation *, Handled>(op)
      .Case([&](GemmOp o) { return done(evalGemm(o, st, results[0])); })
      .Case([&](MatMulOp o) { return done(evalMatMul(o, st, results[0])); })
      .Case([&](ReduceSumOp o) { return over(o, ReduceKind::sum); })
      .Case([&](ReduceMeanOp o) { return over(o, ReduceKind::mean); })
      .Case([&](ReduceMaxOp o) { return over(o, ReduceKind::max); })
      .Case([&](ReduceMinOp o) { return over(o, ReduceKind::min); })
      .Case([&](ReduceProdOp o) { return over(o, ReduceKind::prod); })
      .Case([&](ArgMaxOp o) { return along(o, ReduceKind::argmax); })
      .Case([&](ArgMinOp o) { return along(o, ReduceKind::argmin); })
      .Default([](Operation *) -> Handled { return false; });
}
