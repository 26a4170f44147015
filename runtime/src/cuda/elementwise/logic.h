// logic.h - the CUDA kernels of the logic family (max, min, the
// comparisons, the mask ops and where; launch.h), one thread per result
// element: the CPU's checks (cpu/logic_checks.h) and formulas and broadcast
// index map (cpu/logic_math.h), so every result equals the CPU kernel's bit
// for bit (IEEE comparisons and selections only).
#ifndef TIDALRT_CUDA_ELEMENTWISE_LOGIC_H
#define TIDALRT_CUDA_ELEMENTWISE_LOGIC_H

#include "../../cpu/logic_checks.h"
#include "common.h"

namespace tidalrt {
namespace cuda {
namespace elementwise {

template <logic::Op K, typename T> struct LogicBody {
  using R = decltype(logic::apply<K, T>(T(), T()));
  const T *a;
  const T *b;
  R *y;
  logic::IndexMap m;
  TIDAL_HD void operator()(int64_t i) const {
    int64_t o[logic::IndexMap::kMaxOperands];
    m.offsets(i, o);
    y[i] = logic::apply<K, T>(a[o[0]], b[o[1]]);
  }
};

template <logic::Op K, typename T, class L>
void launchLogic(L &l, const OpCall &op, const logic::IndexMap &m) {
  LogicBody<K, T> body;
  body.a = static_cast<const T *>(op[0].data);
  body.b = static_cast<const T *>(op[1].data);
  body.y = static_cast<typename LogicBody<K, T>::R *>(op[2].data);
  body.m = m;
  l.forEach(m.total, body);
}

template <logic::Op K, class L> void logicKernel(L &l, const OpCall &op) {
  const logic::IndexMap m = ew::checkLogicBinary(op, K);
  if (l.preparing() || m.total == 0)
    return;
  switch (op[0].type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return launchLogic<K, float>(l, op, m);
  case TIDALRT_ELEMENT_TYPE_F64:
    return launchLogic<K, double>(l, op, m);
  case TIDALRT_ELEMENT_TYPE_I64:
    return launchLogic<K, int64_t>(l, op, m);
  case TIDALRT_ELEMENT_TYPE_I32:
    return launchLogic<K, int32_t>(l, op, m);
  case TIDALRT_ELEMENT_TYPE_I16:
    return launchLogic<K, int16_t>(l, op, m);
  case TIDALRT_ELEMENT_TYPE_I8:
    return launchLogic<K, int8_t>(l, op, m);
  case TIDALRT_ELEMENT_TYPE_U64:
    return launchLogic<K, uint64_t>(l, op, m);
  case TIDALRT_ELEMENT_TYPE_U32:
    return launchLogic<K, uint32_t>(l, op, m);
  case TIDALRT_ELEMENT_TYPE_U16:
    return launchLogic<K, uint16_t>(l, op, m);
  case TIDALRT_ELEMENT_TYPE_U8:
    return launchLogic<K, uint8_t>(l, op, m);
  }
  if constexpr (K != logic::Op::Max && K != logic::Op::Min)
    launchLogic<K, uint8_t>(l, op, m);
}

struct NotBody {
  const uint8_t *x;
  uint8_t *y;
  TIDAL_HD void operator()(int64_t i) const { y[i] = x[i] == 0; }
};

template <class L> void notKernel(L &l, const OpCall &op) {
  const int64_t n = ew::checkNot(op);
  if (l.preparing() || n == 0)
    return;
  NotBody body;
  body.x = static_cast<const uint8_t *>(op[0].data);
  body.y = static_cast<uint8_t *>(op[1].data);
  l.forEach(n, body);
}

// Selection copies bits: only the element size matters.
template <typename T> struct WhereBody {
  const uint8_t *c;
  const T *a;
  const T *b;
  T *y;
  logic::IndexMap m;
  TIDAL_HD void operator()(int64_t i) const {
    int64_t o[logic::IndexMap::kMaxOperands];
    m.offsets(i, o);
    y[i] = c[o[0]] ? a[o[1]] : b[o[2]];
  }
};

template <typename T, class L>
void launchWhere(L &l, const OpCall &op, const logic::IndexMap &m) {
  WhereBody<T> body;
  body.c = static_cast<const uint8_t *>(op[0].data);
  body.a = static_cast<const T *>(op[1].data);
  body.b = static_cast<const T *>(op[2].data);
  body.y = static_cast<T *>(op[3].data);
  body.m = m;
  l.forEach(m.total, body);
}

template <class L> void whereKernel(L &l, const OpCall &op) {
  size_t size = 0;
  const logic::IndexMap m = ew::checkWhere(op, size);
  if (l.preparing() || m.total == 0)
    return;
  switch (size) {
  case 1:
    return launchWhere<uint8_t>(l, op, m);
  case 2:
    return launchWhere<uint16_t>(l, op, m);
  case 4:
    return launchWhere<uint32_t>(l, op, m);
  default:
    return launchWhere<uint64_t>(l, op, m);
  }
}

} // namespace elementwise

#define TIDALRT_CUDA_LOGIC(name, K)                                            \
  template <class L> void k_##name(L &l, OpCall &op) {                         \
    elementwise::logicKernel<logic::Op::K>(l, op);                             \
  }
TIDALRT_CUDA_LOGIC(max, Max)
TIDALRT_CUDA_LOGIC(min, Min)
TIDALRT_CUDA_LOGIC(equal, Equal)
TIDALRT_CUDA_LOGIC(less, Less)
TIDALRT_CUDA_LOGIC(less_or_equal, LessOrEqual)
TIDALRT_CUDA_LOGIC(greater, Greater)
TIDALRT_CUDA_LOGIC(greater_or_equal, GreaterOrEqual)
TIDALRT_CUDA_LOGIC(logical_and, And)
TIDALRT_CUDA_LOGIC(logical_or, Or)
TIDALRT_CUDA_LOGIC(logical_xor, Xor)
#undef TIDALRT_CUDA_LOGIC

template <class L> void k_logical_not(L &l, OpCall &op) {
  elementwise::notKernel(l, op);
}
template <class L> void k_where(L &l, OpCall &op) {
  elementwise::whereKernel(l, op);
}

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_ELEMENTWISE_LOGIC_H
