// Tests of the dropout and dropout_backward kernels: identity modes, the
// drop rate, scaling, determinism (seed, step, op, thread count) and errors.
#include "isa_test_util.h"
#include "kernel_test_util.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

using tidalrt_test::KernelCall;

namespace {

class ElementwiseDropout : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    TIDALRT_SKIP_UNLESS_ISA(GetParam());
    setenv("TIDAL_CPU_ISA", GetParam(), 1);
  }
  void TearDown() override { unsetenv("TIDAL_CPU_ISA"); }
};

struct DropoutRun {
  std::vector<float> y;
  std::vector<uint8_t> mask;
};

// Attributes: ratio(0), seed(1, optional), stream(2, optional),
// training(3).
DropoutRun runDropout(const std::vector<float> &x, double ratio, bool training,
                      int64_t seedAttr = -1, uint64_t ctxSeed = 42,
                      uint64_t step = 0, int64_t opIndex = 0,
                      std::string *error = nullptr, int64_t stream = -1) {
  DropoutRun r;
  r.y.assign(x.size(), -1.0f);
  r.mask.assign(x.size(), 7);
  int64_t n = (int64_t)x.size();
  KernelCall call(opIndex);
  call.f32({n}, const_cast<float *>(x.data()))
      .f32({n}, r.y.data())
      .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {n}, r.mask.data())
      .attrFloat(ratio);
  if (seedAttr >= 0)
    call.attrInt(seedAttr);
  else
    call.attrAbsent();
  if (stream >= 0)
    call.attrInt(stream);
  else
    call.attrAbsent(); // the op index is the stream
  call.attrInt(training ? 1 : 0);
  std::string err = call.run(tidalrt_k_dropout, true, ctxSeed, step);
  if (error)
    *error = err;
  else
    EXPECT_EQ(err, "");
  return r;
}

std::vector<float> ramp(int64_t n) {
  std::vector<float> x((size_t)n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = (float)(i % 1000) * 0.01f - 5.0f;
  return x;
}

TEST_P(ElementwiseDropout, IdentityWhenNotTrainingOrRatioZero) {
  auto x = ramp(1003);
  for (auto [ratio, training] :
       {std::make_pair(0.5, false), std::make_pair(0.0, true)}) {
    DropoutRun r = runDropout(x, ratio, training);
    EXPECT_EQ(r.y, x);
    EXPECT_EQ(r.mask, std::vector<uint8_t>(x.size(), 1));
  }
}

TEST_P(ElementwiseDropout, DropsAtTheRatioAndScales) {
  for (double ratio : {0.1, 0.5, 0.9}) {
    auto x = ramp(200003);
    DropoutRun r = runDropout(x, ratio, true);
    int64_t dropped = 0;
    const float scale = (float)(1.0 / (1.0 - ratio));
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_LE(r.mask[i], 1);
      if (r.mask[i]) {
        ASSERT_EQ(r.y[i], x[i] * scale) << "at " << i;
      } else {
        ++dropped;
        ASSERT_EQ(r.y[i], 0.0f) << "at " << i;
      }
    }
    double rate = (double)dropped / (double)x.size();
    // 5 standard deviations of a binomial proportion.
    double sd = std::sqrt(ratio * (1 - ratio) / (double)x.size());
    EXPECT_NEAR(rate, ratio, 5 * sd) << "ratio " << ratio;
  }
}

TEST_P(ElementwiseDropout, DeterministicStreams) {
  auto x = ramp(100000);
  DropoutRun a = runDropout(x, 0.3, true, -1, 42, 5, 0);
  DropoutRun b = runDropout(x, 0.3, true, -1, 42, 5, 0);
  EXPECT_EQ(a.mask, b.mask);
  EXPECT_EQ(a.y, b.y);
  EXPECT_NE(a.mask, runDropout(x, 0.3, true, -1, 42, 6, 0).mask); // step
  EXPECT_NE(a.mask, runDropout(x, 0.3, true, -1, 43, 5, 0).mask); // seed
  EXPECT_NE(a.mask, runDropout(x, 0.3, true, -1, 42, 5, 1).mask); // op
  // The seed attribute replaces the context seed.
  DropoutRun s1 = runDropout(x, 0.3, true, 7, 42, 5, 0);
  DropoutRun s2 = runDropout(x, 0.3, true, 7, 99, 5, 0);
  EXPECT_EQ(s1.mask, s2.mask);
  EXPECT_NE(s1.mask, a.mask);
  // The stream attribute replaces the op index, so the mask does not depend
  // on where the schedule put the op.
  DropoutRun t3 = runDropout(x, 0.3, true, -1, 42, 5, 0, nullptr, 3);
  EXPECT_EQ(t3.mask, runDropout(x, 0.3, true, -1, 42, 5, 9, nullptr, 3).mask);
  EXPECT_EQ(t3.mask, runDropout(x, 0.3, true, -1, 42, 5, 3).mask);
  EXPECT_NE(t3.mask, a.mask);
  // The thread count does not matter.
  int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  DropoutRun one = runDropout(x, 0.3, true, -1, 42, 5, 0);
  omp_set_num_threads(3);
  DropoutRun three = runDropout(x, 0.3, true, -1, 42, 5, 0);
  omp_set_num_threads(threads);
  EXPECT_EQ(one.mask, a.mask);
  EXPECT_EQ(three.mask, a.mask);
  // A prefix of a longer tensor draws the same mask (counter-based).
  std::vector<float> shorter(x.begin(), x.begin() + 777);
  DropoutRun p = runDropout(shorter, 0.3, true, -1, 42, 5, 0);
  EXPECT_EQ(p.mask, std::vector<uint8_t>(a.mask.begin(), a.mask.begin() + 777));
}

