// Tests of tidalrt_k_fused_elementwise (tidalrt/fused_program.h): every
// opcode, and chains with several results, broadcast scalars and results
// over their inputs' bytes, bit for bit against the unfused kernels, on
// each ISA; malformed programs are refused with a status.
#include "isa_test_util.h"
#include "kernel_test_util.h"

#include "tidalrt/fused_program.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using tidalrt_test::KernelCall;
using tidalrt_test::randomFloats;

namespace {

class FusedElementwise : public tidalrt_test::IsaParamTest {};

int64_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Bitwise equality, with the first differing element in the message.
void expectSameBits(const std::vector<float> &got,
                    const std::vector<float> &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i]
                    << ", unfused " << want[i];
      return;
    }
}

struct Op {
  int64_t opcode;
  tidalrt_kernel_fn_t fn;
  int operands; // 1 or 2
  bool alpha;   // takes leaky_relu's alpha attribute
};

const Op kOps[] = {
    {TIDALRT_FUSED_ADD, tidalrt_k_add, 2, false},
    {TIDALRT_FUSED_SUB, tidalrt_k_sub, 2, false},
    {TIDALRT_FUSED_MUL, tidalrt_k_mul, 2, false},
    {TIDALRT_FUSED_DIV, tidalrt_k_div, 2, false},
    {TIDALRT_FUSED_NEG, tidalrt_k_neg, 1, false},
    {TIDALRT_FUSED_RELU, tidalrt_k_relu, 1, false},
    {TIDALRT_FUSED_SIGMOID, tidalrt_k_sigmoid, 1, false},
    {TIDALRT_FUSED_TANH, tidalrt_k_tanh, 1, false},
    {TIDALRT_FUSED_SQRT, tidalrt_k_sqrt, 1, false},
    {TIDALRT_FUSED_ERF, tidalrt_k_erf, 1, false},
    {TIDALRT_FUSED_EXP, tidalrt_k_exp, 1, false},
    {TIDALRT_FUSED_LOG, tidalrt_k_log, 1, false},
    {TIDALRT_FUSED_LEAKY_RELU, tidalrt_k_leaky_relu, 1, true},
    {TIDALRT_FUSED_GELU, tidalrt_k_gelu, 1, false},
    {TIDALRT_FUSED_RELU_BACKWARD, tidalrt_k_relu_backward, 2, false},
    {TIDALRT_FUSED_LEAKY_RELU_BACKWARD, tidalrt_k_leaky_relu_backward, 2, true},
    {TIDALRT_FUSED_SIGMOID_BACKWARD, tidalrt_k_sigmoid_backward, 2, false},
    {TIDALRT_FUSED_TANH_BACKWARD, tidalrt_k_tanh_backward, 2, false},
    {TIDALRT_FUSED_ERF_BACKWARD, tidalrt_k_erf_backward, 2, false},
    {TIDALRT_FUSED_GELU_BACKWARD, tidalrt_k_gelu_backward, 2, false},
};

constexpr float kAlpha = 0.07f;

// The unfused kernel of `op` on a (and b), `n` elements each (b of 1
// element when `bScalar`).
std::vector<float> unfused(const Op &op, std::vector<float> &a,
                           std::vector<float> *b, int64_t n, bool bScalar,
                           bool aScalar = false) {
  std::vector<float> y((size_t)n);
  KernelCall call;
  call.f32({aScalar ? 1 : n}, a.data());
  if (b)
    call.f32({bScalar ? 1 : n}, b->data());
  call.f32({n}, y.data());
  if (op.alpha)
    call.attrFloat(kAlpha);
  std::string error = call.run(op.fn);
  EXPECT_EQ(error, "");
  return y;
}

// Runs a program over `inputs` (each n elements, or 1 for a scalar) into
// `numOutputs` results of n elements.
std::string runFused(std::vector<std::vector<float>> &inputs, int64_t n,
                     const std::vector<int64_t> &program,
                     const std::vector<int64_t> &outputs,
                     std::vector<std::vector<float>> &results) {
  KernelCall call;
  for (auto &in : inputs)
    call.f32({(int64_t)in.size()}, in.data());
  results.assign(outputs.size(), std::vector<float>((size_t)n));
  for (auto &r : results)
    call.f32({n}, r.data());
  call.attrInts(outputs).attrInts(program);
  return call.run(tidalrt_k_fused_elementwise);
}

