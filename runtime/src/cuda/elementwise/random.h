// random.h - the CUDA kernels random_normal and random_uniform (launch.h),
// one thread per element.
//
// Values are the CPU kernel's (cpu/random.cpp): element i is
// random::normalAt / uniformAt (cpu/random_draw.h) of the stream key of
// (seed, step, stream), computed on the host per call; each thread hashes
// its own index, so values do not depend on the launch.
#ifndef TIDALRT_CUDA_ELEMENTWISE_RANDOM_H
#define TIDALRT_CUDA_ELEMENTWISE_RANDOM_H

#include "../../cpu/random_draw.h"
#include "common.h"
#include "host.h"

namespace tidalrt {
namespace cuda {
namespace elementwise {

template <typename T> struct RandomBody {
  T *y;
  uint64_t key;
  double a, b;
  bool normal;
  TIDAL_HD void operator()(int64_t i) const {
    y[i] = (T)(normal ? tidalrt::random::normalAt(key, (uint64_t)i, a, b)
                      : tidalrt::random::uniformAt(key, (uint64_t)i, a, b));
  }
};

template <class L> void randomKernel(L &l, const OpCall &op, bool normal) {
  const RandomParams p = checkRandom(op, normal);
  if (l.preparing() || p.n == 0)
    return;
  if (op[0].type == TIDALRT_ELEMENT_TYPE_F32)
    l.forEach(p.n, RandomBody<float>{op[0].f32(), p.key, p.a, p.b, normal});
  else
    l.forEach(p.n, RandomBody<double>{static_cast<double *>(op[0].data), p.key,
                                      p.a, p.b, normal});
}

} // namespace elementwise

template <class L> void k_random_normal(L &l, OpCall &op) {
  elementwise::randomKernel(l, op, true);
}
template <class L> void k_random_uniform(L &l, OpCall &op) {
  elementwise::randomKernel(l, op, false);
}

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_ELEMENTWISE_RANDOM_H
