// Tests of the oneDNN convolution kernels against a naive double-precision
// reference that follows lib/Evaluator/ConvPoolOps.cpp.
#include "kernel_test_util.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <omp.h>
#include <random>
#include <thread>

using tidalrt_test::KernelCall;

namespace {

std::vector<float> randomData(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
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
                 const char *what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double scale = 1.0;
  for (double r : ref)
    scale = std::max(scale, std::fabs(r));
  int bad = 0;
  for (size_t i = 0; i < ref.size() && bad < 5; ++i)
    if (!(std::fabs(got[i] - ref[i]) <=
          1e-5 * std::fabs(ref[i]) + 2e-6 * scale)) {
      ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", expected "
                    << ref[i];
      ++bad;
    }
}

struct ConvCase {
  std::vector<int64_t> x, w; // input [N, C, D...], weight [M, C/g, K...]
  std::vector<int64_t> strides, pads, dilations;
  int64_t group = 1;
  bool bias = false;

  int k() const { return (int)x.size() - 2; }
  std::vector<int64_t> out() const {
    std::vector<int64_t> o = {x[0], w[0]};
    for (int i = 0; i < k(); ++i) {
      int64_t ext = dilations[i] * (w[2 + i] - 1) + 1;
      o.push_back((x[2 + i] + pads[i] + pads[k() + i] - ext) / strides[i] + 1);
    }
    return o;
  }
};

// f(inIndex, weightIndex, outIndex) for every multiply-add.
template <typename F> void forEachConvTerm(const ConvCase &c, F f) {
  std::vector<int64_t> out = c.out();
  int k = c.k();
  int64_t n = c.x[0], ch = c.x[1], m = c.w[0], cg = ch / c.group,
          mg = m / c.group;
  int64_t inSp = product(c.x, 2), outSp = product(out, 2),
          kSp = product(c.w, 2);
  std::vector<int64_t> o(k), kk(k);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t mm = 0; mm < m; ++mm)
      for (int64_t os = 0; os < outSp; ++os) {
        int64_t r = os;
        for (int d = k; d-- > 0;) {
          o[d] = r % out[2 + d];
          r /= out[2 + d];
        }
        for (int64_t cc = 0; cc < cg; ++cc)
          for (int64_t ks = 0; ks < kSp; ++ks) {
            int64_t q = ks;
            for (int d = k; d-- > 0;) {
              kk[d] = q % c.w[2 + d];
              q /= c.w[2 + d];
            }
            int64_t flat = 0;
            bool inside = true;
            for (int d = 0; d < k; ++d) {
              int64_t i =
                  o[d] * c.strides[d] - c.pads[d] + kk[d] * c.dilations[d];
              inside = inside && i >= 0 && i < c.x[2 + d];
              flat = flat * c.x[2 + d] + i;
            }
            if (!inside)
              continue;
            int64_t grp = mm / mg;
            f((b * ch + grp * cg + cc) * inSp + flat, (mm * cg + cc) * kSp + ks,
              (b * m + mm) * outSp + os);
          }
      }
}

KernelCall &convAttrs(KernelCall &call, const ConvCase &c) {
  return call.attrInts(c.dilations)
      .attrInt(c.group)
      .attrInts(c.pads)
      .attrInts(c.strides);
}

