// Tests of the batch normalization kernels (batch_norm.cpp) against a naive
// double-precision reference that follows lib/Evaluator/NormOps.cpp, and of
// their numerics: double-precision statistics, the same bits at any thread
// count and on every ISA.
#include "blocked_test_util.h"
#include "isa_test_util.h"
#include "kernel_test_util.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>

using tidalrt_test::KernelCall;
using tidalrt_test::toBlocked;

namespace {

std::vector<float> randomData(int64_t n, uint32_t seed, float lo = -1.0f,
                              float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v((size_t)n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

int64_t product(const std::vector<int64_t> &d, size_t from = 0) {
  int64_t n = 1;
  for (size_t i = from; i < d.size(); ++i)
    n *= d[i];
  return n;
}

void expectClose(const std::vector<float> &got, const std::vector<double> &ref,
                 const char *what, double tol = 1e-5) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double scale = 1.0;
  for (double r : ref)
    scale = std::max(scale, std::fabs(r));
  int bad = 0;
  for (size_t i = 0; i < ref.size() && bad < 5; ++i)
    if (!(std::fabs(got[i] - ref[i]) <=
          tol * std::fabs(ref[i]) + tol * 0.2 * scale)) {
      ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", expected "
                    << ref[i];
      ++bad;
    }
}

// An input whose channels have different means and spreads.
std::vector<float> channelData(const std::vector<int64_t> &shape,
                               uint32_t seed) {
  std::vector<float> x = randomData(product(shape), seed);
  int64_t c = shape[1], s = product(shape, 2);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t ch = ((int64_t)i / s) % c;
    x[i] = x[i] * (1.0f + 0.5f * (float)ch) + 0.25f * (float)ch - 0.5f;
  }
  return x;
}

struct Stats {
  std::vector<double> mean, var; // biased
};

Stats batchStats(const std::vector<float> &x,
                 const std::vector<int64_t> &shape) {
  int64_t c = shape[1], s = product(shape, 2), m = shape[0] * s;
  Stats st{std::vector<double>(c, 0.0), std::vector<double>(c, 0.0)};
  for (size_t i = 0; i < x.size(); ++i)
    st.mean[((int64_t)i / s) % c] += x[i];
  for (double &v : st.mean)
    v = m ? v / m : 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t ch = ((int64_t)i / s) % c;
    st.var[ch] += (x[i] - st.mean[ch]) * (x[i] - st.mean[ch]);
  }
  for (double &v : st.var)
    v = m ? v / m : 0.0;
  return st;
}

// Short runs (spatial sizes under batch_norm.cpp's kShortRun) and long ones,
// {3, 2, 70, 90} with more elements per channel than one partial sum
// (kPiece) and a ragged tail.
const std::vector<std::vector<int64_t>> kShapes = {
    {2, 3, 4, 5},       {6, 3},        {2, 3, 5},      {2, 3, 2, 2, 3},
    {2, 3, 2, 2, 2, 2}, {8, 16, 8, 8}, {4, 5, 20, 21}, {3, 2, 70, 90}};

void checkInference(const std::vector<int64_t> &shape, double eps,
                    uint32_t seed, bool relu = false) {
  int64_t c = shape[1], s = product(shape, 2);
  std::vector<float> x = channelData(shape, seed),
                     scale = randomData(c, seed + 1, 0.5f, 1.5f),
                     bias = randomData(c, seed + 2),
                     mean = randomData(c, seed + 3),
                     var = randomData(c, seed + 4, 0.1f, 2.0f),
                     y(x.size(), NAN);
  std::vector<double> ref(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t ch = ((int64_t)i / s) % c;
    ref[i] = scale[ch] * (x[i] - (double)mean[ch]) /
                 std::sqrt((double)var[ch] + eps) +
             bias[ch];
    if (relu && !(ref[i] > 0.0))
      ref[i] = 0.0;
  }
  KernelCall call;
  call.f32(shape, x.data())
      .f32({c}, scale.data())
      .f32({c}, bias.data())
      .f32({c}, mean.data())
      .f32({c}, var.data())
      .f32(shape, y.data())
      .attrAbsent()
      .attrAbsent()
      .attrFloat(eps)
      .attrInt(relu ? 1 : 0);
  ASSERT_EQ(call.run(tidalrt_k_batch_norm_inference), "");
  expectClose(y, ref, "batch_norm_inference");
}

