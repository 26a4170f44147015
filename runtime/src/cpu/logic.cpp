// logic.cpp - the CPU kernels of the logic family (logic_math.h has the
// formulas): max, min, equal, less, less_or_equal, greater,
// greater_or_equal, logical_and, logical_or, logical_xor, logical_not and
// where, with NumPy broadcasting.
//
// Each parallel chunk of the result walks its elements in order, carrying a
// multi-index (no division per element) through the collapsed broadcast
// (logic::IndexMap). These ops build attention and padding masks and clamp
// with tensor bounds: their tensors are small next to the matrix products
// around them, so the plain loops are enough.
#include "broadcast.h"
#include "kernel.h"
#include "logic_checks.h"

#include <cstring>

using namespace tidalrt;
using namespace tidalrt::ew;
using logic::IndexMap;
using logic::Op;

namespace {

// Builds the collapsed index map of `n` operands broadcasting to `out`;
// returns the index of an operand that does not broadcast, or -1.
int buildIndexMap(const TensorRef &out, int n, const TensorRef *const *ins,
                  IndexMap &m) {
  const int rank = out.rank;
  int64_t dims[TIDALRT_MAX_RANK],
      strides[IndexMap::kMaxOperands][TIDALRT_MAX_RANK];
  for (int k = 0; k < n; ++k) {
    const TensorRef &t = *ins[k];
    if (t.rank > rank)
      return k;
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int td = d - (rank - t.rank);
      const int64_t size = td >= 0 ? t.dims[td] : 1;
      if (size != 1 && size != out.dims[d])
        return k;
      strides[k][d] = size == 1 ? 0 : stride;
      stride *= size;
    }
  }
  // Drop size-1 result dimensions, then merge neighbours that every operand
  // walks as one.
  int r = 0;
  for (int d = 0; d < rank; ++d) {
    if (out.dims[d] == 1)
      continue;
    bool merge = r > 0;
    for (int k = 0; k < n && merge; ++k)
      merge = strides[k][r - 1] == strides[k][d] * out.dims[d];
    if (merge) {
      dims[r - 1] *= out.dims[d];
      for (int k = 0; k < n; ++k)
        strides[k][r - 1] = strides[k][d];
      continue;
    }
    dims[r] = out.dims[d];
    for (int k = 0; k < n; ++k)
      strides[k][r] = strides[k][d];
    ++r;
  }
  if (r > IndexMap::kMaxRank) {
    char b[160];
    fail(TIDALRT_UNSUPPORTED,
         "the broadcast of result shape %s has %d dimensions after "
         "collapsing; at most %d are supported",
         shapeString(out, b, sizeof b), r, IndexMap::kMaxRank);
  }
  m.rank = r;
  m.operands = n;
  m.total = out.numel();
  for (int d = 0; d < r; ++d) {
    m.dims[d] = dims[d];
    for (int k = 0; k < n; ++k)
      m.strides[k][d] = strides[k][d];
  }
  return -1;
}

void checkBroadcast(const OpCall &op, int n, const char *const *names,
                    IndexMap &m) {
  const TensorRef *ins[IndexMap::kMaxOperands];
  for (int k = 0; k < n; ++k)
    ins[k] = &op[k];
  const TensorRef &y = op[n];
  const int bad = buildIndexMap(y, n, ins, m);
  if (bad >= 0) {
    char b1[160], b2[160];
    fail(TIDALRT_INVALID_ARGUMENT,
         "%s operand of shape %s does not broadcast to the result shape %s",
         names[bad], shapeString(*ins[bad], b1, sizeof b1),
         shapeString(y, b2, sizeof b2));
  }
}

bool arithmeticType(int32_t t) {
  switch (t) {
  case TIDALRT_ELEMENT_TYPE_F32:
  case TIDALRT_ELEMENT_TYPE_F64:
  case TIDALRT_ELEMENT_TYPE_I64:
  case TIDALRT_ELEMENT_TYPE_I32:
  case TIDALRT_ELEMENT_TYPE_I16:
  case TIDALRT_ELEMENT_TYPE_I8:
  case TIDALRT_ELEMENT_TYPE_U64:
  case TIDALRT_ELEMENT_TYPE_U32:
  case TIDALRT_ELEMENT_TYPE_U16:
  case TIDALRT_ELEMENT_TYPE_U8:
    return true;
  default:
    return false;
  }
}

