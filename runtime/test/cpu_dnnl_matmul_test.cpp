// Tests of the gemm and matmul kernels against a naive double-precision
// reference that follows lib/Evaluator/LinalgOps.cpp.
#include "kernel_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using tidalrt_test::KernelCall;

namespace {

std::vector<float> randomData(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v((size_t)std::max<int64_t>(n, 1));
  for (float &x : v)
    x = dist(gen);
  v.resize((size_t)n);
  return v;
}

int64_t product(const std::vector<int64_t> &d) {
  int64_t n = 1;
  for (int64_t x : d)
    n *= x;
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

void checkGemm(int64_t m, int64_t n, int64_t k, bool ta, bool tb,
               const std::vector<int64_t> *cShape, double alpha, double beta,
               uint32_t seed, bool prepare = true) {
  std::vector<int64_t> aShape =
      ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
  std::vector<int64_t> bShape =
      tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
  std::vector<float> a = randomData(m * k, seed),
                     b = randomData(k * n, seed + 1),
                     c = randomData(cShape ? product(*cShape) : 0, seed + 2),
                     y((size_t)(m * n), NAN);
  std::vector<double> ref((size_t)(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p)
        acc += (double)(ta ? a[p * m + i] : a[i * k + p]) *
               (tb ? b[j * k + p] : b[p * n + j]);
      double v = alpha * acc;
      if (cShape) {
        const std::vector<int64_t> &cs = *cShape;
        int64_t ci = cs.size() == 2 ? (cs[0] == 1 ? 0 : i) : 0;
        int64_t cj = cs.empty() ? 0 : (cs.back() == 1 ? 0 : j);
        int64_t cn = cs.empty() ? 1 : cs.back();
        v += beta * c[ci * cn + cj];
      }
      ref[i * n + j] = v;
    }
  KernelCall call;
  call.f32(aShape, a.data()).f32(bShape, b.data());
  if (cShape)
    call.f32(*cShape, c.data());
  else
    call.absent();
  call.f32({m, n}, y.data())
      .attrFloat(alpha)
      .attrFloat(beta)
      .attrInt(ta)
      .attrInt(tb);
  ASSERT_EQ(call.run(tidalrt_k_gemm, prepare), "");
  expectClose(y, ref, "gemm");
}

// NumPy matmul of `as` x `bs`.
void checkMatMul(const std::vector<int64_t> &as, const std::vector<int64_t> &bs,
                 uint32_t seed, bool prepare = true) {
  std::vector<int64_t> a2 = as, b2 = bs;
  if (a2.size() == 1)
    a2.insert(a2.begin(), 1);
  if (b2.size() == 1)
    b2.push_back(1);
  int64_t m = a2[a2.size() - 2], k = a2.back(), n = b2.back();
  std::vector<int64_t> aB(a2.begin(), a2.end() - 2),
      bB(b2.begin(), b2.end() - 2);
  size_t r = std::max(aB.size(), bB.size());
  aB.insert(aB.begin(), r - aB.size(), 1);
  bB.insert(bB.begin(), r - bB.size(), 1);
  std::vector<int64_t> batch(r);
  for (size_t i = 0; i < r; ++i)
    batch[i] = std::max(aB[i], bB[i]);
  std::vector<int64_t> yShape = batch;
  if (as.size() >= 2)
    yShape.push_back(m);
  if (bs.size() >= 2)
    yShape.push_back(n);
  std::vector<float> a = randomData(product(as), seed),
                     b = randomData(product(bs), seed + 1),
                     y((size_t)product(yShape), NAN);
  std::vector<double> ref((size_t)product(yShape), 0.0);
  int64_t nb = product(batch);
  for (int64_t bi = 0; bi < nb; ++bi) {
    int64_t aOff = 0, bOff = 0, rest = bi, aStride = 1, bStride = 1;
    for (size_t d = r; d-- > 0;) {
      int64_t idx = rest % batch[d];
      rest /= batch[d];
      aOff += (aB[d] == 1 ? 0 : idx) * aStride;
      bOff += (bB[d] == 1 ? 0 : idx) * bStride;
      aStride *= aB[d];
      bStride *= bB[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int64_t p = 0; p < k; ++p)
          acc +=
              (double)a[aOff * m * k + i * k + p] * b[bOff * k * n + p * n + j];
        ref[(bi * m + i) * n + j] = acc;
      }
  }
  KernelCall call;
  call.f32(as, a.data()).f32(bs, b.data()).f32(yShape, y.data());
  ASSERT_EQ(call.run(tidalrt_k_matmul, prepare), "");
  expectClose(y, ref, "matmul");
}

} // namespace

TEST(DnnlGemm, TransposesAndScales) {
  uint32_t seed = 1;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << "trans_a " << ta << " trans_b " << tb);
      checkGemm(7, 5, 9, ta, tb, nullptr, 1.0, 1.0, seed += 3);
      checkGemm(33, 17, 64, ta, tb, nullptr, 0.5, 1.0, seed += 3);
      std::vector<int64_t> c = {33, 17};
      checkGemm(33, 17, 64, ta, tb, &c, -1.5, 0.25, seed += 3);
    }
}

TEST(DnnlGemm, BroadcastC) {
  uint32_t seed = 50;
  std::vector<std::vector<int64_t>> shapes = {{},     {1},    {6},   {1, 1},
                                              {1, 6}, {4, 1}, {4, 6}};
  for (const auto &cs : shapes) {
    SCOPED_TRACE(::testing::PrintToString(cs));
    checkGemm(4, 6, 3, false, true, &cs, 1.0, 1.0, seed += 3);
    checkGemm(4, 6, 3, true, false, &cs, 2.0, -0.5, seed += 3);
    checkGemm(4, 6, 3, false, false, &cs, 1.0, 0.0, seed += 3);
  }
}

