// Unit tests of softmax, log_softmax, their backwards (softmax.cpp) and the
// cross-entropy / NLL losses with backwards (loss.cpp), against naive double
// references of the evaluator's formulas (lib/Evaluator/LossOps.cpp).
#include "isa_test_util.h"
#include "kernel_test_util.h"

#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
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

std::vector<float> randomData(int64_t n, uint32_t seed, float scale = 3.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

void expectClose(const std::vector<float> &got, const std::vector<double> &want,
                 double rel = 1e-5, double abs = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 10; ++i) {
    double tol = abs + rel * std::fabs(want[i]);
    if (std::isnan(want[i]) && std::isnan(got[i]))
      continue;
    if (!(std::fabs(got[i] - want[i]) <= tol)) {
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", expected "
                    << want[i];
      ++bad;
    }
  }
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

struct Axis {
  int64_t outer, n, inner;
  int64_t at(int64_t o, int64_t k, int64_t i) const {
    return (o * n + k) * inner + i;
  }
};

Axis axisOf(const Shape &s, int axis) {
  Axis a{1, s[axis], 1};
  for (int d = 0; d < axis; ++d)
    a.outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d)
    a.inner *= s[d];
  return a;
}

std::vector<double> refLogSoftmax(const std::vector<float> &x, const Axis &l) {
  std::vector<double> out(x.size());
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner; ++i) {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < l.n; ++k)
        mx = std::max(mx, (double)x[l.at(o, k, i)]);
      double sum = 0;
      for (int64_t k = 0; k < l.n; ++k)
        sum += std::exp(x[l.at(o, k, i)] - mx);
      for (int64_t k = 0; k < l.n; ++k)
        out[l.at(o, k, i)] = x[l.at(o, k, i)] - (mx + std::log(sum));
    }
  return out;
}

std::vector<float> runUnary(tidalrt_kernel_fn_t k, const Shape &s,
                            std::vector<float> &x, int64_t axis,
                            bool prepare = true) {
  std::vector<float> y(x.size(), -7.0f);
  KernelCall c;
  c.f32(s, x.data()).f32(s, y.data()).attrInt(axis);
  EXPECT_EQ(c.run(k, prepare), "");
  return y;
}

std::vector<float> runBackward(tidalrt_kernel_fn_t k, const Shape &s,
                               std::vector<float> &g, std::vector<float> &y,
                               int64_t axis) {
  std::vector<float> gi(g.size(), -7.0f);
  KernelCall c;
  c.f32(s, g.data()).f32(s, y.data()).f32(s, gi.data()).attrInt(axis);
  EXPECT_EQ(c.run(k), "");
  return gi;
}

struct SoftmaxCase {
  Shape shape;
  int axis;
};

const SoftmaxCase kSoftmaxCases[] = {
    {{1}, 0},       {{7}, 0},           {{4, 10}, 1},     {{3, 37}, 1},
    {{3, 37}, 0},   {{2, 5, 70}, 1},    {{2, 5, 9}, 2},   {{2, 3, 4, 5}, 2},
    {{6, 1, 8}, 1}, {{2, 130, 3}, 1},   {{3, 4, 136}, 1}, {{300, 129}, 1},
    {{5, 1000}, 1}, {{2, 3, 2, 17}, -1}};

} // namespace

TEST(OtherSoftmax, ForwardMatchesReference) {
  forEachIsa([] {
    uint32_t seed = 1;
    for (const SoftmaxCase &c : kSoftmaxCases) {
      SCOPED_TRACE(::testing::Message() << "case " << seed);
      std::vector<float> x = randomData(numel(c.shape), seed++);
      int axis = c.axis < 0 ? c.axis + (int)c.shape.size() : c.axis;
      std::vector<double> lp = refLogSoftmax(x, axisOf(c.shape, axis));
      std::vector<double> p(lp.size());
      for (size_t i = 0; i < lp.size(); ++i)
        p[i] = std::exp(lp[i]);
      expectClose(runUnary(tidalrt_k_softmax, c.shape, x, c.axis), p);
      expectClose(runUnary(tidalrt_k_log_softmax, c.shape, x, c.axis), lp);
    }
  });
}

