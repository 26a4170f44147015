// activation.h - the CUDA kernels of the activation family and the
// element-wise math ops (clip, hard_sigmoid, hard_swish, elu, selu, celu,
// softplus, softsign, mish, abs, reciprocal, sin, cos, sign, floor, ceil,
// round) and their backward kernels (launch.h), one thread per element.
//
// Each element is computed by the formula the CPU kernel uses
// (cpu/activation_math.h, one definition for both), after the CPU's checks
// and attribute reading (cpu/activation_checks.h, through host.h). So the host
// emulation equals the CPU kernel run with TIDAL_CPU_ISA=scalar bit for bit,
// and the AVX2 path too (its loops are the scalar formulas' IEEE operations);
// on a GPU the IEEE-only ops (clip, hard_sigmoid, hard_swish, abs, reciprocal,
// softsign, sign, floor, ceil, round and their backward kernels) agree
// exactly, the transcendental ones within CUDA's few ulp.
#ifndef TIDALRT_CUDA_ELEMENTWISE_ACTIVATION_H
#define TIDALRT_CUDA_ELEMENTWISE_ACTIVATION_H

#include "../../cpu/activation_math.h"
#include "common.h"
#include "host.h"

namespace tidalrt {
namespace cuda {
namespace elementwise {

template <act::Kind K, typename T> struct ActivationBody {
  const T *x;
  T *y;
  act::Params<T> p;
  TIDAL_HD void operator()(int64_t i) const {
    y[i] = act::forward<K, T>(x[i], p);
  }
};

template <act::Kind K, typename T, class L>
void launchActivation(L &l, const OpCall &op, int64_t n,
                      const act::Params<double> &p) {
  ActivationBody<K, T> body;
  body.x = static_cast<const T *>(op[0].data);
  body.y = static_cast<T *>(op[1].data);
  body.p = act::castParams<T>(p);
  l.forEach(n, body);
}

template <act::Kind K, class L> void activationKernel(L &l, const OpCall &op) {
  const int64_t n = checkUnary(op, act::takesIntegers(K));
  const act::Params<double> p = activationParams(K, op);
  if (l.preparing() || n == 0)
    return;
  switch (op[0].type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return launchActivation<K, float>(l, op, n, p);
  case TIDALRT_ELEMENT_TYPE_F64:
    return launchActivation<K, double>(l, op, n, p);
  }
  if constexpr (act::takesIntegers(K)) {
    if (op[0].type == TIDALRT_ELEMENT_TYPE_I64)
      return launchActivation<K, int64_t>(l, op, n, p);
    return launchActivation<K, int32_t>(l, op, n, p);
  }
}

template <act::Kind K, typename T> struct ActivationGradBody {
  const T *g;
  const T *x;
  T *y;
  act::Params<T> p;
  TIDAL_HD void operator()(int64_t i) const {
    y[i] = act::backward<K, T>(g[i], x[i], p);
  }
};

template <act::Kind K, typename T, class L>
void launchActivationGrad(L &l, const OpCall &op, int64_t n,
                          const act::Params<double> &p) {
  ActivationGradBody<K, T> body;
  body.g = static_cast<const T *>(op[0].data);
  body.x = static_cast<const T *>(op[1].data);
  body.y = static_cast<T *>(op[2].data);
  body.p = act::castParams<T>(p);
  l.forEach(n, body);
}

template <act::Kind K, class L>
void activationGradKernel(L &l, const OpCall &op) {
  const int64_t n = checkActivationBackward(op);
  const act::Params<double> p = activationParams(K, op);
  if (l.preparing() || n == 0)
    return;
  if (op[0].type == TIDALRT_ELEMENT_TYPE_F32)
    launchActivationGrad<K, float>(l, op, n, p);
  else
    launchActivationGrad<K, double>(l, op, n, p);
}

} // namespace elementwise

#define TIDALRT_CUDA_ACTIVATION(name, K)                                       \
  template <class L> void k_##name(L &l, OpCall &op) {                         \
    elementwise::activationKernel<act::Kind::K>(l, op);                        \
  }
TIDALRT_CUDA_ACTIVATION(clip, Clip)
TIDALRT_CUDA_ACTIVATION(hard_sigmoid, HardSigmoid)
TIDALRT_CUDA_ACTIVATION(hard_swish, HardSwish)
TIDALRT_CUDA_ACTIVATION(elu, Elu)
TIDALRT_CUDA_ACTIVATION(selu, Selu)
TIDALRT_CUDA_ACTIVATION(celu, Celu)
TIDALRT_CUDA_ACTIVATION(softplus, Softplus)
TIDALRT_CUDA_ACTIVATION(softsign, Softsign)
TIDALRT_CUDA_ACTIVATION(mish, Mish)
TIDALRT_CUDA_ACTIVATION(abs, Abs)
TIDALRT_CUDA_ACTIVATION(reciprocal, Reciprocal)
TIDALRT_CUDA_ACTIVATION(sin, Sin)
TIDALRT_CUDA_ACTIVATION(cos, Cos)
TIDALRT_CUDA_ACTIVATION(tan, Tan)
TIDALRT_CUDA_ACTIVATION(asin, Asin)
TIDALRT_CUDA_ACTIVATION(acos, Acos)
TIDALRT_CUDA_ACTIVATION(atan, Atan)
TIDALRT_CUDA_ACTIVATION(sinh, Sinh)
TIDALRT_CUDA_ACTIVATION(cosh, Cosh)
TIDALRT_CUDA_ACTIVATION(asinh, Asinh)
TIDALRT_CUDA_ACTIVATION(acosh, Acosh)
TIDALRT_CUDA_ACTIVATION(atanh, Atanh)
TIDALRT_CUDA_ACTIVATION(sign, Sign)
TIDALRT_CUDA_ACTIVATION(floor, Floor)
TIDALRT_CUDA_ACTIVATION(ceil, Ceil)
TIDALRT_CUDA_ACTIVATION(round, Round)
#undef TIDALRT_CUDA_ACTIVATION

#define TIDALRT_CUDA_ACTIVATION_GRAD(name, K)                                  \
  template <class L> void k_##name##_backward(L &l, OpCall &op) {              \
    elementwise::activationGradKernel<act::Kind::K>(l, op);                    \
  }
TIDALRT_CUDA_ACTIVATION_GRAD(clip, Clip)
TIDALRT_CUDA_ACTIVATION_GRAD(hard_sigmoid, HardSigmoid)
TIDALRT_CUDA_ACTIVATION_GRAD(hard_swish, HardSwish)
TIDALRT_CUDA_ACTIVATION_GRAD(elu, Elu)
TIDALRT_CUDA_ACTIVATION_GRAD(selu, Selu)
TIDALRT_CUDA_ACTIVATION_GRAD(celu, Celu)
TIDALRT_CUDA_ACTIVATION_GRAD(softplus, Softplus)
TIDALRT_CUDA_ACTIVATION_GRAD(softsign, Softsign)
TIDALRT_CUDA_ACTIVATION_GRAD(mish, Mish)
#undef TIDALRT_CUDA_ACTIVATION_GRAD

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_ELEMENTWISE_ACTIVATION_H