// Runs f(i, offsets) over the result in parallel chunks, each walking its
// elements with an odometer over the collapsed dimensions.
template <typename F> void forEachElement(const IndexMap &m, F f) {
  parallelChunks(m.total, [&](int64_t begin, int64_t end) {
    int64_t idx[IndexMap::kMaxRank], off[IndexMap::kMaxOperands];
    m.offsets(begin, off);
    int64_t rest = begin;
    for (int d = m.rank - 1; d >= 0; --d) {
      idx[d] = rest % m.dims[d];
      rest /= m.dims[d];
    }
    for (int64_t i = begin; i < end; ++i) {
      f(i, off);
      for (int d = m.rank - 1; d >= 0; --d) {
        for (int k = 0; k < m.operands; ++k)
          off[k] += m.strides[k][d];
        if (++idx[d] < m.dims[d])
          break;
        for (int k = 0; k < m.operands; ++k)
          off[k] -= m.strides[k][d] * m.dims[d];
        idx[d] = 0;
      }
    }
  });
}

} // namespace

IndexMap tidalrt::ew::checkLogicBinary(const OpCall &op, Op kind) {
  expectTensors(op, 3);
  const TensorRef &a = op[0], &b = op[1], &y = op[2];
  if (a.type != b.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "operands of types %s and %s; they must match", typeName(a.type),
         typeName(b.type));
  if (logic::takesMasks(kind)) {
    if (a.type != TIDALRT_ELEMENT_TYPE_BOOL)
      fail(TIDALRT_UNSUPPORTED, "operands of type %s; masks (bool) expected",
           typeName(a.type));
  } else if (!arithmeticType(a.type) &&
             !(logic::returnsMask(kind) &&
               a.type == TIDALRT_ELEMENT_TYPE_BOOL)) {
    fail(TIDALRT_UNSUPPORTED,
         "element type %s is not supported (float32, float64 or an integer "
         "type)",
         typeName(a.type));
  }
  const int32_t want =
      logic::returnsMask(kind) ? TIDALRT_ELEMENT_TYPE_BOOL : a.type;
  if (y.type != want)
    fail(TIDALRT_INVALID_ARGUMENT, "result of type %s; %s expected",
         typeName(y.type), typeName(want));
  static const char *const names[] = {"lhs", "rhs"};
  IndexMap m;
  checkBroadcast(op, 2, names, m);
  return m;
}

int64_t tidalrt::ew::checkNot(const OpCall &op) {
  expectTensors(op, 2);
  const TensorRef &x = op[0], &y = op[1];
  if (x.type != TIDALRT_ELEMENT_TYPE_BOOL ||
      y.type != TIDALRT_ELEMENT_TYPE_BOOL)
    fail(TIDALRT_UNSUPPORTED, "input %s and result %s; masks (bool) expected",
         typeName(x.type), typeName(y.type));
  const int64_t n = x.numel();
  expectElements(y, n, "output");
  return n;
}

IndexMap tidalrt::ew::checkWhere(const OpCall &op, size_t &elementSize) {
  expectTensors(op, 4);
  const TensorRef &c = op[0], &a = op[1], &b = op[2], &y = op[3];
  if (c.type != TIDALRT_ELEMENT_TYPE_BOOL)
    fail(TIDALRT_INVALID_ARGUMENT, "condition of type %s; a mask expected",
         typeName(c.type));
  if (a.type != b.type || a.type != y.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "lhs, rhs and result of types %s, %s and %s; they must match",
         typeName(a.type), typeName(b.type), typeName(y.type));
  elementSize = tidalrt_element_type_size((tidalrt_element_type_t)y.type);
  if (elementSize != 1 && elementSize != 2 && elementSize != 4 &&
      elementSize != 8)
    fail(TIDALRT_UNSUPPORTED, "element type %s is not supported",
         typeName(y.type));
  static const char *const names[] = {"condition", "lhs", "rhs"};
  IndexMap m;
  checkBroadcast(op, 3, names, m);
  return m;
}

