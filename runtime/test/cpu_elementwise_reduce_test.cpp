// Tests of reduce_sum, reduce_mean and broadcast_to against naive
// references: every axis subset of a 4-D shape, the split paths of large
// reductions, determinism across thread counts, other element types and
// errors.
#include "isa_test_util.h"
#include "kernel_test_util.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using tidalrt_test::KernelCall;

namespace {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

class ElementwiseReduce : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    TIDALRT_SKIP_UNLESS_ISA(GetParam());
    setenv("TIDAL_CPU_ISA", GetParam(), 1);
  }
  void TearDown() override { unsetenv("TIDAL_CPU_ISA"); }
};

// The result shape and a double reference (sums and sums of magnitudes).
struct Reference {
  Shape shape;
  std::vector<double> sum, absSum;
  int64_t count = 1;
};

template <typename T>
Reference reference(const std::vector<T> &x, const Shape &s,
                    const std::vector<int64_t> &axes, bool keepdims) {
  Reference r;
  std::vector<bool> red(s.size(), false);
  for (int64_t a : axes)
    red[a] = true;
  Shape kept;
  for (size_t d = 0; d < s.size(); ++d) {
    if (red[d])
      r.count *= s[d];
    if (!red[d] || keepdims)
      r.shape.push_back(red[d] ? 1 : s[d]);
    kept.push_back(red[d] ? 1 : s[d]);
  }
  r.sum.assign((size_t)numel(kept), 0.0);
  r.absSum.assign((size_t)numel(kept), 0.0);
  for (int64_t i = 0; i < numel(s); ++i) {
    int64_t rem = i, out = 0, stride = 1;
    for (int64_t d = (int64_t)s.size() - 1; d >= 0; --d) {
      int64_t idx = rem % s[d];
      rem /= s[d];
      if (!red[d])
        out += idx * stride;
      stride *= kept[d];
    }
    r.sum[out] += (double)x[i];
    r.absSum[out] += std::fabs((double)x[i]);
  }
  return r;
}

