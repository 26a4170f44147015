// dropout.h - the CUDA kernels dropout and dropout_backward (launch.h),
// one thread per element.
//
// Masks are the CPU kernel's (cpu/dropout.cpp) bit for bit, with its
// hash (cpu/dropout_hash.h): element i is
// kept when lowbias32(lowbias32(i + k1) ^ k2) >= ceil(ratio * 2^32), with
// (k1, k2) the halves of the SplitMix64 key of (seed, step, stream),
// re-keyed every 2^32 elements. The key is computed on the host per call;
// each thread hashes its own index, so masks do not depend on the launch.
// Kept elements are x * (1 / (1 - ratio)), one IEEE product, so outputs
// match too.
#ifndef TIDALRT_CUDA_ELEMENTWISE_DROPOUT_H
#define TIDALRT_CUDA_ELEMENTWISE_DROPOUT_H

#include "common.h"
#include "host.h"

namespace tidalrt {
namespace cuda {
namespace elementwise {

template <typename T> struct DropoutBody {
  const T *x;
  T *y;
  uint8_t *mask;
  uint64_t key;
  uint64_t threshold;
  T scale;
  TIDAL_HD void operator()(int64_t i) const {
    using tidalrt::dropout::lowbias32;
    const uint64_t k = tidalrt::dropout::blockKey(key, (uint64_t)i >> 32);
    const uint32_t u =
        lowbias32(lowbias32((uint32_t)i + (uint32_t)k) ^ (uint32_t)(k >> 32));
    const bool keep = u >= threshold;
    mask[i] = keep;
    y[i] = keep ? x[i] * scale : (T)0;
  }
};

struct FillBody {
  uint8_t *p;
  uint8_t value;
  TIDAL_HD void operator()(int64_t i) const { p[i] = value; }
};

template <typename T, class L>
void launchDropout(L &l, const OpCall &op, const DropoutParams &p) {
  DropoutBody<T> body;
  body.x = static_cast<const T *>(op[0].data);
  body.y = static_cast<T *>(op[1].data);
  body.mask = op[2].u8();
  body.key = p.key;
  body.threshold = p.threshold;
  body.scale = (T)p.scale;
  l.forEach(p.n, body);
}

template <class L> void dropoutKernel(L &l, const OpCall &op) {
  const DropoutParams p = checkDropout(op);
  if (l.preparing() || p.n == 0)
    return;
  if (p.identity) {
    // Not training, or ratio 0: output = input, every mask byte 1.
    l.copy(op[1].data, op[0].data, op[0].bytes());
    l.forEach(p.n, FillBody{op[2].u8(), 1});
    return;
  }
  if (op[0].type == TIDALRT_ELEMENT_TYPE_F32)
    launchDropout<float>(l, op, p);
  else
    launchDropout<double>(l, op, p);
}

// grad * mask / (1 - ratio): mask ? grad * scale : 0.
template <typename T> struct MaskScaleBody {
  const T *g;
  const uint8_t *mask;
  T *y;
  T scale;
  TIDAL_HD void operator()(int64_t i) const {
    y[i] = mask[i] ? g[i] * scale : (T)0;
  }
};

template <typename T, class L>
void launchMaskScale(L &l, const OpCall &op, int64_t n, double scale) {
  MaskScaleBody<T> body;
  body.g = static_cast<const T *>(op[0].data);
  body.mask = op[1].u8();
  body.y = static_cast<T *>(op[2].data);
  body.scale = (T)scale;
  l.forEach(n, body);
}

template <class L> void dropoutBackwardKernel(L &l, const OpCall &op) {
  double scale = 1.0;
  const int64_t n = checkDropoutBackward(op, scale);
  if (l.preparing() || n == 0)
    return;
  if (op[0].type == TIDALRT_ELEMENT_TYPE_F32)
    launchMaskScale<float>(l, op, n, scale);
  else
    launchMaskScale<double>(l, op, n, scale);
}

} // namespace elementwise

template <class L> void k_dropout(L &l, OpCall &op) {
  elementwise::dropoutKernel(l, op);
}
template <class L> void k_dropout_backward(L &l, OpCall &op) {
  elementwise::dropoutBackwardKernel(l, op);
}

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_ELEMENTWISE_DROPOUT_H