namespace {

template <Op K, typename T>
void runBinary(const OpCall &op, const IndexMap &m) {
  const T *A = static_cast<const T *>(op[0].data);
  const T *B = static_cast<const T *>(op[1].data);
  using R = decltype(logic::apply<K, T>(T(), T()));
  R *Y = static_cast<R *>(op[2].data);
  forEachElement(m, [&](int64_t i, const int64_t *o) {
    Y[i] = logic::apply<K, T>(A[o[0]], B[o[1]]);
  });
}

template <Op K> tidalrt_status_t binaryKernel(OpCall &op) {
  const IndexMap m = checkLogicBinary(op, K);
  if (preparing(op.context) || m.total == 0)
    return ok();
  switch (op[0].type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    runBinary<K, float>(op, m);
    break;
  case TIDALRT_ELEMENT_TYPE_F64:
    runBinary<K, double>(op, m);
    break;
  case TIDALRT_ELEMENT_TYPE_I64:
    runBinary<K, int64_t>(op, m);
    break;
  case TIDALRT_ELEMENT_TYPE_I32:
    runBinary<K, int32_t>(op, m);
    break;
  case TIDALRT_ELEMENT_TYPE_I16:
    runBinary<K, int16_t>(op, m);
    break;
  case TIDALRT_ELEMENT_TYPE_I8:
    runBinary<K, int8_t>(op, m);
    break;
  case TIDALRT_ELEMENT_TYPE_U64:
    runBinary<K, uint64_t>(op, m);
    break;
  case TIDALRT_ELEMENT_TYPE_U32:
    runBinary<K, uint32_t>(op, m);
    break;
  case TIDALRT_ELEMENT_TYPE_U16:
    runBinary<K, uint16_t>(op, m);
    break;
  case TIDALRT_ELEMENT_TYPE_U8:
    runBinary<K, uint8_t>(op, m);
    break;
  case TIDALRT_ELEMENT_TYPE_BOOL:
    if constexpr (K != Op::Max && K != Op::Min)
      runBinary<K, uint8_t>(op, m);
    break;
  }
  return ok();
}

tidalrt_status_t notKernel(OpCall &op) {
  const int64_t n = checkNot(op);
  if (preparing(op.context) || n == 0)
    return ok();
  const uint8_t *X = static_cast<const uint8_t *>(op[0].data);
  uint8_t *Y = static_cast<uint8_t *>(op[1].data);
  parallelChunks(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      Y[i] = X[i] == 0;
  });
  return ok();
}

template <typename T> void runWhere(const OpCall &op, const IndexMap &m) {
  const uint8_t *C = static_cast<const uint8_t *>(op[0].data);
  const T *A = static_cast<const T *>(op[1].data);
  const T *B = static_cast<const T *>(op[2].data);
  T *Y = static_cast<T *>(op[3].data);
  forEachElement(m, [&](int64_t i, const int64_t *o) {
    Y[i] = C[o[0]] ? A[o[1]] : B[o[2]];
  });
}

tidalrt_status_t whereKernel(OpCall &op) {
  size_t size = 0;
  const IndexMap m = checkWhere(op, size);
  if (preparing(op.context) || m.total == 0)
    return ok();
  // Selection copies bits: the element size is all that matters.
  switch (size) {
  case 1:
    runWhere<uint8_t>(op, m);
    break;
  case 2:
    runWhere<uint16_t>(op, m);
    break;
  case 4:
    runWhere<uint32_t>(op, m);
    break;
  default:
    runWhere<uint64_t>(op, m);
    break;
  }
  return ok();
}

} // namespace

#define TIDALRT_LOGIC_KERNEL(name, kind)                                       \
  extern "C" tidalrt_status_t tidalrt_k_##name(                                \
      tidalrt_context_t *ctx, const int64_t *desc, void *const *buffers) {     \
    return runKernel(ctx, desc, buffers, #name,                                \
                     [](OpCall &op) { return binaryKernel<Op::kind>(op); });   \
  }
TIDALRT_LOGIC_KERNEL(max, Max)
TIDALRT_LOGIC_KERNEL(min, Min)
TIDALRT_LOGIC_KERNEL(equal, Equal)
TIDALRT_LOGIC_KERNEL(less, Less)
TIDALRT_LOGIC_KERNEL(less_or_equal, LessOrEqual)
TIDALRT_LOGIC_KERNEL(greater, Greater)
TIDALRT_LOGIC_KERNEL(greater_or_equal, GreaterOrEqual)
TIDALRT_LOGIC_KERNEL(logical_and, And)
TIDALRT_LOGIC_KERNEL(logical_or, Or)
TIDALRT_LOGIC_KERNEL(logical_xor, Xor)
#undef TIDALRT_LOGIC_KERNEL

extern "C" tidalrt_status_t tidalrt_k_logical_not(tidalrt_context_t *ctx,
                                                  const int64_t *desc,
                                                  void *const *buffers) {
  return runKernel(ctx, desc, buffers, "logical_not", notKernel);
}

extern "C" tidalrt_status_t tidalrt_k_where(tidalrt_context_t *ctx,
                                            const int64_t *desc,
                                            void *const *buffers) {
  return runKernel(ctx, desc, buffers, "where", whereKernel);
}
