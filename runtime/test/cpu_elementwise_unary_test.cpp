// Tests of the unary element-wise kernels and the activation backward ops
// against double-precision references, on both the AVX2 and the scalar
// path, plus dense accuracy sweeps of the vector math functions.
#include "isa_test_util.h"
#include "kernel_test_util.h"

#include "../src/cpu/simd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using tidalrt_test::KernelCall;
using tidalrt_test::randomFloats;
namespace simd = tidalrt::simd;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

class ElementwiseUnary : public tidalrt_test::IsaParamTest {};

double sigmoidRef(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct UnaryCase {
  const char *name;
  tidalrt_kernel_fn_t fn;
  std::function<double(double)> ref;
  float lo, hi; // random input range
};

const UnaryCase kUnary[] = {
    {"neg", tidalrt_k_neg, [](double x) { return -x; }, -5, 5},
    {"relu", tidalrt_k_relu, [](double x) { return x > 0 ? x : 0.0; }, -5, 5},
    {"sigmoid", tidalrt_k_sigmoid, sigmoidRef, -30, 30},
    {"tanh", tidalrt_k_tanh, [](double x) { return std::tanh(x); }, -12, 12},
    {"sqrt", tidalrt_k_sqrt, [](double x) { return std::sqrt(x); }, 0, 1e4},
    {"erf", tidalrt_k_erf, [](double x) { return std::erf(x); }, -5, 5},
    {"exp", tidalrt_k_exp, [](double x) { return std::exp(x); }, -100, 88},
    {"log", tidalrt_k_log, [](double x) { return std::log(x); }, 1e-3f, 1e3},
};

// Relative error, with values below the normal range compared absolutely.
void expectClose(float got, double ref, double rel, const std::string &what) {
  if (std::isnan(ref)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": got " << got;
    return;
  }
  if (std::fabs(ref) > std::numeric_limits<float>::max()) {
    EXPECT_EQ((double)got, ref > 0 ? kInf : -kInf) << what; // overflow
    return;
  }
  EXPECT_NEAR(got, ref, rel * std::fabs(ref) + 1e-38) << what;
}

TEST_P(ElementwiseUnary, Float32MatchesReference) {
  for (const UnaryCase &c : kUnary)
    for (int64_t n : {1, 7, 8, 37, 100000}) { // tails and the parallel path
      SCOPED_TRACE(std::string(c.name) + " n=" + std::to_string(n));
      auto x = randomFloats(n, c.lo, c.hi, (uint32_t)n);
      std::vector<float> y((size_t)n);
      KernelCall call;
      call.f32({n}, x.data()).f32({n}, y.data());
      ASSERT_EQ(call.run(c.fn), "");
      for (int64_t i = 0; i < n; ++i) {
        double ref = c.ref(x[i]);
        if (std::fabs(y[i] - ref) > 1e-6 * std::fabs(ref) + 1e-38)
          FAIL() << c.name << "(" << x[i] << ") = " << y[i] << ", want " << ref;
      }
    }
}

TEST_P(ElementwiseUnary, SpecialValues) {
  const float denorm = std::numeric_limits<float>::denorm_min() * 1000;
  std::vector<float> x = {0.0f, -0.0f, kInf,  -kInf, kNaN,   denorm, -denorm,
                          1.0f, -1.0f, 88.8f, 89.0f, -87.5f, -104.f, 1e-30f,
                          9.0f, -9.5f, 3.9f,  4.5f,  -1e30f, 1e30f,  0.625f};
  // Shapes [21] and a rank-0 one for the first value.
  for (const UnaryCase &c : kUnary) {
    std::vector<float> y(x.size());
    KernelCall call;
    call.f32({(int64_t)x.size()}, x.data()).f32({(int64_t)x.size()}, y.data());
    ASSERT_EQ(call.run(c.fn), "");
    for (size_t i = 0; i < x.size(); ++i) {
      double ref = c.ref(x[i]);
      if (std::string(c.name) == "relu" && std::isnan(x[i]))
        ref = 0.0; // x > 0 ? x : 0, as the evaluator
      expectClose(y[i], ref, 1e-6,
                  std::string(c.name) + "(" + std::to_string(x[i]) + ")");
    }
    // Signed zeros where the function keeps them.
    std::string name = c.name;
    if (name == "tanh" || name == "erf" || name == "neg" || name == "sqrt") {
      EXPECT_EQ(std::signbit(y[1]), name != "neg") << name << "(-0)";
    }
  }
}

TEST_P(ElementwiseUnary, RankZeroAndEmpty) {
  float x = 0.5f, y = 0.0f;
  KernelCall call;
  call.f32({}, &x).f32({}, &y);
  ASSERT_EQ(call.run(tidalrt_k_exp), "");
  EXPECT_NEAR(y, std::exp(0.5), 1e-7);
  KernelCall empty;
  empty.f32({3, 0}, nullptr).f32({3, 0}, nullptr);
  EXPECT_EQ(empty.run(tidalrt_k_tanh), "");
}

TEST_P(ElementwiseUnary, LeakyRelu) {
  for (double alpha : {0.01, 0.2, 1.5}) {
    auto x = randomFloats(50001, -4, 4, 9);
    x[0] = 0.0f;
    x[1] = -0.0f;
    std::vector<float> y(x.size());
    KernelCall call;
    call.f32({50001}, x.data()).f32({50001}, y.data()).attrFloat(alpha);
    ASSERT_EQ(call.run(tidalrt_k_leaky_relu, /*prepare=*/alpha != 0.2), "");
    for (size_t i = 0; i < x.size(); ++i) {
      double r = x[i] >= 0 ? x[i] : (double)(float)alpha * x[i];
      ASSERT_EQ(y[i], (float)r) << "at " << i;
    }
  }
}

TEST_P(ElementwiseUnary, Float64) {
  for (const UnaryCase &c : kUnary) {
    std::vector<double> x(301), y(301);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = c.lo + (c.hi - c.lo) * (double)i / 300.0;
    KernelCall call;
    call.tensor(TIDALRT_ELEMENT_TYPE_F64, {301}, x.data())
        .tensor(TIDALRT_ELEMENT_TYPE_F64, {301}, y.data());
    ASSERT_EQ(call.run(c.fn), "") << c.name;
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_NEAR(y[i], c.ref(x[i]), 1e-14 * std::fabs(c.ref(x[i])))
          << c.name << "(" << x[i] << ")";
  }
}

TEST_P(ElementwiseUnary, Integers) {
  std::vector<int64_t> x = {-3, 0, 5, INT64_MIN, 7}, y(5);
  KernelCall neg;
  neg.i64({5}, x.data()).i64({5}, y.data());
  ASSERT_EQ(neg.run(tidalrt_k_neg), "");
  EXPECT_EQ(y, (std::vector<int64_t>{3, 0, -5, INT64_MIN, -7}));
  KernelCall relu;
  relu.i64({5}, x.data()).i64({5}, y.data());
  ASSERT_EQ(relu.run(tidalrt_k_relu), "");
  EXPECT_EQ(y, (std::vector<int64_t>{0, 0, 5, 0, 7}));
  std::vector<int32_t> xi = {-7, 0, 1, 9}, yi(4);
  KernelCall erf;
  erf.tensor(TIDALRT_ELEMENT_TYPE_I32, {4}, xi.data())
      .tensor(TIDALRT_ELEMENT_TYPE_I32, {4}, yi.data());
  ASSERT_EQ(erf.run(tidalrt_k_erf), "");
  EXPECT_EQ(yi, (std::vector<int32_t>{-1, 0, 0, 1}));
}

TEST_P(ElementwiseUnary, Errors) {
  int64_t x[4] = {}, y[4] = {};
  KernelCall call; // exp is float-only
  call.i64({4}, x).i64({4}, y);
  std::string err = call.run(tidalrt_k_exp);
  EXPECT_EQ(err.rfind("UNSUPPORTED: exp (op 0): element type int64", 0), 0u)
      << err;
  KernelCall call2; // shape mismatch
  call2.f32({4}, (float *)x).f32({3}, (float *)y);
  err = call2.run(tidalrt_k_relu);
  EXPECT_NE(err.find("INVALID_ARGUMENT"), std::string::npos) << err;
  KernelCall call3; // leaky_relu without its attribute
  call3.f32({4}, (float *)x).f32({4}, (float *)y);
  err = call3.run(tidalrt_k_leaky_relu);
  EXPECT_NE(err.find("INTERNAL"), std::string::npos) << err;
}

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

struct GradCase {
  const char *name;
  tidalrt_kernel_fn_t fn;
  std::function<double(double, double, double)> ref; // (g, saved, alpha)
  float lo, hi;                                      // saved range
  bool hasAlpha;
};

const GradCase kGrad[] = {
    {"relu_backward", tidalrt_k_relu_backward,
     [](double g, double y, double) { return y > 0 ? g : 0.0; }, -1, 3, false},
    {"leaky_relu_backward", tidalrt_k_leaky_relu_backward,
     [](double g, double x, double a) { return x > 0 ? g : a * g; }, -3, 3,
     true},
    {"sigmoid_backward", tidalrt_k_sigmoid_backward,
     [](double g, double y, double) { return g * y * (1 - y); }, 0, 1, false},
    {"tanh_backward", tidalrt_k_tanh_backward,
     [](double g, double y, double) { return g * (1 - y * y); }, -0.999f,
     0.999f, false},
    {"erf_backward", tidalrt_k_erf_backward,
     [](double g, double x, double) {
       return g * 2.0 / std::sqrt(M_PI) * std::exp(-x * x);
     },
     -9.5, 9.5, false},
};

TEST_P(ElementwiseUnary, BackwardMatchesReference) {
  for (const GradCase &c : kGrad)
    for (int64_t n : {5, 64, 70001}) {
      SCOPED_TRACE(std::string(c.name) + " n=" + std::to_string(n));
      auto g = randomFloats(n, -2, 2, 11);
      auto s = randomFloats(n, c.lo, c.hi, 12);
      s[0] = 0.0f;
      std::vector<float> y((size_t)n);
      KernelCall call;
      call.f32({n}, g.data()).f32({n}, s.data()).f32({n}, y.data());
      if (c.hasAlpha)
        call.attrFloat(0.125);
      ASSERT_EQ(call.run(c.fn), "");
      for (int64_t i = 0; i < n; ++i) {
        double ref = c.ref(g[i], s[i], 0.125);
        // 1 - y^2 and 1 - y cancel: compare with the operands' scale.
        double tol = 1e-6 * std::fabs(ref) + 1e-38;
        if (std::string(c.name) == "tanh_backward" ||
            std::string(c.name) == "sigmoid_backward")
          tol = 2e-7 * std::fabs(g[i]) + 1e-6 * std::fabs(ref);
        ASSERT_NEAR(y[i], ref, tol) << "g=" << g[i] << " saved=" << s[i];
      }
    }
}

TEST_P(ElementwiseUnary, BackwardFloat64AndErrors) {
  std::vector<double> g = {1.0, -2.0, 3.0}, s = {0.5, -1.0, 2.0}, y(3);
  KernelCall call;
  call.tensor(TIDALRT_ELEMENT_TYPE_F64, {3}, g.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {3}, s.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {3}, y.data())
      .attrFloat(0.5);
  ASSERT_EQ(call.run(tidalrt_k_leaky_relu_backward), "");
  EXPECT_EQ(y, (std::vector<double>{1.0, -1.0, 3.0}));
  KernelCall tanh;
  tanh.tensor(TIDALRT_ELEMENT_TYPE_F64, {3}, g.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {3}, s.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {3}, y.data());
  ASSERT_EQ(tanh.run(tidalrt_k_tanh_backward), "");
  EXPECT_EQ(y, (std::vector<double>{0.75, 0.0, -9.0}));

  float f[3] = {};
  KernelCall bad; // mixed types
  bad.f32({3}, f).tensor(TIDALRT_ELEMENT_TYPE_F64, {3}, s.data()).f32({3}, f);
  std::string err = bad.run(tidalrt_k_sigmoid_backward);
  EXPECT_NE(err.find("INVALID_ARGUMENT"), std::string::npos) << err;
  int64_t i[3] = {};
  KernelCall ints;
  ints.i64({3}, i).i64({3}, i).i64({3}, i);
  err = ints.run(tidalrt_k_relu_backward);
  EXPECT_EQ(err.rfind("UNSUPPORTED: relu_backward (op 0)", 0), 0u) << err;
}

//===----------------------------------------------------------------------===//
// gelu and gelu_backward
//===----------------------------------------------------------------------===//

// PyTorch's exact GELU x * Phi(x) in double, with erfc: 0.5 * x * (1 +
// erf(x / sqrt(2))) is the same function, but the sum cancels for x < 0.
double geluRef(double x) {
  if (std::isinf(x))
    return x > 0 ? x : -0.0;
  return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
}

// gelu'(x) = Phi(x) + x * phi(x).
double geluGradRef(double x) {
  if (std::isinf(x))
    return x > 0 ? 1.0 : 0.0;
  return 0.5 * std::erfc(-x / std::sqrt(2.0)) +
         x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
}

// The float64 kernels' formulas (lib/Evaluator/ElementwiseOps.cpp), with
// the infinities that make them -inf * 0.
double geluErfForm(double x) {
  if (std::isinf(x))
    return x > 0 ? x : -0.0;
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

double geluBackwardErfForm(double g, double x) {
  if (std::isinf(x))
    return g * (x > 0 ? 1.0 : 0.0);
  double cdf = 0.5 * (1.0 + std::erf(x / std::sqrt(2.0)));
  double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
  return g * (cdf + x * pdf);
}

// Element counts around the vector width and beyond it.
const int64_t kGeluSizes[] = {1, 7, 8, 9, 1000, 4099};

// Random values of [-15, 15] (the vector code's range is [-12.5, FLT_MAX];
// results underflow below about -14.3) with every 37th element special.
std::vector<float> geluInputs(int64_t n, uint32_t seed) {
  const float specials[] = {0.0f,   -0.0f, 10.0f,  -10.0f,     40.0f,  -40.0f,
                            kInf,   -kInf, kNaN,   12.5f,      -12.5f, -13.0f,
                            1e-40f, 3e38f, -3e38f, -0.7517916f};
  auto x = randomFloats(n, -15, 15, seed);
  for (int64_t i = 3; i < n; i += 37)
    x[i] = specials[(i / 37) % (sizeof specials / sizeof specials[0])];
  return x;
}

TEST_P(ElementwiseUnary, GeluFloat32MatchesReference) {
  for (int64_t n : kGeluSizes) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto x = geluInputs(n, (uint32_t)n);
    std::vector<float> y((size_t)n);
    KernelCall call;
    call.f32({n}, x.data()).f32({n}, y.data());
    ASSERT_EQ(call.run(tidalrt_k_gelu), "");
    for (int64_t i = 0; i < n; ++i)
      expectClose(y[i], geluRef(x[i]), 1e-6,
                  "gelu(" + std::to_string(x[i]) + ") at " + std::to_string(i));
  }
  // The parallel path.
  const int64_t n = 100003;
  auto x = geluInputs(n, 5);
  std::vector<float> y((size_t)n);
  KernelCall call;
  call.f32({n}, x.data()).f32({n}, y.data());
  ASSERT_EQ(call.run(tidalrt_k_gelu), "");
  for (int64_t i = 0; i < n; ++i) {
    double ref = geluRef(x[i]);
    if ((double)y[i] == ref || (std::isnan(ref) && std::isnan(y[i])))
      continue;
    if (!(std::fabs(y[i] - ref) <= 1e-6 * std::fabs(ref) + 1e-38))
      FAIL() << "gelu(" << x[i] << ") = " << y[i] << ", want " << ref;
  }
}

TEST_P(ElementwiseUnary, GeluSpecialValues) {
  // The first 8 take the vector code's fast path on AVX2, the next 8 its
  // scalar lanes (an infinity or NaN sends the whole vector there), the
  // last 3 the tail.
  std::vector<float> x = {0.0f,   -0.0f,   10.0f,  -10.0f, 40.0f,
                          3e38f,  12.5f,   -12.5f, kInf,   -kInf,
                          kNaN,   -40.0f,  -13.0f, -14.0f, -15.0f,
                          -3e38f, -1e-40f, 1e-40f, -0.0f};
  const int64_t n = (int64_t)x.size();
  std::vector<float> y(x.size());
  KernelCall call;
  call.f32({n}, x.data()).f32({n}, y.data());
  ASSERT_EQ(call.run(tidalrt_k_gelu), "");
  for (size_t i = 0; i < x.size(); ++i)
    expectClose(y[i], geluRef(x[i]), 1e-6,
                "gelu(" + std::to_string(x[i]) + ")");
  // Large |x|: x itself, or a zero with x's sign.
  EXPECT_EQ(y[2], 10.0f);
  EXPECT_EQ(y[4], 40.0f);
  EXPECT_EQ(y[5], 3e38f);
  EXPECT_EQ(y[6], 12.5f);
  EXPECT_EQ(y[8], kInf);
  for (size_t i : {9, 11, 14, 15}) {
    EXPECT_EQ(y[i], 0.0f) << "gelu(" << x[i] << ")";
    EXPECT_TRUE(std::signbit(y[i])) << "gelu(" << x[i] << ")";
  }
  EXPECT_TRUE(std::isnan(y[10]));
  // gelu(-10) = -7.6e-23 is tiny but not zero (no 1 + erf cancellation).
  EXPECT_NEAR(y[3], -7.61985302416e-23, 1e-28);
  // Signed zeros and denormals: gelu(x) = x / 2 near 0.
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_FALSE(std::signbit(y[0]));
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_TRUE(std::signbit(y[1]));
  EXPECT_TRUE(std::signbit(y[18]));
  EXPECT_EQ(y[16], -0.5e-40f);
  EXPECT_EQ(y[17], 0.5e-40f);
}

TEST_P(ElementwiseUnary, GeluFloat64) {
  std::vector<double> x = {-40.0, -10.0,  -3.0,   -0.75, -0.0, 0.0,
                           0.5,   3.0,    10.0,   40.0,  kInf, -kInf,
                           kNaN,  1e-310, -1e300, 1e300};
  for (int i = 0; i <= 300; ++i)
    x.push_back(-6.0 + 12.0 * i / 300.0);
  const int64_t n = (int64_t)x.size();
  std::vector<double> y(x.size());
  KernelCall call;
  call.tensor(TIDALRT_ELEMENT_TYPE_F64, {n}, x.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {n}, y.data());
  ASSERT_EQ(call.run(tidalrt_k_gelu), "");
  for (size_t i = 0; i < x.size(); ++i) {
    double ref = geluErfForm(x[i]);
    if (std::isnan(ref)) {
      EXPECT_TRUE(std::isnan(y[i]));
      continue;
    }
    EXPECT_EQ(std::signbit(y[i]), std::signbit(ref)) << "gelu(" << x[i] << ")";
    if (std::isinf(ref)) {
      EXPECT_EQ(y[i], ref);
      continue;
    }
    ASSERT_NEAR(y[i], ref, 1e-15 * std::fabs(ref)) << "gelu(" << x[i] << ")";
    // The erf form is the exact GELU up to the rounding of 1 + erf.
    EXPECT_NEAR(y[i], geluRef(x[i]),
                1e-15 * std::fabs(geluRef(x[i])) + 1e-16 * std::fabs(x[i]))
        << "gelu(" << x[i] << ")";
  }
  EXPECT_EQ(y[0], 0.0); // -0
  EXPECT_EQ(y[9], 40.0);
  EXPECT_EQ(y[10], kInf);
  EXPECT_EQ(y[11], 0.0);
}

TEST_P(ElementwiseUnary, GeluBackwardMatchesReference) {
  auto check = [](int64_t n, uint32_t seed) {
    SCOPED_TRACE("n=" + std::to_string(n));
    auto g = randomFloats(n, -2, 2, seed + 1);
    auto x = geluInputs(n, seed);
    std::vector<float> y((size_t)n);
    KernelCall call;
    call.f32({n}, g.data()).f32({n}, x.data()).f32({n}, y.data());
    ASSERT_EQ(call.run(tidalrt_k_gelu_backward), "");
    for (int64_t i = 0; i < n; ++i) {
      double ref = (double)g[i] * geluGradRef(x[i]);
      if (std::isnan(x[i])) {
        ASSERT_TRUE(std::isnan(y[i])) << "at " << i;
        continue;
      }
      // Phi(x) + x phi(x) cancels near its root x = -0.7518: compare with
      // the operands' scale there.
      ASSERT_NEAR(y[i], ref,
                  1e-6 * std::fabs(ref) + 1e-7 * std::fabs(g[i]) + 1e-38)
          << "g=" << g[i] << " x=" << x[i] << " at " << i;
    }
  };
  for (int64_t n : kGeluSizes)
    check(n, (uint32_t)n);
  check(70001, 3); // the parallel path
}

TEST_P(ElementwiseUnary, GeluBackwardSpecialValues) {
  // Fast-path lanes first (on AVX2), then scalar lanes, then a tail.
  std::vector<float> x = {0.0f,   -0.0f,       10.0f,  -10.0f, 40.0f,
                          3e38f,  12.5f,       -12.5f, kInf,   -kInf,
                          kNaN,   -40.0f,      -13.0f, -15.0f, -3e38f,
                          1e-40f, -0.7517916f, 1.0f,   -1.0f};
  const int64_t n = (int64_t)x.size();
  for (float gv : {1.0f, -2.5f}) {
    SCOPED_TRACE("g=" + std::to_string(gv));
    std::vector<float> g(x.size(), gv), y(x.size());
    KernelCall call;
    call.f32({n}, g.data()).f32({n}, x.data()).f32({n}, y.data());
    ASSERT_EQ(call.run(tidalrt_k_gelu_backward), "");
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) {
        EXPECT_TRUE(std::isnan(y[i]));
        continue;
      }
      double ref = gv * geluGradRef(x[i]);
      EXPECT_NEAR(y[i], ref, 1e-6 * std::fabs(ref) + 1e-7 * std::fabs(gv))
          << "x=" << x[i];
    }
    // Factor 1 for large x, 0 for very negative x, 1/2 at +-0.
    for (size_t i : {2, 4, 5, 6, 8})
      EXPECT_EQ(y[i], gv) << "x=" << x[i];
    for (size_t i : {9, 11, 13, 14})
      EXPECT_EQ(y[i], 0.0f) << "x=" << x[i];
    EXPECT_EQ(y[0], 0.5f * gv);
    EXPECT_EQ(y[1], 0.5f * gv);
    EXPECT_EQ(y[15], 0.5f * gv);
    // gelu'(-10) = -7.6e-22.
    EXPECT_NEAR(y[3], gv * -7.6184001e-22, 1e-27);
  }
}

