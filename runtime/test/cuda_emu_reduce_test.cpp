// cuda_emu_reduce_test.cpp - the emulated CUDA broadcast_to, reduction and
// arg-reduction kernels against the CPU kernels, as
// cuda_emu_elementwise_harness.h compares them.
#include "cuda_emu_elementwise_harness.h"

using namespace emu_test;

namespace {

class CudaEmuReduce : public CudaEmuFixture {};

//===----------------------------------------------------------------------===//
// broadcast_to
//===----------------------------------------------------------------------===//

TEST_P(CudaEmuReduce, BroadcastTo) {
  struct Shapes {
    Shape x, y;
  };
  const Shapes shapes[] = {{{}, {3, 4}},        {{}, {}},
                           {{1}, {0}},          {{4}, {4}},
                           {{3, 1}, {2, 3, 5}}, {{2, 1, 3}, {2, 5, 3}},
                           {{1, 7}, {300, 7}},  {{5}, {2, 0, 5}},
                           {{1, 1}, {40001}},   {{129, 1}, {129, 300}}};
  Gen g(14);
  for (tidalrt_element_type_t t :
       {TIDALRT_ELEMENT_TYPE_BOOL, TIDALRT_ELEMENT_TYPE_U8,
        TIDALRT_ELEMENT_TYPE_F16, TIDALRT_ELEMENT_TYPE_BF16,
        TIDALRT_ELEMENT_TYPE_I16, TIDALRT_ELEMENT_TYPE_F32,
        TIDALRT_ELEMENT_TYPE_U32, TIDALRT_ELEMENT_TYPE_F64,
        TIDALRT_ELEMENT_TYPE_I64}) {
    for (const Shapes &s : shapes) {
      Case c;
      c.in(t, s.x, values(t, numel(s.x), g)).out(t, s.y);
      c.what = std::string(name(t)) + " " + str(s.x) + " -> " + str(s.y);
      check(KERNEL(broadcast_to), c);
    }
  }
  const tidalrt_element_type_t f32 = TIDALRT_ELEMENT_TYPE_F32;
  Case shape;
  shape.in(f32, {3}, values(f32, 3, g)).out(f32, {4});
  shape.what = "shapes";
  checkError(KERNEL(broadcast_to), shape, "INVALID_ARGUMENT");
  Case types;
  types.in(f32, {3}, values(f32, 3, g)).out(TIDALRT_ELEMENT_TYPE_I32, {3});
  types.what = "types";
  checkError(KERNEL(broadcast_to), types, "INVALID_ARGUMENT");
  Case absent;
  absent.absent().out(f32, {3});
  absent.what = "absent input";
  checkError(KERNEL(broadcast_to), absent, "INVALID_ARGUMENT");
}

//===----------------------------------------------------------------------===//
// reduce_sum, reduce_mean
//===----------------------------------------------------------------------===//

// The result shape of reducing `s` over `axes`.
Shape reducedShape(const Shape &s, const std::vector<int64_t> &axes,
                   bool keepdims) {
  Shape r;
  for (size_t d = 0; d < s.size(); ++d) {
    bool red = false;
    for (int64_t a : axes)
      red = red || a == (int64_t)d;
    if (!red)
      r.push_back(s[d]);
    else if (keepdims)
      r.push_back(1);
  }
  return r;
}

Case reduceCase(tidalrt_element_type_t t, const Shape &s,
                const std::vector<int64_t> &axes, bool keepdims, Gen &g) {
  Fill f;
  f.fullRange = true; // integers wrap
  f.lo = -100, f.hi = 100;
  f.specials = false;
  Case c;
  c.in(t, s, values(t, numel(s), g, f))
      .out(t, reducedShape(s, axes, keepdims))
      .attrInts(axes)
      .attrInt(keepdims);
  std::string a;
  for (int64_t x : axes)
    a += std::to_string(x) + " ";
  c.what = std::string(name(t)) + " " + str(s) + " axes " + a +
           (keepdims ? "keepdims" : "");
  return c;
}

// float32 sums of a reduced innermost axis add in another order on the
// CPU's AVX2 path: a last-bit difference, rarely.
constexpr Tol kSumOrder = {2.5e-7, 1e-30};

const tidalrt_element_type_t kReduceTypes[] = {
    TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64,
    TIDALRT_ELEMENT_TYPE_I64, TIDALRT_ELEMENT_TYPE_I32};

// Every axis subset of a 4-D shape (with size-1 dimensions), both kernels.
TEST_P(CudaEmuReduce, ReduceAxisSubsets) {
  Gen g(15);
  const Shape s = {3, 1, 5, 6, 7};
  for (const Kernel &k : {KERNEL(reduce_sum), KERNEL(reduce_mean)}) {
    for (tidalrt_element_type_t t : kReduceTypes) {
      for (int mask = 0; mask < 32; ++mask) {
        std::vector<int64_t> axes;
        for (int d = 0; d < 5; ++d)
          if (mask >> d & 1)
            axes.push_back(d);
        check(k, reduceCase(t, s, axes, mask & 1, g), kSumOrder);
      }
    }
  }
}

// Rank 0 and 1, identity (only size-1 axes), empty results and empty
// reductions, and the shapes where the CPU splits a reduction into blocks:
// columns of one row, row blocks of a reduced innermost axis, row blocks of
// a kept innermost axis.
TEST_P(CudaEmuReduce, ReduceShapes) {
  struct R {
    Shape s;
    std::vector<int64_t> axes;
  };
  const R cases[] = {
      {{}, {}},
      {{7}, {0}},
      {{7}, {}},
      {{1, 5}, {0}},
      {{0, 5}, {1}},
      {{5, 0}, {1}},
      {{5, 0, 3}, {0, 1}},
      {{70000}, {0}},          // one output, split into column blocks
      {{100, 1001}, {0, 1}},   // all axes: one segment, column blocks
      {{40, 3, 2000}, {0, 2}}, // three outputs, row blocks of 16 rows
      {{9, 70001}, {1}},       // 9 outputs, column blocks
      {{20000, 5}, {0}},       // five columns, 13 row blocks
      {{3, 30000, 4}, {1}},    // kept inner segment, row blocks
      {{6, 2000, 3, 7}, {1, 3}},
      {{64, 3000}, {1}}, // 64 outputs: not split
      {{40, 1100}, {0}}, // kept inner > 1024 columns, row blocks
      {{5000, 33}, {0}}};
  Gen g(16);
  for (const Kernel &k : {KERNEL(reduce_sum), KERNEL(reduce_mean)}) {
    for (tidalrt_element_type_t t : kReduceTypes) {
      for (const R &r : cases) {
        for (bool keepdims : {false, true}) {
          if (keepdims && numel(r.s) > 10000)
            continue; // the same call but for the result's shape
          Case c = reduceCase(t, r.s, r.axes, keepdims, g);
          check(k, c, kSumOrder);
          // Unprepared (scratch grows on demand): the same.
          Outcome a = runCase(c, k.emu), b = runCase(c, k.emu, false);
          expectSame(c, a, b, Tol(), "unprepared");
        }
      }
    }
  }
}

// Values of very different magnitudes (+-1e20, +-1, +-1e-3), whose sums
// depend on the order of the additions even after rounding to float32:
// the kernels must add in the CPU's order, including its blocks.
TEST_P(CudaEmuReduce, ReduceOrder) {
  struct R {
    Shape s;
    std::vector<int64_t> axes;
    bool innerReduced;
  };
  const R cases[] = {
      {{70000}, {0}, true},           {{40, 3, 2000}, {0, 2}, true},
      {{9, 70001}, {1}, true},        {{300, 77}, {1}, true},
      {{20000, 5}, {0}, false},       {{3, 30000, 4}, {1}, false},
      {{40, 1100}, {0}, false},       {{1001, 13}, {0}, false},
      {{6, 2000, 3, 7}, {1, 3}, true}};
  const double mags[] = {1e20, 1.0, 1e-3};
  Gen g(18);
  for (const Kernel &k : {KERNEL(reduce_sum), KERNEL(reduce_mean)}) {
    for (tidalrt_element_type_t t :
         {TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64}) {
      for (const R &r : cases) {
        // The CPU's AVX2 path adds float32 rows in another order.
        if (!scalar() && t == TIDALRT_ELEMENT_TYPE_F32 && r.innerReduced)
          continue;
        const int64_t n = numel(r.s);
        std::vector<double> v((size_t)n);
        for (double &x : v)
          x = mags[g.integer(0, 2)] * (g.integer(0, 1) ? 1.0 : -1.0);
        Case c;
        c.in(t, r.s,
             t == TIDALRT_ELEMENT_TYPE_F32
                 ? bytesOf(std::vector<float>(v.begin(), v.end()))
                 : bytesOf(v))
            .out(t, reducedShape(r.s, r.axes, false))
            .attrInts(r.axes)
            .attrInt(0);
        c.what = std::string(name(t)) + " " + str(r.s);
        check(k, c);
      }
    }
  }
}

TEST_P(CudaEmuReduce, ReduceErrors) {
  const tidalrt_element_type_t f32 = TIDALRT_ELEMENT_TYPE_F32;
  Gen g(17);
  for (const Kernel &k : {KERNEL(reduce_sum), KERNEL(reduce_mean)}) {
    Case range = reduceCase(f32, {3, 4}, {2}, false, g);
    range.tensors[1].dims = {3, 4};
    range.what += " out of range";
    checkError(k, range, "INVALID_ARGUMENT");
    Case neg = reduceCase(f32, {3, 4}, {0}, false, g);
    neg.attrs[0].ints = {-1};
    neg.what += " negative axis";
    checkError(k, neg, "INVALID_ARGUMENT");
    Case twice = reduceCase(f32, {3, 4}, {1}, false, g);
    twice.attrs[0].ints = {1, 1};
    twice.what += " axis twice";
    checkError(k, twice, "INVALID_ARGUMENT");
    Case shape = reduceCase(f32, {3, 4}, {1}, false, g);
    shape.tensors[1].dims = {4};
    shape.what += " result shape";
    checkError(k, shape, "INVALID_ARGUMENT");
    Case types = reduceCase(f32, {3, 4}, {1}, false, g);
    types.tensors[1].type = TIDALRT_ELEMENT_TYPE_F64;
    types.what += " types";
    checkError(k, types, "INVALID_ARGUMENT");
    Case i16 = reduceCase(TIDALRT_ELEMENT_TYPE_I16, {3, 4}, {1}, false, g);
    checkError(k, i16, "UNSUPPORTED");
    Case keep = reduceCase(f32, {3, 4}, {1}, false, g);
    keep.attrs[1].tag = TIDALRT_ATTR_FLOAT;
    keep.what += " float keepdims";
    checkError(k, keep, "INTERNAL");
    Case absent;
    absent.absent().out(f32, {}).attrInts({}).attrInt(0);
    absent.what = "absent input";
    checkError(k, absent, "INVALID_ARGUMENT");
  }
}

//===----------------------------------------------------------------------===//
// reduce_max, reduce_min, reduce_prod, argmax, argmin
//===----------------------------------------------------------------------===//

// Values that tie often, with the special floats (NaN, infinities, zeros
// of both signs) among them.
Bytes tieValues(tidalrt_element_type_t t, int64_t n, Gen &g) {
  Fill f;
  f.lo = -3, f.hi = 3;
  if (!isFloat(t))
    return values(t, n, g, f);
  Bytes b = values(t, n, g, f);
  // Round most floats to halves so that they tie.
  for (int64_t i = 0; i < n; ++i) {
    if (i % 5 == 0)
      continue;
    if (t == TIDALRT_ELEMENT_TYPE_F32) {
      float v;
      std::memcpy(&v, &b[i * 4], 4);
      v = std::round(v * 2.0f) / 2.0f;
      std::memcpy(&b[i * 4], &v, 4);
    } else {
      double v;
      std::memcpy(&v, &b[i * 8], 8);
      v = std::round(v * 2.0) / 2.0;
      std::memcpy(&b[i * 8], &v, 8);
    }
  }
  return b;
}

// Every axis subset of a 5-D shape (with a size-1 dimension) and shapes
// with empty reductions, empty results and long rows; every type.
TEST_P(CudaEmuReduce, ReduceMaxMinProd) {
  Gen g(31);
  struct R {
    Shape s;
    std::vector<int64_t> axes;
  };
  std::vector<R> cases;
  for (int mask = 0; mask < 32; ++mask) {
    std::vector<int64_t> axes;
    for (int d = 0; d < 5; ++d)
      if (mask >> d & 1)
        axes.push_back(d);
    cases.push_back({{3, 1, 5, 6, 7}, axes});
  }
  cases.push_back({{}, {}});
  cases.push_back({{5, 0}, {1}});
  cases.push_back({{0, 5}, {0}});
  cases.push_back({{0, 5}, {1}});
  cases.push_back({{2, 3000}, {1}});
  cases.push_back({{3000, 3}, {0}});
  cases.push_back({{40, 1100}, {0}});
  for (const Kernel &k :
       {KERNEL(reduce_max), KERNEL(reduce_min), KERNEL(reduce_prod)})
    for (tidalrt_element_type_t t : kReduceTypes)
      for (const R &r : cases) {
        const bool keepdims = r.axes.size() % 2 == 0;
        Case c;
        c.in(t, r.s, tieValues(t, numel(r.s), g))
            .out(t, reducedShape(r.s, r.axes, keepdims))
            .attrInts(r.axes)
            .attrInt(keepdims);
        std::string a;
        for (int64_t x : r.axes)
          a += std::to_string(x) + " ";
        c.what = std::string(name(t)) + " " + str(r.s) + " axes " + a;
        check(k, c);
      }
}

// Each axis, keepdims or not, first or last index, every type; NaN and
// ties included.
TEST_P(CudaEmuReduce, ArgMaxMin) {
  Gen g(32);
  const Shape shapes[] = {{3, 1, 5, 6}, {7}, {2, 1500}, {1500, 2}, {4, 0, 3}};
  for (const Kernel &k : {KERNEL(argmax), KERNEL(argmin)})
    for (tidalrt_element_type_t t : kReduceTypes)
      for (const Shape &s : shapes)
        for (int64_t axis = 0; axis < (int64_t)s.size(); ++axis) {
          if (s[axis] == 0)
            continue; // an error (ArgErrors)
          for (int flags = 0; flags < 4; ++flags) {
            const bool keepdims = flags & 1, last = flags & 2;
            Case c;
            c.in(t, s, tieValues(t, numel(s), g))
                .out(TIDALRT_ELEMENT_TYPE_I64,
                     reducedShape(s, {axis}, keepdims))
                .attrInt(axis)
                .attrInt(keepdims)
                .attrInt(last);
            c.what = std::string(name(t)) + " " + str(s) + " axis " +
                     std::to_string(axis) + (last ? " last" : "");
            check(k, c);
          }
        }
}

TEST_P(CudaEmuReduce, ReduceExtremeErrors) {
  const tidalrt_element_type_t f32 = TIDALRT_ELEMENT_TYPE_F32;
  Gen g(33);
  for (const Kernel &k :
       {KERNEL(reduce_max), KERNEL(reduce_min), KERNEL(reduce_prod)}) {
    Case range = reduceCase(f32, {3, 4}, {2}, false, g);
    range.tensors[1].dims = {3, 4};
    checkError(k, range, "INVALID_ARGUMENT");
    Case i16 = reduceCase(TIDALRT_ELEMENT_TYPE_I16, {3, 4}, {1}, false, g);
    checkError(k, i16, "UNSUPPORTED");
  }
  for (const Kernel &k : {KERNEL(argmax), KERNEL(argmin)}) {
    Case empty;
    empty.in(f32, {4, 0}, {})
        .out(TIDALRT_ELEMENT_TYPE_I64, {4})
        .attrInt(1)
        .attrInt(0)
        .attrInt(0);
    empty.what = "empty axis";
    checkError(k, empty, "INVALID_ARGUMENT");
    Case type;
    type.in(f32, {4, 3}, values(f32, 12, g))
        .out(f32, {4})
        .attrInt(1)
        .attrInt(0)
        .attrInt(0);
    type.what = "float result";
    checkError(k, type, "INVALID_ARGUMENT");
    Case range;
    range.in(f32, {4, 3}, values(f32, 12, g))
        .out(TIDALRT_ELEMENT_TYPE_I64, {4})
        .attrInt(2)
        .attrInt(0)
        .attrInt(0);
    range.what = "axis out of range";
    checkError(k, range, "INVALID_ARGUMENT");
    Case u8;
    u8.in(TIDALRT_ELEMENT_TYPE_U8, {4, 3},
          values(TIDALRT_ELEMENT_TYPE_U8, 12, g))
        .out(TIDALRT_ELEMENT_TYPE_I64, {4})
        .attrInt(1)
        .attrInt(0)
        .attrInt(0);
    u8.what = "uint8";
    checkError(k, u8, "UNSUPPORTED");
  }
}

INSTANTIATE_TEST_SUITE_P(CudaEmu, CudaEmuReduce, TIDALRT_TEST_ISAS,
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           return std::string(i.param);
                         });

} // namespace
