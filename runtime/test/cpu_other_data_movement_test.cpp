// Unit tests of transpose, concat, split, slice, slice_backward, gather and
// gather_backward (data_movement.cpp) against naive index-by-index
// references of the evaluator's loops (lib/Evaluator/ShapeOps.cpp).
#include "kernel_test_util.h"

#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
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

Shape stridesOf(const Shape &s) {
  Shape st(s.size(), 1);
  for (int i = (int)s.size() - 2; i >= 0; --i)
    st[i] = st[i + 1] * s[i + 1];
  return st;
}

Shape unravel(int64_t flat, const Shape &s) {
  Shape idx(s.size());
  for (int i = (int)s.size() - 1; i >= 0; --i) {
    idx[i] = flat % s[i];
    flat /= s[i];
  }
  return idx;
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

// A tensor of raw bytes with elements of `es` bytes holding distinct
// patterns.
struct Raw {
  tidalrt_element_type_t type;
  size_t es;
  Shape shape;
  std::vector<unsigned char> bytes;
  Raw(tidalrt_element_type_t type, Shape shape, uint32_t seed = 0)
      : type(type), es(tidalrt_element_type_size(type)), shape(shape),
        bytes(numel(shape) * es) {
    std::mt19937 rng(seed);
    for (unsigned char &b : bytes)
      b = (unsigned char)rng();
  }
  void *data() { return bytes.data(); }
  const unsigned char *at(int64_t i) const { return bytes.data() + i * es; }
  unsigned char *at(int64_t i) { return bytes.data() + i * es; }
};

const tidalrt_element_type_t kTypes[] = {
    TIDALRT_ELEMENT_TYPE_BOOL, TIDALRT_ELEMENT_TYPE_F16,
    TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_I64};

} // namespace

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

namespace {

Raw refTranspose(const Raw &in, const Shape &perm) {
  Shape outShape(perm.size());
  for (size_t j = 0; j < perm.size(); ++j)
    outShape[j] = in.shape[perm[j]];
  Raw out(in.type, outShape);
  Shape st = stridesOf(in.shape);
  for (int64_t i = 0; i < numel(outShape); ++i) {
    Shape idx = unravel(i, outShape);
    int64_t flat = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      flat += idx[d] * st[perm[d]];
    memcpy(out.at(i), in.at(flat), in.es);
  }
  return out;
}

void checkTranspose(tidalrt_element_type_t type, const Shape &shape,
                    const Shape &perm, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "seed " << seed << " type " << type);
  Raw in(type, shape, seed);
  Raw want = refTranspose(in, perm);
  Raw out(type, want.shape, seed + 1);
  KernelCall call;
  call.tensor(type, shape, in.data())
      .tensor(type, want.shape, out.data())
      .attrInts(perm);
  ASSERT_EQ(call.run(tidalrt_k_transpose), "");
  EXPECT_TRUE(out.bytes == want.bytes);
}

} // namespace

TEST(OtherDataMovement, TransposeAllPermutations) {
  uint32_t seed = 0;
  const Shape shapes[] = {
      {5}, {3, 7}, {2, 3, 4}, {4, 1, 3, 5}, {2, 3, 1, 2, 3}};
  for (tidalrt_element_type_t type : kTypes)
    for (const Shape &s : shapes) {
      Shape perm(s.size());
      std::iota(perm.begin(), perm.end(), 0);
      do
        checkTranspose(type, s, perm, seed++);
      while (std::next_permutation(perm.begin(), perm.end()));
    }
}

// Shapes that take the tiled and parallel paths.
TEST(OtherDataMovement, TransposeLarge) {
  checkTranspose(TIDALRT_ELEMENT_TYPE_F32, {300, 257}, {1, 0}, 1);
  checkTranspose(TIDALRT_ELEMENT_TYPE_U8, {70, 33, 65}, {2, 0, 1}, 2);
  checkTranspose(TIDALRT_ELEMENT_TYPE_F32, {8, 64, 12, 16}, {0, 2, 1, 3}, 3);
  checkTranspose(TIDALRT_ELEMENT_TYPE_I64, {2, 32, 30, 30}, {0, 2, 3, 1}, 4);
  checkTranspose(TIDALRT_ELEMENT_TYPE_F16, {3, 100, 200}, {0, 2, 1}, 5);
}

