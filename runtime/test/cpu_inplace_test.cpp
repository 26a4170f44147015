// Tests that the element-wise, softmax, activation-backward, dropout and
// optimizer kernels give the same bits when a result is written over one of
// its operands, as the static memory planner arranges (docs/runtime-abi.md,
// "In-place execution").
//
// Every case runs its kernel out of place on copies of random operands,
// then once per legal set of aliases (result buffer == operand buffer), and
// requires memcmp-equal results and untouched non-aliased operands. Sizes
// are not multiples of the vector width, the larger cases cross the OpenMP
// threshold, and the suite runs on the AVX2 and the scalar path with 1 and
// with 4 threads.
#include "isa_test_util.h"
#include "kernel_test_util.h"

#include "../src/cpu/simd.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <utility>
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

size_t elementSize(int32_t type) {
  return tidalrt_element_type_size((tidalrt_element_type_t)type);
}

// A TIDALRT_ARRAY_ALIGNMENT-aligned buffer, as the planner's arena hands
// out.
class Buffer {
public:
  explicit Buffer(size_t bytes) : bytes_(bytes) {
    size_t a = TIDALRT_ARRAY_ALIGNMENT;
    size_t padded = bytes ? (bytes + a - 1) / a * a : a;
    data_.reset(static_cast<uint8_t *>(std::aligned_alloc(a, padded)));
  }
  Buffer clone() const {
    Buffer b(bytes_);
    memcpy(b.data(), data(), bytes_);
    return b;
  }
  uint8_t *data() const { return data_.get(); }
  size_t bytes() const { return bytes_; }

private:
  struct Free {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  size_t bytes_;
  std::unique_ptr<uint8_t, Free> data_;
};

// Fills `n` elements of `type` at `data`.
using Fill =
    std::function<void(int32_t type, void *data, int64_t n, std::mt19937 &)>;

void store(int32_t type, void *data, int64_t i, double v) {
  switch (type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    static_cast<float *>(data)[i] = (float)v;
    break;
  case TIDALRT_ELEMENT_TYPE_F64:
    static_cast<double *>(data)[i] = v;
    break;
  case TIDALRT_ELEMENT_TYPE_I64:
    static_cast<int64_t *>(data)[i] = (int64_t)v;
    break;
  case TIDALRT_ELEMENT_TYPE_I32:
    static_cast<int32_t *>(data)[i] = (int32_t)v;
    break;
  case TIDALRT_ELEMENT_TYPE_BOOL:
    static_cast<uint8_t *>(data)[i] = v != 0.0;
    break;
  default:
    FAIL() << "no fill for element type " << type;
  }
}

// Uniform values in [lo, hi); integer types get whole numbers. With
// `specials`, about one float element in 48 is NaN, an infinity, a signed
// zero, a denormal or a huge value instead (the vector math's slow lanes).
Fill uniform(double lo, double hi, bool specials = false) {
  return [=](int32_t type, void *data, int64_t n, std::mt19937 &rng) {
    const bool isFloat =
        type == TIDALRT_ELEMENT_TYPE_F32 || type == TIDALRT_ELEMENT_TYPE_F64;
    std::uniform_real_distribution<double> dist(lo, hi);
    static const double kSpecial[] = {std::numeric_limits<double>::quiet_NaN(),
                                      INFINITY,
                                      -INFINITY,
                                      0.0,
                                      -0.0,
                                      1e-40,
                                      -3e-39,
                                      100.0,
                                      -100.0,
                                      1e30,
                                      -1e30};
    for (int64_t i = 0; i < n; ++i) {
      double v = dist(rng);
      if (!isFloat)
        v = std::floor(v);
      else if (specials && rng() % 48 == 0)
        v = kSpecial[rng() % (sizeof kSpecial / sizeof kSpecial[0])];
      store(type, data, i, v);
    }
  };
}

// Non-zero integers in [-9, 9] (integer divisors).
Fill nonZeroInts() {
  return [](int32_t type, void *data, int64_t n, std::mt19937 &rng) {
    for (int64_t i = 0; i < n; ++i) {
      int v = (int)(rng() % 9) + 1;
      store(type, data, i, rng() % 2 ? v : -v);
    }
  };
}

Fill constant(double v) {
  return [v](int32_t type, void *data, int64_t n, std::mt19937 &) {
    for (int64_t i = 0; i < n; ++i)
      store(type, data, i, v);
  };
}

Fill mask() {
  return [](int32_t type, void *data, int64_t n, std::mt19937 &rng) {
    for (int64_t i = 0; i < n; ++i)
      store(type, data, i, rng() % 3 != 0);
  };
}

struct TensorSpec {
  int32_t type;
  Shape shape;
  Fill fill; // operands only
  size_t bytes() const { return (size_t)numel(shape) * elementSize(type); }
};

// (result index, operand index): the result is written over the operand.
using Alias = std::pair<int, int>;
using AliasSet = std::vector<Alias>;

struct Case {
  std::string name;
  tidalrt_kernel_fn_t fn;
  std::vector<TensorSpec> operands, results;
  std::function<void(KernelCall &)> attrs;
  std::vector<AliasSet> aliasSets;
};

// Every non-empty subset of `aliases` (the planner may alias any of them,
// or all at once).
std::vector<AliasSet> subsets(const AliasSet &aliases) {
  std::vector<AliasSet> out;
  for (unsigned m = 1; m < (1u << aliases.size()); ++m) {
    AliasSet s;
    for (size_t i = 0; i < aliases.size(); ++i)
      if (m & (1u << i))
        s.push_back(aliases[i]);
    out.push_back(s);
  }
  return out;
}

std::string aliasString(const AliasSet &s) {
  std::string r;
  for (const Alias &a : s)
    r += (r.empty() ? "" : ", ") + std::string("result ") +
         std::to_string(a.first) + " <- operand " + std::to_string(a.second);
  return r;
}

::testing::AssertionResult sameBytes(const void *got, const void *want,
                                     const TensorSpec &t) {
  if (memcmp(got, want, t.bytes()) == 0)
    return ::testing::AssertionSuccess();
  size_t es = elementSize(t.type);
  size_t n = (size_t)numel(t.shape), i = 0;
  while (i < n && memcmp(static_cast<const uint8_t *>(got) + i * es,
                         static_cast<const uint8_t *>(want) + i * es, es) == 0)
    ++i;
  return ::testing::AssertionFailure()
         << "differs from element " << i << " of " << n;
}

std::string runKernel(const Case &c, const std::vector<void *> &buffers) {
  KernelCall call;
  for (size_t i = 0; i < c.operands.size(); ++i)
    call.tensor((tidalrt_element_type_t)c.operands[i].type, c.operands[i].shape,
                buffers[i]);
  for (size_t r = 0; r < c.results.size(); ++r)
    call.tensor((tidalrt_element_type_t)c.results[r].type, c.results[r].shape,
                buffers[c.operands.size() + r]);
  if (c.attrs)
    c.attrs(call);
  return call.run(c.fn);
}

// Runs `c` out of place and with each of its alias sets; see the file
// comment.
void checkCase(const Case &c, uint32_t seed = 1) {
  SCOPED_TRACE(c.name);
  std::mt19937 rng(seed);
  std::vector<Buffer> inputs;
  for (const TensorSpec &t : c.operands) {
    inputs.emplace_back(t.bytes());
    t.fill(t.type, inputs.back().data(), numel(t.shape), rng);
  }
  auto copies = [&] {
    std::vector<Buffer> v;
    for (const Buffer &b : inputs)
      v.push_back(b.clone());
    return v;
  };
  auto checkOperands = [&](const std::vector<Buffer> &ops,
                           const AliasSet &aliased) {
    for (size_t o = 0; o < ops.size(); ++o) {
      bool isAliased = false;
      for (const Alias &a : aliased)
        isAliased |= a.second == (int)o;
      if (!isAliased) {
        EXPECT_TRUE(sameBytes(ops[o].data(), inputs[o].data(), c.operands[o]))
            << "operand " << o << " was modified";
      }
    }
  };

  // Out of place: fresh result buffers filled with 0xa5.
  std::vector<Buffer> ops = copies(), want;
  std::vector<void *> buffers;
  for (Buffer &b : ops)
    buffers.push_back(b.data());
  for (const TensorSpec &t : c.results) {
    want.emplace_back(t.bytes());
    memset(want.back().data(), 0xa5, t.bytes());
    buffers.push_back(want.back().data());
  }
  ASSERT_EQ(runKernel(c, buffers), "");
  checkOperands(ops, {});

  for (const AliasSet &aliases : c.aliasSets) {
    SCOPED_TRACE(aliasString(aliases));
    std::vector<Buffer> ops2 = copies(), fresh;
    std::vector<void *> buffers2;
    for (Buffer &b : ops2)
      buffers2.push_back(b.data());
    for (size_t r = 0; r < c.results.size(); ++r) {
      const TensorSpec &t = c.results[r];
      int over = -1;
      for (const Alias &a : aliases)
        if (a.first == (int)r)
          over = a.second;
      if (over >= 0) {
        // The planner's condition: same element type and shape.
        ASSERT_EQ(c.operands[over].type, t.type);
        ASSERT_EQ(c.operands[over].shape, t.shape);
        buffers2.push_back(ops2[over].data());
      } else {
        fresh.emplace_back(t.bytes());
        memset(fresh.back().data(), 0x5a, t.bytes());
        buffers2.push_back(fresh.back().data());
      }
    }
    ASSERT_EQ(runKernel(c, buffers2), "");
    for (size_t r = 0; r < c.results.size(); ++r)
      EXPECT_TRUE(sameBytes(buffers2[c.operands.size() + r], want[r].data(),
                            c.results[r]))
          << "result " << r << " in place";
    checkOperands(ops2, aliases);
  }
}

const char *typeString(int32_t type) {
  return tidalrt_element_type_name((tidalrt_element_type_t)type);
}

std::string describe(const std::string &kernel, int32_t type,
                     const std::vector<Shape> &shapes) {
  std::string s = kernel + " " + typeString(type);
  for (const Shape &sh : shapes)
    s += " " + ::testing::PrintToString(sh);
  return s;
}

constexpr int32_t kF32 = TIDALRT_ELEMENT_TYPE_F32;
constexpr int32_t kF64 = TIDALRT_ELEMENT_TYPE_F64;
constexpr int32_t kI64 = TIDALRT_ELEMENT_TYPE_I64;
constexpr int32_t kI32 = TIDALRT_ELEMENT_TYPE_I32;
constexpr int32_t kBool = TIDALRT_ELEMENT_TYPE_BOOL;

// Element counts that are not multiples of 8 or 16 (the vector loops), one
// above the parallel threshold (32768) and its chunk (16384), plus rank 0
// and a rank-3 shape.
const Shape kShapes[] = {{1},    {7},     {33},      {1000},
                         {4099}, {70001}, {3, 5, 7}, {}};

//===----------------------------------------------------------------------===//
// The fixture: ISA x thread count
//===----------------------------------------------------------------------===//

struct Config {
  const char *isa; // "avx512", "avx2" or "scalar" (TIDAL_CPU_ISA)
  int threads;
};

void PrintTo(const Config &c, std::ostream *os) {
  *os << c.isa << ", " << c.threads << " OpenMP thread(s)";
}

class InPlaceKernels : public ::testing::TestWithParam<Config> {
protected:
  void SetUp() override {
    TIDALRT_SKIP_UNLESS_ISA(GetParam().isa);
    setenv("TIDAL_CPU_ISA", GetParam().isa, 1);
    savedThreads = omp_get_max_threads();
    omp_set_num_threads(GetParam().threads);
  }
  void TearDown() override {
    unsetenv("TIDAL_CPU_ISA");
    if (savedThreads)
      omp_set_num_threads(savedThreads);
  }
  int savedThreads = 0;
};

//===----------------------------------------------------------------------===//
// Unary element-wise: result 0 <- operand 0
//===----------------------------------------------------------------------===//

struct UnaryKernel {
  const char *name;
  tidalrt_kernel_fn_t fn;
  bool ints;  // also int64/int32
  bool alpha; // leaky_relu's attribute
  double lo, hi;
};

const UnaryKernel kUnary[] = {
    {"neg", tidalrt_k_neg, true, false, -10, 10},
    {"relu", tidalrt_k_relu, true, false, -10, 10},
    {"sigmoid", tidalrt_k_sigmoid, false, false, -30, 30},
    {"tanh", tidalrt_k_tanh, false, false, -12, 12},
    {"sqrt", tidalrt_k_sqrt, false, false, 0, 100},
    {"erf", tidalrt_k_erf, true, false, -5, 5},
    {"exp", tidalrt_k_exp, false, false, -90, 90},
    {"log", tidalrt_k_log, false, false, 1e-3, 1e3},
    {"leaky_relu", tidalrt_k_leaky_relu, false, true, -10, 10},
    {"gelu", tidalrt_k_gelu, false, false, -15, 15},
};

TEST_P(InPlaceKernels, Unary) {
  for (const UnaryKernel &k : kUnary) {
    std::vector<int32_t> types = {kF32, kF64};
    if (k.ints)
      types.insert(types.end(), {kI64, kI32});
    for (int32_t type : types)
      for (const Shape &s : kShapes) {
        Case c{describe(k.name, type, {s}),
               k.fn,
               {{type, s, uniform(k.lo, k.hi, true)}},
               {{type, s, nullptr}},
               nullptr,
               {{{0, 0}}}};
        if (k.alpha)
          c.attrs = [](KernelCall &call) { call.attrFloat(0.01); };
        checkCase(c);
      }
  }
}

//===----------------------------------------------------------------------===//
// Binary element-wise: result 0 <- operand 0 or 1 of the result's shape
//===----------------------------------------------------------------------===//

Shape broadcastShape(const Shape &a, const Shape &b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// The legal alias sets of a binary op: each operand of the result's shape.
std::vector<AliasSet> binaryAliases(const Shape &a, const Shape &b,
                                    const Shape &y) {
  std::vector<AliasSet> v;
  if (a == y)
    v.push_back({{0, 0}});
  if (b == y)
    v.push_back({{0, 1}});
  return v;
}

const std::pair<Shape, Shape> kBinaryShapes[] = {
    {{1}, {1}},
    {{7}, {7}},
    {{33}, {33}},
    {{1000}, {1000}},
    {{4099}, {4099}},
    {{70001}, {70001}},        // parallel
    {{}, {}},                  // rank 0
    {{2, 3, 5, 7}, {3, 1, 1}}, // [N, C, H, W] + [C, 1, 1]
    {{4, 16, 33, 35}, {16, 1, 1}},
    {{9, 33}, {33}}, // [N, C] + [C]
    {{1000, 67}, {67}},
    {{33}, {9, 33}},    // [C] + [N, C]
    {{7, 13}, {}},      // [N, C] * []
    {{70001}, {}},      // parallel, scalar rhs
    {{}, {4099}},       // scalar lhs
    {{1, 33}, {9, 33}}, // [1, C] - [N, C]
    {{1, 4099}, {17, 4099}},
    {{33, 1}, {33, 7}},       // [N, 1] op [N, C]
    {{67, 1}, {67, 1000}},    // the same, parallel
    {{5, 1, 7}, {5, 3, 7}},   // middle dimension broadcast
    {{3, 70001}, {3, 1}},     // long rows, split into blocks
    {{40000, 3}, {40000, 1}}, // many short rows
};

struct BinaryKernel {
  const char *name;
  tidalrt_kernel_fn_t fn;
  bool div;
};

const BinaryKernel kBinary[] = {
    {"add", tidalrt_k_add, false},
    {"sub", tidalrt_k_sub, false},
    {"mul", tidalrt_k_mul, false},
    {"div", tidalrt_k_div, true},
};

TEST_P(InPlaceKernels, Binary) {
  for (const BinaryKernel &k : kBinary)
    for (int32_t type : {kF32, kF64, kI64, kI32})
      for (const auto &sh : kBinaryShapes) {
        const Shape &sa = sh.first, &sb = sh.second;
        Shape sy = broadcastShape(sa, sb);
        bool isInt = type == kI64 || type == kI32;
        Fill rhs = k.div && isInt ? nonZeroInts() : uniform(-100, 100, true);
        checkCase({describe(k.name, type, {sa, sb}),
                   k.fn,
                   {{type, sa, uniform(-100, 100, true)}, {type, sb, rhs}},
                   {{type, sy, nullptr}},
                   nullptr,
                   binaryAliases(sa, sb, sy)});
      }
}

// x op x with the result over x (both operands are the dying value).
TEST_P(InPlaceKernels, BinarySameOperandTwice) {
  for (const BinaryKernel &k : kBinary)
    for (const Shape &s : kShapes) {
      SCOPED_TRACE(describe(k.name, kF32, {s}));
      std::mt19937 rng(5);
      Buffer x(TensorSpec{kF32, s, nullptr}.bytes());
      uniform(-10, 10, true)(kF32, x.data(), numel(s), rng);
      Buffer want(x.bytes()), inPlace = x.clone();
      KernelCall a, b;
      a.f32(s, (float *)x.data())
          .f32(s, (float *)x.data())
          .f32(s, (float *)want.data());
      ASSERT_EQ(a.run(k.fn), "");
      b.f32(s, (float *)inPlace.data())
          .f32(s, (float *)inPlace.data())
          .f32(s, (float *)inPlace.data());
      ASSERT_EQ(b.run(k.fn), "");
      EXPECT_TRUE(sameBytes(inPlace.data(), want.data(), {kF32, s, nullptr}));
    }
}

//===----------------------------------------------------------------------===//
// pow: result 0 <- the base, or the exponent when it has the result's shape
// and element type
//===----------------------------------------------------------------------===//

TEST_P(InPlaceKernels, Pow) {
  auto powCase = [](int32_t bt, const Shape &sb, Fill base, int32_t et,
                    const Shape &se, Fill exponent) {
    Shape sy = broadcastShape(sb, se);
    std::vector<AliasSet> aliases;
    if (sb == sy)
      aliases.push_back({{0, 0}});
    if (se == sy && et == bt)
      aliases.push_back({{0, 1}});
    checkCase({describe("pow", bt, {sb, se}) + " exponent " + typeString(et),
               tidalrt_k_pow,
               {{bt, sb, std::move(base)}, {et, se, std::move(exponent)}},
               {{bt, sy, nullptr}},
               nullptr,
               aliases});
  };
  for (const Shape &s : kShapes) {
    // Element-wise exponents: the general path.
    powCase(kF32, s, uniform(0.1, 4, true), kF32, s, uniform(-3, 3, true));
    powCase(kF32, s, uniform(-4, 4), kI64, s, uniform(-4, 5));
    powCase(kF64, s, uniform(0.1, 4, true), kF64, s, uniform(-3, 3, true));
    powCase(kI64, s, uniform(-5, 6), kI64, s, uniform(0, 6));
    powCase(kI32, s, uniform(-5, 6), kI32, s, uniform(0, 6));
    // Scalar exponents: the shortcuts (1, 2, 3, 0.5, -1) and the general
    // path (1.7, an integer).
    for (double e : {1.0, 2.0, 3.0, 0.5, -1.0, 1.7}) {
      powCase(kF32, s, uniform(-4, 4, true), kF32, {}, constant(e));
      powCase(kF32, s, uniform(-4, 4, true), kF64, {}, constant(e));
    }
    powCase(kF32, s, uniform(-4, 4, true), kI32, {}, constant(3));
    // A scalar base.
    powCase(kF32, {}, constant(1.5), kF32, s, uniform(-3, 3, true));
  }
  // Broadcast exponents and bases.
  powCase(kF32, {9, 33}, uniform(0.1, 4), kF32, {33}, uniform(-3, 3));
  powCase(kF32, {33}, uniform(0.1, 4), kF32, {9, 33}, uniform(-3, 3));
  powCase(kF32, {4, 16, 33, 35}, uniform(0.1, 4), kF32, {16, 1, 1},
          uniform(-3, 3));
  powCase(kF32, {1, 4099}, uniform(0.1, 4), kF32, {17, 4099}, uniform(-3, 3));
}

//===----------------------------------------------------------------------===//
// Activation backward: result 0 <- grad (operand 0) or saved (operand 1)
//===----------------------------------------------------------------------===//

struct GradKernel {
  const char *name;
  tidalrt_kernel_fn_t fn;
  bool alpha;
  double lo, hi; // the saved operand's range
};

const GradKernel kGrad[] = {
    {"relu_backward", tidalrt_k_relu_backward, false, -1, 1},
    {"leaky_relu_backward", tidalrt_k_leaky_relu_backward, true, -5, 5},
    {"sigmoid_backward", tidalrt_k_sigmoid_backward, false, 0, 1},
    {"tanh_backward", tidalrt_k_tanh_backward, false, -1, 1},
    {"erf_backward", tidalrt_k_erf_backward, false, -5, 5},
    {"gelu_backward", tidalrt_k_gelu_backward, false, -15, 15},
};

TEST_P(InPlaceKernels, ActivationBackward) {
  for (const GradKernel &k : kGrad)
    for (int32_t type : {kF32, kF64})
      for (const Shape &s : kShapes) {
        Case c{describe(k.name, type, {s}),
               k.fn,
               {{type, s, uniform(-2, 2, true)},
                {type, s, uniform(k.lo, k.hi, true)}},
               {{type, s, nullptr}},
               nullptr,
               {{{0, 0}}, {{0, 1}}}};
        if (k.alpha)
          c.attrs = [](KernelCall &call) { call.attrFloat(0.01); };
        checkCase(c);
      }
}

// The activation family (activation.cpp): output <- input, and
// grad_input <- grad or saved, with their float attributes.
struct ActivationKernel {
  const char *name;
  tidalrt_kernel_fn_t fwd, bwd; // bwd may be null
  std::vector<double> attrs;
  bool ints;
};

const ActivationKernel kActivations[] = {
    {"clip", tidalrt_k_clip, tidalrt_k_clip_backward, {6.0, 0.0}, false},
    {"hard_sigmoid",
     tidalrt_k_hard_sigmoid,
     tidalrt_k_hard_sigmoid_backward,
     {0.2, 0.5},
     false},
    {"hard_swish",
     tidalrt_k_hard_swish,
     tidalrt_k_hard_swish_backward,
     {},
     false},
    {"elu", tidalrt_k_elu, tidalrt_k_elu_backward, {1.0}, false},
    {"selu", tidalrt_k_selu, tidalrt_k_selu_backward, {1.67, 1.05}, false},
    {"celu", tidalrt_k_celu, tidalrt_k_celu_backward, {1.0}, false},
    {"softplus", tidalrt_k_softplus, tidalrt_k_softplus_backward, {}, false},
    {"softsign", tidalrt_k_softsign, tidalrt_k_softsign_backward, {}, false},
    {"mish", tidalrt_k_mish, tidalrt_k_mish_backward, {}, false},
    {"abs", tidalrt_k_abs, nullptr, {}, true},
    {"reciprocal", tidalrt_k_reciprocal, nullptr, {}, false},
    {"sin", tidalrt_k_sin, nullptr, {}, false},
    {"cos", tidalrt_k_cos, nullptr, {}, false},
    {"sign", tidalrt_k_sign, nullptr, {}, true},
    {"floor", tidalrt_k_floor, nullptr, {}, false},
    {"ceil", tidalrt_k_ceil, nullptr, {}, false},
    {"round", tidalrt_k_round, nullptr, {}, false},
};

TEST_P(InPlaceKernels, Activations) {
  for (const ActivationKernel &k : kActivations) {
    std::vector<int32_t> types = {kF32, kF64};
    if (k.ints)
      types.insert(types.end(), {kI64, kI32});
    std::vector<double> attrs = k.attrs;
    auto setAttrs = [attrs](KernelCall &call) {
      for (double a : attrs)
        call.attrFloat(a);
    };
    for (int32_t type : types)
      for (const Shape &s : kShapes) {
        Case c{describe(k.name, type, {s}),
               k.fwd,
               {{type, s, uniform(-8, 8, true)}},
               {{type, s, nullptr}},
               nullptr,
               {{{0, 0}}}};
        c.attrs = setAttrs;
        checkCase(c);
        if (!k.bwd || type == kI64 || type == kI32)
          continue;
        Case b{
            describe(std::string(k.name) + "_backward", type, {s}),
            k.bwd,
            {{type, s, uniform(-2, 2, true)}, {type, s, uniform(-8, 8, true)}},
            {{type, s, nullptr}},
            nullptr,
            {{{0, 0}}, {{0, 1}}}};
        b.attrs = setAttrs;
        checkCase(b);
      }
  }
}

// max, min (logic.cpp): output <- an operand of the result's shape.
TEST_P(InPlaceKernels, MaxMin) {
  for (tidalrt_kernel_fn_t fn : {tidalrt_k_max, tidalrt_k_min})
    for (int32_t type : {kF32, kF64, kI64, kI32})
      for (const auto &sh : kBinaryShapes) {
        const Shape &sa = sh.first, &sb = sh.second;
        Shape sy = broadcastShape(sa, sb);
        checkCase(
            {describe(fn == tidalrt_k_max ? "max" : "min", type, {sa, sb}),
             fn,
             {{type, sa, uniform(-100, 100, true)},
              {type, sb, uniform(-100, 100, true)}},
             {{type, sy, nullptr}},
             nullptr,
             binaryAliases(sa, sb, sy)});
      }
}

//===----------------------------------------------------------------------===//
// Dropout: dropout_backward's result 0 <- grad (the mask is bool); also
// dropout's output <- input
//===----------------------------------------------------------------------===//

TEST_P(InPlaceKernels, DropoutBackward) {
  for (int32_t type : {kF32, kF64})
    for (const Shape &s : kShapes)
      for (double ratio : {0.0, 0.3}) {
        checkCase({describe("dropout_backward", type, {s}) + " ratio " +
                       std::to_string(ratio),
                   tidalrt_k_dropout_backward,
                   {{type, s, uniform(-2, 2, true)}, {kBool, s, mask()}},
                   {{type, s, nullptr}},
                   [ratio](KernelCall &call) { call.attrFloat(ratio); },
                   {{{0, 0}}}});
      }
}

TEST_P(InPlaceKernels, Dropout) {
  for (int32_t type : {kF32, kF64})
    for (const Shape &s : kShapes)
      for (int training : {0, 1}) {
        checkCase({describe("dropout", type, {s}) + " training " +
                       std::to_string(training),
                   tidalrt_k_dropout,
                   {{type, s, uniform(-2, 2, true)}},
                   {{type, s, nullptr}, {kBool, s, nullptr}},
                   [training](KernelCall &call) {
                     // ratio, seed, stream, training
                     call.attrFloat(0.3).attrInt(42).attrAbsent().attrInt(
                         training);
                   },
                   {{{0, 0}}}});
      }
}

//===----------------------------------------------------------------------===//
// softmax, log_softmax: output <- input (Tidal_UnaryOp gives them the
// planner's interface; every element is read before its output is written
// and never read again, in the row and in the column-block code)
//===----------------------------------------------------------------------===//

TEST_P(InPlaceKernels, Softmax) {
  const std::pair<Shape, int64_t> kAxes[] = {
      {{7, 33}, 1},       {{7, 33}, 0},      {{1}, 0},
      {{70001}, 0},       {{4, 1000, 3}, 1}, {{3, 70, 200}, 1},
      {{5, 13, 67}, -1},  {{5, 13, 67}, 1},  {{5, 13, 67}, 0},
      {{2, 9, 8, 17}, 2}, {{40000, 3}, 1},
  };
  for (auto kernel : {std::make_pair("softmax", tidalrt_k_softmax),
                      std::make_pair("log_softmax", tidalrt_k_log_softmax)})
    for (const auto &sa : kAxes) {
      int64_t axis = sa.second;
      checkCase({describe(kernel.first, kF32, {sa.first}) + " axis " +
                     std::to_string(axis),
                 kernel.second,
                 {{kF32, sa.first, uniform(-20, 20)}},
                 {{kF32, sa.first, nullptr}},
                 [axis](KernelCall &call) { call.attrInt(axis); },
                 {{{0, 0}}}});
    }
}

//===----------------------------------------------------------------------===//
// batch_norm_training: the new running statistics <- the running ones (the
// step's BatchNorm state updated where it lives), each alone and both
//===----------------------------------------------------------------------===//

TEST_P(InPlaceKernels, BatchNormTraining) {
  // Channels past the vector width and one image, spatial sizes 1 to 70,
  // one element per channel (m = 1: no unbiasing).
  const Shape kInputs[] = {{2, 3, 4, 5},   {1, 7, 1, 1},   {4, 33, 3, 3},
                           {16, 70, 2, 2}, {3, 17, 7, 10}, {1, 5, 1, 1}};
  for (const Shape &x : kInputs)
    for (int epilogue = 0; epilogue < 3; ++epilogue) {
      const Shape c{x[1]};
      checkCase({describe("batch_norm_training", kF32, {x}) + " epilogue " +
                     std::to_string(epilogue),
                 tidalrt_k_batch_norm_training,
                 {{kF32, x, uniform(-3, 3)},
                  {kF32, c, uniform(0.5, 1.5)},
                  {kF32, c, uniform(-1, 1)},
                  {kF32, c, uniform(-1, 1)},
                  {kF32, c, uniform(0.1, 2)}},
                 {{kF32, x, nullptr},
                  {kF32, c, nullptr},
                  {kF32, c, nullptr},
                  {kF32, c, nullptr},
                  {kF32, c, nullptr}},
                 [epilogue](KernelCall &call) {
                   // clip_max, clip_min, epsilon, momentum, relu
                   if (epilogue == 2)
                     call.attrFloat(6.0).attrFloat(0.0);
                   else
                     call.attrAbsent().attrAbsent();
                   call.attrFloat(1e-5).attrFloat(0.9).attrInt(epilogue == 1);
                 },
                 subsets({{1, 3}, {2, 4}})});
    }
}

//===----------------------------------------------------------------------===//
// Optimizers: new state <- state, each alone and all at once
//===----------------------------------------------------------------------===//

TEST_P(InPlaceKernels, SgdUpdate) {
  for (const Shape &s : kShapes)
    for (double wd : {0.0, 0.01})
      checkCase({describe("sgd_update", kF32, {s}) + " weight_decay " +
                     std::to_string(wd),
                 tidalrt_k_sgd_update,
                 {{kF32, s, uniform(-1, 1)}, {kF32, s, uniform(-1, 1)}},
                 {{kF32, s, nullptr}},
                 [wd](KernelCall &call) { call.attrFloat(0.1).attrFloat(wd); },
                 {{{0, 0}}}});
}

TEST_P(InPlaceKernels, SgdMomentumUpdate) {
  for (const Shape &s : kShapes)
    for (int variant = 0; variant < 4; ++variant) {
      double damp = variant & 1 ? 0.1 : 0.0, wd = variant & 2 ? 1e-3 : 0.0;
      for (int nesterov : {0, 1}) {
        // dampening, lr, momentum, nesterov, weight_decay
        checkCase({describe("sgd_momentum_update", kF32, {s}) + " variant " +
                       std::to_string(variant) + " nesterov " +
                       std::to_string(nesterov),
                   tidalrt_k_sgd_momentum_update,
                   {{kF32, s, uniform(-1, 1)},
                    {kF32, s, uniform(-1, 1)},
                    {kF32, s, uniform(-1, 1)}},
                   {{kF32, s, nullptr}, {kF32, s, nullptr}},
                   [=](KernelCall &call) {
                     call.attrFloat(damp)
                         .attrFloat(0.05)
                         .attrFloat(0.9)
                         .attrInt(nesterov)
                         .attrFloat(wd);
                   },
                   subsets({{0, 0}, {1, 2}})});
      }
    }
}

TEST_P(InPlaceKernels, AdamUpdate) {
  for (const Shape &s : kShapes)
    for (int decoupled : {0, 1})
      for (double wd : {0.0, 0.01}) {
        // beta1, beta2, decoupled, eps, lr, weight_decay
        checkCase({describe("adam_update", kF32, {s}) + " decoupled " +
                       std::to_string(decoupled) + " weight_decay " +
                       std::to_string(wd),
                   tidalrt_k_adam_update,
                   {{kF32, s, uniform(-1, 1)},
                    {kF32, s, uniform(-1, 1)},
                    {kF32, s, uniform(-0.1, 0.1)},
                    {kF32, s, uniform(0, 0.01)},
                    {kI64, {}, constant(3)}},
                   {{kF32, s, nullptr}, {kF32, s, nullptr}, {kF32, s, nullptr}},
                   [=](KernelCall &call) {
                     call.attrFloat(0.9)
                         .attrFloat(0.999)
                         .attrInt(decoupled)
                         .attrFloat(1e-8)
                         .attrFloat(1e-3)
                         .attrFloat(wd);
                   },
                   subsets({{0, 0}, {1, 2}, {2, 3}})});
      }
}

TEST_P(InPlaceKernels, OnnxMomentum) {
  for (const Shape &s : kShapes)
    for (int t : {0, 5})
      for (int nesterov : {0, 1}) {
        // r, t, x, grad, v -> new_x, new_v; alpha, beta, nesterov,
        // norm_coefficient
        checkCase(
            {describe("onnx_momentum", kF32, {s}) + " t " + std::to_string(t) +
                 " nesterov " + std::to_string(nesterov),
             tidalrt_k_onnx_momentum,
             {{kF32, {}, constant(0.01)},
              {kI64, {}, constant(t)},
              {kF32, s, uniform(-1, 1)},
              {kF32, s, uniform(-1, 1)},
              {kF32, s, uniform(-1, 1)}},
             {{kF32, s, nullptr}, {kF32, s, nullptr}},
             [=](KernelCall &call) {
               call.attrFloat(0.9).attrFloat(0.8).attrInt(nesterov).attrFloat(
                   0.01);
             },
             subsets({{0, 2}, {1, 4}})});
      }
}

TEST_P(InPlaceKernels, OnnxAdagrad) {
  for (const Shape &s : kShapes)
    // r, t, x, grad, h -> new_x, new_h; decay_factor, epsilon,
    // norm_coefficient
    checkCase({describe("onnx_adagrad", kF32, {s}),
               tidalrt_k_onnx_adagrad,
               {{kF32, {}, constant(0.1)},
                {kI64, {}, constant(3)},
                {kF32, s, uniform(-1, 1)},
                {kF32, s, uniform(-1, 1)},
                {kF32, s, uniform(0, 1)}},
               {{kF32, s, nullptr}, {kF32, s, nullptr}},
               [](KernelCall &call) {
                 call.attrFloat(0.01).attrFloat(1e-6).attrFloat(0.01);
               },
               subsets({{0, 2}, {1, 4}})});
}

TEST_P(InPlaceKernels, OnnxAdam) {
  for (const Shape &s : kShapes)
    for (int t : {0, 4})
      // r, t, x, grad, v, h -> new_x, new_v, new_h; alpha, beta, epsilon,
      // norm_coefficient, norm_coefficient_post
      checkCase({describe("onnx_adam", kF32, {s}) + " t " + std::to_string(t),
                 tidalrt_k_onnx_adam,
                 {{kF32, {}, constant(0.01)},
                  {kI64, {}, constant(t)},
                  {kF32, s, uniform(-1, 1)},
                  {kF32, s, uniform(-1, 1)},
                  {kF32, s, uniform(-0.1, 0.1)},
                  {kF32, s, uniform(0, 0.01)}},
                 {{kF32, s, nullptr}, {kF32, s, nullptr}, {kF32, s, nullptr}},
                 [](KernelCall &call) {
                   call.attrFloat(0.9)
                       .attrFloat(0.999)
                       .attrFloat(1e-6)
                       .attrFloat(0.01)
                       .attrFloat(1e-3);
                 },
                 subsets({{0, 2}, {1, 4}, {2, 5}})});
}

INSTANTIATE_TEST_SUITE_P(
    InPlace, InPlaceKernels,
    ::testing::Values(Config{"avx512", 1}, Config{"avx512", 4},
                      Config{"avx2", 1}, Config{"avx2", 4}, Config{"scalar", 1},
                      Config{"scalar", 4}),
    [](const ::testing::TestParamInfo<Config> &info) {
      return std::string(info.param.isa) + "_" +
             std::to_string(info.param.threads) +
             (info.param.threads == 1 ? "thread" : "threads");
    });

//===----------------------------------------------------------------------===//
// The harness itself catches a kernel that is wrong in place
//===----------------------------------------------------------------------===//

// y[i] = x[i] + x[n - 1 - i]: right out of place, wrong when y is x (the
// second half reads elements already overwritten).
tidalrt_status_t mirrorAddKernel(tidalrt_context_t *, const int64_t *desc,
                                 void *const *buffers) {
  // desc: index, 2 tensors, (type, rank 1, n) twice, 0 attributes.
  const int64_t n = desc[4];
  const float *x = static_cast<const float *>(buffers[0]);
  float *y = static_cast<float *>(buffers[1]);
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] + x[n - 1 - i];
  return nullptr;
}

void checkMirrorAdd() {
  checkCase({"mirror_add",
             mirrorAddKernel,
             {{kF32, {33}, uniform(-1, 1)}},
             {{kF32, {33}, nullptr}},
             nullptr,
             {{{0, 0}}}});
}

TEST(InPlaceHarness, CatchesAKernelThatIsWrongInPlace) {
  EXPECT_NONFATAL_FAILURE(checkMirrorAdd(), "result 0 in place");
}

} // namespace
