// optimizer.cpp - parameter updates: torch.optim SGD (with momentum,
// Nesterov, weight decay), Adam/AdamW, and ONNX Momentum/Adagrad/Adam.
//
// torch.optim family (sgd_update, sgd_momentum_update, adam_update): the
// per-element update is computed in float32 with exactly the operations, in
// the order, that PyTorch 1.13's single-tensor code runs on float32 CPU
// tensors, so that trajectories match PyTorch bit for bit on an AVX2 CPU
// (checked against PyTorch 1.13.1 with AVX2 kernels). The hyper-parameters
// are Python floats there: scalar arithmetic on them (1 - beta1, lr /
// bias_correction1, ...) runs in double and the result is rounded to float
// when it meets a tensor. PyTorch's `t.add(u, alpha=a)` is a fused
// multiply-add on its vectorized CPU path (vec::fmadd) and its scalar tail
// is contracted by the compiler, so it is `fma(u, (float)a, t)` here;
// `addcmul_(t1, t2, value=v)` computes `self + v * t1 * t2` with the last
// multiply-add contracted, i.e. `fma((float)v * t1, t2, self)`;
// `addcdiv_(t1, t2, value=v)` is `self + ((float)v * t1) / t2`; `mul_(s)`,
// `/ s`, `.sqrt()` and `.add_(s)` are single IEEE operations. This file is
// compiled with -ffp-contract=off (other.cmake) so that the compiler adds no
// other contraction; the AVX2 and AVX-512 paths use the same operations as
// the scalar one (fmaf / _mm256_fmadd_ps / _mm512_fmadd_ps), so all three
// give the same bits.
//
// ai.onnx.preview.training family (onnx_*): computed per element in double
// exactly as the reference evaluator (lib/Evaluator/OptimizerOps.cpp) and
// rounded to float32.
//
// Results may alias operands (new_param over param): each element's inputs
// are read before its outputs are written.
#include "other_util.h"

#include <algorithm>

