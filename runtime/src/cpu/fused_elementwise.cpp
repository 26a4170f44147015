// fused_elementwise.cpp - a chain of float32 element-wise ops in one call.
//
// tidalrt_k_fused_elementwise runs the program of a tidal.fused_elementwise
// op (tidalrt/fused_program.h) over the elements in the chunks of
// parallelChunks (one parallel region), each chunk in tiles of kTile
// elements: per tile, every step runs the same simd.h loop as the op it
// replaces, from the inputs and from earlier steps' tiles (scratch on the
// thread's stack, reused once a step's last reader has run), and the
// results' tiles are written last. So each result element has the unfused
// ops' bits, and a result may share its bytes with any input (every input
// tile is read before any result tile is written).
#include "broadcast.h"
#include "kernel.h"
#include "simd.h"

#include "tidalrt/fused_program.h"

#include <cstring>
#include <initializer_list>

using namespace tidalrt;
using namespace tidalrt::ew;

namespace {

constexpr int64_t kTile = 512; // floats: 2 KiB per live step

enum class Kind { Binary, Unary, Grad };

struct Step {
  Kind kind;
  simd::Binary binary;
  simd::Unary unary;
  simd::Grad grad;
  int a, b;
  float param;
  int slot; // scratch tile holding the step's values
};

struct Program {
  int numInputs = 0, numSteps = 0, numOutputs = 0, numSlots = 0;
  int64_t n = 0; // elements of each result
  Step steps[TIDALRT_FUSED_MAX_STEPS];
  int outputs[TIDALRT_FUSED_MAX_OUTPUTS]; // registers
};

bool decodeOpcode(int64_t code, Step &s) {
  switch (code) {
#define BIN(c, k)                                                              \
  case c:                                                                      \
    s.kind = Kind::Binary;                                                     \
    s.binary = simd::Binary::k;                                                \
    return true;
#define UN(c, k)                                                               \
  case c:                                                                      \
    s.kind = Kind::Unary;                                                      \
    s.unary = simd::Unary::k;                                                  \
    return true;
#define GRAD(c, k)                                                             \
  case c:                                                                      \
    s.kind = Kind::Grad;                                                       \
    s.grad = simd::Grad::k;                                                    \
    return true;
    BIN(TIDALRT_FUSED_ADD, Add)
    BIN(TIDALRT_FUSED_SUB, Sub)
    BIN(TIDALRT_FUSED_MUL, Mul)
    BIN(TIDALRT_FUSED_DIV, Div)
    UN(TIDALRT_FUSED_NEG, Neg)
    UN(TIDALRT_FUSED_RELU, Relu)
    UN(TIDALRT_FUSED_SIGMOID, Sigmoid)
    UN(TIDALRT_FUSED_TANH, Tanh)
    UN(TIDALRT_FUSED_SQRT, Sqrt)
    UN(TIDALRT_FUSED_ERF, Erf)
    UN(TIDALRT_FUSED_EXP, Exp)
    UN(TIDALRT_FUSED_LOG, Log)
    UN(TIDALRT_FUSED_LEAKY_RELU, LeakyRelu)
    UN(TIDALRT_FUSED_GELU, Gelu)
    GRAD(TIDALRT_FUSED_RELU_BACKWARD, Relu)
    GRAD(TIDALRT_FUSED_LEAKY_RELU_BACKWARD, LeakyRelu)
    GRAD(TIDALRT_FUSED_SIGMOID_BACKWARD, Sigmoid)
    GRAD(TIDALRT_FUSED_TANH_BACKWARD, Tanh)
    GRAD(TIDALRT_FUSED_ERF_BACKWARD, Erf)
    GRAD(TIDALRT_FUSED_GELU_BACKWARD, Gelu)
#undef BIN
#undef UN
#undef GRAD
  }
  return false;
}

// Decodes and checks the call: the program's registers, the tensors' types
// and shapes; gives every step a scratch tile, reusing a tile once the last
// step reading it has run (results keep theirs to the end of the tile).
void decode(const OpCall &op, Program &p, int64_t &n) {
  const int64_t *outputs = nullptr, *words = nullptr;
  const int64_t numOutputs = op.getInts(0, &outputs);
  const int64_t numWords = op.getInts(1, &words);
  if (numOutputs < 1 || numOutputs > TIDALRT_FUSED_MAX_OUTPUTS ||
      numOutputs >= op.numTensors)
    fail(TIDALRT_INVALID_ARGUMENT, "%lld results for %d tensors",
         (long long)numOutputs, op.numTensors);
  if (numWords <= 0 || numWords % TIDALRT_FUSED_WORDS != 0 ||
      numWords / TIDALRT_FUSED_WORDS > TIDALRT_FUSED_MAX_STEPS)
    fail(TIDALRT_INVALID_ARGUMENT,
         "a program of %lld words (1 to %d steps of %d words)",
         (long long)numWords, TIDALRT_FUSED_MAX_STEPS, TIDALRT_FUSED_WORDS);
  p.numOutputs = (int)numOutputs;
  p.numInputs = op.numTensors - p.numOutputs;
  p.numSteps = (int)(numWords / TIDALRT_FUSED_WORDS);
  if (p.numInputs > TIDALRT_FUSED_MAX_INPUTS)
    fail(TIDALRT_INVALID_ARGUMENT, "%d inputs; at most %d", p.numInputs,
         TIDALRT_FUSED_MAX_INPUTS);

  const TensorRef &first = op[p.numInputs];
  n = first.numel();
  for (int t = 0; t < op.numTensors; ++t) {
    const TensorRef &x = op[t];
    const bool result = t >= p.numInputs;
    if (x.type != TIDALRT_ELEMENT_TYPE_F32 || !x.present())
      fail(TIDALRT_UNSUPPORTED, "tensor %d is not a float32 tensor", t);
    if (result || x.numel() != 1)
      expectElements(x, n, result ? "result" : "input");
  }

  const int numRegs = p.numInputs + p.numSteps;
  int lastRead[TIDALRT_FUSED_MAX_INPUTS + TIDALRT_FUSED_MAX_STEPS];
  bool full[TIDALRT_FUSED_MAX_INPUTS + TIDALRT_FUSED_MAX_STEPS];
  for (int r = 0; r < numRegs; ++r) {
    lastRead[r] = -1;
    full[r] = r >= p.numInputs || op[r].numel() == n;
  }
  for (int k = 0; k < p.numSteps; ++k) {
    const int64_t *w = words + (int64_t)k * TIDALRT_FUSED_WORDS;
    Step &s = p.steps[k];
    if (!decodeOpcode(w[0], s))
      fail(TIDALRT_INVALID_ARGUMENT, "step %d: unknown opcode %lld", k,
           (long long)w[0]);
    const int defined = p.numInputs + k;
    const bool two = s.kind != Kind::Unary;
    if (w[1] < 0 || w[1] >= defined || (two && (w[2] < 0 || w[2] >= defined)) ||
        (!two && w[2] != -1))
      fail(TIDALRT_INVALID_ARGUMENT, "step %d reads registers %lld, %lld of %d",
           k, (long long)w[1], (long long)w[2], defined);
    s.a = (int)w[1];
    s.b = (int)w[2];
    const uint32_t bits = (uint32_t)w[3];
    std::memcpy(&s.param, &bits, sizeof bits);
    const bool ok = s.kind == Kind::Binary ? full[s.a] || full[s.b]
                    : s.kind == Kind::Grad ? full[s.a] && full[s.b]
                                           : full[s.a];
    if (!ok)
      fail(TIDALRT_INVALID_ARGUMENT, "step %d reads a broadcast scalar", k);
    lastRead[s.a] = k;
    if (two)
      lastRead[s.b] = k;
  }
  for (int j = 0; j < p.numOutputs; ++j) {
    if (outputs[j] < p.numInputs || outputs[j] >= numRegs)
      fail(TIDALRT_INVALID_ARGUMENT, "result %d names register %lld", j,
           (long long)outputs[j]);
    p.outputs[j] = (int)outputs[j];
    lastRead[outputs[j]] = p.numSteps; // kept to the end of the tile
  }

  // Scratch tiles: a step's tile is taken before its operands' are freed,
  // so no loop writes over a tile it reads.
  bool busy[TIDALRT_FUSED_MAX_STEPS] = {};
  for (int k = 0; k < p.numSteps; ++k) {
    Step &s = p.steps[k];
    int slot = 0;
    while (busy[slot])
      ++slot;
    busy[slot] = true;
    s.slot = slot;
    p.numSlots = slot + 1 > p.numSlots ? slot + 1 : p.numSlots;
    if (lastRead[p.numInputs + k] < 0)
      busy[slot] = false; // never read (a malformed but harmless program)
    for (int r : {s.a, s.b})
      if (r >= p.numInputs && lastRead[r] == k)
        busy[p.steps[r - p.numInputs].slot] = false;
  }
}

// Runs the program over elements [b, e).
void runRange(const OpCall &op, const Program &p, simd::Isa isa, int64_t b,
              int64_t e) {
  alignas(64) float tiles[TIDALRT_FUSED_MAX_STEPS][kTile];
  for (int64_t t0 = b; t0 < e; t0 += kTile) {
    const int64_t len = e - t0 < kTile ? e - t0 : kTile;
    // Register r's first element in this tile and its stride (0: scalar).
    auto src = [&](int r, int64_t &stride) -> const float * {
      if (r >= p.numInputs) {
        stride = 1;
        return tiles[p.steps[r - p.numInputs].slot];
      }
      const TensorRef &x = op[r];
      if (x.numel() == 1 && len > 0 && op[p.numInputs].numel() != 1) {
        stride = 0;
        return x.f32();
      }
      stride = 1;
      return x.f32() + t0;
    };
    for (int k = 0; k < p.numSteps; ++k) {
      const Step &s = p.steps[k];
      float *y = tiles[s.slot];
      int64_t as = 1, bs = 1;
      const float *A = src(s.a, as);
      switch (s.kind) {
      case Kind::Binary: {
        const float *B = src(s.b, bs);
        simd::binaryF32(isa, s.binary, A, as, B, bs, y, len);
        break;
      }
      case Kind::Unary:
        simd::unaryF32(isa, s.unary, A, y, len, s.param);
        break;
      case Kind::Grad: {
        const float *B = src(s.b, bs);
        simd::gradF32(isa, s.grad, A, B, y, len, s.param);
        break;
      }
      }
    }
    for (int j = 0; j < p.numOutputs; ++j)
      std::memcpy(op[p.numInputs + j].f32() + t0,
                  tiles[p.steps[p.outputs[j] - p.numInputs].slot],
                  (size_t)len * sizeof(float));
  }
}

} // namespace

extern "C" tidalrt_status_t tidalrt_k_fused_elementwise(tidalrt_context_t *ctx,
                                                        const int64_t *desc,
                                                        void *const *buffers) {
  return runKernel(ctx, desc, buffers, "fused_elementwise", [](OpCall &op) {
    // Decoded and checked once, while the context prepares; a context that
    // was never prepared decodes every call.
    Program local;
    const Program *prepared = getState<Program>(op.context, op.index);
    if (!prepared) {
      decode(op, local, local.n);
      if (preparing(op.context))
        setOwnedState(op.context, op.index, new Program(local));
    }
    const Program &p = prepared ? *prepared : local;
    const int64_t n = p.n;
    if (preparing(op.context) || n == 0)
      return ok();
    const simd::Isa isa = simd::activeIsa();
    parallelChunks(n,
                   [&](int64_t b, int64_t e) { runRange(op, p, isa, b, e); });
    return ok();
  });
}
