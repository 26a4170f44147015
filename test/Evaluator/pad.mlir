// tidal.pad in its three modes and pad_backward against hand-derived
// values (PadOps.cpp).
// RUN: tidal-eval %s --function pad --print | FileCheck %s

// [1, 2, 3] padded by (2, 1): constant 9, reflect, edge; the backward of
// reflect adds the mirrored gradients ([x2, x1, x0, x1, x2, x1]): x0 <- g2;
// x1 <- g1 + g3 + g5; x2 <- g0 + g4, with g = [1, 2, 4, 8, 16, 32].
// CHECK: result 0: tensor<6xf32> = [9, 9, 1, 2, 3, 9]
// CHECK: result 1: tensor<6xf32> = [3, 2, 1, 2, 3, 2]
// CHECK: result 2: tensor<6xf32> = [1, 1, 1, 2, 3, 3]
// CHECK: result 3: tensor<3xf32> = [4, 42, 17]
func.func @pad() -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<3xf32>) {
  %x = tidal.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %0 = tidal.pad %x {pads = array<i64: 2, 1>, mode = #tidal<pad_mode constant>, value = 9.0 : f64} : (tensor<3xf32>) -> tensor<6xf32>
  %1 = tidal.pad %x {pads = array<i64: 2, 1>, mode = #tidal<pad_mode reflect>} : (tensor<3xf32>) -> tensor<6xf32>
  %2 = tidal.pad %x {pads = array<i64: 2, 1>, mode = #tidal<pad_mode edge>} : (tensor<3xf32>) -> tensor<6xf32>
  %g = tidal.constant dense<[1.0, 2.0, 4.0, 8.0, 16.0, 32.0]> : tensor<6xf32>
  %3 = tidal.pad_backward %g {pads = array<i64: 2, 1>, mode = #tidal<pad_mode reflect>} : (tensor<6xf32>) -> tensor<3xf32>
  return %0, %1, %2, %3 : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<3xf32>
}