namespace tidalrt {
namespace other {
namespace {

// Runs body(begin, end) over [0, n) in fixed chunks of 16384 elements, in
// parallel for large n.
template <typename F> void forChunks(int64_t n, F body) {
  constexpr int64_t kChunk = 16384;
  if (n < parallelGrain()) {
    body(0, n);
    return;
  }
  int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c)
    body(c * kChunk, std::min(n, (c + 1) * kChunk));
}

// Checks that the tensors `which` (named `names`) are float32 with `n`
// elements.
void requireSameSize(const OpCall &op, std::initializer_list<int> which,
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

// A scalar integer operand (a step count).
int64_t scalarInt(const OpCall &op, int i, const char *name) {
  const TensorRef &t = requireIndex(op, i, name);
  if (t.numel() != 1)
    fail(TIDALRT_INVALID_ARGUMENT, "%s must hold one element, got %lld", name,
         (long long)t.numel());
  return readIndex(t, 0);
}

// A scalar float operand (a learning rate), float32 or float64.
double scalarFloat(const OpCall &op, int i, const char *name) {
  const TensorRef &t = op[i];
  if (!t.present())
    fail(TIDALRT_INVALID_ARGUMENT, "%s is missing", name);
  if (t.numel() != 1)
    fail(TIDALRT_INVALID_ARGUMENT, "%s must hold one element, got %lld", name,
         (long long)t.numel());
  if (t.type == TIDALRT_ELEMENT_TYPE_F32)
    return *t.f32();
  if (t.type == TIDALRT_ELEMENT_TYPE_F64)
    return *static_cast<const double *>(t.data);
  fail(TIDALRT_UNSUPPORTED, "%s has element type %s; float32 or float64 needed",
       name, typeName(t.type));
}

#if TIDALRT_OTHER_X86
#define TIDALRT_AVX2 __attribute__((target("avx2,fma")))
#define TIDALRT_AVX512 __attribute__((target("avx512f,avx2,fma")))
#else
#define TIDALRT_AVX2
#define TIDALRT_AVX512
#endif

//===----------------------------------------------------------------------===//
// sgd_update: param, grad -> new_param; lr (0), weight_decay (1)
//===----------------------------------------------------------------------===//

struct SgdArgs {
  const float *p, *g;
  float *out;
  bool decay;
  float wd, negLr;
};

//   if weight_decay != 0: d_p = d_p.add(param, alpha=weight_decay)
//   param.add_(d_p, alpha=-lr)
void sgdScalar(const SgdArgs &a, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) {
    float p = a.p[i], d = a.g[i];
    if (a.decay)
      d = std::fma(p, a.wd, d);
    a.out[i] = std::fma(d, a.negLr, p);
  }
}

#if TIDALRT_OTHER_X86
TIDALRT_AVX2 void sgdAvx2(const SgdArgs &a, int64_t b, int64_t e) {
  __m256 wd = _mm256_set1_ps(a.wd), nlr = _mm256_set1_ps(a.negLr);
  int64_t i = b;
  for (; i + 8 <= e; i += 8) {
    __m256 p = _mm256_loadu_ps(a.p + i), d = _mm256_loadu_ps(a.g + i);
    if (a.decay)
      d = _mm256_fmadd_ps(p, wd, d);
    _mm256_storeu_ps(a.out + i, _mm256_fmadd_ps(d, nlr, p));
  }
  sgdScalar(a, i, e);
}

// The AVX2 loop on 16 lanes (the same operations: the same bits).
TIDALRT_AVX512 void sgdAvx512(const SgdArgs &a, int64_t b, int64_t e) {
  __m512 wd = _mm512_set1_ps(a.wd), nlr = _mm512_set1_ps(a.negLr);
  int64_t i = b;
  for (; i + 16 <= e; i += 16) {
    __m512 p = _mm512_loadu_ps(a.p + i), d = _mm512_loadu_ps(a.g + i);
    if (a.decay)
      d = _mm512_fmadd_ps(p, wd, d);
    _mm512_storeu_ps(a.out + i, _mm512_fmadd_ps(d, nlr, p));
  }
  sgdScalar(a, i, e);
}
#endif

tidalrt_status_t sgd(OpCall &op) {
  requireTensors(op, 3);
  static const char *const names[] = {"param", "grad", "new_param"};
  int64_t n = op[0].numel();
  requireSameSize(op, {0, 1, 2}, names, n);
  double lr = op.getFloat(0), wd = op.getFloat(1);
  if (preparing(op.context))
    return ok();
  SgdArgs a{op[0].f32(), op[1].f32(), op[2].f32(),
            wd != 0.0,   (float)wd,   (float)-lr};
  const simd::Isa isa = simd::activeIsa();
  forChunks(n, [&](int64_t b, int64_t e) {
#if TIDALRT_OTHER_X86
    if (isa == simd::Isa::Avx512)
      return sgdAvx512(a, b, e);
    if (isa == simd::Isa::Avx2)
      return sgdAvx2(a, b, e);
#endif
    sgdScalar(a, b, e);
  });
  (void)isa;
  return ok();
}

//===----------------------------------------------------------------------===//
// sgd_momentum_update: param, grad, momentum_buffer -> new_param,
// new_momentum_buffer; dampening (0), lr (1), momentum (2), nesterov (3),
// weight_decay (4)
//===----------------------------------------------------------------------===//

struct MomentumArgs {
  const float *p, *g, *buf;
  float *outP, *outBuf;
  bool decay, nesterov;
  float wd, mom, oneMinusDamp, negLr;
};

//   if weight_decay != 0: d_p = d_p.add(param, alpha=weight_decay)
//   buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
//   if nesterov: d_p = d_p.add(buf, alpha=momentum) else: d_p = buf
//   param.add_(d_p, alpha=-lr)
// (PyTorch starts the buffer as a copy of d_p; tidal's starts at zero, and
// 0 * momentum + 1 * d_p is the same d_p when dampening is 0.)
void momentumScalar(const MomentumArgs &a, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) {
    float p = a.p[i], d = a.g[i];
    if (a.decay)
      d = std::fma(p, a.wd, d);
    float buf = std::fma(d, a.oneMinusDamp, a.buf[i] * a.mom);
    d = a.nesterov ? std::fma(buf, a.mom, d) : buf;
    a.outP[i] = std::fma(d, a.negLr, p);
    a.outBuf[i] = buf;
  }
}

#if TIDALRT_OTHER_X86
TIDALRT_AVX2 void momentumAvx2(const MomentumArgs &a, int64_t b, int64_t e) {
  __m256 wd = _mm256_set1_ps(a.wd), mom = _mm256_set1_ps(a.mom),
         omd = _mm256_set1_ps(a.oneMinusDamp), nlr = _mm256_set1_ps(a.negLr);
  int64_t i = b;
  for (; i + 8 <= e; i += 8) {
    __m256 p = _mm256_loadu_ps(a.p + i), d = _mm256_loadu_ps(a.g + i);
    if (a.decay)
      d = _mm256_fmadd_ps(p, wd, d);
    __m256 buf =
        _mm256_fmadd_ps(d, omd, _mm256_mul_ps(_mm256_loadu_ps(a.buf + i), mom));
    d = a.nesterov ? _mm256_fmadd_ps(buf, mom, d) : buf;
    _mm256_storeu_ps(a.outP + i, _mm256_fmadd_ps(d, nlr, p));
    _mm256_storeu_ps(a.outBuf + i, buf);
  }
  momentumScalar(a, i, e);
}

// The AVX2 loop on 16 lanes (the same operations: the same bits).
TIDALRT_AVX512 void momentumAvx512(const MomentumArgs &a, int64_t b,
                                   int64_t e) {
  __m512 wd = _mm512_set1_ps(a.wd), mom = _mm512_set1_ps(a.mom),
         omd = _mm512_set1_ps(a.oneMinusDamp), nlr = _mm512_set1_ps(a.negLr);
  int64_t i = b;
  for (; i + 16 <= e; i += 16) {
    __m512 p = _mm512_loadu_ps(a.p + i), d = _mm512_loadu_ps(a.g + i);
    if (a.decay)
      d = _mm512_fmadd_ps(p, wd, d);
    __m512 buf =
        _mm512_fmadd_ps(d, omd, _mm512_mul_ps(_mm512_loadu_ps(a.buf + i), mom));
    d = a.nesterov ? _mm512_fmadd_ps(buf, mom, d) : buf;
    _mm512_storeu_ps(a.outP + i, _mm512_fmadd_ps(d, nlr, p));
    _mm512_storeu_ps(a.outBuf + i, buf);
  }
  momentumScalar(a, i, e);
}
#endif

tidalrt_status_t sgdMomentum(OpCall &op) {
  requireTensors(op, 5);
  static const char *const names[] = {"param", "grad", "momentum_buffer",
                                      "new_param", "new_momentum_buffer"};
  int64_t n = op[0].numel();
  requireSameSize(op, {0, 1, 2, 3, 4}, names, n);
  double damp = op.getFloat(0), lr = op.getFloat(1), mom = op.getFloat(2);
  bool nesterov = op.getBool(3);
  double wd = op.getFloat(4);
  if (preparing(op.context))
    return ok();
  MomentumArgs a{op[0].f32(), op[1].f32(),         op[2].f32(), op[3].f32(),
                 op[4].f32(), wd != 0.0,           nesterov,    (float)wd,
                 (float)mom,  (float)(1.0 - damp), (float)-lr};
  const simd::Isa isa = simd::activeIsa();
  forChunks(n, [&](int64_t b, int64_t e) {
#if TIDALRT_OTHER_X86
    if (isa == simd::Isa::Avx512)
      return momentumAvx512(a, b, e);
    if (isa == simd::Isa::Avx2)
      return momentumAvx2(a, b, e);
#endif
    momentumScalar(a, b, e);
  });
  (void)isa;
  return ok();
}

//===----------------------------------------------------------------------===//
// adam_update: param, grad, exp_avg, exp_avg_sq, step -> new_param,
// new_exp_avg, new_exp_avg_sq; beta1 (0), beta2 (1), decoupled (2), eps (3),
// lr (4), weight_decay (5)
//===----------------------------------------------------------------------===//

struct AdamArgs {
  const float *p, *g, *m, *v;
  float *outP, *outM, *outV;
  bool decay;       // Adam with weight_decay != 0
  bool decoupled;   // AdamW
  float wd;         // weight_decay
  float paramScale; // AdamW: 1 - lr * weight_decay
  float beta1, oneMinusBeta1, beta2, oneMinusBeta2;
  float bc2Sqrt; // sqrt(1 - beta2^step)
  float eps;
  float negStepSize; // -lr / (1 - beta1^step)
};

// Adam (PyTorch 1.13 _single_tensor_adam):
//   if weight_decay != 0: grad = grad.add(param, alpha=weight_decay)
// AdamW (_single_tensor_adamw):
//   param.mul_(1 - lr * weight_decay)
// Both:
//   exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
//   exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
//   bias_correction1 = 1 - beta1 ** step; bias_correction2 = 1 - beta2 ** step
//   step_size = lr / bias_correction1        (Python floats)
//   denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(eps)
//   param.addcdiv_(exp_avg, denom, value=-step_size)
void adamScalar(const AdamArgs &a, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) {
    float p = a.p[i], g = a.g[i];
    if (a.decoupled)
      p = p * a.paramScale;
    else if (a.decay)
      g = std::fma(p, a.wd, g);
    float m = std::fma(g, a.oneMinusBeta1, a.m[i] * a.beta1);
    float v = std::fma(a.oneMinusBeta2 * g, g, a.v[i] * a.beta2);
    float denom = std::sqrt(v) / a.bc2Sqrt + a.eps;
    a.outP[i] = p + (a.negStepSize * m) / denom;
    a.outM[i] = m;
    a.outV[i] = v;
  }
}

