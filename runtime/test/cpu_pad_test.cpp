// Tests of pad and pad_backward (cpu/pad.cpp) against a naive reference
// written here (NumPy's pad modes; the backward as a scatter-add of the
// output gradient), and of their CUDA twins' host emulation
// (tidalrt_emu_k_pad*) against the CPU kernels, bitwise.
#include "kernel_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" tidalrt_status_t tidalrt_emu_k_pad(tidalrt_context_t *,
                                              const int64_t *, void *const *);
extern "C" tidalrt_status_t
tidalrt_emu_k_pad_backward(tidalrt_context_t *, const int64_t *, void *const *);

using tidalrt_test::KernelCall;

namespace {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

struct PadCase {
  Shape in;
  std::vector<int64_t> pads;
};

const PadCase kCases[] = {
    {{5}, {2, 3}},
    {{2, 3, 4, 5}, {0, 0, 1, 2, 0, 0, 3, 1}},
    {{1, 2, 3, 3}, {0, 0, 0, 1, 0, 0, 0, 1}},
    {{3, 4}, {2, 0, 0, 3}},
    {{2, 1, 4}, {0, 0, 3, 0, 0, 0}},
    {{2, 3}, {0, 0, 0, 0}},
    {{1, 2, 3, 4, 5}, {0, 0, 1, 1, 2, 0, 0, 1, 2, 3}},
};

// Input coordinate read by output coordinate o, or -1 (the constant fill).
int64_t sourceRef(int mode, int64_t o, int64_t b, int64_t n) {
  int64_t i = o - b;
  if (i >= 0 && i < n)
    return i;
  if (mode == 0)
    return -1;
  if (mode == 2)
    return i < 0 ? 0 : n - 1;
  while (i < 0 || i >= n) // reflect (NumPy 'reflect')
    i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

Shape outShape(const PadCase &c) {
  Shape o = c.in;
  for (size_t d = 0; d < o.size(); ++d)
    o[d] += c.pads[d] + c.pads[o.size() + d];
  return o;
}

// The input flat offset output flat element i reads, or -1.
int64_t sourceOffsetRef(const PadCase &c, int mode, int64_t i) {
  Shape out = outShape(c);
  int64_t off = 0, stride = 1;
  for (int d = (int)out.size() - 1; d >= 0; --d) {
    int64_t o = i % out[d];
    i /= out[d];
    int64_t s = sourceRef(mode, o, c.pads[d], c.in[d]);
    if (s < 0)
      return -1;
    off += s * stride;
    stride *= c.in[d];
  }
  return off;
}

bool reflectable(const PadCase &c) {
  for (size_t d = 0; d < c.in.size(); ++d)
    if (c.pads[d] > c.in[d] - 1 || c.pads[c.in.size() + d] > c.in[d] - 1)
      if (c.pads[d] || c.pads[c.in.size() + d])
        return false;
  return true;
}

std::string runPad(tidalrt_kernel_fn_t fn, const PadCase &c, int mode,
                   double value, std::vector<float> &x, std::vector<float> &y) {
  KernelCall call;
  call.f32(c.in, x.data()).f32(outShape(c), y.data());
  call.attrInt(mode).attrInts(c.pads).attrFloat(value);
  return call.run(fn);
}

std::string runPadBackward(tidalrt_kernel_fn_t fn, const PadCase &c, int mode,
                           std::vector<float> &g, std::vector<float> &gi) {
  KernelCall call;
  call.f32(outShape(c), g.data()).f32(c.in, gi.data());
  call.attrInt(mode).attrInts(c.pads);
  return call.run(fn);
}

TEST(Pad, ForwardAndBackwardMatchReference) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist;
  for (const PadCase &c : kCases)
    for (int mode : {0, 1, 2}) {
      if (mode == 1 && !reflectable(c))
        continue;
      SCOPED_TRACE("mode " + std::to_string(mode) + " case rank " +
                   std::to_string(c.in.size()));
      std::vector<float> x((size_t)numel(c.in));
      for (float &v : x)
        v = dist(rng);
      const int64_t n = numel(outShape(c));
      std::vector<float> y((size_t)n), ye((size_t)n);
      ASSERT_EQ(runPad(tidalrt_k_pad, c, mode, -1.5, x, y), "");
      for (int64_t i = 0; i < n; ++i) {
        int64_t s = sourceOffsetRef(c, mode, i);
        EXPECT_EQ(y[i], s < 0 ? -1.5f : x[s]) << "output " << i;
      }
      ASSERT_EQ(runPad(tidalrt_emu_k_pad, c, mode, -1.5, x, ye), "");
      EXPECT_EQ(std::memcmp(y.data(), ye.data(), 4 * n), 0);

      std::vector<float> g((size_t)n);
      for (float &v : g)
        v = dist(rng);
      std::vector<double> want(x.size(), 0.0);
      for (int64_t i = 0; i < n; ++i)
        if (int64_t s = sourceOffsetRef(c, mode, i); s >= 0)
          want[s] += g[i];
      std::vector<float> gi(x.size()), gie(x.size());
      ASSERT_EQ(runPadBackward(tidalrt_k_pad_backward, c, mode, g, gi), "");
      for (size_t j = 0; j < x.size(); ++j)
        EXPECT_NEAR(gi[j], want[j], 1e-6 * (1 + std::fabs(want[j])))
            << "grad_input " << j;
      ASSERT_EQ(runPadBackward(tidalrt_emu_k_pad_backward, c, mode, g, gie),
                "");
      EXPECT_EQ(std::memcmp(gi.data(), gie.data(), 4 * x.size()), 0);
    }
}

TEST(Pad, IntegerAndBoolFill) {
  std::vector<int64_t> x = {1, 2}, y(4);
  KernelCall call;
  call.i64({2}, x.data()).i64({4}, y.data());
  call.attrInt(0).attrInts({1, 1}).attrFloat(7.0);
  ASSERT_EQ(call.run(tidalrt_k_pad), "");
  EXPECT_EQ(y, (std::vector<int64_t>{7, 1, 2, 7}));
  std::vector<uint8_t> m = {1, 0}, my(3);
  KernelCall edge;
  edge.tensor(TIDALRT_ELEMENT_TYPE_BOOL, {2}, m.data())
      .tensor(TIDALRT_ELEMENT_TYPE_BOOL, {3}, my.data());
  edge.attrInt(2).attrInts({0, 1}).attrFloat(0.0);
  ASSERT_EQ(edge.run(tidalrt_k_pad), "");
  EXPECT_EQ(my, (std::vector<uint8_t>{1, 0, 0}));
}

TEST(Pad, Errors) {
  std::vector<float> x(6), y(12);
  auto expect = [](const KernelCall &call, tidalrt_kernel_fn_t fn,
                   const char *what) {
    std::string err = call.run(fn);
    EXPECT_NE(err.find(what), std::string::npos) << err;
  };
  {
    KernelCall call; // reflect beyond the size minus one
    call.f32({2, 3}, x.data()).f32({2, 6}, y.data());
    call.attrInt(1).attrInts({0, 3, 0, 0}).attrFloat(0.0);
    expect(call, tidalrt_k_pad, "exceeds the size minus one");
  }
  {
    KernelCall call; // shapes disagree with the pads
    call.f32({2, 3}, x.data()).f32({2, 6}, y.data());
    call.attrInt(0).attrInts({0, 1, 0, 1}).attrFloat(0.0);
    expect(call, tidalrt_k_pad, "padded is not the output's shape");
  }
  {
    KernelCall call; // an unknown mode
    call.f32({2, 3}, x.data()).f32({2, 3}, y.data());
    call.attrInt(5).attrInts({0, 0, 0, 0}).attrFloat(0.0);
    expect(call, tidalrt_k_pad, "mode 5");
  }
}

} // namespace
