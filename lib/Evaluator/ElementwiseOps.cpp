//===- ElementwiseOps.cpp - element-wise, dropout and broadcast kernels ---===//

#include "EvalSupport.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::eval;

/// out = f(lhs, rhs) with NumPy broadcasting to the result shape.
template <typename F>
static LogicalResult binary(Value lhs, Value rhs, EvalState &st, Tensor &out,
                            F f) {
  const Tensor &a = st.get(lhs), &b = st.get(rhs);
  SmallVector<int64_t> idx;
  for (int64_t i = 0, e = out.numElements(); i < e; ++i) {
    unravel(i, out.shape, idx);
    out.data[i] = f(a.data[broadcastFlat(idx, a.shape)],
                    b.data[broadcastFlat(idx, b.shape)]);
  }
  return success();
}

/// out = f(in) element by element.
template <typename F>
static LogicalResult unary(Value in, EvalState &st, Tensor &out, F f) {
  const Tensor &a = st.get(in);
  for (size_t i = 0; i < a.data.size(); ++i)
    out.data[i] = f(a.data[i]);
  return success();
}

/// out = f(grad, saved) element by element.
template <typename F>
static LogicalResult gradOp(Value grad, Value saved, EvalState &st, Tensor &out,
                            F f) {
  const Tensor &g = st.get(grad), &s = st.get(saved);
  for (size_t i = 0; i < g.data.size(); ++i)
    out.data[i] = f(g.data[i], s.data[i]);
  return success();
}

static LogicalResult evalDropout(DropoutOp op, EvalState &st,
                                 MutableArrayRef<Tensor> results) {
  const Tensor &x = st.get(op.getInput());
  double ratio = toDouble(op.getRatio());
  Tensor &out = results[0], &mask = results[1];
  if (!op.getTraining() || ratio == 0.0) {
    out.data = x.data;
    mask.data.assign(x.data.size(), 1.0);
    return success();
  }
  if (!(ratio > 0.0 && ratio < 1.0))
    return op.emitOpError("ratio ") << ratio << " is outside [0, 1)";
  // A uniform double in [0, 1) from the top 53 bits of each draw, so that
  // the mask depends on the seed only, not on the standard library.
  double scale = 1.0 / (1.0 - ratio);
  for (size_t i = 0; i < x.data.size(); ++i) {
    double u = static_cast<double>(st.rng() >> 11) * 0x1.0p-53;
    bool keep = u >= ratio;
    mask.data[i] = keep ? 1.0 : 0.0;
    out.data[i] = keep ? x.data[i] * scale : 0.0;
  }
  return success();
}

static LogicalResult evalDropoutBackward(DropoutBackwardOp op, EvalState &st,
                                         Tensor &out) {
  const Tensor &g = st.get(op.getGrad()), &m = st.get(op.getMask());
  double ratio = toDouble(op.getRatio());
  if (!(ratio >= 0.0 && ratio < 1.0))
    return op.emitOpError("ratio ") << ratio << " is outside [0, 1)";
  for (size_t i = 0; i < g.data.size(); ++i)
    out.data[i] = m.data[i] != 0.0 ? g.data[i] / (1.0 - ratio) : 0.0;
  return success();
}

static LogicalResult evalBroadcastTo(BroadcastToOp op, EvalState &st,
                                     Tensor &out) {
  const Tensor &in = st.get(op.getInput());
  if (in.shape.size() > out.shape.size())
    return op.emitOpError("cannot broadcast a rank-")
           << in.shape.size() << " tensor to rank " << out.shape.size();
  size_t offset = out.shape.size() - in.shape.size();
  for (size_t i = 0; i < in.shape.size(); ++i)
    if (in.shape[i] != 1 && in.shape[i] != out.shape[offset + i])
      return op.emitOpError("input dimension ")
             << i << " of size " << in.shape[i]
             << " does not broadcast to size " << out.shape[offset + i];
  SmallVector<int64_t> idx;
  for (int64_t i = 0, e = out.numElements(); i < e; ++i) {
    unravel(i, out.shape, idx);
    out.data[i] = in.data[broadcastFlat(idx, in.shape)];
  }
  return success();
}