#if TIDALRT_OTHER_X86
TIDALRT_AVX2 void adamAvx2(const AdamArgs &a, int64_t b, int64_t e) {
  __m256 ps = _mm256_set1_ps(a.paramScale), wd = _mm256_set1_ps(a.wd),
         b1 = _mm256_set1_ps(a.beta1), omb1 = _mm256_set1_ps(a.oneMinusBeta1),
         b2 = _mm256_set1_ps(a.beta2), omb2 = _mm256_set1_ps(a.oneMinusBeta2),
         bc2 = _mm256_set1_ps(a.bc2Sqrt), eps = _mm256_set1_ps(a.eps),
         nss = _mm256_set1_ps(a.negStepSize);
  int64_t i = b;
  for (; i + 8 <= e; i += 8) {
    __m256 p = _mm256_loadu_ps(a.p + i), g = _mm256_loadu_ps(a.g + i);
    if (a.decoupled)
      p = _mm256_mul_ps(p, ps);
    else if (a.decay)
      g = _mm256_fmadd_ps(p, wd, g);
    __m256 m =
        _mm256_fmadd_ps(g, omb1, _mm256_mul_ps(_mm256_loadu_ps(a.m + i), b1));
    __m256 v = _mm256_fmadd_ps(_mm256_mul_ps(omb2, g), g,
                               _mm256_mul_ps(_mm256_loadu_ps(a.v + i), b2));
    __m256 denom = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(v), bc2), eps);
    _mm256_storeu_ps(
        a.outP + i,
        _mm256_add_ps(p, _mm256_div_ps(_mm256_mul_ps(nss, m), denom)));
    _mm256_storeu_ps(a.outM + i, m);
    _mm256_storeu_ps(a.outV + i, v);
  }
  adamScalar(a, i, e);
}

