// Tests of the broadcasting binary kernels (add, sub, mul, div, pow) against
// naive double-precision references, on both the AVX2 and the scalar path.
#include "isa_test_util.h"
#include "kernel_test_util.h"

#include "../src/cpu/simd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

using tidalrt_test::KernelCall;
using tidalrt_test::randomFloats;

namespace {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

// The flat index into `in` that NumPy broadcasting maps result index `flat`
// of shape `out` to.
int64_t broadcastIndex(int64_t flat, const Shape &out, const Shape &in) {
  int64_t idx = 0, stride = 1;
  size_t off = out.size() - in.size();
  for (int64_t d = (int64_t)out.size() - 1; d >= 0; --d) {
    int64_t i = flat % out[d];
    flat /= out[d];
    if (d >= (int64_t)off) {
      int64_t j = d - off;
      if (in[j] != 1)
        idx += i * stride;
      stride *= in[j];
    }
  }
  return idx;
}

Shape broadcastShape(const Shape &a, const Shape &b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Runs every test on the scalar and on the AVX2 path.
class ElementwiseBinary : public tidalrt_test::IsaParamTest {};

struct OpCase {
  const char *name;
  tidalrt_kernel_fn_t fn;
  std::function<double(double, double)> ref;
};

const OpCase kOps[] = {
    {"add", tidalrt_k_add, [](double a, double b) { return a + b; }},
    {"sub", tidalrt_k_sub, [](double a, double b) { return a - b; }},
    {"mul", tidalrt_k_mul, [](double a, double b) { return a * b; }},
    {"div", tidalrt_k_div, [](double a, double b) { return a / b; }},
};

void checkF32(const OpCase &op, const Shape &sa, const Shape &sb,
              bool prepare = true) {
  SCOPED_TRACE(std::string(op.name) + " " + ::testing::PrintToString(sa) + " " +
               ::testing::PrintToString(sb));
  Shape so = broadcastShape(sa, sb);
  auto a = randomFloats(numel(sa), -3.0f, 3.0f, 1);
  auto b = randomFloats(numel(sb), 0.5f, 4.0f, 2);
  for (size_t i = 0; i < b.size(); i += 2)
    b[i] = -b[i];
  std::vector<float> y((size_t)numel(so), -777.0f);
  KernelCall call;
  call.f32(sa, a.data()).f32(sb, b.data()).f32(so, y.data());
  ASSERT_EQ(call.run(op.fn, prepare), "");
  for (int64_t i = 0; i < numel(so); ++i) {
    double ref =
        op.ref(a[broadcastIndex(i, so, sa)], b[broadcastIndex(i, so, sb)]);
    ASSERT_NEAR(y[i], ref, 1e-6 * std::fabs(ref) + 1e-30) << "at " << i;
  }
}

const std::pair<Shape, Shape> kShapes[] = {
    {{3, 5, 7}, {3, 5, 7}},         // same shape
    {{37}, {}},                     // scalar rhs
    {{}, {2, 19}},                  // scalar lhs
    {{}, {}},                       // both scalars
    {{6, 10}, {10}},                // bias on [N, C]
    {{10}, {6, 10}},                // bias as lhs
    {{2, 3, 4, 5}, {3, 1, 1}},      // [C, 1, 1] on [N, C, H, W]
    {{6, 1}, {1, 9}},               // both broadcast
    {{2, 1, 3}, {4, 1}},            // mixed
    {{4, 3, 1, 5}, {1, 3, 6, 1}},   // both broadcast, inner stride 0 and 1
    {{1, 1, 13}, {13}},             // leading ones
    {{5, 0, 3}, {3}},               // empty result
    {{300, 257}, {300, 257}},       // parallel same shape
    {{512, 200}, {200}},            // parallel bias
    {{16, 32, 12, 12}, {32, 1, 1}}, // parallel conv bias
    {{3, 70000}, {3, 1}},           // long rows split into blocks
    {{40000, 3}, {40000, 1}},       // many short rows
};

TEST_P(ElementwiseBinary, Float32MatchesReference) {
  for (const OpCase &op : kOps)
    for (const auto &s : kShapes)
      checkF32(op, s.first, s.second);
}

TEST_P(ElementwiseBinary, RandomBroadcastShapes) {
  std::mt19937 rng(123);
  for (int t = 0; t < 150; ++t) {
    int rank = (int)(rng() % 6);
    if (t == 0)
      rank = 10; // deep odometers
    Shape out((size_t)rank);
    for (int64_t &d : out)
      d = 1 + (int64_t)(rng() % (rank > 6 ? 2 : 6));
    auto operand = [&]() {
      Shape s(out.begin() + (long)(rng() % (out.size() + 1)), out.end());
      for (int64_t &d : s)
        if (rng() % 3 == 0)
          d = 1;
      return s;
    };
    Shape sa = operand(), sb = operand();
    if (broadcastShape(sa, sb).size() != out.size())
      sa = out; // keep the result rank
    checkF32(kOps[t % 4], sa, sb);
  }
}

TEST_P(ElementwiseBinary, WorksWithoutPreparation) {
  checkF32(kOps[0], {4, 5}, {5}, /*prepare=*/false);
  checkF32(kOps[3], {300, 257}, {257}, /*prepare=*/false);
}

TEST_P(ElementwiseBinary, InPlace) {
  auto a = randomFloats(1000, -1, 1, 3), b = randomFloats(1000, -1, 1, 4);
  std::vector<float> want(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    want[i] = a[i] * b[i];
  KernelCall call;
  call.f32({1000}, a.data()).f32({1000}, b.data()).f32({1000}, a.data());
  ASSERT_EQ(call.run(tidalrt_k_mul), "");
  EXPECT_EQ(a, want);
}

template <typename T>
void checkTyped(tidalrt_element_type_t type, const OpCase &op, const Shape &sa,
                const Shape &sb) {
  SCOPED_TRACE(std::string(op.name) + " " + ::testing::PrintToString(sa) + " " +
               ::testing::PrintToString(sb));
  Shape so = broadcastShape(sa, sb);
  std::vector<T> a((size_t)numel(sa)), b((size_t)numel(sb)),
      y((size_t)numel(so));
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = (T)((int)(i * 7 % 23) - 11);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = (T)((i % 2 ? 1 : -1) * (int)(1 + i % 5));
  KernelCall call;
  call.tensor(type, sa, a.data()).tensor(type, sb, b.data());
  call.tensor(type, so, y.data());
  ASSERT_EQ(call.run(op.fn), "");
  for (int64_t i = 0; i < numel(so); ++i) {
    double r = op.ref((double)a[broadcastIndex(i, so, sa)],
                      (double)b[broadcastIndex(i, so, sb)]);
    if (std::is_integral<T>::value)
      r = std::trunc(r);
    ASSERT_EQ((double)y[i], (double)(T)r) << "at " << i;
  }
}

TEST_P(ElementwiseBinary, OtherElementTypes) {
  for (const OpCase &op : kOps)
    for (const auto &s : {std::make_pair(Shape{4, 6}, Shape{6}),
                          std::make_pair(Shape{3, 1, 5}, Shape{2, 1}),
                          std::make_pair(Shape{200, 300}, Shape{200, 300})}) {
      checkTyped<double>(TIDALRT_ELEMENT_TYPE_F64, op, s.first, s.second);
      checkTyped<int64_t>(TIDALRT_ELEMENT_TYPE_I64, op, s.first, s.second);
      checkTyped<int32_t>(TIDALRT_ELEMENT_TYPE_I32, op, s.first, s.second);
    }
}

TEST_P(ElementwiseBinary, IntegerDivisionTruncatesAndRejectsZero) {
  std::vector<int64_t> a = {7, -7, 7, -7, INT64_MIN}, b = {2, 2, -2, -2, -1};
  std::vector<int64_t> y(5);
  KernelCall call;
  call.i64({5}, a.data()).i64({5}, b.data()).i64({5}, y.data());
  ASSERT_EQ(call.run(tidalrt_k_div), "");
  EXPECT_EQ(y, (std::vector<int64_t>{3, -3, -3, 3, INT64_MIN}));
  b[2] = 0;
  std::string err = call.run(tidalrt_k_div);
  EXPECT_NE(err.find("INVALID_ARGUMENT"), std::string::npos) << err;
  EXPECT_NE(err.find("division by zero"), std::string::npos) << err;
}

TEST_P(ElementwiseBinary, Errors) {
  float a[6] = {}, b[6] = {}, y[6] = {};
  {
    KernelCall call; // shapes that do not broadcast
    call.f32({2, 3}, a).f32({2}, b).f32({2, 3}, y);
    std::string err = call.run(tidalrt_k_add);
    EXPECT_NE(err.find("INVALID_ARGUMENT"), std::string::npos) << err;
    EXPECT_NE(err.find("rhs operand of shape [2] does not broadcast"),
              std::string::npos)
        << err;
  }
  {
    KernelCall call; // mixed element types
    call.f32({6}, a).i64({6}, (int64_t *)b).f32({6}, y);
    std::string err = call.run(tidalrt_k_sub);
    EXPECT_NE(err.find("INVALID_ARGUMENT"), std::string::npos) << err;
  }
  {
    KernelCall call; // an unsupported element type
    call.tensor(TIDALRT_ELEMENT_TYPE_BOOL, {6}, a)
        .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {6}, b)
        .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {6}, y);
    std::string err = call.run(tidalrt_k_mul);
    EXPECT_EQ(err.rfind("UNSUPPORTED: mul (op 0): element type bool", 0), 0u)
        << err;
  }
  {
    KernelCall call; // a wrong tensor count
    call.f32({6}, a).f32({6}, y);
    std::string err = call.run(tidalrt_k_div);
    EXPECT_NE(err.find("INTERNAL"), std::string::npos) << err;
  }
}

//===----------------------------------------------------------------------===//
// pow
//===----------------------------------------------------------------------===//

template <typename TE>
void checkPowF32(tidalrt_element_type_t expType, const Shape &sa,
                 const Shape &sb, std::vector<TE> exps, bool negativeBase) {
  SCOPED_TRACE(::testing::PrintToString(sa) + " " +
               ::testing::PrintToString(sb));
  Shape so = broadcastShape(sa, sb);
  auto a = randomFloats(numel(sa), negativeBase ? -3.0f : 0.1f, 3.0f, 5);
  std::vector<TE> b((size_t)numel(sb));
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = exps[i % exps.size()];
  std::vector<float> y((size_t)numel(so));
  KernelCall call;
  call.f32(sa, a.data()).tensor(expType, sb, b.data()).f32(so, y.data());
  ASSERT_EQ(call.run(tidalrt_k_pow), "");
  for (int64_t i = 0; i < numel(so); ++i) {
    double ref = std::pow((double)a[broadcastIndex(i, so, sa)],
                          (double)b[broadcastIndex(i, so, sb)]);
    if (std::isnan(ref))
      ASSERT_TRUE(std::isnan(y[i])) << "at " << i;
    else
      ASSERT_NEAR(y[i], ref, 1e-6 * std::fabs(ref)) << "at " << i;
  }
}

TEST_P(ElementwiseBinary, PowFloat32) {
  // Scalar exponents with shortcuts and without.
  for (float e : {1.0f, 2.0f, 3.0f, 0.5f, -1.5f, 0.0f})
    checkPowF32<float>(TIDALRT_ELEMENT_TYPE_F32, {50, 41}, {}, {e},
                       e != 0.5f && e != -1.5f);
  // Tensor exponents, broadcast.
  checkPowF32<float>(TIDALRT_ELEMENT_TYPE_F32, {7, 9}, {9},
                     {0.5f, 2.0f, -1.0f, 1.7f}, false);
  checkPowF32<float>(TIDALRT_ELEMENT_TYPE_F32, {300, 200}, {300, 1},
                     {2.5f, 3.0f}, false);
  // Integer exponents (ONNX allows another exponent type); negative bases.
  checkPowF32<int64_t>(TIDALRT_ELEMENT_TYPE_I64, {40, 30}, {}, {2}, true);
  checkPowF32<int64_t>(TIDALRT_ELEMENT_TYPE_I64, {6, 5}, {5}, {3, -2, 0, 1},
                       true);
  checkPowF32<int32_t>(TIDALRT_ELEMENT_TYPE_I32, {6, 5}, {1, 5}, {3, 2}, true);
  checkPowF32<double>(TIDALRT_ELEMENT_TYPE_F64, {6, 5}, {5}, {0.25, 2.0},
                      false);
  // A negative base with a fractional exponent is NaN.
  checkPowF32<float>(TIDALRT_ELEMENT_TYPE_F32, {64}, {}, {0.5f}, true);
}

TEST_P(ElementwiseBinary, PowSpecialValues) {
  const float inf = INFINITY;
  std::vector<float> x = {-0.0f, -inf, 4.0f, 0.0f, inf, -2.0f, NAN};
  for (float e : {0.5f, -1.0f, 2.0f, 3.0f, 1.0f, 1.5f}) {
    std::vector<float> y(x.size());
    KernelCall call;
    call.f32({7}, x.data()).f32({}, &e).f32({7}, y.data());
    ASSERT_EQ(call.run(tidalrt_k_pow), "");
    for (size_t i = 0; i < x.size(); ++i) {
      float want = (float)std::pow((double)x[i], (double)e);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(y[i])) << x[i] << "^" << e;
      } else {
        EXPECT_EQ(y[i], want) << x[i] << "^" << e;
        EXPECT_EQ(std::signbit(y[i]), std::signbit(want)) << x[i] << "^" << e;
      }
    }
  }
}

