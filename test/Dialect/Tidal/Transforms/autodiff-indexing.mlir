// The backward graph --tidal-autodiff builds for gather_backward, the
// scatter-add ScatterElements and ScatterND import through
// (IndexingRules.cpp): the scattered values get the result's gradient
// gathered back at the same indices; the indices get none.
// RUN: tidal-opt %s -tidal-autodiff | FileCheck %s

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
