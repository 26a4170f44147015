// Tests of the logic family's CPU kernels (max, min, comparisons, mask
// logic, where) against a naive broadcasting reference written here:
// random shapes with every broadcast pattern, NaN and tie handling, every
// element type, and rejected calls.
#include "kernel_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
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

// The flat offset in `in` (broadcast to `out`) of out's flat element i.
int64_t broadcastOffset(int64_t i, const Shape &out, const Shape &in) {
  int64_t off = 0, stride = 1;
  for (int d = (int)out.size() - 1; d >= 0; --d) {
    const int64_t idx = i % out[d];
    i /= out[d];
    const int id = d - (int)(out.size() - in.size());
    if (id >= 0) {
      if (in[id] != 1)
        off += idx * stride;
      stride *= in[id];
    }
  }
  return off;
}

// Output shape, and operand shapes that broadcast to it in several ways.
struct Broadcast {
  Shape out, a, b, c;
};

std::vector<Broadcast> broadcasts() {
  return {{{}, {}, {}, {}},
          {{7}, {7}, {7}, {7}},
          {{3, 5}, {3, 5}, {5}, {3, 1}},
          {{2, 3, 4}, {1, 3, 1}, {2, 1, 4}, {}},
          {{4, 1, 6, 5}, {4, 1, 6, 5}, {1, 5}, {6, 1}},
          {{2, 2, 3, 1, 2, 3, 2, 2, 3},
           {2, 1, 3, 1, 2, 1, 2, 1, 3},
           {3},
           {2, 2, 3, 1, 1, 1, 1, 1, 1}},
          {{0, 3}, {0, 3}, {3}, {1, 1}},
          {{1030}, {1}, {1030}, {1030}}};
}

std::vector<float> randomFloats(int64_t n, std::mt19937 &rng) {
  // Few distinct values, so that ties and equalities happen; some NaN.
  std::uniform_int_distribution<int> pick(-3, 3);
  std::vector<float> v((size_t)n);
  for (float &x : v)
    x = pick(rng) == 3 && (rng() % 5 == 0)
            ? std::numeric_limits<float>::quiet_NaN()
            : (float)pick(rng) * 0.5f;
  return v;
}

struct BinaryCase {
  const char *name;
  tidalrt_kernel_fn_t fn;
  std::function<double(double, double)> ref; // mask ops return 0/1
  bool mask;
};

double maxRef(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
double minRef(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

const BinaryCase kBinary[] = {
    {"max", tidalrt_k_max, maxRef, false},
    {"min", tidalrt_k_min, minRef, false},
    {"equal", tidalrt_k_equal, [](double a, double b) { return a == b; }, true},
    {"less", tidalrt_k_less, [](double a, double b) { return a < b; }, true},
    {"less_or_equal", tidalrt_k_less_or_equal,
     [](double a, double b) { return a <= b; }, true},
    {"greater", tidalrt_k_greater, [](double a, double b) { return a > b; },
     true},
    {"greater_or_equal", tidalrt_k_greater_or_equal,
     [](double a, double b) { return a >= b; }, true},
};

TEST(Logic, BinaryFloat32MatchesReference) {
  std::mt19937 rng(1);
  for (const BinaryCase &c : kBinary)
    for (const Broadcast &bc : broadcasts()) {
      std::vector<float> a = randomFloats(numel(bc.a), rng);
      std::vector<float> b = randomFloats(numel(bc.b), rng);
      const int64_t n = numel(bc.out);
      std::vector<float> yf((size_t)n, -9.0f);
      std::vector<uint8_t> ym((size_t)n, 9);
      KernelCall call;
      call.f32(bc.a, a.data()).f32(bc.b, b.data());
      if (c.mask)
        call.tensor(TIDALRT_ELEMENT_TYPE_BOOL, bc.out, ym.data());
      else
        call.f32(bc.out, yf.data());
      ASSERT_EQ(call.run(c.fn), "") << c.name;
      for (int64_t i = 0; i < n; ++i) {
        double want = c.ref(a[broadcastOffset(i, bc.out, bc.a)],
                            b[broadcastOffset(i, bc.out, bc.b)]);
        if (c.mask)
          EXPECT_EQ(ym[i], (uint8_t)want) << c.name << " element " << i;
        else if (std::isnan(want))
          EXPECT_TRUE(std::isnan(yf[i])) << c.name << " element " << i;
        else
          EXPECT_EQ(yf[i], (float)want) << c.name << " element " << i;
      }
    }
}

TEST(Logic, IntegersAndFloat64) {
  std::vector<int64_t> a = {5, -3, 7}, b = {2}, y(3);
  std::vector<uint8_t> m(3);
  KernelCall mx, eq;
  mx.i64({3}, a.data()).i64({1}, b.data()).i64({3}, y.data());
  ASSERT_EQ(mx.run(tidalrt_k_max), "");
  EXPECT_EQ(y, (std::vector<int64_t>{5, 2, 7}));
  eq.i64({3}, a.data())
      .i64({1}, b.data())
      .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {3}, m.data());
  ASSERT_EQ(eq.run(tidalrt_k_greater), "");
  EXPECT_EQ(m, (std::vector<uint8_t>{1, 0, 1}));
  std::vector<double> da = {1.5, -2.0}, db = {0.5, 4.0}, dy(2);
  KernelCall mn;
  mn.tensor(TIDALRT_ELEMENT_TYPE_F64, {2}, da.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {2}, db.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {2}, dy.data());
  ASSERT_EQ(mn.run(tidalrt_k_min), "");
  EXPECT_EQ(dy, (std::vector<double>{0.5, -2.0}));
}

TEST(Logic, MaskOps) {
  std::vector<uint8_t> a = {0, 0, 1, 1}, b = {0, 1, 0, 1}, y(4);
  struct {
    tidalrt_kernel_fn_t fn;
    std::vector<uint8_t> want;
  } ops[] = {{tidalrt_k_logical_and, {0, 0, 0, 1}},
             {tidalrt_k_logical_or, {0, 1, 1, 1}},
             {tidalrt_k_logical_xor, {0, 1, 1, 0}}};
  for (auto &o : ops) {
    KernelCall call;
    call.tensor(TIDALRT_ELEMENT_TYPE_BOOL, {4}, a.data())
        .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {4}, b.data())
        .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {4}, y.data());
    ASSERT_EQ(call.run(o.fn), "");
    EXPECT_EQ(y, o.want);
  }
  KernelCall n;
  n.tensor(TIDALRT_ELEMENT_TYPE_BOOL, {4}, a.data())
      .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {4}, y.data());
  ASSERT_EQ(n.run(tidalrt_k_logical_not), "");
  EXPECT_EQ(y, (std::vector<uint8_t>{1, 1, 0, 0}));
}