TEST(OtherDataMovement, TransposeErrors) {
  std::vector<float> x(6);
  KernelCall call;
  call.f32({2, 3}, x.data()).f32({3, 2}, x.data()).attrInts({0, 0});
  std::string e = call.run(tidalrt_k_transpose);
  EXPECT_TRUE(contains(e, "INVALID_ARGUMENT: transpose (op 0): perm is not a "
                          "permutation"))
      << e;
  KernelCall shape;
  shape.f32({2, 3}, x.data()).f32({2, 3}, x.data()).attrInts({1, 0});
  e = shape.run(tidalrt_k_transpose);
  EXPECT_TRUE(contains(e, "output dimension 0 is 2")) << e;
  std::vector<int64_t> y(6);
  KernelCall type;
  type.f32({2, 3}, x.data()).i64({3, 2}, y.data()).attrInts({1, 0});
  e = type.run(tidalrt_k_transpose);
  EXPECT_TRUE(contains(e, "element type")) << e;
  KernelCall weird;
  weird.tensor((tidalrt_element_type_t)99, {2, 3}, x.data())
      .tensor((tidalrt_element_type_t)99, {3, 2}, x.data())
      .attrInts({1, 0});
  e = weird.run(tidalrt_k_transpose);
  EXPECT_TRUE(contains(e, "UNSUPPORTED")) << e;
}

//===----------------------------------------------------------------------===//
// concat and split
//===----------------------------------------------------------------------===//

TEST(OtherDataMovement, ConcatAndSplit) {
  struct Case {
    Shape base; // the whole, with the axis dimension replaced by parts
    int axis;
    std::vector<int64_t> parts;
    bool large = false; // float32 only
  };
  const Case cases[] = {{{0, 3}, 0, {2, 5, 1}},
                        {{4, 0}, 1, {3, 1}},
                        {{2, 0, 5}, 1, {1, 0, 4}},
                        {{2, 3, 0}, 2, {7, 9}},
                        {{0}, 0, {6}},
                        {{3, 2, 0}, -1, {1, 2}},
                        // Large (parallel) ones, float32 only.
                        {{64, 0, 130}, 1, {2, 3}, true},
                        {{1, 0, 40000}, 1, {2, 5}, true}};
  uint32_t seed = 0;
  for (tidalrt_element_type_t type : kTypes)
    for (const Case &c : cases) {
      if (c.large && type != TIDALRT_ELEMENT_TYPE_F32)
        continue;
      SCOPED_TRACE(::testing::Message() << "seed " << seed);
      int axis = c.axis < 0 ? c.axis + (int)c.base.size() : c.axis;
      std::vector<Raw> parts;
      Shape whole = c.base;
      whole[axis] = 0;
      for (int64_t p : c.parts) {
        Shape s = c.base;
        s[axis] = p;
        whole[axis] += p;
        parts.emplace_back(type, s, seed++);
      }
      // Reference: walk the whole and pick the part.
      Raw want(type, whole);
      for (int64_t i = 0; i < numel(whole); ++i) {
        Shape idx = unravel(i, whole);
        int64_t k = idx[axis];
        size_t p = 0;
        while (k >= parts[p].shape[axis])
          k -= parts[p++].shape[axis];
        idx[axis] = k;
        int64_t flat = 0;
        Shape st = stridesOf(parts[p].shape);
        for (size_t d = 0; d < idx.size(); ++d)
          flat += idx[d] * st[d];
        memcpy(want.at(i), parts[p].at(flat), want.es);
      }
      Raw out(type, whole, seed++);
      KernelCall call;
      for (Raw &p : parts)
        call.tensor(type, p.shape, p.data());
      call.tensor(type, whole, out.data()).attrInt(c.axis);
      ASSERT_EQ(call.run(tidalrt_k_concat), "");
      EXPECT_TRUE(out.bytes == want.bytes);

      std::vector<Raw> back;
      for (Raw &p : parts)
        back.emplace_back(type, p.shape, seed++);
      KernelCall split;
      split.tensor(type, whole, want.data());
      for (Raw &p : back)
        split.tensor(type, p.shape, p.data());
      split.attrInt(c.axis).attrInts(c.parts);
      ASSERT_EQ(split.run(tidalrt_k_split), "");
      for (size_t p = 0; p < parts.size(); ++p)
        EXPECT_TRUE(back[p].bytes == parts[p].bytes) << "part " << p;
    }
}

