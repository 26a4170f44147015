// Channel-blocked tensors (tidalrt.h, "Tensor layouts"): convolutions,
// batch normalization and element-wise kernels give on blocked tensors what
// they give on dense ones, and kernels that cannot take them refuse them.
#include "blocked_test_util.h"
#include "kernel_test_util.h"

#include <gtest/gtest.h>

#include <cstring>

#include <cmath>
#include <random>

using tidalrt_test::KernelCall;
using tidalrt_test::toBlocked;
using tidalrt_test::toDense;

namespace {

std::vector<float> randomData(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

size_t count(const std::vector<int64_t> &d) {
  size_t n = 1;
  for (int64_t v : d)
    n *= (size_t)v;
  return n;
}

void expectNear(const std::vector<float> &got, const std::vector<float> &want,
                const char *what, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol * (1.0f + std::fabs(want[i])))) {
      ADD_FAILURE() << what << "[" << i << "]: " << got[i] << " vs " << want[i];
      ++bad;
    }
}

KernelCall &convAttrs(KernelCall &call) {
  return call.attrInts({1, 1})
      .attrInt(1)
      .attrInts({1, 1, 1, 1})
      .attrInts({1, 1});
}

const std::vector<int64_t> kX = {2, 32, 6, 5}, kW = {16, 32, 3, 3},
                           kY = {2, 16, 6, 5};

TEST(ChannelBlocked, BlockIsEightOrSixteen) {
  int b = tidalrt_channel_block();
  EXPECT_TRUE(b == 8 || b == 16) << b;
  EXPECT_EQ(b, tidalrt_channel_block());
}

TEST(ChannelBlocked, ConvolutionForwardAndBackward) {
  std::vector<float> x = randomData(count(kX), 1), w = randomData(count(kW), 2),
                     dy = randomData(count(kY), 3);
  std::vector<float> xb = toBlocked(x, kX), dyb = toBlocked(dy, kY);

  std::vector<float> y(count(kY)), yb(count(kY));
  KernelCall dense, blocked;
  dense.f32(kX, x.data()).f32(kW, w.data()).absent().f32(kY, y.data());
  blocked.blocked(kX, xb.data())
      .f32(kW, w.data())
      .absent()
      .blocked(kY, yb.data());
  ASSERT_EQ(convAttrs(dense).run(tidalrt_k_conv), "");
  ASSERT_EQ(convAttrs(blocked).run(tidalrt_k_conv), "");
  expectNear(toDense(yb, kY), y, "conv");

  std::vector<float> dx(count(kX)), dxb(count(kX));
  KernelCall bd, bdb;
  bd.f32(kY, dy.data()).f32(kW, w.data()).f32(kX, dx.data());
  bdb.blocked(kY, dyb.data()).f32(kW, w.data()).blocked(kX, dxb.data());
  ASSERT_EQ(convAttrs(bd).run(tidalrt_k_conv_backward_data), "");
  ASSERT_EQ(convAttrs(bdb).run(tidalrt_k_conv_backward_data), "");
  expectNear(toDense(dxb, kX), dx, "conv_backward_data");

  // Mixed: a blocked gradient with a dense input.
  std::vector<float> dw(count(kW)), dwb(count(kW));
  KernelCall bw, bwb;
  bw.f32(kY, dy.data()).f32(kX, x.data()).f32(kW, dw.data());
  bwb.blocked(kY, dyb.data()).f32(kX, x.data()).f32(kW, dwb.data());
  ASSERT_EQ(convAttrs(bw).run(tidalrt_k_conv_backward_weights), "");
  ASSERT_EQ(convAttrs(bwb).run(tidalrt_k_conv_backward_weights), "");
  expectNear(dwb, dw, "conv_backward_weights");
}

