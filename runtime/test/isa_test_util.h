// isa_test_util.h - running CPU kernel tests under each ISA of simd.h
// (TIDAL_CPU_ISA = scalar, avx2, avx512), skipping those the CPU lacks.
#ifndef TIDALRT_TEST_ISA_TEST_UTIL_H
#define TIDALRT_TEST_ISA_TEST_UTIL_H

#include "../src/cpu/simd.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <random>
#include <vector>

// The parameter list of ISA-parameterized suites.
#define TIDALRT_TEST_ISAS ::testing::Values("scalar", "avx2", "avx512")

// In a fixture's SetUp: skips the test unless the CPU can run ISA `name`
// (without this, activeIsa() would quietly fall back to a narrower ISA).
#define TIDALRT_SKIP_UNLESS_ISA(name)                                          \
  do {                                                                         \
    ::tidalrt::simd::Isa isa_;                                                 \
    if (!::tidalrt::simd::parseIsa(name, isa_))                                \
      FAIL() << "unknown ISA " << (name);                                      \
    if (!::tidalrt::simd::isaAvailable(isa_))                                  \
      GTEST_SKIP() << "this CPU has no " << (name)                             \
                   << " (TIDAL_CPU_ISA=" << (name) << " would fall back)";     \
  } while (0)

namespace tidalrt_test {

// A suite parameterized by TIDALRT_TEST_ISAS: each test runs with
// TIDAL_CPU_ISA set to its ISA (skipped where the CPU lacks it).
class IsaParamTest : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    TIDALRT_SKIP_UNLESS_ISA(GetParam());
    setenv("TIDAL_CPU_ISA", GetParam(), 1);
  }
  void TearDown() override { unsetenv("TIDAL_CPU_ISA"); }
};

// n floats uniform in [lo, hi), from `seed`.
inline std::vector<float> randomFloats(int64_t n, float lo, float hi,
                                       uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v((size_t)n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

// Runs `body` with TIDAL_CPU_ISA set to each ISA the CPU has, scalar first;
// unsets the variable afterwards.
inline void forEachIsa(const std::function<void()> &body) {
  namespace simd = ::tidalrt::simd;
  for (simd::Isa isa :
       {simd::Isa::Scalar, simd::Isa::Avx2, simd::Isa::Avx512}) {
    if (!simd::isaAvailable(isa))
      continue;
    SCOPED_TRACE(std::string("TIDAL_CPU_ISA=") + simd::isaName(isa));
    setenv("TIDAL_CPU_ISA", simd::isaName(isa), 1);
    body();
  }
  unsetenv("TIDAL_CPU_ISA");
}

} // namespace tidalrt_test

#endif // TIDALRT_TEST_ISA_TEST_UTIL_H