// Runs the forward and both backwards of `c` and compares them.
void checkConv(const ConvCase &c, uint32_t seed, bool prepare = true) {
  std::vector<int64_t> yShape = c.out();
  std::vector<float> x = randomData(product(c.x), seed),
                     w = randomData(product(c.w), seed + 1),
                     b = randomData(c.w[0], seed + 2),
                     dy = randomData(product(yShape), seed + 3);
  // Forward.
  std::vector<double> ref((size_t)product(yShape), 0.0);
  int64_t outSp = product(yShape, 2);
  if (c.bias)
    for (size_t i = 0; i < ref.size(); ++i)
      ref[i] = b[(i / outSp) % c.w[0]];
  forEachConvTerm(c, [&](int64_t i, int64_t wi, int64_t o) {
    ref[o] += (double)x[i] * w[wi];
  });
  std::vector<float> y(ref.size(), NAN);
  KernelCall fwd;
  fwd.f32(c.x, x.data()).f32(c.w, w.data());
  if (c.bias)
    fwd.f32({c.w[0]}, b.data());
  else
    fwd.absent();
  fwd.f32(yShape, y.data());
  convAttrs(fwd, c);
  ASSERT_EQ(fwd.run(tidalrt_k_conv, prepare), "");
  expectClose(y, ref, "conv");

  // Backward data.
  std::vector<double> dxRef(x.size(), 0.0);
  forEachConvTerm(c, [&](int64_t i, int64_t wi, int64_t o) {
    dxRef[i] += (double)dy[o] * w[wi];
  });
  std::vector<float> dx(x.size(), NAN);
  KernelCall bd;
  bd.f32(yShape, dy.data()).f32(c.w, w.data()).f32(c.x, dx.data());
  convAttrs(bd, c);
  ASSERT_EQ(bd.run(tidalrt_k_conv_backward_data, prepare), "");
  expectClose(dx, dxRef, "conv_backward_data");

  // Backward weights.
  std::vector<double> dwRef(w.size(), 0.0);
  forEachConvTerm(c, [&](int64_t i, int64_t wi, int64_t o) {
    dwRef[wi] += (double)dy[o] * x[i];
  });
  std::vector<float> dw(w.size(), NAN);
  KernelCall bw;
  bw.f32(yShape, dy.data()).f32(c.x, x.data()).f32(c.w, dw.data());
  convAttrs(bw, c);
  ASSERT_EQ(bw.run(tidalrt_k_conv_backward_weights, prepare), "");
  expectClose(dw, dwRef, "conv_backward_weights");
}

} // namespace