// The AVX2 loop on 16 lanes (the same operations: the same bits).
TIDALRT_AVX512 void adamAvx512(const AdamArgs &a, int64_t b, int64_t e) {
  __m512 ps = _mm512_set1_ps(a.paramScale), wd = _mm512_set1_ps(a.wd),
         b1 = _mm512_set1_ps(a.beta1), omb1 = _mm512_set1_ps(a.oneMinusBeta1),
         b2 = _mm512_set1_ps(a.beta2), omb2 = _mm512_set1_ps(a.oneMinusBeta2),
         bc2 = _mm512_set1_ps(a.bc2Sqrt), eps = _mm512_set1_ps(a.eps),
         nss = _mm512_set1_ps(a.negStepSize);
  int64_t i = b;
  for (; i + 16 <= e; i += 16) {
    __m512 p = _mm512_loadu_ps(a.p + i), g = _mm512_loadu_ps(a.g + i);
    if (a.decoupled)
      p = _mm512_mul_ps(p, ps);
    else if (a.decay)
      g = _mm512_fmadd_ps(p, wd, g);
    __m512 m =
        _mm512_fmadd_ps(g, omb1, _mm512_mul_ps(_mm512_loadu_ps(a.m + i), b1));
    __m512 v = _mm512_fmadd_ps(_mm512_mul_ps(omb2, g), g,
                               _mm512_mul_ps(_mm512_loadu_ps(a.v + i), b2));
    __m512 denom = _mm512_add_ps(_mm512_div_ps(_mm512_sqrt_ps(v), bc2), eps);
    _mm512_storeu_ps(
        a.outP + i,
        _mm512_add_ps(p, _mm512_div_ps(_mm512_mul_ps(nss, m), denom)));
    _mm512_storeu_ps(a.outM + i, m);
    _mm512_storeu_ps(a.outV + i, v);
  }
  adamScalar(a, i, e);
}
#endif

