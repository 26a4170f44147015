// scatter_extreme (gather.cpp; ONNX ScatterElements/ScatterND reduction max
// and min) against an index-by-index reference, at one thread and many, and
// its CUDA kernel's emulation (tidalrt_emu_k_scatter_extreme) against it
// bit for bit: both start from data and keep the largest (smallest) update
// in index order, and a NaN wins.
#include "kernel_test_util.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

extern "C" tidalrt_status_t
tidalrt_emu_k_scatter_extreme(tidalrt_context_t *context, const int64_t *desc,
                              void *const *buffers);

using tidalrt_test::KernelCall;

namespace {

using Shape = std::vector<int64_t>;

struct Case {
  Shape data;
  int axis;
  Shape indexShape;
};

int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

// Runs `kernel` on copies; returns its output (or fails the test).
std::vector<float>
run(tidalrt_status_t (*kernel)(tidalrt_context_t *, const int64_t *,
                               void *const *),
    const Case &c, std::vector<float> data, std::vector<int64_t> idx,
    std::vector<float> upd, const Shape &updShape, bool largest) {
  std::vector<float> out(data.size(), -123.0f);
  KernelCall call;
  call.f32(c.data, data.data())
      .i64(c.indexShape, idx.data())
      .f32(updShape, upd.data())
      .f32(c.data, out.data())
      .attrInt(c.axis)
      .attrInt(largest ? 1 : 0);
  EXPECT_EQ(call.run(kernel), "");
  return out;
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(ScatterExtreme, MatchesReferenceAndEmulation) {
  const Case cases[] = {{{7, 5}, 0, {12}},
                        {{3, 6, 4}, 1, {2, 5}},
                        {{4, 9}, 1, {20}},
                        {{2, 3, 130}, 2, {300}},
                        {{5}, 0, {0}}};
  int threads = omp_get_max_threads();
  uint32_t seed = 7;
  for (const Case &c : cases) {
    std::mt19937 rng(seed++);
    int64_t outer = 1, inner = 1, dim = c.data[c.axis];
    for (int d = 0; d < c.axis; ++d)
      outer *= c.data[d];
    for (size_t d = c.axis + 1; d < c.data.size(); ++d)
      inner *= c.data[d];
    int64_t n = numel(c.indexShape);
    Shape updShape(c.data.begin(), c.data.begin() + c.axis);
    updShape.insert(updShape.end(), c.indexShape.begin(), c.indexShape.end());
    updShape.insert(updShape.end(), c.data.begin() + c.axis + 1, c.data.end());
    // Few distinct values: ties between data and updates are common.
    std::vector<float> data(numel(c.data)), upd(numel(updShape));
    for (float &v : data)
      v = (float)((int)(rng() % 9) - 4);
    for (float &v : upd)
      v = (float)((int)(rng() % 9) - 4);
    if (!upd.empty())
      upd[upd.size() / 2] = NAN;
    std::vector<int64_t> idx(n);
    for (int64_t &k : idx)
      k = (int64_t)(rng() % (2 * dim)) - dim; // negative ones too
    for (bool largest : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "axis " << c.axis << " updates " << n
                                        << " largest " << largest);
      std::vector<float> want = data;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < n; ++j) {
          int64_t k = idx[j] < 0 ? idx[j] + dim : idx[j];
          for (int64_t i = 0; i < inner; ++i) {
            float v = upd[(o * n + j) * inner + i];
            float &cur = want[(o * dim + k) * inner + i];
            if (std::isnan(v) || (largest ? v > cur : v < cur))
              cur = v;
          }
        }
      for (int t : {1, std::max(2, threads)}) {
        omp_set_num_threads(t);
        EXPECT_TRUE(sameBits(run(tidalrt_k_scatter_extreme, c, data, idx, upd,
                                 updShape, largest),
                             want));
      }
      EXPECT_TRUE(sameBits(run(tidalrt_emu_k_scatter_extreme, c, data, idx, upd,
                               updShape, largest),
                           want));
    }
  }
  omp_set_num_threads(threads);
}

TEST(ScatterExtreme, Errors) {
  std::vector<float> data(12), upd(6), out(12);
  std::vector<int64_t> idx = {1, 4};
  auto call = [&](Shape updShape) {
    KernelCall k;
    k.f32({4, 3}, data.data())
        .i64({2}, idx.data())
        .f32(updShape, upd.data())
        .f32({4, 3}, out.data())
        .attrInt(0)
        .attrInt(1);
    return k;
  };
  std::string e = call({2, 3}).run(tidalrt_k_scatter_extreme);
  EXPECT_NE(e.find("index 4 at indices[1] is out of range [-4, 4)"),
            std::string::npos)
      << e;
  idx[1] = 0;
  e = call({3, 2}).run(tidalrt_k_scatter_extreme);
  EXPECT_NE(e.find("updates shape is not data[:axis] + indices"),
            std::string::npos)
      << e;
  EXPECT_EQ(call({3, 2}).run(tidalrt_emu_k_scatter_extreme), e);
}

} // namespace