TEST(OtherSoftmax, BackwardMatchesReference) {
  forEachIsa([] {
    uint32_t seed = 100;
    for (const SoftmaxCase &c : kSoftmaxCases) {
      SCOPED_TRACE(::testing::Message() << "case " << seed);
      int axis = c.axis < 0 ? c.axis + (int)c.shape.size() : c.axis;
      Axis l = axisOf(c.shape, axis);
      std::vector<float> x = randomData(numel(c.shape), seed++);
      std::vector<float> g = randomData(numel(c.shape), seed++, 1.0f);
      std::vector<float> y = runUnary(tidalrt_k_softmax, c.shape, x, c.axis);
      std::vector<float> ly =
          runUnary(tidalrt_k_log_softmax, c.shape, x, c.axis);
      std::vector<double> want(y.size()), wantLog(y.size());
      for (int64_t o = 0; o < l.outer; ++o)
        for (int64_t i = 0; i < l.inner; ++i) {
          double s = 0, sl = 0;
          for (int64_t k = 0; k < l.n; ++k) {
            int64_t j = l.at(o, k, i);
            s += (double)g[j] * y[j];
            sl += g[j];
          }
          for (int64_t k = 0; k < l.n; ++k) {
            int64_t j = l.at(o, k, i);
            want[j] = y[j] * (g[j] - s);
            wantLog[j] = g[j] - std::exp((double)ly[j]) * sl;
          }
        }
      expectClose(
          runBackward(tidalrt_k_softmax_backward, c.shape, g, y, c.axis), want,
          1e-5, 1e-5);
      expectClose(
          runBackward(tidalrt_k_log_softmax_backward, c.shape, g, ly, c.axis),
          wantLog, 1e-5, 1e-5);
    }
  });
}

TEST(OtherSoftmax, ExtremeValuesAreStable) {
  forEachIsa([] {
    Shape s = {2, 11};
    std::vector<float> x = {1000, -1000, 0, 88,     89,     -88,   -89, 500,
                            1e-3, 3,     2, -1e30f, -1e30f, 1e30f, 0,   0,
                            0,    0,     0, 0,      0,      0};
    std::vector<double> lp = refLogSoftmax(x, axisOf(s, 1));
    std::vector<float> y = runUnary(tidalrt_k_softmax, s, x, 1);
    std::vector<float> ly = runUnary(tidalrt_k_log_softmax, s, x, 1);
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_TRUE(std::isfinite(y[i])) << i;
      EXPECT_NEAR(y[i], std::exp(lp[i]), 1e-6) << i;
      EXPECT_NEAR(ly[i], lp[i], 1e-5 * std::max(1.0, std::fabs(lp[i]))) << i;
    }
  });
}

// Large tensors take the OpenMP path; rows are independent, so any thread
// count gives the same bits. Also runs without preparation.
TEST(OtherSoftmax, ParallelIsDeterministic) {
  Shape s = {64, 3, 300};
  std::vector<float> x = randomData(numel(s), 9);
  int threads = omp_get_max_threads();
  for (int axis : {1, 2}) {
    omp_set_num_threads(1);
    std::vector<float> a = runUnary(tidalrt_k_softmax, s, x, axis, false);
    omp_set_num_threads(std::max(2, threads));
    std::vector<float> b = runUnary(tidalrt_k_softmax, s, x, axis);
    EXPECT_EQ(a, b);
    std::vector<double> lp = refLogSoftmax(x, axisOf(s, axis));
    for (double &v : lp)
      v = std::exp(v);
    expectClose(b, lp);
  }
  omp_set_num_threads(threads);
}

