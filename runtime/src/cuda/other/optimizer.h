// optimizer.h - parameter updates on the GPU (twins of
// runtime/src/cpu/optimizer.cpp): torch.optim SGD (momentum, Nesterov,
// weight decay), Adam/AdamW, and ONNX Momentum/Adagrad/Adam.
//
// One thread per element, with the CPU kernel's expressions in its order:
// float32 with the same explicit fused multiply-adds (fmaf where it has
// std::fma) for the torch.optim family, double for the ONNX family. other.cu
// is compiled with --fmad=false and other_emu.cpp with -ffp-contract=off
// (other.cmake), so no other contraction happens and the updates are the
// CPU's bits. Scalars that live in device memory (Adam's step, ONNX's r and
// t) are read by a one-thread body that derives the per-step constants into
// the workspace, read by the element bodies: the host never reads them.
// There, the one difference: Adam's and ONNX Adam's pow() is CUDA's (within
// 2 ulp in double) rather than glibc's, which rounds to the same float
// constants all but very rarely.
//
// The CPU kernel fails (INVALID_ARGUMENT) when adam_update's step is below
// 1; the GPU cannot report that, so its bodies write NaN to new_param,
// new_exp_avg and new_exp_avg_sq instead.
#ifndef TIDALRT_CUDA_OTHER_OPTIMIZER_H
#define TIDALRT_CUDA_OTHER_OPTIMIZER_H

#include "common.h"

#include <initializer_list>

namespace tidalrt {
namespace cuda {
namespace other {

// Checks that the tensors `which` (named `names`) are float32 with `n`
// elements.
inline void requireSameSize(const OpCall &op, std::initializer_list<int> which,
                            const char *const *names, int64_t n) {
  int k = 0;
  for (int i : which) {
    const TensorRef &t = requireF32(op, i, names[k]);
    if (t.numel() != n)
      fail(TIDALRT_INVALID_ARGUMENT, "%s has %lld elements, %s has %lld",
           names[k], (long long)t.numel(), names[0], (long long)n);
    ++k;
  }
}

// A scalar integer operand (a step count): checks as the CPU's scalarInt.
inline IndexRef scalarInt(const OpCall &op, int i, const char *name) {
  const TensorRef &t = requireIndex(op, i, name);
  if (t.numel() != 1)
    fail(TIDALRT_INVALID_ARGUMENT, "%s must hold one element, got %lld", name,
         (long long)t.numel());
  return indexRef(t);
}

// A scalar float operand (a learning rate), float32 or float64: checks as
// the CPU's scalarFloat.
struct ScalarFloat {
  const void *data;
  bool f64;
  TIDAL_HD double value() const {
    return f64 ? *static_cast<const double *>(data)
               : (double)*static_cast<const float *>(data);
  }
};

inline ScalarFloat scalarFloat(const OpCall &op, int i, const char *name) {
  const TensorRef &t = op[i];
  if (!t.present())
    fail(TIDALRT_INVALID_ARGUMENT, "%s is missing", name);
  if (t.numel() != 1)
    fail(TIDALRT_INVALID_ARGUMENT, "%s must hold one element, got %lld", name,
         (long long)t.numel());
  if (t.type == TIDALRT_ELEMENT_TYPE_F32)
    return {t.data, false};
  if (t.type == TIDALRT_ELEMENT_TYPE_F64)
    return {t.data, true};
  fail(TIDALRT_UNSUPPORTED, "%s has element type %s; float32 or float64 needed",
       name, typeName(t.type));
}

//===----------------------------------------------------------------------===//
// torch.optim family (float32)
//===----------------------------------------------------------------------===//

//   if weight_decay != 0: d_p = d_p.add(param, alpha=weight_decay)
//   param.add_(d_p, alpha=-lr)
struct SgdBody {
  const float *p, *g;
  float *out;
  bool decay;
  float wd, negLr;

  TIDAL_HD void operator()(int64_t i) const {
    float pi = p[i], d = g[i];
    if (decay)
      d = fmaf(pi, wd, d);
    out[i] = fmaf(d, negLr, pi);
  }
};

//   if weight_decay != 0: d_p = d_p.add(param, alpha=weight_decay)
//   buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
//   if nesterov: d_p = d_p.add(buf, alpha=momentum) else: d_p = buf
//   param.add_(d_p, alpha=-lr)
struct MomentumBody {
  const float *p, *g, *buf;
  float *outP, *outBuf;
  bool decay, nesterov;
  float wd, mom, oneMinusDamp, negLr;

