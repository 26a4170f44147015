// Tests of the other CUDA kernels (runtime/src/cuda/other/) run on the host
// through their emulation (tidalrt_emu_k_<name>), against the CPU kernels
// (tidalrt_k_<name>) on copies of the same buffers.
//
// Every case runs the CPU kernel twice: with TIDAL_CPU_ISA=scalar, whose
// arithmetic the CUDA kernels reproduce, where every buffer must match
// bitwise; and with the default ISA (AVX2 on x86), where the buffers must
// match bitwise too except for the kernels whose AVX2 path rounds
// differently (a polynomial exp, sums in lanes), which get a tolerance
// stated at the test. Outputs start as a byte pattern (0xA5), so an output
// element that a kernel forgets to write differs. Error cases must give the
// same status (code and message) from both kernels; where the CPU kernel
// fails on tensor data (a label, an index, a step), which a GPU cannot
// report, the emulation's documented substitute is checked instead.
#include "kernel_test_util.h"

#include "../src/cuda/other/list.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#define TIDALRT_DECLARE_EMU(name)                                              \
  extern "C" tidalrt_status_t tidalrt_emu_k_##name(                            \
      tidalrt_context_t *context, const int64_t *desc, void *const *buffers);
TIDALRT_CUDA_OTHER_KERNEL_LIST(TIDALRT_DECLARE_EMU)
#undef TIDALRT_DECLARE_EMU

// The CPU kernel and its emulated CUDA twin.
#define KERNELS(name) tidalrt_k_##name, tidalrt_emu_k_##name

using tidalrt_test::KernelCall;

namespace {

using Shape = std::vector<int64_t>;
constexpr auto F32 = TIDALRT_ELEMENT_TYPE_F32;
constexpr auto F64 = TIDALRT_ELEMENT_TYPE_F64;
constexpr auto F16 = TIDALRT_ELEMENT_TYPE_F16;
constexpr auto I64 = TIDALRT_ELEMENT_TYPE_I64;
constexpr auto I32 = TIDALRT_ELEMENT_TYPE_I32;
constexpr auto I16 = TIDALRT_ELEMENT_TYPE_I16;
constexpr auto I8 = TIDALRT_ELEMENT_TYPE_I8;
constexpr auto U8 = TIDALRT_ELEMENT_TYPE_U8;
constexpr auto U16 = TIDALRT_ELEMENT_TYPE_U16;
constexpr auto U32 = TIDALRT_ELEMENT_TYPE_U32;
constexpr auto U64 = TIDALRT_ELEMENT_TYPE_U64;
constexpr auto BOOL = TIDALRT_ELEMENT_TYPE_BOOL;

int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

// One tensor of a call.
struct Tensor {
  tidalrt_element_type_t type = F32;
  Shape dims;
  std::vector<uint8_t> bytes; // initial contents
  bool absent = false;
  int alias = -1; // uses the buffer of this earlier tensor
};

template <class V>
Tensor typed(tidalrt_element_type_t type, Shape dims,
             const std::vector<V> &values) {
  Tensor t;
  t.type = type;
  t.dims = std::move(dims);
  EXPECT_EQ((int64_t)values.size(), numel(t.dims));
  EXPECT_EQ(sizeof(V), tidalrt_element_type_size(type));
  t.bytes.resize(values.size() * sizeof(V));
  if (!values.empty())
    memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

// Random float32 data, normal with standard deviation `scale`.
Tensor randomF32(Shape dims, uint32_t seed, float scale = 3.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v((size_t)numel(dims));
  for (float &x : v)
    x = dist(rng);
  return typed(F32, std::move(dims), v);
}

// Random float32 data in [lo, hi).
Tensor uniformF32(Shape dims, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v((size_t)numel(dims));
  for (float &x : v)
    x = dist(rng);
  return typed(F32, std::move(dims), v);
}

// Random bytes: elements of any type, for the data movement kernels.
Tensor randomBytes(tidalrt_element_type_t type, Shape dims, uint32_t seed) {
  Tensor t;
  t.type = type;
  t.dims = std::move(dims);
  t.bytes.resize((size_t)numel(t.dims) * tidalrt_element_type_size(type));
  std::mt19937 rng(seed);
  for (uint8_t &b : t.bytes)
    b = (uint8_t)rng();
  return t;
}

// An output: the 0xA5 pattern.
Tensor output(tidalrt_element_type_t type, Shape dims) {
  Tensor t;
  t.type = type;
  t.dims = std::move(dims);
  t.bytes.assign((size_t)numel(t.dims) * tidalrt_element_type_size(type), 0xA5);
  return t;
}
Tensor output(Shape dims) { return output(F32, std::move(dims)); }

Tensor absent() {
  Tensor t;
  t.absent = true;
  return t;
}

// An output that reuses tensor `i`'s buffer (results over operands).
Tensor aliasOf(int i, const Tensor &like) {
  Tensor t = like;
  t.alias = i;
  return t;
}

// Integer tensor of `type` holding `values`.
Tensor ints(tidalrt_element_type_t type, Shape dims,
            const std::vector<int64_t> &values) {
  switch (type) {
  case I64:
    return typed(type, dims, values);
  case U64:
    return typed(type, dims,
                 std::vector<uint64_t>(values.begin(), values.end()));
  case I32:
    return typed(type, dims,
                 std::vector<int32_t>(values.begin(), values.end()));
  case U32:
    return typed(type, dims,
                 std::vector<uint32_t>(values.begin(), values.end()));
  case I16:
    return typed(type, dims,
                 std::vector<int16_t>(values.begin(), values.end()));
  case U16:
    return typed(type, dims,
                 std::vector<uint16_t>(values.begin(), values.end()));
  case I8:
    return typed(type, dims, std::vector<int8_t>(values.begin(), values.end()));
  default:
    return typed(type, dims,
                 std::vector<uint8_t>(values.begin(), values.end()));
  }
}

struct Case {
  std::vector<Tensor> tensors;
  std::function<void(KernelCall &)> attrs = [](KernelCall &) {};
};

struct Result {
  std::string status; // "" on success
  std::vector<std::vector<uint8_t>> buffers;
};

Result run(tidalrt_kernel_fn_t kernel, const Case &c) {
  Result r;
  r.buffers.resize(c.tensors.size());
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    // At least 8 bytes so that empty tensors have a pointer.
    r.buffers[i] = c.tensors[i].bytes;
    r.buffers[i].resize(std::max<size_t>(c.tensors[i].bytes.size(), 8));
  }
  KernelCall call;
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    const Tensor &t = c.tensors[i];
    if (t.absent)
      call.absent();
    else
      call.tensor(t.type, t.dims, r.buffers[t.alias >= 0 ? t.alias : i].data());
  }
  c.attrs(call);
  r.status = call.run(kernel);
  return r;
}

