// cast_checks.h - the operand checks of tidal.cast, defined in cast.cpp and
// run by the CPU and the CUDA kernels alike. Host code without OpenMP.
#ifndef TIDALRT_CPU_CAST_CHECKS_H
#define TIDALRT_CPU_CAST_CHECKS_H

#include "kernel.h"

namespace tidalrt {
namespace ew {

// cast: input and output of one element count and each of float32,
// float64, an integer type or bool. Returns the count.
int64_t checkCast(const OpCall &op);

} // namespace ew
} // namespace tidalrt

#endif // TIDALRT_CPU_CAST_CHECKS_H
