// Data movement and its backward ops, hand-derived.
// RUN: tidal-eval %s --print | FileCheck %s

// Slice [1, 2, 3, 4] from 3 down through 0 by -2: indices 3, 1. Its
// backward scatters [10, 20] there. Gather with indices [0, 2, 0] (and a
// negative one); its backward adds the rows for the repeated index 0.
// CHECK: result 0: tensor<2xf32> = [4, 2]
// CHECK: result 1: tensor<4xf32> = [0, 20, 0, 10]
// CHECK: result 2: tensor<2xf32> = [3, 1]
// CHECK: result 3: tensor<3x2xf32> = [6, 8, 0, 0, 3, 4]
// CHECK: result 4: tensor<2x3xf32> = [1, 1, 1, 2, 2, 2]
// CHECK: result 5: tensor<3x2xf32> = [1, 4, 2, 5, 3, 6]
// CHECK: result 6: tensor<2x4xf32> = [1, 2, 3, 7, 4, 5, 6, 8]
// CHECK: result 7: tensor<2x1xf32> = [3, 6]
// CHECK: result 8: tensor<6xf32> = [1, 2, 3, 4, 5, 6]
func.func @main() -> (tensor<2xf32>, tensor<4xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x4xf32>, tensor<2x1xf32>, tensor<6xf32>) {
  %x = tidal.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = tidal.slice %x {starts = array<i64: 3>, ends = array<i64: -1>, steps = array<i64: -2>} : (tensor<4xf32>) -> tensor<2xf32>
  %g = tidal.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %1 = tidal.slice_backward %g {starts = array<i64: 3>, ends = array<i64: -1>, steps = array<i64: -2>} : (tensor<2xf32>) -> tensor<4xf32>
  %d = tidal.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %i = tidal.constant dense<[-1, 0]> : tensor<2xi64>
  %2 = tidal.gather %d, %i {axis = 0 : i64} : (tensor<3xf32>, tensor<2xi64>) -> tensor<2xf32>
  %rows = tidal.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %ri = tidal.constant dense<[0, 2, 0]> : tensor<3xi64>
  %3 = tidal.gather_backward %rows, %ri {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  %c = tidal.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %4 = tidal.broadcast_to %c : (tensor<2x1xf32>) -> tensor<2x3xf32>
  %m = tidal.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %5 = tidal.transpose %m {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %e = tidal.constant dense<[[7.0], [8.0]]> : tensor<2x1xf32>
  %6 = tidal.concat %m, %e {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %7:2 = tidal.split %m {axis = 1 : i64, sizes = array<i64: 2, 1>} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x1xf32>)
  %8 = tidal.reshape %m {shape = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7#1, %8 : tensor<2xf32>, tensor<4xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x4xf32>, tensor<2x1xf32>, tensor<6xf32>
}
