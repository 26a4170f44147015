// Tests of the pooling kernels against a naive double-precision reference
// that follows lib/Evaluator/ConvPoolOps.cpp (window order, first maximum
// on ties, PyTorch's average divisor).
#include "kernel_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

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

// Few distinct values, so that windows hold ties.
std::vector<float> tiedData(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(-2, 1);
  std::vector<float> v((size_t)n);
  for (float &x : v)
    x = (float)dist(gen);
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
  int bad = 0;
  for (size_t i = 0; i < ref.size() && bad < 5; ++i) {
    bool same = std::isinf(ref[i]) ? got[i] == ref[i]
                                   : std::fabs(got[i] - ref[i]) <=
                                         1e-5 * std::fabs(ref[i]) + 1e-6;
    if (!same) {
      ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", expected "
                    << ref[i];
      ++bad;
    }
  }
}

struct PoolCase {
  std::vector<int64_t> x, kernel, strides, pads, dilations;
  bool ceil = false;
  bool includePad = false;

  int k() const { return (int)x.size() - 2; }
  std::vector<int64_t> dil() const {
    return dilations.empty() ? std::vector<int64_t>(k(), 1) : dilations;
  }
  // tidal::windowOutputSize.
  std::vector<int64_t> out() const {
    std::vector<int64_t> o = {x[0], x[1]}, d = dil();
    for (int i = 0; i < k(); ++i) {
      int64_t span = d[i] * (kernel[i] - 1) + 1;
      int64_t steps = x[2 + i] + pads[i] + pads[k() + i] - span;
      int64_t n =
          (ceil ? (steps + strides[i] - 1) / strides[i] : steps / strides[i]) +
          1;
      if (ceil && (n - 1) * strides[i] >= x[2 + i] + pads[i])
        --n;
      o.push_back(n);
    }
    return o;
  }
};

// f(plane, outFlat, positions, divisor) per output position of each plane.
template <typename F> void forEachWindow(const PoolCase &c, F f) {
  std::vector<int64_t> out = c.out(), d = c.dil();
  int k = c.k();
  int64_t planes = c.x[0] * c.x[1], outSp = product(out, 2),
          kSp = product(c.kernel);
  std::vector<int64_t> o(k), kk(k), pos;
  for (int64_t os = 0; os < outSp; ++os) {
    int64_t r = os;
    for (int i = k; i-- > 0;) {
      o[i] = r % out[2 + i];
      r /= out[2 + i];
    }
    pos.clear();
    for (int64_t ks = 0; ks < kSp; ++ks) {
      int64_t q = ks;
      for (int i = k; i-- > 0;) {
        kk[i] = q % c.kernel[i];
        q /= c.kernel[i];
      }
      int64_t flat = 0;
      bool inside = true;
      for (int i = 0; i < k; ++i) {
        int64_t p = o[i] * c.strides[i] - c.pads[i] + kk[i] * d[i];
        inside = inside && p >= 0 && p < c.x[2 + i];
        flat = flat * c.x[2 + i] + p;
      }
      if (inside)
        pos.push_back(flat);
    }
    int64_t div = (int64_t)pos.size();
    if (c.includePad) {
      div = 1;
      for (int i = 0; i < k; ++i) {
        int64_t s = o[i] * c.strides[i] - c.pads[i];
        div *= std::min(s + c.kernel[i], c.x[2 + i] + c.pads[k + i]) - s;
      }
    }
    for (int64_t p = 0; p < planes; ++p)
      f(p, os, pos, div);
  }
}

KernelCall &maxAttrs(KernelCall &call, const PoolCase &c) {
  return call.attrInt(c.ceil)
      .attrInts(c.dil())
      .attrInts(c.kernel)
      .attrInts(c.pads)
      .attrInts(c.strides);
}

KernelCall &avgAttrs(KernelCall &call, const PoolCase &c) {
  return call.attrInt(c.ceil)
      .attrInt(c.includePad)
      .attrInts(c.kernel)
      .attrInts(c.pads)
      .attrInts(c.strides);
}

