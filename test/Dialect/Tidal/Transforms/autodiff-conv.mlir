// The backward graph --tidal-autodiff builds for conv_backward_data, the
// form ConvTranspose imports as (ConvRules.cpp): its input gets a forward
// convolution of the gradient with the same weight and window, its weight
// conv_backward_weights with the roles of input and gradient swapped.
// RUN: tidal-opt %s -tidal-autodiff | FileCheck %s

// CHECK-LABEL: func.func @train_step
// CHECK: %[[Y:.*]] = tidal.conv_backward_data %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 2, 2>} : (tensor<2x4x3x3xf32>, tensor<4x3x3x3xf32>) -> tensor<2x6x6x7xf32>
// CHECK: %[[DX:.*]] = tidal.conv %[[G:.*]], %arg1 {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 2, 2>} : (tensor<2x6x6x7xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x3x3xf32>
// CHECK: %[[DW:.*]] = tidal.conv_backward_weights %arg0, %[[G]] {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 2, 2>} : (tensor<2x4x3x3xf32>, tensor<2x6x6x7xf32>) -> tensor<4x3x3x3xf32>
// CHECK: return %{{.*}}, %[[DX]], %[[DW]]
func.func @main(%x: tensor<2x4x3x3xf32> {tidal.name = "x", tidal.role = #tidal<role param>},
                %w: tensor<4x3x3x3xf32> {tidal.name = "w", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %y = tidal.conv_backward_data %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<2x4x3x3xf32>, tensor<4x3x3x3xf32>) -> tensor<2x6x6x7xf32>
  %l = tidal.reduce_sum %y {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x6x6x7xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