TEST(OtherSoftmax, Errors) {
  std::vector<double> d(6);
  std::vector<float> f(6);
  KernelCall c;
  c.tensor(TIDALRT_ELEMENT_TYPE_F64, {2, 3}, d.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {2, 3}, d.data())
      .attrInt(1);
  std::string e = c.run(tidalrt_k_softmax);
  EXPECT_TRUE(contains(e, "UNSUPPORTED: softmax (op 0): input has element "
                          "type float64"))
      << e;
  KernelCall c2;
  c2.f32({2, 3}, f.data()).f32({2, 3}, f.data()).attrInt(2);
  e = c2.run(tidalrt_k_log_softmax);
  EXPECT_TRUE(contains(e, "INVALID_ARGUMENT") && contains(e, "axis 2")) << e;
  KernelCall c3;
  c3.f32({2, 3}, f.data()).f32({3, 2}, f.data()).f32({2, 3}, f.data());
  c3.attrInt(1);
  e = c3.run(tidalrt_k_softmax_backward);
  EXPECT_TRUE(contains(e, "INVALID_ARGUMENT")) << e;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

namespace {

enum Reduction { kNone = 0, kSum = 1, kMean = 2 };

struct LossCase {
  Shape scores; // [N, C, d...]
  int reduction;
  bool weights;
  bool hasIgnore;
  int64_t ignore;
  bool i32;
};

Shape labelShape(const Shape &scores) {
  Shape s = {scores[0]};
  s.insert(s.end(), scores.begin() + 2, scores.end());
  return s;
}

// Labels in [0, C), with every fifth one set to the ignore index.
std::vector<int64_t> makeLabels(const LossCase &c, uint32_t seed) {
  std::mt19937 rng(seed);
  int64_t m = numel(labelShape(c.scores)), classes = c.scores[1];
  std::vector<int64_t> v(m);
  for (int64_t j = 0; j < m; ++j)
    v[j] = (c.hasIgnore && j % 5 == 2) ? c.ignore : (int64_t)(rng() % classes);
  return v;
}

// Labels as the call's index tensor (int64 or int32 storage).
struct Labels {
  std::vector<int64_t> values;
  std::vector<int32_t> i32;
  bool narrow;
  void *data() { return narrow ? (void *)i32.data() : (void *)values.data(); }
  tidalrt_element_type_t type() const {
    return narrow ? TIDALRT_ELEMENT_TYPE_I32 : TIDALRT_ELEMENT_TYPE_I64;
  }
  Labels(std::vector<int64_t> v, bool narrow)
      : values(std::move(v)), narrow(narrow) {
    for (int64_t x : values)
      i32.push_back((int32_t)x);
  }
};

struct RefTargets {
  int64_t n, c, d;
  std::vector<int64_t> label; // -1 ignored
  std::vector<double> weight;
  double weightSum = 0;
  int64_t at(int64_t j, int64_t cls) const {
    return ((j / d) * c + cls) * d + j % d;
  }
};

RefTargets refTargets(const LossCase &lc, const std::vector<int64_t> &labels,
                      const std::vector<float> &w) {
  RefTargets t{lc.scores[0], lc.scores[1], 1, {}, {}, 0};
  for (size_t i = 2; i < lc.scores.size(); ++i)
    t.d *= lc.scores[i];
  for (int64_t v : labels) {
    if (lc.hasIgnore && v == lc.ignore) {
      t.label.push_back(-1);
      t.weight.push_back(0);
      continue;
    }
    double wv = lc.weights ? w[v] : 1.0;
    t.label.push_back(v);
    t.weight.push_back(wv);
    t.weightSum += wv;
  }
  return t;
}

std::vector<double> refLoss(const RefTargets &t, const std::vector<double> &lp,
                            int reduction) {
  std::vector<double> out;
  double sum = 0;
  for (size_t j = 0; j < t.label.size(); ++j) {
    double l = t.label[j] < 0 ? 0 : -t.weight[j] * lp[t.at(j, t.label[j])];
    if (reduction == kNone)
      out.push_back(l);
    sum += l;
  }
  if (reduction == kSum)
    out.push_back(sum);
  if (reduction == kMean)
    out.push_back(sum / t.weightSum);
  return out;
}

double refSpread(const RefTargets &t, const std::vector<float> &gl,
                 int reduction, size_t j) {
  if (reduction == kNone)
    return gl[j];
  if (reduction == kSum)
    return gl[0];
  return gl[0] / t.weightSum;
}

Shape lossShape(const LossCase &c) {
  return c.reduction == kNone ? labelShape(c.scores) : Shape{};
}

void addLossAttrs(KernelCall &call, const LossCase &c) {
  if (c.hasIgnore)
    call.attrInt(c.ignore);
  else
    call.attrAbsent();
  call.attrInt(c.reduction);
}

std::vector<LossCase> lossCases() {
  std::vector<LossCase> cases;
  const Shape shapes[] = {{8, 10}, {5, 37}, {3, 4, 5}, {2, 6, 3, 70}, {1, 3}};
  for (const Shape &s : shapes)
    for (int r : {kNone, kSum, kMean})
      for (bool w : {false, true})
        for (int ig = 0; ig < 3; ++ig)
          cases.push_back({s, r, w, ig > 0, ig == 1 ? -100 : 1, ig == 2});
  return cases;
}

} // namespace

TEST(OtherLoss, SoftmaxCrossEntropyMatchesReference) {
  forEachIsa([] {
    uint32_t seed = 0;
    for (const LossCase &lc : lossCases()) {
      SCOPED_TRACE(::testing::Message()
                   << "case " << seed << " reduction " << lc.reduction
                   << " weights " << lc.weights << " ignore " << lc.hasIgnore);
      ++seed;
      std::vector<float> scores = randomData(numel(lc.scores), seed);
      Labels labels(makeLabels(lc, seed), lc.i32);
      std::vector<float> w = randomData(lc.scores[1], seed + 1000, 1.0f);
      for (float &v : w)
        v = std::fabs(v) + 0.1f;
      Shape ls = lossShape(lc);
      std::vector<float> loss(numel(ls), -7.0f), lp(scores.size(), -7.0f);
      KernelCall call;
      call.f32(lc.scores, scores.data())
          .tensor(labels.type(), labelShape(lc.scores), labels.data());
      if (lc.weights)
        call.f32({lc.scores[1]}, w.data());
      else
        call.absent();
      call.f32(ls, loss.data()).f32(lc.scores, lp.data());
      addLossAttrs(call, lc);
      ASSERT_EQ(call.run(tidalrt_k_softmax_cross_entropy_loss), "");

      RefTargets t = refTargets(lc, labels.values, w);
      std::vector<double> wantLp = refLogSoftmax(scores, Axis{t.n, t.c, t.d});
      expectClose(lp, wantLp);
      expectClose(loss, refLoss(t, wantLp, lc.reduction));

      // Backward from the computed log_prob.
      std::vector<float> gl = randomData(numel(ls), seed + 2000, 1.0f);
      std::vector<float> gs(scores.size(), -7.0f);
      KernelCall back;
      back.f32(ls, gl.data())
          .f32(lc.scores, lp.data())
          .tensor(labels.type(), labelShape(lc.scores), labels.data());
      if (lc.weights)
        back.f32({lc.scores[1]}, w.data());
      else
        back.absent();
      back.f32(lc.scores, gs.data());
      addLossAttrs(back, lc);
      ASSERT_EQ(back.run(tidalrt_k_softmax_cross_entropy_loss_backward), "");
      std::vector<double> want(scores.size(), 0.0);
      for (size_t j = 0; j < t.label.size(); ++j) {
        if (t.label[j] < 0)
          continue;
        double g = refSpread(t, gl, lc.reduction, j) * t.weight[j];
        for (int64_t c = 0; c < t.c; ++c) {
          int64_t i = t.at(j, c);
          want[i] = g * (std::exp((double)lp[i]) - (c == t.label[j] ? 1 : 0));
        }
      }
      expectClose(gs, want, 1e-5, 1e-6);
    }
  });
}

TEST(OtherLoss, NllMatchesReference) {
  uint32_t seed = 500;
  for (const LossCase &lc : lossCases()) {
    SCOPED_TRACE(::testing::Message() << "case " << seed);
    ++seed;
    std::vector<float> in = randomData(numel(lc.scores), seed);
    Labels labels(makeLabels(lc, seed), lc.i32);
    std::vector<float> w = randomData(lc.scores[1], seed + 1000, 1.0f);
    Shape ls = lossShape(lc);
    std::vector<float> loss(numel(ls), -7.0f);
    KernelCall call;
    call.f32(lc.scores, in.data())
        .tensor(labels.type(), labelShape(lc.scores), labels.data());
    if (lc.weights)
      call.f32({lc.scores[1]}, w.data());
    else
      call.absent();
    call.f32(ls, loss.data());
    addLossAttrs(call, lc);
    ASSERT_EQ(call.run(tidalrt_k_nll_loss), "");
    RefTargets t = refTargets(lc, labels.values, w);
    std::vector<double> ind(in.begin(), in.end());
    // Signed weights may make the mean's denominator small: relative only.
    expectClose(loss, refLoss(t, ind, lc.reduction), 1e-5, 1e-6);

    std::vector<float> gl = randomData(numel(ls), seed + 2000, 1.0f);
    std::vector<float> gi(in.size(), -7.0f);
    KernelCall back;
    back.f32(ls, gl.data())
        .tensor(labels.type(), labelShape(lc.scores), labels.data());
    if (lc.weights)
      back.f32({lc.scores[1]}, w.data());
    else
      back.absent();
    back.f32(lc.scores, gi.data());
    addLossAttrs(back, lc);
    ASSERT_EQ(back.run(tidalrt_k_nll_loss_backward), "");
    std::vector<double> want(in.size(), 0.0);
    for (size_t j = 0; j < t.label.size(); ++j)
      if (t.label[j] >= 0)
        want[t.at(j, t.label[j])] =
            -refSpread(t, gl, lc.reduction, j) * t.weight[j];
    expectClose(gi, want, 1e-5, 1e-7);
  }
}

// Large losses take the OpenMP paths; the sums split by size only, so any
// thread count gives the same bits.
TEST(OtherLoss, ParallelIsDeterministic) {
  LossCase lc{{16, 5, 40, 40}, kMean, true, true, 3, false};
  std::vector<float> scores = randomData(numel(lc.scores), 77);
  Labels labels(makeLabels(lc, 77), false);
  std::vector<float> w = {0.5f, 1.0f, 2.0f, 0.25f, 1.5f};
  auto run = [&](std::vector<float> &loss, std::vector<float> &lp,
                 std::vector<float> &gs) {
    KernelCall call;
    call.f32(lc.scores, scores.data())
        .tensor(labels.type(), labelShape(lc.scores), labels.data())
        .f32({5}, w.data())
        .f32({}, loss.data())
        .f32(lc.scores, lp.data());
    addLossAttrs(call, lc);
    ASSERT_EQ(call.run(tidalrt_k_softmax_cross_entropy_loss), "");
    float one = 1.0f;
    KernelCall back;
    back.f32({}, &one)
        .f32(lc.scores, lp.data())
        .tensor(labels.type(), labelShape(lc.scores), labels.data())
        .f32({5}, w.data())
        .f32(lc.scores, gs.data());
    addLossAttrs(back, lc);
    ASSERT_EQ(back.run(tidalrt_k_softmax_cross_entropy_loss_backward), "");
  };
  int threads = omp_get_max_threads();
  std::vector<float> l1(1), lp1(scores.size()), g1(scores.size());
  std::vector<float> l2(1), lp2(scores.size()), g2(scores.size());
  omp_set_num_threads(1);
  run(l1, lp1, g1);
  omp_set_num_threads(std::max(2, threads));
  run(l2, lp2, g2);
  omp_set_num_threads(threads);
  EXPECT_EQ(l1, l2);
  EXPECT_EQ(lp1, lp2);
  EXPECT_EQ(g1, g2);
  RefTargets t = refTargets(lc, labels.values, w);
  std::vector<double> wantLp = refLogSoftmax(scores, Axis{t.n, t.c, t.d});
  expectClose(l1, refLoss(t, wantLp, kMean));
}

TEST(OtherLoss, AllIgnoredMeanIsNaN) {
  std::vector<float> in = {-1, -2, -3, -4};
  std::vector<int64_t> target = {1, 1};
  float loss = 0;
  KernelCall call;
  call.f32({2, 2}, in.data()).i64({2}, target.data()).absent();
  call.f32({}, &loss).attrInt(1).attrInt(kMean);
  ASSERT_EQ(call.run(tidalrt_k_nll_loss), "");
  EXPECT_TRUE(std::isnan(loss));
}

TEST(OtherLoss, LabelOutOfRangeIsAnError) {
  std::vector<float> scores(2 * 3 * 2), lp(scores.size());
  float loss;
  // Without ignore_index, -100 is an ordinary (bad) label.
  std::vector<int64_t> labels = {0, 2, 1, -100};
  KernelCall call;
  call.f32({2, 3, 2}, scores.data())
      .i64({2, 2}, labels.data())
      .absent()
      .f32({}, &loss)
      .f32({2, 3, 2}, lp.data())
      .attrAbsent()
      .attrInt(kMean);
  std::string e = call.run(tidalrt_k_softmax_cross_entropy_loss);
  EXPECT_TRUE(contains(e, "INVALID_ARGUMENT: softmax_cross_entropy_loss (op "
                          "0): labels value -100 at labels[1, 1] is out of "
                          "range [0, 3)"))
      << e;
  // With ignore_index -100 it is fine.
  KernelCall ok;
  ok.f32({2, 3, 2}, scores.data())
      .i64({2, 2}, labels.data())
      .absent()
      .f32({}, &loss)
      .f32({2, 3, 2}, lp.data())
      .attrInt(-100)
      .attrInt(kMean);
  EXPECT_EQ(ok.run(tidalrt_k_softmax_cross_entropy_loss), "");
  EXPECT_NEAR(loss, std::log(3.0), 1e-6);
  // A label equal to C in nll_loss_backward.
  std::vector<int32_t> target = {3, 0};
  std::vector<float> gi(6);
  float g = 1;
  KernelCall back;
  back.f32({}, &g)
      .tensor(TIDALRT_ELEMENT_TYPE_I32, {2}, target.data())
      .absent()
      .f32({2, 3}, gi.data())
      .attrAbsent()
      .attrInt(kSum);
  e = back.run(tidalrt_k_nll_loss_backward);
  EXPECT_TRUE(contains(e, "target value 3 at target[0] is out of range [0, 3)"))
      << e;
  // Float labels and a bad reduction.
  std::vector<float> flabels(2);
  KernelCall f;
  f.f32({2, 3}, gi.data())
      .f32({2}, flabels.data())
      .absent()
      .f32({}, &g)
      .attrAbsent()
      .attrInt(kSum);
  e = f.run(tidalrt_k_nll_loss);
  EXPECT_TRUE(contains(e, "UNSUPPORTED") && contains(e, "target")) << e;
  KernelCall r;
  r.f32({2, 3}, gi.data())
      .tensor(TIDALRT_ELEMENT_TYPE_I32, {2}, target.data())
      .absent()
      .f32({}, &g)
      .attrAbsent()
      .attrInt(7);
  e = r.run(tidalrt_k_nll_loss);
  EXPECT_TRUE(contains(e, "reduction 7")) << e;
}
