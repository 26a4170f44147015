// elementwise_binary.cpp - broadcasting binary arithmetic.
//
// add, sub, mul, div: both operands broadcast (NumPy rules) to the result's
// shape; operands and result share one element type: float32 (AVX2 or
// scalar loops, simd.h), float64, int64 or int32 (scalar loops; integer
// add/sub/mul wrap, div truncates toward zero and fails on a zero divisor as
// the reference evaluator does).
//
// pow: the base and result share float32, float64, int64 or int32; the
// exponent may be any of those. Computed as std::pow in double and rounded
// to the result type (truncated for integers), as the evaluator does, except
// that a float32 base with a float32 or integer exponent uses powf (within
// 1 ulp); a scalar exponent of 1, 2, 3, 0.5 or -1 takes shortcuts.
#include "broadcast.h"
#include "elementwise_checks.h"
#include "kernel.h"
#include "simd.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

using namespace tidalrt;
using namespace tidalrt::ew;

namespace {

enum class Kind { Add, Sub, Mul, Div };

void checkBroadcast(const OpCall &op, BroadcastPlan &plan) {
  const TensorRef *inputs[2] = {&op[0], &op[1]};
  const TensorRef &y = op[2];
  int bad = buildBroadcastPlan(y.rank, y.dims, 2, inputs, plan);
  if (bad >= 0) {
    char b1[160], b2[160];
    fail(TIDALRT_INVALID_ARGUMENT,
         "%s operand of shape %s does not broadcast to the result shape %s",
         bad == 0 ? "lhs" : "rhs", shapeString(*inputs[bad], b1, sizeof b1),
         shapeString(y, b2, sizeof b2));
  }
}

bool supportedPowType(int32_t t) {
  return t == TIDALRT_ELEMENT_TYPE_F32 || t == TIDALRT_ELEMENT_TYPE_F64 ||
         t == TIDALRT_ELEMENT_TYPE_I64 || t == TIDALRT_ELEMENT_TYPE_I32;
}

} // namespace

void tidalrt::ew::checkArithmetic(const OpCall &op, BroadcastPlan &plan) {
  expectTensors(op, 3);
  const TensorRef &a = op[0], &b = op[1], &y = op[2];
  if (a.type != y.type || b.type != y.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "operands of types %s and %s with a %s result; all three must match",
         typeName(a.type), typeName(b.type), typeName(y.type));
  switch (y.type) {
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
    break;
  default:
    fail(TIDALRT_UNSUPPORTED,
         "element type %s is not supported (float32, float64 or an integer "
         "type)",
         typeName(y.type));
  }
  checkBroadcast(op, plan);
}

void tidalrt::ew::checkPow(const OpCall &op, BroadcastPlan &plan) {
  expectTensors(op, 3);
  const TensorRef &a = op[0], &b = op[1], &y = op[2];
  if (a.type != y.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "base of type %s with a %s result; they must match", typeName(a.type),
         typeName(y.type));
  bool unsignedExponent =
      b.type == TIDALRT_ELEMENT_TYPE_U32 || b.type == TIDALRT_ELEMENT_TYPE_U64;
  if (!supportedPowType(a.type) ||
      (!supportedPowType(b.type) && !unsignedExponent))
    fail(TIDALRT_UNSUPPORTED,
         "base %s, exponent %s: the base must be float32, float64, int64 or "
         "int32, the exponent also uint32 or uint64",
         typeName(a.type), typeName(b.type));
  checkBroadcast(op, plan);
}

