// cast.h - tidal.cast on the GPU (launch.h), one thread per element: the
// CPU's check (cpu/cast_checks.h) and conversions (cpu/cast_math.h), so the
// results are the CPU kernel's bits.
#ifndef TIDALRT_CUDA_ELEMENTWISE_CAST_H
#define TIDALRT_CUDA_ELEMENTWISE_CAST_H

#include "../../cpu/cast_checks.h"
#include "../../cpu/cast_math.h"
#include "common.h"

namespace tidalrt {
namespace cuda {
namespace elementwise {

template <typename To, typename From> struct CastBody {
  const From *x;
  To *y;
  TIDAL_HD void operator()(int64_t i) const {
    y[i] = cast::convert<To, From>(x[i]);
  }
};

template <typename From, class L>
void castFrom(L &l, const OpCall &op, int64_t n) {
  const From *x = static_cast<const From *>(op[0].data);
  switch (op[1].type) {
#define TIDALRT_CUDA_CAST_TO(tag, T)                                           \
  case TIDALRT_ELEMENT_TYPE_##tag: {                                           \
    CastBody<T, From> body{x, static_cast<T *>(op[1].data)};                   \
    return l.forEach(n, body);                                                 \
  }
    TIDALRT_CAST_TYPES(TIDALRT_CUDA_CAST_TO)
#undef TIDALRT_CUDA_CAST_TO
  }
}

} // namespace elementwise

template <class L> void k_cast(L &l, OpCall &op) {
  const int64_t n = ew::checkCast(op);
  if (l.preparing() || n == 0)
    return;
  switch (op[0].type) {
#define TIDALRT_CUDA_CAST_FROM(tag, T)                                         \
  case TIDALRT_ELEMENT_TYPE_##tag:                                             \
    return elementwise::castFrom<T>(l, op, n);
    TIDALRT_CAST_TYPES(TIDALRT_CUDA_CAST_FROM)
#undef TIDALRT_CUDA_CAST_FROM
  }
}

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_ELEMENTWISE_CAST_H
