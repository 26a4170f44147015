//===- FusedOps.cpp - tidal.fused_elementwise and its program -------------===//
//
// The opcode table (tidalrt/fused_program.h) seen from the compiler, and the
// verifier: every step reads earlier registers with its arity's shapes,
// every result names a step, and all results share one float32 type.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/FusedProgram.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "tidalrt/fused_program.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tidal;

static_assert(kFusedStepWords == TIDALRT_FUSED_WORDS,
              "FusedProgram.h and tidalrt/fused_program.h disagree");

namespace {
struct OpcodeInfo {
  int64_t opcode;
  const char *name;
  FusedArity arity;
};
} // namespace

static const OpcodeInfo kOpcodes[] = {
    {TIDALRT_FUSED_ADD, "add", FusedArity::Binary},
    {TIDALRT_FUSED_SUB, "sub", FusedArity::Binary},
    {TIDALRT_FUSED_MUL, "mul", FusedArity::Binary},
    {TIDALRT_FUSED_DIV, "div", FusedArity::Binary},
    {TIDALRT_FUSED_NEG, "neg", FusedArity::Unary},
    {TIDALRT_FUSED_RELU, "relu", FusedArity::Unary},
    {TIDALRT_FUSED_SIGMOID, "sigmoid", FusedArity::Unary},
    {TIDALRT_FUSED_TANH, "tanh", FusedArity::Unary},
    {TIDALRT_FUSED_SQRT, "sqrt", FusedArity::Unary},
    {TIDALRT_FUSED_ERF, "erf", FusedArity::Unary},
    {TIDALRT_FUSED_EXP, "exp", FusedArity::Unary},
    {TIDALRT_FUSED_LOG, "log", FusedArity::Unary},
    {TIDALRT_FUSED_LEAKY_RELU, "leaky_relu", FusedArity::Unary},
    {TIDALRT_FUSED_GELU, "gelu", FusedArity::Unary},
    {TIDALRT_FUSED_RELU_BACKWARD, "relu_backward", FusedArity::Grad},
    {TIDALRT_FUSED_LEAKY_RELU_BACKWARD, "leaky_relu_backward",
     FusedArity::Grad},
    {TIDALRT_FUSED_SIGMOID_BACKWARD, "sigmoid_backward", FusedArity::Grad},
    {TIDALRT_FUSED_TANH_BACKWARD, "tanh_backward", FusedArity::Grad},
    {TIDALRT_FUSED_ERF_BACKWARD, "erf_backward", FusedArity::Grad},
    {TIDALRT_FUSED_GELU_BACKWARD, "gelu_backward", FusedArity::Grad},
};

static const OpcodeInfo *lookup(int64_t opcode) {
  for (const OpcodeInfo &info : kOpcodes)
    if (info.opcode == opcode)
      return &info;
  return nullptr;
}

std::optional<FusedArity> tidal::fusedArity(int64_t opcode) {
  if (const OpcodeInfo *info = lookup(opcode))
    return info->arity;
  return std::nullopt;
}

StringRef tidal::fusedOpName(int64_t opcode) {
  const OpcodeInfo *info = lookup(opcode);
  return info ? info->name : "";
}

std::optional<int64_t> tidal::fusedOpcodeOf(Operation *op) {
  if (!op->getDialect() || !isa<TidalDialect>(op->getDialect()))
    return std::nullopt;
  StringRef name = op->getName().stripDialect();
  for (const OpcodeInfo &info : kOpcodes)
    if (name == info.name)
      return info.opcode;
  return std::nullopt;
}

int64_t tidal::fusedParamOf(Operation *op) {
  float alpha = 0.0f;
  if (auto leaky = dyn_cast<LeakyReluOp>(op))
    alpha = leaky.getAlpha().convertToFloat();
  else if (auto back = dyn_cast<LeakyReluBackwardOp>(op))
    alpha = back.getAlpha().convertToFloat();
  uint32_t bits;
  std::memcpy(&bits, &alpha, sizeof bits);
  return bits;
}

std::optional<SmallVector<FusedStep>>
tidal::decodeFusedProgram(ArrayRef<int64_t> program) {
  if (program.size() % TIDALRT_FUSED_WORDS != 0)
    return std::nullopt;
  SmallVector<FusedStep> steps;
  for (size_t i = 0; i < program.size(); i += TIDALRT_FUSED_WORDS) {
    FusedStep step;
    step.opcode = program[i];
    step.a = program[i + 1];
    step.b = program[i + 2];
    uint32_t bits = (uint32_t)program[i + 3];
    std::memcpy(&step.param, &bits, sizeof bits);
    steps.push_back(step);
  }
  return steps;
}

