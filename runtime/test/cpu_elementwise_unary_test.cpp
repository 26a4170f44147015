// Tests of the unary element-wise kernels and the activation backward ops
// against double-precision references, on both the AVX2 and the scalar
// path, plus dense accuracy sweeps of the vector math functions.
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
namespace simd = tidalrt::simd;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

class ElementwiseUnary : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override { setenv("TIDAL_CPU_ISA", GetParam(), 1); }
  void TearDown() override { unsetenv("TIDAL_CPU_ISA"); }
};

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

std::vector<float> randomFloats(int64_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v((size_t)n);
  for (float &x : v)
    x = dist(rng);
  return v;
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

INSTANTIATE_TEST_SUITE_P(Elementwise, ElementwiseUnary,
                         ::testing::Values("scalar", "avx2"),
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
  for (simd::Isa isa : {simd::Isa::Scalar, simd::Isa::Avx2}) {
    if (isa == simd::Isa::Avx2 && !simd::cpuHasAvx2Fma())
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

TEST(ElementwiseAccuracy, LogOfTinyAndHugeValues) {
  // Denormals, the normal range ends and powers of two.
  std::vector<float> x;
  for (int e = -149; e <= 127; ++e)
    for (float m : {1.0f, 1.37f, 1.5f, 1.99f})
      x.push_back(std::ldexp(m, e));
  std::vector<float> y(x.size());
  for (simd::Isa isa : {simd::Isa::Scalar, simd::Isa::Avx2}) {
    if (isa == simd::Isa::Avx2 && !simd::cpuHasAvx2Fma())
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