TEST_P(ElementwiseUnary, GeluBackwardFloat64AndErrors) {
  std::vector<double> x = {-40.0, -10.0, -0.75, -0.0, 0.0,   0.5,
                           3.0,   10.0,  40.0,  kInf, -kInf, kNaN};
  for (int i = 0; i <= 300; ++i)
    x.push_back(-6.0 + 12.0 * i / 300.0);
  const int64_t n = (int64_t)x.size();
  std::vector<double> g(x.size()), y(x.size());
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = i % 2 ? -1.5 : 0.75;
  KernelCall call;
  call.tensor(TIDALRT_ELEMENT_TYPE_F64, {n}, g.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {n}, x.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {n}, y.data());
  ASSERT_EQ(call.run(tidalrt_k_gelu_backward), "");
  for (size_t i = 0; i < x.size(); ++i) {
    double ref = geluBackwardErfForm(g[i], x[i]);
    if (std::isnan(ref)) {
      EXPECT_TRUE(std::isnan(y[i]));
      continue;
    }
    ASSERT_NEAR(y[i], ref, 1e-15 * std::fabs(ref)) << "x=" << x[i];
    EXPECT_NEAR(y[i], g[i] * geluGradRef(x[i]), 1e-15 * std::fabs(g[i]))
        << "x=" << x[i];
  }
  EXPECT_EQ(y[0], 0.0);  // x = -40
  EXPECT_EQ(y[8], 0.75); // x = 40
  EXPECT_EQ(y[9], -1.5); // +inf
  EXPECT_EQ(y[10], 0.0); // -inf

  // Float types only, all three alike.
  int64_t ints[3] = {};
  KernelCall intsF;
  intsF.i64({3}, ints).i64({3}, ints);
  std::string err = intsF.run(tidalrt_k_gelu);
  EXPECT_EQ(err.rfind("UNSUPPORTED: gelu (op 0): element type int64", 0), 0u)
      << err;
  int32_t ints32[3] = {};
  KernelCall intsF32;
  intsF32.tensor(TIDALRT_ELEMENT_TYPE_I32, {3}, ints32)
      .tensor(TIDALRT_ELEMENT_TYPE_I32, {3}, ints32);
  err = intsF32.run(tidalrt_k_gelu);
  EXPECT_EQ(err.rfind("UNSUPPORTED: gelu (op 0)", 0), 0u) << err;
  KernelCall intsB;
  intsB.i64({3}, ints).i64({3}, ints).i64({3}, ints);
  err = intsB.run(tidalrt_k_gelu_backward);
  EXPECT_EQ(err.rfind("UNSUPPORTED: gelu_backward (op 0)", 0), 0u) << err;
  float f[3] = {};
  KernelCall mixed;
  mixed.f32({3}, f).tensor(TIDALRT_ELEMENT_TYPE_F64, {3}, y.data()).f32({3}, f);
  err = mixed.run(tidalrt_k_gelu_backward);
  EXPECT_NE(err.find("INVALID_ARGUMENT"), std::string::npos) << err;
  KernelCall shape;
  shape.f32({3}, f).f32({2}, f);
  err = shape.run(tidalrt_k_gelu);
  EXPECT_NE(err.find("INVALID_ARGUMENT"), std::string::npos) << err;
  KernelCall empty;
  empty.f32({0, 4}, nullptr).f32({0, 4}, nullptr).f32({0, 4}, nullptr);
  EXPECT_EQ(empty.run(tidalrt_k_gelu_backward), "");
}