void checkMaxPool(const PoolCase &c, const std::vector<float> &x, uint32_t seed,
                  bool prepare = true) {
  std::vector<int64_t> yShape = c.out();
  int64_t inSp = product(c.x, 2), outSp = product(yShape, 2);
  std::vector<float> dy = randomData(product(yShape), seed);
  std::vector<double> ref((size_t)product(yShape)), dxRef(x.size(), 0.0);
  forEachWindow(
      c, [&](int64_t p, int64_t os, const std::vector<int64_t> &w, int64_t) {
        double best = -std::numeric_limits<double>::infinity();
        int64_t arg = -1;
        for (int64_t i : w) {
          best = std::max(best, (double)x[p * inSp + i]);
          if (arg < 0 || x[p * inSp + i] > x[p * inSp + arg])
            arg = i;
        }
        ref[p * outSp + os] = best;
        if (arg >= 0)
          dxRef[p * inSp + arg] += dy[p * outSp + os];
      });
  std::vector<float> y(ref.size(), NAN);
  KernelCall fwd;
  fwd.f32(c.x, const_cast<float *>(x.data())).f32(yShape, y.data());
  maxAttrs(fwd, c);
  ASSERT_EQ(fwd.run(tidalrt_k_max_pool, prepare), "");
  expectClose(y, ref, "max_pool");

  std::vector<float> dx(x.size(), NAN);
  KernelCall bwd;
  bwd.f32(yShape, dy.data())
      .f32(c.x, const_cast<float *>(x.data()))
      .f32(c.x, dx.data());
  maxAttrs(bwd, c);
  ASSERT_EQ(bwd.run(tidalrt_k_max_pool_backward, prepare), "");
  expectClose(dx, dxRef, "max_pool_backward");
}

void checkMaxPool(const PoolCase &c, uint32_t seed) {
  SCOPED_TRACE("random data");
  checkMaxPool(c, randomData(product(c.x), seed), seed + 1);
  SCOPED_TRACE("tied data");
  checkMaxPool(c, tiedData(product(c.x), seed + 2), seed + 3);
}

void checkAveragePool(const PoolCase &c, uint32_t seed, bool prepare = true) {
  std::vector<int64_t> yShape = c.out();
  int64_t inSp = product(c.x, 2), outSp = product(yShape, 2);
  std::vector<float> x = randomData(product(c.x), seed),
                     dy = randomData(product(yShape), seed + 1);
  std::vector<double> ref((size_t)product(yShape)), dxRef(x.size(), 0.0);
  forEachWindow(c, [&](int64_t p, int64_t os, const std::vector<int64_t> &w,
                       int64_t div) {
    double sum = 0.0;
    for (int64_t i : w)
      sum += x[p * inSp + i];
    ref[p * outSp + os] = div > 0 ? sum / div : 0.0;
    if (div > 0)
      for (int64_t i : w)
        dxRef[p * inSp + i] += dy[p * outSp + os] / (double)div;
  });
  std::vector<float> y(ref.size(), NAN);
  KernelCall fwd;
  fwd.f32(c.x, x.data()).f32(yShape, y.data());
  avgAttrs(fwd, c);
  ASSERT_EQ(fwd.run(tidalrt_k_average_pool, prepare), "");
  expectClose(y, ref, "average_pool");

  std::vector<float> dx(x.size(), NAN);
  KernelCall bwd;
  bwd.f32(yShape, dy.data()).f32(c.x, dx.data());
  avgAttrs(bwd, c);
  ASSERT_EQ(bwd.run(tidalrt_k_average_pool_backward, prepare), "");
  expectClose(dx, dxRef, "average_pool_backward");
}

} // namespace

TEST(DnnlPool, Max2D) {
  checkMaxPool({{2, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {}}, 1);
  checkMaxPool({{2, 5, 9, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}}, 2);
  checkMaxPool({{1, 4, 10, 9}, {3, 2}, {1, 2}, {0, 1, 1, 0}, {}}, 3);
  checkMaxPool({{3, 16, 12, 12}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}}, 4);
}

TEST(DnnlPool, MaxDilationsAndCeilMode) {
  checkMaxPool({{2, 3, 11, 10}, {3, 2}, {1, 2}, {1, 1, 1, 0}, {2, 3}}, 5);
  PoolCase ceil{{2, 3, 8, 9}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {}, true};
  checkMaxPool(ceil, 6);
  PoolCase ceilPad{{2, 3, 10, 7}, {3, 2}, {3, 2}, {1, 1, 0, 0}, {2, 1}, true};
  checkMaxPool(ceilPad, 7);
}

