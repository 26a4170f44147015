// tidal.fused_elementwise round-trips; its verifier checks the program's
// shape, opcodes and registers, and the inputs' and results' types.
// RUN: tidal-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// mul(x, k) with k a broadcast scalar, then leaky_relu (alpha 0.01 as
// float32 bits) and both values as results.
// CHECK-LABEL: func.func @chain
// CHECK: %[[F:.*]]:2 = tidal.fused_elementwise %arg0, %arg1 {outputs = array<i64: 2, 3>, program = array<i64: 3, 0, 1, 0, 18, 2, -1, 1008981770>} : (tensor<4x8xf32>, tensor<1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
func.func @chain(%x: tensor<4x8xf32>, %k: tensor<1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %f:2 = tidal.fused_elementwise %x, %k {outputs = array<i64: 2, 3>, program = array<i64: 3, 0, 1, 0, 18, 2, -1, 1008981770>} : (tensor<4x8xf32>, tensor<1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %f#0, %f#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

func.func @partial_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tidal.fused_elementwise' op program of 3 words is not a whole number of 4-word steps}}
  %f = tidal.fused_elementwise %x {outputs = array<i64: 1>, program = array<i64: 11, 0, -1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

func.func @unknown_opcode(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tidal.fused_elementwise' op step 0 has unknown opcode 99}}
  %f = tidal.fused_elementwise %x {outputs = array<i64: 1>, program = array<i64: 99, 0, -1, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

func.func @later_register(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tidal.fused_elementwise' op step 0 (relu) reads register 1; registers 0..0 are defined}}
  %f = tidal.fused_elementwise %x {outputs = array<i64: 1>, program = array<i64: 11, 1, -1, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

func.func @unary_with_b(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tidal.fused_elementwise' op step 0 (relu) takes one operand; its b must be -1}}
  %f = tidal.fused_elementwise %x {outputs = array<i64: 1>, program = array<i64: 11, 0, 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

func.func @scalar_grad(%g: tensor<4xf32>, %k: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tidal.fused_elementwise' op step 0 (relu_backward) reads a broadcast scalar}}
  %f = tidal.fused_elementwise %g, %k {outputs = array<i64: 2>, program = array<i64: 30, 0, 1, 0>} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

func.func @output_is_input(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tidal.fused_elementwise' op output register 0 is not a step's (1..1)}}
  %f = tidal.fused_elementwise %x {outputs = array<i64: 0>, program = array<i64: 11, 0, -1, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

func.func @row_input(%x: tensor<4x8xf32>, %row: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tidal.fused_elementwise' op input of type 'tensor<8xf32>' is neither the results' shape nor one element}}
  %f = tidal.fused_elementwise %x, %row {outputs = array<i64: 2>, program = array<i64: 1, 0, 1, 0>} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %f : tensor<4x8xf32>
}

// -----

func.func @float64(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{'tidal.fused_elementwise' op computes float32 only, not 'tensor<4xf64>'}}
  %f = tidal.fused_elementwise %x {outputs = array<i64: 1>, program = array<i64: 11, 0, -1, 0>} : (tensor<4xf64>) -> tensor<4xf64>
  return %f : tensor<4xf64>
}

// -----

func.func @outputs_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tidal.fused_elementwise' op names 2 output registers for 1 results}}
  %f = tidal.fused_elementwise %x {outputs = array<i64: 1, 1>, program = array<i64: 11, 0, -1, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %f : tensor<4xf32>
}
