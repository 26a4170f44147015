// Unit tests of layer_norm and layer_norm_backward (layer_norm.cpp) against
// naive double references of the evaluator's formulas
// (lib/Evaluator/NormOps.cpp).
#include "isa_test_util.h"
#include "kernel_test_util.h"

#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

using tidalrt_test::KernelCall;

namespace {

using tidalrt_test::forEachIsa;

using Shape = std::vector<int64_t>;

int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

std::vector<float> randomData(int64_t n, uint32_t seed, float mean = 0.0f,
                              float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(mean, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

void expectClose(const std::vector<float> &got, const std::vector<double> &want,
                 double rel, double abs, const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 10; ++i)
    if (!(std::fabs(got[i] - want[i]) <= abs + rel * std::fabs(want[i]))) {
      ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", expected "
                    << want[i];
      ++bad;
    }
}

// The flat index into a (right-aligned, broadcasting) parameter of shape
// `p` for element i of the normalized shape `inner`.
int64_t paramIndex(int64_t i, const Shape &inner, const Shape &p) {
  int64_t flat = 0, stride = 1;
  int pd = (int)p.size() - 1;
  for (int d = (int)inner.size() - 1; d >= 0; --d, --pd) {
    int64_t id = i % inner[d];
    i /= inner[d];
    if (pd < 0)
      continue;
    if (p[pd] != 1)
      flat += id * stride;
    stride *= p[pd];
  }
  return flat;
}

struct Case {
  Shape x;
  int axis;
  Shape scale;
  bool bias;
  double eps;
};

struct Result {
  std::vector<float> y, mean, inv;
};

Shape statShape(const Case &c) {
  Shape s = c.x;
  for (size_t d = c.axis; d < s.size(); ++d)
    s[d] = 1;
  return s;
}

Result runForward(const Case &c, std::vector<float> &x, std::vector<float> &s,
                  std::vector<float> &b, bool prepare = true) {
  int64_t outer = 1;
  for (int d = 0; d < c.axis; ++d)
    outer *= c.x[d];
  Result r{std::vector<float>(x.size(), -7.0f),
           std::vector<float>(outer, -7.0f), std::vector<float>(outer, -7.0f)};
  KernelCall call;
  call.f32(c.x, x.data()).f32(c.scale, s.data());
  if (c.bias)
    call.f32(c.scale, b.data());
  else
    call.absent();
  call.f32(c.x, r.y.data())
      .f32(statShape(c), r.mean.data())
      .f32(statShape(c), r.inv.data())
      .attrInt(c.axis)
      .attrFloat(c.eps);
  EXPECT_EQ(call.run(tidalrt_k_layer_norm, prepare), "");
  return r;
}

const Case kCases[] = {
    {{4, 37}, 1, {37}, true, 1e-5},
    {{2, 3, 20}, 2, {20}, false, 1e-5},
    {{2, 3, 20}, 1, {3, 20}, true, 1e-3},
    {{2, 3, 20}, 1, {20}, true, 1e-5},    // broadcast over dim 1
    {{2, 3, 20}, 1, {3, 1}, false, 1e-5}, // broadcast over dim 2
    {{2, 3, 20}, 1, {1}, true, 1e-5},     // a scalar scale
    {{3, 8}, 0, {3, 8}, true, 1e-5},      // everything normalized
    {{5, 1}, 1, {1}, true, 1e-5},         // one element per row
    {{6, 133}, 1, {1, 133}, true, 1e-5},  // extra leading 1
    {{2, 2, 2, 16}, 3, {16}, true, 1e-6},
};

} // namespace

TEST(OtherLayerNorm, ForwardMatchesReference) {
  forEachIsa([] {
    uint32_t seed = 1;
    for (const Case &c : kCases) {
      SCOPED_TRACE(::testing::Message() << "case " << seed);
      std::vector<float> x = randomData(numel(c.x), seed++, 3.0f, 2.0f);
      std::vector<float> s = randomData(numel(c.scale), seed++);
      std::vector<float> b = randomData(numel(c.scale), seed++);
      Result r = runForward(c, x, s, b);
      Shape inner(c.x.begin() + c.axis, c.x.end());
      int64_t k = numel(inner), outer = numel(c.x) / k;
      std::vector<double> y(x.size()), mean(outer), inv(outer);
      for (int64_t o = 0; o < outer; ++o) {
        double m = 0, v = 0;
        for (int64_t i = 0; i < k; ++i)
          m += x[o * k + i];
        m /= k;
        for (int64_t i = 0; i < k; ++i)
          v += (x[o * k + i] - m) * (x[o * k + i] - m);
        v /= k;
        mean[o] = m;
        inv[o] = 1 / std::sqrt(v + c.eps);
        for (int64_t i = 0; i < k; ++i) {
          int64_t p = paramIndex(i, inner, c.scale);
          y[o * k + i] =
              (x[o * k + i] - m) * inv[o] * s[p] + (c.bias ? b[p] : 0.0);
        }
      }
      expectClose(r.y, y, 1e-5, 2e-6, "output");
      expectClose(r.mean, mean, 1e-6, 1e-6, "mean");
      expectClose(r.inv, inv, 1e-6, 1e-6, "inv_std_dev");
    }
  });
}

TEST(OtherLayerNorm, BackwardMatchesReference) {
  forEachIsa([] {
    uint32_t seed = 50;
    for (const Case &c : kCases) {
      SCOPED_TRACE(::testing::Message() << "case " << seed);
      std::vector<float> x = randomData(numel(c.x), seed++, 1.0f, 2.0f);
      std::vector<float> s = randomData(numel(c.scale), seed++);
      std::vector<float> b = randomData(numel(c.scale), seed++);
      std::vector<float> dy = randomData(numel(c.x), seed++);
      Result r = runForward(c, x, s, b);
      std::vector<float> dx(x.size(), -7.0f), gs(s.size(), -7.0f),
          gb(s.size(), -7.0f);
      KernelCall call;
      call.f32(c.x, dy.data())
          .f32(c.x, x.data())
          .f32(c.scale, s.data())
          .f32(statShape(c), r.mean.data())
          .f32(statShape(c), r.inv.data())
          .f32(c.x, dx.data())
          .f32(c.scale, gs.data())
          .f32(c.scale, gb.data())
          .attrInt(c.axis);
      ASSERT_EQ(call.run(tidalrt_k_layer_norm_backward), "");
      Shape inner(c.x.begin() + c.axis, c.x.end());
      int64_t k = numel(inner), outer = numel(c.x) / k;
      std::vector<double> wdx(x.size()), wgs(s.size(), 0.0), wgb(s.size(), 0.0),
          g(k), xhat(k);
      for (int64_t o = 0; o < outer; ++o) {
        double mg = 0, mgx = 0, inv = r.inv[o];
        for (int64_t i = 0; i < k; ++i) {
          int64_t p = paramIndex(i, inner, c.scale), j = o * k + i;
          xhat[i] = (x[j] - (double)r.mean[o]) * inv;
          g[i] = dy[j] * (double)s[p];
          mg += g[i];
          mgx += g[i] * xhat[i];
          wgs[p] += dy[j] * xhat[i];
          wgb[p] += dy[j];
        }
        mg /= k;
        mgx /= k;
        for (int64_t i = 0; i < k; ++i)
          wdx[o * k + i] = inv * (g[i] - mg - xhat[i] * mgx);
      }
      expectClose(dx, wdx, 1e-4, 1e-5, "grad_input");
      expectClose(gs, wgs, 1e-5, 1e-5, "grad_scale");
      expectClose(gb, wgb, 1e-5, 1e-5, "grad_bias");
    }
  });
}

// Large shapes take the OpenMP paths (row-chunked column sums); any thread
// count gives the same bits, with or without preparation.
TEST(OtherLayerNorm, ParallelIsDeterministic) {
  Case c{{512, 300}, 1, {300}, true, 1e-5};
  std::vector<float> x = randomData(numel(c.x), 5, 0.5f, 1.0f);
  std::vector<float> s = randomData(300, 6), b = randomData(300, 7);
  std::vector<float> dy = randomData(numel(c.x), 8);
  auto run = [&](bool prepare, Result &r, std::vector<float> &dx,
                 std::vector<float> &gs, std::vector<float> &gb) {
    r = runForward(c, x, s, b, prepare);
    dx.assign(x.size(), 0);
    gs.assign(300, 0);
    gb.assign(300, 0);
    KernelCall call;
    call.f32(c.x, dy.data())
        .f32(c.x, x.data())
        .f32({300}, s.data())
        .f32({512, 1}, r.mean.data())
        .f32({512, 1}, r.inv.data())
        .f32(c.x, dx.data())
        .f32({300}, gs.data())
        .f32({300}, gb.data())
        .attrInt(1);
    ASSERT_EQ(call.run(tidalrt_k_layer_norm_backward, prepare), "");
  };
  int threads = omp_get_max_threads();
  Result r1, r2;
  std::vector<float> dx1, gs1, gb1, dx2, gs2, gb2;
  omp_set_num_threads(1);
  run(false, r1, dx1, gs1, gb1);
  omp_set_num_threads(std::max(3, threads));
  run(true, r2, dx2, gs2, gb2);
  // Nor does the parallel grain change them (it only decides whether a
  // loop runs in parallel; tidalrt_set_parallel_grain).
  Result r3;
  std::vector<float> dx3, gs3, gb3;
  tidalrt_set_parallel_grain(1);
  run(true, r3, dx3, gs3, gb3);
  tidalrt_set_parallel_grain(0);
  omp_set_num_threads(threads);
  EXPECT_EQ(r3.y, r2.y);
  EXPECT_EQ(dx3, dx2);
  EXPECT_EQ(gs3, gs2);
  EXPECT_EQ(gb3, gb2);
  EXPECT_EQ(r1.y, r2.y);
  EXPECT_EQ(r1.mean, r2.mean);
  EXPECT_EQ(r1.inv, r2.inv);
  EXPECT_EQ(dx1, dx2);
  EXPECT_EQ(gs1, gs2);
  EXPECT_EQ(gb1, gb2);
  std::vector<double> wgb(300, 0.0);
  for (int64_t o = 0; o < 512; ++o)
    for (int i = 0; i < 300; ++i)
      wgb[i] += dy[o * 300 + i];
  expectClose(gb1, wgb, 1e-5, 1e-5, "grad_bias");
}

TEST(OtherLayerNorm, Errors) {
  std::vector<float> x(24), s(5), st(6);
  KernelCall call;
  call.f32({2, 3, 4}, x.data())
      .f32({5}, s.data())
      .absent()
      .f32({2, 3, 4}, x.data())
      .f32({2, 3, 1}, st.data())
      .f32({2, 3, 1}, st.data())
      .attrInt(2)
      .attrFloat(1e-5);
  std::string e = call.run(tidalrt_k_layer_norm);
  EXPECT_NE(e.find("INVALID_ARGUMENT: layer_norm (op 0): scale does not "
                   "broadcast"),
            std::string::npos)
      << e;
  KernelCall bad;
  bad.f32({2, 3, 4}, x.data())
      .f32({4}, s.data())
      .absent()
      .f32({2, 3, 4}, x.data())
      .f32({2, 3, 1}, st.data())
      .f32({2, 3, 1}, st.data())
      .attrInt(3)
      .attrFloat(1e-5);
  e = bad.run(tidalrt_k_layer_norm);
  EXPECT_NE(e.find("axis 3 is out of range"), std::string::npos) << e;
  std::vector<double> d(24);
  KernelCall type;
  type.tensor(TIDALRT_ELEMENT_TYPE_F64, {2, 3, 4}, d.data())
      .f32({4}, s.data())
      .absent()
      .f32({2, 3, 4}, x.data())
      .f32({2, 3, 1}, st.data())
      .f32({2, 3, 1}, st.data())
      .attrInt(2)
      .attrFloat(1e-5);
  e = type.run(tidalrt_k_layer_norm);
  EXPECT_NE(e.find("UNSUPPORTED"), std::string::npos) << e;
  KernelCall stats;
  stats.f32({2, 3, 4}, x.data())
      .f32({2, 3, 4}, x.data())
      .f32({4}, s.data())
      .f32({2, 1, 1}, st.data())
      .f32({2, 3, 1}, st.data())
      .f32({2, 3, 4}, x.data())
      .f32({4}, s.data())
      .f32({4}, s.data())
      .attrInt(2);
  e = stats.run(tidalrt_k_layer_norm_backward);
  EXPECT_NE(e.find("mean has 2 elements, expected 6"), std::string::npos) << e;
}