void checkTraining(const std::vector<int64_t> &shape, double eps,
                   double momentum, uint32_t seed, bool prepare = true) {
  int64_t c = shape[1], s = product(shape, 2), m = shape[0] * s;
  std::vector<float> x = channelData(shape, seed),
                     scale = randomData(c, seed + 1, 0.5f, 1.5f),
                     bias = randomData(c, seed + 2),
                     runMean = randomData(c, seed + 3),
                     runVar = randomData(c, seed + 4, 0.1f, 2.0f);
  Stats st = batchStats(x, shape);
  std::vector<double> ref(x.size()), refMean(c), refVar(c);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t ch = ((int64_t)i / s) % c;
    ref[i] = scale[ch] * (x[i] - st.mean[ch]) / std::sqrt(st.var[ch] + eps) +
             bias[ch];
  }
  double unbias = m > 1 ? (double)m / (m - 1) : 1.0;
  for (int64_t ch = 0; ch < c; ++ch) {
    refMean[ch] = runMean[ch] * momentum + st.mean[ch] * (1 - momentum);
    refVar[ch] = runVar[ch] * momentum + st.var[ch] * unbias * (1 - momentum);
  }
  std::vector<float> y(x.size(), NAN), newMean(c, NAN), newVar(c, NAN),
      bMean(c, NAN), bVar(c, NAN);
  KernelCall call;
  call.f32(shape, x.data())
      .f32({c}, scale.data())
      .f32({c}, bias.data())
      .f32({c}, runMean.data())
      .f32({c}, runVar.data())
      .f32(shape, y.data())
      .f32({c}, newMean.data())
      .f32({c}, newVar.data())
      .f32({c}, bMean.data())
      .f32({c}, bVar.data())
      .attrAbsent()
      .attrAbsent()
      .attrFloat(eps)
      .attrFloat(momentum)
      .attrInt(0);
  ASSERT_EQ(call.run(tidalrt_k_batch_norm_training, prepare), "");
  expectClose(y, ref, "output", 1e-4);
  expectClose(newMean, refMean, "new_running_mean");
  expectClose(newVar, refVar, "new_running_var");
  expectClose(bMean, st.mean, "batch_mean");
  expectClose(bVar, st.var, "batch_var");
}

void checkBackward(const std::vector<int64_t> &shape, double eps,
                   uint32_t seed) {
  int64_t c = shape[1], s = product(shape, 2);
  double m = (double)(shape[0] * s);
  std::vector<float> x = channelData(shape, seed),
                     dy = randomData(product(shape), seed + 1),
                     scale = randomData(c, seed + 2, 0.5f, 1.5f);
  Stats st = batchStats(x, shape);
  std::vector<float> mean(st.mean.begin(), st.mean.end()),
      var(st.var.begin(), st.var.end());
  std::vector<double> inv(c), gBias(c, 0.0), gScale(c, 0.0), ref(x.size());
  for (int64_t ch = 0; ch < c; ++ch)
    inv[ch] = 1.0 / std::sqrt((double)var[ch] + eps);
  auto xhat = [&](size_t i) {
    int64_t ch = ((int64_t)i / s) % c;
    return (x[i] - (double)mean[ch]) * inv[ch];
  };
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t ch = ((int64_t)i / s) % c;
    gBias[ch] += dy[i];
    gScale[ch] += dy[i] * xhat(i);
  }
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t ch = ((int64_t)i / s) % c;
    ref[i] = scale[ch] * inv[ch] *
             (dy[i] - gBias[ch] / m - xhat(i) * gScale[ch] / m);
  }
  std::vector<float> dx(x.size(), NAN), dScale(c, NAN), dBias(c, NAN);
  KernelCall call;
  call.f32(shape, dy.data())
      .f32(shape, x.data())
      .f32({c}, scale.data())
      .f32({c}, mean.data())
      .f32({c}, var.data())
      .f32(shape, dx.data())
      .f32({c}, dScale.data())
      .f32({c}, dBias.data())
      .attrFloat(eps);
  ASSERT_EQ(call.run(tidalrt_k_batch_norm_backward), "");
  expectClose(dx, ref, "grad_input", 1e-4);
  expectClose(dScale, gScale, "grad_scale", 1e-4);
  expectClose(dBias, gBias, "grad_bias", 1e-4);
}

} // namespace

