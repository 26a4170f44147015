// Tests of the random_normal and random_uniform kernels: the documented
// formula (reimplemented here from docs/runtime-abi.md, independently of
// random_draw.h), the distributions, determinism (seed, step, stream, op,
// thread count) and errors.
#include "isa_test_util.h"
#include "kernel_test_util.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

using tidalrt_test::KernelCall;

namespace {

// --- the contract, from the docs ------------------------------------------

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ull;

uint64_t refKey(uint64_t seed, uint64_t step, uint64_t stream) {
  uint64_t k = mix64(seed + kGamma);
  k = mix64((k ^ step) + kGamma);
  return mix64((k ^ stream) + kGamma);
}

uint32_t lowbias32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

uint32_t refDraw(uint64_t key, uint64_t c) {
  uint64_t k = (c >> 32) ? mix64(key + (c >> 32) * kGamma) : key;
  return lowbias32(lowbias32((uint32_t)c + (uint32_t)k) ^ (uint32_t)(k >> 32));
}

double refUnit(uint32_t h) { return (double)(h >> 8) / 16777216.0; }

double refNormal(uint64_t key, uint64_t i, double mean, double scale) {
  double u1 = 1.0 - refUnit(refDraw(key, 2 * i));
  double u2 = refUnit(refDraw(key, 2 * i + 1));
  return mean +
         scale * (std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2));
}

double refUniform(uint64_t key, uint64_t i, double low, double high) {
  return low + (high - low) * refUnit(refDraw(key, i));
}

// --- calls -----------------------------------------------------------------

struct Draw {
  bool normal = true;
  double a = 0.0, b = 1.0; // mean, scale (normal); low, high (uniform)
  int64_t seedAttr = -1;   // absent: the context seed
  int64_t stream = -1;     // absent: the op index
  uint64_t ctxSeed = 42, step = 0;
  int64_t opIndex = 0;
};

// Attributes: random_normal mean(0), scale(1); random_uniform high(0),
// low(1); both seed(2, optional), stream(3, optional).
template <typename T> tidalrt_element_type_t typeOf() {
  return sizeof(T) == 8                  ? TIDALRT_ELEMENT_TYPE_F64
         : std::is_same<T, float>::value ? TIDALRT_ELEMENT_TYPE_F32
                                         : TIDALRT_ELEMENT_TYPE_I32;
}

template <typename T>
std::vector<T> run(const Draw &d, int64_t n, std::string *error = nullptr,
                   tidalrt_element_type_t type = typeOf<T>()) {
  std::vector<T> y((size_t)n, (T)-7);
  KernelCall call(d.opIndex);
  call.tensor(type, {n}, y.data());
  if (d.normal)
    call.attrFloat(d.a).attrFloat(d.b);
  else
    call.attrFloat(d.b).attrFloat(d.a);
  if (d.seedAttr >= 0)
    call.attrInt(d.seedAttr);
  else
    call.attrAbsent();
  if (d.stream >= 0)
    call.attrInt(d.stream);
  else
    call.attrAbsent();
  std::string err =
      call.run(d.normal ? tidalrt_k_random_normal : tidalrt_k_random_uniform,
               true, d.ctxSeed, d.step);
  if (error)
    *error = err;
  else
    EXPECT_EQ(err, "");
  return y;
}

class Random : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    TIDALRT_SKIP_UNLESS_ISA(GetParam());
    setenv("TIDAL_CPU_ISA", GetParam(), 1);
  }
  void TearDown() override { unsetenv("TIDAL_CPU_ISA"); }
};

// Every element is the documented formula of (seed, step, stream, element),
// rounded once to the element type.
TEST_P(Random, DocumentedFormula) {
  for (bool normal : {true, false}) {
    Draw d;
    d.normal = normal;
    d.a = normal ? 0.25 : -2.0;
    d.b = normal ? 3.0 : 5.0;
    d.ctxSeed = 9, d.step = 4, d.opIndex = 6;
    const uint64_t key = refKey(9, 4, 6);
    auto f = run<float>(d, 5003);
    auto g = run<double>(d, 5003);
    for (int64_t i = 0; i < 5003; ++i) {
      double want =
          normal ? refNormal(key, i, d.a, d.b) : refUniform(key, i, d.a, d.b);
      ASSERT_EQ(f[i], (float)want) << (normal ? "normal " : "uniform ") << i;
      ASSERT_EQ(g[i], want) << (normal ? "normal " : "uniform ") << i;
    }
  }
}