INSTANTIATE_TEST_SUITE_P(Elementwise, ElementwiseUnary, TIDALRT_TEST_ISAS,
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           return std::string(i.param);
                         });

//===----------------------------------------------------------------------===//
// Accuracy sweeps of the vector math (directly through simd.h)
//===----------------------------------------------------------------------===//

struct Sweep {
  simd::Unary op;
  const char *name;
  std::function<double(double)> ref;
  float lo, hi;
};

// Max relative error of simd::unaryF32 over a dense grid plus random points
// of [lo, hi]; results below the normal range count absolutely.
double maxRelError(simd::Isa isa, const Sweep &s, int64_t n, float *worst) {
  std::vector<float> x((size_t)n), y((size_t)n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = s.lo + (s.hi - s.lo) * (float)((double)i / (double)(n - 1));
  simd::unaryF32(isa, s.op, x.data(), y.data(), n, 0.0f);
  double worstErr = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double ref = s.ref(x[i]);
    double err =
        std::fabs(y[i] - ref) /
        std::max(std::fabs(ref), (double)std::numeric_limits<float>::min());
    if (err > worstErr) {
      worstErr = err;
      *worst = x[i];
    }
  }
  return worstErr;
}

TEST(ElementwiseAccuracy, VectorMathWithinOneMillionth) {
  const Sweep sweeps[] = {
      {simd::Unary::Exp, "exp", [](double x) { return std::exp(x); }, -104.0f,
       88.7f},
      {simd::Unary::Exp, "exp near 0", [](double x) { return std::exp(x); },
       -1.0f, 1.0f},
      {simd::Unary::Log, "log", [](double x) { return std::log(x); }, 1e-3f,
       1e4f},
      {simd::Unary::Log, "log near 1", [](double x) { return std::log(x); },
       0.5f, 2.0f},
      {simd::Unary::Tanh, "tanh", [](double x) { return std::tanh(x); }, -12,
       12},
      {simd::Unary::Tanh, "tanh near 0", [](double x) { return std::tanh(x); },
       -0.7f, 0.7f},
      {simd::Unary::Sigmoid, "sigmoid", sigmoidRef, -110, 110},
      {simd::Unary::Sigmoid, "sigmoid near 0", sigmoidRef, -2, 2},
      {simd::Unary::Erf, "erf", [](double x) { return std::erf(x); }, -6, 6},
      {simd::Unary::Erf, "erf near 0", [](double x) { return std::erf(x); },
       -1.2f, 1.2f},
      {simd::Unary::Sqrt, "sqrt", [](double x) { return std::sqrt(x); }, 0,
       1e6},
  };
  for (simd::Isa isa :
       {simd::Isa::Scalar, simd::Isa::Avx2, simd::Isa::Avx512}) {
    if (!simd::isaAvailable(isa))
      continue;
    for (const Sweep &s : sweeps) {
      float worst = 0.0f;
      double err = maxRelError(isa, s, 400000, &worst);
      EXPECT_LT(err, 1e-6) << simd::isaName(isa) << " " << s.name
                           << ": worst at " << worst;
      // Few ulp: 2^-23 is 1.2e-7.
      EXPECT_LT(err, 4.0e-7)
          << simd::isaName(isa) << " " << s.name << ": worst at " << worst;
    }
  }
}