Handled eval::evalElementwiseOp(Operation *op, EvalState &st,
                                MutableArrayRef<Tensor> results) {
  if (results.empty())
    return false;
  Tensor &out = results.front();
  return llvm::TypeSwitch<Operation *, Handled>(op)
      .Case([&](AddOp o) {
        return done(binary(o.getLhs(), o.getRhs(), st, out,
                           [](double a, double b) { return a + b; }));
      })
      .Case([&](SubOp o) {
        return done(binary(o.getLhs(), o.getRhs(), st, out,
                           [](double a, double b) { return a - b; }));
      })
      .Case([&](MulOp o) {
        return done(binary(o.getLhs(), o.getRhs(), st, out,
                           [](double a, double b) { return a * b; }));
      })
      .Case([&](DivOp o) -> Handled {
        if (!isFloat(out))
          for (double b : st.get(o.getRhs()).data)
            if (b == 0.0)
              return o.emitOpError("integer division by zero");
        return done(binary(o.getLhs(), o.getRhs(), st, out,
                           [](double a, double b) { return a / b; }));
      })
      .Case([&](PowOp o) {
        return done(binary(o.getLhs(), o.getRhs(), st, out,
                           [](double a, double b) { return std::pow(a, b); }));
      })
      .Case([&](NegOp o) {
        return done(unary(o.getInput(), st, out, [](double x) { return -x; }));
      })
      .Case([&](ReluOp o) {
        return done(unary(o.getInput(), st, out,
                          [](double x) { return x > 0.0 ? x : 0.0; }));
      })
      .Case([&](SigmoidOp o) {
        return done(unary(o.getInput(), st, out,
                          [](double x) { return 1.0 / (1.0 + std::exp(-x)); }));
      })
      .Case([&](TanhOp o) {
        return done(unary(o.getInput(), st, out,
                          [](double x) { return std::tanh(x); }));
      })
      .Case([&](SqrtOp o) {
        return done(unary(o.getInput(), st, out,
                          [](double x) { return std::sqrt(x); }));
      })
      .Case([&](ErfOp o) {
        return done(
            unary(o.getInput(), st, out, [](double x) { return std::erf(x); }));
      })
      .Case([&](ExpOp o) {
        return done(
            unary(o.getInput(), st, out, [](double x) { return std::exp(x); }));
      })
      .Case([&](GeluOp o) {
        return done(unary(o.getInput(), st, out, [](double x) {
          return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
        }));
      })
      .Case([&](LogOp o) {
        return done(
            unary(o.getInput(), st, out, [](double x) { return std::log(x); }));
      })
      .Case([&](IdentityOp o) {
        return done(unary(o.getInput(), st, out, [](double x) { return x; }));
      })
      .Case([&](LeakyReluOp o) {
        double alpha = toDouble(o.getAlpha());
        return done(unary(o.getInput(), st, out, [alpha](double x) {
          return x >= 0.0 ? x : alpha * x;
        }));
      })
      .Case([&](ReluBackwardOp o) {
        return done(
            gradOp(o.getGrad(), o.getSaved(), st, out,
                   [](double g, double y) { return y > 0.0 ? g : 0.0; }));
      })
      .Case([&](LeakyReluBackwardOp o) {
        double alpha = toDouble(o.getAlpha());
        return done(gradOp(
            o.getGrad(), o.getSaved(), st, out,
            [alpha](double g, double x) { return x > 0.0 ? g : alpha * g; }));
      })
      .Case([&](SigmoidBackwardOp o) {
        return done(
            gradOp(o.getGrad(), o.getSaved(), st, out,
                   [](double g, double y) { return g * y * (1.0 - y); }));
      })
      .Case([&](TanhBackwardOp o) {
        return done(
            gradOp(o.getGrad(), o.getSaved(), st, out,
                   [](double g, double y) { return g * (1.0 - y * y); }));
      })
      .Case([&](ErfBackwardOp o) {
        return done(
            gradOp(o.getGrad(), o.getSaved(), st, out, [](double g, double x) {
              return g * 2.0 / std::sqrt(M_PI) * std::exp(-x * x);
            }));
      })
      .Case([&](GeluBackwardOp o) {
        return done(
            gradOp(o.getGrad(), o.getSaved(), st, out, [](double g, double x) {
              double cdf = 0.5 * (1.0 + std::erf(x / std::sqrt(2.0)));
              double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
              return g * (cdf + x * pdf);
            }));
      })
      .Case([&](DropoutOp o) { return done(evalDropout(o, st, results)); })
      .Case([&](DropoutBackwardOp o) {
        return done(evalDropoutBackward(o, st, out));
      })
      .Case([&](BroadcastToOp o) { return done(evalBroadcastTo(o, st, out)); })
      .Default([](Operation *) -> Handled { return false; });
}
