// Tests of tidal.cast's conversions (cpu/cast_math.h, shared by the CPU and
// CUDA kernels) and its CPU kernel: float16 and bfloat16 rounded to nearest
// even from float32 and float64 in one step, exact back, every float16 bit
// pattern round-tripped; float to integer truncated and saturated, NaN to 0;
// bool both ways; rejected calls.
#include "kernel_test_util.h"

#include "../src/cpu/cast_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace tidalrt::cast;
using tidalrt_test::KernelCall;

namespace {

uint16_t half(double x) { return convert<Half, double>(x).bits; }
uint16_t bf16(float x) { return convert<BFloat16, float>(x).bits; }

// bfloat16 from float32 by the usual bit trick (round to nearest even on
// the upper half), NaN made quiet: an independent reference.
uint16_t bf16Reference(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if (std::isnan(x))
    return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

TEST(CastMath, HalfKnownValues) {
  EXPECT_EQ(half(0.0), 0x0000);
  EXPECT_EQ(half(-0.0), 0x8000);
  EXPECT_EQ(half(1.0), 0x3c00);
  EXPECT_EQ(half(-2.0), 0xc000);
  EXPECT_EQ(half(0.1), 0x2e66);
  EXPECT_EQ(half(65504.0), 0x7bff);                // the largest
  EXPECT_EQ(half(65519.99), 0x7bff);               // below the midpoint
  EXPECT_EQ(half(65520.0), 0x7c00);                // the midpoint: to infinity
  EXPECT_EQ(half(std::ldexp(1.0, -24)), 1);        // the least subnormal
  EXPECT_EQ(half(std::ldexp(1.0, -25)), 0);        // a tie: to even (0)
  EXPECT_EQ(half(std::ldexp(3.0, -25)), 2);        // a tie: to even (2)
  EXPECT_EQ(half(std::ldexp(1023.5, -24)), 0x400); // up to the least normal
  EXPECT_EQ(half(1.0 + std::ldexp(1.0, -11)), 0x3c00); // tie to even
  EXPECT_EQ(half(1.0 + std::ldexp(3.0, -11)), 0x3c02); // tie to even
  EXPECT_EQ(half(INFINITY), 0x7c00);
  EXPECT_EQ(half(-INFINITY), 0xfc00);
  EXPECT_EQ(half(NAN) & 0x7e00, 0x7e00);
  // Double to half in one rounding, not through float: just above a tie.
  EXPECT_EQ(half(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3c01);
}

TEST(CastMath, HalfRoundTripsEveryBitPattern) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const double x = convert<double, Half>(Half{(uint16_t)b});
    if (std::isnan(x)) {
      EXPECT_TRUE((b & 0x7c00) == 0x7c00 && (b & 0x3ff)) << b;
      continue;
    }
    EXPECT_EQ(half(x), b) << b;
    EXPECT_EQ((convert<Half, float>((float)x).bits), b) << b;
  }
}

TEST(CastMath, BFloat16MatchesTheBitTrick) {
  std::mt19937 gen(5);
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = gen();
    float x;
    std::memcpy(&x, &u, 4);
    if (std::isnan(x))
      EXPECT_EQ(bf16(x) & 0x7fc0, 0x7fc0);
    else
      EXPECT_EQ(bf16(x), bf16Reference(x)) << x;
  }
  EXPECT_EQ(bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16(std::numeric_limits<float>::max()), 0x7f80); // rounds up
  EXPECT_EQ(bf16(std::numeric_limits<float>::denorm_min()), 0);
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float x = convert<float, BFloat16>(BFloat16{(uint16_t)b});
    uint32_t u;
    std::memcpy(&u, &x, 4);
    if (!std::isnan(x))
      EXPECT_EQ(u, b << 16) << b;
  }
}

TEST(CastMath, FloatToInteger) {
  EXPECT_EQ((convert<int32_t, float>(-2.7f)), -2);
  EXPECT_EQ((convert<int32_t, float>(2.7f)), 2);
  EXPECT_EQ((convert<int8_t, float>(1000.0f)), 127);
  EXPECT_EQ((convert<int8_t, float>(-1000.0f)), -128);
  EXPECT_EQ((convert<uint8_t, float>(-3.0f)), 0);
  EXPECT_EQ((convert<int64_t, double>(1e30)),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ((convert<int32_t, float>(NAN)), 0);
  EXPECT_EQ((convert<int32_t, Half>(Half{0x3e00})), 1); // 1.5
  EXPECT_EQ((convert<Bool, Half>(Half{0x8000})).v, 0);  // -0
  EXPECT_EQ((convert<Bool, float>(NAN)).v, 1);
  EXPECT_EQ((convert<float, Bool>(Bool{1})), 1.0f);
  EXPECT_EQ((convert<Half, Bool>(Bool{1})).bits, 0x3c00);
}

TEST(CastKernel, FloatToHalfAndBack) {
  std::vector<float> x = {0.1f, -65520.0f, 3.0e-8f, 1.0f, 2.5f};
  const int64_t n = (int64_t)x.size();
  std::vector<uint16_t> h(x.size());
  KernelCall call;
  call.f32({n}, x.data()).tensor(TIDALRT_ELEMENT_TYPE_F16, {n}, h.data());
  ASSERT_EQ(call.run(tidalrt_k_cast), "");
  const std::vector<uint16_t> want = {0x2e66, 0xfc00, 0x0001, 0x3c00, 0x4100};
  EXPECT_EQ(h, want);
  std::vector<double> back(x.size());
  KernelCall call2;
  call2.tensor(TIDALRT_ELEMENT_TYPE_F16, {n}, h.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {n}, back.data());
  ASSERT_EQ(call2.run(tidalrt_k_cast), "");
  EXPECT_EQ(back[3], 1.0);
  EXPECT_EQ(back[4], 2.5);
  EXPECT_EQ(back[2], std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isinf(back[1]) && back[1] < 0);
}

TEST(CastKernel, RejectsMismatchedCounts) {
  std::vector<float> x(3);
  std::vector<int32_t> y(4);
  KernelCall call;
  call.f32({3}, x.data()).tensor(TIDALRT_ELEMENT_TYPE_I32, {4}, y.data());
  const std::string error = call.run(tidalrt_k_cast);
  EXPECT_EQ(error.rfind("INVALID_ARGUMENT", 0), 0u) << error;
  EXPECT_NE(error.find("output"), std::string::npos) << error;
}

} // namespace
