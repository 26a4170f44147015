//===- OptimizerOps.cpp - torch.optim and ai.onnx.preview.training updates ===//

#include "EvalSupport.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::eval;

/// The single value of a scalar operand (a learning rate, a step count).
static FailureOr<double> scalar(Operation *op, const Tensor &t,
                                StringRef what) {
  if (t.numElements() != 1)
    return op->emitOpError()
           << what << " must hold one element, got " << t.numElements();
  return t.data[0];
}

/// Checks that every per-element operand has the parameter's element count.
static LogicalResult sameSize(Operation *op, ArrayRef<const Tensor *> ts) {
  for (const Tensor *t : ts)
    if (t->numElements() != ts.front()->numElements())
      return op->emitOpError("operands differ in element count");
  return success();
}

static LogicalResult evalSgd(SgdUpdateOp op, EvalState &st, Tensor &out) {
  const Tensor &p = st.get(op.getParam()), &g = st.get(op.getGrad());
  if (failed(sameSize(op, {&p, &g})))
    return failure();
  double lr = toDouble(op.getLr()), wd = toDouble(op.getWeightDecay());
  for (size_t i = 0; i < p.data.size(); ++i)
    out.data[i] = p.data[i] - lr * (g.data[i] + wd * p.data[i]);
  return success();
}

static LogicalResult evalSgdMomentum(SgdMomentumUpdateOp op, EvalState &st,
                                     MutableArrayRef<Tensor> results) {
  const Tensor &p = st.get(op.getParam()), &g = st.get(op.getGrad()),
               &buf = st.get(op.getMomentumBuffer());
  if (failed(sameSize(op, {&p, &g, &buf})))
    return failure();
  double lr = toDouble(op.getLr()), mu = toDouble(op.getMomentum()),
         damp = toDouble(op.getDampening()), wd = toDouble(op.getWeightDecay());
  for (size_t i = 0; i < p.data.size(); ++i) {
    double d = g.data[i] + wd * p.data[i];
    double b = mu * buf.data[i] + (1 - damp) * d;
    double step = op.getNesterov() ? d + mu * b : b;
    results[0].data[i] = p.data[i] - lr * step;
    results[1].data[i] = b;
  }
  return success();
}

static LogicalResult evalAdam(AdamUpdateOp op, EvalState &st,
                              MutableArrayRef<Tensor> results) {
  const Tensor &p = st.get(op.getParam()), &g = st.get(op.getGrad()),
               &m = st.get(op.getExpAvg()), &v = st.get(op.getExpAvgSq());
  FailureOr<double> step = scalar(op, st.get(op.getStep()), "step");
  if (failed(step) || failed(sameSize(op, {&p, &g, &m, &v})))
    return failure();
  if (*step < 1)
    return op.emitOpError("step is ") << *step << "; it counts from 1";
  double lr = toDouble(op.getLr()), b1 = toDouble(op.getBeta1()),
         b2 = toDouble(op.getBeta2()), eps = toDouble(op.getEps()),
         wd = toDouble(op.getWeightDecay());
  double bc1 = 1 - std::pow(b1, *step), bc2 = 1 - std::pow(b2, *step);
  for (size_t i = 0; i < p.data.size(); ++i) {
    double param = p.data[i], grad = g.data[i];
    if (op.getDecoupled())
      param *= 1 - lr * wd;
    else
      grad += wd * param;
    double mi = b1 * m.data[i] + (1 - b1) * grad;
    double vi = b2 * v.data[i] + (1 - b2) * grad * grad;
    results[0].data[i] =
        param - lr / bc1 * mi / (std::sqrt(vi) / std::sqrt(bc2) + eps);
    results[1].data[i] = mi;
    results[2].data[i] = vi;
  }
  return success();
}

/// ONNX Momentum. ONNX's reference scales the gradient by beta only after
/// the first iteration: `v' = alpha * v + (t > 0 ? beta : 1) * g`.
static LogicalResult evalOnnxMomentum(OnnxMomentumOp op, EvalState &st,
                                      MutableArrayRef<Tensor> results) {
  const Tensor &x = st.get(op.getX()), &g = st.get(op.getGrad()),
               &v = st.get(op.getV());
  FailureOr<double> r = scalar(op, st.get(op.getR()), "r");
  FailureOr<double> t = scalar(op, st.get(op.getT()), "t");
  if (failed(r) || failed(t) || failed(sameSize(op, {&x, &g, &v})))
    return failure();
  double alpha = toDouble(op.getAlpha()), beta = toDouble(op.getBeta()),
         norm = toDouble(op.getNormCoefficient());
  double betaAdjusted = *t > 0 ? beta : 1.0;
  for (size_t i = 0; i < x.data.size(); ++i) {
    double gr = norm * x.data[i] + g.data[i];
    double vi = alpha * v.data[i] + betaAdjusted * gr;
    double step = op.getNesterov() ? gr + alpha * vi : vi;
    results[0].data[i] = x.data[i] - *r * step;
    results[1].data[i] = vi;
  }
  return success();
}

