// Tests of reduce_max, reduce_min, reduce_prod, argmax and argmin against
// naive references: every axis subset of a 4-D shape, random shapes, NaN
// and ties, empty reductions, integers, large shapes with any thread
// count, and errors.
#include "kernel_test_util.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
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

enum class Kind { Max, Min, Prod };

tidalrt_kernel_fn_t kernelOf(Kind k) {
  return k == Kind::Max   ? tidalrt_k_reduce_max
         : k == Kind::Min ? tidalrt_k_reduce_min
                          : tidalrt_k_reduce_prod;
}

// The result shape and, per result, the flat input indices it reduces in
// row-major order.
struct Groups {
  Shape shape;
  std::vector<std::vector<int64_t>> members;
};

Groups groupsOf(const Shape &s, const std::vector<int64_t> &axes,
                bool keepdims) {
  Groups g;
  std::vector<bool> red(s.size(), false);
  for (int64_t a : axes)
    red[a] = true;
  Shape kept;
  for (size_t d = 0; d < s.size(); ++d) {
    if (!red[d] || keepdims)
      g.shape.push_back(red[d] ? 1 : s[d]);
    kept.push_back(red[d] ? 1 : s[d]);
  }
  g.members.resize((size_t)numel(kept));
  for (int64_t i = 0; i < numel(s); ++i) {
    int64_t rem = i, out = 0, stride = 1;
    for (int64_t d = (int64_t)s.size() - 1; d >= 0; --d) {
      int64_t idx = rem % s[d];
      rem /= s[d];
      if (!red[d])
        out += idx * stride;
      stride *= kept[d];
    }
    g.members[out].push_back(i);
  }
  return g;
}

// The naive reference of one result, in double (floats) or int64.
template <typename T>
T expected(Kind k, const std::vector<T> &x, const std::vector<int64_t> &m) {
  if (k == Kind::Prod) {
    if constexpr (std::is_floating_point_v<T>) {
      double p = 1.0;
      for (int64_t i : m)
        p *= (double)x[i];
      return (T)p;
    } else {
      uint64_t p = 1;
      for (int64_t i : m)
        p *= (uint64_t)(int64_t)x[i];
      return (T)(int64_t)p;
    }
  }
  T best = k == Kind::Max ? std::numeric_limits<T>::lowest()
                          : std::numeric_limits<T>::max();
  if constexpr (std::is_floating_point_v<T>)
    best = k == Kind::Max ? -INFINITY : INFINITY;
  for (int64_t i : m) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x[i]))
        return x[i];
    if (k == Kind::Max ? x[i] > best : x[i] < best)
      best = x[i];
  }
  return best;
}

template <typename T>
void checkCombine(tidalrt_element_type_t type, Kind k, const std::vector<T> &x,
                  const Shape &s, const std::vector<int64_t> &axes,
                  bool keepdims) {
  SCOPED_TRACE(::testing::PrintToString(s) + " axes " +
               ::testing::PrintToString(axes) + (keepdims ? " keepdims" : "") +
               " kind " + std::to_string((int)k));
  Groups g = groupsOf(s, axes, keepdims);
  std::vector<T> y((size_t)numel(g.shape), (T)-99);
  KernelCall call;
  call.tensor(type, s, const_cast<T *>(x.data()))
      .tensor(type, g.shape, y.data())
      .attrInts(axes)
      .attrInt(keepdims);
  ASSERT_EQ(call.run(kernelOf(k)), "");
  for (size_t o = 0; o < y.size(); ++o) {
    T want = expected(k, x, g.members[o]);
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(y[o])) << "at " << o;
        continue;
      }
    }
    ASSERT_EQ(y[o], want) << "at " << o;
  }
}

