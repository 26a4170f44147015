// Round trip of max, min, the comparisons, the mask ops and where
// (TidalLogicOps.td), custom and generic form, with broadcasting; cast.
// RUN: tidal-opt %s | tidal-opt | FileCheck %s
// RUN: tidal-opt %s --mlir-print-op-generic | tidal-opt | FileCheck %s

// CHECK-LABEL: func.func @logic
// CHECK: tidal.max %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: tidal.min %arg2, %arg2 : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK: tidal.equal %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK: tidal.less %arg2, %arg3 : (tensor<4xi64>, tensor<4x1xi64>) -> tensor<4x4xi1>
// CHECK: tidal.less_or_equal
// CHECK: tidal.greater
// CHECK: tidal.greater_or_equal
// CHECK: tidal.logical_and %{{.*}}, %{{.*}} : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
// CHECK: tidal.logical_or
// CHECK: tidal.logical_xor
// CHECK: tidal.logical_not %{{.*}} : tensor<4x4xi1>
// CHECK: tidal.where %{{.*}}, %arg4, %arg5 : (tensor<4x4xi1>, tensor<f32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
func.func @logic(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<4xi64>,
                 %j: tensor<4x1xi64>, %s: tensor<f32>, %x: tensor<2x4x4xf32>) {
  %0 = tidal.max %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = tidal.min %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %2 = tidal.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %3 = tidal.less %i, %j : (tensor<4xi64>, tensor<4x1xi64>) -> tensor<4x4xi1>
  %4 = tidal.less_or_equal %i, %j : (tensor<4xi64>, tensor<4x1xi64>) -> tensor<4x4xi1>
  %5 = tidal.greater %i, %j : (tensor<4xi64>, tensor<4x1xi64>) -> tensor<4x4xi1>
  %6 = tidal.greater_or_equal %i, %j : (tensor<4xi64>, tensor<4x1xi64>) -> tensor<4x4xi1>
  %7 = tidal.logical_and %3, %4 : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  %8 = tidal.logical_or %5, %6 : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  %9 = tidal.logical_xor %7, %8 : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  %10 = tidal.logical_not %9 : tensor<4x4xi1>
  %11 = tidal.where %10, %s, %x : (tensor<4x4xi1>, tensor<f32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return
}

// CHECK-LABEL: func.func @casts
// CHECK: tidal.cast %arg0 : (tensor<2x3xf32>) -> tensor<2x3xi64>
// CHECK: tidal.cast %arg1 : (tensor<4xi1>) -> tensor<4xf32>
// CHECK: tidal.cast %arg0 : (tensor<2x3xf32>) -> tensor<2x3xbf16>
func.func @casts(%a: tensor<2x3xf32>, %m: tensor<4xi1>) {
  %0 = tidal.cast %a : (tensor<2x3xf32>) -> tensor<2x3xi64>
  %1 = tidal.cast %m : (tensor<4xi1>) -> tensor<4xf32>
  %2 = tidal.cast %a : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  return
}
