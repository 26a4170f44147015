// tidal.fused_elementwise evaluates each step as the op it replaces, rounded
// to float32 step by step: the fused chain prints what the unfused ops
// print. x = [-1, 0.5, 2], k = 3 (a broadcast scalar), g = [1, 1, 1]:
// a = x * 3 = [-3, 1.5, 6]; s = sigmoid(a); l = leaky_relu(a, 0.1) =
// [-0.3, 1.5, 6]; d = sigmoid_backward(g, s).
// RUN: tidal-eval %s --function chain --print | FileCheck %s
// CHECK: result 0: tensor<3xf32> = [[S:.*]]
// CHECK: result 1: tensor<3xf32> = [-0.3, 1.5, 6]
// CHECK: result 2: tensor<3xf32> = [[D:.*]]
// CHECK: result 3: tensor<3xf32> = [[S]]
// CHECK: result 4: tensor<3xf32> = [-0.3, 1.5, 6]
// CHECK: result 5: tensor<3xf32> = [[D]]
func.func @chain() -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>,
                       tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %x = tidal.constant dense<[-1.0, 0.5, 2.0]> : tensor<3xf32>
  %k = tidal.constant dense<3.0> : tensor<1xf32>
  %g = tidal.constant dense<1.0> : tensor<3xf32>
  %a = tidal.mul %x, %k : (tensor<3xf32>, tensor<1xf32>) -> tensor<3xf32>
  %s = tidal.sigmoid %a : tensor<3xf32>
  %l = tidal.leaky_relu %a {alpha = 0.1 : f32} : tensor<3xf32>
  %d = tidal.sigmoid_backward %g, %s : tensor<3xf32>
  // Registers: 0 x, 1 k, 2 g; mul -> 3, sigmoid -> 4, leaky_relu -> 5
  // (alpha 0.1 = 0x3DCCCCCD), sigmoid_backward -> 6.
  %f:3 = tidal.fused_elementwise %x, %k, %g {outputs = array<i64: 4, 5, 6>, program = array<i64: 3, 0, 1, 0, 12, 3, -1, 0, 18, 3, -1, 1036831949, 32, 2, 4, 0>} : (tensor<3xf32>, tensor<1xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %s, %l, %d, %f#0, %f#1, %f#2 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