namespace {

template <typename T> T applyInt(Kind kind, T a, T b) {
  using U = std::make_unsigned_t<T>;
  switch (kind) {
  case Kind::Add:
    return (T)((U)a + (U)b);
  case Kind::Sub:
    return (T)((U)a - (U)b);
  case Kind::Mul:
    return (T)((U)a * (U)b);
  case Kind::Div:
    // b != 0 is checked first; -1 wraps instead of overflowing.
    if constexpr (std::is_signed_v<T>)
      if (b == -1)
        return (T)((U)0 - (U)a);
    return (T)(a / b);
  }
  return 0;
}

template <typename T> T applyFloat(Kind kind, T a, T b) {
  switch (kind) {
  case Kind::Add:
    return a + b;
  case Kind::Sub:
    return a - b;
  case Kind::Mul:
    return a * b;
  case Kind::Div:
    return a / b;
  }
  return 0;
}

template <typename TA, typename TB, typename TY, typename F>
void rowLoop(const TA *a, int64_t as, const TB *b, int64_t bs, TY *y, int64_t n,
             F f) {
  if (as == 1 && bs == 1)
    for (int64_t i = 0; i < n; ++i)
      y[i] = f(a[i], b[i]);
  else if (as == 1)
    for (int64_t i = 0; i < n; ++i)
      y[i] = f(a[i], b[0]);
  else if (bs == 1)
    for (int64_t i = 0; i < n; ++i)
      y[i] = f(a[0], b[i]);
  else
    for (int64_t i = 0; i < n; ++i)
      y[i] = f(a[0], b[0]);
}

template <typename T>
void runScalar(const BroadcastPlan &plan, Kind kind, const T *A, const T *B,
               T *Y) {
  const int64_t as = plan.innerStride(0), bs = plan.innerStride(1);
  forEachRow(plan, [&](int64_t yo, const int64_t *io, int64_t c0, int64_t c1) {
    const T *a = A + io[0] + c0 * as;
    const T *b = B + io[1] + c0 * bs;
    T *y = Y + yo + c0;
    if constexpr (std::is_integral_v<T>)
      rowLoop(a, as, b, bs, y, c1 - c0,
              [kind](T u, T v) { return applyInt(kind, u, v); });
    else
      rowLoop(a, as, b, bs, y, c1 - c0,
              [kind](T u, T v) { return applyFloat(kind, u, v); });
  });
}

template <typename T> void checkNoZero(const TensorRef &b) {
  const T *p = static_cast<const T *>(b.data);
  for (int64_t i = 0, n = b.numel(); i < n; ++i)
    if (p[i] == 0)
      fail(TIDALRT_INVALID_ARGUMENT, "integer division by zero");
}

template <typename T>
void runInt(const BroadcastPlan &plan, Kind kind, const TensorRef &a,
            const TensorRef &b, const TensorRef &y) {
  if (kind == Kind::Div)
    checkNoZero<T>(b);
  runScalar(plan, kind, static_cast<const T *>(a.data),
            static_cast<const T *>(b.data), static_cast<T *>(y.data));
}

tidalrt_status_t binaryKernel(OpCall &op, Kind kind) {
  const TensorRef &a = op[0], &b = op[1], &y = op[2];
  BroadcastPlan plan;
  checkArithmetic(op, plan);
  if (preparing(op.context) || plan.total == 0)
    return ok();
  switch (y.type) {
  case TIDALRT_ELEMENT_TYPE_F32: {
    const simd::Isa isa = simd::activeIsa();
    const simd::Binary sk = kind == Kind::Add   ? simd::Binary::Add
                            : kind == Kind::Sub ? simd::Binary::Sub
                            : kind == Kind::Mul ? simd::Binary::Mul
                                                : simd::Binary::Div;
    const float *A = a.f32(), *B = b.f32();
    float *Y = y.f32();
    const int64_t as = plan.innerStride(0), bs = plan.innerStride(1);
    forEachRow(plan,
               [&](int64_t yo, const int64_t *io, int64_t c0, int64_t c1) {
                 simd::binaryF32(isa, sk, A + io[0] + c0 * as, as,
                                 B + io[1] + c0 * bs, bs, Y + yo + c0, c1 - c0);
               });
    break;
  }
  case TIDALRT_ELEMENT_TYPE_F64:
    runScalar(plan, kind, static_cast<const double *>(a.data),
              static_cast<const double *>(b.data),
              static_cast<double *>(y.data));
    break;
  case TIDALRT_ELEMENT_TYPE_I64:
    runInt<int64_t>(plan, kind, a, b, y);
    break;
  case TIDALRT_ELEMENT_TYPE_I32:
    runInt<int32_t>(plan, kind, a, b, y);
    break;
  case TIDALRT_ELEMENT_TYPE_I16:
    runInt<int16_t>(plan, kind, a, b, y);
    break;
  case TIDALRT_ELEMENT_TYPE_I8:
    runInt<int8_t>(plan, kind, a, b, y);
    break;
  case TIDALRT_ELEMENT_TYPE_U64:
    runInt<uint64_t>(plan, kind, a, b, y);
    break;
  case TIDALRT_ELEMENT_TYPE_U32:
    runInt<uint32_t>(plan, kind, a, b, y);
    break;
  case TIDALRT_ELEMENT_TYPE_U16:
    runInt<uint16_t>(plan, kind, a, b, y);
    break;
  case TIDALRT_ELEMENT_TYPE_U8:
    runInt<uint8_t>(plan, kind, a, b, y);
    break;
  }
  return ok();
}

//===----------------------------------------------------------------------===//
// pow
//===----------------------------------------------------------------------===//

// A double rounded to T as the evaluator rounds results (integers
// truncate; out-of-range values saturate instead of being undefined).
template <typename T> T fromDouble(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return (T)v;
  } else {
    if (std::isnan(v))
      return 0;
    double t = std::trunc(v);
    if (t <= (double)std::numeric_limits<T>::min())
      return std::numeric_limits<T>::min();
    if (t >= (double)std::numeric_limits<T>::max())
      return std::numeric_limits<T>::max();
    return (T)t;
  }
}