tidalrt_status_t adam(OpCall &op) {
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
  if (preparing(op.context))
    return ok();
  int64_t step = scalarInt(op, 4, "step");
  if (step < 1)
    fail(TIDALRT_INVALID_ARGUMENT, "step is %lld; it counts from 1",
         (long long)step);
  double bc1 = 1.0 - std::pow(beta1, (double)step);
  double bc2 = 1.0 - std::pow(beta2, (double)step);
  double stepSize = lr / bc1;
  AdamArgs a{op[0].f32(),
             op[1].f32(),
             op[2].f32(),
             op[3].f32(),
             op[5].f32(),
             op[6].f32(),
             op[7].f32(),
             wd != 0.0,
             decoupled,
             (float)wd,
             (float)(1.0 - lr * wd),
             (float)beta1,
             (float)(1.0 - beta1),
             (float)beta2,
             (float)(1.0 - beta2),
             (float)std::sqrt(bc2),
             (float)eps,
             (float)-stepSize};
  const simd::Isa isa = simd::activeIsa();
  forChunks(n, [&](int64_t b, int64_t e) {
#if TIDALRT_OTHER_X86
    if (isa == simd::Isa::Avx512)
      return adamAvx512(a, b, e);
    if (isa == simd::Isa::Avx2)
      return adamAvx2(a, b, e);
#endif
    adamScalar(a, b, e);
  });
  (void)isa;
  return ok();
}

//===----------------------------------------------------------------------===//
// ai.onnx.preview.training (double per element, as the evaluator)
//===----------------------------------------------------------------------===//

// onnx_momentum: r, t, x, grad, v -> new_x, new_v; alpha (0), beta (1),
// nesterov (2), norm_coefficient (3).
tidalrt_status_t onnxMomentum(OpCall &op) {
  requireTensors(op, 7);
  static const char *const names[] = {"x", "grad", "v", "new_x", "new_v"};
  int64_t n = op[2].numel();
  requireSameSize(op, {2, 3, 4, 5, 6}, names, n);
  requireIndex(op, 1, "t");
  double alpha = op.getFloat(0), beta = op.getFloat(1);
  bool nesterov = op.getBool(2);
  double norm = op.getFloat(3);
  if (preparing(op.context))
    return ok();
  double r = scalarFloat(op, 0, "r");
  int64_t t = scalarInt(op, 1, "t");
  // ONNX's reference scales the gradient by beta only after the first
  // iteration.
  double betaAdjusted = t > 0 ? beta : 1.0;
  const float *x = op[2].f32(), *g = op[3].f32(), *v = op[4].f32();
  float *outX = op[5].f32(), *outV = op[6].f32();
  forChunks(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      double xi = x[i];
      double gr = norm * xi + g[i];
      double vi = alpha * v[i] + betaAdjusted * gr;
      double step = nesterov ? gr + alpha * vi : vi;
      outX[i] = (float)(xi - r * step);
      outV[i] = (float)vi;
    }
  });
  return ok();
}