TEST(OtherDataMovement, ConcatSplitErrors) {
  std::vector<float> a(6), b(8), w(14);
  KernelCall call;
  call.f32({2, 3}, a.data()).f32({2, 4}, b.data()).f32({4, 3}, w.data());
  call.attrInt(0);
  std::string e = call.run(tidalrt_k_concat);
  EXPECT_TRUE(contains(e, "INVALID_ARGUMENT: concat (op 0): input 1 does not "
                          "match the whole outside axis 0"))
      << e;
  KernelCall split;
  split.f32({2, 7}, w.data()).f32({2, 3}, a.data()).f32({2, 4}, b.data());
  split.attrInt(1).attrInts({4, 3});
  e = split.run(tidalrt_k_split);
  EXPECT_TRUE(contains(e, "output 0 does not have size 4")) << e;
}

//===----------------------------------------------------------------------===//
// slice and slice_backward
//===----------------------------------------------------------------------===//

namespace {

struct SliceCase {
  Shape in;
  Shape starts, ends, steps;
};

Shape sliceShape(const SliceCase &c) {
  Shape out(c.in.size());
  for (size_t d = 0; d < c.in.size(); ++d) {
    int64_t s = c.steps[d];
    int64_t n = s > 0 ? (c.ends[d] - c.starts[d] + s - 1) / s
                      : (c.starts[d] - c.ends[d] - s - 1) / -s;
    out[d] = std::max<int64_t>(0, n);
  }
  return out;
}

// Flat input index of each output element.
std::vector<int64_t> sliceMap(const SliceCase &c) {
  Shape out = sliceShape(c), st = stridesOf(c.in);
  std::vector<int64_t> map(numel(out));
  for (int64_t i = 0; i < numel(out); ++i) {
    Shape idx = unravel(i, out);
    int64_t flat = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      flat += (c.starts[d] + idx[d] * c.steps[d]) * st[d];
    map[i] = flat;
  }
  return map;
}

const SliceCase kSlices[] = {
    {{10}, {2}, {8}, {1}},
    {{10}, {9}, {-1}, {-1}},
    {{10}, {8}, {0}, {-3}},
    {{4, 6}, {1, 0}, {3, 6}, {1, 1}},
    {{4, 6}, {0, 1}, {4, 5}, {1, 2}},
    {{4, 6}, {3, 5}, {-1, -1}, {-1, -1}},
    {{3, 4, 5}, {0, 1, 0}, {3, 3, 5}, {1, 1, 1}},
    {{3, 4, 5}, {2, 0, 4}, {-1, 4, 0}, {-2, 1, -1}},
    {{2, 3, 4, 5}, {0, 0, 1, 0}, {2, 3, 3, 5}, {1, 1, 1, 1}},
    {{5, 5}, {2, 2}, {2, 5}, {1, 1}}, // empty
    {{64, 40, 50}, {1, 0, 3}, {63, 40, 50}, {1, 1, 2}},
    {{64, 40, 50}, {63, 5, 0}, {-1, 35, 50}, {-1, 1, 1}}};

} // namespace

