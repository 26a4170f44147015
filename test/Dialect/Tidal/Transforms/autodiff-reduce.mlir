// The backward graphs --tidal-autodiff builds for the reductions
// (ReduceRules.cpp): max splits the gradient among the ties, prod is the
// product of the others with zeros handled exactly, mean scales the
// broadcast gradient; argmax's int64 result takes no part.
// RUN: tidal-opt %s -split-input-file -tidal-autodiff | FileCheck %s

// CHECK-LABEL: func.func @train_step
// CHECK: %[[Y:.*]] = tidal.reduce_max %arg0 {axes = array<i64: 1>, keepdims = false}
// CHECK: %[[G:.*]] = tidal.reshape %{{.*}} {shape = array<i64: 2, 1>} : (tensor<2xf32>) -> tensor<2x1xf32>
// CHECK: %[[YK:.*]] = tidal.reshape %[[Y]] {shape = array<i64: 2, 1>}
// CHECK: %[[TIE:.*]] = tidal.equal %arg0, %[[YK]] : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xi1>
// CHECK: %[[MASK:.*]] = tidal.cast %[[TIE]] : (tensor<2x3xi1>) -> tensor<2x3xf32>
// CHECK: %[[COUNT:.*]] = tidal.reduce_sum %[[MASK]] {axes = array<i64: 1>}
// CHECK: %[[SHARE:.*]] = tidal.div %[[G]], %[[COUNT]] : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
// CHECK: %[[DX:.*]] = tidal.mul %[[MASK]], %[[SHARE]] : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DX]]
func.func @main(%x: tensor<2x3xf32> {tidal.name = "x", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %m = tidal.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  %l = tidal.reduce_sum %m {axes = array<i64: 0>, keepdims = false} : (tensor<2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// reduce_min: the same rule against the minimum.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[Y:.*]] = tidal.reduce_min %arg0 {axes = array<i64: 0, 1>}
// CHECK: %[[TIE:.*]] = tidal.equal %arg0, %[[Y]] : (tensor<2x3xf32>, tensor<1x1xf32>) -> tensor<2x3xi1>
// CHECK: %[[MASK:.*]] = tidal.cast %[[TIE]]
// CHECK: %[[COUNT:.*]] = tidal.reduce_sum %[[MASK]] {axes = array<i64: 0, 1>}
// CHECK: %[[SHARE:.*]] = tidal.div %{{.*}}, %[[COUNT]]
// CHECK: %[[DX:.*]] = tidal.mul %[[MASK]], %[[SHARE]]
// CHECK: return %{{.*}}, %[[DX]]
func.func @main(%x: tensor<2x3xf32> {tidal.name = "x", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %m = tidal.reduce_min %x {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  %l = tidal.reduce_sum %m {axes = array<i64: 0, 1>, keepdims = false} : (tensor<1x1xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// reduce_prod: p = the product of the nonzero elements; p / x where no
// zero is among the others, p at a lone zero, else 0.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[G:.*]] = tidal.broadcast_to %{{.*}} : (tensor<1x1xf32>) -> tensor<2x1xf32>
// CHECK: %[[ZERO:.*]] = tidal.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[ISZ:.*]] = tidal.equal %arg0, %[[ZERO]]
// CHECK: %[[ZF:.*]] = tidal.cast %[[ISZ]] : (tensor<2x3xi1>) -> tensor<2x3xf32>
// CHECK: %[[ONE:.*]] = tidal.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[NZ:.*]] = tidal.where %[[ISZ]], %[[ONE]], %arg0
// CHECK: %[[P:.*]] = tidal.reduce_prod %[[NZ]] {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK: %[[Q:.*]] = tidal.div %[[P]], %[[NZ]]
// CHECK: %[[OTHERS:.*]] = tidal.where %[[ISZ]], %[[P]], %[[Q]]
// CHECK: %[[ZEROS:.*]] = tidal.reduce_sum %[[ZF]] {axes = array<i64: 1>}
// CHECK: %[[ALONE:.*]] = tidal.equal %[[ZEROS]], %[[ZF]] : (tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK: %[[Z2:.*]] = tidal.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[GO:.*]] = tidal.mul %[[OTHERS]], %[[G]]
// CHECK: %[[DX:.*]] = tidal.where %[[ALONE]], %[[GO]], %[[Z2]]
// CHECK: return %{{.*}}, %[[DX]]
func.func @main(%x: tensor<2x3xf32> {tidal.name = "x", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %p = tidal.reduce_prod %x {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %l = tidal.reduce_sum %p {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x1xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// reduce_mean: the gradient broadcast back and scaled by 1/6; argmax's
// index, cast and added to the loss, passes no gradient on.
// CHECK-LABEL: func.func @train_step
// CHECK: tidal.argmax %arg0
// CHECK: %[[B:.*]] = tidal.broadcast_to %{{.*}} : (tensor<1x1xf32>) -> tensor<2x3xf32>
// CHECK: %[[S:.*]] = tidal.constant dense<0.166666672> : tensor<f32>
// CHECK: %[[DX:.*]] = tidal.mul %[[B]], %[[S]]
// CHECK: return %{{.*}}, %[[DX]]
func.func @main(%x: tensor<2x3xf32> {tidal.name = "x", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %i = tidal.argmax %x {axis = 1 : i64, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xi64>
  %f = tidal.cast %i : (tensor<2xi64>) -> tensor<2xf32>
  %s = tidal.reduce_sum %f {axes = array<i64: 0>, keepdims = false} : (tensor<2xf32>) -> tensor<f32>
  %l = tidal.reduce_mean %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  %t = tidal.add %l, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %t : tensor<f32>
}