TEST(BatchNorm, Inference) {
  uint32_t seed = 1;
  for (const auto &shape : kShapes) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    checkInference(shape, 1e-5, seed += 10);
    checkInference(shape, 1e-2, seed += 10);
  }
}

// relu = true (tidal-fuse-epilogues): max(y, 0) in the normalization.
TEST(BatchNorm, InferenceFusedRelu) {
  uint32_t seed = 3;
  for (const auto &shape : kShapes) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    checkInference(shape, 1e-5, seed += 10, /*relu=*/true);
  }
}

TEST(BatchNorm, Training) {
  uint32_t seed = 100;
  for (const auto &shape : kShapes) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    checkTraining(shape, 1e-5, 0.9, seed += 10);
    checkTraining(shape, 1e-3, 0.7, seed += 10);
  }
}

TEST(BatchNorm, TrainingOneElementPerChannel) {
  // M = 1: the running variance takes the (zero) biased variance.
  checkTraining({1, 4}, 1e-5, 0.9, 200);
}

TEST(BatchNorm, TrainingWithoutPreparation) {
  checkTraining({4, 3, 3, 3}, 1e-5, 0.9, 210, /*prepare=*/false);
}

TEST(BatchNorm, TrainingEmptyBatch) {
  std::vector<float> x(1), scale = {1, 2}, bias = {0, 0}, rm = {1.0f, -2.0f},
                           rv = {3.0f, 4.0f}, y(1), nm(2, NAN), nv(2, NAN),
                           bm(2, NAN), bv(2, NAN);
  KernelCall call;
  call.f32({0, 2, 3}, x.data())
      .f32({2}, scale.data())
      .f32({2}, bias.data())
      .f32({2}, rm.data())
      .f32({2}, rv.data())
      .f32({0, 2, 3}, y.data())
      .f32({2}, nm.data())
      .f32({2}, nv.data())
      .f32({2}, bm.data())
      .f32({2}, bv.data())
      .attrAbsent()
      .attrAbsent()
      .attrFloat(1e-5)
      .attrFloat(0.5)
      .attrInt(0);
  ASSERT_EQ(call.run(tidalrt_k_batch_norm_training), "");
  EXPECT_EQ(nm, (std::vector<float>{0.5f, -1.0f}));
  EXPECT_EQ(nv, (std::vector<float>{1.5f, 2.0f}));
  EXPECT_EQ(bm, (std::vector<float>{0.0f, 0.0f}));
  EXPECT_EQ(bv, (std::vector<float>{0.0f, 0.0f}));
}

TEST(BatchNorm, Backward) {
  uint32_t seed = 300;
  for (const auto &shape : kShapes) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    checkBackward(shape, 1e-5, seed += 10);
    checkBackward(shape, 1e-3, seed += 10);
  }
}

