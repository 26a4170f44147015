// Errors of --tidal-insert-optimizer: bad options, nothing to train.
// RUN: not tidal-opt %s -tidal-insert-optimizer=optimizer=rmsprop 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not tidal-opt %s -tidal-insert-optimizer=nesterov=true 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not tidal-opt %s -tidal-insert-optimizer="optimizer=adam momentum=0.9" 2>&1 | FileCheck %s --check-prefix=ADAM-MOMENTUM
// RUN: not tidal-opt %s -tidal-insert-optimizer="optimizer=adam beta1=1.0" 2>&1 | FileCheck %s --check-prefix=BETA
// RUN: not tidal-opt %s -tidal-insert-optimizer="lr=-0.5" 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not tidal-opt %s -tidal-insert-optimizer=func-name=nope 2>&1 | FileCheck %s --check-prefix=NOFUNC

// UNKNOWN: error: unknown optimizer 'rmsprop' (expected sgd, adam or adamw)
// NESTEROV: error: Nesterov momentum requires a momentum and zero dampening
// ADAM-MOMENTUM: error: momentum, dampening and nesterov apply to sgd only
// BETA: error: Adam betas must lie in [0, 1)
// LR: error: learning rate must be non-negative, got -5.000000e-01
// NOFUNC: error: no function 'nope' to add an optimizer to (run --tidal-autodiff first)
func.func @train_step(%g: tensor<3xf32>, %w: tensor<3xf32> {tidal.name = "w", tidal.role = #tidal<role param>}) -> (tensor<3xf32> {tidal.name = "w", tidal.role = #tidal<role gradient>}) {
  return %g : tensor<3xf32>
}