std::vector<float> randomFloats(int64_t n, uint32_t seed, float lo = -2.0f,
                                float hi = 3.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v((size_t)n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

std::vector<int64_t> subset(int mask, int rank) {
  std::vector<int64_t> axes;
  for (int d = 0; d < rank; ++d)
    if (mask & (1 << d))
      axes.push_back(d);
  return axes;
}

TEST(ReduceExtreme, EveryAxisSubset) {
  const Shape s = {3, 4, 5, 6};
  // Products of 360 values near 1 stay finite.
  auto x = randomFloats(numel(s), 11, 0.5f, 1.5f);
  for (Kind k : {Kind::Max, Kind::Min, Kind::Prod})
    for (int m = 0; m < 16; ++m)
      for (bool keep : {false, true})
        checkCombine(TIDALRT_ELEMENT_TYPE_F32, k, x, s, subset(m, 4), keep);
}

TEST(ReduceExtreme, RandomShapesNaNAndTies) {
  std::mt19937 rng(5);
  for (int t = 0; t < 80; ++t) {
    int rank = 1 + (int)(rng() % 5);
    Shape s((size_t)rank);
    for (int64_t &d : s)
      d = 1 + (int64_t)(rng() % 6);
    std::vector<float> x((size_t)numel(s));
    for (float &v : x)
      v = (float)((int)(rng() % 5) - 2) * 0.5f; // ties and zeros
    if (t % 3 == 0 && !x.empty())
      x[rng() % x.size()] = NAN;
    auto axes = subset((int)(rng() % (1u << rank)), rank);
    for (Kind k : {Kind::Max, Kind::Min, Kind::Prod})
      checkCombine(TIDALRT_ELEMENT_TYPE_F32, k, x, s, axes, t % 2 == 0);
  }
}

TEST(ReduceExtreme, OtherTypes) {
  std::vector<double> xd = {1.5, -2.0, 4.0, 0.25, NAN, -1.0};
  std::vector<int64_t> xl = {3, -7, 5, std::numeric_limits<int64_t>::max(),
                             2, -1};
  std::vector<int32_t> xi = {3, -7, 5, 1 << 20, 1 << 12, -1};
  for (Kind k : {Kind::Max, Kind::Min, Kind::Prod})
    for (int m = 0; m < 4; ++m) {
      checkCombine(TIDALRT_ELEMENT_TYPE_F64, k, xd, {2, 3}, subset(m, 2), 0);
      checkCombine(TIDALRT_ELEMENT_TYPE_I64, k, xl, {2, 3}, subset(m, 2), 1);
      checkCombine(TIDALRT_ELEMENT_TYPE_I32, k, xi, {3, 2}, subset(m, 2), 0);
    }
}

TEST(ReduceExtreme, LargeShapesAnyThreadCount) {
  struct Case {
    Shape s;
    std::vector<int64_t> axes;
  };
  const Case cases[] = {{{64, 512}, {0}},
                        {{3, 100000}, {1}},
                        {{1000, 300}, {0, 1}},
                        {{2, 8, 4000}, {0, 2}},
                        {{16, 300, 150}, {0}}};
  const int threads = omp_get_max_threads();
  for (const Case &c : cases) {
    auto x = randomFloats(numel(c.s), 3, 0.999f, 1.001f);
    for (Kind k : {Kind::Max, Kind::Min, Kind::Prod}) {
      Groups g = groupsOf(c.s, c.axes, false);
      std::vector<float> one((size_t)numel(g.shape)), four(one.size());
      for (auto [n, y] : {std::pair<int, float *>{1, one.data()},
                          std::pair<int, float *>{4, four.data()}}) {
        omp_set_num_threads(n);
        KernelCall call;
        call.f32(c.s, x.data()).f32(g.shape, y).attrInts(c.axes).attrInt(0);
        ASSERT_EQ(call.run(kernelOf(k)), "");
      }
      EXPECT_EQ(0, std::memcmp(one.data(), four.data(), one.size() * 4));
      checkCombine(TIDALRT_ELEMENT_TYPE_F32, k, x, c.s, c.axes, false);
    }
  }
  omp_set_num_threads(threads);
}

TEST(ReduceExtreme, EmptyReductions) {
  std::vector<float> y(3);
  const float want[] = {-INFINITY, INFINITY, 1.0f};
  for (Kind k : {Kind::Max, Kind::Min, Kind::Prod}) {
    KernelCall call;
    call.f32({3, 0}, nullptr).f32({3}, y.data()).attrInts({1}).attrInt(0);
    ASSERT_EQ(call.run(kernelOf(k)), "");
    EXPECT_EQ(y, std::vector<float>(3, want[(int)k]));
  }
  std::vector<int32_t> yi(2);
  KernelCall call;
  call.tensor(TIDALRT_ELEMENT_TYPE_I32, {0, 2}, nullptr)
      .tensor(TIDALRT_ELEMENT_TYPE_I32, {2}, yi.data())
      .attrInts({0})
      .attrInt(0);
  ASSERT_EQ(call.run(tidalrt_k_reduce_max), "");
  EXPECT_EQ(yi, std::vector<int32_t>(2, std::numeric_limits<int32_t>::min()));
}

TEST(ReduceExtreme, Errors) {
  float x[6] = {}, y[6] = {};
  KernelCall range;
  range.f32({2, 3}, x).f32({2, 3}, y).attrInts({2}).attrInt(1);
  std::string err = range.run(tidalrt_k_reduce_max);
  EXPECT_NE(err.find("INVALID_ARGUMENT: reduce_max (op 0): axis 2 is out of "
                     "range for rank 2"),
            std::string::npos)
      << err;
  KernelCall types;
  types.tensor(TIDALRT_ELEMENT_TYPE_BOOL, {6}, x)
      .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {}, y)
      .attrInts({0})
      .attrInt(0);
  err = types.run(tidalrt_k_reduce_prod);
  EXPECT_EQ(err.rfind("UNSUPPORTED: reduce_prod (op 0): element type bool", 0),
            0u)
      << err;
}

//===----------------------------------------------------------------------===//
// argmax, argmin
//===----------------------------------------------------------------------===//

template <typename T>
int64_t expectedArg(const std::vector<T> &x, const std::vector<int64_t> &m,
                    bool isMax, bool last) {
  int64_t at = 0;
  for (size_t j = 1; j < m.size(); ++j) {
    T v = x[m[j]], best = x[m[at]];
    bool wins;
    if (std::isnan((double)best))
      wins = last && std::isnan((double)v);
    else if (std::isnan((double)v))
      wins = true;
    else if (v == best)
      wins = last;
    else
      wins = isMax ? v > best : v < best;
    if (wins)
      at = (int64_t)j;
  }
  return at;
}

template <typename T>
void checkArg(tidalrt_element_type_t type, const std::vector<T> &x,
              const Shape &s, int64_t axis, bool keepdims) {
  Groups g = groupsOf(s, {axis}, keepdims);
  for (bool isMax : {true, false})
    for (bool last : {false, true}) {
      SCOPED_TRACE(::testing::PrintToString(s) + " axis " +
                   std::to_string(axis) + (isMax ? " max" : " min") +
                   (last ? " last" : ""));
      std::vector<int64_t> y((size_t)numel(g.shape), -99);
      KernelCall call;
      call.tensor(type, s, const_cast<T *>(x.data()))
          .i64(g.shape, y.data())
          .attrInt(axis)
          .attrInt(keepdims)
          .attrInt(last);
      ASSERT_EQ(call.run(isMax ? tidalrt_k_argmax : tidalrt_k_argmin), "");
      for (size_t o = 0; o < y.size(); ++o)
        ASSERT_EQ(y[o], expectedArg(x, g.members[o], isMax, last))
            << "at " << o;
    }
}

TEST(ArgReduce, EveryAxisTiesAndNaN) {
  std::mt19937 rng(9);
  for (int t = 0; t < 40; ++t) {
    int rank = 1 + (int)(rng() % 4);
    Shape s((size_t)rank);
    for (int64_t &d : s)
      d = 1 + (int64_t)(rng() % 5);
    std::vector<float> x((size_t)numel(s));
    for (float &v : x)
      v = (float)((int)(rng() % 4) - 2); // many ties
    if (t % 4 == 0)
      x[rng() % x.size()] = NAN;
    if (t % 8 == 0)
      x[rng() % x.size()] = NAN;
    for (int64_t axis = 0; axis < rank; ++axis)
      checkArg(TIDALRT_ELEMENT_TYPE_F32, x, s, axis, t % 2 == 0);
  }
  std::vector<int64_t> xl = {5, -3, 5, 9, -3, 0};
  std::vector<int32_t> xi = {5, -3, 5, 9, -3, 0};
  std::vector<double> xd = {5, -3, 5, 9, -3, 0};
  for (int64_t axis : {0, 1}) {
    checkArg(TIDALRT_ELEMENT_TYPE_I64, xl, {2, 3}, axis, true);
    checkArg(TIDALRT_ELEMENT_TYPE_I32, xi, {3, 2}, axis, false);
    checkArg(TIDALRT_ELEMENT_TYPE_F64, xd, {1, 6}, axis, false);
  }
  auto big = randomFloats(3 * 2000 * 5, 4);
  checkArg(TIDALRT_ELEMENT_TYPE_F32, big, {3, 2000, 5}, 1, false);
  checkArg(TIDALRT_ELEMENT_TYPE_F32, big, {30000}, 0, false);
  checkArg(TIDALRT_ELEMENT_TYPE_F32, big, {10, 3000}, 0, true);
}

TEST(ArgReduce, Errors) {
  float x[6] = {};
  int64_t y[6] = {};
  KernelCall empty; // an index along an empty axis
  empty.f32({2, 0}, x).i64({2}, y).attrInt(1).attrInt(0).attrInt(0);
  std::string err = empty.run(tidalrt_k_argmax);
  EXPECT_NE(err.find("INVALID_ARGUMENT: argmax (op 0): axis 1 has extent 0"),
            std::string::npos)
      << err;
  KernelCall none; // no results: nothing to index
  none.f32({0, 0}, x).i64({0}, y).attrInt(1).attrInt(0).attrInt(0);
  EXPECT_EQ(none.run(tidalrt_k_argmin), "");
  KernelCall type; // a float result
  type.f32({2, 3}, x).f32({2}, (float *)y).attrInt(1).attrInt(0).attrInt(0);
  err = type.run(tidalrt_k_argmin);
  EXPECT_NE(err.find("result of type float32; it must be int64"),
            std::string::npos)
      << err;
  KernelCall range;
  range.f32({2, 3}, x).i64({2, 3}, y).attrInt(2).attrInt(1).attrInt(0);
  err = range.run(tidalrt_k_argmax);
  EXPECT_NE(err.find("axis 2 is out of range for rank 2"), std::string::npos)
      << err;
}

} // namespace