TEST(ChannelBlocked, BatchNormTrainingAndBackward) {
  const std::vector<int64_t> shape = {4, 32, 5, 3};
  int64_t c = shape[1];
  std::vector<float> x = randomData(count(shape), 4),
                     dy = randomData(count(shape), 5), scale = randomData(c, 6),
                     bias = randomData(c, 7), rm(c, 0.0f), rv(c, 1.0f);
  std::vector<float> xb = toBlocked(x, shape), dyb = toBlocked(dy, shape);

  struct Out {
    std::vector<float> y, nm, nv, mean, var;
  };
  // clip: a fused clip (ReLU6's form) to [kClipMin, kClipMax].
  const float kClipMin = -0.5f, kClipMax = 0.25f;
  auto training = [&](bool inBlocked, bool outBlocked, Out &o,
                      bool relu = false, bool clip = false) {
    o = Out{std::vector<float>(count(shape)), std::vector<float>(c),
            std::vector<float>(c), std::vector<float>(c),
            std::vector<float>(c)};
    KernelCall call;
    if (inBlocked)
      call.blocked(shape, xb.data());
    else
      call.f32(shape, x.data());
    call.f32({c}, scale.data())
        .f32({c}, bias.data())
        .f32({c}, rm.data())
        .f32({c}, rv.data());
    if (outBlocked)
      call.blocked(shape, o.y.data());
    else
      call.f32(shape, o.y.data());
    call.f32({c}, o.nm.data())
        .f32({c}, o.nv.data())
        .f32({c}, o.mean.data())
        .f32({c}, o.var.data());
    if (clip)
      call.attrFloat(kClipMax).attrFloat(kClipMin);
    else
      call.attrAbsent().attrAbsent();
    call.attrFloat(1e-5).attrFloat(0.9).attrInt(relu ? 1 : 0);
    return call.run(tidalrt_k_batch_norm_training);
  };
  Out dense, blocked, mixed;
  ASSERT_EQ(training(false, false, dense), "");
  ASSERT_EQ(training(true, true, blocked), "");
  ASSERT_EQ(training(true, false, mixed), "");
  expectNear(toDense(blocked.y, shape), dense.y, "output");
  expectNear(mixed.y, dense.y, "output (dense)");
  expectNear(blocked.mean, dense.mean, "batch_mean");
  expectNear(blocked.var, dense.var, "batch_var");
  expectNear(blocked.nv, dense.nv, "new_running_var");

  // A fused ReLU (tidal-fuse-epilogues): the unfused output through the
  // relu kernel's formula, bit for bit, in both layouts, with the same
  // statistics.
  auto relu = [](std::vector<float> v) {
    for (float &x : v)
      x = x > 0.0f ? x : 0.0f;
    return v;
  };
  auto sameBits = [](const std::vector<float> &a, const std::vector<float> &b,
                     const char *what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    size_t differ = 0;
    for (size_t i = 0; i < a.size(); ++i)
      differ += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
    EXPECT_EQ(differ, 0u) << what;
  };
  Out fusedDense, fusedBlocked;
  ASSERT_EQ(training(false, false, fusedDense, true), "");
  ASSERT_EQ(training(true, true, fusedBlocked, true), "");
  sameBits(fusedDense.y, relu(dense.y), "fused output (dense)");
  sameBits(toDense(fusedBlocked.y, shape), relu(toDense(blocked.y, shape)),
           "fused output (blocked)");
  sameBits(fusedDense.mean, dense.mean, "fused batch_mean");
  sameBits(fusedDense.nv, dense.nv, "fused new_running_var");
  sameBits(fusedBlocked.var, blocked.var, "fused batch_var (blocked)");

  // A fused clip (ReLU6): the unfused output through the clip kernel
  // itself, bit for bit, in both layouts.
  auto clipped = [&](std::vector<float> v) {
    std::vector<float> out(v.size());
    KernelCall call;
    call.f32({(int64_t)v.size()}, v.data())
        .f32({(int64_t)v.size()}, out.data())
        .attrFloat(kClipMax)
        .attrFloat(kClipMin);
    EXPECT_EQ(call.run(tidalrt_k_clip), "");
    return out;
  };
  Out clipDense, clipBlocked;
  ASSERT_EQ(training(false, false, clipDense, false, true), "");
  ASSERT_EQ(training(true, true, clipBlocked, false, true), "");
  sameBits(clipDense.y, clipped(dense.y), "fused clip output (dense)");
  sameBits(toDense(clipBlocked.y, shape), clipped(toDense(blocked.y, shape)),
           "fused clip output (blocked)");
  sameBits(clipBlocked.var, blocked.var, "fused clip batch_var (blocked)");
  EXPECT_NE(clipped(dense.y), dense.y) << "the bounds cut nothing";
  // clip_min without clip_max is malformed (the verifier's rule).
  {
    Out half;
    KernelCall call;
    call.f32(shape, x.data())
        .f32({c}, scale.data())
        .f32({c}, bias.data())
        .f32({c}, rm.data())
        .f32({c}, rv.data());
    half.y.resize(count(shape));
    half.nm.resize(c);
    half.nv.resize(c);
    half.mean.resize(c);
    half.var.resize(c);
    call.f32(shape, half.y.data())
        .f32({c}, half.nm.data())
        .f32({c}, half.nv.data())
        .f32({c}, half.mean.data())
        .f32({c}, half.var.data())
        .attrAbsent()
        .attrFloat(kClipMin)
        .attrFloat(1e-5)
        .attrFloat(0.9)
        .attrInt(0);
    EXPECT_EQ(call.run(tidalrt_k_batch_norm_training),
              "INTERNAL: batch_norm_training (op 0): clip_min and clip_max "
              "come together");
  }

  auto backward = [&](bool blockedData, std::vector<float> &dx,
                      std::vector<float> &ds, std::vector<float> &db) {
    dx.assign(count(shape), NAN);
    ds.assign(c, NAN);
    db.assign(c, NAN);
    KernelCall call;
    if (blockedData)
      call.blocked(shape, dyb.data()).blocked(shape, xb.data());
    else
      call.f32(shape, dy.data()).f32(shape, x.data());
    call.f32({c}, scale.data())
        .f32({c}, dense.mean.data())
        .f32({c}, dense.var.data());
    if (blockedData)
      call.blocked(shape, dx.data());
    else
      call.f32(shape, dx.data());
    call.f32({c}, ds.data()).f32({c}, db.data()).attrFloat(1e-5);
    return call.run(tidalrt_k_batch_norm_backward);
  };
  std::vector<float> dx, ds, db, dxb, dsb, dbb;
  ASSERT_EQ(backward(false, dx, ds, db), "");
  ASSERT_EQ(backward(true, dxb, dsb, dbb), "");
  expectNear(toDense(dxb, shape), dx, "grad_input", 1e-4f);
  expectNear(dsb, ds, "grad_scale", 1e-4f);
  expectNear(dbb, db, "grad_bias", 1e-4f);
}

