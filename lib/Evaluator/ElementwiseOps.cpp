//===- ElementwiseOps.cpp - element-wise, dropout and broadcast kernels ---===//

#include "EvalSupport.h"

#include "tidal/Dialect/Tidal/IR/FusedProgram.h"
#include "tidalrt/fused_program.h"

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

/// The value of one element-wise step (the ops a tidal.fused_elementwise
/// step may replace): a op b for the binary ops, f(a) for the unary ones,
/// the backward ops' rule for a = grad, b = saved. `param` is leaky_relu's
/// alpha. The per-op cases below evaluate through it too.
static double stepValue(int64_t opcode, double a, double b, double param) {
  switch (opcode) {
  case TIDALRT_FUSED_ADD:
    return a + b;
  case TIDALRT_FUSED_SUB:
    return a - b;
  case TIDALRT_FUSED_MUL:
    return a * b;
  case TIDALRT_FUSED_DIV:
    return a / b;
  case TIDALRT_FUSED_NEG:
    return -a;
  case TIDALRT_FUSED_RELU:
    return a > 0.0 ? a : 0.0;
  case TIDALRT_FUSED_SIGMOID:
    return 1.0 / (1.0 + std::exp(-a));
  case TIDALRT_FUSED_TANH:
    return std::tanh(a);
  case TIDALRT_FUSED_SQRT:
    return std::sqrt(a);
  case TIDALRT_FUSED_ERF:
    return std::erf(a);
  case TIDALRT_FUSED_EXP:
    return std::exp(a);
  case TIDALRT_FUSED_LOG:
    return std::log(a);
  case TIDALRT_FUSED_LEAKY_RELU:
    return a >= 0.0 ? a : param * a;
  case TIDALRT_FUSED_GELU:
    return 0.5 * a * (1.0 + std::erf(a / std::sqrt(2.0)));
  case TIDALRT_FUSED_RELU_BACKWARD:
    return b > 0.0 ? a : 0.0;
  case TIDALRT_FUSED_LEAKY_RELU_BACKWARD:
    return b > 0.0 ? a : param * a;
  case TIDALRT_FUSED_SIGMOID_BACKWARD:
    return a * b * (1.0 - b);
  case TIDALRT_FUSED_TANH_BACKWARD:
    return a * (1.0 - b * b);
  case TIDALRT_FUSED_ERF_BACKWARD:
    return a * 2.0 / std::sqrt(M_PI) * std::exp(-b * b);
  case TIDALRT_FUSED_GELU_BACKWARD: {
    double cdf = 0.5 * (1.0 + std::erf(b / std::sqrt(2.0)));
    double pdf = std::exp(-0.5 * b * b) / std::sqrt(2.0 * M_PI);
    return a * (cdf + b * pdf);
  }
  }
  return std::nan("");
}

/// tidal.fused_elementwise: each step over every element, each step's value
/// rounded to float32 as the op it replaces rounds its result.
static LogicalResult evalFused(FusedElementwiseOp op, EvalState &st,
                               MutableArrayRef<Tensor> results) {
  std::optional<SmallVector<FusedStep>> steps =
      decodeFusedProgram(op.getProgram());
  if (!steps)
    return op.emitOpError("malformed program");
  const size_t numInputs = op.getInputs().size();
  const int64_t n = results.front().numElements();
  SmallVector<const Tensor *> inputs;
  for (Value v : op.getInputs())
    inputs.push_back(&st.get(v));
  SmallVector<double> regs(numInputs + steps->size());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t r = 0; r < numInputs; ++r)
      regs[r] =
          inputs[r]->data.size() == 1 ? inputs[r]->data[0] : inputs[r]->data[i];
    for (auto [k, step] : llvm::enumerate(*steps)) {
      double b = step.b >= 0 ? regs[step.b] : 0.0;
      regs[numInputs + k] = static_cast<float>(
          stepValue(step.opcode, regs[step.a], b, step.param));
    }
    for (auto [j, r] : llvm::enumerate(op.getOutputs()))
      results[j].data[i] = regs[r];
  }
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

