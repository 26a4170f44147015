// The backward graph --tidal-autodiff builds for gather_backward, the
// scatter-add ScatterElements and ScatterND import through
// (IndexingRules.cpp): the scattered values get the result's gradient
// gathered back at the same indices; the indices get none. A gather with
// padding_index (nn.Embedding's padding_idx) scatters a gradient that is
// zero where the index is that row.
// RUN: tidal-opt %s -split-input-file -tidal-autodiff | FileCheck %s

// CHECK-LABEL: func.func @train_step
// CHECK: %[[S:.*]] = tidal.gather_backward %arg0, %arg1 {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<5x3xf32>
// CHECK: %[[DU:.*]] = tidal.gather %[[G:.*]], %arg1 {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DU]]
func.func @main(%u: tensor<2x3xf32> {tidal.name = "u", tidal.role = #tidal<role param>},
                %i: tensor<2xi64> {tidal.name = "i", tidal.role = #tidal<role input>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %s = tidal.gather_backward %u, %i {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<5x3xf32>
  %l = tidal.reduce_sum %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<5x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @train_step
// CHECK: %[[IDX:.*]] = tidal.reshape %arg1 {shape = array<i64: 2, 3, 1>} : (tensor<2x3xi64>) -> tensor<2x3x1xi64>
// CHECK: %[[ROW:.*]] = tidal.constant dense<0> : tensor<i64>
// CHECK: %[[HIT:.*]] = tidal.equal %[[IDX]], %[[ROW]] : (tensor<2x3x1xi64>, tensor<i64>) -> tensor<2x3x1xi1>
// CHECK: %[[ZERO:.*]] = tidal.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[G:.*]] = tidal.where %[[HIT]], %[[ZERO]], %{{.*}} : (tensor<2x3x1xi1>, tensor<f32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: tidal.gather_backward %[[G]], %arg1 {axis = 0 : i64} : (tensor<2x3x4xf32>, tensor<2x3xi64>) -> tensor<5x4xf32>
func.func @main(%w: tensor<5x4xf32> {tidal.name = "emb.weight", tidal.role = #tidal<role param>},
                %i: tensor<2x3xi64> {tidal.name = "ids", tidal.role = #tidal<role input>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %e = tidal.gather %w, %i {axis = 0 : i64, padding_index = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %l = tidal.reduce_sum %e {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
