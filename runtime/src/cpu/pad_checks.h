// pad_checks.h - the operand checks of pad and pad_backward (pad_math.h),
// defined in pad.cpp and run by the CPU and the CUDA kernels alike. Host
// code without OpenMP (nvcc includes it).
#ifndef TIDALRT_CPU_PAD_CHECKS_H
#define TIDALRT_CPU_PAD_CHECKS_H

#include "kernel.h"
#include "pad_math.h"

#include <cstddef>

namespace tidalrt {
namespace ew {

// pad: input and output of one type (1, 2, 4 or 8 bytes; the fill value
// needs float32, float64, int64, int32 or bool for mode constant), the
// output the input padded by `pads` (mode (0), pads (1), value (2)).
// Returns the map and sets the element size.
pad::PadMap checkPad(const OpCall &op, size_t &elementSize);

// pad_backward: grad and grad_input of one float type, grad the
// grad_input's shape padded (mode (0), pads (1)).
pad::PadMap checkPadBackward(const OpCall &op);

} // namespace ew
} // namespace tidalrt

#endif // TIDALRT_CPU_PAD_CHECKS_H
