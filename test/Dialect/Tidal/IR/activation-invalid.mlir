// Errors of the activation family's verifiers (ActivationOps.cpp) and type
// constraints.
// RUN: tidal-opt %s -split-input-file -verify-diagnostics

func.func @clip_bounds_crossed(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tidal.clip' op min 6.000000e+00 is greater than max 0.000000e+00}}
  %0 = tidal.clip %x {min = 6.0 : f32, max = 0.0 : f32} : tensor<4xf32>
  return
}

// -----

func.func @clip_nan_bound(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tidal.clip' op bounds must not be NaN}}
  %0 = tidal.clip %x {min = 0x7FC00000 : f32, max = 1.0 : f32} : tensor<4xf32>
  return
}

// -----

func.func @clip_needs_bounds(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tidal.clip' op requires attribute 'max'}}
  %0 = tidal.clip %x {min = 0.0 : f32} : tensor<4xf32>
  return
}

// -----

func.func @celu_alpha_zero(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tidal.celu' op alpha must not be 0}}
  %0 = tidal.celu %x {alpha = 0.0 : f32} : tensor<4xf32>
  return
}

// -----

func.func @softplus_on_integers(%x: tensor<4xi64>) {
  // expected-error @+1 {{'tidal.softplus' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi64>'}}
  %0 = tidal.softplus %x : tensor<4xi64>
  return
}