static LogicalResult evalOnnxAdagrad(OnnxAdagradOp op, EvalState &st,
                                     MutableArrayRef<Tensor> results) {
  const Tensor &x = st.get(op.getX()), &g = st.get(op.getGrad()),
               &h = st.get(op.getH());
  FailureOr<double> r = scalar(op, st.get(op.getR()), "r");
  FailureOr<double> t = scalar(op, st.get(op.getT()), "t");
  if (failed(r) || failed(t) || failed(sameSize(op, {&x, &g, &h})))
    return failure();
  double decay = toDouble(op.getDecayFactor()), eps = toDouble(op.getEpsilon()),
         norm = toDouble(op.getNormCoefficient());
  double rate = *r / (1 + *t * decay);
  for (size_t i = 0; i < x.data.size(); ++i) {
    double gr = norm * x.data[i] + g.data[i];
    double hi = h.data[i] + gr * gr;
    results[0].data[i] = x.data[i] - rate * gr / (std::sqrt(hi) + eps);
    results[1].data[i] = hi;
  }
  return success();
}

static LogicalResult evalOnnxAdam(OnnxAdamOp op, EvalState &st,
                                  MutableArrayRef<Tensor> results) {
  const Tensor &x = st.get(op.getX()), &g = st.get(op.getGrad()),
               &v = st.get(op.getV()), &h = st.get(op.getH());
  FailureOr<double> r = scalar(op, st.get(op.getR()), "r");
  FailureOr<double> t = scalar(op, st.get(op.getT()), "t");
  if (failed(r) || failed(t) || failed(sameSize(op, {&x, &g, &v, &h})))
    return failure();
  double alpha = toDouble(op.getAlpha()), beta = toDouble(op.getBeta()),
         eps = toDouble(op.getEpsilon()),
         norm = toDouble(op.getNormCoefficient()),
         post = toDouble(op.getNormCoefficientPost());
  double rate = *t > 0 ? *r * std::sqrt(1 - std::pow(beta, *t)) /
                             (1 - std::pow(alpha, *t))
                       : *r;
  for (size_t i = 0; i < x.data.size(); ++i) {
    double gr = norm * x.data[i] + g.data[i];
    double vi = alpha * v.data[i] + (1 - alpha) * gr;
    double hi = beta * h.data[i] + (1 - beta) * gr * gr;
    double xi = x.data[i] - rate * vi / (std::sqrt(hi) + eps);
    results[0].data[i] = (1 - post) * xi;
    results[1].data[i] = vi;
    results[2].data[i] = hi;
  }
  return success();
}

Handled eval::evalOptimizerOp(Operation *op, EvalState &st,
                              MutableArrayRef<Tensor> results) {
  return llvm::TypeSwitch<Operation *, Handled>(op)
      .Case([&](SgdUpdateOp o) { return done(evalSgd(o, st, results[0])); })
      .Case([&](SgdMomentumUpdateOp o) {
        return done(evalSgdMomentum(o, st, results));
      })
      .Case([&](AdamUpdateOp o) { return done(evalAdam(o, st, results)); })
      .Case([&](OnnxMomentumOp o) {
        return done(evalOnnxMomentum(o, st, results));
      })
      .Case([&](OnnxAdagradOp o) {
        return done(evalOnnxAdagrad(o, st, results));
      })
      .Case([&](OnnxAdamOp o) { return done(evalOnnxAdam(o, st, results)); })
      .Case([&](AllReduceStartOp o) -> Handled {
        // Every rank holds the same values: their sum over the ranks,
        // divided, is input * ranks / divisor.
        double factor = double(o.getRanks()) / double(o.getDivisor());
        for (auto [in, out] : llvm::zip(o.getInputs(), results)) {
          out.data = st.get(in).data;
          if (factor != 1.0)
            for (double &x : out.data)
              x *= factor;
        }
        return true;
      })
      .Case([&](ShardOp o) -> Handled {
        // Rank 0's chunk.
        const Tensor &in = st.get(o.getInput());
        Tensor &out = results[0];
        for (size_t i = 0; i < out.data.size(); ++i)
          out.data[i] = i < in.data.size() ? in.data[i] : 0.0;
        return true;
      })
      .Case([&](AllGatherStartOp o) -> Handled {
        return o.emitOpError("needs every rank's chunk: the reference "
                             "evaluator runs one rank (compile without "
                             "--shard to evaluate the step)");
      })
      .Case([&](ReduceScatterStartOp o) -> Handled {
        // Rank 0's chunk of the sum of equal values.
        double factor = double(o.getRanks()) / double(o.getDivisor());
        for (auto [in, out] : llvm::zip(o.getInputs(), results)) {
          const Tensor &t = st.get(in);
          for (size_t i = 0; i < out.data.size(); ++i)
            out.data[i] = i < t.data.size() ? t.data[i] * factor : 0.0;
        }
        return true;
      })
      .Case([&](ReduceScatterWaitOp o) -> Handled {
        for (auto [in, out] : llvm::zip(o.getInputs(), results))
          out.data = st.get(in).data;
        return true;
      })
      .Case([&](AllGatherWaitOp o) -> Handled {
        for (auto [in, out] : llvm::zip(o.getInputs(), results))
          out.data = st.get(in).data;
        return true;
      })
      .Case([&](AllReduceWaitOp o) -> Handled {
        for (auto [in, out] : llvm::zip(o.getInputs(), results))
          out.data = st.get(in).data;
        return true;
      })
      .Default([](Operation *) -> Handled { return false; });
}