std::vector<float> randomFloats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 3.0f);
  std::vector<float> v((size_t)n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

std::vector<float> runReduce(tidalrt_kernel_fn_t fn,
                             const std::vector<float> &x, const Shape &s,
                             const std::vector<int64_t> &axes, bool keepdims,
                             const Shape &outShape, bool prepare = true) {
  std::vector<float> y((size_t)numel(outShape), -99.0f);
  KernelCall call;
  call.f32(s, const_cast<float *>(x.data()))
      .f32(outShape, y.data())
      .attrInts(axes)
      .attrInt(keepdims);
  EXPECT_EQ(call.run(fn, prepare), "");
  return y;
}

void checkF32(const Shape &s, const std::vector<int64_t> &axes, bool keepdims,
              bool prepare = true) {
  SCOPED_TRACE(::testing::PrintToString(s) + " axes " +
               ::testing::PrintToString(axes) + (keepdims ? " keepdims" : ""));
  auto x = randomFloats(numel(s), (uint32_t)numel(s));
  Reference r = reference(x, s, axes, keepdims);
  for (bool mean : {false, true}) {
    auto y = runReduce(mean ? tidalrt_k_reduce_mean : tidalrt_k_reduce_sum, x,
                       s, axes, keepdims, r.shape, prepare);
    for (size_t i = 0; i < y.size(); ++i) {
      double d = mean && r.count ? (double)r.count : 1.0;
      double ref = r.sum[i] / d;
      ASSERT_NEAR(y[i], ref, 1e-6 * std::fabs(ref) + 1e-12 * r.absSum[i] / d)
          << (mean ? "mean" : "sum") << " at " << i;
    }
  }
}

TEST_P(ElementwiseReduce, EveryAxisSubset) {
  const Shape s = {3, 4, 5, 6};
  for (int m = 0; m < 16; ++m) {
    std::vector<int64_t> axes;
    for (int d = 0; d < 4; ++d)
      if (m & (1 << d))
        axes.push_back(d);
    checkF32(s, axes, true);
    checkF32(s, axes, false);
  }
}

TEST_P(ElementwiseReduce, SizeOneDimensionsAndScalars) {
  checkF32({1, 7, 1, 3}, {0, 2}, true);  // only size-1 dims: a copy
  checkF32({1, 7, 1, 3}, {0, 1}, false); // a size-1 and a real dim
  checkF32({2, 1, 3}, {1, 2}, true);
  checkF32({}, {}, false);    // rank 0
  checkF32({5}, {0}, false);  // to a scalar
  checkF32({5, 4}, {}, true); // no axes: identity
}

TEST_P(ElementwiseReduce, LargeShapesTakeTheSplitPaths) {
  checkF32({64, 512}, {0}, false);             // bias gradient, row blocks
  checkF32({300, 10}, {0}, false);             // small bias gradient
  checkF32({16, 300, 40}, {0}, false);         // kept inner, split rows
  checkF32({20000, 3}, {0}, true);             // tiny kept inner, many rows
  checkF32({3, 100000}, {1}, true);            // few long rows: column blocks
  checkF32({1000, 300}, {0, 1}, false);        // everything
  checkF32({2, 8, 40000}, {0, 2}, false);      // [R, K, L], split outer rows
  checkF32({8, 32, 20, 20}, {0, 2, 3}, false); // conv bias gradient
  checkF32({4000, 30}, {1}, true);             // many short rows
  checkF32({4, 70, 130}, {1}, false);          // middle axis
}

TEST_P(ElementwiseReduce, RandomShapesAndAxes) {
  std::mt19937 rng(321);
  for (int t = 0; t < 120; ++t) {
    int rank = 1 + (int)(rng() % 5);
    if (t == 0)
      rank = 9; // deep odometers
    Shape s((size_t)rank);
    for (int64_t &d : s)
      d = 1 + (int64_t)(rng() % (rank > 6 ? 3 : 7));
    std::vector<int64_t> axes;
    for (int d = 0; d < rank; ++d)
      if (rng() % 2)
        axes.push_back(d);
    checkF32(s, axes, rng() % 2 == 0);
  }
}

TEST_P(ElementwiseReduce, WorksWithoutPreparation) {
  checkF32({64, 512}, {0}, false, /*prepare=*/false);
  checkF32({3, 100000}, {1}, true, /*prepare=*/false);
}

// Reductions large enough to be split into partial sums and to run in
// parallel.
struct ParallelCase {
  Shape s;
  std::vector<int64_t> axes;
};
const ParallelCase kParallelCases[] = {{{64, 512}, {0}},
                                       {{3, 100000}, {1}},
                                       {{1000, 300}, {0, 1}},
                                       {{2, 8, 40000}, {0, 2}},
                                       {{16, 300, 40}, {0}}};

TEST_P(ElementwiseReduce, SameResultForAnyThreadCount) {
  int threads = omp_get_max_threads();
  for (const ParallelCase &c : kParallelCases) {
    auto x = randomFloats(numel(c.s), 3);
    Reference r = reference(x, c.s, c.axes, false);
    omp_set_num_threads(1);
    auto one = runReduce(tidalrt_k_reduce_sum, x, c.s, c.axes, false, r.shape);
    omp_set_num_threads(4);
    auto four = runReduce(tidalrt_k_reduce_sum, x, c.s, c.axes, false, r.shape);
    auto again =
        runReduce(tidalrt_k_reduce_sum, x, c.s, c.axes, false, r.shape);
    EXPECT_EQ(one, four);
    EXPECT_EQ(four, again);
  }
  omp_set_num_threads(threads);
}

// The parallel grain (tidalrt_set_parallel_grain, which tidal-calibrate
// measures) decides only whether a loop runs in parallel: at a grain of 1
// every loop opens a team, at 2^40 none does, and the sums are the same
// bits.
TEST_P(ElementwiseReduce, SameResultForAnyParallelGrain) {
  EXPECT_EQ(tidalrt_parallel_grain(), TIDALRT_DEFAULT_PARALLEL_GRAIN);
  int threads = omp_get_max_threads();
  omp_set_num_threads(4);
  for (const ParallelCase &c : kParallelCases) {
    auto x = randomFloats(numel(c.s), 5);
    Reference r = reference(x, c.s, c.axes, false);
    tidalrt_set_parallel_grain(1);
    EXPECT_EQ(tidalrt_parallel_grain(), 1);
    auto all = runReduce(tidalrt_k_reduce_sum, x, c.s, c.axes, false, r.shape);
    tidalrt_set_parallel_grain(int64_t{1} << 40);
    auto none = runReduce(tidalrt_k_reduce_sum, x, c.s, c.axes, false, r.shape);
    EXPECT_EQ(all, none);
  }
  tidalrt_set_parallel_grain(0); // the default again
  EXPECT_EQ(tidalrt_parallel_grain(), TIDALRT_DEFAULT_PARALLEL_GRAIN);
  omp_set_num_threads(threads);
}

TEST_P(ElementwiseReduce, EmptyReductions) {
  // A reduced dimension of size 0: sums and means are 0.
  std::vector<float> y(3, -1.0f);
  KernelCall call;
  call.f32({3, 0}, nullptr).f32({3}, y.data()).attrInts({1}).attrInt(0);
  ASSERT_EQ(call.run(tidalrt_k_reduce_mean), "");
  EXPECT_EQ(y, std::vector<float>(3, 0.0f));
  // No result elements at all.
  KernelCall none;
  none.f32({0, 4}, nullptr).f32({0}, nullptr).attrInts({1}).attrInt(0);
  EXPECT_EQ(none.run(tidalrt_k_reduce_sum), "");
}

TEST_P(ElementwiseReduce, OtherElementTypes) {
  std::vector<int64_t> x = {1, -2, 3, -4, 5, -7};
  std::vector<int64_t> y(2);
  KernelCall call;
  call.i64({2, 3}, x.data()).i64({2, 1}, y.data()).attrInts({1}).attrInt(1);
  ASSERT_EQ(call.run(tidalrt_k_reduce_sum), "");
  EXPECT_EQ(y, (std::vector<int64_t>{2, -6}));
  ASSERT_EQ(call.run(tidalrt_k_reduce_mean), "");
  EXPECT_EQ(y, (std::vector<int64_t>{0, -2})); // truncated toward zero

  std::vector<int32_t> xi(300 * 200), yi(200);
  for (size_t i = 0; i < xi.size(); ++i)
    xi[i] = (int32_t)(i % 17) - 8;
  KernelCall c32;
  c32.tensor(TIDALRT_ELEMENT_TYPE_I32, {300, 200}, xi.data())
      .tensor(TIDALRT_ELEMENT_TYPE_I32, {200}, yi.data())
      .attrInts({0})
      .attrInt(0);
  ASSERT_EQ(c32.run(tidalrt_k_reduce_sum), "");
  for (int64_t j = 0; j < 200; ++j) {
    int64_t want = 0;
    for (int64_t i = 0; i < 300; ++i)
      want += xi[i * 200 + j];
    ASSERT_EQ(yi[j], want) << j;
  }

  std::vector<double> xd = {0.5, 1.5, 2.5, 3.5}, yd(1);
  KernelCall cd;
  cd.tensor(TIDALRT_ELEMENT_TYPE_F64, {2, 2}, xd.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {}, yd.data())
      .attrInts({0, 1})
      .attrInt(0);
  ASSERT_EQ(cd.run(tidalrt_k_reduce_mean), "");
  EXPECT_EQ(yd[0], 2.0);
}

TEST_P(ElementwiseReduce, Errors) {
  float x[6] = {}, y[6] = {};
  {
    KernelCall call; // axis out of range
    call.f32({2, 3}, x).f32({2, 3}, y).attrInts({2}).attrInt(1);
    std::string err = call.run(tidalrt_k_reduce_sum);
    EXPECT_NE(err.find("INVALID_ARGUMENT: reduce_sum (op 0): axis 2 is out of "
                       "range for rank 2"),
              std::string::npos)
        << err;
  }
  {
    KernelCall call; // result shape mismatch
    call.f32({2, 3}, x).f32({3}, y).attrInts({1}).attrInt(0);
    std::string err = call.run(tidalrt_k_reduce_mean);
    EXPECT_NE(err.find("INVALID_ARGUMENT"), std::string::npos) << err;
  }
  {
    KernelCall call; // bool
    call.tensor(TIDALRT_ELEMENT_TYPE_BOOL, {6}, x)
        .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {}, y)
        .attrInts({0})
        .attrInt(0);
    std::string err = call.run(tidalrt_k_reduce_sum);
    EXPECT_EQ(err.rfind("UNSUPPORTED: reduce_sum (op 0): element type bool", 0),
              0u)
        << err;
  }
  {
    KernelCall call; // axes given as an int, not ints
    call.f32({6}, x).f32({}, y).attrInt(0).attrInt(0);
    std::string err = call.run(tidalrt_k_reduce_sum);
    EXPECT_NE(err.find("INTERNAL"), std::string::npos) << err;
  }
}