TEST(DnnlConv, Basic2D) {
  checkConv({{2, 3, 7, 7}, {4, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true},
            1);
  checkConv(
      {{2, 3, 7, 7}, {4, 3, 3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, false}, 2);
}

TEST(DnnlConv, StridesAsymmetricPadsDilations) {
  checkConv({{2, 4, 9, 8}, {5, 4, 3, 2}, {2, 1}, {0, 1, 2, 0}, {2, 1}, 1, true},
            3);
  checkConv(
      {{1, 2, 11, 10}, {3, 2, 3, 3}, {3, 2}, {2, 0, 1, 1}, {2, 3}, 1, false},
      4);
  // A stride that leaves the last rows unused (floor).
  checkConv({{2, 3, 6, 7}, {4, 3, 3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, true},
            5);
}

TEST(DnnlConv, Groups) {
  checkConv({{2, 4, 6, 6}, {6, 2, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2, true},
            6);
  // Depthwise, with a channel multiplier of 2 and a stride.
  checkConv(
      {{2, 8, 9, 9}, {16, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 8, true}, 7);
  checkConv(
      {{1, 6, 8, 8}, {6, 1, 5, 5}, {1, 1}, {2, 2, 2, 2}, {1, 1}, 6, false}, 8);
}

TEST(DnnlConv, OneAndThreeSpatialDims) {
  checkConv({{3, 4, 20}, {5, 4, 3}, {2}, {1, 2}, {2}, 1, true}, 9);
  checkConv({{2, 4, 12}, {4, 2, 5}, {1}, {2, 2}, {1}, 2, false}, 10);
  checkConv({{2, 3, 5, 6, 7},
             {4, 3, 3, 2, 3},
             {1, 2, 1},
             {1, 0, 1, 1, 1, 0},
             {1, 1, 2},
             1,
             true},
            11);
}

TEST(DnnlConv, LargerChannels) {
  checkConv(
      {{4, 16, 12, 12}, {32, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true},
      12);
  checkConv(
      {{4, 32, 8, 8}, {16, 32, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, false},
      13);
}

TEST(DnnlConv, WithoutPreparation) {
  checkConv({{2, 3, 7, 7}, {4, 3, 3, 3}, {2, 2}, {1, 0, 1, 0}, {1, 1}, 1, true},
            14, /*prepare=*/false);
}

TEST(DnnlConv, EmptyBatchGivesZeroWeightGradient) {
  ConvCase c{{0, 3, 5, 5}, {4, 3, 3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1,
             false};
  std::vector<float> x(1), dy(1), dw(4 * 3 * 9, NAN);
  KernelCall bw;
  bw.f32(c.out(), dy.data()).f32(c.x, x.data()).f32(c.w, dw.data());
  convAttrs(bw, c);
  ASSERT_EQ(bw.run(tidalrt_k_conv_backward_weights), "");
  for (float v : dw)
    EXPECT_EQ(v, 0.0f);
}

TEST(DnnlConv, ZeroInputChannelsGiveBias) {
  ConvCase c{{1, 0, 3, 3}, {2, 0, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true};
  std::vector<float> x(1), w(1), b = {0.5f, -2.0f}, y(18, NAN);
  KernelCall fwd;
  fwd.f32(c.x, x.data()).f32(c.w, w.data()).f32({2}, b.data());
  fwd.f32(c.out(), y.data());
  convAttrs(fwd, c);
  ASSERT_EQ(fwd.run(tidalrt_k_conv), "");
  for (int i = 0; i < 18; ++i)
    EXPECT_EQ(y[i], i < 9 ? 0.5f : -2.0f);
}

TEST(DnnlConv, RejectsFloat64) {
  std::vector<double> x(2 * 3 * 5 * 5), w(4 * 3 * 9), y(2 * 4 * 9);
  KernelCall call;
  call.tensor(TIDALRT_ELEMENT_TYPE_F64, {2, 3, 5, 5}, x.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {4, 3, 3, 3}, w.data())
      .absent()
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {2, 4, 3, 3}, y.data())
      .attrInts({1, 1})
      .attrInt(1)
      .attrInts({0, 0, 0, 0})
      .attrInts({1, 1});
  std::string err = call.run(tidalrt_k_conv);
  EXPECT_EQ(err.rfind("UNSUPPORTED: conv (op 0): input has element type "
                      "float64",
                      0),
            0u)
      << err;
}

TEST(DnnlConv, RejectsMismatchedChannels) {
  std::vector<float> x(2 * 3 * 5 * 5), w(4 * 2 * 9), y(2 * 4 * 9);
  KernelCall call;
  call.f32({2, 3, 5, 5}, x.data())
      .f32({4, 2, 3, 3}, w.data())
      .absent()
      .f32({2, 4, 3, 3}, y.data())
      .attrInts({1, 1})
      .attrInt(1)
      .attrInts({0, 0, 0, 0})
      .attrInts({1, 1});
  std::string err = call.run(tidalrt_k_conv);
  EXPECT_EQ(
      err.rfind("INVALID_ARGUMENT: conv (op 0): channels do not match", 0), 0u)
      << err;
}

// Primitives are built once per call site: a 64x3x32x32 3x3 convolution
// takes milliseconds per call on a prepared context.
TEST(DnnlConv, PreparedForwardIsFast) {
  ConvCase c{
      {64, 3, 32, 32}, {16, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true};
  std::vector<int64_t> yShape = c.out();
  std::vector<float> x = randomData(product(c.x), 20),
                     w = randomData(product(c.w), 21), b = randomData(16, 22),
                     y((size_t)product(yShape));
  KernelCall call;
  call.f32(c.x, x.data()).f32(c.w, w.data()).f32({16}, b.data());
  call.f32(yShape, y.data());
  convAttrs(call, c);
  std::vector<int64_t> desc = call.descriptor();
  void *buffers[] = {x.data(), w.data(), b.data(), y.data()};
  tidalrt_context_options_t options = {1, 0};
  tidalrt_context_t *ctx = nullptr;
  ASSERT_EQ(tidalrt_context_create(&options, &ctx), nullptr);
  tidalrt_context_begin_prepare(ctx);
  ASSERT_EQ(tidalrt_k_conv(ctx, desc.data(), buffers), nullptr);
  ASSERT_EQ(tidalrt_context_end_prepare(ctx), nullptr);
  ASSERT_EQ(tidalrt_k_conv(ctx, desc.data(), buffers), nullptr); // warm up
  // The fastest of a few calls, so that a busy machine does not fail it.
  double ms = 1e9;
  for (int i = 0; i < 10; ++i) {
    auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(tidalrt_k_conv(ctx, desc.data(), buffers), nullptr);
    ms = std::min(ms, std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  }
  tidalrt_context_free(ctx);
  printf("conv 64x3x32x32 -> 64x16x32x32 (3x3): %.3f ms per call\n", ms);
  EXPECT_LT(ms, 50.0);
}

// The weight gradient reduces over the batch across threads; two runs give
// the same bits.
TEST(DnnlConv, BackwardWeightsIsDeterministic) {
  ConvCase c{
      {32, 16, 16, 16}, {32, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, false};
  std::vector<float> x = randomData(product(c.x), 30),
                     dy = randomData(product(c.out()), 31);
  std::vector<float> first, dw((size_t)product(c.w));
  for (int run = 0; run < 3; ++run) {
    KernelCall bw;
    bw.f32(c.out(), dy.data()).f32(c.x, x.data()).f32(c.w, dw.data());
    convAttrs(bw, c);
    ASSERT_EQ(bw.run(tidalrt_k_conv_backward_weights), "");
    if (run == 0)
      first = dw;
    else
      EXPECT_EQ(0, memcmp(first.data(), dw.data(), dw.size() * sizeof(float)));
  }
}

// --threads auto changes the team size between steps: each thread count
// gets primitives planned for it (tidalrt_context_set_threads), prepared
// once, and the count holds on whichever thread calls the kernels.
TEST(DnnlConv, EachThreadCountHasItsOwnPrimitives) {
  ConvCase c{
      {16, 8, 12, 12}, {16, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, false};
  std::vector<float> x = randomData(product(c.x), 40),
                     dy = randomData(product(c.out()), 41);
  std::vector<float> dw((size_t)product(c.w));
  KernelCall bw;
  bw.f32(c.out(), dy.data()).f32(c.x, x.data()).f32(c.w, dw.data());
  convAttrs(bw, c);
  std::vector<int64_t> desc = bw.descriptor();
  void *buffers[] = {dy.data(), x.data(), dw.data()};
  tidalrt_context_options_t options = {1, 0};
  tidalrt_context_t *ctx = nullptr;
  ASSERT_EQ(tidalrt_context_create(&options, &ctx), nullptr);
  auto prepare = [&] {
    tidalrt_context_begin_prepare(ctx);
    ASSERT_EQ(tidalrt_k_conv_backward_weights(ctx, desc.data(), buffers),
              nullptr);
    ASSERT_EQ(tidalrt_context_end_prepare(ctx), nullptr);
  };
  tidalrt_status_t bad = tidalrt_context_set_threads(ctx, -1);
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(tidalrt_status_code(bad), TIDALRT_INVALID_ARGUMENT);
  tidalrt_status_free(bad);

  int before = omp_get_max_threads();
  ASSERT_EQ(tidalrt_context_set_threads(ctx, 2), nullptr);
  EXPECT_EQ(tidalrt_context_prepared(ctx), 0);
  prepare();
  EXPECT_EQ(tidalrt_context_prepared(ctx), 1);
  ASSERT_EQ(tidalrt_k_conv_backward_weights(ctx, desc.data(), buffers),
            nullptr);
  std::vector<float> two = dw;

  ASSERT_EQ(tidalrt_context_set_threads(ctx, 1), nullptr);
  EXPECT_EQ(tidalrt_context_threads(ctx), 1);
  EXPECT_EQ(tidalrt_context_prepared(ctx), 0);
  prepare();
  // From another thread, as a device's stream worker calls kernels.
  int workerThreads = 0;
  std::thread worker([&] {
    omp_set_num_threads(3);
    EXPECT_EQ(tidalrt_k_conv_backward_weights(ctx, desc.data(), buffers),
              nullptr);
    workerThreads = omp_get_max_threads();
  });
  worker.join();
  EXPECT_EQ(workerThreads, 1);
  std::vector<float> one = dw;
  double diff = 0, norm = 0;
  for (size_t i = 0; i < dw.size(); ++i) {
    diff += (one[i] - two[i]) * (one[i] - two[i]);
    norm += two[i] * two[i];
  }
  EXPECT_LE(std::sqrt(diff), 1e-5 * std::sqrt(norm));

  // Back at two threads: the primitives from before, the same bits.
  ASSERT_EQ(tidalrt_context_set_threads(ctx, 2), nullptr);
  EXPECT_EQ(tidalrt_context_prepared(ctx), 1);
  ASSERT_EQ(tidalrt_k_conv_backward_weights(ctx, desc.data(), buffers),
            nullptr);
  EXPECT_EQ(0, memcmp(two.data(), dw.data(), dw.size() * sizeof(float)));
  EXPECT_EQ(omp_get_max_threads(), 2);
  tidalrt_context_free(ctx);
  omp_set_num_threads(before);
}
