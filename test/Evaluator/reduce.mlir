// reduce_max, reduce_min, reduce_prod, argmax and argmin against
// hand-derived values (LinalgOps.cpp): NaN propagation, empty reductions,
// ties, select_last_index, integers.
// RUN: tidal-eval %s --function reduce --print | FileCheck %s
// RUN: tidal-eval %s --function arg --print | FileCheck %s --check-prefix=ARG

// Rows [3, 1, 3], [-2, nan, 5]; columns of [[1, 2], [0, -4], [3, 0.5]].
// CHECK: result 0: tensor<2xf32> = [3, nan]
// CHECK: result 1: tensor<2x1xf32> = [1, nan]
// CHECK: result 2: tensor<1x2xf32> = [0, -4]
// CHECK: result 3: tensor<f32> = [-0]
// CHECK: result 4: tensor<3xi64> = [-8, 12, 1]
// An empty reduction: -inf, inf and 1.
// CHECK: result 5: tensor<2xf32> = [-inf, -inf]
// CHECK: result 6: tensor<2xf32> = [inf, inf]
// CHECK: result 7: tensor<2xf32> = [1, 1]
func.func @reduce() -> (tensor<2xf32>, tensor<2x1xf32>, tensor<1x2xf32>, tensor<f32>, tensor<3xi64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %a = tidal.constant dense<[[3.0, 1.0, 3.0], [-2.0, 0x7FC00000, 5.0]]> : tensor<2x3xf32>
  %0 = tidal.reduce_max %a {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  %1 = tidal.reduce_min %a {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %b = tidal.constant dense<[[1.0, 2.0], [0.0, -4.0], [3.0, 0.5]]> : tensor<3x2xf32>
  %2 = tidal.reduce_prod %b {axes = array<i64: 0>} : (tensor<3x2xf32>) -> tensor<1x2xf32>
  %3 = tidal.reduce_prod %b {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x2xf32>) -> tensor<f32>
  %i = tidal.constant dense<[[2, -4], [3, 4], [1, 1]]> : tensor<3x2xi64>
  %4 = tidal.reduce_prod %i {axes = array<i64: 1>, keepdims = false} : (tensor<3x2xi64>) -> tensor<3xi64>
  %e = tidal.constant dense<> : tensor<2x0xf32>
  %5 = tidal.reduce_max %e {axes = array<i64: 1>, keepdims = false} : (tensor<2x0xf32>) -> tensor<2xf32>
  %6 = tidal.reduce_min %e {axes = array<i64: 1>, keepdims = false} : (tensor<2x0xf32>) -> tensor<2xf32>
  %7 = tidal.reduce_prod %e {axes = array<i64: 1>, keepdims = false} : (tensor<2x0xf32>) -> tensor<2xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2xf32>, tensor<2x1xf32>, tensor<1x2xf32>, tensor<f32>, tensor<3xi64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// Ties take the first index, or the last with select_last_index; NaN wins.
// ARG: result 0: tensor<2xi64> = [0, 1]
// ARG: result 1: tensor<2x1xi64> = [2, 1]
// ARG: result 2: tensor<2xi64> = [1, 1]
// ARG: result 3: tensor<1x3xi64> = [1, 1, 0]
// ARG: result 4: tensor<3xi64> = [0, 0, 0]
func.func @arg() -> (tensor<2xi64>, tensor<2x1xi64>, tensor<2xi64>, tensor<1x3xi64>, tensor<3xi64>) {
  %a = tidal.constant dense<[[3.0, 1.0, 3.0], [-2.0, 0x7FC00000, 5.0]]> : tensor<2x3xf32>
  %0 = tidal.argmax %a {axis = 1 : i64, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xi64>
  %1 = tidal.argmax %a {axis = 1 : i64, select_last_index = true} : (tensor<2x3xf32>) -> tensor<2x1xi64>
  %2 = tidal.argmin %a {axis = 1 : i64, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xi64>
  %i = tidal.constant dense<[[4, 7, 1], [2, 7, 5]]> : tensor<2x3xi32>
  %3 = tidal.argmin %i {axis = 0 : i64, select_last_index = true} : (tensor<2x3xi32>) -> tensor<1x3xi64>
  %o = tidal.constant dense<[[1.0], [2.0], [3.0]]> : tensor<3x1xf32>
  %4 = tidal.argmax %o {axis = 1 : i64, keepdims = false} : (tensor<3x1xf32>) -> tensor<3xi64>
  return %0, %1, %2, %3, %4 : tensor<2xi64>, tensor<2x1xi64>, tensor<2xi64>, tensor<1x3xi64>, tensor<3xi64>
}