// A comparison: bitwise (rel = abs = 0), or float32 elements within
// abs + rel * |expected| (NaN matches NaN).
struct Tol {
  double rel = 0.0, abs = 0.0;
  bool bitwise() const { return rel == 0.0 && abs == 0.0; }
};

void expectBuffersMatch(const Case &c, const Result &want, const Result &got,
                        Tol tol) {
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    const Tensor &t = c.tensors[i];
    if (t.absent || t.alias >= 0)
      continue;
    size_t bytes = t.bytes.size();
    const uint8_t *a = want.buffers[i].data(), *b = got.buffers[i].data();
    size_t es = tidalrt_element_type_size(t.type);
    int bad = 0;
    for (size_t e = 0; e < bytes / es && bad < 5; ++e) {
      if (tol.bitwise() || t.type != F32) {
        if (memcmp(a + e * es, b + e * es, es) != 0) {
          float fa = 0, fb = 0;
          if (t.type == F32) {
            memcpy(&fa, a + e * es, 4);
            memcpy(&fb, b + e * es, 4);
          }
          ADD_FAILURE() << "tensor " << i << " element " << e
                        << " differs bitwise"
                        << (t.type == F32
                                ? " (cpu " + std::to_string(fa) +
                                      ", emulated " + std::to_string(fb) + ")"
                                : std::string());
          ++bad;
        }
        continue;
      }
      float x, y;
      memcpy(&x, a + e * 4, 4);
      memcpy(&y, b + e * 4, 4);
      if (std::isnan(x) && std::isnan(y))
        continue;
      if (!(std::fabs((double)x - y) <= tol.abs + tol.rel * std::fabs(x)) &&
          x != y) {
        ADD_FAILURE() << "tensor " << i << " element " << e << ": cpu " << x
                      << ", emulated " << y;
        ++bad;
      }
    }
  }
}

// Runs `cpu` (scalar ISA, then default ISA) and `emu` on copies of `c` and
// expects the same status and buffers: bitwise against the scalar path,
// within `avx2` against the default one.
void check(tidalrt_kernel_fn_t cpu, tidalrt_kernel_fn_t emu, const Case &c,
           Tol avx2 = {}) {
  setenv("TIDAL_CPU_ISA", "scalar", 1);
  Result scalar = run(cpu, c);
  unsetenv("TIDAL_CPU_ISA");
  Result emulated = run(emu, c);
  Result avx = run(cpu, c);
  EXPECT_EQ(scalar.status, emulated.status);
  EXPECT_EQ(avx.status, emulated.status);
  if (!scalar.status.empty() || !emulated.status.empty())
    return;
  {
    SCOPED_TRACE("TIDAL_CPU_ISA=scalar, bitwise");
    expectBuffersMatch(c, scalar, emulated, Tol{});
  }
  {
    SCOPED_TRACE("default ISA");
    expectBuffersMatch(c, avx, emulated, avx2);
  }
}

// Expects both kernels to fail alike; returns the status.
std::string checkError(tidalrt_kernel_fn_t cpu, tidalrt_kernel_fn_t emu,
                       const Case &c, const char *code) {
  Result a = run(cpu, c), b = run(emu, c);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.status.rfind(code, 0), 0u) << a.status;
  return b.status;
}

std::vector<float> floats(const std::vector<uint8_t> &bytes, int64_t n) {
  std::vector<float> v((size_t)n);
  if (n)
    memcpy(v.data(), bytes.data(), (size_t)n * 4);
  return v;
}

auto axisAttr(int64_t axis) {
  return [axis](KernelCall &k) { k.attrInt(axis); };
}

//===----------------------------------------------------------------------===//
// Softmax family
//===----------------------------------------------------------------------===//

struct AxisCase {
  Shape shape;
  int64_t axis;
};

const std::vector<AxisCase> kSoftmaxShapes = {
    {{7}, 0},        {{1}, -1},        {{3, 5}, 1},       {{3, 5}, 0},
    {{4, 9, 2}, -2}, {{2, 37, 70}, 1}, {{2, 3, 4, 5}, 3}, {{2, 3, 4, 5}, 0},
    {{3, 1000}, -1}, {{5, 0, 3}, 1},   {{0, 4}, 1},       {{2, 3, 0}, 0},
    {{130, 17}, 0},
};

// The CPU's AVX2 path uses a Cephes polynomial exp (about 1 ulp from
// glibc's expf) and sums in 8 double lanes; its log-softmax subtracts
// values of magnitude |x - max| (up to ~20 here), so absolute errors scale
// with those: a few ulp of 20.
const Tol kSoftmaxTol = {1e-6, 2e-6};

TEST(CudaEmuOther, SoftmaxForward) {
  uint32_t seed = 1;
  for (const AxisCase &s : kSoftmaxShapes) {
    SCOPED_TRACE(::testing::Message()
                 << "shape rank " << s.shape.size() << " axis " << s.axis
                 << " numel " << numel(s.shape));
    Case c{{randomF32(s.shape, seed++), output(s.shape)}, axisAttr(s.axis)};
    check(KERNELS(softmax), c, kSoftmaxTol);
    check(KERNELS(log_softmax), c, kSoftmaxTol);
  }
  // Large magnitudes: the row maximum is subtracted first.
  Case big{{uniformF32({4, 33}, 7, 50.0f, 90.0f), output({4, 33})},
           axisAttr(1)};
  check(KERNELS(softmax), big, kSoftmaxTol);
  check(KERNELS(log_softmax), big, kSoftmaxTol);
}

TEST(CudaEmuOther, SoftmaxBackward) {
  uint32_t seed = 100;
  for (const AxisCase &s : kSoftmaxShapes) {
    SCOPED_TRACE(::testing::Message()
                 << "shape rank " << s.shape.size() << " axis " << s.axis);
    Case sm{{randomF32(s.shape, seed), uniformF32(s.shape, seed + 1, 0, 1),
             output(s.shape)},
            axisAttr(s.axis)};
    check(KERNELS(softmax_backward), sm, kSoftmaxTol);
    // log_softmax outputs are <= 0.
    Case lsm{{randomF32(s.shape, seed + 2),
              uniformF32(s.shape, seed + 3, -8, 0), output(s.shape)},
             axisAttr(s.axis)};
    check(KERNELS(log_softmax_backward), lsm, kSoftmaxTol);
    seed += 4;
  }
}