// Max and average pooling, forward and backward, blocked against dense:
// `ceil` with an odd width sends average pooling with count_include_pad to
// the direct loop (oneDNN would count the overhang), the rest to oneDNN.
void checkPooling(bool ceil) {
  const std::vector<int64_t> x = {2, 32, 6, 5};
  const std::vector<int64_t> y = {2, 32, 3, ceil ? 3 : 2};
  std::vector<float> in = randomData(count(x), 10),
                     g = randomData(count(y), 11);
  std::vector<float> inB = toBlocked(in, x), gB = toBlocked(g, y);
  auto attrs = [&](KernelCall &c, bool isMax) {
    if (isMax)
      c.attrInt(ceil).attrInts({1, 1});
    else
      c.attrInt(ceil).attrInt(1);
    c.attrInts({2, 2}).attrInts({0, 0, 0, 0}).attrInts({2, 2});
  };
  for (bool isMax : {true, false}) {
    std::vector<float> out(count(y)), outB(count(y));
    KernelCall f, fb;
    f.f32(x, in.data()).f32(y, out.data());
    fb.blocked(x, inB.data()).blocked(y, outB.data());
    attrs(f, isMax);
    attrs(fb, isMax);
    auto fwd = isMax ? tidalrt_k_max_pool : tidalrt_k_average_pool;
    ASSERT_EQ(f.run(fwd), "");
    ASSERT_EQ(fb.run(fwd), "");
    expectNear(toDense(outB, y), out, isMax ? "max_pool" : "average_pool");

    std::vector<float> gx(count(x)), gxB(count(x));
    KernelCall b, bb;
    b.f32(y, g.data());
    bb.blocked(y, gB.data());
    if (isMax) {
      b.f32(x, in.data());
      bb.blocked(x, inB.data());
    }
    b.f32(x, gx.data());
    bb.blocked(x, gxB.data());
    attrs(b, isMax);
    attrs(bb, isMax);
    auto bwd =
        isMax ? tidalrt_k_max_pool_backward : tidalrt_k_average_pool_backward;
    ASSERT_EQ(b.run(bwd), "");
    ASSERT_EQ(bb.run(bwd), "");
    expectNear(toDense(gxB, x), gx,
               isMax ? "max_pool_backward" : "average_pool_backward");
  }
}