TEST(DnnlPool, MaxOneThreeAndFourSpatialDims) {
  checkMaxPool({{3, 4, 17}, {3}, {2}, {1, 1}, {}}, 8);
  checkMaxPool({{2, 3, 5, 6, 7}, {2, 3, 2}, {2, 1, 2}, {0, 1, 1, 1, 0, 0}, {}},
               9);
  checkMaxPool({{2, 2, 4, 5, 3, 4},
                {2, 2, 2, 2},
                {1, 2, 1, 2},
                {0, 1, 0, 0, 1, 0, 0, 1},
                {}},
               10);
}

TEST(DnnlPool, MaxWindowsInPaddingAreNegativeInfinity) {
  // Pads at least the kernel: some windows miss the input entirely.
  checkMaxPool({{1, 2, 4, 4}, {2, 2}, {1, 1}, {2, 2, 2, 2}, {}}, 11);
}

TEST(DnnlPool, MaxWithoutPreparation) {
  PoolCase c{{2, 3, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true};
  checkMaxPool(c, tiedData(product(c.x), 12), 13, /*prepare=*/false);
}

TEST(DnnlPool, MaxInt64AndInt32) {
  PoolCase c{{2, 3, 6, 5}, {2, 2}, {2, 1}, {0, 0, 1, 0}, {}, true};
  std::vector<int64_t> yShape = c.out();
  int64_t inSp = product(c.x, 2), outSp = product(yShape, 2);
  std::mt19937 gen(14);
  std::vector<int64_t> x((size_t)product(c.x));
  for (int64_t &v : x)
    v = (int64_t)(gen() % 2000) - 1000 + ((int64_t)1 << 40);
  std::vector<int64_t> ref((size_t)product(yShape));
  forEachWindow(
      c, [&](int64_t p, int64_t os, const std::vector<int64_t> &w, int64_t) {
        int64_t best = std::numeric_limits<int64_t>::lowest();
        for (int64_t i : w)
          best = std::max(best, x[p * inSp + i]);
        ref[p * outSp + os] = best;
      });
  std::vector<int64_t> y(ref.size());
  KernelCall call;
  call.i64(c.x, x.data()).i64(yShape, y.data());
  maxAttrs(call, c);
  ASSERT_EQ(call.run(tidalrt_k_max_pool), "");
  EXPECT_EQ(y, ref);

  std::vector<int32_t> x32(x.size()), y32(y.size());
  for (size_t i = 0; i < x.size(); ++i)
    x32[i] = (int32_t)(x[i] - ((int64_t)1 << 40));
  KernelCall call32;
  call32.tensor(TIDALRT_ELEMENT_TYPE_I32, c.x, x32.data())
      .tensor(TIDALRT_ELEMENT_TYPE_I32, yShape, y32.data());
  maxAttrs(call32, c);
  ASSERT_EQ(call32.run(tidalrt_k_max_pool), "");
  for (size_t i = 0; i < y.size(); ++i)
    EXPECT_EQ(y32[i], ref[i] - ((int64_t)1 << 40));
}

TEST(DnnlPool, Average2D) {
  for (bool include : {false, true}) {
    SCOPED_TRACE(include ? "count_include_pad" : "exclude pad");
    checkAveragePool(
        {{2, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {}, false, include}, 20);
    checkAveragePool(
        {{2, 5, 9, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, false, include}, 21);
    checkAveragePool(
        {{1, 4, 10, 9}, {3, 2}, {1, 2}, {0, 1, 1, 0}, {}, false, include}, 22);
    checkAveragePool(
        {{3, 16, 12, 12}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}, false, include},
        23);
  }
}

TEST(DnnlPool, AverageCeilMode) {
  for (bool include : {false, true}) {
    SCOPED_TRACE(include ? "count_include_pad" : "exclude pad");
    // The ceil overhang goes past the end padding: PyTorch leaves it out
    // of the divisor even with count_include_pad.
    checkAveragePool(
        {{2, 3, 8, 9}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {}, true, include}, 24);
    checkAveragePool(
        {{2, 3, 10, 7}, {3, 2}, {3, 2}, {1, 1, 1, 1}, {}, true, include}, 25);
    // Ceil mode that adds no window.
    checkAveragePool(
        {{2, 3, 9, 9}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true, include}, 26);
  }
}

TEST(DnnlPool, AverageOneThreeAndFourSpatialDims) {
  for (bool include : {false, true}) {
    SCOPED_TRACE(include ? "count_include_pad" : "exclude pad");
    checkAveragePool({{3, 4, 17}, {3}, {2}, {1, 1}, {}, false, include}, 27);
    checkAveragePool({{2, 3, 5, 6, 7},
                      {2, 3, 2},
                      {2, 1, 2},
                      {0, 1, 1, 1, 0, 0},
                      {},
                      true,
                      include},
                     28);
    checkAveragePool({{2, 2, 4, 5, 3, 4},
                      {2, 2, 2, 2},
                      {1, 2, 1, 2},
                      {0, 1, 0, 0, 1, 0, 0, 1},
                      {},
                      false,
                      include},
                     29);
  }
}

TEST(DnnlPool, AverageWindowsInPadding) {
  for (bool include : {false, true})
    checkAveragePool(
        {{1, 2, 4, 4}, {2, 2}, {1, 1}, {2, 2, 2, 2}, {}, false, include}, 30);
}

TEST(DnnlPool, AverageWithoutPreparation) {
  checkAveragePool({{2, 3, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true, true},
                   31, /*prepare=*/false);
}

TEST(DnnlPool, GlobalAverage) {
  for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{
           {2, 3, 5, 4}, {3, 4, 7}, {2, 2, 3, 2, 4}, {4, 5}, {2, 64, 16, 16}}) {
    std::vector<float> x = randomData(product(shape), 32);
    int64_t planes = shape[0] * shape[1], sp = product(shape, 2);
    std::vector<double> ref((size_t)planes, 0.0);
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t i = 0; i < sp; ++i)
        ref[p] += x[p * sp + i];
      ref[p] /= sp;
    }
    std::vector<int64_t> yShape(shape.size(), 1);
    yShape[0] = shape[0];
    yShape[1] = shape[1];
    std::vector<float> y((size_t)planes, NAN);
    KernelCall call;
    call.f32(shape, x.data()).f32(yShape, y.data());
    ASSERT_EQ(call.run(tidalrt_k_global_average_pool), "");
    expectClose(y, ref, "global_average_pool");
  }
}