TEST(CudaEmuOther, SoftmaxErrors) {
  // Rank 0, axis out of range, shape mismatch, wrong type, wrong count.
  checkError(KERNELS(softmax), {{randomF32({}, 1), output({})}, axisAttr(0)},
             "INVALID_ARGUMENT");
  checkError(KERNELS(log_softmax),
             {{randomF32({3, 4}, 1), output({3, 4})}, axisAttr(2)},
             "INVALID_ARGUMENT");
  checkError(KERNELS(softmax),
             {{randomF32({3, 4}, 1), output({4, 3})}, axisAttr(1)},
             "INVALID_ARGUMENT");
  checkError(KERNELS(softmax),
             {{ints(I64, {3}, {1, 2, 3}), output({3})}, axisAttr(0)},
             "UNSUPPORTED");
  checkError(KERNELS(softmax_backward),
             {{randomF32({3, 4}, 1), randomF32({3, 4}, 2), output({3, 5})},
              axisAttr(1)},
             "INVALID_ARGUMENT");
  checkError(KERNELS(log_softmax_backward),
             {{randomF32({3, 4}, 1), output({3, 4})}, axisAttr(1)}, "INTERNAL");
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

// Random labels in [0, c), with about one in five set to `ignore`.
std::vector<int64_t> randomLabels(int64_t n, int64_t c, uint32_t seed,
                                  int64_t ignore) {
  std::mt19937 rng(seed);
  std::vector<int64_t> v((size_t)n);
  for (int64_t &x : v)
    x = rng() % 5 == 0 ? ignore : (int64_t)(rng() % (uint32_t)c);
  return v;
}

Shape labelShape(const Shape &scores) {
  Shape s = {scores[0]};
  s.insert(s.end(), scores.begin() + 2, scores.end());
  return s;
}

auto lossAttrs(bool hasIgnore, int64_t ignore, int64_t reduction) {
  return [=](KernelCall &k) {
    if (hasIgnore)
      k.attrInt(ignore);
    else
      k.attrAbsent();
    k.attrInt(reduction);
  };
}

struct LossSetup {
  Shape scores;
  tidalrt_element_type_t labelType;
  bool hasIgnore;
  int64_t ignore;
  bool weights;
};

const std::vector<LossSetup> kLossSetups = {
    {{5, 4}, I64, false, 0, false},      {{5, 4}, I32, true, 2, true},
    {{3, 4, 5}, I64, true, -100, true},  {{2, 3, 4, 6}, U8, true, 1, false},
    {{1, 1}, I16, false, 0, true},       {{9000, 3}, I64, true, -1, true},
    {{70, 5, 200}, I32, true, 0, false}, {{0, 4}, I64, false, 0, true},
    {{2, 4, 0}, I64, true, 3, true},
};

// The reduced losses add position terms in chunks as the CPU does; the
// log-probabilities that cross entropy computes first differ from the AVX2
// path's by a few ulp (kSoftmaxTol's reasons), and a mean or sum of many of
// them by a few ulp of their magnitudes.
const Tol kLossTol = {2e-6, 2e-6};

TEST(CudaEmuOther, CrossEntropyAndNll) {
  uint32_t seed = 200;
  for (const LossSetup &s : kLossSetups) {
    for (int64_t reduction = 0; reduction < 3; ++reduction) {
      SCOPED_TRACE(::testing::Message()
                   << "scores rank " << s.scores.size() << " numel "
                   << numel(s.scores) << " reduction " << reduction);
      Shape ls = labelShape(s.scores);
      int64_t c = s.scores[1];
      Tensor labels =
          ints(s.labelType, ls,
               randomLabels(numel(ls), c, seed++, s.hasIgnore ? s.ignore : 0));
      Tensor weights =
          s.weights ? uniformF32({c}, seed++, 0.25f, 2.0f) : absent();
      Shape lossShape = reduction == 0 ? ls : Shape{};
      auto attrs = lossAttrs(s.hasIgnore, s.ignore, reduction);
      Tensor scores = randomF32(s.scores, seed++);
      check(KERNELS(softmax_cross_entropy_loss),
            {{scores, labels, weights, output(lossShape), output(s.scores)},
             attrs},
            kLossTol);
      // NLL over log-probabilities (any floats will do).
      check(KERNELS(nll_loss),
            {{scores, labels, weights, output(lossShape)}, attrs});
      Tensor gradLoss = randomF32(lossShape, seed++);
      Tensor logProb = uniformF32(s.scores, seed++, -6.0f, 0.0f);
      check(KERNELS(softmax_cross_entropy_loss_backward),
            {{gradLoss, logProb, labels, weights, output(s.scores)}, attrs},
            kLossTol);
      check(KERNELS(nll_loss_backward),
            {{gradLoss, labels, weights, output(s.scores)}, attrs});
    }
  }
}

TEST(CudaEmuOther, LossMeanOfNothingIsNan) {
  // Every label ignored: the mean divides 0 by 0.
  Tensor labels = ints(I64, {3}, {-1, -1, -1});
  Case c{{randomF32({3, 4}, 1), labels, absent(), output({}), output({3, 4})},
         lossAttrs(true, -1, 2)};
  check(KERNELS(softmax_cross_entropy_loss), c, kLossTol);
  Result r = run(tidalrt_emu_k_softmax_cross_entropy_loss, c);
  ASSERT_EQ(r.status, "");
  EXPECT_TRUE(std::isnan(floats(r.buffers[3], 1)[0]));
}

TEST(CudaEmuOther, LossBadLabelGivesNan) {
  // The CPU kernels reject a label outside [0, C); the GPU cannot, so the
  // emulation writes NaN for that position (and every reduced value).
  Tensor labels = ints(I64, {4}, {0, 7, 2, 1}); // 7 >= C = 3
  Tensor scores = randomF32({4, 3}, 2);
  for (int64_t reduction = 0; reduction < 3; ++reduction) {
    SCOPED_TRACE(::testing::Message() << "reduction " << reduction);
    Shape lossShape = reduction == 0 ? Shape{4} : Shape{};
    auto attrs = lossAttrs(false, 0, reduction);
    Case ce{{scores, labels, absent(), output(lossShape), output({4, 3})},
            attrs};
    Case nll{{scores, labels, absent(), output(lossShape)}, attrs};
    for (auto [cpu, emu, cs] :
         {std::make_tuple(tidalrt_k_softmax_cross_entropy_loss,
                          tidalrt_emu_k_softmax_cross_entropy_loss, &ce),
          std::make_tuple(tidalrt_k_nll_loss, tidalrt_emu_k_nll_loss, &nll)}) {
      Result a = run(cpu, *cs), b = run(emu, *cs);
      EXPECT_EQ(a.status.rfind("INVALID_ARGUMENT", 0), 0u) << a.status;
      ASSERT_EQ(b.status, "");
      std::vector<float> loss = floats(b.buffers[3], numel(lossShape));
      for (size_t j = 0; j < loss.size(); ++j)
        EXPECT_EQ(std::isnan(loss[j]), reduction != 0 || j == 1) << j;
    }
    Tensor gradLoss = randomF32(lossShape, 3);
    Case ceb{{gradLoss, scores, labels, absent(), output({4, 3})}, attrs};
    Case nllb{{gradLoss, labels, absent(), output({4, 3})}, attrs};
    for (auto [cpu, emu, cs] :
         {std::make_tuple(tidalrt_k_softmax_cross_entropy_loss_backward,
                          tidalrt_emu_k_softmax_cross_entropy_loss_backward,
                          &ceb),
          std::make_tuple(tidalrt_k_nll_loss_backward,
                          tidalrt_emu_k_nll_loss_backward, &nllb)}) {
      Result a = run(cpu, *cs), b = run(emu, *cs);
      EXPECT_EQ(a.status.rfind("INVALID_ARGUMENT", 0), 0u) << a.status;
      ASSERT_EQ(b.status, "");
      // Under mean the NaN weight sum reaches every element that the
      // gradient scales: all of cross entropy's, NLL's at the labels.
      bool nll = cs == &nllb;
      std::vector<float> g = floats(b.buffers[nll ? 3 : 4], 12);
      const int label[4] = {0, -1, 2, 1};
      for (int j = 0; j < 12; ++j)
        EXPECT_EQ(std::isnan(g[j]),
                  j / 3 == 1 ||
                      (reduction == 2 && (!nll || j % 3 == label[j / 3])))
            << j;
    }
  }
}

TEST(CudaEmuOther, LossErrors) {
  Tensor scores = randomF32({4, 3}, 1);
  Tensor labels = ints(I64, {4}, {0, 1, 2, 1});
  // Bad reduction, float labels, weights of the wrong size, loss of the
  // wrong shape, labels of the wrong shape, scores of rank 1.
  checkError(KERNELS(softmax_cross_entropy_loss),
             {{scores, labels, absent(), output({}), output({4, 3})},
              lossAttrs(false, 0, 3)},
             "INVALID_ARGUMENT");
  checkError(KERNELS(nll_loss),
             {{scores, randomF32({4}, 2), absent(), output({})},
              lossAttrs(false, 0, 1)},
             "UNSUPPORTED");
  checkError(KERNELS(nll_loss_backward),
             {{randomF32({}, 2), labels, randomF32({4}, 3), output({4, 3})},
              lossAttrs(false, 0, 1)},
             "INVALID_ARGUMENT");
  checkError(KERNELS(softmax_cross_entropy_loss_backward),
             {{randomF32({3}, 2), scores, labels, absent(), output({4, 3})},
              lossAttrs(false, 0, 0)},
             "INVALID_ARGUMENT");
  checkError(KERNELS(softmax_cross_entropy_loss),
             {{scores, ints(I64, {3}, {0, 1, 2}), absent(), output({}),
               output({4, 3})},
              lossAttrs(false, 0, 1)},
             "INVALID_ARGUMENT");
  checkError(KERNELS(nll_loss),
             {{randomF32({4}, 1), labels, absent(), output({})},
              lossAttrs(false, 0, 1)},
             "INVALID_ARGUMENT");
  checkError(KERNELS(softmax_cross_entropy_loss_backward),
             {{randomF32({}, 2), scores, labels, absent(), output({4, 4})},
              lossAttrs(false, 0, 2)},
             "INVALID_ARGUMENT");
}

//===----------------------------------------------------------------------===//
// Layer norm
//===----------------------------------------------------------------------===//

struct LayerNormSetup {
  Shape x;
  int64_t axis;
  Shape scale; // the bias has this shape too
  bool bias;
};

const std::vector<LayerNormSetup> kLayerNormSetups = {
    {{4, 10}, -1, {10}, true},
    {{4, 10}, 1, {10}, false},
    {{3, 4, 5}, 1, {4, 5}, true},
    {{3, 4, 5}, 1, {4, 1}, true},
    {{3, 4, 5}, 1, {5}, true},
    {{3, 4, 5}, 1, {1, 1, 5}, false},
    {{3, 4, 5}, 0, {3, 1, 5}, true},
    {{3, 4, 5}, -1, {5}, true},
    {{7}, 0, {7}, true},
    {{700, 100}, 1, {100}, true},
    {{2000, 70}, -1, {70}, false},
    {{300, 6, 40}, 1, {6, 1}, true},
    {{0, 5}, 1, {5}, true},
    {{3, 0}, 1, {0}, true},
    {{2, 3, 2, 5}, 1, {3, 1, 5}, false},
};

// The CPU's AVX2 rows sum in 8 double lanes and fuse the variance's
// multiply-adds: the double statistics differ in their last bits, which
// survive the rounding to float32 in about one element in 10^8; grad_scale
// and grad_bias are sums over rows, with the same chunks.
const Tol kLayerNormTol = {1e-6, 1e-6};

TEST(CudaEmuOther, LayerNorm) {
  uint32_t seed = 300;
  for (const LayerNormSetup &s : kLayerNormSetups) {
    SCOPED_TRACE(::testing::Message()
                 << "x numel " << numel(s.x) << " axis " << s.axis
                 << " scale numel " << numel(s.scale));
    int rank = (int)s.x.size();
    int axis = (int)(s.axis < 0 ? s.axis + rank : s.axis);
    Shape stats = s.x;
    for (int d = axis; d < rank; ++d)
      stats[d] = 1;
    Tensor x = randomF32(s.x, seed++, 2.0f);
    Tensor scale = randomF32(s.scale, seed++, 1.0f);
    Tensor bias = s.bias ? randomF32(s.scale, seed++) : absent();
    check(KERNELS(layer_norm),
          {{x, scale, bias, output(s.x), output(stats), output(stats)},
           [&](KernelCall &k) { k.attrInt(s.axis).attrFloat(1e-5); }},
          kLayerNormTol);
    Tensor grad = randomF32(s.x, seed++);
    Tensor mean = randomF32(stats, seed++, 0.5f);
    Tensor inv = uniformF32(stats, seed++, 0.5f, 2.0f);
    check(KERNELS(layer_norm_backward),
          {{grad, x, scale, mean, inv, output(s.x), output(s.scale),
            output(s.scale)},
           axisAttr(s.axis)},
          kLayerNormTol);
  }
}

TEST(CudaEmuOther, LayerNormErrors) {
  Tensor x = randomF32({3, 4}, 1);
  auto attrs = [](KernelCall &k) { k.attrInt(1).attrFloat(1e-5); };
  // Scale that does not broadcast, stats of the wrong size, output shape,
  // missing scale, rank 0.
  checkError(KERNELS(layer_norm),
             {{x, randomF32({3}, 2), absent(), output({3, 4}), output({3}),
               output({3})},
              attrs},
             "INVALID_ARGUMENT");
  checkError(KERNELS(layer_norm),
             {{x, randomF32({4}, 2), absent(), output({3, 4}), output({4}),
               output({3})},
              attrs},
             "INVALID_ARGUMENT");
  checkError(KERNELS(layer_norm),
             {{x, randomF32({4}, 2), randomF32({4}, 3), output({4, 3}),
               output({3}), output({3})},
              attrs},
             "INVALID_ARGUMENT");
  checkError(KERNELS(layer_norm),
             {{x, absent(), absent(), output({3, 4}), output({3}), output({3})},
              attrs},
             "INVALID_ARGUMENT");
  checkError(KERNELS(layer_norm),
             {{randomF32({}, 1), randomF32({}, 2), absent(), output({}),
               output({}), output({})},
              [](KernelCall &k) { k.attrInt(0).attrFloat(1e-5); }},
             "INVALID_ARGUMENT");
  checkError(KERNELS(layer_norm_backward),
             {{x, x, randomF32({4}, 2), randomF32({3}, 3), randomF32({3}, 4),
               output({3, 4}), output({4}), output({3})},
              axisAttr(1)},
             "INVALID_ARGUMENT");
  checkError(
      KERNELS(layer_norm_backward),
      {{x, x, randomF32({4}, 2), randomF32({3}, 3), ints(I64, {3}, {1, 2, 3}),
        output({3, 4}), output({4}), output({4})},
       axisAttr(1)},
      "UNSUPPORTED");
}

//===----------------------------------------------------------------------===//
// Optimizers (the CPU's AVX2 path gives its scalar path's bits: bitwise)
//===----------------------------------------------------------------------===//

const std::vector<Shape> kOptimizerShapes = {
    {0}, {1}, {17}, {3, 50}, {40000}, {},
};

TEST(CudaEmuOther, Sgd) {
  uint32_t seed = 400;
  for (const Shape &s : kOptimizerShapes)
    for (double wd : {0.0, 0.01}) {
      SCOPED_TRACE(::testing::Message()
                   << "numel " << numel(s) << " wd " << wd);
      Tensor p = randomF32(s, seed++), g = randomF32(s, seed++);
      auto attrs = [wd](KernelCall &k) { k.attrFloat(0.1).attrFloat(wd); };
      check(KERNELS(sgd_update), {{p, g, output(s)}, attrs});
      check(KERNELS(sgd_update), {{p, g, aliasOf(0, p)}, attrs});
    }
}

TEST(CudaEmuOther, SgdMomentum) {
  uint32_t seed = 500;
  for (const Shape &s : kOptimizerShapes)
    for (int variant = 0; variant < 4; ++variant) {
      SCOPED_TRACE(::testing::Message()
                   << "numel " << numel(s) << " variant " << variant);
      bool nesterov = variant & 1;
      double damp = variant == 2 ? 0.1 : 0.0, wd = variant >= 2 ? 1e-4 : 0.0;
      Tensor p = randomF32(s, seed++), g = randomF32(s, seed++),
             b = randomF32(s, seed++);
      auto attrs = [=](KernelCall &k) {
        k.attrFloat(damp).attrFloat(0.05).attrFloat(0.9).attrInt(nesterov);
        k.attrFloat(wd);
      };
      check(KERNELS(sgd_momentum_update),
            {{p, g, b, output(s), output(s)}, attrs});
      check(KERNELS(sgd_momentum_update),
            {{p, g, b, aliasOf(0, p), aliasOf(2, b)}, attrs});
    }
}

TEST(CudaEmuOther, Adam) {
  uint32_t seed = 600;
  for (const Shape &s : kOptimizerShapes)
    for (int variant = 0; variant < 6; ++variant) {
      SCOPED_TRACE(::testing::Message()
                   << "numel " << numel(s) << " variant " << variant);
      bool decoupled = variant & 1;
      double wd = variant >= 2 ? 0.01 : 0.0;
      int64_t stepValue = variant < 4 ? 1 + 7 * variant : 1000;
      Tensor step = ints(variant == 5 ? I32 : I64, {}, {stepValue});
      Tensor p = randomF32(s, seed++), g = randomF32(s, seed++),
             m = randomF32(s, seed++, 0.1f),
             v = uniformF32(s, seed++, 0.0f, 0.5f);
      auto attrs = [=](KernelCall &k) {
        k.attrFloat(0.9).attrFloat(0.999).attrInt(decoupled).attrFloat(1e-8);
        k.attrFloat(1e-3).attrFloat(wd);
      };
      check(KERNELS(adam_update),
            {{p, g, m, v, step, output(s), output(s), output(s)}, attrs});
      check(KERNELS(adam_update),
            {{p, g, m, v, step, aliasOf(0, p), aliasOf(2, m), aliasOf(3, v)},
             attrs});
    }
}

TEST(CudaEmuOther, AdamBadStepGivesNan) {
  // The CPU kernel rejects a step below 1; the GPU cannot read it on the
  // host, so the emulation writes NaN to all three results instead.
  Tensor p = randomF32({5}, 1), g = randomF32({5}, 2), m = randomF32({5}, 3),
         v = uniformF32({5}, 4, 0.0f, 1.0f);
  Case c{
      {p, g, m, v, ints(I64, {1}, {0}), output({5}), output({5}), output({5})},
      [](KernelCall &k) {
        k.attrFloat(0.9).attrFloat(0.999).attrInt(0).attrFloat(1e-8);
        k.attrFloat(1e-3).attrFloat(0.0);
      }};
  Result a = run(tidalrt_k_adam_update, c),
         b = run(tidalrt_emu_k_adam_update, c);
  EXPECT_EQ(a.status.rfind("INVALID_ARGUMENT", 0), 0u) << a.status;
  ASSERT_EQ(b.status, "");
  for (int t = 5; t < 8; ++t)
    for (float x : floats(b.buffers[t], 5))
      EXPECT_TRUE(std::isnan(x));
}

TEST(CudaEmuOther, OnnxOptimizers) {
  uint32_t seed = 700;
  for (const Shape &s : kOptimizerShapes)
    for (int variant = 0; variant < 4; ++variant) {
      SCOPED_TRACE(::testing::Message()
                   << "numel " << numel(s) << " variant " << variant);
      Tensor r = variant & 1 ? typed(F64, {}, std::vector<double>{0.01})
                             : typed(F32, {1}, std::vector<float>{0.05f});
      Tensor t =
          ints(variant == 3 ? U8 : I64, {}, {variant == 0 ? 0 : 3 * variant});
      Tensor x = randomF32(s, seed++), g = randomF32(s, seed++),
             v = randomF32(s, seed++), h = uniformF32(s, seed++, 0.0f, 2.0f);
      bool nesterov = variant >= 2;
      double norm = variant == 1 ? 0.0 : 0.001;
      check(KERNELS(onnx_momentum),
            {{r, t, x, g, v, output(s), output(s)}, [=](KernelCall &k) {
               k.attrFloat(0.9).attrFloat(0.5).attrInt(nesterov).attrFloat(
                   norm);
             }});
      check(KERNELS(onnx_momentum),
            {{r, t, x, g, v, aliasOf(2, x), aliasOf(4, v)}, [=](KernelCall &k) {
               k.attrFloat(0.9).attrFloat(0.5).attrInt(nesterov).attrFloat(
                   norm);
             }});
      check(KERNELS(onnx_adagrad),
            {{r, t, x, g, h, output(s), output(s)}, [=](KernelCall &k) {
               k.attrFloat(0.1).attrFloat(1e-6).attrFloat(norm);
             }});
      check(KERNELS(onnx_adam),
            {{r, t, x, g, v, h, output(s), output(s), output(s)},
             [=](KernelCall &k) {
               k.attrFloat(0.9).attrFloat(0.999).attrFloat(1e-6);
               k.attrFloat(norm).attrFloat(variant == 2 ? 0.01 : 0.0);
             }});
    }
}

TEST(CudaEmuOther, OptimizerErrors) {
  Tensor p = randomF32({5}, 1), g = randomF32({4}, 2);
  auto sgdAttrs = [](KernelCall &k) { k.attrFloat(0.1).attrFloat(0.0); };
  checkError(KERNELS(sgd_update), {{p, g, output({5})}, sgdAttrs},
             "INVALID_ARGUMENT");
  checkError(KERNELS(sgd_update),
             {{ints(I64, {5}, {1, 2, 3, 4, 5}), p, output({5})}, sgdAttrs},
             "UNSUPPORTED");
  auto adamAttrs = [](KernelCall &k) {
    k.attrFloat(0.9).attrFloat(0.999).attrInt(0).attrFloat(1e-8);
    k.attrFloat(1e-3).attrFloat(0.0);
  };
  checkError(KERNELS(adam_update),
             {{p, p, p, p, ints(I64, {2}, {1, 2}), output({5}), output({5}),
               output({5})},
              adamAttrs},
             "INVALID_ARGUMENT");
  checkError(
      KERNELS(adam_update),
      {{p, p, p, p, randomF32({}, 3), output({5}), output({5}), output({5})},
       adamAttrs},
      "UNSUPPORTED");
  auto adagradAttrs = [](KernelCall &k) {
    k.attrFloat(0.1).attrFloat(1e-6).attrFloat(0.0);
  };
  Tensor t = ints(I64, {}, {1});
  // r of an integer type, r with two elements, t of a float type.
  checkError(KERNELS(onnx_adagrad),
             {{ints(I64, {}, {1}), t, p, p, p, output({5}), output({5})},
              adagradAttrs},
             "UNSUPPORTED");
  checkError(
      KERNELS(onnx_adagrad),
      {{randomF32({2}, 4), t, p, p, p, output({5}), output({5})}, adagradAttrs},
      "INVALID_ARGUMENT");
  checkError(
      KERNELS(onnx_adagrad),
      {{randomF32({}, 4), randomF32({}, 5), p, p, p, output({5}), output({5})},
       adagradAttrs},
      "UNSUPPORTED");
  checkError(KERNELS(onnx_momentum),
             {{randomF32({}, 4), ints(I64, {2}, {1, 1}), p, p, p, output({5}),
               output({5})},
              [](KernelCall &k) {
                k.attrFloat(0.9).attrFloat(0.5).attrInt(0).attrFloat(0.0);
              }},
             "INVALID_ARGUMENT");
  checkError(KERNELS(onnx_adam),
             {{randomF32({}, 4), t, p, p, p, p, output({5}), output({5})},
              [](KernelCall &k) {
                k.attrFloat(0.9).attrFloat(0.999).attrFloat(1e-6);
                k.attrFloat(0.0).attrFloat(0.0);
              }},
             "INTERNAL");
}

//===----------------------------------------------------------------------===//
// Data movement (index arithmetic only: bitwise)
//===----------------------------------------------------------------------===//

const std::vector<tidalrt_element_type_t> kMoveTypes = {F32, U8, F16, I64,
                                                        BOOL};

Shape permuted(const Shape &s, const std::vector<int64_t> &perm) {
  Shape out;
  for (int64_t p : perm)
    out.push_back(s[p]);
  return out;
}

TEST(CudaEmuOther, Transpose) {
  struct T {
    Shape in;
    std::vector<int64_t> perm;
  };
  const std::vector<T> cases = {
      {{}, {}},
      {{7}, {0}},
      {{3, 5}, {1, 0}},
      {{33, 40}, {1, 0}},
      {{2, 3, 4, 5}, {0, 2, 1, 3}},
      {{2, 3, 4, 5}, {3, 2, 1, 0}},
      {{2, 3, 4, 5}, {1, 3, 0, 2}},
      {{4, 1, 6, 1}, {2, 3, 0, 1}},
      {{9, 16, 17}, {0, 2, 1}},
      {{3, 0, 2}, {2, 0, 1}},
  };
  uint32_t seed = 800;
  for (const T &t : cases)
    for (auto type : kMoveTypes) {
      SCOPED_TRACE(::testing::Message() << "rank " << t.in.size() << " numel "
                                        << numel(t.in) << " type " << type);
      std::vector<int64_t> perm = t.perm;
      check(KERNELS(transpose), {{randomBytes(type, t.in, seed++),
                                  output(type, permuted(t.in, perm))},
                                 [perm](KernelCall &k) { k.attrInts(perm); }});
    }
  auto perm10 = [](KernelCall &k) { k.attrInts({1, 0}); };
  checkError(KERNELS(transpose),
             {{randomF32({3, 4}, 1), output({3, 4})}, perm10},
             "INVALID_ARGUMENT");
  checkError(KERNELS(transpose),
             {{randomF32({3, 4}, 1), output({4, 3})},
              [](KernelCall &k) {
                k.attrInts({0, 0});
              }},
             "INVALID_ARGUMENT");
  checkError(KERNELS(transpose),
             {{randomF32({3, 4}, 1), output(I32, {4, 3})}, perm10},
             "INVALID_ARGUMENT");
  checkError(KERNELS(transpose),
             {{randomF32({3, 4}, 1), output({4, 3})},
              [](KernelCall &k) {
                k.attrInts({1, 0, 2});
              }},
             "INVALID_ARGUMENT");
}

TEST(CudaEmuOther, ConcatAndSplit) {
  struct T {
    std::vector<Shape> parts;
    int64_t axis;
  };
  const std::vector<T> cases = {
      {{{3}, {4}}, 0},
      {{{2, 3}, {2, 5}, {2, 1}}, 1},
      {{{2, 3}, {4, 3}}, 0},
      {{{2, 3, 4}, {2, 0, 4}, {2, 2, 4}}, -2},
      {{{1, 3, 2}, {1, 3, 5}}, 2},
      {{{3, 2, 2}}, 1},
      {{{0, 2}, {0, 3}}, 1},
      {{{40, 7}, {40, 9}, {40, 1}}, -1},
  };
  uint32_t seed = 900;
  for (const T &t : cases)
    for (auto type : kMoveTypes) {
      SCOPED_TRACE(::testing::Message()
                   << "parts " << t.parts.size() << " axis " << t.axis
                   << " type " << type);
      int rank = (int)t.parts[0].size();
      int axis = (int)(t.axis < 0 ? t.axis + rank : t.axis);
      Shape whole = t.parts[0];
      whole[axis] = 0;
      std::vector<int64_t> sizes;
      for (const Shape &p : t.parts) {
        whole[axis] += p[axis];
        sizes.push_back(p[axis]);
      }
      Case concat;
      for (const Shape &p : t.parts)
        concat.tensors.push_back(randomBytes(type, p, seed++));
      concat.tensors.push_back(output(type, whole));
      concat.attrs = axisAttr(t.axis);
      check(KERNELS(concat), concat);
      Case split;
      split.tensors.push_back(randomBytes(type, whole, seed++));
      for (const Shape &p : t.parts)
        split.tensors.push_back(output(type, p));
      int64_t a = t.axis;
      split.attrs = [a, sizes](KernelCall &k) { k.attrInt(a).attrInts(sizes); };
      check(KERNELS(split), split);
    }
  // Parts that do not add up, a part of another type, bad axis, sizes
  // that do not match, too few tensors.
  checkError(KERNELS(concat),
             {{randomF32({2, 3}, 1), randomF32({2, 2}, 2), output({2, 6})},
              axisAttr(1)},
             "INVALID_ARGUMENT");
  checkError(KERNELS(concat),
             {{randomF32({2, 3}, 1), output(I32, {2, 3}), output({2, 6})},
              axisAttr(1)},
             "INVALID_ARGUMENT");
  checkError(KERNELS(concat),
             {{randomF32({2, 3}, 1), randomF32({2, 3}, 2), output({2, 6})},
              axisAttr(2)},
             "INVALID_ARGUMENT");
  checkError(KERNELS(concat), {{output({2, 6})}, axisAttr(0)},
             "INVALID_ARGUMENT");
  checkError(KERNELS(split),
             {{randomF32({2, 6}, 1), output({2, 3}), output({2, 3})},
              [](KernelCall &k) {
                k.attrInt(1).attrInts({2, 4});
              }},
             "INVALID_ARGUMENT");
  checkError(KERNELS(split),
             {{randomF32({2, 6}, 1), output({2, 3}), output({2, 3})},
              [](KernelCall &k) { k.attrInt(1).attrInts({3}); }},
             "INVALID_ARGUMENT");
}

TEST(CudaEmuOther, SliceAndBackward) {
  struct T {
    Shape full;
    std::vector<int64_t> starts, steps;
    Shape part;
  };
  const std::vector<T> cases = {
      {{10}, {2}, {3}, {3}},
      {{10}, {9}, {-2}, {5}},
      {{10}, {0}, {1}, {10}},
      {{10}, {4}, {1}, {0}},
      {{5, 7}, {1, 2}, {2, 1}, {2, 4}},
      {{5, 7}, {4, 6}, {-1, -3}, {5, 3}},
      {{3, 4, 5}, {0, 1, 0}, {1, 1, 2}, {3, 2, 3}},
      {{3, 4, 5}, {2, 3, 4}, {-1, -1, -1}, {3, 4, 5}},
      {{2, 1, 6, 3}, {1, 0, 5, 0}, {1, 1, -2, 1}, {1, 1, 3, 3}},
      {{64, 33}, {3, 1}, {5, 4}, {13, 8}},
  };
  uint32_t seed = 1000;
  for (const T &t : cases)
    for (auto type : kMoveTypes) {
      SCOPED_TRACE(::testing::Message()
                   << "rank " << t.full.size() << " part numel "
                   << numel(t.part) << " type " << type);
      std::vector<int64_t> ends(t.full.size(), 0);
      for (size_t d = 0; d < t.full.size(); ++d)
        ends[d] = t.starts[d] + t.part[d] * t.steps[d];
      auto attrs = [=](KernelCall &k) {
        k.attrInts(ends).attrInts(t.starts).attrInts(t.steps);
      };
      check(KERNELS(slice),
            {{randomBytes(type, t.full, seed++), output(type, t.part)}, attrs});
      check(KERNELS(slice_backward),
            {{randomBytes(type, t.part, seed++), output(type, t.full)}, attrs});
    }
  auto attrs = [](std::vector<int64_t> starts, std::vector<int64_t> steps) {
    return [=](KernelCall &k) {
      k.attrInts(std::vector<int64_t>(starts.size(), 0))
          .attrInts(starts)
          .attrInts(steps);
    };
  };
  // Out of range (first and last position), step 0, rank mismatch.
  checkError(KERNELS(slice),
             {{randomF32({10}, 1), output({3})}, attrs({8}, {1})},
             "INVALID_ARGUMENT");
  checkError(KERNELS(slice),
             {{randomF32({10}, 1), output({3})}, attrs({-1}, {1})},
             "INVALID_ARGUMENT");
  checkError(KERNELS(slice_backward),
             {{randomF32({3}, 1), output({10})}, attrs({0}, {0})},
             "INVALID_ARGUMENT");
  checkError(KERNELS(slice_backward),
             {{randomF32({3}, 1), output({10})}, attrs({1}, {-1})},
             "INVALID_ARGUMENT");
  checkError(KERNELS(slice),
             {{randomF32({10}, 1), output({3, 1})}, attrs({0}, {1})},
             "INVALID_ARGUMENT");
}

TEST(CudaEmuOther, GatherAndBackward) {
  struct T {
    Shape data;
    int64_t axis;
    Shape indexShape;
    std::vector<int64_t> indices;
  };
  const std::vector<T> cases = {
      {{5}, 0, {3}, {4, 0, -1}},
      {{5}, 0, {}, {-5}},
      {{6, 3}, 0, {4}, {1, 1, 5, -6}},
      {{6, 3}, 1, {2, 2}, {2, 0, -1, 2}},
      {{4, 5, 6}, 1, {3}, {0, 4, 0}},
      {{4, 5, 6}, -1, {2, 3}, {5, 0, 1, 1, -2, 3}},
      {{4, 5, 6}, 0, {0}, {}},
      {{3, 0, 2}, 0, {2}, {2, 0}},
      {{50, 70}, 0, {200}, {}},
  };
  uint32_t seed = 1100;
  for (T t : cases) {
    int rank = (int)t.data.size();
    int axis = (int)(t.axis < 0 ? t.axis + rank : t.axis);
    if (t.indices.empty() && numel(t.indexShape) > 0) {
      // Many repeated indices: gather_backward adds them in order.
      std::mt19937 rng(seed);
      for (int64_t j = 0; j < numel(t.indexShape); ++j)
        t.indices.push_back((int64_t)(rng() % 100) - 50);
    }
    Shape out(t.data.begin(), t.data.begin() + axis);
    out.insert(out.end(), t.indexShape.begin(), t.indexShape.end());
    out.insert(out.end(), t.data.begin() + axis + 1, t.data.end());
    for (auto indexType : {I64, I32, I16, I8, U64, U32, U16, U8}) {
      bool negative = false;
      for (int64_t v : t.indices)
        negative = negative || v < 0;
      bool isUnsigned = indexType == U64 || indexType == U32 ||
                        indexType == U16 || indexType == U8;
      if (negative && isUnsigned)
        continue;
      SCOPED_TRACE(::testing::Message()
                   << "data rank " << rank << " axis " << t.axis << " indices "
                   << t.indices.size() << " type " << indexType);
      Tensor idx = ints(indexType, t.indexShape, t.indices);
      for (auto type : kMoveTypes)
        check(KERNELS(gather),
              {{randomBytes(type, t.data, seed++), idx, output(type, out)},
               axisAttr(t.axis)});
      check(KERNELS(gather_backward),
            {{randomF32(out, seed++), idx, output(t.data)}, axisAttr(t.axis)});
    }
  }
  // Output shape, float indices, grad of another type.
  Tensor idx = ints(I64, {2}, {0, 1});
  checkError(KERNELS(gather),
             {{randomF32({3, 4}, 1), idx, output({3, 4})}, axisAttr(0)},
             "INVALID_ARGUMENT");
  checkError(
      KERNELS(gather),
      {{randomF32({3, 4}, 1), randomF32({2}, 2), output({2, 4})}, axisAttr(0)},
      "UNSUPPORTED");
  checkError(KERNELS(gather_backward),
             {{output(I32, {2, 4}), idx, output({3, 4})}, axisAttr(0)},
             "UNSUPPORTED");
  checkError(KERNELS(gather_backward),
             {{randomF32({2, 4}, 1), idx, output({3, 4})}, axisAttr(2)},
             "INVALID_ARGUMENT");
}

TEST(CudaEmuOther, GatherBadIndex) {
  // The CPU kernels reject an index outside [-dim, dim); the GPU cannot, so
  // the emulated gather writes zeros for it and gather_backward skips it.
  Tensor idx = ints(I64, {3}, {1, 3, -4}); // dim 3: 3 and -4 are out
  Tensor data = randomF32({3, 2}, 1);
  Case g{{data, idx, output({3, 2})}, axisAttr(0)};
  Result a = run(tidalrt_k_gather, g), b = run(tidalrt_emu_k_gather, g);
  EXPECT_EQ(a.status.rfind("INVALID_ARGUMENT", 0), 0u) << a.status;
  ASSERT_EQ(b.status, "");
  std::vector<float> d = floats(data.bytes, 6), o = floats(b.buffers[2], 6);
  EXPECT_EQ(o, (std::vector<float>{d[2], d[3], 0, 0, 0, 0}));

  Tensor grad = randomF32({3, 2}, 2);
  Case gb{{grad, idx, output({3, 2})}, axisAttr(0)};
  a = run(tidalrt_k_gather_backward, gb);
  b = run(tidalrt_emu_k_gather_backward, gb);
  EXPECT_EQ(a.status.rfind("INVALID_ARGUMENT", 0), 0u) << a.status;
  ASSERT_EQ(b.status, "");
  std::vector<float> gr = floats(grad.bytes, 6);
  EXPECT_EQ(floats(b.buffers[2], 6),
            (std::vector<float>{0, 0, gr[0], gr[1], 0, 0}));
}

} // namespace