TEST(ChannelBlocked, PoolingOnOneDnn) { checkPooling(false); }
TEST(ChannelBlocked, PoolingOnTheDirectLoop) { checkPooling(true); }

// Global average pooling of a blocked input gives the dense call's bits
// (each channel summed in the same order); its gradient's broadcast back
// over the spatial dims writes a blocked result; a scalar operand of an
// element-wise op reads the same on any layout.
TEST(ChannelBlocked, GlobalAveragePoolAndItsGradient) {
  const std::vector<int64_t> y = {2, 32, 1, 1};
  std::vector<float> x = randomData(count(kX), 12), xb = toBlocked(x, kX);
  std::vector<float> mean(count(y)), meanB(count(y));
  KernelCall dense, blocked;
  dense.f32(kX, x.data()).f32(y, mean.data());
  blocked.blocked(kX, xb.data()).f32(y, meanB.data());
  ASSERT_EQ(dense.run(tidalrt_k_global_average_pool), "");
  ASSERT_EQ(blocked.run(tidalrt_k_global_average_pool), "");
  EXPECT_EQ(meanB, mean);

  std::vector<float> spread(count(kX)), spreadB(count(kX));
  KernelCall b, bb;
  b.f32(y, mean.data()).f32(kX, spread.data());
  bb.f32(y, mean.data()).blocked(kX, spreadB.data());
  ASSERT_EQ(b.run(tidalrt_k_broadcast_to), "");
  ASSERT_EQ(bb.run(tidalrt_k_broadcast_to), "");
  EXPECT_EQ(toDense(spreadB, kX), spread);

  float half = 0.5f;
  std::vector<float> scaled(count(kX)), scaledB(count(kX));
  KernelCall m, mb;
  m.f32(kX, spread.data()).f32({}, &half).f32(kX, scaled.data());
  mb.blocked(kX, spreadB.data()).f32({}, &half).blocked(kX, scaledB.data());
  ASSERT_EQ(m.run(tidalrt_k_mul), "");
  ASSERT_EQ(mb.run(tidalrt_k_mul), "");
  EXPECT_EQ(toDense(scaledB, kX), scaled);

  // A blocked broadcast result needs per-channel values.
  std::vector<float> row(32 * 5);
  KernelCall wrong;
  wrong.f32({1, 32, 1, 5}, row.data()).blocked(kX, spreadB.data());
  EXPECT_NE(wrong.run(tidalrt_k_broadcast_to).find("[N, C, 1...]"),
            std::string::npos);
}

