// cuda_emu_logic_dropout_test.cpp - the emulated CUDA comparison, logic, cast,
// dropout and random kernels (and activation-backward errors) against the
// CPU kernels, as cuda_emu_elementwise_harness.h compares them.
#include "cuda_emu_elementwise_harness.h"

using namespace emu_test;

namespace {

class CudaEmuLogicDropout : public CudaEmuFixture {};

//===----------------------------------------------------------------------===//
// The logic family (cpu/logic_math.h): comparisons and selections only, so
// bitwise on both ISAs.
//===----------------------------------------------------------------------===//

// (result, lhs, rhs, condition) shapes with every broadcast pattern.
const Shape kLogicShapes[][4] = {{{}, {}, {}, {}},
                                 {{7}, {7}, {1}, {7}},
                                 {{3, 5}, {5}, {3, 1}, {3, 5}},
                                 {{2, 3, 4}, {1, 3, 1}, {2, 1, 4}, {}},
                                 {{0, 3}, {0, 3}, {3}, {1}},
                                 {{70001}, {70001}, {70001}, {1}}};

TEST_P(CudaEmuLogicDropout, Logic) {
  Gen g(24);
  const Kernel binary[] = {KERNEL(max),
                           KERNEL(min),
                           KERNEL(equal),
                           KERNEL(less),
                           KERNEL(less_or_equal),
                           KERNEL(greater),
                           KERNEL(greater_or_equal)};
  const tidalrt_element_type_t bool_ = TIDALRT_ELEMENT_TYPE_BOOL;
  for (const Kernel &k : binary) {
    const bool mask =
        std::string(k.name) != "max" && std::string(k.name) != "min";
    for (tidalrt_element_type_t t :
         {TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64,
          TIDALRT_ELEMENT_TYPE_I64, TIDALRT_ELEMENT_TYPE_I32,
          TIDALRT_ELEMENT_TYPE_I8, TIDALRT_ELEMENT_TYPE_U64})
      for (const auto &s : kLogicShapes) {
        Fill f;
        f.lo = -2, f.hi = 2; // small integers tie often
        Case c;
        c.in(t, s[1], values(t, numel(s[1]), g, f))
            .in(t, s[2], values(t, numel(s[2]), g, f))
            .out(mask ? bool_ : t, s[0]);
        c.what = std::string(name(t)) + " " + str(s[0]);
        check(k, c, Tol());
      }
  }
  for (const Kernel &k : {KERNEL(logical_and), KERNEL(logical_or),
                          KERNEL(logical_xor), KERNEL(equal)})
    for (const auto &s : kLogicShapes) {
      Case c;
      c.in(bool_, s[1], values(bool_, numel(s[1]), g))
          .in(bool_, s[2], values(bool_, numel(s[2]), g))
          .out(bool_, s[0]);
      c.what = "bool " + str(s[0]);
      check(k, c, Tol());
    }
  for (const auto &s : kLogicShapes) {
    Case n;
    n.in(bool_, s[0], values(bool_, numel(s[0]), g)).out(bool_, s[0]);
    n.what = "not " + str(s[0]);
    check(KERNEL(logical_not), n, Tol());
    for (tidalrt_element_type_t t :
         {TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64,
          TIDALRT_ELEMENT_TYPE_I64, TIDALRT_ELEMENT_TYPE_I16, bool_}) {
      Case c;
      c.in(bool_, s[3], values(bool_, numel(s[3]), g))
          .in(t, s[1], values(t, numel(s[1]), g))
          .in(t, s[2], values(t, numel(s[2]), g))
          .out(t, s[0]);
      c.what = std::string("where ") + name(t) + " " + str(s[0]);
      check(KERNEL(where), c, Tol());
    }
  }
}

// Every pair of cast types, special values included (NaN, infinities and
// out-of-range floats to integers saturate the same way on both; float16
// and bfloat16 inputs are any bits).
TEST_P(CudaEmuLogicDropout, Cast) {
  Gen g(26);
  const tidalrt_element_type_t types[] = {
      TIDALRT_ELEMENT_TYPE_F32,  TIDALRT_ELEMENT_TYPE_F64,
      TIDALRT_ELEMENT_TYPE_I64,  TIDALRT_ELEMENT_TYPE_I32,
      TIDALRT_ELEMENT_TYPE_I16,  TIDALRT_ELEMENT_TYPE_I8,
      TIDALRT_ELEMENT_TYPE_U64,  TIDALRT_ELEMENT_TYPE_U32,
      TIDALRT_ELEMENT_TYPE_U16,  TIDALRT_ELEMENT_TYPE_U8,
      TIDALRT_ELEMENT_TYPE_BOOL, TIDALRT_ELEMENT_TYPE_F16,
      TIDALRT_ELEMENT_TYPE_BF16};
  for (tidalrt_element_type_t from : types)
    for (tidalrt_element_type_t to : types)
      for (const Shape &s : {Shape{}, Shape{7}, Shape{3, 5}, Shape{70001}}) {
        Fill f;
        f.lo = -1e10, f.hi = 1e10; // beyond every small integer type
        f.fullRange = true;
        Case c;
        c.in(from, s, values(from, numel(s), g, f)).out(to, s);
        c.what = std::string(name(from)) + " -> " + name(to) + " " + str(s);
        check(KERNEL(cast), c, Tol());
      }
  Case bad;
  bad.in(TIDALRT_ELEMENT_TYPE_F16, {3}, values(TIDALRT_ELEMENT_TYPE_F16, 3, g))
      .out(TIDALRT_ELEMENT_TYPE_F32, {4});
  bad.what = "element counts";
  checkError(KERNEL(cast), bad, "INVALID_ARGUMENT");
}

TEST_P(CudaEmuLogicDropout, LogicErrors) {
  Gen g(25);
  const tidalrt_element_type_t f32 = TIDALRT_ELEMENT_TYPE_F32;
  Case mixed;
  mixed.in(f32, {3}, values(f32, 3, g))
      .in(TIDALRT_ELEMENT_TYPE_I64, {3}, values(TIDALRT_ELEMENT_TYPE_I64, 3, g))
      .out(TIDALRT_ELEMENT_TYPE_BOOL, {3});
  mixed.what = "mixed operand types";
  checkError(KERNEL(less), mixed, "INVALID_ARGUMENT");
  Case shapes;
  shapes.in(f32, {2, 3}, values(f32, 6, g))
      .in(f32, {3, 2}, values(f32, 6, g))
      .out(f32, {2, 3});
  shapes.what = "no broadcast";
  checkError(KERNEL(max), shapes, "INVALID_ARGUMENT");
  Case cond;
  cond.in(f32, {3}, values(f32, 3, g))
      .in(f32, {3}, values(f32, 3, g))
      .in(f32, {3}, values(f32, 3, g))
      .out(f32, {3});
  cond.what = "float condition";
  checkError(KERNEL(where), cond, "INVALID_ARGUMENT");
}

TEST_P(CudaEmuLogicDropout, ActivationBackwardErrors) {
  const tidalrt_element_type_t f32 = TIDALRT_ELEMENT_TYPE_F32;
  Gen g(10);
  for (const Kernel &k : {KERNEL(relu_backward), KERNEL(leaky_relu_backward),
                          KERNEL(sigmoid_backward), KERNEL(tanh_backward),
                          KERNEL(erf_backward), KERNEL(gelu_backward)}) {
    const bool alpha = std::string(k.name) == "leaky_relu_backward";
    auto withAlpha = [&](Case c) {
      if (alpha)
        c.attrFloat(0.1);
      return c;
    };
    Case types;
    types.in(f32, {3}, values(f32, 3, g))
        .in(TIDALRT_ELEMENT_TYPE_F64, {3},
            values(TIDALRT_ELEMENT_TYPE_F64, 3, g))
        .out(f32, {3});
    types.what = "types";
    checkError(k, withAlpha(types), "INVALID_ARGUMENT");
    Case i32;
    i32.in(TIDALRT_ELEMENT_TYPE_I32, {3}, Bytes(12))
        .in(TIDALRT_ELEMENT_TYPE_I32, {3}, Bytes(12))
        .out(TIDALRT_ELEMENT_TYPE_I32, {3});
    i32.what = "int32";
    checkError(k, withAlpha(i32), "UNSUPPORTED");
    Case saved;
    saved.in(f32, {3}, values(f32, 3, g))
        .in(f32, {2}, values(f32, 2, g))
        .out(f32, {3});
    saved.what = "saved count";
    checkError(k, withAlpha(saved), "INVALID_ARGUMENT");
    Case result;
    result.in(f32, {3}, values(f32, 3, g))
        .in(f32, {3}, values(f32, 3, g))
        .out(f32, {1, 4});
    result.what = "result count";
    checkError(k, withAlpha(result), "INVALID_ARGUMENT");
    Case absent;
    absent.absent().in(f32, {3}, values(f32, 3, g)).out(f32, {3});
    absent.what = "absent grad";
    checkError(k, withAlpha(absent), "INVALID_ARGUMENT");
  }
}

//===----------------------------------------------------------------------===//
// dropout, dropout_backward
//===----------------------------------------------------------------------===//

// Attributes: ratio(0), seed(1, optional), stream(2, optional),
// training(3).
Case dropoutCase(tidalrt_element_type_t t, const Shape &s, Gen &g, double ratio,
                 int64_t seedAttr, int64_t stream, bool training) {
  Case c;
  c.in(t, s, values(t, numel(s), g))
      .out(t, s)
      .out(TIDALRT_ELEMENT_TYPE_BOOL, s)
      .attrFloat(ratio);
  if (seedAttr >= 0)
    c.attrInt(seedAttr);
  else
    c.attrAbsent();
  if (stream >= 0)
    c.attrInt(stream);
  else
    c.attrAbsent();
  c.attrInt(training);
  c.what = std::string(name(t)) + " " + str(s) + " ratio " +
           std::to_string(ratio) + " seed " + std::to_string(seedAttr) +
           " stream " + std::to_string(stream) +
           (training ? " training" : " inference");
  return c;
}

// Masks and outputs equal the CPU's bit for bit, for every ratio, seed
// source, stream source, step and op index.
TEST_P(CudaEmuLogicDropout, Dropout) {
  Gen g(11);
  for (tidalrt_element_type_t t :
       {TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64}) {
    for (const Shape &s : {Shape{}, Shape{1}, Shape{0}, Shape{1003},
                           Shape{3, 7, 11}, Shape{2, 40003}}) {
      for (double ratio : {0.0, 0.1, 0.5, 0.9, 0.999999}) {
        for (bool training : {true, false}) {
          Case c = dropoutCase(t, s, g, ratio, -1, -1, training);
          c.seed = 42, c.step = 3, c.opIndex = 5;
          check(KERNEL(dropout), c);
        }
      }
      Case seeded = dropoutCase(t, s, g, 0.3, 1234, -1, true);
      seeded.seed = 99, seeded.step = 7;
      check(KERNEL(dropout), seeded);
      Case stream = dropoutCase(t, s, g, 0.3, -1, 17, true);
      stream.seed = 5, stream.step = 1ull << 40, stream.opIndex = 3;
      check(KERNEL(dropout), stream);
    }
  }
  // In place.
  Case c = dropoutCase(TIDALRT_ELEMENT_TYPE_F32, {777}, g, 0.25, 8, 2, true);
  c.aliasOut = 1, c.aliasIn = 0;
  c.what += " in place";
  check(KERNEL(dropout), c);
}

TEST_P(CudaEmuLogicDropout, DropoutBackward) {
  Gen g(12);
  for (tidalrt_element_type_t t :
       {TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64}) {
    for (const Shape &s :
         {Shape{}, Shape{0}, Shape{9}, Shape{3, 7, 11}, Shape{40003}}) {
      for (double ratio : {0.0, 0.3, 0.9}) {
        Case c;
        c.in(t, s, values(t, numel(s), g))
            .in(TIDALRT_ELEMENT_TYPE_BOOL, s,
                values(TIDALRT_ELEMENT_TYPE_BOOL, numel(s), g))
            .out(t, s)
            .attrFloat(ratio);
        c.what = std::string(name(t)) + " " + str(s) + " ratio " +
                 std::to_string(ratio);
        check(KERNEL(dropout_backward), c);
      }
    }
  }
}

TEST_P(CudaEmuLogicDropout, DropoutErrors) {
  const tidalrt_element_type_t f32 = TIDALRT_ELEMENT_TYPE_F32;
  Gen g(13);
  for (double ratio : {1.0, -0.1, (double)NAN}) {
    Case c = dropoutCase(f32, {5}, g, ratio, -1, -1, true);
    checkError(KERNEL(dropout), c, "INVALID_ARGUMENT");
  }
  Case i32 = dropoutCase(TIDALRT_ELEMENT_TYPE_I32, {5}, g, 0.5, -1, -1, true);
  checkError(KERNEL(dropout), i32, "UNSUPPORTED");
  Case mask = dropoutCase(f32, {5}, g, 0.5, -1, -1, true);
  mask.tensors[2].type = TIDALRT_ELEMENT_TYPE_U8;
  mask.what += " uint8 mask";
  checkError(KERNEL(dropout), mask, "INVALID_ARGUMENT");
  Case count = dropoutCase(f32, {5}, g, 0.5, -1, -1, true);
  count.tensors[1].dims = {6};
  count.what += " output count";
  checkError(KERNEL(dropout), count, "INVALID_ARGUMENT");
  Case types = dropoutCase(f32, {5}, g, 0.5, -1, -1, true);
  types.tensors[1].type = TIDALRT_ELEMENT_TYPE_F64;
  types.what += " output type";
  checkError(KERNEL(dropout), types, "INVALID_ARGUMENT");
  Case stream = dropoutCase(f32, {5}, g, 0.5, -1, -1, true);
  stream.attrs[2].tag = TIDALRT_ATTR_FLOAT;
  stream.what += " float stream";
  checkError(KERNEL(dropout), stream, "INTERNAL");

  for (double ratio : {1.0, -0.5}) {
    Case c;
    c.in(f32, {4}, values(f32, 4, g))
        .in(TIDALRT_ELEMENT_TYPE_BOOL, {4}, Bytes(4, 1))
        .out(f32, {4})
        .attrFloat(ratio);
    c.what = "ratio " + std::to_string(ratio);
    checkError(KERNEL(dropout_backward), c, "INVALID_ARGUMENT");
  }
  Case bmask;
  bmask.in(f32, {4}, values(f32, 4, g))
      .in(f32, {4}, values(f32, 4, g))
      .out(f32, {4})
      .attrFloat(0.5);
  bmask.what = "float mask";
  checkError(KERNEL(dropout_backward), bmask, "INVALID_ARGUMENT");
  Case bcount;
  bcount.in(f32, {4}, values(f32, 4, g))
      .in(TIDALRT_ELEMENT_TYPE_BOOL, {5}, Bytes(5, 1))
      .out(f32, {4})
      .attrFloat(0.5);
  bcount.what = "mask count";
  checkError(KERNEL(dropout_backward), bcount, "INVALID_ARGUMENT");
  Case btype;
  btype.in(TIDALRT_ELEMENT_TYPE_I64, {4}, Bytes(32))
      .in(TIDALRT_ELEMENT_TYPE_BOOL, {4}, Bytes(4, 1))
      .out(TIDALRT_ELEMENT_TYPE_I64, {4})
      .attrFloat(0.5);
  btype.what = "int64 grad";
  checkError(KERNEL(dropout_backward), btype, "UNSUPPORTED");
}

//===----------------------------------------------------------------------===//
// random_normal, random_uniform
//===----------------------------------------------------------------------===//

// Attributes: random_normal mean(0), scale(1); random_uniform high(0),
// low(1); both seed(2, optional), stream(3, optional).
Case randomCase(tidalrt_element_type_t t, const Shape &s, double first,
                double second, int64_t seedAttr, int64_t stream) {
  Case c;
  c.out(t, s).attrFloat(first).attrFloat(second);
  if (seedAttr >= 0)
    c.attrInt(seedAttr);
  else
    c.attrAbsent();
  if (stream >= 0)
    c.attrInt(stream);
  else
    c.attrAbsent();
  c.what = std::string(name(t)) + " " + str(s) + " (" + std::to_string(first) +
           ", " + std::to_string(second) + ") seed " +
           std::to_string(seedAttr) + " stream " + std::to_string(stream);
  return c;
}

// Values equal the CPU's bit for bit, for every seed source, stream source,
// step and op index, and across the 2^32-draw re-keying of a normal draw's
// counters (elements from 2^31 on; only the formula's counter is large, so
// a one-element tensor cannot reach it: covered by the CPU formula test).
TEST_P(CudaEmuLogicDropout, Random) {
  for (tidalrt_element_type_t t :
       {TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64}) {
    for (const Shape &s : {Shape{}, Shape{0}, Shape{1}, Shape{1003},
                           Shape{3, 7, 11}, Shape{2, 40003}}) {
      for (Kernel k : {KERNEL(random_normal), KERNEL(random_uniform)}) {
        bool normal = std::string(k.name) == "random_normal";
        Case c =
            randomCase(t, s, normal ? 0.5 : 3.0, normal ? 2.0 : -1.0, -1, -1);
        c.seed = 42, c.step = 3, c.opIndex = 5;
        check(k, c);
        Case seeded =
            randomCase(t, s, normal ? 0.0 : 1.0, normal ? 1.0 : 0.0, 1234, -1);
        seeded.seed = 99, seeded.step = 7;
        check(k, seeded);
        Case stream =
            randomCase(t, s, normal ? -1.0 : 0.5, normal ? 0.0 : 0.5, -1, 17);
        stream.seed = 5, stream.step = 1ull << 40, stream.opIndex = 3;
        check(k, stream);
      }
    }
  }
}

TEST_P(CudaEmuLogicDropout, RandomErrors) {
  Case scale = randomCase(TIDALRT_ELEMENT_TYPE_F32, {5}, 0.0, -1.0, -1, -1);
  checkError(KERNEL(random_normal), scale, "INVALID_ARGUMENT");
  Case nan = randomCase(TIDALRT_ELEMENT_TYPE_F32, {5}, NAN, 1.0, -1, -1);
  checkError(KERNEL(random_normal), nan, "INVALID_ARGUMENT");
  Case order = randomCase(TIDALRT_ELEMENT_TYPE_F32, {5}, 1.0, 2.0, -1, -1);
  checkError(KERNEL(random_uniform), order, "INVALID_ARGUMENT");
  Case i32 = randomCase(TIDALRT_ELEMENT_TYPE_I32, {5}, 0.0, 1.0, -1, -1);
  checkError(KERNEL(random_uniform), i32, "UNSUPPORTED");
  Case two = randomCase(TIDALRT_ELEMENT_TYPE_F32, {5}, 0.0, 1.0, -1, -1);
  two.out(TIDALRT_ELEMENT_TYPE_F32, {5});
  two.what += " two tensors";
  checkError(KERNEL(random_normal), two, "INTERNAL");
  Case absent;
  absent.absent().attrFloat(0.0).attrFloat(1.0).attrAbsent().attrAbsent();
  absent.what = "absent output";
  checkError(KERNEL(random_normal), absent, "INVALID_ARGUMENT");
}

INSTANTIATE_TEST_SUITE_P(CudaEmu, CudaEmuLogicDropout, TIDALRT_TEST_ISAS,
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           return std::string(i.param);
                         });

} // namespace
