// Round trip of tidal.pad and pad_backward (TidalPadOps.td), custom and
// generic form, and their verifiers' errors.
// RUN: tidal-opt %s -split-input-file | tidal-opt -split-input-file | FileCheck %s
// RUN: tidal-opt %s -split-input-file --mlir-print-op-generic | tidal-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @pad
// CHECK: tidal.pad %arg0 {mode = #tidal<pad_mode constant>, pads = array<i64: 0, 1, 2, 3>, value = 5.000000e-01 : f64} : (tensor<2x3xf32>) -> tensor<4x7xf32>
// CHECK: tidal.pad %arg0 {mode = #tidal<pad_mode reflect>, pads = array<i64: 0, 2, 0, 1>} : (tensor<2x3xf32>) -> tensor<2x6xf32>
// CHECK: tidal.pad_backward %arg1 {mode = #tidal<pad_mode edge>, pads = array<i64: 1, 0, 0, 4>} : (tensor<3x7xf32>) -> tensor<2x3xf32>
func.func @pad(%x: tensor<2x3xf32>, %g: tensor<3x7xf32>) {
  %0 = tidal.pad %x {pads = array<i64: 0, 1, 2, 3>, mode = #tidal<pad_mode constant>, value = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<4x7xf32>
  %1 = tidal.pad %x {pads = array<i64: 0, 2, 0, 1>, mode = #tidal<pad_mode reflect>} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  %2 = tidal.pad_backward %g {pads = array<i64: 1, 0, 0, 4>, mode = #tidal<pad_mode edge>} : (tensor<3x7xf32>) -> tensor<2x3xf32>
  return
}
