// cuda_emu_elementwise_harness.h - what the tests of the elementwise CUDA
// kernels emulated on the host share (cuda_emu_*_test.cpp): cases, running
// one on the CPU kernel, the emulated kernel and the emulated kernel with a
// reversed launch, and comparing the bytes (namespace emu_test).
//
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
#ifndef TIDALRT_TEST_CUDA_EMU_ELEMENTWISE_HARNESS_H
#define TIDALRT_TEST_CUDA_EMU_ELEMENTWISE_HARNESS_H

#include "isa_test_util.h"
#include "kernel_test_util.h"

#include "../src/cuda/elementwise/activation.h"
#include "../src/cuda/elementwise/binary.h"
#include "../src/cuda/elementwise/cast.h"
#include "../src/cuda/elementwise/dropout.h"
#include "../src/cuda/elementwise/list.h"
#include "../src/cuda/elementwise/logic.h"
#include "../src/cuda/elementwise/random.h"
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

// Defined by cuda_emu_arithmetic_test.cpp with emu_test::ReverseLauncher.
#define TIDALRT_TEST_DECLARE_REVERSE(name)                                     \
  extern "C" tidalrt_status_t test_reverse_k_##name(                           \
      tidalrt_context_t *, const int64_t *, void *const *);
TIDALRT_CUDA_ELEMENTWISE_KERNEL_LIST(TIDALRT_TEST_DECLARE_REVERSE)
#undef TIDALRT_TEST_DECLARE_REVERSE

using tidalrt_test::KernelCall;

namespace emu_test {

using Shape = std::vector<int64_t>;
using Bytes = std::vector<uint8_t>;

inline int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

inline std::string str(const Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

inline size_t typeSize(tidalrt_element_type_t t) {
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

inline Outcome runCase(const Case &c, tidalrt_kernel_fn_t fn,
                       bool prepare = true) {
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
inline std::string elementMismatch(tidalrt_element_type_t type,
                                   const uint8_t *a, const uint8_t *b,
                                   int64_t i, Tol tol) {
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
inline void expectSame(const Case &c, const Outcome &want, const Outcome &got,
                       Tol tol, const char *against) {
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

class CudaEmuFixture : public ::testing::TestWithParam<const char *> {
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

inline Bytes values(tidalrt_element_type_t type, int64_t n, Gen &g,
                    Fill f = Fill()) {
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

inline const char *name(tidalrt_element_type_t t) {
  return tidalrt_element_type_name(t);
}

const tidalrt_element_type_t kArithTypes[] = {
    TIDALRT_ELEMENT_TYPE_F32, TIDALRT_ELEMENT_TYPE_F64,
    TIDALRT_ELEMENT_TYPE_I64, TIDALRT_ELEMENT_TYPE_I32,
    TIDALRT_ELEMENT_TYPE_I16, TIDALRT_ELEMENT_TYPE_I8,
    TIDALRT_ELEMENT_TYPE_U64, TIDALRT_ELEMENT_TYPE_U32,
    TIDALRT_ELEMENT_TYPE_U16, TIDALRT_ELEMENT_TYPE_U8};

inline bool isFloat(tidalrt_element_type_t t) {
  return t == TIDALRT_ELEMENT_TYPE_F32 || t == TIDALRT_ELEMENT_TYPE_F64;
}

} // namespace emu_test

#endif // TIDALRT_TEST_CUDA_EMU_ELEMENTWISE_HARNESS_H