// random_normal / random_uniform: from the evaluator's generator, like
// dropout (the executable's draws are keyed by step and stream instead;
// both are correct in distribution, not equal). Uniforms on the runtime's
// 2^-24 grid; normals by Box-Muller.
static LogicalResult evalRandom(Operation *op, EvalState &st, Tensor &out) {
  auto uniform = [&] {
    return static_cast<double>(st.rng() >> 40) * 0x1.0p-24;
  };
  if (auto normal = dyn_cast<RandomNormalOp>(op)) {
    double mean = toDouble(normal.getMean()),
           scale = toDouble(normal.getScale());
    for (double &v : out.data) {
      double u1 = 1.0 - uniform(), u2 = uniform();
      v = mean + scale * std::sqrt(-2.0 * std::log(u1)) *
                     std::cos(6.283185307179586 * u2);
    }
    return success();
  }
  auto u = cast<RandomUniformOp>(op);
  double low = toDouble(u.getLow()), high = toDouble(u.getHigh());
  for (double &v : out.data)
    v = low + (high - low) * uniform();
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

/// The per-op formulas of stepValue as the unary/binary/gradOp helpers take
/// them.
static auto step1(int64_t opcode, double param = 0.0) {
  return [=](double x) { return stepValue(opcode, x, 0.0, param); };
}
static auto step2(int64_t opcode, double param = 0.0) {
  return [=](double a, double b) { return stepValue(opcode, a, b, param); };
}

Handled eval::evalElementwiseOp(Operation *op, EvalState &st,
                                MutableArrayRef<Tensor> results) {
  if (results.empty())
    return false;
  Tensor &out = results.front();
  return llvm::TypeSwitch<Operation *, Handled>(op)
      .Case([&](AddOp o) {
        return done(
            binary(o.getLhs(), o.getRhs(), st, out, step2(TIDALRT_FUSED_ADD)));
      })
      .Case([&](SubOp o) {
        return done(
            binary(o.getLhs(), o.getRhs(), st, out, step2(TIDALRT_FUSED_SUB)));
      })
      .Case([&](MulOp o) {
        return done(
            binary(o.getLhs(), o.getRhs(), st, out, step2(TIDALRT_FUSED_MUL)));
      })
      .Case([&](DivOp o) -> Handled {
        if (!isFloat(out))
          for (double b : st.get(o.getRhs()).data)
            if (b == 0.0)
              return o.emitOpError("integer division by zero");
        return done(
            binary(o.getLhs(), o.getRhs(), st, out, step2(TIDALRT_FUSED_DIV)));
      })
      .Case([&](PowOp o) {
        return done(binary(o.getLhs(), o.getRhs(), st, out,
                           [](double a, double b) { return std::pow(a, b); }));
      })
      .Case([&](NegOp o) {
        return done(unary(o.getInput(), st, out, step1(TIDALRT_FUSED_NEG)));
      })
      .Case([&](ReluOp o) {
        return done(unary(o.getInput(), st, out, step1(TIDALRT_FUSED_RELU)));
      })
      .Case([&](SigmoidOp o) {
        return done(unary(o.getInput(), st, out, step1(TIDALRT_FUSED_SIGMOID)));
      })
      .Case([&](TanhOp o) {
        return done(unary(o.getInput(), st, out, step1(TIDALRT_FUSED_TANH)));
      })
      .Case([&](SqrtOp o) {
        return done(unary(o.getInput(), st, out, step1(TIDALRT_FUSED_SQRT)));
      })
      .Case([&](ErfOp o) {
        return done(unary(o.getInput(), st, out, step1(TIDALRT_FUSED_ERF)));
      })
      .Case([&](ExpOp o) {
        return done(unary(o.getInput(), st, out, step1(TIDALRT_FUSED_EXP)));
      })
      .Case([&](GeluOp o) {
        return done(unary(o.getInput(), st, out, step1(TIDALRT_FUSED_GELU)));
      })
      .Case([&](LogOp o) {
        return done(unary(o.getInput(), st, out, step1(TIDALRT_FUSED_LOG)));
      })
      .Case([&](IdentityOp o) {
        return done(unary(o.getInput(), st, out, [](double x) { return x; }));
      })
      .Case([&](LeakyReluOp o) {
        double alpha = toDouble(o.getAlpha());
        return done(unary(o.getInput(), st, out,
                          step1(TIDALRT_FUSED_LEAKY_RELU, alpha)));
      })
      .Case([&](ReluBackwardOp o) {
        return done(gradOp(o.getGrad(), o.getSaved(), st, out,
                           step2(TIDALRT_FUSED_RELU_BACKWARD)));
      })
      .Case([&](LeakyReluBackwardOp o) {
        double alpha = toDouble(o.getAlpha());
        return done(gradOp(o.getGrad(), o.getSaved(), st, out,
                           step2(TIDALRT_FUSED_LEAKY_RELU_BACKWARD, alpha)));
      })
      .Case([&](SigmoidBackwardOp o) {
        return done(gradOp(o.getGrad(), o.getSaved(), st, out,
                           step2(TIDALRT_FUSED_SIGMOID_BACKWARD)));
      })
      .Case([&](TanhBackwardOp o) {
        return done(gradOp(o.getGrad(), o.getSaved(), st, out,
                           step2(TIDALRT_FUSED_TANH_BACKWARD)));
      })
      .Case([&](ErfBackwardOp o) {
        return done(gradOp(o.getGrad(), o.getSaved(), st, out,
                           step2(TIDALRT_FUSED_ERF_BACKWARD)));
      })
      .Case([&](GeluBackwardOp o) {
        return done(gradOp(o.getGrad(), o.getSaved(), st, out,
                           step2(TIDALRT_FUSED_GELU_BACKWARD)));
      })
      .Case(
          [&](FusedElementwiseOp o) { return done(evalFused(o, st, results)); })
      .Case([&](DropoutOp o) { return done(evalDropout(o, st, results)); })
      .Case([&](DropoutBackwardOp o) {
        return done(evalDropoutBackward(o, st, out));
      })
      .Case<RandomNormalOp, RandomUniformOp>(
          [&](Operation *o) { return done(evalRandom(o, st, out)); })
      .Case([&](BroadcastToOp o) { return done(evalBroadcastTo(o, st, out)); })
      .Default([](Operation *) -> Handled { return false; });
}