TEST(BatchNorm, Errors) {
  std::vector<double> x(24), p(3);
  KernelCall f64;
  f64.tensor(TIDALRT_ELEMENT_TYPE_F64, {2, 3, 4}, x.data());
  for (int i = 0; i < 4; ++i)
    f64.tensor(TIDALRT_ELEMENT_TYPE_F64, {3}, p.data());
  f64.tensor(TIDALRT_ELEMENT_TYPE_F64, {2, 3, 4}, x.data())
      .attrAbsent()
      .attrAbsent()
      .attrFloat(1e-5)
      .attrInt(0);
  EXPECT_EQ(f64.run(tidalrt_k_batch_norm_inference),
            "UNSUPPORTED: batch_norm_inference (op 0): input has element type "
            "float64; only float32 is supported");

  std::vector<float> xf(24), pf(4), yf(24);
  KernelCall wrong;
  wrong.f32({2, 3, 4}, xf.data());
  for (int i = 0; i < 4; ++i)
    wrong.f32({i == 2 ? 4 : 3}, pf.data());
  wrong.f32({2, 3, 4}, yf.data())
      .attrAbsent()
      .attrAbsent()
      .attrFloat(1e-5)
      .attrInt(0);
  EXPECT_EQ(wrong.run(tidalrt_k_batch_norm_inference),
            "INVALID_ARGUMENT: batch_norm_inference (op 0): per-channel tensor "
            "3 has 4 elements, expected 3");
}

namespace {

// Everything a training step and its backward write, for bitwise checks.
struct StepResults {
  std::vector<float> y, newMean, newVar, mean, var, dx, dScale, dBias;
  bool operator==(const StepResults &o) const {
    auto same = [](const std::vector<float> &a, const std::vector<float> &b) {
      return a.size() == b.size() &&
             std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
    };
    return same(y, o.y) && same(newMean, o.newMean) && same(newVar, o.newVar) &&
           same(mean, o.mean) && same(var, o.var) && same(dx, o.dx) &&
           same(dScale, o.dScale) && same(dBias, o.dBias);
  }
};

// Training forward then backward on `x` and `dy` (dense, or channel-blocked
// as given: the data is used as laid out).
StepResults step(const std::vector<int64_t> &shape, bool blocked,
                 std::vector<float> &x, std::vector<float> &dy) {
  int64_t c = shape[1];
  std::vector<float> scale = randomData(c, 7, 0.5f, 1.5f),
                     bias = randomData(c, 8), rm(c, 0.0f), rv(c, 1.0f);
  StepResults r;
  r.y.assign(x.size(), NAN);
  r.newMean.assign(c, NAN);
  r.newVar.assign(c, NAN);
  r.mean.assign(c, NAN);
  r.var.assign(c, NAN);
  auto data = [&](KernelCall &call, float *p) -> KernelCall & {
    return blocked ? call.blocked(shape, p) : call.f32(shape, p);
  };
  KernelCall f;
  data(f, x.data())
      .f32({c}, scale.data())
      .f32({c}, bias.data())
      .f32({c}, rm.data())
      .f32({c}, rv.data());
  data(f, r.y.data())
      .f32({c}, r.newMean.data())
      .f32({c}, r.newVar.data())
      .f32({c}, r.mean.data())
      .f32({c}, r.var.data())
      .attrAbsent()
      .attrAbsent()
      .attrFloat(1e-5)
      .attrFloat(0.9)
      .attrInt(0);
  EXPECT_EQ(f.run(tidalrt_k_batch_norm_training), "");
  r.dx.assign(x.size(), NAN);
  r.dScale.assign(c, NAN);
  r.dBias.assign(c, NAN);
  KernelCall b;
  data(b, dy.data());
  data(b, x.data())
      .f32({c}, scale.data())
      .f32({c}, r.mean.data())
      .f32({c}, r.var.data());
  data(b, r.dx.data())
      .f32({c}, r.dScale.data())
      .f32({c}, r.dBias.data())
      .attrFloat(1e-5);
  EXPECT_EQ(b.run(tidalrt_k_batch_norm_backward), "");
  return r;
}

// Large enough to run in parallel (over TIDALRT_DEFAULT_PARALLEL_GRAIN
// elements): long runs with several partial sums per channel, and short
// runs. C is a multiple of 16 so that either layout takes them.
const std::vector<std::vector<int64_t>> kParallelShapes = {{8, 32, 40, 30},
                                                           {64, 256, 2, 2}};

} // namespace