// gelu over its vector range and across the switch to the scalar lanes,
// relative to the exact x * Phi(x); the backward factor Phi(x) + x phi(x)
// relative where it does not cancel (|x| >= 2) and to within 1e-7 near its
// root. (All floats of [-12.5, 12.5] were checked once on AVX2: gelu
// 3.45e-7, backward 2.6e-7 for |x| >= 2 and |error| <= 4e-7 |f'| + 4.6e-8.)
TEST(ElementwiseAccuracy, GeluWithinFewUlp) {
  const std::pair<float, float> ranges[] = {
      {-12.5f, 12.5f}, {-1.2f, 1.2f}, {-14.5f, -11.0f}, {-0.8f, -0.7f}};
  for (simd::Isa isa :
       {simd::Isa::Scalar, simd::Isa::Avx2, simd::Isa::Avx512}) {
    if (!simd::isaAvailable(isa))
      continue;
    for (const auto &range : ranges) {
      const int64_t n = 400000;
      std::vector<float> x((size_t)n), y((size_t)n), g((size_t)n, 1.0f),
          d((size_t)n);
      for (int64_t i = 0; i < n; ++i)
        x[i] = range.first + (range.second - range.first) *
                                 (float)((double)i / (double)(n - 1));
      simd::unaryF32(isa, simd::Unary::Gelu, x.data(), y.data(), n, 0.0f);
      simd::gradF32(isa, simd::Grad::Gelu, g.data(), x.data(), d.data(), n,
                    0.0f);
      double worst = 0.0, worstGrad = 0.0, worstGradAbs = 0.0;
      float at = 0.0f, atGrad = 0.0f, atGradAbs = 0.0f;
      for (int64_t i = 0; i < n; ++i) {
        double ref = geluRef(x[i]);
        double err =
            std::fabs(y[i] - ref) /
            std::max(std::fabs(ref), (double)std::numeric_limits<float>::min());
        if (err > worst) {
          worst = err;
          at = x[i];
        }
        double dref = geluGradRef(x[i]), derr = std::fabs(d[i] - dref);
        double rel = derr / std::max(std::fabs(dref),
                                     (double)std::numeric_limits<float>::min());
        if (std::fabs(x[i]) >= 2.0f && rel > worstGrad) {
          worstGrad = rel;
          atGrad = x[i];
        }
        double mixed = derr - 4e-7 * std::fabs(dref);
        if (mixed > worstGradAbs) {
          worstGradAbs = mixed;
          atGradAbs = x[i];
        }
      }
      std::string what = std::string(simd::isaName(isa)) + " [" +
                         std::to_string(range.first) + ", " +
                         std::to_string(range.second) + "]";
      EXPECT_LT(worst, 4.0e-7) << what << ": gelu worst at " << at;
      EXPECT_LT(worstGrad, 4.0e-7)
          << what << ": gelu_backward worst at " << atGrad;
      EXPECT_LT(worstGradAbs, 1e-7)
          << what << ": gelu_backward worst at " << atGradAbs;
    }
  }
}

TEST(ElementwiseAccuracy, LogOfTinyAndHugeValues) {
  // Denormals, the normal range ends and powers of two.
  std::vector<float> x;
  for (int e = -149; e <= 127; ++e)
    for (float m : {1.0f, 1.37f, 1.5f, 1.99f})
      x.push_back(std::ldexp(m, e));
  std::vector<float> y(x.size());
  for (simd::Isa isa :
       {simd::Isa::Scalar, simd::Isa::Avx2, simd::Isa::Avx512}) {
    if (!simd::isaAvailable(isa))
      continue;
    simd::unaryF32(isa, simd::Unary::Log, x.data(), y.data(), (int64_t)x.size(),
                   0.0f);
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_NEAR(y[i], std::log((double)x[i]),
                  1e-6 * std::fabs(std::log((double)x[i])))
          << simd::isaName(isa) << " log(" << x[i] << ")";
  }
}

} // namespace