// Concat and split along the channels move whole blocks per sample.
TEST(ChannelBlocked, ConcatAndSplitAlongTheChannels) {
  const std::vector<int64_t> a = {2, 16, 3, 5}, b = {2, 32, 3, 5},
                             w = {2, 48, 3, 5};
  std::vector<float> x = randomData(count(a), 13), y = randomData(count(b), 14);
  std::vector<float> xb = toBlocked(x, a), yb = toBlocked(y, b);
  std::vector<float> cat(count(w)), catB(count(w));
  KernelCall c, cb;
  c.f32(a, x.data()).f32(b, y.data()).f32(w, cat.data()).attrInt(1);
  cb.blocked(a, xb.data()).blocked(b, yb.data()).blocked(w, catB.data());
  cb.attrInt(1);
  ASSERT_EQ(c.run(tidalrt_k_concat), "");
  ASSERT_EQ(cb.run(tidalrt_k_concat), "");
  EXPECT_EQ(toDense(catB, w), cat);

  std::vector<float> p0(count(a)), p1(count(b));
  KernelCall sp;
  sp.blocked(w, catB.data()).blocked(a, p0.data()).blocked(b, p1.data());
  sp.attrInt(1).attrInts({16, 32});
  ASSERT_EQ(sp.run(tidalrt_k_split), "");
  EXPECT_EQ(toDense(p0, a), x);
  EXPECT_EQ(toDense(p1, b), y);

  // Along another axis, or with a dense part, the runs are not blocks.
  KernelCall mixed;
  mixed.f32(a, x.data()).blocked(b, yb.data()).blocked(w, catB.data());
  mixed.attrInt(1);
  EXPECT_NE(mixed.run(tidalrt_k_concat).find("channel-blocked"),
            std::string::npos);
  KernelCall axis0;
  axis0.blocked(a, xb.data()).blocked(a, xb.data());
  std::vector<float> twice(2 * count(a));
  axis0.blocked({4, 16, 3, 5}, twice.data()).attrInt(0);
  EXPECT_NE(axis0.run(tidalrt_k_concat).find("channel-blocked"),
            std::string::npos);
}

TEST(ChannelBlocked, ElementwiseOnSameShapes) {
  std::vector<float> a = randomData(count(kX), 8), b = randomData(count(kX), 9);
  std::vector<float> ab = toBlocked(a, kX), bb = toBlocked(b, kX);
  std::vector<float> y(count(kX)), yb(count(kX));
  KernelCall dense, blocked;
  dense.f32(kX, a.data()).f32(kX, b.data()).f32(kX, y.data());
  blocked.blocked(kX, ab.data()).blocked(kX, bb.data()).blocked(kX, yb.data());
  ASSERT_EQ(dense.run(tidalrt_k_add), "");
  ASSERT_EQ(blocked.run(tidalrt_k_add), "");
  EXPECT_EQ(toDense(yb, kX), y);
}

TEST(ChannelBlocked, KernelsThatCannotTakeThemRefuse) {
  std::vector<float> a(count(kX)), bias(32), y(count(kX));
  // A broadcasting add: the bias's channels are not where it would read.
  KernelCall add;
  add.blocked(kX, a.data()).f32({32, 1, 1}, bias.data()).blocked(kX, y.data());
  EXPECT_NE(add.run(tidalrt_k_add).find("channel-blocked"), std::string::npos);
  // Mixed layouts in an element-wise call.
  KernelCall relu;
  relu.blocked(kX, a.data()).f32(kX, y.data());
  EXPECT_NE(relu.run(tidalrt_k_relu).find("channel-blocked"),
            std::string::npos);
  // A softmax over the channels.
  KernelCall softmax;
  softmax.blocked(kX, a.data()).blocked(kX, y.data()).attrInt(1);
  EXPECT_NE(softmax.run(tidalrt_k_softmax).find("channel-blocked"),
            std::string::npos);
  // Channels that are not a multiple of 16.
  std::vector<int64_t> odd = {2, 8, 6, 5};
  KernelCall relu8;
  relu8.blocked(odd, a.data()).blocked(odd, y.data());
  EXPECT_NE(relu8.run(tidalrt_k_relu).find("multiple of 16"),
            std::string::npos);
}

} // namespace