TEST(DnnlGemm, DegenerateAndUnprepared) {
  std::vector<int64_t> c = {1, 5};
  checkGemm(3, 5, 0, false, false, &c, 1.0, 2.0, 70); // K = 0: beta * C
  checkGemm(3, 5, 0, false, false, nullptr, 1.0, 1.0, 71);
  checkGemm(1, 1, 1, true, true, nullptr, 3.0, 1.0, 72);
  std::vector<int64_t> c2 = {16, 1};
  checkGemm(16, 8, 12, true, false, &c2, 1.0, 1.0, 73, /*prepare=*/false);
}

TEST(DnnlGemm, Errors) {
  std::vector<int32_t> a(6), b(6), y(4);
  KernelCall ints;
  ints.tensor(TIDALRT_ELEMENT_TYPE_I32, {2, 3}, a.data())
      .tensor(TIDALRT_ELEMENT_TYPE_I32, {3, 2}, b.data())
      .absent()
      .tensor(TIDALRT_ELEMENT_TYPE_I32, {2, 2}, y.data())
      .attrFloat(1.0)
      .attrFloat(1.0)
      .attrInt(0)
      .attrInt(0);
  EXPECT_EQ(ints.run(tidalrt_k_gemm),
            "UNSUPPORTED: gemm (op 0): A has element type int32; only float32 "
            "is supported");

  std::vector<float> af(6), bf(6), cf(3), yf(4);
  KernelCall badC;
  badC.f32({2, 3}, af.data())
      .f32({3, 2}, bf.data())
      .f32({3}, cf.data())
      .f32({2, 2}, yf.data())
      .attrFloat(1.0)
      .attrFloat(1.0)
      .attrInt(0)
      .attrInt(0);
  EXPECT_EQ(badC.run(tidalrt_k_gemm),
            "INVALID_ARGUMENT: gemm (op 0): C [1, 3] does not broadcast to "
            "[2, 2]");
}

TEST(DnnlMatMul, Shapes) {
  uint32_t seed = 100;
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{5, 7}, {7, 3}},
      {{7}, {7}},
      {{7}, {7, 4}},
      {{5, 7}, {7}},
      {{3, 5, 7}, {7, 4}},          // folded into one 2-D product
      {{2, 3, 5, 7}, {7}},          // folded, 1-D rhs
      {{7}, {3, 7, 4}},             // 1-D lhs against a batch
      {{3, 5, 7}, {3, 7, 4}},       // same batch
      {{2, 1, 5, 7}, {1, 3, 7, 4}}, // both broadcast
      {{2, 3, 5, 7}, {3, 7, 4}},    // rank difference
      {{1, 5, 7}, {4, 7, 2}},       // lhs broadcast
      {{4, 64, 48}, {4, 48, 32}},
      {{128, 96}, {96, 80}},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.first) + " x " +
                 ::testing::PrintToString(c.second));
    checkMatMul(c.first, c.second, seed += 2);
  }
  checkMatMul({2, 5, 7}, {2, 7, 3}, seed += 2, /*prepare=*/false);
}

TEST(DnnlMatMul, EmptyInnerDimensionGivesZeros) {
  std::vector<float> a(1), b(1), y(12, NAN);
  KernelCall call;
  call.f32({3, 0}, a.data()).f32({0, 4}, b.data()).f32({3, 4}, y.data());
  ASSERT_EQ(call.run(tidalrt_k_matmul), "");
  for (float v : y)
    EXPECT_EQ(v, 0.0f);
}

// A batch dimension of 0 against one of 1 broadcasts to 0 (NumPy), and the
// product is empty: it once broadcast to 1 and rejected the [0, 2, 3]
// output (found by the CUDA library test on an H100).
TEST(DnnlMatMul, EmptyBatchBroadcasts) {
  std::vector<float> a(1), b(12), y(1);
  KernelCall call;
  call.f32({0, 2, 4}, a.data())
      .f32({1, 4, 3}, b.data())
      .f32({0, 2, 3}, y.data());
  EXPECT_EQ(call.run(tidalrt_k_matmul), "");
  KernelCall rhs;
  rhs.f32({0, 2, 4}, a.data()).f32({4, 3}, b.data()).f32({0, 2, 3}, y.data());
  EXPECT_EQ(rhs.run(tidalrt_k_matmul), "");
  KernelCall wrong;
  wrong.f32({0, 2, 4}, a.data()).f32({4, 3}, b.data()).f32({1, 2, 3}, y.data());
  EXPECT_EQ(wrong.run(tidalrt_k_matmul),
            "INVALID_ARGUMENT: matmul (op 0): the output shape does not match "
            "the operands");
}

TEST(DnnlMatMul, Errors) {
  std::vector<int64_t> a(6), b(6), y(4);
  KernelCall ints;
  ints.i64({2, 3}, a.data()).i64({3, 2}, b.data()).i64({2, 2}, y.data());
  EXPECT_EQ(ints.run(tidalrt_k_matmul),
            "UNSUPPORTED: matmul (op 0): lhs has element type int64; only "
            "float32 is supported");

  std::vector<float> af(6), bf(8), yf(8);
  KernelCall inner;
  inner.f32({2, 3}, af.data()).f32({4, 2}, bf.data()).f32({2, 2}, yf.data());
  EXPECT_EQ(inner.run(tidalrt_k_matmul),
            "INVALID_ARGUMENT: matmul (op 0): inner dimensions differ: 3 vs 4");
}