  TIDAL_HD void operator()(int64_t i) const {
    float pi = p[i], d = g[i];
    if (decay)
      d = fmaf(pi, wd, d);
    float b = fmaf(d, oneMinusDamp, buf[i] * mom);
    d = nesterov ? fmaf(b, mom, d) : b;
    outP[i] = fmaf(d, negLr, pi);
    outBuf[i] = b;
  }
};

// Adam's per-step constants, from the step in device memory.
struct AdamStepConstants {
  IndexRef step;
  double beta1, beta2, lr;
  float *out; // bc2Sqrt, negStepSize, valid (1) or step < 1 (0)

  TIDAL_HD void operator()(int64_t) const {
    int64_t t = step[0];
    double bc1 = 1.0 - pow(beta1, (double)t);
    double bc2 = 1.0 - pow(beta2, (double)t);
    double stepSize = lr / bc1;
    out[0] = (float)sqrt(bc2);
    out[1] = (float)-stepSize;
    out[2] = t < 1 ? 0.0f : 1.0f;
  }
};

// Adam (_single_tensor_adam) and AdamW (_single_tensor_adamw) of PyTorch
// 1.13, as adamScalar in optimizer.cpp.
struct AdamBody {
  const float *p, *g, *m, *v;
  float *outP, *outM, *outV;
  bool decay, decoupled;
  float wd, paramScale, beta1, oneMinusBeta1, beta2, oneMinusBeta2, eps;
  const float *constants; // AdamStepConstants::out

  TIDAL_HD void operator()(int64_t i) const {
    if (constants[2] == 0.0f) {
      outP[i] = outM[i] = outV[i] = quietNan();
      return;
    }
    const float bc2Sqrt = constants[0], negStepSize = constants[1];
    float pi = p[i], gi = g[i];
    if (decoupled)
      pi = pi * paramScale;
    else if (decay)
      gi = fmaf(pi, wd, gi);
    float mi = fmaf(gi, oneMinusBeta1, m[i] * beta1);
    float vi = fmaf(oneMinusBeta2 * gi, gi, v[i] * beta2);
    float denom = sqrtf(vi) / bc2Sqrt + eps;
    outP[i] = pi + (negStepSize * mi) / denom;
    outM[i] = mi;
    outV[i] = vi;
  }
};

//===----------------------------------------------------------------------===//
// ai.onnx.preview.training family (double per element)
//===----------------------------------------------------------------------===//

enum class OnnxOptimizer : int { Momentum, Adagrad, Adam };

// The per-step constants of the ONNX optimizers, from r and t in device
// memory: Momentum: r, beta adjusted for t; Adagrad: the rate; Adam: the
// rate.
struct OnnxStepConstants {
  OnnxOptimizer kind;
  ScalarFloat r;
  IndexRef t;
  double a, b; // Momentum: beta; Adagrad: decay_factor; Adam: alpha, beta
  double *out;

  TIDAL_HD void operator()(int64_t) const {
    double rv = r.value();
    int64_t tv = t[0];
    switch (kind) {
    case OnnxOptimizer::Momentum:
      // ONNX's reference scales the gradient by beta only after the first
      // iteration.
      out[0] = rv;
      out[1] = tv > 0 ? a : 1.0;
      break;
    case OnnxOptimizer::Adagrad:
      out[0] = rv / (1 + (double)tv * a);
      break;
    case OnnxOptimizer::Adam: {
      double td = (double)tv;
      out[0] = tv > 0 ? rv * sqrt(1 - pow(b, td)) / (1 - pow(a, td)) : rv;
      break;
    }
    }
  }
};

struct OnnxMomentumBody {
  const float *x, *g, *v;
  float *outX, *outV;
  double alpha, norm;
  bool nesterov;
  const double *constants; // r, betaAdjusted

  TIDAL_HD void operator()(int64_t i) const {
    const double r = constants[0], betaAdjusted = constants[1];
    double xi = x[i];
    double gr = norm * xi + g[i];
    double vi = alpha * v[i] + betaAdjusted * gr;
    double step = nesterov ? gr + alpha * vi : vi;
    outX[i] = (float)(xi - r * step);
    outV[i] = (float)vi;
  }
};

struct OnnxAdagradBody {
  const float *x, *g, *h;
  float *outX, *outH;
  double eps, norm;
  const double *constants; // rate

