// Tests of the activation family's CPU kernels (clip, hard_sigmoid,
// hard_swish, elu, selu, celu, softplus, softsign, mish, abs, reciprocal,
// sin, cos, tan, the inverse and hyperbolic functions, sign, floor, ceil,
// round and the backward kernels): float32
// against double-precision references written here from PyTorch's
// definitions on both ISAs, the AVX2 loops bitwise against the scalar path
// (vector bodies and scalar tails alike), float64, integers, special values
// and rejected calls.
#include "isa_test_util.h"
#include "kernel_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

using tidalrt_test::KernelCall;
using tidalrt_test::randomFloats;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

class Activation : public tidalrt_test::IsaParamTest {};

double sigmoidRef(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplusRef(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }

struct Case {
  const char *name;
  tidalrt_kernel_fn_t fwd;
  tidalrt_kernel_fn_t bwd; // null: no backward kernel
  std::vector<double> attrs;
  std::function<double(double)> ref;
  std::function<double(double, double)> gradRef; // (g, x)
  float lo, hi;
};

const double kSeluAlpha = 1.67326319217681884765625;
const double kSeluGamma = 1.05070102214813232421875;

std::vector<Case> cases() {
  return {
      {"clip",
       tidalrt_k_clip,
       tidalrt_k_clip_backward,
       {6.0, 0.0},
       [](double x) { return std::min(std::max(x, 0.0), 6.0); },
       [](double g, double x) { return x > 0 && x < 6 ? g : 0.0; },
       -3,
       9},
      {"hard_sigmoid",
       tidalrt_k_hard_sigmoid,
       tidalrt_k_hard_sigmoid_backward,
       {1.0 / 6.0, 0.5},
       [](double x) {
         return std::max(0.0,
                         std::min(1.0, (double)(float)(1.0 / 6) * x + 0.5));
       },
       [](double g, double x) {
         double v = (double)(float)(1.0 / 6) * x + 0.5;
         return v > 0 && v < 1 ? (double)(float)(1.0 / 6) * g : 0.0;
       },
       -5,
       5},
      {"hard_swish",
       tidalrt_k_hard_swish,
       tidalrt_k_hard_swish_backward,
       {},
       [](double x) { return x * std::min(std::max(x + 3, 0.0), 6.0) / 6; },
       [](double g, double x) {
         return x < -3 ? 0.0 : x <= 3 ? g * (x / 3 + 0.5) : g;
       },
       -5,
       5},
      {"elu",
       tidalrt_k_elu,
       tidalrt_k_elu_backward,
       {0.7},
       [](double x) { return x > 0 ? x : 0.7 * std::expm1(x); },
       [](double g, double x) { return x > 0 ? g : g * 0.7 * std::exp(x); },
       -10,
       5},
      {"selu",
       tidalrt_k_selu,
       tidalrt_k_selu_backward,
       {kSeluAlpha, kSeluGamma},
       [](double x) {
         return kSeluGamma * (x > 0 ? x : kSeluAlpha * std::expm1(x));
       },
       [](double g, double x) {
         return x > 0 ? g * kSeluGamma
                      : g * kSeluGamma * kSeluAlpha * std::exp(x);
       },
       -10,
       5},
      {"celu",
       tidalrt_k_celu,
       tidalrt_k_celu_backward,
       {1.5},
       [](double x) { return x > 0 ? x : 1.5 * std::expm1(x / 1.5); },
       [](double g, double x) { return x > 0 ? g : g * std::exp(x / 1.5); },
       -10,
       5},
      {"softplus",
       tidalrt_k_softplus,
       tidalrt_k_softplus_backward,
       {},
       softplusRef,
       [](double g, double x) { return x > 20 ? g : g * sigmoidRef(x); },
       -30,
       30},
      {"softsign",
       tidalrt_k_softsign,
       tidalrt_k_softsign_backward,
       {},
       [](double x) { return x / (1 + std::fabs(x)); },
       [](double g, double x) {
         return g / ((1 + std::fabs(x)) * (1 + std::fabs(x)));
       },
       -10,
       10},
      {"mish",
       tidalrt_k_mish,
       tidalrt_k_mish_backward,
       {},
       [](double x) { return x * std::tanh(softplusRef(x)); },
       [](double g, double x) {
         double t = std::tanh(std::log1p(std::exp(x)));
         return g * (t + x * sigmoidRef(x) * (1 - t * t));
       },
       -10,
       10},
      {"abs",
       tidalrt_k_abs,
       nullptr,
       {},
       [](double x) { return std::fabs(x); },
       nullptr,
       -5,
       5},
      {"reciprocal",
       tidalrt_k_reciprocal,
       nullptr,
       {},
       [](double x) { return 1 / x; },
       nullptr,
       0.1f,
       10},
      {"sin",
       tidalrt_k_sin,
       nullptr,
       {},
       [](double x) { return std::sin(x); },
       nullptr,
       -10,
       10},
      {"cos",
       tidalrt_k_cos,
       nullptr,
       {},
       [](double x) { return std::cos(x); },
       nullptr,
       -10,
       10},
      {"tan",
       tidalrt_k_tan,
       nullptr,
       {},
       [](double x) { return std::tan(x); },
       nullptr,
       -1.4,
       1.4},
      {"asin",
       tidalrt_k_asin,
       nullptr,
       {},
       [](double x) { return std::asin(x); },
       nullptr,
       -1,
       1},
      {"acos",
       tidalrt_k_acos,
       nullptr,
       {},
       [](double x) { return std::acos(x); },
       nullptr,
       -1,
       1},
      {"atan",
       tidalrt_k_atan,
       nullptr,
       {},
       [](double x) { return std::atan(x); },
       nullptr,
       -20,
       20},
      {"sinh",
       tidalrt_k_sinh,
       nullptr,
       {},
       [](double x) { return std::sinh(x); },
       nullptr,
       -20,
       20},
      {"cosh",
       tidalrt_k_cosh,
       nullptr,
       {},
       [](double x) { return std::cosh(x); },
       nullptr,
       -20,
       20},
      {"asinh",
       tidalrt_k_asinh,
       nullptr,
       {},
       [](double x) { return std::asinh(x); },
       nullptr,
       -100,
       100},
      {"acosh",
       tidalrt_k_acosh,
       nullptr,
       {},
       [](double x) { return std::acosh(x); },
       nullptr,
       1,
       100},
      {"atanh",
       tidalrt_k_atanh,
       nullptr,
       {},
       [](double x) { return std::atanh(x); },
       nullptr,
       -1,
       1},
      {"sign",
       tidalrt_k_sign,
       nullptr,
       {},
       [](double x) { return x > 0   ? 1.0
                             : x < 0 ? -1.0
                                     : 0.0; },
       nullptr,
       -5,
       5},
      {"floor",
       tidalrt_k_floor,
       nullptr,
       {},
       [](double x) { return std::floor(x); },
       nullptr,
       -5,
       5},
      {"ceil",
       tidalrt_k_ceil,
       nullptr,
       {},
       [](double x) { return std::ceil(x); },
       nullptr,
       -5,
       5},
      {"round",
       tidalrt_k_round,
       nullptr,
       {},
       [](double x) { return std::nearbyint(x); },
       nullptr,
       -5,
       5},
  };
}

void addAttrs(KernelCall &call, const std::vector<double> &attrs) {
  for (double a : attrs)
    call.attrFloat(a);
}

// Relative to the result, plus float32 rounding of the formula's terms
// (`scale`: the input's magnitude), which cancel where a result is near 0
// (alpha * x + beta, x / 3 + 1/2).
void expectClose(float got, double ref, double rel, const std::string &what,
                 double scale) {
  if (std::isnan(ref)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": got " << got;
    return;
  }
  EXPECT_NEAR(got, ref, rel * std::fabs(ref) + 2e-7 * std::max(1.0, scale))
      << what;
}

std::vector<float> runForward(const Case &c, const std::vector<float> &x) {
  std::vector<float> in = x, y(x.size(), -7.0f);
  KernelCall call;
  call.f32({(int64_t)x.size()}, in.data()).f32({(int64_t)x.size()}, y.data());
  addAttrs(call, c.attrs);
  std::string err = call.run(c.fwd);
  EXPECT_EQ(err, "") << c.name;
  return y;
}

std::vector<float> runBackward(const Case &c, const std::vector<float> &g,
                               const std::vector<float> &x) {
  std::vector<float> gi = g, xi = x, y(x.size(), -7.0f);
  const int64_t n = (int64_t)x.size();
  KernelCall call;
  call.f32({n}, gi.data()).f32({n}, xi.data()).f32({n}, y.data());
  addAttrs(call, c.attrs);
  std::string err = call.run(c.bwd);
  EXPECT_EQ(err, "") << c.name << "_backward";
  return y;
}

TEST_P(Activation, Float32MatchesReference) {
  for (const Case &c : cases()) {
    // 1003: vector bodies and a scalar tail.
    std::vector<float> x = randomFloats(1003, c.lo, c.hi, 7);
    std::vector<float> y = runForward(c, x);
    for (size_t i = 0; i < x.size(); ++i)
      expectClose(y[i], c.ref(x[i]), 2e-6,
                  std::string(c.name) + "(" + std::to_string(x[i]) + ")",
                  std::fabs(x[i]) * 1e-3);
    if (!c.bwd)
      continue;
    std::vector<float> g = randomFloats(1003, -2, 2, 8);
    std::vector<float> d = runBackward(c, g, x);
    for (size_t i = 0; i < x.size(); ++i)
      expectClose(d[i], c.gradRef(g[i], x[i]), 4e-6,
                  std::string(c.name) + "_backward(" + std::to_string(g[i]) +
                      ", " + std::to_string(x[i]) + ")",
                  std::fabs(g[i]));
  }
}

// The backward kernels are the derivative of the forward ones: central
// differences in double of the reference agree with them away from kinks.
TEST_P(Activation, BackwardIsTheDerivative) {
  for (const Case &c : cases()) {
    if (!c.bwd)
      continue;
    std::vector<float> x = randomFloats(257, c.lo, c.hi, 9);
    std::vector<float> g(x.size(), 1.0f);
    std::vector<float> d = runBackward(c, g, x);
    for (size_t i = 0; i < x.size(); ++i) {
      const double h = 1e-6, xd = x[i];
      // Skip points within h of a kink.
      bool nearKink = false;
      for (double k : {-3.0, 0.0, 3.0, 6.0, 20.0})
        nearKink |= std::fabs(xd - k) < 1e-3;
      if (nearKink)
        continue;
      double num = (c.ref(xd + h) - c.ref(xd - h)) / (2 * h);
      EXPECT_NEAR(d[i], num, 1e-4 * std::max(1.0, std::fabs(num)))
          << c.name << "'(" << x[i] << ")";
    }
  }
}

// Every ISA gives the scalar path's bits (the vector loops are its IEEE
// operations in its order), at lengths that cover the 8- and 16-lane tails;
// NaN matches NaN.
TEST(ActivationIsa, VectorIsasEqualScalarBitwise) {
  std::vector<float> x0 = randomFloats(517, -8, 8, 11);
  x0[3] = 0.0f;
  x0[4] = -0.0f;
  x0[5] = 3.0f;
  x0[6] = -3.0f;
  x0[7] = 6.0f;
  x0[8] = kInf;
  x0[9] = -kInf;
  x0[10] = kNaN;
  x0[11] = -kNaN;
  std::vector<float> g0 = randomFloats(517, -2, 2, 12);
  for (const char *isa : {"avx2", "avx512"}) {
    tidalrt::simd::Isa parsed;
    tidalrt::simd::parseIsa(isa, parsed);
    if (!tidalrt::simd::isaAvailable(parsed))
      continue;
    for (size_t n : {1, 7, 15, 16, 17, 31, 33, 100, 517}) {
      // Short lengths start at the special values (all in the tail).
      const ptrdiff_t start = n < 12 ? 3 : 0;
      std::vector<float> x(x0.begin() + start,
                           x0.begin() + start + (ptrdiff_t)n);
      std::vector<float> g(g0.begin(), g0.begin() + (ptrdiff_t)n);
      for (const Case &c : cases()) {
        setenv("TIDAL_CPU_ISA", "scalar", 1);
        std::vector<float> ys = runForward(c, x);
        std::vector<float> ds = c.bwd ? runBackward(c, g, x) : ys;
        setenv("TIDAL_CPU_ISA", isa, 1);
        std::vector<float> yv = runForward(c, x);
        std::vector<float> dv = c.bwd ? runBackward(c, g, x) : yv;
        unsetenv("TIDAL_CPU_ISA");
        for (size_t i = 0; i < x.size(); ++i) {
          if (std::isnan(ys[i]))
            EXPECT_TRUE(std::isnan(yv[i]))
                << isa << " n=" << n << " " << c.name << "(" << x[i] << ")";
          else
            EXPECT_EQ(std::memcmp(&ys[i], &yv[i], 4), 0)
                << isa << " n=" << n << " " << c.name << "(" << x[i]
                << "): " << ys[i] << " vs " << yv[i];
          if (std::isnan(ds[i]))
            EXPECT_TRUE(std::isnan(dv[i]))
                << isa << " n=" << n << " " << c.name << "'(" << x[i] << ")";
          else
            EXPECT_EQ(std::memcmp(&ds[i], &dv[i], 4), 0)
                << isa << " n=" << n << " " << c.name << "'(" << x[i]
                << "): " << ds[i] << " vs " << dv[i];
        }
      }
    }
  }
}

TEST_P(Activation, SpecialValues) {
  std::vector<Case> all = cases();
  auto find = [&](const char *name) -> const Case & {
    for (const Case &c : all)
      if (std::string(c.name) == name)
        return c;
    throw std::runtime_error(name);
  };
  std::vector<float> x = {kNaN, kInf, -kInf, 0.0f, -0.0f, 2.5f, -2.5f, 3.5f};
  std::vector<float> clip = runForward(find("clip"), x);
  EXPECT_TRUE(std::isnan(clip[0])); // NaN kept, as torch.clamp
  EXPECT_EQ(clip[1], 6.0f);
  EXPECT_EQ(clip[2], 0.0f);
  std::vector<float> round = runForward(find("round"), x);
  EXPECT_EQ(round[5], 2.0f); // half to even
  EXPECT_EQ(round[6], -2.0f);
  EXPECT_EQ(round[7], 4.0f);
  std::vector<float> sign = runForward(find("sign"), x);
  EXPECT_EQ(sign[1], 1.0f);
  EXPECT_EQ(sign[2], -1.0f);
  EXPECT_EQ(sign[3], 0.0f);
  std::vector<float> softplus = runForward(find("softplus"), x);
  EXPECT_EQ(softplus[1], kInf);
  EXPECT_EQ(softplus[2], 0.0f);
  std::vector<float> mish = runForward(find("mish"), {100.0f, -100.0f});
  EXPECT_EQ(mish[0], 100.0f);
  EXPECT_LE(std::fabs(mish[1]), 1e-30f);
  std::vector<float> hs = runForward(find("hard_swish"), x);
  EXPECT_EQ(hs[1], kInf);
  EXPECT_TRUE(std::isnan(hs[2])); // -inf * 0, as in PyTorch
}

TEST_P(Activation, Float64) {
  for (const Case &c : cases()) {
    std::vector<double> x = {-2.75, -0.5, 0.25, 1.5, 4.0};
    std::vector<double> y(x.size()), in = x;
    KernelCall call;
    call.tensor(TIDALRT_ELEMENT_TYPE_F64, {5}, in.data())
        .tensor(TIDALRT_ELEMENT_TYPE_F64, {5}, y.data());
    addAttrs(call, c.attrs);
    ASSERT_EQ(call.run(c.fwd), "") << c.name;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = c.ref(x[i]);
      if (std::isnan(want)) { // outside the domain (asin(4), acosh(0.25))
        EXPECT_TRUE(std::isnan(y[i])) << c.name << "(" << x[i] << ")";
        continue;
      }
      EXPECT_NEAR(y[i], want, 1e-7 * std::max(1.0, std::fabs(y[i])))
          << c.name << "(" << x[i] << ")";
    }
  }
}