TEST_P(Random, NormalDistribution) {
  Draw d;
  d.a = 0.5, d.b = 2.0, d.step = 1;
  const int64_t n = 400000;
  auto y = run<float>(d, n);
  double sum = 0.0, sq = 0.0;
  int64_t within1 = 0, within2 = 0;
  for (float v : y) {
    ASSERT_TRUE(std::isfinite(v));
    sum += v;
    sq += (double)v * v;
    double z = std::fabs((v - 0.5) / 2.0);
    within1 += z < 1.0;
    within2 += z < 2.0;
  }
  double mean = sum / n, var = sq / n - mean * mean;
  // Standard errors: mean 2/sqrt(n) = 0.0032; variance 4 * sqrt(2/n) = 0.009.
  EXPECT_NEAR(mean, 0.5, 5 * 0.0032);
  EXPECT_NEAR(var, 4.0, 5 * 0.009);
  EXPECT_NEAR((double)within1 / n, 0.682689, 0.004);
  EXPECT_NEAR((double)within2 / n, 0.954500, 0.002);
}

TEST_P(Random, UniformDistribution) {
  Draw d;
  d.normal = false;
  d.a = -1.0, d.b = 3.0;
  const int64_t n = 400000;
  auto y = run<double>(d, n);
  std::vector<int64_t> bins(16, 0);
  for (double v : y) {
    ASSERT_GE(v, -1.0);
    ASSERT_LT(v, 3.0);
    ++bins[(size_t)((v + 1.0) * 4.0)];
  }
  // Each bin holds n/16 = 25000 +- 153 (one standard deviation).
  for (int64_t b : bins)
    EXPECT_NEAR((double)b, n / 16.0, 6 * 153.0);
}

// Values depend on (seed, step, stream, element) only: not on the thread
// count, and a shorter tensor draws a prefix of a longer one's values.
TEST_P(Random, Determinism) {
  for (bool normal : {true, false}) {
    Draw d;
    d.normal = normal;
    d.step = 5;
    auto a = run<float>(d, 100003);
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    auto one = run<float>(d, 100003);
    omp_set_num_threads(3);
    auto three = run<float>(d, 100003);
    omp_set_num_threads(threads);
    EXPECT_EQ(one, a);
    EXPECT_EQ(three, a);
    auto prefix = run<float>(d, 777);
    EXPECT_EQ(prefix, std::vector<float>(a.begin(), a.begin() + 777));

    Draw step = d;
    step.step = 6;
    EXPECT_NE(run<float>(step, 1000), run<float>(d, 1000));
    // The seed attribute wins over the context seed; the stream attribute
    // over the op index.
    Draw seeded = d, seededOther = d;
    seeded.seedAttr = 77, seededOther.seedAttr = 77, seededOther.ctxSeed = 1;
    EXPECT_EQ(run<float>(seeded, 1000), run<float>(seededOther, 1000));
    EXPECT_NE(run<float>(seeded, 1000), run<float>(d, 1000));
    Draw streamA = d, streamB = d;
    streamA.stream = 3, streamA.opIndex = 10;
    streamB.stream = 3, streamB.opIndex = 20;
    EXPECT_EQ(run<float>(streamA, 1000), run<float>(streamB, 1000));
    Draw byIndex = d;
    byIndex.opIndex = 3;
    EXPECT_EQ(run<float>(byIndex, 1000), run<float>(streamA, 1000));
  }
}

TEST_P(Random, DegenerateParameters) {
  Draw d;
  d.a = 1.5, d.b = 0.0; // scale 0: the mean
  EXPECT_EQ(run<float>(d, 100), std::vector<float>(100, 1.5f));
  Draw u;
  u.normal = false;
  u.a = u.b = -2.0; // low == high
  EXPECT_EQ(run<double>(u, 100), std::vector<double>(100, -2.0));
  EXPECT_TRUE(run<float>(d, 0).empty());
}

TEST_P(Random, Errors) {
  std::string err;
  Draw d;
  d.b = -1.0;
  run<float>(d, 4, &err);
  EXPECT_EQ(err.rfind("INVALID_ARGUMENT", 0), 0u) << err;
  EXPECT_NE(err.find("scale"), std::string::npos) << err;
  d.b = NAN;
  run<float>(d, 4, &err);
  EXPECT_EQ(err.rfind("INVALID_ARGUMENT", 0), 0u) << err;
  Draw u;
  u.normal = false;
  u.a = 2.0, u.b = 1.0;
  run<float>(u, 4, &err);
  EXPECT_EQ(err.rfind("INVALID_ARGUMENT", 0), 0u) << err;
  EXPECT_NE(err.find("low"), std::string::npos) << err;
  Draw ok;
  run<int32_t>(ok, 4, &err, TIDALRT_ELEMENT_TYPE_I32);
  EXPECT_EQ(err.rfind("UNSUPPORTED", 0), 0u) << err;
}

INSTANTIATE_TEST_SUITE_P(Cpu, Random, TIDALRT_TEST_ISAS,
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           return std::string(i.param);
                         });

} // namespace
