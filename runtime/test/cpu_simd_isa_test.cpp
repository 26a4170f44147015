// cpu_simd_isa_test.cpp - every loop of simd.h on each vector ISA (AVX2,
// AVX-512) against the scalar loop, directly (no kernel), at lengths that
// cover the vector widths' tails (1, 7, 15, 16, 17, 33, ...), with special
// values (NaN, infinities, signed zeros, denormals, values outside each
// function's fast range) mixed in so that the per-lane slow paths run, and
// with guard elements after the end that no loop may write.
//
// Exact operations (neg, relu, leaky_relu, sqrt, add, sub, mul, div, the
// relu/leaky_relu/sigmoid gradients, dropout, the masks, accumulate) must
// give the scalar loop's bits; the vector math within 1e-6 relative (with
// the smallest normal float as the absolute floor) and NaN where the scalar
// loop gives NaN; the double sums within 1e-12 relative of the sum of
// magnitudes (they add in another order).
#include "isa_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace simd = tidalrt::simd;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kGuard = -12345.0f;

const int64_t kLengths[] = {0,  1,  2,  3,  7,  8,  9,   15,   16,   17,  31,
                            32, 33, 47, 63, 64, 65, 100, 1000, 1003, 4099};

class SimdIsa : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    TIDALRT_SKIP_UNLESS_ISA(GetParam());
    simd::parseIsa(GetParam(), isa);
  }
  simd::Isa isa = simd::Isa::Scalar;
};

// n values uniform in [lo, hi]; with `special`, about one in eight replaced
// by a value that takes a vector loop's slow path.
std::vector<float> inputs(int64_t n, float lo, float hi, bool special,
                          unsigned seed) {
  static const float kSpecial[] = {
      kNaN,  kInf,   -kInf, 0.0f,   -0.0f, 1e-40f, -1e-40f, 100.0f,  -100.0f,
      1e30f, -1e30f, 88.5f, -88.5f, 13.0f, -13.0f, 3.4e38f, -3.4e38f};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> x((size_t)n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = u(rng);
    if (special && rng() % 8 == 0)
      x[i] = kSpecial[rng() % (sizeof(kSpecial) / sizeof(kSpecial[0]))];
  }
  return x;
}

bool sameBits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

// Whether `got` matches the scalar loop's `want`: bitwise, or (`tol` > 0)
// within tol relative, both NaN, or equal (a zero with the same sign).
bool close(float got, float want, double tol) {
  if (tol == 0.0)
    return sameBits(got, want);
  if (std::isnan(want) || std::isnan(got))
    return std::isnan(want) && std::isnan(got);
  if (got == want) // and zeros of the same sign
    return std::signbit(got) == std::signbit(want);
  double err = std::fabs((double)got - (double)want);
  return err <= tol * std::max(std::fabs((double)want),
                               (double)std::numeric_limits<float>::min());
}

// Compares y[0..n) with ref and checks the guards after n.
void expectMatches(const std::vector<float> &y, const std::vector<float> &ref,
                   int64_t n, double tol, const std::string &what,
                   const std::vector<float> &x) {
  int bad = 0;
  for (int64_t i = 0; i < n && bad < 5; ++i)
    if (!close(y[i], ref[i], tol)) {
      ADD_FAILURE() << what << " n=" << n << " [" << i << "] x=" << x[i]
                    << ": got " << y[i] << ", scalar " << ref[i];
      ++bad;
    }
  for (size_t i = (size_t)n; i < y.size(); ++i)
    ASSERT_TRUE(sameBits(y[i], kGuard))
        << what << " n=" << n << ": wrote past the end at " << i;
}

struct UnaryOp {
  simd::Unary op;
  const char *name;
  float lo, hi;
  double tol; // 0: bitwise
};

const UnaryOp kUnary[] = {
    {simd::Unary::Neg, "neg", -10, 10, 0},
    {simd::Unary::Relu, "relu", -10, 10, 0},
    {simd::Unary::LeakyRelu, "leaky_relu", -10, 10, 0},
    {simd::Unary::Sqrt, "sqrt", 0, 100, 0},
    {simd::Unary::Exp, "exp", -90, 90, 1e-6},
    {simd::Unary::Log, "log", 0, 1e3f, 1e-6},
    {simd::Unary::Tanh, "tanh", -10, 10, 1e-6},
    {simd::Unary::Sigmoid, "sigmoid", -90, 90, 1e-6},
    {simd::Unary::Erf, "erf", -5, 5, 1e-6},
    {simd::Unary::Gelu, "gelu", -14, 14, 1e-6},
};

