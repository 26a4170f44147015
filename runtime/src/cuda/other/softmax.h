// softmax.h - softmax and log-softmax forward and backward on the GPU
// (twins of runtime/src/cpu/softmax.cpp).
//
// The tensor is seen as outer x n x inner around the axis; one thread owns a
// row (one outer index and one inner column) and reduces its n elements in
// order, in double, exactly as the CPU kernel's scalar path (rowScalar /
// blockScalar): the emulation gives the scalar path's bits. The CPU's AVX2
// path differs from its scalar path by a few ulp (a polynomial exp, sums in
// 8 lanes), and on the GPU expf and log differ from glibc's by up to 2 ulp,
// so results agree with the CPU kernel to a few ulp, not bitwise.
#ifndef TIDALRT_CUDA_OTHER_SOFTMAX_H
#define TIDALRT_CUDA_OTHER_SOFTMAX_H

#include "../../cpu/softmax_checks.h"
#include "common.h"

namespace tidalrt {
namespace cuda {
namespace other {

// The CPU kernels' checks and shape decoding (cpu/softmax_checks.h).
using tidalrt::other::checkSoftmax;
using tidalrt::other::checkSoftmaxBackward;
using tidalrt::other::SoftmaxLayout;

enum class SoftmaxOp : int {
  Softmax,
  LogSoftmax,
  SoftmaxBackward,
  LogSoftmaxBackward
};

TIDAL_HD inline float negativeInfinity() {
  const uint32_t bits = 0xff800000u;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

// Row r = (o, i) of outer x n x inner: element k is at (o * n + k) * inner +
// i. For the backward ops `a` is grad and `b` the forward output; for the
// forward ops `a` is the input and `b` unused.
struct SoftmaxRows {
  SoftmaxOp op;
  const float *a;
  const float *b;
  float *out;
  int64_t n, inner;

  TIDAL_HD void operator()(int64_t r) const {
    const int64_t o = r / inner, base = o * n * inner + r % inner;
    const int64_t s = inner;
    const float *x = a + base;
    const float *y = b ? b + base : nullptr;
    float *z = out + base;
    double sum = 0.0;
    switch (op) {
    case SoftmaxOp::Softmax:
    case SoftmaxOp::LogSoftmax: {
      float mx = negativeInfinity();
      for (int64_t k = 0; k < n; ++k) {
        float v = x[k * s];
        mx = mx < v ? v : mx; // std::max(mx, v)
      }
      if (op == SoftmaxOp::Softmax) {
        for (int64_t k = 0; k < n; ++k) {
          float e = expf(x[k * s] - mx);
          z[k * s] = e;
          sum += e;
        }
        float inv = (float)(1.0 / sum);
        for (int64_t k = 0; k < n; ++k)
          z[k * s] *= inv;
      } else {
        for (int64_t k = 0; k < n; ++k)
          sum += expf(x[k * s] - mx);
        float lse = (float)log(sum);
        for (int64_t k = 0; k < n; ++k)
          z[k * s] = (x[k * s] - mx) - lse;
      }
      break;
    }
    case SoftmaxOp::SoftmaxBackward: {
      for (int64_t k = 0; k < n; ++k)
        sum += (double)x[k * s] * y[k * s];
      float t = (float)sum;
      for (int64_t k = 0; k < n; ++k)
        z[k * s] = y[k * s] * (x[k * s] - t);
      break;
    }
    case SoftmaxOp::LogSoftmaxBackward: {
      for (int64_t k = 0; k < n; ++k)
        sum += x[k * s];
      float t = (float)sum;
      for (int64_t k = 0; k < n; ++k)
        z[k * s] = x[k * s] - expf(y[k * s]) * t;
      break;
    }
    }
  }
};

// Starts the rows of `op` over device pointers a, b (may be null), out.
template <class L>
void softmaxRows(L &l, SoftmaxOp op, const float *a, const float *b, float *out,
                 const SoftmaxLayout &s) {
  if (s.outer == 0 || s.n == 0 || s.inner == 0)
    return;
  l.forEach(s.outer * s.inner, SoftmaxRows{op, a, b, out, s.n, s.inner});
}

// softmax, log_softmax: input -> output; axis (0).
template <class L> void softmaxForward(L &l, OpCall &op, SoftmaxOp kind) {
  SoftmaxLayout s = checkSoftmax(op);
  if (l.preparing())
    return;
  softmaxRows(l, kind, op[0].f32(), nullptr, op[1].f32(), s);
}

// softmax_backward, log_softmax_backward: grad, output -> grad_input; axis
// (0).
template <class L> void softmaxBackward(L &l, OpCall &op, SoftmaxOp kind) {
  SoftmaxLayout s = checkSoftmaxBackward(op);
  if (l.preparing())
    return;
  softmaxRows(l, kind, op[0].f32(), op[1].f32(), op[2].f32(), s);
}

} // namespace other

template <class L> void k_softmax(L &l, OpCall &op) {
  other::softmaxForward(l, op, other::SoftmaxOp::Softmax);
}
template <class L> void k_log_softmax(L &l, OpCall &op) {
  other::softmaxForward(l, op, other::SoftmaxOp::LogSoftmax);
}
template <class L> void k_softmax_backward(L &l, OpCall &op) {
  other::softmaxBackward(l, op, other::SoftmaxOp::SoftmaxBackward);
}
template <class L> void k_log_softmax_backward(L &l, OpCall &op) {
  other::softmaxBackward(l, op, other::SoftmaxOp::LogSoftmaxBackward);
}

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_OTHER_SOFTMAX_H