//===----------------------------------------------------------------------===//
// broadcast_to
//===----------------------------------------------------------------------===//

int64_t broadcastIndex(int64_t flat, const Shape &out, const Shape &in) {
  int64_t idx = 0, stride = 1;
  size_t off = out.size() - in.size();
  for (int64_t d = (int64_t)out.size() - 1; d >= 0; --d) {
    int64_t i = flat % out[d];
    flat /= out[d];
    if (d >= (int64_t)off) {
      int64_t j = d - off;
      if (in[j] != 1)
        idx += i * stride;
      stride *= in[j];
    }
  }
  return idx;
}

template <typename T>
void checkBroadcast(tidalrt_element_type_t type, const Shape &in,
                    const Shape &out) {
  SCOPED_TRACE(::testing::PrintToString(in) + " -> " +
               ::testing::PrintToString(out));
  std::vector<T> x((size_t)numel(in)), y((size_t)numel(out));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = (T)(i * 3 + 1);
  KernelCall call;
  call.tensor(type, in, x.data()).tensor(type, out, y.data());
  ASSERT_EQ(call.run(tidalrt_k_broadcast_to), "");
  for (int64_t i = 0; i < numel(out); ++i)
    ASSERT_EQ(y[i], x[broadcastIndex(i, out, in)]) << "at " << i;
}