TEST_P(Activation, IntegerAbsAndSign) {
  std::vector<int64_t> x = {-5, 0, 7, std::numeric_limits<int64_t>::min()};
  std::vector<int64_t> a(4), s(4);
  KernelCall ca, cs;
  ca.i64({4}, x.data()).i64({4}, a.data());
  cs.i64({4}, x.data()).i64({4}, s.data());
  ASSERT_EQ(ca.run(tidalrt_k_abs), "");
  ASSERT_EQ(cs.run(tidalrt_k_sign), "");
  EXPECT_EQ(
      a, (std::vector<int64_t>{5, 0, 7, std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(s, (std::vector<int64_t>{-1, 0, 1, -1}));
  std::vector<int32_t> x32 = {-3, 4}, y32(2);
  KernelCall c32;
  c32.tensor(TIDALRT_ELEMENT_TYPE_I32, {2}, x32.data())
      .tensor(TIDALRT_ELEMENT_TYPE_I32, {2}, y32.data());
  ASSERT_EQ(c32.run(tidalrt_k_abs), "");
  EXPECT_EQ(y32, (std::vector<int32_t>{3, 4}));
}

TEST_P(Activation, Errors) {
  std::vector<float> x(4, 1.0f), y(4);
  std::vector<int64_t> xi(4, 1);
  { // integers where only floats are allowed
    KernelCall call;
    call.i64({4}, xi.data()).i64({4}, xi.data());
    EXPECT_NE(call.run(tidalrt_k_softplus).find("UNSUPPORTED"),
              std::string::npos);
  }
  { // element counts differ
    KernelCall call;
    call.f32({4}, x.data()).f32({3}, y.data());
    EXPECT_NE(call.run(tidalrt_k_hard_swish).find("INVALID_ARGUMENT"),
              std::string::npos);
  }
  { // celu with alpha 0
    KernelCall call;
    call.f32({4}, x.data()).f32({4}, y.data()).attrFloat(0.0);
    std::string err = call.run(tidalrt_k_celu);
    EXPECT_NE(err.find("alpha is 0"), std::string::npos) << err;
  }
  { // backward with a saved tensor of another type
    std::vector<double> xd(4);
    KernelCall call;
    call.f32({4}, x.data())
        .tensor(TIDALRT_ELEMENT_TYPE_F64, {4}, xd.data())
        .f32({4}, y.data());
    EXPECT_NE(call.run(tidalrt_k_mish_backward).find("INVALID_ARGUMENT"),
              std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, Activation, TIDALRT_TEST_ISAS,
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           return std::string(i.param);
                         });

} // namespace
