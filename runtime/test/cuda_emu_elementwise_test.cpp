// Tests of the elementwise CUDA kernels emulated on the host
// (tidalrt_emu_k_<name>, src/cuda/elementwise/) against the CPU kernels
// (tidalrt_k_<name>) on the same calls: results, the bytes of every tensor
// afterwards, and error statuses (code and message) must agree.
//
// With TIDAL_CPU_ISA=scalar every comparison is bitwise (a NaN matches any
// NaN: payloads carry no meaning and GPUs make canonical NaNs): the CUDA
// kernels compute the CPU scalar path's expressions in its order. With the
// AVX2 path the comparison is bitwise for IEEE-only ops, and within a
// stated tolerance where the CPU's vector code differs from its scalar
// code (its own exp/log/tanh/erf/gelu polynomials, an FMA in
// tanh_backward, another summation order for float32 rows).
//
// Each call also runs with a launcher that visits indices backwards
// (ReverseLauncher), which must give the same bytes: no body depends on the
// order (or grouping) in which the GPU runs its threads.
#include "isa_test_util.h"
#include "kernel_test_util.h"

#include "../src/cuda/elementwise/activation.h"
#include "../src/cuda/elementwise/binary.h"
#include "../src/cuda/elementwise/cast.h"
#include "../src/cuda/elementwise/dropout.h"
#include "../src/cuda/elementwise/list.h"
#include "../src/cuda/elementwise/logic.h"
#include "../src/cuda/elementwise/reduce.h"
#include "../src/cuda/elementwise/unary.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace emu_test {

// Runs bodies from the last index to the first.
struct ReverseLauncher : tidalrt::cuda::EmuLauncher {
  using EmuLauncher::EmuLauncher;
  template <class Body> void forEach(int64_t n, const Body &body) const {
    if (preparing())
      return;
    for (int64_t i = n - 1; i >= 0; --i)
      body(i);
  }
};

} // namespace emu_test

#define TIDALRT_TEST_DECLARE_EMU(name)                                         \
  extern "C" tidalrt_status_t tidalrt_emu_k_##name(                            \
      tidalrt_context_t *, const int64_t *, void *const *);
TIDALRT_CUDA_ELEMENTWISE_KERNEL_LIST(TIDALRT_TEST_DECLARE_EMU)
#undef TIDALRT_TEST_DECLARE_EMU

#define TIDALRT_TEST_DEFINE_REVERSE(name)                                      \
  TIDALRT_CUDA_DEFINE_KERNEL(test_reverse_k_, name, emu_test::ReverseLauncher)
TIDALRT_CUDA_ELEMENTWISE_KERNEL_LIST(TIDALRT_TEST_DEFINE_REVERSE)
#undef TIDALRT_TEST_DEFINE_REVERSE

using tidalrt_test::KernelCall;