TEST(DnnlPool, Errors) {
  std::vector<double> x(2 * 3 * 4 * 4), y(2 * 3 * 2 * 2);
  PoolCase c{{2, 3, 4, 4}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {}};
  KernelCall bwd;
  bwd.tensor(TIDALRT_ELEMENT_TYPE_F64, c.out(), y.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, c.x, x.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, c.x, x.data());
  maxAttrs(bwd, c);
  EXPECT_EQ(bwd.run(tidalrt_k_max_pool_backward),
            "UNSUPPORTED: max_pool_backward (op 0): grad has element type "
            "float64; only float32 is supported");

  KernelCall bf16;
  bf16.tensor(TIDALRT_ELEMENT_TYPE_BF16, c.x, x.data())
      .tensor(TIDALRT_ELEMENT_TYPE_BF16, c.out(), y.data());
  maxAttrs(bf16, c);
  EXPECT_EQ(bf16.run(tidalrt_k_max_pool),
            "UNSUPPORTED: max_pool (op 0): element type bfloat16 is not "
            "supported");

  std::vector<float> xf(x.size()), yf(y.size());
  KernelCall badKernel;
  badKernel.f32(c.x, xf.data()).f32(c.out(), yf.data());
  badKernel.attrInt(0).attrInt(0).attrInts({2, 2, 2}).attrInts(c.pads).attrInts(
      c.strides);
  std::string err = badKernel.run(tidalrt_k_average_pool);
  EXPECT_EQ(err.rfind("INVALID_ARGUMENT: average_pool (op 0): kernel_shape", 0),
            0u)
      << err;
}