TEST_P(SimdIsa, UnaryMatchesScalar) {
  for (const UnaryOp &u : kUnary)
    for (bool special : {false, true})
      for (int64_t n : kLengths) {
        std::vector<float> x = inputs(n, u.lo, u.hi, special, (unsigned)n);
        std::vector<float> ref((size_t)n), y((size_t)n + 20, kGuard);
        simd::unaryF32(simd::Isa::Scalar, u.op, x.data(), ref.data(), n, 0.1f);
        simd::unaryF32(isa, u.op, x.data(), y.data(), n, 0.1f);
        expectMatches(y, ref, n, u.tol, u.name, x);
        // In place.
        std::vector<float> z = x;
        simd::unaryF32(isa, u.op, z.data(), z.data(), n, 0.1f);
        for (int64_t i = 0; i < n; ++i)
          ASSERT_TRUE(sameBits(z[i], y[i]))
              << u.name << " in place [" << i << "] n=" << n;
      }
}

TEST_P(SimdIsa, BinaryMatchesScalarForEveryStride) {
  const simd::Binary ops[] = {simd::Binary::Add, simd::Binary::Sub,
                              simd::Binary::Mul, simd::Binary::Div};
  const char *names[] = {"add", "sub", "mul", "div"};
  for (int k = 0; k < 4; ++k)
    for (int64_t as : {0, 1})
      for (int64_t bs : {0, 1})
        for (int64_t n : kLengths) {
          std::vector<float> a = inputs(n + 1, -10, 10, true, 7 + (unsigned)n);
          std::vector<float> b = inputs(n + 1, 0.5f, 4, true, 9 + (unsigned)n);
          std::vector<float> ref((size_t)n), y((size_t)n + 20, kGuard);
          simd::binaryF32(simd::Isa::Scalar, ops[k], a.data(), as, b.data(), bs,
                          ref.data(), n);
          simd::binaryF32(isa, ops[k], a.data(), as, b.data(), bs, y.data(), n);
          expectMatches(y, ref, n, 0.0,
                        std::string(names[k]) + " strides " +
                            std::to_string(as) + "," + std::to_string(bs),
                        a);
        }
}

TEST_P(SimdIsa, GradMatchesScalar) {
  struct GradOp {
    simd::Grad op;
    const char *name;
    float lo, hi;
    double tol;
  };
  // tanh's FMA rounds 1 - y^2 once where the scalar loop rounds twice.
  const GradOp ops[] = {
      {simd::Grad::Relu, "relu", -2, 2, 0},
      {simd::Grad::LeakyRelu, "leaky_relu", -2, 2, 0},
      {simd::Grad::Sigmoid, "sigmoid", 0, 1, 0},
      {simd::Grad::Tanh, "tanh", -0.99f, 0.99f, 1e-5},
      {simd::Grad::Erf, "erf", -10, 10, 1e-6},
      {simd::Grad::Gelu, "gelu", -14, 14, 1e-6},
  };
  for (const GradOp &o : ops)
    for (bool special : {false, true})
      for (int64_t n : kLengths) {
        std::vector<float> g = inputs(n, -3, 3, false, 3 + (unsigned)n);
        std::vector<float> s = inputs(n, o.lo, o.hi, special, 5 + (unsigned)n);
        std::vector<float> ref((size_t)n), y((size_t)n + 20, kGuard);
        simd::gradF32(simd::Isa::Scalar, o.op, g.data(), s.data(), ref.data(),
                      n, 0.01f);
        simd::gradF32(isa, o.op, g.data(), s.data(), y.data(), n, 0.01f);
        double tol = o.tol;
        if (o.op == simd::Grad::Gelu || o.op == simd::Grad::Tanh)
          // The factor can cancel (gelu' has a root near -0.75, 1 - y^2
          // near |y| = 1): relative to |g|.
          for (int64_t i = 0; i < n; ++i)
            if (!close(y[i], ref[i], tol))
              ASSERT_LE(std::fabs(y[i] - ref[i]), 1e-6 * std::fabs(g[i]))
                  << o.name << " [" << i << "] n=" << n << " x=" << s[i];
        if (o.op != simd::Grad::Gelu && o.op != simd::Grad::Tanh)
          expectMatches(y, ref, n, tol, std::string(o.name) + "_backward", s);
        for (size_t i = (size_t)n; i < y.size(); ++i)
          ASSERT_TRUE(sameBits(y[i], kGuard)) << o.name << " n=" << n;
      }
}

TEST_P(SimdIsa, MaskScaleMatchesScalar) {
  for (int64_t n : kLengths) {
    std::vector<float> x = inputs(n, -5, 5, true, 11 + (unsigned)n);
    std::vector<uint8_t> mask((size_t)n);
    std::mt19937 rng((unsigned)n);
    for (auto &m : mask)
      m = rng() % 3 != 0;
    std::vector<float> ref((size_t)n), y((size_t)n + 20, kGuard);
    simd::maskScaleF32(simd::Isa::Scalar, x.data(), mask.data(), 1.25f,
                       ref.data(), n);
    simd::maskScaleF32(isa, x.data(), mask.data(), 1.25f, y.data(), n);
    expectMatches(y, ref, n, 0.0, "mask_scale", x);
  }
}

