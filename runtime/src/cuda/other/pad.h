// pad.h - tidal.pad and pad_backward on the GPU (twins of cpu/pad.cpp, over
// launch.h): the CPU's checks (cpu/pad_checks.h) and index arithmetic
// (cpu/pad_math.h), one thread per result element, so the results are the
// CPU's bits (copies, and per-element gathers of the gradient in a fixed
// order in double).
#ifndef TIDALRT_CUDA_OTHER_PAD_H
#define TIDALRT_CUDA_OTHER_PAD_H

#include "../../cpu/pad_checks.h"
#include "../launch.h"

#include <cstring>

namespace tidalrt {
namespace cuda {
namespace padk {

template <typename T> struct PadBody {
  const T *x;
  T *y;
  T fill;
  pad::PadMap m;
  TIDAL_HD void operator()(int64_t i) const {
    const int64_t s = m.sourceOffset(i);
    y[i] = s < 0 ? fill : x[s];
  }
};

template <typename T, class L>
void launchPad(L &l, const OpCall &op, const pad::PadMap &m,
               const unsigned char *fill) {
  PadBody<T> body;
  body.x = static_cast<const T *>(op[0].data);
  body.y = static_cast<T *>(op[1].data);
  std::memcpy(&body.fill, fill, sizeof(T));
  body.m = m;
  l.forEach(op[1].numel(), body);
}

template <typename T> struct PadGradBody {
  const T *g;
  T *gi;
  pad::PadMap m;
  TIDAL_HD void operator()(int64_t i) const { gi[i] = (T)m.gatherGrad(g, i); }
};

} // namespace padk

// pad: input -> output; mode (0), pads (1), value (2).
template <class L> void k_pad(L &l, OpCall &op) {
  size_t size = 0;
  const pad::PadMap m = ew::checkPad(op, size);
  unsigned char fill[8] = {};
  const double v = op.getFloat(2);
  switch (op[0].type) {
  case TIDALRT_ELEMENT_TYPE_F32: {
    const float f = (float)v;
    std::memcpy(fill, &f, 4);
    break;
  }
  case TIDALRT_ELEMENT_TYPE_F64:
    std::memcpy(fill, &v, 8);
    break;
  case TIDALRT_ELEMENT_TYPE_I64: {
    const int64_t f = (int64_t)v;
    std::memcpy(fill, &f, 8);
    break;
  }
  case TIDALRT_ELEMENT_TYPE_I32: {
    const int32_t f = (int32_t)v;
    std::memcpy(fill, &f, 4);
    break;
  }
  case TIDALRT_ELEMENT_TYPE_BOOL:
    fill[0] = v != 0.0;
    break;
  default:
    if (m.mode == pad::Constant && v != 0.0)
      fail(TIDALRT_UNSUPPORTED, "a constant fill of %g for this element type",
           v);
  }
  if (l.preparing() || op[1].numel() == 0)
    return;
  switch (size) {
  case 1:
    return padk::launchPad<uint8_t>(l, op, m, fill);
  case 2:
    return padk::launchPad<uint16_t>(l, op, m, fill);
  case 4:
    return padk::launchPad<uint32_t>(l, op, m, fill);
  default:
    return padk::launchPad<uint64_t>(l, op, m, fill);
  }
}

// pad_backward: grad -> grad_input; mode (0), pads (1).
template <class L> void k_pad_backward(L &l, OpCall &op) {
  const pad::PadMap m = ew::checkPadBackward(op);
  if (l.preparing() || op[1].numel() == 0)
    return;
  if (op[0].type == TIDALRT_ELEMENT_TYPE_F32) {
    padk::PadGradBody<float> body{static_cast<const float *>(op[0].data),
                                  static_cast<float *>(op[1].data), m};
    l.forEach(op[1].numel(), body);
  } else {
    padk::PadGradBody<double> body{static_cast<const double *>(op[0].data),
                                   static_cast<double *>(op[1].data), m};
    l.forEach(op[1].numel(), body);
  }
}

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_OTHER_PAD_H
