// scatter_extreme, hand-derived: data [1, 5, -2, 0] with updates [3, 9,
// -7, 4] at [0, 1, 2, -4] (-4 is 0): max keeps 3 over 1 then 4, 9 over 5,
// -2 over -7, and 0 (no update); min keeps 1, 5, -7, 0. Along axis 1 of
// [[1, 2, 3], [4, 5, 6]], updates [[NaN, 0.5], [8, 0.5]] at [1, 0]: a NaN
// wins, 8 beats 5, 0.5 beats neither 1 nor 4.
// RUN: tidal-eval %s --print | FileCheck %s
// CHECK: result 0: tensor<4xf32> = [4, 9, -2, 0]
// CHECK: result 1: tensor<4xf32> = [1, 5, -7, 0]
// CHECK: result 2: tensor<2x3xf32> = [1, nan, 3, 4, 8, 6]
func.func @main() -> (tensor<4xf32>, tensor<4xf32>, tensor<2x3xf32>) {
  %d = tidal.constant dense<[1.0, 5.0, -2.0, 0.0]> : tensor<4xf32>
  %i = tidal.constant dense<[0, 1, 2, -4]> : tensor<4xi64>
  %u = tidal.constant dense<[3.0, 9.0, -7.0, 4.0]> : tensor<4xf32>
  %0 = tidal.scatter_extreme %d, %i, %u {axis = 0 : i64, largest = true} : (tensor<4xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<4xf32>
  %1 = tidal.scatter_extreme %d, %i, %u {axis = 0 : i64, largest = false} : (tensor<4xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<4xf32>
  %m = tidal.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %j = tidal.constant dense<[1, 0]> : tensor<2xi64>
  %v = tidal.constant dense<[[0x7FC00000, 0.5], [8.0, 0.5]]> : tensor<2x2xf32>
  %2 = tidal.scatter_extreme %m, %j, %v {axis = 1 : i64, largest = true} : (tensor<2x3xf32>, tensor<2xi64>, tensor<2x2xf32>) -> tensor<2x3xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<2x3xf32>
}