TEST(ElementwiseDropoutIsa, SameMaskOnBothPaths) {
  auto x = ramp(70001);
  setenv("TIDAL_CPU_ISA", "scalar", 1);
  DropoutRun scalar = runDropout(x, 0.4, true, -1, 5, 3, 2);
  unsetenv("TIDAL_CPU_ISA");
  DropoutRun best = runDropout(x, 0.4, true, -1, 5, 3, 2);
  EXPECT_EQ(scalar.mask, best.mask);
  EXPECT_EQ(scalar.y, best.y);
}

TEST_P(ElementwiseDropout, Backward) {
  for (int64_t n : {13, 50000}) {
    std::vector<float> g = ramp(n), y((size_t)n);
    std::vector<uint8_t> m((size_t)n);
    for (int64_t i = 0; i < n; ++i)
      m[i] = (i * 7 % 3) != 0;
    KernelCall call;
    call.f32({n}, g.data())
        .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {n}, m.data())
        .f32({n}, y.data())
        .attrFloat(0.25);
    ASSERT_EQ(call.run(tidalrt_k_dropout_backward), "");
    for (int64_t i = 0; i < n; ++i) {
      double ref = m[i] ? g[i] / 0.75 : 0.0;
      ASSERT_NEAR(y[i], ref, 1e-6 * std::fabs(ref)) << "at " << i;
    }
  }
}

TEST_P(ElementwiseDropout, Float64) {
  std::vector<double> x(1000, 2.0), y(1000);
  std::vector<uint8_t> m(1000);
  KernelCall call;
  call.tensor(TIDALRT_ELEMENT_TYPE_F64, {1000}, x.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {1000}, y.data())
      .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {1000}, m.data())
      .attrFloat(0.5)
      .attrAbsent()
      .attrAbsent()
      .attrInt(1);
  ASSERT_EQ(call.run(tidalrt_k_dropout), "");
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(y[i], m[i] ? 4.0 : 0.0);
}

TEST_P(ElementwiseDropout, Errors) {
  auto x = ramp(10);
  std::string err;
  runDropout(x, 1.0, true, -1, 42, 0, 0, &err);
  EXPECT_NE(err.find("INVALID_ARGUMENT: dropout (op 0): ratio 1 is outside"),
            std::string::npos)
      << err;
  float y[10];
  float mask[10];
  KernelCall call; // a float mask
  call.f32({10}, x.data()).f32({10}, y).f32({10}, mask).attrFloat(0.5);
  call.attrAbsent().attrAbsent().attrInt(1);
  err = call.run(tidalrt_k_dropout);
  EXPECT_NE(err.find("mask has element type float32"), std::string::npos)
      << err;
  int64_t ix[10];
  KernelCall ints;
  ints.i64({10}, ix).i64({10}, ix);
  ints.tensor(TIDALRT_ELEMENT_TYPE_BOOL, {10}, mask);
  ints.attrFloat(0.5).attrAbsent().attrAbsent().attrInt(1);
  err = ints.run(tidalrt_k_dropout);
  EXPECT_EQ(err.rfind("UNSUPPORTED: dropout (op 0)", 0), 0u) << err;
  KernelCall back; // mask shape mismatch
  back.f32({10}, x.data())
      .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {9}, mask)
      .f32({10}, y)
      .attrFloat(0.5);
  err = back.run(tidalrt_k_dropout_backward);
  EXPECT_NE(err.find("INVALID_ARGUMENT"), std::string::npos) << err;
}

INSTANTIATE_TEST_SUITE_P(Elementwise, ElementwiseDropout, TIDALRT_TEST_ISAS,
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           return std::string(i.param);
                         });

} // namespace