TEST_P(ElementwiseBinary, PowOtherTypes) {
  std::vector<double> a = {2.0, -3.0, 0.5, 9.0};
  std::vector<double> e = {10.0, 3.0, -2.0, 0.5};
  std::vector<double> y(4);
  KernelCall call;
  call.tensor(TIDALRT_ELEMENT_TYPE_F64, {4}, a.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {4}, e.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {4}, y.data());
  ASSERT_EQ(call.run(tidalrt_k_pow), "");
  EXPECT_EQ(y, (std::vector<double>{1024.0, -27.0, 4.0, 3.0}));

  std::vector<int64_t> ia = {2, -3, 5, 7}, ie = {10, 3, -1, 0}, iy(4);
  KernelCall icall;
  icall.i64({4}, ia.data()).i64({4}, ie.data()).i64({4}, iy.data());
  ASSERT_EQ(icall.run(tidalrt_k_pow), "");
  EXPECT_EQ(iy, (std::vector<int64_t>{1024, -27, 0, 1}));
}

TEST_P(ElementwiseBinary, PowErrors) {
  float a[4] = {}, y[4] = {};
  uint8_t e[4] = {};
  KernelCall call;
  call.f32({4}, a).tensor(TIDALRT_ELEMENT_TYPE_BOOL, {4}, e).f32({4}, y);
  std::string err = call.run(tidalrt_k_pow);
  EXPECT_EQ(err.rfind("UNSUPPORTED: pow (op 0)", 0), 0u) << err;
  KernelCall call2; // base and result types differ
  call2.f32({4}, a).f32({4}, a).i64({4}, (int64_t *)y);
  err = call2.run(tidalrt_k_pow);
  EXPECT_NE(err.find("INVALID_ARGUMENT"), std::string::npos) << err;
}

