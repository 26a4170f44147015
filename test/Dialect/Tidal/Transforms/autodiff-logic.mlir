// The backward graphs --tidal-autodiff builds for max, min and where
// (LogicRules.cpp): masks from comparisons select the gradient, halved on
// ties, summed back over broadcast dimensions; the mask itself gets none.
// RUN: tidal-opt %s -split-input-file -tidal-autodiff | FileCheck %s

// CHECK-LABEL: func.func @train_step
// CHECK: %[[M:.*]] = tidal.max %arg0, %arg1
// CHECK: %[[ZERO:.*]] = tidal.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[HALF:.*]] = tidal.mul %[[G:.*]], %{{.*}}
// CHECK: %[[TIE:.*]] = tidal.equal %arg0, %arg1
// CHECK: %[[TIED:.*]] = tidal.where %[[TIE]], %[[HALF]], %[[ZERO]]
// CHECK: %[[GT:.*]] = tidal.greater %arg0, %arg1
// CHECK: %[[DA:.*]] = tidal.where %[[GT]], %[[G]], %[[TIED]]
// CHECK: %[[LT:.*]] = tidal.greater %arg1, %arg0
// CHECK: %[[DB0:.*]] = tidal.where %[[LT]], %[[G]], %[[TIED]]
// CHECK: %[[DB:.*]] = tidal.reduce_sum %[[DB0]] {axes = array<i64: 0>, keepdims = false}
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]
func.func @main(%a: tensor<2x3xf32> {tidal.name = "a", tidal.role = #tidal<role param>},
                %b: tensor<3xf32> {tidal.name = "b", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %m = tidal.max %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %l = tidal.reduce_sum %m {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A causal mask: Where's sides get the gradient where they are selected;
// the i1 mask and the integer positions get nothing.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[MASK:.*]] = tidal.less %arg1, %arg2
// CHECK: tidal.where %[[MASK]], %arg3, %arg0
// CHECK: %[[Z:.*]] = tidal.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[DF0:.*]] = tidal.where %[[MASK]], %[[G:.*]], %[[Z]]
// CHECK: %[[DF:.*]] = tidal.reduce_sum %[[DF0]] {axes = array<i64: 0, 1>, keepdims = false}
// CHECK: %[[DX:.*]] = tidal.where %[[MASK]], %[[Z]], %[[G]]
// CHECK: return %{{.*}}, %[[DX]], %[[DF]]
func.func @main(%x: tensor<4x4xf32> {tidal.name = "x", tidal.role = #tidal<role param>},
                %row: tensor<4x1xi64> {tidal.name = "row", tidal.role = #tidal<role input>},
                %col: tensor<4xi64> {tidal.name = "col", tidal.role = #tidal<role input>},
                %fill: tensor<f32> {tidal.name = "fill", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %m = tidal.less %row, %col : (tensor<4x1xi64>, tensor<4xi64>) -> tensor<4x4xi1>
  %y = tidal.where %m, %fill, %x : (tensor<4x4xi1>, tensor<f32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %l = tidal.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
