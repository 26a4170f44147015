//===- ActivationOps.cpp - the activation family and element-wise math ----===//
//
// Written from the ONNX and PyTorch definitions in double, independently of
// the runtime's formulas (runtime/src/cpu/activation_math.h), so that the
// evaluator stays an oracle for them.
//
//===----------------------------------------------------------------------===//

#include "EvalSupport.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::eval;

/// out = f(in) element by element.
template <typename F>
static LogicalResult map1(Value in, EvalState &st, Tensor &out, F f) {
  const Tensor &a = st.get(in);
  for (size_t i = 0; i < a.data.size(); ++i)
    out.data[i] = f(a.data[i]);
  return success();
}

/// out = f(grad, x) element by element.
template <typename F>
static LogicalResult map2(Value grad, Value x, EvalState &st, Tensor &out,
                          F f) {
  const Tensor &g = st.get(grad), &s = st.get(x);
  for (size_t i = 0; i < g.data.size(); ++i)
    out.data[i] = f(g.data[i], s.data[i]);
  return success();
}

static double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
static double softplus(double x) {
  return x > 20.0 ? x : std::log1p(std::exp(x));
}
static double sign(double x) { return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : x); }

Handled eval::evalActivationOp(Operation *op, EvalState &st,
                               MutableArrayRef<Tensor> results) {
  if (results.empty())
    return false;
  Tensor &out = results.front();
  auto unary = [&](Value in, auto f) { return done(map1(in, st, out, f)); };
  auto grad = [&](auto o, auto f) {
    return done(map2(o.getGrad(), o.getSaved(), st, out, f));
  };
  return llvm::TypeSwitch<Operation *, Handled>(op)
      .Case([&](ClipOp o) {
        double lo = toDouble(o.getMin()), hi = toDouble(o.getMax());
        return unary(o.getInput(), [=](double x) {
          return std::isnan(x) ? x : std::min(std::max(x, lo), hi);
        });
      })
      .Case([&](HardSigmoidOp o) {
        double a = toDouble(o.getAlpha()), b = toDouble(o.getBeta());
        return unary(o.getInput(), [=](double x) {
          return std::max(0.0, std::min(1.0, a * x + b));
        });
      })
      .Case([&](HardSwishOp o) {
        return unary(o.getInput(), [](double x) {
          return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
        });
      })
      .Case([&](EluOp o) {
        double a = toDouble(o.getAlpha());
        return unary(o.getInput(), [=](double x) {
          return x > 0.0 ? x : a * (std::exp(x) - 1.0);
        });
      })
      .Case([&](SeluOp o) {
        double a = toDouble(o.getAlpha()), gm = toDouble(o.getGamma());
        return unary(o.getInput(), [=](double x) {
          return gm * (x > 0.0 ? x : a * (std::exp(x) - 1.0));
        });
      })
      .Case([&](CeluOp o) {
        double a = toDouble(o.getAlpha());
        return unary(o.getInput(), [=](double x) {
          return std::max(0.0, x) + std::min(0.0, a * (std::exp(x / a) - 1.0));
        });
      })
      .Case([&](SoftplusOp o) { return unary(o.getInput(), softplus); })
      .Case([&](SoftsignOp o) {
        return unary(o.getInput(),
                     [](double x) { return x / (1.0 + std::fabs(x)); });
      })
      .Case([&](MishOp o) {
        return unary(o.getInput(),
                     [](double x) { return x * std::tanh(softplus(x)); });
      })
      .Case([&](AbsOp o) {
        return unary(o.getInput(), [](double x) { return std::fabs(x); });
      })
      .Case([&](ReciprocalOp o) {
        return unary(o.getInput(), [](double x) { return 1.0 / x; });
      })
      .Case([&](SinOp o) {
        return unary(o.getInput(), [](double x) { return std::sin(x); });
      })
      .Case([&](CosOp o) {
        return unary(o.getInput(), [](double x) { return std::cos(x); });
      })
      .Case([&](TanOp o) {
        return unary(o.getInput(), [](double x) { return std::tan(x); });
      })
      .Case([&](AsinOp o) {
        return unary(o.getInput(), [](double x) { return std::asin(x); });
      })
      .Case([&](AcosOp o) {
        return unary(o.getInput(), [](double x) { return std::acos(x); });
      })
      .Case([&](AtanOp o) {
        return unary(o.getInput(), [](double x) { return std::atan(x); });
      })
      .Case([&](SinhOp o) {
        return unary(o.getInput(), [](double x) { return std::sinh(x); });
      })
      .Case([&](CoshOp o) {
        return unary(o.getInput(), [](double x) { return std::cosh(x); });
      })
      .Case([&](AsinhOp o) {
        return unary(o.getInput(), [](double x) { return std::asinh(x); });
      })
      .Case([&](AcoshOp o) {
        return unary(o.getInput(), [](double x) { return std::acosh(x); });
      })
      .Case([&](AtanhOp o) {
        return unary(o.getInput(), [](double x) { return std::atanh(x); });
      })
      .Case([&](SignOp o) { return unary(o.getInput(), sign); })
      .Case([&](FloorOp o) {
        return unary(o.getInput(), [](double x) { return std::floor(x); });
      })
      .Case([&](CeilOp o) {
        return unary(o.getInput(), [](double x) { return std::ceil(x); });
      })
      .Case([&](RoundOp o) {
        return unary(o.getInput(), [](double x) { return std::nearbyint(x); });
      })
      .Case([&](ClipBackwardOp o) {
        double lo = toDouble(o.getMin()), hi = toDouble(o.getMax());
        return grad(
            o, [=](double g, double x) { return x > lo && x < hi ? g : 0.0; });
      })
      .Case([&](HardSigmoidBackwardOp o) {
        double a = toDouble(o.getAlpha()), b = toDouble(o.getBeta());
        return grad(o, [=](double g, double x) {
          double v = a * x + b;
          return v > 0.0 && v < 1.0 ? a * g : 0.0;
        });
      })
      .Case([&](HardSwishBackwardOp o) {
        return grad(o, [](double g, double x) {
          return x < -3.0 ? 0.0 : (x <= 3.0 ? g * (x / 3.0 + 0.5) : g);
        });
      })
      .Case([&](EluBackwardOp o) {
        double a = toDouble(o.getAlpha());
        return grad(o, [=](double g, double x) {
          return x > 0.0 ? g : g * a * std::exp(x);
        });
      })
      .Case([&](SeluBackwardOp o) {
        double a = toDouble(o.getAlpha()), gm = toDouble(o.getGamma());
        return grad(o, [=](double g, double x) {
          return x > 0.0 ? g * gm : g * gm * a * std::exp(x);
        });
      })
      .Case([&](CeluBackwardOp o) {
        double a = toDouble(o.getAlpha());
        return grad(o, [=](double g, double x) {
          return x > 0.0 ? g : g * std::exp(x / a);
        });
      })
      .Case([&](SoftplusBackwardOp o) {
        return grad(o, [](double g, double x) {
          return x > 20.0 ? g : g * sigmoid(x);
        });
      })
      .Case([&](SoftsignBackwardOp o) {
        return grad(o, [](double g, double x) {
          double d = 1.0 + std::fabs(x);
          return g / (d * d);
        });
      })
      .Case([&](MishBackwardOp o) {
        return grad(o, [](double g, double x) {
          double t = std::tanh(softplus(x));
          return g * (t + x * sigmoid(x) * (1.0 - t * t));
        });
      })
      .Default([](Operation *) -> Handled { return false; });
}