TEST_P(ElementwiseReduce, BroadcastTo) {
  const std::pair<Shape, Shape> shapes[] = {
      {{}, {4, 5}},
      {{5}, {3, 5}},
      {{3, 1}, {3, 7}},
      {{2, 1, 4}, {3, 2, 6, 4}},
      {{1, 1}, {1, 1}},
      {{6}, {6}},
      {{64, 1, 1}, {8, 64, 9, 9}},
      {{1, 300}, {400, 300}},
      {{2, 1}, {2, 70000}},
      {{4}, {0, 4}},
  };
  for (const auto &s : shapes) {
    checkBroadcast<float>(TIDALRT_ELEMENT_TYPE_F32, s.first, s.second);
    checkBroadcast<int64_t>(TIDALRT_ELEMENT_TYPE_I64, s.first, s.second);
  }
  checkBroadcast<uint8_t>(TIDALRT_ELEMENT_TYPE_BOOL, {3, 1}, {3, 5});
  checkBroadcast<uint16_t>(TIDALRT_ELEMENT_TYPE_F16, {5}, {2, 5});
  checkBroadcast<double>(TIDALRT_ELEMENT_TYPE_F64, {1, 5}, {4, 5});
}

TEST_P(ElementwiseReduce, BroadcastToErrors) {
  float x[6] = {}, y[12] = {};
  KernelCall call;
  call.f32({2, 3}, x).f32({4, 3}, y);
  std::string err = call.run(tidalrt_k_broadcast_to);
  EXPECT_NE(err.find("input of shape [2, 3] does not broadcast to the result "
                     "shape [4, 3]"),
            std::string::npos)
      << err;
  KernelCall types;
  types.f32({3}, x).i64({4, 3}, (int64_t *)y);
  err = types.run(tidalrt_k_broadcast_to);
  EXPECT_NE(err.find("INVALID_ARGUMENT"), std::string::npos) << err;
}

INSTANTIATE_TEST_SUITE_P(Elementwise, ElementwiseReduce, TIDALRT_TEST_ISAS,
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           return std::string(i.param);
                         });

} // namespace
