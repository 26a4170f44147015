//===- LogicOps.cpp - max, min, comparisons, mask logic, where ------------===//

#include "EvalSupport.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::eval;

/// out = f(operands...) with NumPy broadcasting to the result shape.
template <typename F>
static LogicalResult broadcastMap(ValueRange operands, EvalState &st,
                                  Tensor &out, F f) {
  SmallVector<const Tensor *> in;
  for (Value v : operands)
    in.push_back(&st.get(v));
  SmallVector<int64_t> idx;
  SmallVector<double> args(in.size());
  for (int64_t i = 0, e = out.numElements(); i < e; ++i) {
    unravel(i, out.shape, idx);
    for (size_t k = 0; k < in.size(); ++k)
      args[k] = in[k]->data[broadcastFlat(idx, in[k]->shape)];
    out.data[i] = f(args);
  }
  return success();
}

Handled eval::evalLogicOp(Operation *op, EvalState &st,
                          MutableArrayRef<Tensor> results) {
  if (results.empty())
    return false;
  Tensor &out = results.front();
  auto map = [&](auto f) {
    return done(broadcastMap(op->getOperands(), st, out,
                             [&](ArrayRef<double> a) { return f(a); }));
  };
  auto pair = [&](auto f) {
    return map([f](ArrayRef<double> a) { return f(a[0], a[1]) ? 1.0 : 0.0; });
  };
  return llvm::TypeSwitch<Operation *, Handled>(op)
      .Case([&](MaxOp) {
        return map([](ArrayRef<double> a) {
          return std::isnan(a[0]) || std::isnan(a[1]) ? NAN
                                                      : std::max(a[0], a[1]);
        });
      })
      .Case([&](MinOp) {
        return map([](ArrayRef<double> a) {
          return std::isnan(a[0]) || std::isnan(a[1]) ? NAN
                                                      : std::min(a[0], a[1]);
        });
      })
      .Case([&](EqualOp) {
        return pair([](double a, double b) { return a == b; });
      })
      .Case([&](LessOp) {
        return pair([](double a, double b) { return a < b; });
      })
      .Case([&](LessOrEqualOp) {
        return pair([](double a, double b) { return a <= b; });
      })
      .Case([&](GreaterOp) {
        return pair([](double a, double b) { return a > b; });
      })
      .Case([&](GreaterOrEqualOp) {
        return pair([](double a, double b) { return a >= b; });
      })
      .Case([&](LogicalAndOp) {
        return pair([](double a, double b) { return a != 0 && b != 0; });
      })
      .Case([&](LogicalOrOp) {
        return pair([](double a, double b) { return a != 0 || b != 0; });
      })
      .Case([&](LogicalXorOp) {
        return pair([](double a, double b) { return (a != 0) != (b != 0); });
      })
      .Case([&](LogicalNotOp) {
        return map([](ArrayRef<double> a) { return a[0] == 0 ? 1.0 : 0.0; });
      })
      .Case([&](CastOp o) {
        Type elt = o.getOutput().getType().getElementType();
        bool fromFloat =
            isa<FloatType>(o.getInput().getType().getElementType());
        auto it = dyn_cast<IntegerType>(elt);
        return map([&](ArrayRef<double> a) {
          double x = a[0];
          if (elt.isInteger(1))
            return x != 0 ? 1.0 : 0.0;
          if (it && fromFloat) { // truncate, NaN to 0, saturate
            if (std::isnan(x))
              return 0.0;
            unsigned w = it.getWidth();
            double lo = it.isUnsigned() ? 0.0 : -std::ldexp(1.0, w - 1);
            double hi = it.isUnsigned() ? std::ldexp(1.0, w) - 1
                                        : std::ldexp(1.0, w - 1) - 1;
            return std::min(std::max(std::trunc(x), lo), hi);
          }
          return x;
        });
      })
      .Case([&](WhereOp) {
        return map([](ArrayRef<double> a) { return a[0] != 0 ? a[1] : a[2]; });
      })
      .Default([](Operation *) -> Handled { return false; });
}