TEST(Logic, WhereMatchesReference) {
  std::mt19937 rng(2);
  for (const Broadcast &bc : broadcasts()) {
    std::vector<uint8_t> c((size_t)numel(bc.c));
    for (uint8_t &v : c)
      v = rng() % 2;
    std::vector<float> a = randomFloats(numel(bc.a), rng);
    std::vector<float> b = randomFloats(numel(bc.b), rng);
    const int64_t n = numel(bc.out);
    std::vector<float> y((size_t)n, -9.0f);
    KernelCall call;
    call.tensor(TIDALRT_ELEMENT_TYPE_BOOL, bc.c, c.data())
        .f32(bc.a, a.data())
        .f32(bc.b, b.data())
        .f32(bc.out, y.data());
    ASSERT_EQ(call.run(tidalrt_k_where), "");
    for (int64_t i = 0; i < n; ++i) {
      float want = c[broadcastOffset(i, bc.out, bc.c)]
                       ? a[broadcastOffset(i, bc.out, bc.a)]
                       : b[broadcastOffset(i, bc.out, bc.b)];
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(y[i])) << i;
      else
        EXPECT_EQ(y[i], want) << "element " << i;
    }
  }
  // Other element sizes: int64 and masks.
  std::vector<uint8_t> c = {1, 0};
  std::vector<int64_t> a = {10, 11}, b = {-1}, y(2);
  KernelCall call;
  call.tensor(TIDALRT_ELEMENT_TYPE_BOOL, {2}, c.data())
      .i64({2}, a.data())
      .i64({1}, b.data())
      .i64({2}, y.data());
  ASSERT_EQ(call.run(tidalrt_k_where), "");
  EXPECT_EQ(y, (std::vector<int64_t>{10, -1}));
}

TEST(Logic, Errors) {
  std::vector<float> f(6);
  std::vector<int64_t> i(6);
  std::vector<uint8_t> m(6);
  auto expect = [](const KernelCall &call, tidalrt_kernel_fn_t fn,
                   const char *what) {
    std::string err = call.run(fn);
    EXPECT_NE(err.find(what), std::string::npos) << err;
  };
  { // operand types differ
    KernelCall call;
    call.f32({6}, f.data())
        .i64({6}, i.data())
        .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {6}, m.data());
    expect(call, tidalrt_k_less, "they must match");
  }
  { // a comparison must produce a mask
    KernelCall call;
    call.f32({6}, f.data()).f32({6}, f.data()).f32({6}, f.data());
    expect(call, tidalrt_k_equal, "bool expected");
  }
  { // shapes that do not broadcast
    KernelCall call;
    call.f32({2, 3}, f.data()).f32({3, 2}, f.data()).f32({2, 3}, f.data());
    expect(call, tidalrt_k_max, "does not broadcast");
  }
  { // logical ops take masks only
    KernelCall call;
    call.f32({6}, f.data())
        .f32({6}, f.data())
        .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {6}, m.data());
    expect(call, tidalrt_k_logical_or, "masks (bool) expected");
  }
  { // where's condition is a mask
    KernelCall call;
    call.f32({6}, f.data())
        .f32({6}, f.data())
        .f32({6}, f.data())
        .f32({6}, f.data());
    expect(call, tidalrt_k_where, "a mask expected");
  }
}

} // namespace