template <typename TB, typename TE>
void powRows(const BroadcastPlan &plan, const TB *A, const TE *B, TB *Y) {
  const int64_t as = plan.innerStride(0), bs = plan.innerStride(1);
  forEachRow(plan, [&](int64_t yo, const int64_t *io, int64_t c0, int64_t c1) {
    const TB *a = A + io[0] + c0 * as;
    const TE *b = B + io[1] + c0 * bs;
    TB *y = Y + yo + c0;
    if constexpr (std::is_same_v<TB, float> && !std::is_same_v<TE, double>) {
      // powf (< 1 ulp in glibc) is twice as fast as pow in double; integer
      // exponents beyond 2^24 in magnitude go through double.
      rowLoop(a, as, b, bs, y, c1 - c0, [](float u, TE v) {
        if (std::is_same_v<TE, float> ||
            ((double)v >= -16777216.0 && (double)v <= 16777216.0))
          return std::pow(u, (float)v);
        return (float)std::pow((double)u, (double)v);
      });
    } else {
      rowLoop(a, as, b, bs, y, c1 - c0, [](TB u, TE v) {
        return fromDouble<TB>(std::pow((double)u, (double)v));
      });
    }
  });
}

template <typename TB>
void powBase(const BroadcastPlan &plan, const TensorRef &a, const TensorRef &b,
             const TensorRef &y) {
  const TB *A = static_cast<const TB *>(a.data);
  TB *Y = static_cast<TB *>(y.data);
  switch (b.type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return powRows(plan, A, static_cast<const float *>(b.data), Y);
  case TIDALRT_ELEMENT_TYPE_F64:
    return powRows(plan, A, static_cast<const double *>(b.data), Y);
  case TIDALRT_ELEMENT_TYPE_I64:
    return powRows(plan, A, static_cast<const int64_t *>(b.data), Y);
  case TIDALRT_ELEMENT_TYPE_I32:
    return powRows(plan, A, static_cast<const int32_t *>(b.data), Y);
  case TIDALRT_ELEMENT_TYPE_U32:
    return powRows(plan, A, static_cast<const uint32_t *>(b.data), Y);
  case TIDALRT_ELEMENT_TYPE_U64:
    return powRows(plan, A, static_cast<const uint64_t *>(b.data), Y);
  }
}

