//===- FusedProgram.h - the steps of tidal.fused_elementwise ----*- C++ -*-===//
//
// The compiler's view of a fused element-wise program (the encoding is the
// runtime's, tidalrt/fused_program.h): which tidal ops a step may replace,
// how many operands each takes, and the steps of an op's `program`.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_IR_FUSEDPROGRAM_H
#define TIDAL_DIALECT_TIDAL_IR_FUSEDPROGRAM_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::tidal {

/// Words per step in a program (TIDALRT_FUSED_WORDS).
constexpr int64_t kFusedStepWords = 4;

/// How a step reads its operands.
enum class FusedArity {
  Binary, ///< a op b; one of them may be a broadcast scalar
  Unary,  ///< f(a)
  Grad,   ///< an activation backward: a = grad, b = saved
};

/// One decoded step of a program.
struct FusedStep {
  int64_t opcode = 0;
  int64_t a = -1, b = -1;
  float param = 0.0f;
};

/// The arity of `opcode`, or none when it is not an opcode.
std::optional<FusedArity> fusedArity(int64_t opcode);

/// The tidal op name (without the dialect) that `opcode` computes.
llvm::StringRef fusedOpName(int64_t opcode);

/// The opcode of the step that computes `op` (the op's name and, for
/// leaky_relu and its backward op, its alpha), if it has one.
std::optional<int64_t> fusedOpcodeOf(Operation *op);

/// The parameter word of `op`'s step (leaky_relu's alpha as float32 bits).
int64_t fusedParamOf(Operation *op);

/// The steps of `program`; none when its length is not a multiple of the
/// step size.
std::optional<llvm::SmallVector<FusedStep>>
decodeFusedProgram(llvm::ArrayRef<int64_t> program);

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_IR_FUSEDPROGRAM_H