// Inputs in each op's domain: positive where sqrt and log need it.
std::vector<float> operandFor(const Op &op, int64_t n, uint32_t seed) {
  bool positive =
      op.opcode == TIDALRT_FUSED_SQRT || op.opcode == TIDALRT_FUSED_LOG;
  return randomFloats(n, positive ? 0.01f : -6.0f, 6.0f, seed);
}

TEST_P(FusedElementwise, EveryOpcodeMatchesItsKernel) {
  // 1000: one partial tile; 70001: several parallel chunks and a tail.
  for (int64_t n : {1000, 70001})
    for (const Op &op : kOps) {
      SCOPED_TRACE("opcode " + std::to_string(op.opcode) + ", n " +
                   std::to_string(n));
      std::vector<std::vector<float>> in = {operandFor(op, n, 1),
                                            operandFor(op, n, 2)};
      const int64_t param = op.alpha ? bitsOf(kAlpha) : 0;
      std::vector<std::vector<float>> out;
      if (op.operands == 1) {
        ASSERT_EQ(runFused(in, n, {op.opcode, 0, -1, param}, {2}, out), "");
        expectSameBits(out[0], unfused(op, in[0], nullptr, n, false), "f(a)");
      } else {
        ASSERT_EQ(runFused(in, n, {op.opcode, 0, 1, param}, {2}, out), "");
        expectSameBits(out[0], unfused(op, in[0], &in[1], n, false), "a, b");
      }
      if (op.operands == 2 && op.opcode < TIDALRT_FUSED_NEG) {
        // A broadcast scalar on either side.
        std::vector<std::vector<float>> s = {in[0], {2.5f}};
        ASSERT_EQ(runFused(s, n, {op.opcode, 0, 1, 0}, {2}, out), "");
        expectSameBits(out[0], unfused(op, s[0], &s[1], n, true), "a op k");
        ASSERT_EQ(runFused(s, n, {op.opcode, 1, 0, 0}, {2}, out), "");
        expectSameBits(out[0], unfused(op, s[1], &s[0], n, false, true),
                       "k op a");
      }
    }
}

TEST_P(FusedElementwise, ChainWithSeveralResultsMatchesUnfusedOps) {
  // An LSTM cell's forward: c2 = sigmoid(f) * c + sigmoid(i) * tanh(g),
  // h = sigmoid(o) * tanh(c2) * k; results c2, tanh(c2), h. Registers:
  // 0 i, 1 f, 2 o, 3 g, 4 c, 5 k.
  const int64_t n = 40000;
  std::vector<std::vector<float>> in;
  for (uint32_t s = 0; s < 5; ++s)
    in.push_back(randomFloats(n, -4, 4, 10 + s));
  in.push_back({0.75f});
  const std::vector<int64_t> program = {
      TIDALRT_FUSED_SIGMOID, 0,  -1, 0, // 6
      TIDALRT_FUSED_SIGMOID, 1,  -1, 0, // 7
      TIDALRT_FUSED_SIGMOID, 2,  -1, 0, // 8
      TIDALRT_FUSED_TANH,    3,  -1, 0, // 9
      TIDALRT_FUSED_MUL,     7,  4,  0, // 10
      TIDALRT_FUSED_MUL,     6,  9,  0, // 11
      TIDALRT_FUSED_ADD,     10, 11, 0, // 12 c2
      TIDALRT_FUSED_TANH,    12, -1, 0, // 13
      TIDALRT_FUSED_MUL,     8,  13, 0, // 14
      TIDALRT_FUSED_MUL,     14, 5,  0, // 15 h
  };
  std::vector<std::vector<float>> out;
  ASSERT_EQ(runFused(in, n, program, {12, 13, 15}, out), "");

  const Op &sig = kOps[6], &tanhOp = kOps[7], &mul = kOps[2], &add = kOps[0];
  std::vector<float> si = unfused(sig, in[0], nullptr, n, false);
  std::vector<float> sf = unfused(sig, in[1], nullptr, n, false);
  std::vector<float> so = unfused(sig, in[2], nullptr, n, false);
  std::vector<float> tg = unfused(tanhOp, in[3], nullptr, n, false);
  std::vector<float> fc = unfused(mul, sf, &in[4], n, false);
  std::vector<float> ig = unfused(mul, si, &tg, n, false);
  std::vector<float> c2 = unfused(add, fc, &ig, n, false);
  std::vector<float> tc = unfused(tanhOp, c2, nullptr, n, false);
  std::vector<float> h0 = unfused(mul, so, &tc, n, false);
  std::vector<float> h = unfused(mul, h0, &in[5], n, true);
  expectSameBits(out[0], c2, "c2");
  expectSameBits(out[1], tc, "tanh(c2)");
  expectSameBits(out[2], h, "h");
}