namespace {

using Shape = std::vector<int64_t>;
using Bytes = std::vector<uint8_t>;

int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

std::string str(const Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

size_t typeSize(tidalrt_element_type_t t) {
  return tidalrt_element_type_size(t);
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

struct Tensor {
  tidalrt_element_type_t type = TIDALRT_ELEMENT_TYPE_F32;
  Shape dims;
  bool absent = false;
  Bytes bytes; // inputs; results start as a fixed pattern
};

struct Attr {
  int64_t tag = TIDALRT_ATTR_ABSENT;
  int64_t i = 0;
  double f = 0.0;
  std::vector<int64_t> ints;
};

struct Case {
  std::vector<Tensor> tensors;
  std::vector<Attr> attrs;
  int64_t opIndex = 0;
  uint64_t seed = 0, step = 0;
  int aliasOut = -1, aliasIn = -1; // tensor aliasOut uses aliasIn's buffer
  std::string what;                // names the case in failures

  Case &in(tidalrt_element_type_t t, Shape d, Bytes b) {
    tensors.push_back({t, std::move(d), false, std::move(b)});
    return *this;
  }
  Case &out(tidalrt_element_type_t t, Shape d) {
    tensors.push_back({t, std::move(d), false, {}});
    return *this;
  }
  Case &absent() {
    Tensor t;
    t.absent = true;
    tensors.push_back(t);
    return *this;
  }
  Case &attrInt(int64_t v) {
    Attr a;
    a.tag = TIDALRT_ATTR_INT;
    a.i = v;
    attrs.push_back(a);
    return *this;
  }
  Case &attrFloat(double v) {
    Attr a;
    a.tag = TIDALRT_ATTR_FLOAT;
    a.f = v;
    attrs.push_back(a);
    return *this;
  }
  Case &attrInts(std::vector<int64_t> v) {
    Attr a;
    a.tag = TIDALRT_ATTR_INTS;
    a.ints = std::move(v);
    attrs.push_back(a);
    return *this;
  }
  Case &attrAbsent() {
    attrs.push_back(Attr());
    return *this;
  }
};

struct Outcome {
  std::string error;
  std::vector<Bytes> data; // every tensor's bytes afterwards
};

Outcome runCase(const Case &c, tidalrt_kernel_fn_t fn, bool prepare = true) {
  Outcome o;
  std::vector<Bytes> buf(c.tensors.size());
  KernelCall call(c.opIndex);
  std::vector<void *> ptrs(c.tensors.size(), nullptr);
  for (size_t k = 0; k < c.tensors.size(); ++k) {
    const Tensor &t = c.tensors[k];
    if (t.absent)
      continue;
    const size_t bytes = (size_t)numel(t.dims) * typeSize(t.type);
    // Results start as 0xA5 bytes; inputs shorter than their shape (error
    // cases) are padded the same way. At least 16 bytes: a valid pointer.
    buf[k].assign(bytes > 16 ? bytes : 16, 0xA5);
    // memcpy from an empty vector's null data() is undefined even for 0.
    if (size_t n = t.bytes.size() < bytes ? t.bytes.size() : bytes)
      std::memcpy(buf[k].data(), t.bytes.data(), n);
    ptrs[k] = buf[k].data();
  }
  if (c.aliasOut >= 0)
    ptrs[c.aliasOut] = ptrs[c.aliasIn];
  for (size_t k = 0; k < c.tensors.size(); ++k) {
    const Tensor &t = c.tensors[k];
    if (t.absent)
      call.absent();
    else
      call.tensor(t.type, t.dims, ptrs[k]);
  }
  for (const Attr &a : c.attrs) {
    if (a.tag == TIDALRT_ATTR_INT)
      call.attrInt(a.i);
    else if (a.tag == TIDALRT_ATTR_FLOAT)
      call.attrFloat(a.f);
    else if (a.tag == TIDALRT_ATTR_INTS)
      call.attrInts(a.ints);
    else
      call.attrAbsent();
  }
  o.error = call.run(fn, prepare, c.seed, c.step);
  if (c.aliasOut >= 0)
    buf[c.aliasOut] = buf[c.aliasIn];
  o.data = std::move(buf);
  return o;
}

//===----------------------------------------------------------------------===//
// Comparisons
//===----------------------------------------------------------------------===//

// rtol = atol = 0: bitwise (NaN matches NaN).
struct Tol {
  double rtol = 0.0, atol = 0.0;
};

template <typename F> bool floatMatch(F a, F b, Tol tol) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  if (tol.rtol == 0.0 && tol.atol == 0.0)
    return std::memcmp(&a, &b, sizeof a) == 0;
  if (std::isinf(a) || std::isinf(b))
    return a == b;
  double d = std::fabs((double)a - (double)b);
  double m = std::fmax(std::fabs((double)a), std::fabs((double)b));
  return d <= tol.rtol * m + tol.atol;
}

// "" when element i of `a` and `b` (of `type`) match, else both values.
std::string elementMismatch(tidalrt_element_type_t type, const uint8_t *a,
                            const uint8_t *b, int64_t i, Tol tol) {
  char m[160];
  if (type == TIDALRT_ELEMENT_TYPE_F32) {
    float x, y;
    std::memcpy(&x, a + i * 4, 4);
    std::memcpy(&y, b + i * 4, 4);
    if (floatMatch(x, y, tol))
      return "";
    snprintf(m, sizeof m, "%.9g vs %.9g (%a vs %a)", x, y, x, y);
  } else if (type == TIDALRT_ELEMENT_TYPE_F64) {
    double x, y;
    std::memcpy(&x, a + i * 8, 8);
    std::memcpy(&y, b + i * 8, 8);
    if (floatMatch(x, y, tol))
      return "";
    snprintf(m, sizeof m, "%.17g vs %.17g (%a vs %a)", x, y, x, y);
  } else {
    const size_t s = typeSize(type);
    if (std::memcmp(a + i * s, b + i * s, s) == 0)
      return "";
    uint64_t x = 0, y = 0;
    std::memcpy(&x, a + i * s, s);
    std::memcpy(&y, b + i * s, s);
    snprintf(m, sizeof m, "bits %llx vs %llx", (unsigned long long)x,
             (unsigned long long)y);
  }
  return m;
}

// Expects `want` (CPU) and `got` (emulated) to agree on the status and on
// every tensor's bytes.
void expectSame(const Case &c, const Outcome &want, const Outcome &got, Tol tol,
                const char *against) {
  SCOPED_TRACE(c.what + " (" + against + ")");
  EXPECT_EQ(want.error, got.error);
  if (!want.error.empty() || !got.error.empty())
    return;
  for (size_t k = 0; k < c.tensors.size(); ++k) {
    const Tensor &t = c.tensors[k];
    if (t.absent)
      continue;
    const int64_t n = numel(t.dims);
    const Bytes &a = want.data[k], &b = got.data[k];
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; ++i) {
      std::string mismatch = elementMismatch(t.type, &a[0], &b[0], i, tol);
      if (!mismatch.empty()) {
        ++bad;
        ADD_FAILURE() << "tensor " << k << " " << str(t.dims) << " element "
                      << i << ": " << mismatch;
      }
    }
  }
}

// A kernel's three variants.
struct Kernel {
  tidalrt_kernel_fn_t cpu, emu, reverse;
  const char *name;
};
#define KERNEL(name)                                                           \
  Kernel {                                                                     \
    tidalrt_k_##name, tidalrt_emu_k_##name, test_reverse_k_##name, #name       \
  }

class CudaEmuElementwise : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    TIDALRT_SKIP_UNLESS_ISA(GetParam());
    setenv("TIDAL_CPU_ISA", GetParam(), 1);
  }
  void TearDown() override { unsetenv("TIDAL_CPU_ISA"); }

  bool scalar() const { return std::string(GetParam()) == "scalar"; }

  // Runs `c` on the CPU, emulated and reversed; `avx2` is the tolerance
  // against the CPU's AVX2 path (bitwise by default).
  void check(const Kernel &k, Case c, Tol avx2 = Tol()) {
    c.what = std::string(k.name) + ": " + c.what;
    Outcome want = runCase(c, k.cpu);
    Outcome got = runCase(c, k.emu);
    expectSame(c, want, got, scalar() ? Tol() : avx2, "cpu");
    expectSame(c, got, runCase(c, k.reverse), Tol(), "reversed launch");
  }

  // Expects both to fail with the same status (code and message).
  void checkError(const Kernel &k, Case c, const char *code) {
    c.what = std::string(k.name) + ": " + c.what;
    SCOPED_TRACE(c.what);
    Outcome want = runCase(c, k.cpu);
    Outcome got = runCase(c, k.emu);
    EXPECT_EQ(want.error.rfind(code, 0), 0u) << want.error;
    EXPECT_EQ(want.error, got.error);
  }
};