// The per-channel sums are split by the shape alone, so the thread count
// changes no bit (SPEC section 5: same target, same thread count is the
// contract; tidal keeps bits across thread counts too).
TEST(BatchNorm, ThreadCountDoesNotChangeBits) {
  int threads = omp_get_max_threads();
  for (const auto &shape : kParallelShapes)
    for (bool blocked : {false, true}) {
      SCOPED_TRACE(::testing::PrintToString(shape) +
                   (blocked ? " blocked" : " dense"));
      std::vector<float> x = channelData(shape, 11),
                         dy = randomData(product(shape), 12);
      omp_set_num_threads(1);
      StepResults one = step(shape, blocked, x, dy);
      omp_set_num_threads(std::max(3, threads));
      StepResults many = step(shape, blocked, x, dy);
      omp_set_num_threads(threads);
      EXPECT_TRUE(one == many);
    }
}

// The AVX2 loops add in the scalar loops' order and round alike.
TEST(BatchNorm, EveryIsaGivesTheSameBits) {
  for (const auto &shape : kParallelShapes)
    for (bool blocked : {false, true}) {
      SCOPED_TRACE(::testing::PrintToString(shape) +
                   (blocked ? " blocked" : " dense"));
      std::vector<float> x = channelData(shape, 21),
                         dy = randomData(product(shape), 22);
      std::vector<StepResults> results;
      tidalrt_test::forEachIsa(
          [&] { results.push_back(step(shape, blocked, x, dy)); });
      for (size_t i = 1; i < results.size(); ++i)
        EXPECT_TRUE(results[i] == results[0]) << "ISA " << i << " vs scalar";
    }
}

// Statistics in double: a channel far from zero with a small spread keeps
// its variance (float sums of x and x^2 would lose it), and gradient sums
// that cancel to nearly zero (the bias gradient of a normalized layer) come
// out as the exact sum rounded once.
TEST(BatchNorm, StatisticsAndGradientSumsInDouble) {
  const std::vector<int64_t> shape = {16, 16, 32, 32};
  int64_t c = shape[1], s = product(shape, 2), m = shape[0] * s;
  std::vector<float> x = randomData(product(shape), 31);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 1000.0f + 0.01f * x[i] * (float)(1 + ((int64_t)i / s) % c);
  // dy: per channel, values of size 1 whose sum nearly cancels.
  std::vector<float> dy = randomData(product(shape), 32);
  std::vector<double> sum(c, 0.0), abs(c, 0.0);
  for (size_t i = 0; i < dy.size(); ++i)
    sum[((int64_t)i / s) % c] += dy[i];
  for (size_t i = 0; i < dy.size(); ++i) {
    int64_t ch = ((int64_t)i / s) % c;
    dy[i] -= (float)(sum[ch] / m);
  }
  Stats st = batchStats(x, shape);
  std::vector<double> refBias(c, 0.0);
  for (size_t i = 0; i < dy.size(); ++i) {
    int64_t ch = ((int64_t)i / s) % c;
    refBias[ch] += dy[i];
    abs[ch] += std::fabs(dy[i]);
  }
  for (bool blocked : {false, true}) {
    SCOPED_TRACE(blocked ? "blocked" : "dense");
    if (blocked && c % tidalrt_channel_block())
      continue;
    std::vector<float> xs = x, dys = dy;
    if (blocked) {
      xs = toBlocked(x, shape);
      dys = toBlocked(dy, shape);
    }
    StepResults r = step(shape, blocked, xs, dys);
    for (int64_t ch = 0; ch < c; ++ch) {
      EXPECT_NEAR(r.mean[ch], st.mean[ch], 1000.0 * FLT_EPSILON) << ch;
      EXPECT_NEAR(r.var[ch], st.var[ch], 1e-6 * st.var[ch]) << ch;
      // The exact sum is ~1e-5 of the terms' magnitudes; a float sum
      // would be off by more than that.
      EXPECT_LT(std::fabs(refBias[ch]), 1e-4 * abs[ch]) << ch;
      EXPECT_NEAR(r.dBias[ch], refBias[ch],
                  2 * FLT_EPSILON * std::fabs(refBias[ch]) + 1e-12 * abs[ch])
          << ch;
    }
  }
}
