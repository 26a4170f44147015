// activation_checks.h - the operands and parameters of the activation
// family's kernels (activation_math.h), shared by the CPU kernels
// (activation.cpp) and the CUDA kernels (cuda/elementwise/activation.h), so
// that both read the same attributes and reject the same calls the same way.
// Host code only.
#ifndef TIDALRT_CPU_ACTIVATION_CHECKS_H
#define TIDALRT_CPU_ACTIVATION_CHECKS_H

#include "activation_math.h"
#include "elementwise_checks.h"

#include <cmath>

namespace tidalrt {
namespace ew {

// The parameters of a `kind` call from its float attributes (alphabetical:
// clip max, min; hard_sigmoid alpha, beta; elu, celu alpha; selu alpha,
// gamma). Celu's alpha divides x, so it must not be 0.
inline act::Params<double> activationParams(act::Kind kind, const OpCall &op) {
  act::Params<double> p;
  switch (act::paramCount(kind)) {
  case 2:
    p.a = op.getFloat(0);
    p.b = op.getFloat(1);
    break;
  case 1:
    p.a = op.getFloat(0);
    break;
  default:
    break;
  }
  if (kind == act::Kind::Clip) { // (max, min) -> a = min, b = max
    const double max = p.a;
    p.a = p.b;
    p.b = max;
  }
  if (kind == act::Kind::Celu && p.a == 0.0)
    fail(TIDALRT_INVALID_ARGUMENT, "alpha is 0");
  return p;
}

} // namespace ew
} // namespace tidalrt

#endif // TIDALRT_CPU_ACTIVATION_CHECKS_H