TEST_P(FusedElementwise, ResultsMayTakeTheirInputsBytes) {
  // relu_backward(a + b, relu(a + b)) with both results over the inputs.
  const int64_t n = 33333;
  std::vector<float> a = randomFloats(n, -3, 3, 21),
                     b = randomFloats(n, -3, 3, 22);
  std::vector<std::vector<float>> copy = {a, b}, out;
  const std::vector<int64_t> program = {
      TIDALRT_FUSED_ADD,           0, 1,  0, // 2
      TIDALRT_FUSED_RELU,          2, -1, 0, // 3
      TIDALRT_FUSED_RELU_BACKWARD, 2, 3,  0, // 4
  };
  ASSERT_EQ(runFused(copy, n, program, {3, 4}, out), "");

  KernelCall call;
  call.f32({n}, a.data()).f32({n}, b.data());
  call.f32({n}, a.data()).f32({n}, b.data()); // results over the inputs
  call.attrInts({3, 4}).attrInts(program);
  ASSERT_EQ(call.run(tidalrt_k_fused_elementwise), "");
  expectSameBits(a, out[0], "relu over input 0");
  expectSameBits(b, out[1], "gradient over input 1");
}

TEST_P(FusedElementwise, TinyAndEmptyTensors) {
  // One element (every input "full" and a scalar alike), a partial vector,
  // and no elements at all.
  const Op &mul = kOps[2], &tanhOp = kOps[7];
  for (int64_t n : {1, 7}) {
    SCOPED_TRACE("n " + std::to_string(n));
    std::vector<std::vector<float>> in = {randomFloats(n, -2, 2, 31), {1.5f}};
    std::vector<std::vector<float>> out;
    ASSERT_EQ(
        runFused(in, n,
                 {TIDALRT_FUSED_MUL, 0, 1, 0, TIDALRT_FUSED_TANH, 2, -1, 0},
                 {3}, out),
        "");
    std::vector<float> m = unfused(mul, in[0], &in[1], n, true);
    expectSameBits(out[0], unfused(tanhOp, m, nullptr, n, false), "tanh(x k)");
  }
  KernelCall call;
  float dummy = 0;
  call.f32({0}, &dummy).f32({0}, &dummy);
  call.attrInts({1}).attrInts({TIDALRT_FUSED_RELU, 0, -1, 0});
  EXPECT_EQ(call.run(tidalrt_k_fused_elementwise), "");
}

TEST_P(FusedElementwise, MalformedProgramsAreRefused) {
  std::vector<std::vector<float>> in = {randomFloats(64, -1, 1, 3)}, out;
  auto expectError = [&](const std::vector<int64_t> &program,
                         const std::vector<int64_t> &outputs,
                         const std::string &part) {
    std::string error = runFused(in, 64, program, outputs, out);
    EXPECT_NE(error.find("INVALID_ARGUMENT"), std::string::npos) << error;
    EXPECT_NE(error.find(part), std::string::npos) << error;
  };
  expectError({TIDALRT_FUSED_RELU, 0, -1}, {1}, "a program of 3 words");
  expectError({77, 0, -1, 0}, {1}, "step 0: unknown opcode 77");
  expectError({TIDALRT_FUSED_RELU, 1, -1, 0}, {1},
              "step 0 reads registers 1, -1 of 1");
  expectError({TIDALRT_FUSED_ADD, 0, -1, 0}, {1}, "step 0 reads registers");
  expectError({TIDALRT_FUSED_RELU, 0, -1, 0}, {0}, "result 0 names register 0");
}

INSTANTIATE_TEST_SUITE_P(Cpu, FusedElementwise, TIDALRT_TEST_ISAS,
                         [](const auto &info) {
                           return std::string(info.param);
                         });

} // namespace
