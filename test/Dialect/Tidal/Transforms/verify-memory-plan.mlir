// --tidal-verify-memory-plan accepts the sharing that is safe: views, a
// result written over an operand that dies at the op, a parameter's update
// over the parameter, and tensors whose lifetimes do not meet.
// RUN: tidal-opt %s -tidal-verify-memory-plan | FileCheck %s

// CHECK-LABEL: func.func @fine
func.func @fine(%x: tensor<16xf32> {tidal.offset = 64 : i64},
                %w: tensor<16xf32> {tidal.name = "w", tidal.role = #tidal<role param>, tidal.offset = 0 : i64})
    -> (tensor<f32>, tensor<16xf32> {tidal.name = "w", tidal.role = #tidal<role param>})
    attributes {tidal.arena_size = 256 : i64, tidal.result_offsets = array<i64: 192, 0>} {
  %0 = tidal.exp %x {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  %1 = tidal.reshape %0 {shape = array<i64: 4, 4>, tidal.offsets = array<i64: 64>} : (tensor<16xf32>) -> tensor<4x4xf32>
  %2 = tidal.relu %1 {tidal.offsets = array<i64: 64>} : tensor<4x4xf32>
  %3 = tidal.reduce_sum %2 {axes = array<i64: 0>, keepdims = false, tidal.offsets = array<i64: 128>} : (tensor<4x4xf32>) -> tensor<4xf32>
  %4 = tidal.reduce_sum %3 {axes = array<i64: 0>, keepdims = false, tidal.offsets = array<i64: 192>} : (tensor<4xf32>) -> tensor<f32>
  %5 = tidal.mul %w, %w {tidal.offsets = array<i64: 128>} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %6 = tidal.sgd_update %w, %5 {lr = 1.0e-01 : f64, tidal.offsets = array<i64: 0>} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %4, %6 : tensor<f32>, tensor<16xf32>
}