INSTANTIATE_TEST_SUITE_P(Elementwise, ElementwiseBinary, TIDALRT_TEST_ISAS,
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           return std::string(i.param);
                         });

TEST(ElementwiseIsa, EnvironmentSelectsThePath) {
  namespace simd = tidalrt::simd;
  unsetenv("TIDAL_CPU_ISA");
  const simd::Isa best = simd::bestIsa();
  EXPECT_EQ(simd::activeIsa(), best);
  EXPECT_EQ(best, simd::cpuHasAvx512()    ? simd::Isa::Avx512
                  : simd::cpuHasAvx2Fma() ? simd::Isa::Avx2
                                          : simd::Isa::Scalar);
  setenv("TIDAL_CPU_ISA", "", 1);
  EXPECT_EQ(simd::activeIsa(), best);
  // Any case; an ISA the CPU lacks falls back to the best one below it.
  setenv("TIDAL_CPU_ISA", "Scalar", 1);
  EXPECT_EQ(simd::activeIsa(), simd::Isa::Scalar);
  setenv("TIDAL_CPU_ISA", "avx2", 1);
  EXPECT_EQ(simd::activeIsa(),
            simd::cpuHasAvx2Fma() ? simd::Isa::Avx2 : simd::Isa::Scalar);
  setenv("TIDAL_CPU_ISA", "AVX512", 1);
  EXPECT_EQ(simd::activeIsa(), simd::cpuHasAvx512()    ? simd::Isa::Avx512
                               : simd::cpuHasAvx2Fma() ? simd::Isa::Avx2
                                                       : simd::Isa::Scalar);
  // An unknown name is ignored (with a warning on stderr).
  setenv("TIDAL_CPU_ISA", "sse9", 1);
  EXPECT_EQ(simd::activeIsa(), best);
  unsetenv("TIDAL_CPU_ISA");
  for (simd::Isa isa :
       {simd::Isa::Scalar, simd::Isa::Avx2, simd::Isa::Avx512}) {
    simd::Isa parsed = simd::Isa::Scalar;
    EXPECT_TRUE(simd::parseIsa(simd::isaName(isa), parsed));
    EXPECT_EQ(parsed, isa);
  }
  if (!simd::cpuHasAvx512())
    GTEST_SKIP() << "this CPU has no AVX-512: the fallbacks ran, not every "
                    "ISA";
}

} // namespace