LogicalResult FusedElementwiseOp::verify() {
  std::optional<SmallVector<FusedStep>> steps =
      decodeFusedProgram(getProgram());
  if (!steps)
    return emitOpError("program of ")
           << getProgram().size() << " words is not a whole number of "
           << TIDALRT_FUSED_WORDS << "-word steps";
  if (steps->empty())
    return emitOpError("program has no step");
  if (steps->size() > TIDALRT_FUSED_MAX_STEPS)
    return emitOpError("program has ")
           << steps->size() << " steps; at most " << TIDALRT_FUSED_MAX_STEPS;
  if (getInputs().size() > TIDALRT_FUSED_MAX_INPUTS)
    return emitOpError("has ") << getInputs().size() << " inputs; at most "
                               << TIDALRT_FUSED_MAX_INPUTS;
  if (getResults().empty() || getResults().size() > TIDALRT_FUSED_MAX_OUTPUTS)
    return emitOpError("has ")
           << getResults().size() << " results; it needs 1 to "
           << TIDALRT_FUSED_MAX_OUTPUTS;
  if (getOutputs().size() != getResults().size())
    return emitOpError("names ")
           << getOutputs().size() << " output registers for "
           << getResults().size() << " results";
  auto type = cast<RankedTensorType>(getResult(0).getType());
  if (!type.getElementType().isF32())
    return emitOpError("computes float32 only, not ") << type;
  for (Value result : getResults())
    if (result.getType() != type)
      return emitOpError("results differ in type: ")
             << type << " and " << result.getType();

  // Register r is full (the results' shape) or a broadcast scalar.
  const int64_t numInputs = getInputs().size();
  SmallVector<bool> full;
  for (Value input : getInputs()) {
    auto t = cast<RankedTensorType>(input.getType());
    if (t.getElementType() != type.getElementType())
      return emitOpError("input of type ") << t << " with results of " << type;
    if (t == type)
      full.push_back(true);
    else if (t.getNumElements() == 1)
      full.push_back(false);
    else
      return emitOpError("input of type ")
             << t << " is neither the results' shape nor one element";
  }
  for (auto [k, step] : llvm::enumerate(*steps)) {
    std::optional<FusedArity> arity = fusedArity(step.opcode);
    const int64_t defined = numInputs + (int64_t)k;
    auto operandError = [&](int64_t r) {
      return emitOpError("step ")
             << k << " (" << fusedOpName(step.opcode) << ") reads register "
             << r << "; registers 0.." << defined - 1 << " are defined";
    };
    if (!arity)
      return emitOpError("step ") << k << " has unknown opcode " << step.opcode;
    if (step.a < 0 || step.a >= defined)
      return operandError(step.a);
    if (*arity == FusedArity::Unary) {
      if (step.b != -1)
        return emitOpError("step ") << k << " (" << fusedOpName(step.opcode)
                                    << ") takes one operand; its b must be -1";
      if (!full[step.a])
        return emitOpError("step ") << k << " (" << fusedOpName(step.opcode)
                                    << ") reads a broadcast scalar";
    } else {
      if (step.b < 0 || step.b >= defined)
        return operandError(step.b);
      bool needsBoth = *arity == FusedArity::Grad;
      if (needsBoth ? !(full[step.a] && full[step.b])
                    : !(full[step.a] || full[step.b]))
        return emitOpError("step ")
               << k << " (" << fusedOpName(step.opcode) << ") reads "
               << (needsBoth ? "a broadcast scalar" : "two broadcast scalars");
    }
    full.push_back(true);
  }
  for (int64_t r : getOutputs())
    if (r < numInputs || r >= numInputs + (int64_t)steps->size())
      return emitOpError("output register ")
             << r << " is not a step's (" << numInputs << ".."
             << numInputs + (int64_t)steps->size() - 1 << ")";
  return success();
}

SmallVector<unsigned, 2>
FusedElementwiseOp::getInPlaceOperands(unsigned result) {
  // The kernel reads a tile of every input before it writes any result's
  // tile, so any input of the result's type will do.
  SmallVector<unsigned, 2> operands;
  Type type = getResult(result).getType();
  for (auto [i, input] : llvm::enumerate(getInputs()))
    if (input.getType() == type)
      operands.push_back(i);
  return operands;
}