TEST_P(SimdIsa, SumsAndAccumulationsMatchScalar) {
  for (int64_t n : kLengths) {
    std::vector<float> x = inputs(n, -100, 100, false, 13 + (unsigned)n);
    double mag = 0.0;
    for (float v : x)
      mag += std::fabs(v);
    double ref = simd::sumF32(simd::Isa::Scalar, x.data(), n);
    EXPECT_NEAR(simd::sumF32(isa, x.data(), n), ref, 1e-12 * mag) << n;

    std::vector<double> accRef((size_t)n + 20, 0.5), acc = accRef;
    simd::accumulateF32(simd::Isa::Scalar, x.data(), accRef.data(), n);
    simd::accumulateF32(isa, x.data(), acc.data(), n);
    for (size_t i = 0; i < acc.size(); ++i)
      ASSERT_EQ(acc[i], accRef[i]) << "accumulate n=" << n << " [" << i << "]";

    std::vector<std::vector<float>> rows;
    for (unsigned r = 0; r < 4; ++r)
      rows.push_back(inputs(n, -100, 100, false, 17 + r + (unsigned)n));
    const float *rp[4] = {rows[0].data(), rows[1].data(), rows[2].data(),
                          rows[3].data()};
    std::vector<double> acc4Ref((size_t)n + 20, -0.25), acc4 = acc4Ref;
    simd::accumulate4F32(simd::Isa::Scalar, rp, acc4Ref.data(), n);
    simd::accumulate4F32(isa, rp, acc4.data(), n);
    for (size_t i = 0; i < acc4.size(); ++i)
      ASSERT_EQ(acc4[i], acc4Ref[i])
          << "accumulate4 n=" << n << " [" << i << "]";
  }
}

TEST_P(SimdIsa, DropoutMatchesScalar) {
  const uint64_t two32 = (uint64_t)1 << 32;
  const uint64_t thresholds[] = {0, 1, two32 / 2, two32 - 1, two32};
  // 0xfffffff0 wraps the element index inside a vector.
  const uint32_t firsts[] = {0, 5, 0xfffffff0u};
  for (uint64_t thr : thresholds)
    for (uint32_t first : firsts)
      for (int64_t n : kLengths) {
        simd::DropoutStream s;
        s.k1 = 0x12345678u;
        s.k2 = 0x9abcdef0u;
        s.threshold = thr;
        std::vector<float> x = inputs(n, -5, 5, true, 19 + (unsigned)n);
        std::vector<float> ref((size_t)n), y((size_t)n + 20, kGuard);
        std::vector<uint8_t> mref((size_t)n), m((size_t)n + 20, 7);
        simd::dropoutF32(simd::Isa::Scalar, s, first, x.data(), ref.data(),
                         mref.data(), n, 2.0f);
        simd::dropoutF32(isa, s, first, x.data(), y.data(), m.data(), n, 2.0f);
        expectMatches(y, ref, n, 0.0, "dropout", x);
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(m[i], mref[i])
              << "dropout mask n=" << n << " [" << i << "]";
        for (size_t i = (size_t)n; i < m.size(); ++i)
          ASSERT_EQ(m[i], 7) << "dropout mask written past the end, n=" << n;
      }
}

INSTANTIATE_TEST_SUITE_P(Cpu, SimdIsa, ::testing::Values("avx2", "avx512"),
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           return std::string(i.param);
                         });

// What the ISA checks require: AVX-512 means AVX512F (the only subset the
// code uses) with AVX2 and FMA; BW, DQ and VL are not needed.
TEST(SimdCpu, FeatureChecks) {
  __builtin_cpu_init();
  const bool avx2 =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool f = __builtin_cpu_supports("avx512f");
  EXPECT_EQ(simd::cpuHasAvx2Fma(), avx2);
  EXPECT_EQ(simd::cpuHasAvx512(), avx2 && f);
  EXPECT_EQ(simd::isaAvailable(simd::Isa::Avx512), simd::cpuHasAvx512());
  EXPECT_EQ(simd::isaAvailable(simd::Isa::Avx2), avx2);
  EXPECT_TRUE(simd::isaAvailable(simd::Isa::Scalar));
  printf(
      "[ cpu      ] avx2+fma %d, avx512f %d bw %d dq %d vl %d; best ISA %s\n",
      avx2, f, !!__builtin_cpu_supports("avx512bw"),
      !!__builtin_cpu_supports("avx512dq"),
      !!__builtin_cpu_supports("avx512vl"), simd::isaName(simd::bestIsa()));
}

} // namespace
