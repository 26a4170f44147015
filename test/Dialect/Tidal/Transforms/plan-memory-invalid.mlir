// RUN: tidal-opt %s -split-input-file -verify-diagnostics -tidal-plan-memory
// RUN: not tidal-opt %s -tidal-plan-memory=strategy=bogus 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not tidal-opt %s -tidal-plan-memory=alignment=48 2>&1 | FileCheck %s --check-prefix=ALIGN
// STRATEGY: error: tidal-plan-memory: unknown strategy 'bogus' (expected packed or slots)
// ALIGN: error: tidal-plan-memory: alignment 48 is not a power of two

func.func @unexpanded(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{tidal.gradient must be expanded by tidal-autodiff before memory planning}}
  %g = tidal.gradient %x, %x : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %g : tensor<f32>
}