  TIDAL_HD void operator()(int64_t i) const {
    const double rate = constants[0];
    double xi = x[i];
    double gr = norm * xi + g[i];
    double hi = h[i] + gr * gr;
    outX[i] = (float)(xi - rate * gr / (sqrt(hi) + eps));
    outH[i] = (float)hi;
  }
};

struct OnnxAdamBody {
  const float *x, *g, *v, *h;
  float *outX, *outV, *outH;
  double alpha, beta, eps, norm, post;
  const double *constants; // rate

  TIDAL_HD void operator()(int64_t i) const {
    const double rate = constants[0];
    double xi = x[i];
    double gr = norm * xi + g[i];
    double vi = alpha * v[i] + (1 - alpha) * gr;
    double hi = beta * h[i] + (1 - beta) * gr * gr;
    double nx = xi - rate * vi / (sqrt(hi) + eps);
    outX[i] = (float)((1 - post) * nx);
    outV[i] = (float)vi;
    outH[i] = (float)hi;
  }
};

} // namespace other

// sgd_update: param, grad -> new_param; lr (0), weight_decay (1).
template <class L> void k_sgd_update(L &l, OpCall &op) {
  using namespace other;
  requireTensors(op, 3);
  static const char *const names[] = {"param", "grad", "new_param"};
  int64_t n = op[0].numel();
  requireSameSize(op, {0, 1, 2}, names, n);
  double lr = op.getFloat(0), wd = op.getFloat(1);
  if (l.preparing())
    return;
  l.forEach(n, SgdBody{op[0].f32(), op[1].f32(), op[2].f32(), wd != 0.0,
                       (float)wd, (float)-lr});
}

// sgd_momentum_update: param, grad, momentum_buffer -> new_param,
// new_momentum_buffer; dampening (0), lr (1), momentum (2), nesterov (3),
// weight_decay (4).
template <class L> void k_sgd_momentum_update(L &l, OpCall &op) {
  using namespace other;
  requireTensors(op, 5);
  static const char *const names[] = {"param", "grad", "momentum_buffer",
                                      "new_param", "new_momentum_buffer"};
  int64_t n = op[0].numel();
  requireSameSize(op, {0, 1, 2, 3, 4}, names, n);
  double damp = op.getFloat(0), lr = op.getFloat(1), mom = op.getFloat(2);
  bool nesterov = op.getBool(3);
  double wd = op.getFloat(4);
  if (l.preparing())
    return;
  l.forEach(n, MomentumBody{op[0].f32(), op[1].f32(), op[2].f32(), op[3].f32(),
                            op[4].f32(), wd != 0.0, nesterov, (float)wd,
                            (float)mom, (float)(1.0 - damp), (float)-lr});
}

// adam_update: param, grad, exp_avg, exp_avg_sq, step -> new_param,
// new_exp_avg, new_exp_avg_sq; beta1 (0), beta2 (1), decoupled (2), eps (3),
// lr (4), weight_decay (5).
template <class L> void k_adam_update(L &l, OpCall &op) {
  using namespace other;
  requireTensors(op, 8);
  static const char *const names[] = {
      "param",     "grad",        "exp_avg",       "exp_avg_sq",
      "new_param", "new_exp_avg", "new_exp_avg_sq"};
  int64_t n = op[0].numel();
  requireSameSize(op, {0, 1, 2, 3, 5, 6, 7}, names, n);
  requireIndex(op, 4, "step");
  if (op[4].numel() != 1)
    fail(TIDALRT_INVALID_ARGUMENT, "step must hold one element, got %lld",
         (long long)op[4].numel());
  double beta1 = op.getFloat(0), beta2 = op.getFloat(1);
  bool decoupled = op.getBool(2);
  double eps = op.getFloat(3), lr = op.getFloat(4), wd = op.getFloat(5);
  float *constants = static_cast<float *>(l.workspace(3 * sizeof(float)));
  if (l.preparing())
    return;
  IndexRef step = scalarInt(op, 4, "step");
  l.forEach(1, AdamStepConstants{step, beta1, beta2, lr, constants});
  l.forEach(n, AdamBody{op[0].f32(), op[1].f32(), op[2].f32(), op[3].f32(),
                        op[5].f32(), op[6].f32(), op[7].f32(), wd != 0.0,
                        decoupled, (float)wd, (float)(1.0 - lr * wd),
                        (float)beta1, (float)(1.0 - beta1), (float)beta2,
                        (float)(1.0 - beta2), (float)eps, constants});
}

// onnx_momentum: r, t, x, grad, v -> new_x, new_v; alpha (0), beta (1),
// nesterov (2), norm_coefficient (3).
template <class L> void k_onnx_momentum(L &l, OpCall &op) {
  using namespace other;
  requireTensors(op, 7);
  static const char *const names[] = {"x", "grad", "v", "new_x", "new_v"};
  int64_t n = op[2].numel();
  requireSameSize(op, {2, 3, 4, 5, 6}, names, n);
  requireIndex(op, 1, "t");
  double alpha = op.getFloat(0), beta = op.getFloat(1);
  bool nesterov = op.getBool(2);
  double norm = op.getFloat(3);
  double *constants = static_cast<double *>(l.workspace(2 * sizeof(double)));
  if (l.preparing())
    return;
  ScalarFloat r = scalarFloat(op, 0, "r");
  IndexRef t = scalarInt(op, 1, "t");
  l.forEach(1, OnnxStepConstants{OnnxOptimizer::Momentum, r, t, beta, 0.0,
                                 constants});
  l.forEach(n,
            OnnxMomentumBody{op[2].f32(), op[3].f32(), op[4].f32(), op[5].f32(),
                             op[6].f32(), alpha, norm, nesterov, constants});
}

// onnx_adagrad: r, t, x, grad, h -> new_x, new_h; decay_factor (0),
// epsilon (1), norm_coefficient (2).
template <class L> void k_onnx_adagrad(L &l, OpCall &op) {
  using namespace other;
  requireTensors(op, 7);
  static const char *const names[] = {"x", "grad", "h", "new_x", "new_h"};
  int64_t n = op[2].numel();
  requireSameSize(op, {2, 3, 4, 5, 6}, names, n);
  requireIndex(op, 1, "t");
  double decay = op.getFloat(0), eps = op.getFloat(1), norm = op.getFloat(2);
  double *constants = static_cast<double *>(l.workspace(sizeof(double)));
  if (l.preparing())
    return;
  ScalarFloat r = scalarFloat(op, 0, "r");
  IndexRef t = scalarInt(op, 1, "t");
  l.forEach(1, OnnxStepConstants{OnnxOptimizer::Adagrad, r, t, decay, 0.0,
                                 constants});
  l.forEach(n, OnnxAdagradBody{op[2].f32(), op[3].f32(), op[4].f32(),
                               op[5].f32(), op[6].f32(), eps, norm, constants});
}

// onnx_adam: r, t, x, grad, v, h -> new_x, new_v, new_h; alpha (0), beta
// (1), epsilon (2), norm_coefficient (3), norm_coefficient_post (4).
template <class L> void k_onnx_adam(L &l, OpCall &op) {
  using namespace other;
  requireTensors(op, 9);
  static const char *const names[] = {"x",     "grad",  "v",    "h",
                                      "new_x", "new_v", "new_h"};
  int64_t n = op[2].numel();
  requireSameSize(op, {2, 3, 4, 5, 6, 7, 8}, names, n);
  requireIndex(op, 1, "t");
  double alpha = op.getFloat(0), beta = op.getFloat(1), eps = op.getFloat(2),
         norm = op.getFloat(3), post = op.getFloat(4);
  double *constants = static_cast<double *>(l.workspace(sizeof(double)));
  if (l.preparing())
    return;
  ScalarFloat r = scalarFloat(op, 0, "r");
  IndexRef t = scalarInt(op, 1, "t");
  l.forEach(
      1, OnnxStepConstants{OnnxOptimizer::Adam, r, t, alpha, beta, constants});
  l.forEach(n, OnnxAdamBody{op[2].f32(), op[3].f32(), op[4].f32(), op[5].f32(),
                            op[6].f32(), op[7].f32(), op[8].f32(), alpha, beta,
                            eps, norm, post, constants});
}

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_OTHER_OPTIMIZER_H