TEST(OtherDataMovement, SliceMatchesReference) {
  uint32_t seed = 0;
  for (tidalrt_element_type_t type : kTypes)
    for (const SliceCase &c : kSlices) {
      if (numel(c.in) > 10000 && type != TIDALRT_ELEMENT_TYPE_F32)
        continue; // the large ones in float32 only
      SCOPED_TRACE(::testing::Message() << "seed " << seed);
      Raw in(type, c.in, seed++);
      Shape os = sliceShape(c);
      std::vector<int64_t> map = sliceMap(c);
      Raw want(type, os), out(type, os, seed++);
      for (size_t i = 0; i < map.size(); ++i)
        memcpy(want.at(i), in.at(map[i]), in.es);
      KernelCall call;
      call.tensor(type, c.in, in.data()).tensor(type, os, out.data());
      call.attrInts(c.ends).attrInts(c.starts).attrInts(c.steps);
      ASSERT_EQ(call.run(tidalrt_k_slice), "");
      EXPECT_TRUE(out.bytes == want.bytes);
    }
}

TEST(OtherDataMovement, SliceBackwardMatchesReference) {
  uint32_t seed = 0;
  for (const SliceCase &c : kSlices) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Shape os = sliceShape(c);
    std::mt19937 rng(seed++);
    std::vector<float> g(numel(os)), gi(numel(c.in), -7.0f),
        want(numel(c.in), 0.0f);
    for (float &v : g)
      v = (float)(rng() % 1000) / 7.0f;
    std::vector<int64_t> map = sliceMap(c);
    for (size_t i = 0; i < map.size(); ++i)
      want[map[i]] += g[i];
    KernelCall call;
    call.f32(os, g.data()).f32(c.in, gi.data());
    call.attrInts(c.ends).attrInts(c.starts).attrInts(c.steps);
    ASSERT_EQ(call.run(tidalrt_k_slice_backward), "");
    EXPECT_EQ(gi, want);
  }
}

TEST(OtherDataMovement, SliceErrors) {
  std::vector<float> x(10), y(5);
  KernelCall call;
  call.f32({10}, x.data()).f32({5}, y.data());
  call.attrInts({12}).attrInts({6}).attrInts({1});
  std::string e = call.run(tidalrt_k_slice);
  EXPECT_TRUE(contains(e, "INVALID_ARGUMENT: slice (op 0): slice index 10 is "
                          "out of range [0, 10) in dimension 0"))
      << e;
  KernelCall zero;
  zero.f32({10}, x.data()).f32({5}, y.data());
  zero.attrInts({5}).attrInts({0}).attrInts({0});
  e = zero.run(tidalrt_k_slice_backward);
  EXPECT_TRUE(contains(e, "step of dimension 0 is 0")) << e;
}

//===----------------------------------------------------------------------===//
// gather and gather_backward
//===----------------------------------------------------------------------===//

namespace {

struct GatherCase {
  Shape data;
  int axis;
  Shape indicesShape;
  std::vector<int64_t> indices;
};

Shape gatherShape(const GatherCase &c) {
  Shape s(c.data.begin(), c.data.begin() + c.axis);
  s.insert(s.end(), c.indicesShape.begin(), c.indicesShape.end());
  s.insert(s.end(), c.data.begin() + c.axis + 1, c.data.end());
  return s;
}

// Flat data index of each gathered element.
std::vector<int64_t> gatherMap(const GatherCase &c) {
  int64_t outer = 1, inner = 1, dim = c.data[c.axis];
  for (int d = 0; d < c.axis; ++d)
    outer *= c.data[d];
  for (size_t d = c.axis + 1; d < c.data.size(); ++d)
    inner *= c.data[d];
  std::vector<int64_t> map;
  int64_t n = c.indices.size();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t k = c.indices[j] < 0 ? c.indices[j] + dim : c.indices[j];
        map.push_back((o * dim + k) * inner + i);
      }
  return map;
}

std::vector<GatherCase> gatherCases() {
  std::vector<GatherCase> cases = {
      {{10, 4}, 0, {3}, {0, 9, -1}},
      {{10, 4}, 0, {2, 2}, {3, 3, -10, 5}},
      {{3, 5, 2}, 1, {4}, {4, 0, -2, 4}},
      {{3, 5, 7}, 2, {2, 3}, {6, 0, 1, -7, 3, 3}},
      {{6}, 0, {}, {-2}},
      {{2, 3, 1}, 1, {0}, {}},
  };
  // An embedding: a large table and many repeated tokens.
  GatherCase emb{{1000, 64}, 0, {8, 100}, {}};
  std::mt19937 rng(5);
  for (int i = 0; i < 800; ++i)
    emb.indices.push_back((int64_t)(rng() % 1000) - (i % 3 == 0 ? 1000 : 0));
  cases.push_back(emb);
  return cases;
}

} // namespace