// The CPU's vector math is within 1e-6 relative (simd_avx2.cpp);
// tanh_backward's FMA differs from the scalar product by an ulp of 1 times
// |grad|.
constexpr Tol kVectorMath = {4e-6, 1e-6};

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

class Gen {
public:
  explicit Gen(uint64_t seed) : rng(seed) {}
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  }
  int64_t integer(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }
  uint64_t bits() { return rng(); }

private:
  std::mt19937_64 rng;
};

// How to fill a tensor.
struct Fill {
  double lo = -10.0, hi = 10.0; // floats, and integers unless fullRange
  bool specials = true;         // place special values among the elements
  bool fullRange = false;       // integers: any value of the type
  bool noZero = false;          // integers: never 0 (divisors)
};

template <typename T> Bytes bytesOf(const std::vector<T> &v) {
  Bytes b(v.size() * sizeof(T));
  if (!v.empty())
    std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <typename T> std::vector<T> floatValues(int64_t n, Gen &g, Fill f) {
  static const double kSpecials[] = {
      0.0,    -0.0,    INFINITY, -INFINITY, NAN,   1e-40, -1e-40,
      1e-310, FLT_MAX, -FLT_MAX, 1e-30,     88.5,  -88.5, 100.0,
      -103.5, 0.5,     -0.5,     1.0,       -1.0,  2.0,   9.2,
      12.5,   -12.6,   4.0,      -4.1,      0.625, -6.0,  3.0};
  const int64_t ns = (int64_t)(sizeof kSpecials / sizeof kSpecials[0]);
  std::vector<T> v((size_t)n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = (T)g.uniform(f.lo, f.hi);
  if (f.specials && n > 0) {
    const int64_t step = n / ns > 1 ? n / ns : 1;
    for (int64_t k = 0; k < ns && k * step < n; ++k)
      v[k * step] = (T)kSpecials[k];
  }
  return v;
}

template <typename T> std::vector<T> intValues(int64_t n, Gen &g, Fill f) {
  using L = std::numeric_limits<T>;
  std::vector<T> v((size_t)n);
  for (int64_t i = 0; i < n; ++i) {
    if (f.fullRange)
      v[i] = (T)g.bits();
    else
      v[i] = (T)g.integer((int64_t)f.lo, (int64_t)f.hi);
    if (f.noZero && v[i] == 0)
      v[i] = 1;
  }
  if (f.specials && n > 0) {
    const T s[] = {L::min(), L::max(), (T)0, (T)1, (T)-1, (T)(L::min() + 1)};
    const int64_t ns = 6, step = n / ns > 1 ? n / ns : 1;
    for (int64_t k = 0; k < ns && k * step < n; ++k)
      if (!(f.noZero && s[k] == 0))
        v[k * step] = s[k];
  }
  return v;
}

Bytes values(tidalrt_element_type_t type, int64_t n, Gen &g, Fill f = Fill()) {
  switch (type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return bytesOf(floatValues<float>(n, g, f));
  case TIDALRT_ELEMENT_TYPE_F64:
    return bytesOf(floatValues<double>(n, g, f));
  case TIDALRT_ELEMENT_TYPE_I64:
    return bytesOf(intValues<int64_t>(n, g, f));
  case TIDALRT_ELEMENT_TYPE_I32:
    return bytesOf(intValues<int32_t>(n, g, f));
  case TIDALRT_ELEMENT_TYPE_I16:
    return bytesOf(intValues<int16_t>(n, g, f));
  case TIDALRT_ELEMENT_TYPE_I8:
    return bytesOf(intValues<int8_t>(n, g, f));
  case TIDALRT_ELEMENT_TYPE_U64:
    return bytesOf(intValues<uint64_t>(n, g, f));
  case TIDALRT_ELEMENT_TYPE_U32:
    return bytesOf(intValues<uint32_t>(n, g, f));
  case TIDALRT_ELEMENT_TYPE_U16:
    return bytesOf(intValues<uint16_t>(n, g, f));
  case TIDALRT_ELEMENT_TYPE_U8:
    return bytesOf(intValues<uint8_t>(n, g, f));
  case TIDALRT_ELEMENT_TYPE_BOOL: {
    Bytes b((size_t)n);
    for (auto &x : b)
      x = (uint8_t)(g.bits() & 1);
    return b;
  }
  default: { // float16, bfloat16: any bits
    Bytes b((size_t)n * typeSize(type));
    for (auto &x : b)
      x = (uint8_t)g.bits();
    return b;
  }
  }
}

const char *name(tidalrt_element_type_t t) {
  return tidalrt_element_type_name(t);
}

const tidalrt_element_type_t kArithTypes[] = {
    TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64,
    TIDALRT_ELEMENT_TYPE_I64, TIDALRT_ELEMENT_TYPE_I32,
    TIDALRT_ELEMENT_TYPE_I16, TIDALRT_ELEMENT_TYPE_I8,
    TIDALRT_ELEMENT_TYPE_U64, TIDALRT_ELEMENT_TYPE_U32,
    TIDALRT_ELEMENT_TYPE_U16, TIDALRT_ELEMENT_TYPE_U8};

bool isFloat(tidalrt_element_type_t t) {
  return t == TIDALRT_ELEMENT_TYPE_F32 || t == TIDALRT_ELEMENT_TYPE_F64;
}

// Operand and result shapes of binary ops: equal, broadcast both ways,
// rank 0 and 1, sizes not a multiple of anything, empty, and large enough
// for the CPU's parallel loops.
struct BinaryShapes {
  Shape a, b, y;
};
const BinaryShapes kBinaryShapes[] = {
    {{}, {}, {}},
    {{1}, {1}, {1}},
    {{7}, {7}, {7}},
    {{3, 5}, {3, 5}, {3, 5}},
    {{3, 1}, {1, 5}, {3, 5}},
    {{2, 3, 4}, {4}, {2, 3, 4}},
    {{4}, {2, 3, 4}, {2, 3, 4}},
    {{2, 1, 4, 1}, {3, 1, 5}, {2, 3, 4, 5}},
    {{5, 1, 7}, {1, 6, 1}, {5, 6, 7}},
    {{}, {4, 5}, {4, 5}},
    {{6, 1}, {}, {6, 1}},
    {{1, 1, 1}, {1}, {1, 1, 1}},
    {{37, 1, 1}, {37, 11, 13}, {37, 11, 13}},
    {{0, 3}, {3}, {0, 3}},
    {{2, 0}, {1}, {2, 0}},
    {{300, 257}, {257}, {300, 257}},
    {{40001}, {}, {40001}},
};

//===----------------------------------------------------------------------===//
// add, sub, mul, div
//===----------------------------------------------------------------------===//

TEST_P(CudaEmuElementwise, Arithmetic) {
  const Kernel kernels[] = {KERNEL(add), KERNEL(sub), KERNEL(mul), KERNEL(div)};
  Gen g(1);
  for (const Kernel &k : kernels) {
    const bool div = std::string(k.name) == "div";
    for (tidalrt_element_type_t t : kArithTypes) {
      for (const BinaryShapes &s : kBinaryShapes) {
        Fill fa, fb;
        fa.fullRange = true;
        // Integer divisors: mostly small (so quotients are not all 0),
        // never 0 (the CPU fails on those, see IntegerDivisionByZero).
        fb.fullRange = !div || g.integer(0, 3) == 0;
        fb.lo = -9, fb.hi = 9;
        fb.noZero = div;
        Case c;
        c.in(t, s.a, values(t, numel(s.a), g, fa))
            .in(t, s.b, values(t, numel(s.b), g, fb))
            .out(t, s.y);
        c.what = std::string(name(t)) + " " + str(s.a) + " " + str(s.b);
        check(k, c);
      }
    }
  }
}

TEST_P(CudaEmuElementwise, ArithmeticInPlace) {
  Gen g(2);
  for (const Kernel &k : {KERNEL(add), KERNEL(div)}) {
    Case c;
    c.in(TIDALRT_ELEMENT_TYPE_F32, {33, 9},
         values(TIDALRT_ELEMENT_TYPE_F32, 297, g))
        .in(TIDALRT_ELEMENT_TYPE_F32, {9},
            values(TIDALRT_ELEMENT_TYPE_F32, 9, g))
        .out(TIDALRT_ELEMENT_TYPE_F32, {33, 9});
    c.aliasOut = 2, c.aliasIn = 0;
    c.what = "in place";
    check(k, c);
  }
}

// The one documented difference: the CPU fails on an integer division by
// zero (it reads the divisor on the host); the CUDA kernel cannot without
// synchronising and writes 0 there.
TEST_P(CudaEmuElementwise, IntegerDivisionByZero) {
  std::vector<int32_t> a = {7, -8, 9, INT32_MIN}, b = {2, 0, -1, -1};
  std::vector<int32_t> y(4, 0);
  KernelCall call;
  call.tensor(TIDALRT_ELEMENT_TYPE_I32, {4}, a.data())
      .tensor(TIDALRT_ELEMENT_TYPE_I32, {4}, b.data())
      .tensor(TIDALRT_ELEMENT_TYPE_I32, {4}, y.data());
  EXPECT_EQ(call.run(tidalrt_k_div).rfind("INVALID_ARGUMENT", 0), 0u);
  EXPECT_EQ(call.run(tidalrt_emu_k_div), "");
  EXPECT_EQ(y, (std::vector<int32_t>{3, 0, -9, INT32_MIN}));
}

TEST_P(CudaEmuElementwise, ArithmeticErrors) {
  const tidalrt_element_type_t f32 = TIDALRT_ELEMENT_TYPE_F32;
  Gen g(3);
  for (const Kernel &k :
       {KERNEL(add), KERNEL(sub), KERNEL(mul), KERNEL(div), KERNEL(pow)}) {
    Case noBroadcast;
    noBroadcast.in(f32, {3}, values(f32, 3, g))
        .in(f32, {4}, values(f32, 4, g))
        .out(f32, {3});
    noBroadcast.what = "shapes";
    checkError(k, noBroadcast, "INVALID_ARGUMENT");
    Case lhs;
    lhs.in(f32, {2, 3}, values(f32, 6, g))
        .in(f32, {3}, values(f32, 3, g))
        .out(f32, {3});
    lhs.what = "lhs larger than the result";
    checkError(k, lhs, "INVALID_ARGUMENT");
    Case types;
    types
        .in(TIDALRT_ELEMENT_TYPE_F64, {3},
            values(TIDALRT_ELEMENT_TYPE_F64, 3, g))
        .in(f32, {3}, values(f32, 3, g))
        .out(f32, {3});
    types.what = "types";
    checkError(k, types, "INVALID_ARGUMENT");
    Case unsupported;
    unsupported.in(TIDALRT_ELEMENT_TYPE_F16, {3}, Bytes(6))
        .in(TIDALRT_ELEMENT_TYPE_F16, {3}, Bytes(6))
        .out(TIDALRT_ELEMENT_TYPE_F16, {3});
    unsupported.what = "float16";
    checkError(k, unsupported, "UNSUPPORTED");
    Case count;
    count.in(f32, {3}, values(f32, 3, g)).out(f32, {3});
    count.what = "two tensors";
    checkError(k, count, "INTERNAL");
    Case absent;
    absent.in(f32, {3}, values(f32, 3, g)).absent().out(f32, {3});
    absent.what = "absent rhs";
    checkError(k, absent, "INVALID_ARGUMENT");
  }
  // pow: int16 base, bool exponent.
  Case powBase;
  powBase.in(TIDALRT_ELEMENT_TYPE_I16, {3}, Bytes(6))
      .in(TIDALRT_ELEMENT_TYPE_I16, {3}, Bytes(6))
      .out(TIDALRT_ELEMENT_TYPE_I16, {3});
  powBase.what = "int16";
  checkError(KERNEL(pow), powBase, "UNSUPPORTED");
  Case powExp;
  powExp.in(f32, {3}, values(f32, 3, g))
      .in(TIDALRT_ELEMENT_TYPE_BOOL, {3}, Bytes(3))
      .out(f32, {3});
  powExp.what = "bool exponent";
  checkError(KERNEL(pow), powExp, "UNSUPPORTED");
}

//===----------------------------------------------------------------------===//
// pow
//===----------------------------------------------------------------------===//

const tidalrt_element_type_t kPowBaseTypes[] = {
    TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64,
    TIDALRT_ELEMENT_TYPE_I64, TIDALRT_ELEMENT_TYPE_I32};
const tidalrt_element_type_t kPowExponentTypes[] = {
    TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64,
    TIDALRT_ELEMENT_TYPE_I64, TIDALRT_ELEMENT_TYPE_I32,
    TIDALRT_ELEMENT_TYPE_U32, TIDALRT_ELEMENT_TYPE_U64};

bool isSigned(tidalrt_element_type_t t) {
  return t != TIDALRT_ELEMENT_TYPE_U32 && t != TIDALRT_ELEMENT_TYPE_U64;
}

// Every base and exponent type over broadcast shapes.
TEST_P(CudaEmuElementwise, Pow) {
  Gen g(4);
  for (tidalrt_element_type_t tb : kPowBaseTypes) {
    for (tidalrt_element_type_t te : kPowExponentTypes) {
      for (const BinaryShapes &s : kBinaryShapes) {
        Fill fb, fe;
        fb.lo = isFloat(tb) ? -4.0 : -6.0;
        fb.hi = isFloat(tb) ? 4.0 : 6.0;
        fe.lo = isSigned(te) ? -4.0 : 0.0;
        fe.hi = isFloat(tb) ? 4.0 : 30.0;
        Case c;
        c.in(tb, s.a, values(tb, numel(s.a), g, fb))
            .in(te, s.b, values(te, numel(s.b), g, fe))
            .out(tb, s.y);
        c.what = std::string(name(tb)) + "^" + name(te) + " " + str(s.a) + " " +
                 str(s.b);
        check(KERNEL(pow), c);
      }
    }
  }
}

// A scalar exponent with a float32 base takes the CPU's shortcuts for 1,
// 2, 3, 0.5 and -1; others (and integer exponents beyond 2^24) the general
// path.
TEST_P(CudaEmuElementwise, PowScalarExponent) {
  const tidalrt_element_type_t f32 = TIDALRT_ELEMENT_TYPE_F32;
  Gen g(5);
  const double exps[] = {1.0,  2.0, 3.0, 0.5,        -1.0,       1.5,
                         -2.0, 0.0, 4.0, 33554433.0, -33554432.0};
  for (tidalrt_element_type_t te : kPowExponentTypes) {
    for (double e : exps) {
      if (!isFloat(te) && (e != std::floor(e) || (!isSigned(te) && e < 0)))
        continue;
      Bytes eb;
      switch (te) {
      case TIDALRT_ELEMENT_TYPE_F32:
        eb = bytesOf(std::vector<float>{(float)e});
        break;
      case TIDALRT_ELEMENT_TYPE_F64:
        eb = bytesOf(std::vector<double>{e});
        break;
      case TIDALRT_ELEMENT_TYPE_I64:
        eb = bytesOf(std::vector<int64_t>{(int64_t)e});
        break;
      case TIDALRT_ELEMENT_TYPE_I32:
        eb = bytesOf(std::vector<int32_t>{(int32_t)e});
        break;
      case TIDALRT_ELEMENT_TYPE_U32:
        eb = bytesOf(std::vector<uint32_t>{(uint32_t)e});
        break;
      default:
        eb = bytesOf(std::vector<uint64_t>{(uint64_t)e});
        break;
      }
      for (const Shape &sb : {Shape{}, Shape{1, 1}}) {
        Fill f;
        f.lo = -3.0, f.hi = 3.0;
        Case c;
        c.in(f32, {2, 517}, values(f32, 1034, g, f))
            .in(te, sb, eb)
            .out(f32, {2, 517});
        c.what = std::string(name(te)) + " " + std::to_string(e);
        check(KERNEL(pow), c);
      }
    }
  }
}

// Integer powers: every base in [-6, 6] and some extremes with every
// exponent in [-3, 70], plus exponents beyond 2^53 (whose parity as a
// double is even) and float exponents.
TEST_P(CudaEmuElementwise, PowIntegers) {
  const std::vector<int64_t> bases64 = {
      -6,   -5,    -4,        -3,        -2,        -1,        0,
      1,    2,     3,         4,         5,         6,         7,
      1000, -1000, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, (1ll << 53) + 1};
  std::vector<int64_t> exps;
  for (int64_t e = -3; e <= 70; ++e)
    exps.push_back(e);
  for (int64_t e :
       {(int64_t)(1ll << 53) - 1, (int64_t)(1ll << 53) + 1,
        -(int64_t)(1ll << 53) - 1, (int64_t)INT64_MAX, (int64_t)INT64_MIN})
    exps.push_back(e);
  const int64_t nb = (int64_t)bases64.size(), ne = (int64_t)exps.size();
  std::vector<int32_t> bases32(bases64.begin(), bases64.end());
  std::vector<int32_t> exps32;
  std::vector<uint64_t> expsU64;
  std::vector<uint32_t> expsU32;
  for (int64_t e : exps) {
    exps32.push_back((int32_t)e);
    expsU64.push_back((uint64_t)e);
    expsU32.push_back((uint32_t)e);
  }
  std::vector<double> expsF64 = {0.5,  1.5,  -1.0, -0.5,     2.0,
                                 62.5, 63.0, NAN,  INFINITY, -INFINITY};
  std::vector<float> expsF32(expsF64.begin(), expsF64.end());
  struct Exp {
    tidalrt_element_type_t type;
    Bytes bytes;
    int64_t n;
  };
  const Exp exponents[] = {
      {TIDALRT_ELEMENT_TYPE_I64, bytesOf(exps), ne},
      {TIDALRT_ELEMENT_TYPE_I32, bytesOf(exps32), ne},
      {TIDALRT_ELEMENT_TYPE_U64, bytesOf(expsU64), ne},
      {TIDALRT_ELEMENT_TYPE_U32, bytesOf(expsU32), ne},
      {TIDALRT_ELEMENT_TYPE_F64, bytesOf(expsF64), (int64_t)expsF64.size()},
      {TIDALRT_ELEMENT_TYPE_F32, bytesOf(expsF32), (int64_t)expsF32.size()}};
  for (const Exp &e : exponents) {
    for (tidalrt_element_type_t tb :
         {TIDALRT_ELEMENT_TYPE_I64, TIDALRT_ELEMENT_TYPE_I32}) {
      Case c;
      c.in(tb, {nb, 1},
           tb == TIDALRT_ELEMENT_TYPE_I64 ? bytesOf(bases64) : bytesOf(bases32))
          .in(e.type, {1, e.n}, e.bytes)
          .out(tb, {nb, e.n});
      c.what = std::string(name(tb)) + "^" + name(e.type);
      check(KERNEL(pow), c);
    }
  }
}

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

const Shape kUnaryShapes[] = {{},         {1}, {7},       {3, 5},
                              {2, 3, 17}, {0}, {4, 0, 3}, {70001}};

struct UnaryKernel {
  Kernel k;
  bool ints;     // also int64 and int32
  bool alpha;    // has the attribute alpha
  bool vector;   // the CPU's AVX2 path uses its own math
  double lo, hi; // input range
};

TEST_P(CudaEmuElementwise, Unary) {
  const UnaryKernel kernels[] = {
      {KERNEL(neg), true, false, false, -10, 10},
      {KERNEL(relu), true, false, false, -10, 10},
      {KERNEL(sigmoid), false, false, true, -30, 30},
      {KERNEL(tanh), false, false, true, -12, 12},
      {KERNEL(sqrt), false, false, false, -1, 100},
      {KERNEL(erf), true, false, true, -5, 5},
      {KERNEL(exp), false, false, true, -90, 90},
      {KERNEL(log), false, false, true, -0.5, 1000},
      {KERNEL(leaky_relu), false, true, false, -10, 10},
      {KERNEL(gelu), false, false, true, -15, 15}};
  Gen g(6);
  for (const UnaryKernel &u : kernels) {
    std::vector<tidalrt_element_type_t> types = {TIDALRT_ELEMENT_TYPE_F32,
                                                 TIDALRT_ELEMENT_TYPE_F64};
    if (u.ints) {
      types.push_back(TIDALRT_ELEMENT_TYPE_I64);
      types.push_back(TIDALRT_ELEMENT_TYPE_I32);
    }
    for (tidalrt_element_type_t t : types) {
      for (const Shape &s : kUnaryShapes) {
        for (double alpha : {0.01, -0.3, 2.5}) {
          Fill f;
          f.lo = u.lo, f.hi = u.hi;
          Case c;
          c.in(t, s, values(t, numel(s), g, f)).out(t, s);
          if (u.alpha)
            c.attrFloat(alpha);
          c.what = std::string(name(t)) + " " + str(s) + " alpha " +
                   std::to_string(alpha);
          check(u.k, c, u.vector ? kVectorMath : Tol());
          if (!u.alpha)
            break;
        }
      }
    }
  }
}

// int erf is trunc(erf(x)): 0 up to |x| = 5, +-1 from 6 on; every value
// around the switch and the extremes of both types.
TEST_P(CudaEmuElementwise, IntegerErf) {
  std::vector<int64_t> x64;
  for (int64_t v = -12; v <= 12; ++v)
    x64.push_back(v);
  for (int64_t v : {INT64_MIN, INT64_MAX, (int64_t)INT32_MIN,
                    (int64_t)INT32_MAX, (int64_t)1 << 40})
    x64.push_back(v);
  std::vector<int32_t> x32(x64.begin(), x64.end());
  const int64_t n = (int64_t)x64.size();
  Case c64, c32;
  c64.in(TIDALRT_ELEMENT_TYPE_I64, {n}, bytesOf(x64))
      .out(TIDALRT_ELEMENT_TYPE_I64, {n});
  c64.what = "int64";
  c32.in(TIDALRT_ELEMENT_TYPE_I32, {n}, bytesOf(x32))
      .out(TIDALRT_ELEMENT_TYPE_I32, {n});
  c32.what = "int32";
  check(KERNEL(erf), c64);
  check(KERNEL(erf), c32);
}

TEST_P(CudaEmuElementwise, UnaryInPlace) {
  Gen g(7);
  for (const Kernel &k : {KERNEL(relu), KERNEL(gelu), KERNEL(exp)}) {
    Case c;
    c.in(TIDALRT_ELEMENT_TYPE_F32, {1000},
         values(TIDALRT_ELEMENT_TYPE_F32, 1000, g))
        .out(TIDALRT_ELEMENT_TYPE_F32, {1000});
    c.aliasOut = 1, c.aliasIn = 0;
    c.what = "in place";
    check(k, c, kVectorMath);
  }
}

TEST_P(CudaEmuElementwise, UnaryErrors) {
  const tidalrt_element_type_t f32 = TIDALRT_ELEMENT_TYPE_F32;
  Gen g(8);
  for (const Kernel &k : {KERNEL(neg), KERNEL(relu), KERNEL(sigmoid),
                          KERNEL(tanh), KERNEL(sqrt), KERNEL(erf), KERNEL(exp),
                          KERNEL(log), KERNEL(leaky_relu), KERNEL(gelu)}) {
    const bool alpha = std::string(k.name) == "leaky_relu";
    auto withAlpha = [&](Case c) {
      if (alpha)
        c.attrFloat(0.1);
      return c;
    };
    Case types;
    types.in(f32, {3}, values(f32, 3, g)).out(TIDALRT_ELEMENT_TYPE_F64, {3});
    types.what = "types";
    checkError(k, withAlpha(types), "INVALID_ARGUMENT");
    Case i16;
    i16.in(TIDALRT_ELEMENT_TYPE_I16, {3}, Bytes(6))
        .out(TIDALRT_ELEMENT_TYPE_I16, {3});
    i16.what = "int16";
    checkError(k, withAlpha(i16), "UNSUPPORTED");
    Case count;
    count.in(f32, {3}, values(f32, 3, g)).out(f32, {4});
    count.what = "element counts";
    checkError(k, withAlpha(count), "INVALID_ARGUMENT");
    Case absent;
    absent.absent().out(f32, {3});
    absent.what = "absent input";
    checkError(k, withAlpha(absent), "INVALID_ARGUMENT");
    Case three;
    three.in(f32, {3}, values(f32, 3, g)).out(f32, {3}).out(f32, {3});
    three.what = "three tensors";
    checkError(k, withAlpha(three), "INTERNAL");
  }
  for (const Kernel &k : {KERNEL(sigmoid), KERNEL(exp), KERNEL(gelu)}) {
    Case i32;
    i32.in(TIDALRT_ELEMENT_TYPE_I32, {3}, Bytes(12))
        .out(TIDALRT_ELEMENT_TYPE_I32, {3});
    i32.what = "int32";
    checkError(k, i32, "UNSUPPORTED");
  }
  Case noAlpha;
  noAlpha.in(f32, {3}, values(f32, 3, g)).out(f32, {3});
  noAlpha.what = "no alpha";
  checkError(KERNEL(leaky_relu), noAlpha, "INTERNAL");
  Case intAlpha;
  intAlpha.in(f32, {3}, values(f32, 3, g)).out(f32, {3}).attrInt(1);
  intAlpha.what = "int alpha";
  checkError(KERNEL(leaky_relu), intAlpha, "INTERNAL");
}

//===----------------------------------------------------------------------===//
// Activation backward
//===----------------------------------------------------------------------===//

TEST_P(CudaEmuElementwise, ActivationBackward) {
  struct GradKernel {
    Kernel k;
    bool alpha;
    Tol avx2;
    double lo, hi; // `saved`: the forward output or input
  };
  const GradKernel kernels[] = {
      {KERNEL(relu_backward), false, Tol(), -2, 10},
      {KERNEL(leaky_relu_backward), true, Tol(), -10, 10},
      {KERNEL(sigmoid_backward), false, Tol(), 0, 1},
      {KERNEL(tanh_backward), false, kVectorMath, -1, 1},
      {KERNEL(erf_backward), false, kVectorMath, -5, 5},
      {KERNEL(gelu_backward), false, kVectorMath, -15, 15}};
  Gen g(9);
  for (const GradKernel &gk : kernels) {
    for (tidalrt_element_type_t t :
         {TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64}) {
      for (const Shape &s : kUnaryShapes) {
        for (double alpha : {0.01, -0.3}) {
          Fill fg, fs;
          fg.lo = -3, fg.hi = 3;
          fs.lo = gk.lo, fs.hi = gk.hi;
          // Specials in `saved` only where the forward op can produce them.
          fs.specials = gk.lo < -1;
          Case c;
          c.in(t, s, values(t, numel(s), g, fg))
              .in(t, s, values(t, numel(s), g, fs))
              .out(t, s);
          if (gk.alpha)
            c.attrFloat(alpha);
          c.what = std::string(name(t)) + " " + str(s);
          check(gk.k, c, gk.avx2);
          if (!gk.alpha)
            break;
        }
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// The activation family (cpu/activation_math.h): one formula for both, and
// the CPU's AVX2 loops are the scalar formulas' IEEE operations, so every
// comparison is bitwise on both ISAs.
//===----------------------------------------------------------------------===//

struct ActivationKernel {
  Kernel fwd;
  std::vector<double> attrs; // alphabetical, as the compiler passes them
  bool ints;                 // abs and sign also take int64 and int32
  double lo, hi;
};

std::vector<ActivationKernel> activationKernels() {
  return {{KERNEL(clip), {6.0, -1.5}, false, -10, 10},
          {KERNEL(hard_sigmoid), {1.0 / 6.0, 0.5}, false, -6, 6},
          {KERNEL(hard_swish), {}, false, -6, 6},
          {KERNEL(elu), {0.7}, false, -10, 10},
          {KERNEL(selu), {1.6732632, 1.050701}, false, -10, 10},
          {KERNEL(celu), {1.5}, false, -10, 10},
          {KERNEL(softplus), {}, false, -30, 30},
          {KERNEL(softsign), {}, false, -10, 10},
          {KERNEL(mish), {}, false, -30, 30},
          {KERNEL(abs), {}, true, -10, 10},
          {KERNEL(reciprocal), {}, false, -10, 10},
          {KERNEL(sin), {}, false, -100, 100},
          {KERNEL(cos), {}, false, -100, 100},
          {KERNEL(sign), {}, true, -10, 10},
          {KERNEL(floor), {}, false, -10, 10},
          {KERNEL(ceil), {}, false, -10, 10},
          {KERNEL(round), {}, false, -10, 10}};
}

TEST_P(CudaEmuElementwise, Activations) {
  Gen g(21);
  for (const ActivationKernel &a : activationKernels()) {
    std::vector<tidalrt_element_type_t> types = {TIDALRT_ELEMENT_TYPE_F32,
                                                 TIDALRT_ELEMENT_TYPE_F64};
    if (a.ints) {
      types.push_back(TIDALRT_ELEMENT_TYPE_I64);
      types.push_back(TIDALRT_ELEMENT_TYPE_I32);
    }
    for (tidalrt_element_type_t t : types)
      for (const Shape &s : kUnaryShapes) {
        Fill f;
        f.lo = a.lo, f.hi = a.hi;
        Case c;
        c.in(t, s, values(t, numel(s), g, f)).out(t, s);
        for (double v : a.attrs)
          c.attrFloat(v);
        c.what = std::string(name(t)) + " " + str(s);
        check(a.fwd, c, Tol());
      }
  }
}

TEST_P(CudaEmuElementwise, ActivationFamilyBackward) {
  const std::pair<Kernel, std::vector<double>> kernels[] = {
      {KERNEL(clip_backward), {6.0, -1.5}},
      {KERNEL(hard_sigmoid_backward), {1.0 / 6.0, 0.5}},
      {KERNEL(hard_swish_backward), {}},
      {KERNEL(elu_backward), {0.7}},
      {KERNEL(selu_backward), {1.6732632, 1.050701}},
      {KERNEL(celu_backward), {1.5}},
      {KERNEL(softplus_backward), {}},
      {KERNEL(softsign_backward), {}},
      {KERNEL(mish_backward), {}}};
  Gen g(22);
  for (const auto &[k, attrs] : kernels)
    for (tidalrt_element_type_t t :
         {TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64})
      for (const Shape &s : kUnaryShapes) {
        Fill fg, fx;
        fg.lo = -3, fg.hi = 3;
        fx.lo = -25, fx.hi = 25;
        Case c;
        c.in(t, s, values(t, numel(s), g, fg))
            .in(t, s, values(t, numel(s), g, fx))
            .out(t, s);
        for (double v : attrs)
          c.attrFloat(v);
        c.what = std::string(name(t)) + " " + str(s);
        check(k, c, Tol());
      }
}

TEST_P(CudaEmuElementwise, ActivationErrors) {
  const tidalrt_element_type_t f32 = TIDALRT_ELEMENT_TYPE_F32;
  Gen g(23);
  Case ints;
  ints.in(TIDALRT_ELEMENT_TYPE_I64, {3}, values(TIDALRT_ELEMENT_TYPE_I64, 3, g))
      .out(TIDALRT_ELEMENT_TYPE_I64, {3});
  ints.what = "int64 softplus";
  checkError(KERNEL(softplus), ints, "UNSUPPORTED");
  Case celu;
  celu.in(f32, {3}, values(f32, 3, g)).out(f32, {3}).attrFloat(0.0);
  celu.what = "celu alpha 0";
  checkError(KERNEL(celu), celu, "INVALID_ARGUMENT");
  Case noBounds;
  noBounds.in(f32, {3}, values(f32, 3, g)).out(f32, {3});
  noBounds.what = "clip without bounds";
  checkError(KERNEL(clip), noBounds, "INTERNAL");
  Case mixed;
  mixed.in(f32, {3}, values(f32, 3, g))
      .in(TIDALRT_ELEMENT_TYPE_F64, {3}, values(TIDALRT_ELEMENT_TYPE_F64, 3, g))
      .out(f32, {3});
  mixed.what = "mixed types";
  checkError(KERNEL(mish_backward), mixed, "INVALID_ARGUMENT");
}

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

TEST_P(CudaEmuElementwise, Logic) {
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
TEST_P(CudaEmuElementwise, Cast) {
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

TEST_P(CudaEmuElementwise, LogicErrors) {
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

TEST_P(CudaEmuElementwise, ActivationBackwardErrors) {
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
TEST_P(CudaEmuElementwise, Dropout) {
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

TEST_P(CudaEmuElementwise, DropoutBackward) {
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

TEST_P(CudaEmuElementwise, DropoutErrors) {
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
// broadcast_to
//===----------------------------------------------------------------------===//

TEST_P(CudaEmuElementwise, BroadcastTo) {
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
TEST_P(CudaEmuElementwise, ReduceAxisSubsets) {
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
TEST_P(CudaEmuElementwise, ReduceShapes) {
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
TEST_P(CudaEmuElementwise, ReduceOrder) {
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

TEST_P(CudaEmuElementwise, ReduceErrors) {
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
TEST_P(CudaEmuElementwise, ReduceMaxMinProd) {
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
TEST_P(CudaEmuElementwise, ArgMaxMin) {
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

TEST_P(CudaEmuElementwise, ReduceExtremeErrors) {
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

INSTANTIATE_TEST_SUITE_P(CudaEmu, CudaEmuElementwise, TIDALRT_TEST_ISAS,
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           return std::string(i.param);
                         });

} // namespace