double scalarAsDouble(const TensorRef &t) {
  switch (t.type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return t.f32()[0];
  case TIDALRT_ELEMENT_TYPE_F64:
    return static_cast<const double *>(t.data)[0];
  case TIDALRT_ELEMENT_TYPE_I64:
    return (double)t.i64()[0];
  case TIDALRT_ELEMENT_TYPE_I32:
    return static_cast<const int32_t *>(t.data)[0];
  case TIDALRT_ELEMENT_TYPE_U32:
    return static_cast<const uint32_t *>(t.data)[0];
  case TIDALRT_ELEMENT_TYPE_U64:
    return (double)static_cast<const uint64_t *>(t.data)[0];
  }
  return NAN;
}

// Float32 with a scalar exponent of 1, 2, 3, 0.5 or -1 and a dense base:
// shortcuts. x*x and 1/x are pow correctly rounded; x*x*x in double
// rounds once more, like the evaluator's pow; pow(x, 0.5) is sqrt(x) except
// that pow(-0, 0.5) = +0 and pow(-inf, 0.5) = +inf. Returns false
// otherwise.
bool powF32Shortcut(const TensorRef &a, const TensorRef &b,
                    const TensorRef &y) {
  if (b.numel() != 1 || a.numel() != y.numel())
    return false;
  const double e = scalarAsDouble(b);
  if (e != 1.0 && e != 2.0 && e != 3.0 && e != 0.5 && e != -1.0)
    return false;
  const float *A = a.f32();
  float *Y = y.f32();
  const simd::Isa isa = simd::activeIsa();
  const float one = 1.0f;
  parallelChunks(y.numel(), [&](int64_t c0, int64_t c1) {
    if (e == 1.0) {
      if (Y != A)
        memcpy(Y + c0, A + c0, (size_t)(c1 - c0) * sizeof(float));
    } else if (e == 2.0) {
      simd::binaryF32(isa, simd::Binary::Mul, A + c0, 1, A + c0, 1, Y + c0,
                      c1 - c0);
    } else if (e == -1.0) {
      simd::binaryF32(isa, simd::Binary::Div, &one, 0, A + c0, 1, Y + c0,
                      c1 - c0);
    } else if (e == 0.5) {
      for (int64_t i = c0; i < c1; ++i)
        Y[i] = A[i] == -INFINITY ? INFINITY : std::sqrt(A[i]) + 0.0f;
    } else {
      for (int64_t i = c0; i < c1; ++i) {
        double v = A[i];
        Y[i] = (float)(v * v * v);
      }
    }
  });
  return true;
}

tidalrt_status_t powKernel(OpCall &op) {
  const TensorRef &a = op[0], &b = op[1], &y = op[2];
  BroadcastPlan plan;
  checkPow(op, plan);
  if (preparing(op.context) || plan.total == 0)
    return ok();
  switch (a.type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    if (!powF32Shortcut(a, b, y))
      powBase<float>(plan, a, b, y);
    break;
  case TIDALRT_ELEMENT_TYPE_F64:
    powBase<double>(plan, a, b, y);
    break;
  case TIDALRT_ELEMENT_TYPE_I64:
    powBase<int64_t>(plan, a, b, y);
    break;
  case TIDALRT_ELEMENT_TYPE_I32:
    powBase<int32_t>(plan, a, b, y);
    break;
  }
  return ok();
}

} // namespace

#define TIDALRT_BINARY_KERNEL(name, kind)                                      \
  extern "C" tidalrt_status_t tidalrt_k_##name(                                \
      tidalrt_context_t *ctx, const int64_t *desc, void *const *buffers) {     \
    return runKernel(ctx, desc, buffers, #name,                                \
                     [](OpCall &op) { return binaryKernel(op, kind); });       \
  }

TIDALRT_BINARY_KERNEL(add, Kind::Add)
TIDALRT_BINARY_KERNEL(sub, Kind::Sub)
TIDALRT_BINARY_KERNEL(mul, Kind::Mul)
TIDALRT_BINARY_KERNEL(div, Kind::Div)

extern "C" tidalrt_status_t tidalrt_k_pow(tidalrt_context_t *ctx,
                                          const int64_t *desc,
                                          void *const *buffers) {
  return runKernel(ctx, desc, buffers, "pow", powKernel);
}