TEST(OtherDataMovement, GatherMatchesReference) {
  uint32_t seed = 0;
  for (tidalrt_element_type_t type : kTypes)
    for (const GatherCase &c : gatherCases())
      for (bool narrow : {false, true}) {
        if (numel(c.data) > 10000 && type != TIDALRT_ELEMENT_TYPE_F32)
          continue; // the large ones in float32 only
        SCOPED_TRACE(::testing::Message() << "seed " << seed);
        Raw data(type, c.data, seed++);
        Shape os = gatherShape(c);
        std::vector<int64_t> map = gatherMap(c);
        Raw want(type, os), out(type, os, seed++);
        for (size_t i = 0; i < map.size(); ++i)
          memcpy(want.at(i), data.at(map[i]), data.es);
        std::vector<int64_t> idx = c.indices;
        std::vector<int32_t> idx32(idx.begin(), idx.end());
        KernelCall call;
        call.tensor(type, c.data, data.data());
        if (narrow)
          call.tensor(TIDALRT_ELEMENT_TYPE_I32, c.indicesShape, idx32.data());
        else
          call.i64(c.indicesShape, idx.data());
        call.tensor(type, os, out.data()).attrInt(c.axis);
        ASSERT_EQ(call.run(tidalrt_k_gather), "");
        EXPECT_TRUE(out.bytes == want.bytes);
      }
}

TEST(OtherDataMovement, GatherBackwardMatchesReference) {
  uint32_t seed = 0;
  int threads = omp_get_max_threads();
  for (const GatherCase &c : gatherCases()) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Shape os = gatherShape(c);
    std::mt19937 rng(seed++);
    std::vector<float> g(numel(os)), want(numel(c.data), 0.0f);
    for (float &v : g)
      v = (float)((int)(rng() % 2001) - 1000) / 64.0f; // sums stay exact
    std::vector<int64_t> map = gatherMap(c), idx = c.indices;
    for (size_t i = 0; i < map.size(); ++i)
      want[map[i]] += g[i];
    for (int t : {1, std::max(2, threads)}) {
      omp_set_num_threads(t);
      std::vector<float> gi(numel(c.data), -7.0f);
      KernelCall call;
      call.f32(os, g.data()).i64(c.indicesShape, idx.data());
      call.f32(c.data, gi.data()).attrInt(c.axis);
      ASSERT_EQ(call.run(tidalrt_k_gather_backward), "");
      EXPECT_EQ(gi, want);
    }
  }
  omp_set_num_threads(threads);
}

TEST(OtherDataMovement, GatherIndexOutOfRange) {
  std::vector<float> data(12), out(6);
  std::vector<int64_t> idx = {1, 0, 2, -5, 4, 1};
  KernelCall call;
  call.f32({4, 3}, data.data())
      .i64({2, 3}, idx.data())
      .f32({2, 3, 3}, out.data())
      .attrInt(0);
  std::string e = call.run(tidalrt_k_gather);
  EXPECT_TRUE(contains(e, "INVALID_ARGUMENT: gather (op 0): index -5 at "
                          "indices[1, 0] is out of range [-4, 4)"))
      << e;
  idx[3] = 4;
  KernelCall back;
  back.f32({2, 3, 3}, out.data())
      .i64({2, 3}, idx.data())
      .f32({4, 3}, data.data())
      .attrInt(0);
  e = back.run(tidalrt_k_gather_backward);
  EXPECT_TRUE(contains(e, "index 4 at indices[1, 0] is out of range")) << e;
  std::vector<float> fidx(6);
  KernelCall type;
  type.f32({4, 3}, data.data())
      .f32({6}, fidx.data())
      .f32({6, 3}, out.data())
      .attrInt(0);
  e = type.run(tidalrt_k_gather);
  EXPECT_TRUE(contains(e, "UNSUPPORTED") && contains(e, "indices")) << e;
}
