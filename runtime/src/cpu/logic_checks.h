// logic_checks.h - the operand checks of the logic family's kernels
// (logic_math.h), defined in logic.cpp and run by the CPU and the CUDA
// kernels alike, so that both reject the same calls the same way. Host code
// without OpenMP (nvcc includes it).
#ifndef TIDALRT_CPU_LOGIC_CHECKS_H
#define TIDALRT_CPU_LOGIC_CHECKS_H

#include "kernel.h"
#include "logic_math.h"

namespace tidalrt {
namespace ew {

// max, min: lhs, rhs and result of one type (float32, float64 or an
// integer type); comparisons: lhs and rhs of one such type (or masks), a mask
// result; and, or, xor: masks. The operands broadcast to the result.
logic::IndexMap checkLogicBinary(const OpCall &op, logic::Op kind);

// not: a mask input and result of one element count. Returns the count.
int64_t checkNot(const OpCall &op);

// where: a mask condition, lhs and rhs of one type (1, 2, 4 or 8 bytes) and
// the result of that type; all three broadcast to the result. Sets the
// element size.
logic::IndexMap checkWhere(const OpCall &op, size_t &elementSize);

} // namespace ew
} // namespace tidalrt

#endif // TIDALRT_CPU_LOGIC_CHECKS_H
