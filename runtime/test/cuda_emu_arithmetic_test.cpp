// cuda_emu_arithmetic_test.cpp - the emulated CUDA arithmetic, pow, unary and
// activation kernels against the CPU kernels, as
// cuda_emu_elementwise_harness.h compares them.
#include "cuda_emu_elementwise_harness.h"

#define TIDALRT_TEST_DEFINE_REVERSE(name)                                      \
  TIDALRT_CUDA_DEFINE_KERNEL(test_reverse_k_, name, emu_test::ReverseLauncher)
TIDALRT_CUDA_ELEMENTWISE_KERNEL_LIST(TIDALRT_TEST_DEFINE_REVERSE)
#undef TIDALRT_TEST_DEFINE_REVERSE

using namespace emu_test;

namespace {

class CudaEmuArithmetic : public CudaEmuFixture {};

// Operand and result shapes of binary ops: equal, broadcast both ways,
// rank 0 and 1, sizes not a multiple of anything, empty, and large enough
// for the CPU's parallel loops.
struct BinaryShapes {
  Shape a, b, y;
};
const BinaryShapes kBinaryShapes[] = {
    {{}, {}, {}},
    {{1}, {1}, {1}},
    {{7}, {7}, {7}},
    {{3, 5}, {3, 5}, {3, 5}},
    {{3, 1}, {1, 5}, {3, 5}},
    {{2, 3, 4}, {4}, {2, 3, 4}},
    {{4}, {2, 3, 4}, {2, 3, 4}},
    {{2, 1, 4, 1}, {3, 1, 5}, {2, 3, 4, 5}},
    {{5, 1, 7}, {1, 6, 1}, {5, 6, 7}},
    {{}, {4, 5}, {4, 5}},
    {{6, 1}, {}, {6, 1}},
    {{1, 1, 1}, {1}, {1, 1, 1}},
    {{37, 1, 1}, {37, 11, 13}, {37, 11, 13}},
    {{0, 3}, {3}, {0, 3}},
    {{2, 0}, {1}, {2, 0}},
    {{300, 257}, {257}, {300, 257}},
    {{40001}, {}, {40001}},
};

//===----------------------------------------------------------------------===//
// add, sub, mul, div
//===----------------------------------------------------------------------===//

TEST_P(CudaEmuArithmetic, Arithmetic) {
  const Kernel kernels[] = {KERNEL(add), KERNEL(sub), KERNEL(mul), KERNEL(div)};
  Gen g(1);
  for (const Kernel &k : kernels) {
    const bool div = std::string(k.name) == "div";
    for (tidalrt_element_type_t t : kArithTypes) {
      for (const BinaryShapes &s : kBinaryShapes) {
        Fill fa, fb;
        fa.fullRange = true;
        // Integer divisors: mostly small (so quotients are not all 0),
        // never 0 (the CPU fails on those, see IntegerDivisionByZero).
        fb.fullRange = !div || g.integer(0, 3) == 0;
        fb.lo = -9, fb.hi = 9;
        fb.noZero = div;
        Case c;
        c.in(t, s.a, values(t, numel(s.a), g, fa))
            .in(t, s.b, values(t, numel(s.b), g, fb))
            .out(t, s.y);
        c.what = std::string(name(t)) + " " + str(s.a) + " " + str(s.b);
        check(k, c);
      }
    }
  }
}

TEST_P(CudaEmuArithmetic, ArithmeticInPlace) {
  Gen g(2);
  for (const Kernel &k : {KERNEL(add), KERNEL(div)}) {
    Case c;
    c.in(TIDALRT_ELEMENT_TYPE_F32, {33, 9},
         values(TIDALRT_ELEMENT_TYPE_F32, 297, g))
        .in(TIDALRT_ELEMENT_TYPE_F32, {9},
            values(TIDALRT_ELEMENT_TYPE_F32, 9, g))
        .out(TIDALRT_ELEMENT_TYPE_F32, {33, 9});
    c.aliasOut = 2, c.aliasIn = 0;
    c.what = "in place";
    check(k, c);
  }
}

// The one documented difference: the CPU fails on an integer division by
// zero (it reads the divisor on the host); the CUDA kernel cannot without
// synchronising and writes 0 there.
TEST_P(CudaEmuArithmetic, IntegerDivisionByZero) {
  std::vector<int32_t> a = {7, -8, 9, INT32_MIN}, b = {2, 0, -1, -1};
  std::vector<int32_t> y(4, 0);
  KernelCall call;
  call.tensor(TIDALRT_ELEMENT_TYPE_I32, {4}, a.data())
      .tensor(TIDALRT_ELEMENT_TYPE_I32, {4}, b.data())
      .tensor(TIDALRT_ELEMENT_TYPE_I32, {4}, y.data());
  EXPECT_EQ(call.run(tidalrt_k_div).rfind("INVALID_ARGUMENT", 0), 0u);
  EXPECT_EQ(call.run(tidalrt_emu_k_div), "");
  EXPECT_EQ(y, (std::vector<int32_t>{3, 0, -9, INT32_MIN}));
}

TEST_P(CudaEmuArithmetic, ArithmeticErrors) {
  const tidalrt_element_type_t f32 = TIDALRT_ELEMENT_TYPE_F32;
  Gen g(3);
  for (const Kernel &k :
       {KERNEL(add), KERNEL(sub), KERNEL(mul), KERNEL(div), KERNEL(pow)}) {
    Case noBroadcast;
    noBroadcast.in(f32, {3}, values(f32, 3, g))
        .in(f32, {4}, values(f32, 4, g))
        .out(f32, {3});
    noBroadcast.what = "shapes";
    checkError(k, noBroadcast, "INVALID_ARGUMENT");
    Case lhs;
    lhs.in(f32, {2, 3}, values(f32, 6, g))
        .in(f32, {3}, values(f32, 3, g))
        .out(f32, {3});
    lhs.what = "lhs larger than the result";
    checkError(k, lhs, "INVALID_ARGUMENT");
    Case types;
    types
        .in(TIDALRT_ELEMENT_TYPE_F64, {3},
            values(TIDALRT_ELEMENT_TYPE_F64, 3, g))
        .in(f32, {3}, values(f32, 3, g))
        .out(f32, {3});
    types.what = "types";
    checkError(k, types, "INVALID_ARGUMENT");
    Case unsupported;
    unsupported.in(TIDALRT_ELEMENT_TYPE_F16, {3}, Bytes(6))
        .in(TIDALRT_ELEMENT_TYPE_F16, {3}, Bytes(6))
        .out(TIDALRT_ELEMENT_TYPE_F16, {3});
    unsupported.what = "float16";
    checkError(k, unsupported, "UNSUPPORTED");
    Case count;
    count.in(f32, {3}, values(f32, 3, g)).out(f32, {3});
    count.what = "two tensors";
    checkError(k, count, "INTERNAL");
    Case absent;
    absent.in(f32, {3}, values(f32, 3, g)).absent().out(f32, {3});
    absent.what = "absent rhs";
    checkError(k, absent, "INVALID_ARGUMENT");
  }
  // pow: int16 base, bool exponent.
  Case powBase;
  powBase.in(TIDALRT_ELEMENT_TYPE_I16, {3}, Bytes(6))
      .in(TIDALRT_ELEMENT_TYPE_I16, {3}, Bytes(6))
      .out(TIDALRT_ELEMENT_TYPE_I16, {3});
  powBase.what = "int16";
  checkError(KERNEL(pow), powBase, "UNSUPPORTED");
  Case powExp;
  powExp.in(f32, {3}, values(f32, 3, g))
      .in(TIDALRT_ELEMENT_TYPE_BOOL, {3}, Bytes(3))
      .out(f32, {3});
  powExp.what = "bool exponent";
  checkError(KERNEL(pow), powExp, "UNSUPPORTED");
}

//===----------------------------------------------------------------------===//
// pow
//===----------------------------------------------------------------------===//

const tidalrt_element_type_t kPowBaseTypes[] = {
    TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64,
    TIDALRT_ELEMENT_TYPE_I64, TIDALRT_ELEMENT_TYPE_I32};
const tidalrt_element_type_t kPowExponentTypes[] = {
    TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64,
    TIDALRT_ELEMENT_TYPE_I64, TIDALRT_ELEMENT_TYPE_I32,
    TIDALRT_ELEMENT_TYPE_U32, TIDALRT_ELEMENT_TYPE_U64};

bool isSigned(tidalrt_element_type_t t) {
  return t != TIDALRT_ELEMENT_TYPE_U32 && t != TIDALRT_ELEMENT_TYPE_U64;
}

// Every base and exponent type over broadcast shapes.
TEST_P(CudaEmuArithmetic, Pow) {
  Gen g(4);
  for (tidalrt_element_type_t tb : kPowBaseTypes) {
    for (tidalrt_element_type_t te : kPowExponentTypes) {
      for (const BinaryShapes &s : kBinaryShapes) {
        Fill fb, fe;
        fb.lo = isFloat(tb) ? -4.0 : -6.0;
        fb.hi = isFloat(tb) ? 4.0 : 6.0;
        fe.lo = isSigned(te) ? -4.0 : 0.0;
        fe.hi = isFloat(tb) ? 4.0 : 30.0;
        Case c;
        c.in(tb, s.a, values(tb, numel(s.a), g, fb))
            .in(te, s.b, values(te, numel(s.b), g, fe))
            .out(tb, s.y);
        c.what = std::string(name(tb)) + "^" + name(te) + " " + str(s.a) + " " +
                 str(s.b);
        check(KERNEL(pow), c);
      }
    }
  }
}

// A scalar exponent with a float32 base takes the CPU's shortcuts for 1,
// 2, 3, 0.5 and -1; others (and integer exponents beyond 2^24) the general
// path.
TEST_P(CudaEmuArithmetic, PowScalarExponent) {
  const tidalrt_element_type_t f32 = TIDALRT_ELEMENT_TYPE_F32;
  Gen g(5);
  const double exps[] = {1.0,  2.0, 3.0, 0.5,        -1.0,       1.5,
                         -2.0, 0.0, 4.0, 33554433.0, -33554432.0};
  for (tidalrt_element_type_t te : kPowExponentTypes) {
    for (double e : exps) {
      if (!isFloat(te) && (e != std::floor(e) || (!isSigned(te) && e < 0)))
        continue;
      Bytes eb;
      switch (te) {
      case TIDALRT_ELEMENT_TYPE_F32:
        eb = bytesOf(std::vector<float>{(float)e});
        break;
      case TIDALRT_ELEMENT_TYPE_F64:
        eb = bytesOf(std::vector<double>{e});
        break;
      case TIDALRT_ELEMENT_TYPE_I64:
        eb = bytesOf(std::vector<int64_t>{(int64_t)e});
        break;
      case TIDALRT_ELEMENT_TYPE_I32:
        eb = bytesOf(std::vector<int32_t>{(int32_t)e});
        break;
      case TIDALRT_ELEMENT_TYPE_U32:
        eb = bytesOf(std::vector<uint32_t>{(uint32_t)e});
        break;
      default:
        eb = bytesOf(std::vector<uint64_t>{(uint64_t)e});
        break;
      }
      for (const Shape &sb : {Shape{}, Shape{1, 1}}) {
        Fill f;
        f.lo = -3.0, f.hi = 3.0;
        Case c;
        c.in(f32, {2, 517}, values(f32, 1034, g, f))
            .in(te, sb, eb)
            .out(f32, {2, 517});
        c.what = std::string(name(te)) + " " + std::to_string(e);
        check(KERNEL(pow), c);
      }
    }
  }
}

// Integer powers: every base in [-6, 6] and some extremes with every
// exponent in [-3, 70], plus exponents beyond 2^53 (whose parity as a
// double is even) and float exponents.
TEST_P(CudaEmuArithmetic, PowIntegers) {
  const std::vector<int64_t> bases64 = {
      -6,   -5,    -4,        -3,        -2,        -1,        0,
      1,    2,     3,         4,         5,         6,         7,
      1000, -1000, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, (1ll << 53) + 1};
  std::vector<int64_t> exps;
  for (int64_t e = -3; e <= 70; ++e)
    exps.push_back(e);
  for (int64_t e :
       {(int64_t)(1ll << 53) - 1, (int64_t)(1ll << 53) + 1,
        -(int64_t)(1ll << 53) - 1, (int64_t)INT64_MAX, (int64_t)INT64_MIN})
    exps.push_back(e);
  const int64_t nb = (int64_t)bases64.size(), ne = (int64_t)exps.size();
  std::vector<int32_t> bases32(bases64.begin(), bases64.end());
  std::vector<int32_t> exps32;
  std::vector<uint64_t> expsU64;
  std::vector<uint32_t> expsU32;
  for (int64_t e : exps) {
    exps32.push_back((int32_t)e);
    expsU64.push_back((uint64_t)e);
    expsU32.push_back((uint32_t)e);
  }
  std::vector<double> expsF64 = {0.5,  1.5,  -1.0, -0.5,     2.0,
                                 62.5, 63.0, NAN,  INFINITY, -INFINITY};
  std::vector<float> expsF32(expsF64.begin(), expsF64.end());
  struct Exp {
    tidalrt_element_type_t type;
    Bytes bytes;
    int64_t n;
  };
  const Exp exponents[] = {
      {TIDALRT_ELEMENT_TYPE_I64, bytesOf(exps), ne},
      {TIDALRT_ELEMENT_TYPE_I32, bytesOf(exps32), ne},
      {TIDALRT_ELEMENT_TYPE_U64, bytesOf(expsU64), ne},
      {TIDALRT_ELEMENT_TYPE_U32, bytesOf(expsU32), ne},
      {TIDALRT_ELEMENT_TYPE_F64, bytesOf(expsF64), (int64_t)expsF64.size()},
      {TIDALRT_ELEMENT_TYPE_F32, bytesOf(expsF32), (int64_t)expsF32.size()}};
  for (const Exp &e : exponents) {
    for (tidalrt_element_type_t tb :
         {TIDALRT_ELEMENT_TYPE_I64, TIDALRT_ELEMENT_TYPE_I32}) {
      Case c;
      c.in(tb, {nb, 1},
           tb == TIDALRT_ELEMENT_TYPE_I64 ? bytesOf(bases64) : bytesOf(bases32))
          .in(e.type, {1, e.n}, e.bytes)
          .out(tb, {nb, e.n});
      c.what = std::string(name(tb)) + "^" + name(e.type);
      check(KERNEL(pow), c);
    }
  }
}

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

const Shape kUnaryShapes[] = {{},         {1}, {7},       {3, 5},
                              {2, 3, 17}, {0}, {4, 0, 3}, {70001}};

struct UnaryKernel {
  Kernel k;
  bool ints;     // also int64 and int32
  bool alpha;    // has the attribute alpha
  bool vector;   // the CPU's AVX2 path uses its own math
  double lo, hi; // input range
};

TEST_P(CudaEmuArithmetic, Unary) {
  const UnaryKernel kernels[] = {
      {KERNEL(neg), true, false, false, -10, 10},
      {KERNEL(relu), true, false, false, -10, 10},
      {KERNEL(sigmoid), false, false, true, -30, 30},
      {KERNEL(tanh), false, false, true, -12, 12},
      {KERNEL(sqrt), false, false, false, -1, 100},
      {KERNEL(erf), true, false, true, -5, 5},
      {KERNEL(exp), false, false, true, -90, 90},
      {KERNEL(log), false, false, true, -0.5, 1000},
      {KERNEL(leaky_relu), false, true, false, -10, 10},
      {KERNEL(gelu), false, false, true, -15, 15}};
  Gen g(6);
  for (const UnaryKernel &u : kernels) {
    std::vector<tidalrt_element_type_t> types = {TIDALRT_ELEMENT_TYPE_F32,
                                                 TIDALRT_ELEMENT_TYPE_F64};
    if (u.ints) {
      types.push_back(TIDALRT_ELEMENT_TYPE_I64);
      types.push_back(TIDALRT_ELEMENT_TYPE_I32);
    }
    for (tidalrt_element_type_t t : types) {
      for (const Shape &s : kUnaryShapes) {
        for (double alpha : {0.01, -0.3, 2.5}) {
          Fill f;
          f.lo = u.lo, f.hi = u.hi;
          Case c;
          c.in(t, s, values(t, numel(s), g, f)).out(t, s);
          if (u.alpha)
            c.attrFloat(alpha);
          c.what = std::string(name(t)) + " " + str(s) + " alpha " +
                   std::to_string(alpha);
          check(u.k, c, u.vector ? kVectorMath : Tol());
          if (!u.alpha)
            break;
        }
      }
    }
  }
}

// int erf is trunc(erf(x)): 0 up to |x| = 5, +-1 from 6 on; every value
// around the switch and the extremes of both types.
TEST_P(CudaEmuArithmetic, IntegerErf) {
  std::vector<int64_t> x64;
  for (int64_t v = -12; v <= 12; ++v)
    x64.push_back(v);
  for (int64_t v : {INT64_MIN, INT64_MAX, (int64_t)INT32_MIN,
                    (int64_t)INT32_MAX, (int64_t)1 << 40})
    x64.push_back(v);
  std::vector<int32_t> x32(x64.begin(), x64.end());
  const int64_t n = (int64_t)x64.size();
  Case c64, c32;
  c64.in(TIDALRT_ELEMENT_TYPE_I64, {n}, bytesOf(x64))
      .out(TIDALRT_ELEMENT_TYPE_I64, {n});
  c64.what = "int64";
  c32.in(TIDALRT_ELEMENT_TYPE_I32, {n}, bytesOf(x32))
      .out(TIDALRT_ELEMENT_TYPE_I32, {n});
  c32.what = "int32";
  check(KERNEL(erf), c64);
  check(KERNEL(erf), c32);
}

TEST_P(CudaEmuArithmetic, UnaryInPlace) {
  Gen g(7);
  for (const Kernel &k : {KERNEL(relu), KERNEL(gelu), KERNEL(exp)}) {
    Case c;
    c.in(TIDALRT_ELEMENT_TYPE_F32, {1000},
         values(TIDALRT_ELEMENT_TYPE_F32, 1000, g))
        .out(TIDALRT_ELEMENT_TYPE_F32, {1000});
    c.aliasOut = 1, c.aliasIn = 0;
    c.what = "in place";
    check(k, c, kVectorMath);
  }
}

TEST_P(CudaEmuArithmetic, UnaryErrors) {
  const tidalrt_element_type_t f32 = TIDALRT_ELEMENT_TYPE_F32;
  Gen g(8);
  for (const Kernel &k : {KERNEL(neg), KERNEL(relu), KERNEL(sigmoid),
                          KERNEL(tanh), KERNEL(sqrt), KERNEL(erf), KERNEL(exp),
                          KERNEL(log), KERNEL(leaky_relu), KERNEL(gelu)}) {
    const bool alpha = std::string(k.name) == "leaky_relu";
    auto withAlpha = [&](Case c) {
      if (alpha)
        c.attrFloat(0.1);
      return c;
    };
    Case types;
    types.in(f32, {3}, values(f32, 3, g)).out(TIDALRT_ELEMENT_TYPE_F64, {3});
    types.what = "types";
    checkError(k, withAlpha(types), "INVALID_ARGUMENT");
    Case i16;
    i16.in(TIDALRT_ELEMENT_TYPE_I16, {3}, Bytes(6))
        .out(TIDALRT_ELEMENT_TYPE_I16, {3});
    i16.what = "int16";
    checkError(k, withAlpha(i16), "UNSUPPORTED");
    Case count;
    count.in(f32, {3}, values(f32, 3, g)).out(f32, {4});
    count.what = "element counts";
    checkError(k, withAlpha(count), "INVALID_ARGUMENT");
    Case absent;
    absent.absent().out(f32, {3});
    absent.what = "absent input";
    checkError(k, withAlpha(absent), "INVALID_ARGUMENT");
    Case three;
    three.in(f32, {3}, values(f32, 3, g)).out(f32, {3}).out(f32, {3});
    three.what = "three tensors";
    checkError(k, withAlpha(three), "INTERNAL");
  }
  for (const Kernel &k : {KERNEL(sigmoid), KERNEL(exp), KERNEL(gelu)}) {
    Case i32;
    i32.in(TIDALRT_ELEMENT_TYPE_I32, {3}, Bytes(12))
        .out(TIDALRT_ELEMENT_TYPE_I32, {3});
    i32.what = "int32";
    checkError(k, i32, "UNSUPPORTED");
  }
  Case noAlpha;
  noAlpha.in(f32, {3}, values(f32, 3, g)).out(f32, {3});
  noAlpha.what = "no alpha";
  checkError(KERNEL(leaky_relu), noAlpha, "INTERNAL");
  Case intAlpha;
  intAlpha.in(f32, {3}, values(f32, 3, g)).out(f32, {3}).attrInt(1);
  intAlpha.what = "int alpha";
  checkError(KERNEL(leaky_relu), intAlpha, "INTERNAL");
}

//===----------------------------------------------------------------------===//
// Activation backward
//===----------------------------------------------------------------------===//

TEST_P(CudaEmuArithmetic, ActivationBackward) {
  struct GradKernel {
    Kernel k;
    bool alpha;
    Tol avx2;
    double lo, hi; // `saved`: the forward output or input
  };
  const GradKernel kernels[] = {
      {KERNEL(relu_backward), false, Tol(), -2, 10},
      {KERNEL(leaky_relu_backward), true, Tol(), -10, 10},
      {KERNEL(sigmoid_backward), false, Tol(), 0, 1},
      {KERNEL(tanh_backward), false, kVectorMath, -1, 1},
      {KERNEL(erf_backward), false, kVectorMath, -5, 5},
      {KERNEL(gelu_backward), false, kVectorMath, -15, 15}};
  Gen g(9);
  for (const GradKernel &gk : kernels) {
    for (tidalrt_element_type_t t :
         {TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64}) {
      for (const Shape &s : kUnaryShapes) {
        for (double alpha : {0.01, -0.3}) {
          Fill fg, fs;
          fg.lo = -3, fg.hi = 3;
          fs.lo = gk.lo, fs.hi = gk.hi;
          // Specials in `saved` only where the forward op can produce them.
          fs.specials = gk.lo < -1;
          Case c;
          c.in(t, s, values(t, numel(s), g, fg))
              .in(t, s, values(t, numel(s), g, fs))
              .out(t, s);
          if (gk.alpha)
            c.attrFloat(alpha);
          c.what = std::string(name(t)) + " " + str(s);
          check(gk.k, c, gk.avx2);
          if (!gk.alpha)
            break;
        }
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// The activation family (cpu/activation_math.h): one formula for both, and
// the CPU's AVX2 loops are the scalar formulas' IEEE operations, so every
// comparison is bitwise on both ISAs.
//===----------------------------------------------------------------------===//

struct ActivationKernel {
  Kernel fwd;
  std::vector<double> attrs; // alphabetical, as the compiler passes them
  bool ints;                 // abs and sign also take int64 and int32
  double lo, hi;
};

std::vector<ActivationKernel> activationKernels() {
  return {{KERNEL(clip), {6.0, -1.5}, false, -10, 10},
          {KERNEL(hard_sigmoid), {1.0 / 6.0, 0.5}, false, -6, 6},
          {KERNEL(hard_swish), {}, false, -6, 6},
          {KERNEL(elu), {0.7}, false, -10, 10},
          {KERNEL(selu), {1.6732632, 1.050701}, false, -10, 10},
          {KERNEL(celu), {1.5}, false, -10, 10},
          {KERNEL(softplus), {}, false, -30, 30},
          {KERNEL(softsign), {}, false, -10, 10},
          {KERNEL(mish), {}, false, -30, 30},
          {KERNEL(abs), {}, true, -10, 10},
          {KERNEL(reciprocal), {}, false, -10, 10},
          {KERNEL(sin), {}, false, -100, 100},
          {KERNEL(cos), {}, false, -100, 100},
          {KERNEL(tan), {}, false, -1.4, 1.4},
          {KERNEL(asin), {}, false, -1, 1},
          {KERNEL(acos), {}, false, -1, 1},
          {KERNEL(atan), {}, false, -20, 20},
          {KERNEL(sinh), {}, false, -20, 20},
          {KERNEL(cosh), {}, false, -20, 20},
          {KERNEL(asinh), {}, false, -100, 100},
          {KERNEL(acosh), {}, false, 1, 100},
          {KERNEL(atanh), {}, false, -1, 1},
          {KERNEL(sign), {}, true, -10, 10},
          {KERNEL(floor), {}, false, -10, 10},
          {KERNEL(ceil), {}, false, -10, 10},
          {KERNEL(round), {}, false, -10, 10}};
}

TEST_P(CudaEmuArithmetic, Activations) {
  Gen g(21);
  for (const ActivationKernel &a : activationKernels()) {
    std::vector<tidalrt_element_type_t> types = {TIDALRT_ELEMENT_TYPE_F32,
                                                 TIDALRT_ELEMENT_TYPE_F64};
    if (a.ints) {
      types.push_back(TIDALRT_ELEMENT_TYPE_I64);
      types.push_back(TIDALRT_ELEMENT_TYPE_I32);
    }
    for (tidalrt_element_type_t t : types)
      for (const Shape &s : kUnaryShapes) {
        Fill f;
        f.lo = a.lo, f.hi = a.hi;
        Case c;
        c.in(t, s, values(t, numel(s), g, f)).out(t, s);
        for (double v : a.attrs)
          c.attrFloat(v);
        c.what = std::string(name(t)) + " " + str(s);
        check(a.fwd, c, Tol());
      }
  }
}

TEST_P(CudaEmuArithmetic, ActivationFamilyBackward) {
  const std::pair<Kernel, std::vector<double>> kernels[] = {
      {KERNEL(clip_backward), {6.0, -1.5}},
      {KERNEL(hard_sigmoid_backward), {1.0 / 6.0, 0.5}},
      {KERNEL(hard_swish_backward), {}},
      {KERNEL(elu_backward), {0.7}},
      {KERNEL(selu_backward), {1.6732632, 1.050701}},
      {KERNEL(celu_backward), {1.5}},
      {KERNEL(softplus_backward), {}},
      {KERNEL(softsign_backward), {}},
      {KERNEL(mish_backward), {}}};
  Gen g(22);
  for (const auto &[k, attrs] : kernels)
    for (tidalrt_element_type_t t :
         {TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64})
      for (const Shape &s : kUnaryShapes) {
        Fill fg, fx;
        fg.lo = -3, fg.hi = 3;
        fx.lo = -25, fx.hi = 25;
        Case c;
        c.in(t, s, values(t, numel(s), g, fg))
            .in(t, s, values(t, numel(s), g, fx))
            .out(t, s);
        for (double v : attrs)
          c.attrFloat(v);
        c.what = std::string(name(t)) + " " + str(s);
        check(k, c, Tol());
      }
}

TEST_P(CudaEmuArithmetic, ActivationErrors) {
  const tidalrt_element_type_t f32 = TIDALRT_ELEMENT_TYPE_F32;
  Gen g(23);
  Case ints;
  ints.in(TIDALRT_ELEMENT_TYPE_I64, {3}, values(TIDALRT_ELEMENT_TYPE_I64, 3, g))
      .out(TIDALRT_ELEMENT_TYPE_I64, {3});
  ints.what = "int64 softplus";
  checkError(KERNEL(softplus), ints, "UNSUPPORTED");
  Case celu;
  celu.in(f32, {3}, values(f32, 3, g)).out(f32, {3}).attrFloat(0.0);
  celu.what = "celu alpha 0";
  checkError(KERNEL(celu), celu, "INVALID_ARGUMENT");
  Case noBounds;
  noBounds.in(f32, {3}, values(f32, 3, g)).out(f32, {3});
  noBounds.what = "clip without bounds";
  checkError(KERNEL(clip), noBounds, "INTERNAL");
  Case mixed;
  mixed.in(f32, {3}, values(f32, 3, g))
      .in(TIDALRT_ELEMENT_TYPE_F64, {3}, values(TIDALRT_ELEMENT_TYPE_F64, 3, g))
      .out(f32, {3});
  mixed.what = "mixed types";
  checkError(KERNEL(mish_backward), mixed, "INVALID_ARGUMENT");
}

INSTANTIATE_TEST_SUITE_P(CudaEmu, CudaEmuArithmetic, TIDALRT_TEST_ISAS,
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           return std::string(i.param);
                         });

} // namespace