// onnx_adagrad: r, t, x, grad, h -> new_x, new_h; decay_factor (0),
// epsilon (1), norm_coefficient (2).
tidalrt_status_t onnxAdagrad(OpCall &op) {
  requireTensors(op, 7);
  static const char *const names[] = {"x", "grad", "h", "new_x", "new_h"};
  int64_t n = op[2].numel();
  requireSameSize(op, {2, 3, 4, 5, 6}, names, n);
  requireIndex(op, 1, "t");
  double decay = op.getFloat(0), eps = op.getFloat(1), norm = op.getFloat(2);
  if (preparing(op.context))
    return ok();
  double r = scalarFloat(op, 0, "r");
  int64_t t = scalarInt(op, 1, "t");
  double rate = r / (1 + (double)t * decay);
  const float *x = op[2].f32(), *g = op[3].f32(), *h = op[4].f32();
  float *outX = op[5].f32(), *outH = op[6].f32();
  forChunks(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      double xi = x[i];
      double gr = norm * xi + g[i];
      double hi = h[i] + gr * gr;
      outX[i] = (float)(xi - rate * gr / (std::sqrt(hi) + eps));
      outH[i] = (float)hi;
    }
  });
  return ok();
}

// onnx_adam: r, t, x, grad, v, h -> new_x, new_v, new_h; alpha (0), beta (1),
// epsilon (2), norm_coefficient (3), norm_coefficient_post (4).
tidalrt_status_t onnxAdam(OpCall &op) {
  requireTensors(op, 9);
  static const char *const names[] = {"x",     "grad",  "v",    "h",
                                      "new_x", "new_v", "new_h"};
  int64_t n = op[2].numel();
  requireSameSize(op, {2, 3, 4, 5, 6, 7, 8}, names, n);
  requireIndex(op, 1, "t");
  double alpha = op.getFloat(0), beta = op.getFloat(1), eps = op.getFloat(2),
         norm = op.getFloat(3), post = op.getFloat(4);
  if (preparing(op.context))
    return ok();
  double r = scalarFloat(op, 0, "r");
  int64_t t = scalarInt(op, 1, "t");
  double td = (double)t;
  double rate =
      t > 0 ? r * std::sqrt(1 - std::pow(beta, td)) / (1 - std::pow(alpha, td))
            : r;
  const float *x = op[2].f32(), *g = op[3].f32(), *v = op[4].f32(),
              *h = op[5].f32();
  float *outX = op[6].f32(), *outV = op[7].f32(), *outH = op[8].f32();
  forChunks(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      double xi = x[i];
      double gr = norm * xi + g[i];
      double vi = alpha * v[i] + (1 - alpha) * gr;
      double hi = beta * h[i] + (1 - beta) * gr * gr;
      double nx = xi - rate * vi / (std::sqrt(hi) + eps);
      outX[i] = (float)((1 - post) * nx);
      outV[i] = (float)vi;
      outH[i] = (float)hi;
    }
  });
  return ok();
}

#undef TIDALRT_AVX2
#undef TIDALRT_AVX512

} // namespace
} // namespace other
} // namespace tidalrt

using namespace tidalrt;

extern "C" tidalrt_status_t tidalrt_k_sgd_update(tidalrt_context_t *ctx,
                                                 const int64_t *desc,
                                                 void *const *buffers) {
  return runKernel(ctx, desc, buffers, "sgd_update", other::sgd);
}

extern "C" tidalrt_status_t
tidalrt_k_sgd_momentum_update(tidalrt_context_t *ctx, const int64_t *desc,
                              void *const *buffers) {
  return runKernel(ctx, desc, buffers, "sgd_momentum_update",
                   other::sgdMomentum);
}

extern "C" tidalrt_status_t tidalrt_k_adam_update(tidalrt_context_t *ctx,
                                                  const int64_t *desc,
                                                  void *const *buffers) {
  return runKernel(ctx, desc, buffers, "adam_update", other::adam);
}

extern "C" tidalrt_status_t tidalrt_k_onnx_momentum(tidalrt_context_t *ctx,
                                                    const int64_t *desc,
                                                    void *const *buffers) {
  return runKernel(ctx, desc, buffers, "onnx_momentum", other::onnxMomentum);
}

extern "C" tidalrt_status_t tidalrt_k_onnx_adagrad(tidalrt_context_t *ctx,
                                                   const int64_t *desc,
                                                   void *const *buffers) {
  return runKernel(ctx, desc, buffers, "onnx_adagrad", other::onnxAdagrad);
}

extern "C" tidalrt_status_t tidalrt_k_onnx_adam(tidalrt_context_t *ctx,
                                                const int64_t *desc,
                                                void *const *buffers) {
  return runKernel(ctx, desc, buffers, "onnx_adam", other::onnxAdam);
}
