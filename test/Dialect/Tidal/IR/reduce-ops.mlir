// Round trip of the reductions over axes and of argmax/argmin
// (TidalReduceOps.td), custom and generic form: inferred shapes with and
// without keepdims, integer inputs, int64 indices.
// RUN: tidal-opt %s | tidal-opt | FileCheck %s
// RUN: tidal-opt %s --mlir-print-op-generic | tidal-opt | FileCheck %s

// CHECK-LABEL: func.func @reductions
// CHECK: tidal.reduce_max %arg0 {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// CHECK: tidal.reduce_min %arg0 {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
// CHECK: tidal.reduce_prod %arg0 {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
// CHECK: tidal.reduce_max %arg1 {axes = array<i64: 0>} : (tensor<5xi64>) -> tensor<1xi64>
// CHECK: tidal.reduce_prod %arg1 {axes = array<i64>} : (tensor<5xi64>) -> tensor<5xi64>
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<5xi64>) {
  %0 = tidal.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %1 = tidal.reduce_min %x {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  %2 = tidal.reduce_prod %x {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  %3 = tidal.reduce_max %i {axes = array<i64: 0>} : (tensor<5xi64>) -> tensor<1xi64>
  %4 = tidal.reduce_prod %i {axes = array<i64>} : (tensor<5xi64>) -> tensor<5xi64>
  return
}

// CHECK-LABEL: func.func @arg
// CHECK: tidal.argmax %arg0 {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x1x4xi64>
// CHECK: tidal.argmin %arg0 {axis = 2 : i64, keepdims = false, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x3xi64>
// CHECK: tidal.argmax %arg1 {axis = 0 : i64, keepdims = false} : (tensor<5xi32>) -> tensor<i64>
func.func @arg(%x: tensor<2x3x4xf32>, %i: tensor<5xi32>) {
  %0 = tidal.argmax %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x1x4xi64>
  %1 = tidal.argmin %x {axis = 2 : i64, keepdims = false, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x3xi64>
  %2 = tidal.argmax %i {axis = 0 : i64, keepdims = false} : (tensor<5xi32>) -> tensor<i64>
  return
}
