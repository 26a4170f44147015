// Element-wise, linear-algebra and reduction forward ops, hand-derived.
// RUN: tidal-eval %s --print | FileCheck %s

// CHECK: result 0: tensor<2x2xf32> = [11, 22, 13, 24]
// CHECK: result 1: tensor<2x2xf32> = [0, 0.5, 1, 2]
// CHECK: result 2: tensor<2x2xf32> = [-0.01, 0, 1, 2]
// CHECK: result 3: tensor<2x2xf32> = [1, 4, 9, 16]
// CHECK: result 4: tensor<2xi64> = [3, -3]
// CHECK: result 5: tensor<2x2xf32> = [7, 10, 15, 22]
// CHECK: result 6: tensor<2xf32> = [5, 11]
// CHECK: result 7: tensor<2x2xf32> = [8, 16, 11, 23]
// CHECK: result 8: tensor<1x2xf32> = [2, 3]
// CHECK: result 9: tensor<f32> = [10]
// CHECK: result 10: tensor<2x2xf32> = [0.5, 0.731059, 0.880797, 0.952574]
func.func @main() -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xi64>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<1x2xf32>, tensor<f32>, tensor<2x2xf32>) {
  %a = tidal.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %row = tidal.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %0 = tidal.add %a, %row : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %x = tidal.constant dense<[[-1.0, 0.5], [1.0, 2.0]]> : tensor<2x2xf32>
  %1 = tidal.relu %x : tensor<2x2xf32>
  %m = tidal.constant dense<[[-1.0, 0.0], [1.0, 2.0]]> : tensor<2x2xf32>
  %2 = tidal.leaky_relu %m {alpha = 0.01 : f32} : tensor<2x2xf32>
  %two = tidal.constant dense<2.0> : tensor<f32>
  %3 = tidal.pow %a, %two : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  // Integer division truncates towards zero.
  %i = tidal.constant dense<[7, -7]> : tensor<2xi64>
  %d = tidal.constant dense<2> : tensor<i64>
  %4 = tidal.div %i, %d : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %5 = tidal.matmul %a, %a : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %v = tidal.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %6 = tidal.matmul %a, %v : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2xf32>
  // a^T a^T = (a a)^T, plus C = 1 broadcast.
  %one = tidal.constant dense<1.0> : tensor<f32>
  %7 = tidal.gemm %a, %a, %one {trans_a = true, trans_b = true} : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %8 = tidal.reduce_mean %a {axes = array<i64: 0>} : (tensor<2x2xf32>) -> tensor<1x2xf32>
  %9 = tidal.reduce_sum %a {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x2xf32>) -> tensor<f32>
  %z = tidal.constant dense<[[0.0, 1.0], [2.0, 3.0]]> : tensor<2x2xf32>
  %10 = tidal.sigmoid %z : tensor<2x2xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xi64>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<1x2xf32>, tensor<f32>, tensor<2x2xf32>
}
