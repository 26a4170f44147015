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


// -----

// A tensor past 256 TiB (2^40 x 2^10 floats: 2^52 bytes) cannot exist.
// expected-error @+1 {{tidal-plan-memory: 'tensor<1099511627776x1024xf32>' is too large: its byte count passes 64 bits or the 281474976710656 (256 TiB) a 64-bit machine can address}}
func.func @huge_argument(%x: tensor<1099511627776x1024xf32>) -> tensor<1099511627776x1024xf32> {
  return %x : tensor<1099511627776x1024xf32>
}

// -----

// Tensors of 2^47 bytes: each is addressable; three live at once need an
// arena past 2^48 bytes.
// expected-error @+1 {{tidal-plan-memory: @arena_too_large needs an arena of}}
func.func @arena_too_large(%a: tensor<35184372088832xf32>, %b: tensor<35184372088832xf32>) -> (tensor<35184372088832xf32>, tensor<35184372088832xf32>, tensor<35184372088832xf32>) {
  %s = tidal.add %a, %b : (tensor<35184372088832xf32>, tensor<35184372088832xf32>) -> tensor<35184372088832xf32>
  return %a, %b, %s : tensor<35184372088832xf32>, tensor<35184372088832xf32>, tensor<35184372088832xf32>
}
