// Round trip of every tidal op, custom and generic form; each result type is
// checked against the op's own shape inference by the verifier.
// RUN: tidal-opt %s -split-input-file | tidal-opt -split-input-file | FileCheck %s
// RUN: tidal-opt %s -split-input-file --mlir-print-op-generic | tidal-opt -split-input-file | FileCheck %s
// RUN: tidal-opt %s -split-input-file --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

//===----------------------------------------------------------------------===//
// Element-wise binary ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @add_broadcast
// CHECK: tidal.add %arg0, %arg1 : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
func.func @add_broadcast(%a: tensor<2x1x4xf32>, %b: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %0 = tidal.add %a, %b : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @add_i64
// CHECK: tidal.add %arg0, %arg1 : (tensor<3x4xi64>, tensor<3x4xi64>) -> tensor<3x4xi64>
func.func @add_i64(%a: tensor<3x4xi64>, %b: tensor<3x4xi64>) -> tensor<3x4xi64> {
  %0 = tidal.add %a, %b : (tensor<3x4xi64>, tensor<3x4xi64>) -> tensor<3x4xi64>
  return %0 : tensor<3x4xi64>
}

// -----

// A rank-0 operand broadcasts to any shape.
// CHECK-LABEL: func.func @add_scalar
// CHECK: tidal.add %arg0, %arg1 : (tensor<f32>, tensor<3x4xf32>) -> tensor<3x4xf32>
func.func @add_scalar(%a: tensor<f32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = tidal.add %a, %b : (tensor<f32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @sub_broadcast
// CHECK: tidal.sub %arg0, %arg1 : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
func.func @sub_broadcast(%a: tensor<4xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = tidal.sub %a, %b : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @mul_i32
// CHECK: tidal.mul %arg0, %arg1 : (tensor<2x3xi32>, tensor<2x1xi32>) -> tensor<2x3xi32>
func.func @mul_i32(%a: tensor<2x3xi32>, %b: tensor<2x1xi32>) -> tensor<2x3xi32> {
  %0 = tidal.mul %a, %b : (tensor<2x3xi32>, tensor<2x1xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// Both operands stretch: 5x1x3 / 4x1 -> 5x4x3.
// CHECK-LABEL: func.func @div_broadcast_both
// CHECK: tidal.div %arg0, %arg1 : (tensor<5x1x3xf16>, tensor<4x1xf16>) -> tensor<5x4x3xf16>
func.func @div_broadcast_both(%a: tensor<5x1x3xf16>, %b: tensor<4x1xf16>) -> tensor<5x4x3xf16> {
  %0 = tidal.div %a, %b : (tensor<5x1x3xf16>, tensor<4x1xf16>) -> tensor<5x4x3xf16>
  return %0 : tensor<5x4x3xf16>
}

// -----

// The exponent may have another element type; the result takes the base's.
// CHECK-LABEL: func.func @pow_mixed_types
// CHECK: tidal.pow %arg0, %arg1 : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
func.func @pow_mixed_types(%a: tensor<3x4xf32>, %b: tensor<i64>) -> tensor<3x4xf32> {
  %0 = tidal.pow %a, %b : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Element-wise unary ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @unary
// CHECK: tidal.neg %arg1 : tensor<3x4xi32>
// CHECK: tidal.relu %arg0 : tensor<3x4xf32>
// CHECK: tidal.relu %arg2 : tensor<8xi8>
// CHECK: tidal.sigmoid %arg0 : tensor<3x4xf32>
// CHECK: tidal.tanh %arg3 : tensor<2x2xbf16>
// CHECK: tidal.sqrt %arg4 : tensor<5xf64>
// CHECK: tidal.erf %arg0 : tensor<3x4xf32>
// CHECK: tidal.exp %arg3 : tensor<2x2xbf16>
// CHECK: tidal.log %arg0 : tensor<3x4xf32>
// CHECK: tidal.identity %arg5 : tensor<7xi1>
// CHECK: tidal.leaky_relu %arg0 : tensor<3x4xf32>
// CHECK: tidal.leaky_relu %arg0 {alpha = 2.000000e-01 : f32} : tensor<3x4xf32>
func.func @unary(%f: tensor<3x4xf32>, %i: tensor<3x4xi32>, %q: tensor<8xi8>,
                 %h: tensor<2x2xbf16>, %d: tensor<5xf64>, %m: tensor<7xi1>) {
  %0 = tidal.neg %i : tensor<3x4xi32>
  %1 = tidal.relu %f : tensor<3x4xf32>
  %2 = tidal.relu %q : tensor<8xi8>
  %3 = tidal.sigmoid %f : tensor<3x4xf32>
  %4 = tidal.tanh %h : tensor<2x2xbf16>
  %5 = tidal.sqrt %d : tensor<5xf64>
  %6 = tidal.erf %f : tensor<3x4xf32>
  %7 = tidal.exp %h : tensor<2x2xbf16>
  %8 = tidal.log %f : tensor<3x4xf32>
  %9 = tidal.identity %m : tensor<7xi1>
  %10 = tidal.leaky_relu %f : tensor<3x4xf32>
  %11 = tidal.leaky_relu %f {alpha = 0.2 : f32} : tensor<3x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Gemm and MatMul
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @gemm_bias_row
// CHECK: tidal.gemm %arg0, %arg1, %arg2 {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32} : (tensor<4x3xf32>, tensor<3x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
func.func @gemm_bias_row(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %c: tensor<5xf32>) -> tensor<4x5xf32> {
  %0 = tidal.gemm %a, %b, %c {alpha = 0.5 : f32, beta = 2.0 : f32} : (tensor<4x3xf32>, tensor<3x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// A is 3x4 and B is 5x3 before transposing: [4, 3] x [3, 5].
// CHECK-LABEL: func.func @gemm_transposed
// CHECK: tidal.gemm %arg0, %arg1, %arg2 {trans_a = true, trans_b = true} : (tensor<3x4xf32>, tensor<5x3xf32>, tensor<4x1xf32>) -> tensor<4x5xf32>
func.func @gemm_transposed(%a: tensor<3x4xf32>, %b: tensor<5x3xf32>, %c: tensor<4x1xf32>) -> tensor<4x5xf32> {
  %0 = tidal.gemm %a, %b, %c {trans_a = true, trans_b = true} : (tensor<3x4xf32>, tensor<5x3xf32>, tensor<4x1xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// CHECK-LABEL: func.func @gemm_scalar_c
// CHECK: tidal.gemm %arg0, %arg1, %arg2 {trans_b = true} : (tensor<2x3xf32>, tensor<6x3xf32>, tensor<f32>) -> tensor<2x6xf32>
func.func @gemm_scalar_c(%a: tensor<2x3xf32>, %b: tensor<6x3xf32>, %c: tensor<f32>) -> tensor<2x6xf32> {
  %0 = tidal.gemm %a, %b, %c {trans_b = true} : (tensor<2x3xf32>, tensor<6x3xf32>, tensor<f32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// CHECK-LABEL: func.func @gemm_no_c_i32
// CHECK: tidal.gemm %arg0, %arg1 : (tensor<2x3xi32>, tensor<3x7xi32>) -> tensor<2x7xi32>
func.func @gemm_no_c_i32(%a: tensor<2x3xi32>, %b: tensor<3x7xi32>) -> tensor<2x7xi32> {
  %0 = tidal.gemm %a, %b : (tensor<2x3xi32>, tensor<3x7xi32>) -> tensor<2x7xi32>
  return %0 : tensor<2x7xi32>
}

// -----

// CHECK-LABEL: func.func @matmul_2d
// CHECK: tidal.matmul %arg0, %arg1 : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
func.func @matmul_2d(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = tidal.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Batch dims [2, 1] and [5] broadcast to [2, 5].
// CHECK-LABEL: func.func @matmul_batched
// CHECK: tidal.matmul %arg0, %arg1 : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
func.func @matmul_batched(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32> {
  %0 = tidal.matmul %a, %b : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  return %0 : tensor<2x5x3x6xf32>
}

// -----

// 1-D operands: a row on the left, a column on the right, the added
// dimension dropped again.
// CHECK-LABEL: func.func @matmul_vectors
// CHECK: tidal.matmul %arg0, %arg1 : (tensor<4xf32>, tensor<4x5xf32>) -> tensor<5xf32>
// CHECK: tidal.matmul %arg2, %arg0 : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
// CHECK: tidal.matmul %arg0, %arg0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
// CHECK: tidal.matmul %arg0, %arg3 : (tensor<4xf32>, tensor<2x4x5xf32>) -> tensor<2x5xf32>
func.func @matmul_vectors(%v: tensor<4xf32>, %m: tensor<4x5xf32>, %n: tensor<3x4xf32>, %b: tensor<2x4x5xf32>) {
  %0 = tidal.matmul %v, %m : (tensor<4xf32>, tensor<4x5xf32>) -> tensor<5xf32>
  %1 = tidal.matmul %n, %v : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  %2 = tidal.matmul %v, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  %3 = tidal.matmul %v, %b : (tensor<4xf32>, tensor<2x4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @conv_2d_bias
// CHECK: tidal.conv %arg0, %arg1, %arg2 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x32x32xf32>
func.func @conv_2d_bias(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x32x32xf32> {
  %0 = tidal.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x32x32xf32>
  return %0 : tensor<1x16x32x32xf32>
}

// -----

// Depthwise (group = channels), stride 2: (15 - 3) / 2 + 1 = 7.
// CHECK-LABEL: func.func @conv_depthwise_strided
// CHECK: tidal.conv %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 8 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x8x15x15xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x7x7xf32>
func.func @conv_depthwise_strided(%x: tensor<2x8x15x15xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<2x8x7x7xf32> {
  %0 = tidal.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 8 : i64} : (tensor<2x8x15x15xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x7x7xf32>
  return %0 : tensor<2x8x7x7xf32>
}

// -----

// Two groups of 2 input and 3 output channels.
// CHECK-LABEL: func.func @conv_grouped
// CHECK: tidal.conv %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x10x10xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x8x8xf32>
func.func @conv_grouped(%x: tensor<1x4x10x10xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x8x8xf32> {
  %0 = tidal.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x10x10xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x8x8xf32>
  return %0 : tensor<1x6x8x8xf32>
}

// -----

// Dilated, asymmetrically padded, strided per dimension:
//   H: 10 + 1 + 0 = 11 padded, span 2 * 2 + 1 = 5, (11 - 5) / 1 + 1 = 7
//   W: 12 + 2 + 1 = 15 padded, span 3 * 2 + 1 = 7, (15 - 7) / 2 + 1 = 5
// CHECK-LABEL: func.func @conv_dilated_padded
// CHECK: tidal.conv %arg0, %arg1 {dilations = array<i64: 2, 3>, pads = array<i64: 1, 2, 0, 1>, strides = array<i64: 1, 2>} : (tensor<1x2x10x12xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x7x5xf32>
func.func @conv_dilated_padded(%x: tensor<1x2x10x12xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x7x5xf32> {
  %0 = tidal.conv %x, %w {strides = array<i64: 1, 2>, pads = array<i64: 1, 2, 0, 1>, dilations = array<i64: 2, 3>} : (tensor<1x2x10x12xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x7x5xf32>
  return %0 : tensor<1x4x7x5xf32>
}

// -----

// (100 + 4 - 5) / 2 + 1 = 50.
// CHECK-LABEL: func.func @conv_1d
// CHECK: tidal.conv %arg0, %arg1 {dilations = array<i64: 1>, pads = array<i64: 2, 2>, strides = array<i64: 2>} : (tensor<4x3x100xf32>, tensor<8x3x5xf32>) -> tensor<4x8x50xf32>
func.func @conv_1d(%x: tensor<4x3x100xf32>, %w: tensor<8x3x5xf32>) -> tensor<4x8x50xf32> {
  %0 = tidal.conv %x, %w {strides = array<i64: 2>, pads = array<i64: 2, 2>, dilations = array<i64: 1>} : (tensor<4x3x100xf32>, tensor<8x3x5xf32>) -> tensor<4x8x50xf32>
  return %0 : tensor<4x8x50xf32>
}

// -----

// CHECK-LABEL: func.func @conv_3d
// CHECK: tidal.conv %arg0, %arg1 {dilations = array<i64: 1, 1, 1>, pads = array<i64: 1, 1, 1, 1, 1, 1>, strides = array<i64: 2, 2, 2>} : (tensor<1x2x8x8x8xf16>, tensor<4x2x3x3x3xf16>) -> tensor<1x4x4x4x4xf16>
func.func @conv_3d(%x: tensor<1x2x8x8x8xf16>, %w: tensor<4x2x3x3x3xf16>) -> tensor<1x4x4x4x4xf16> {
  %0 = tidal.conv %x, %w {strides = array<i64: 2, 2, 2>, pads = array<i64: 1, 1, 1, 1, 1, 1>, dilations = array<i64: 1, 1, 1>} : (tensor<1x2x8x8x8xf16>, tensor<4x2x3x3x3xf16>) -> tensor<1x4x4x4x4xf16>
  return %0 : tensor<1x4x4x4x4xf16>
}

// -----

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @max_pool_ui8
// CHECK: tidal.max_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x32x32xui8>) -> tensor<1x3x16x16xui8>
func.func @max_pool_ui8(%x: tensor<1x3x32x32xui8>) -> tensor<1x3x16x16xui8> {
  %0 = tidal.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x32x32xui8>) -> tensor<1x3x16x16xui8>
  return %0 : tensor<1x3x16x16xui8>
}

// -----

// Kernel 3, stride 2 over 6: floor mode gives 2 windows, ceil mode 3.
// CHECK-LABEL: func.func @max_pool_ceil_mode
// CHECK: tidal.max_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x6x6xf32>) -> tensor<1x1x2x2xf32>
// CHECK: tidal.max_pool %arg0 {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x6x6xf32>) -> tensor<1x1x3x3xf32>
func.func @max_pool_ceil_mode(%x: tensor<1x1x6x6xf32>) {
  %0 = tidal.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x6x6xf32>) -> tensor<1x1x2x2xf32>
  %1 = tidal.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<1x1x6x6xf32>) -> tensor<1x1x3x3xf32>
  return
}

// -----

// Ceil mode drops a last window that would start in the end padding:
// kernel 1, stride 3 over 4 + 1 padding has windows at 0 and 3, not at 6.
// CHECK-LABEL: func.func @max_pool_ceil_mode_end_pad
// CHECK: tidal.max_pool %arg0 {ceil_mode = true, dilations = array<i64: 1>, kernel_shape = array<i64: 1>, pads = array<i64: 0, 1>, strides = array<i64: 3>} : (tensor<1x1x4xf32>) -> tensor<1x1x2xf32>
func.func @max_pool_ceil_mode_end_pad(%x: tensor<1x1x4xf32>) -> tensor<1x1x2xf32> {
  %0 = tidal.max_pool %x {kernel_shape = array<i64: 1>, strides = array<i64: 3>, pads = array<i64: 0, 1>, dilations = array<i64: 1>, ceil_mode = true} : (tensor<1x1x4xf32>) -> tensor<1x1x2xf32>
  return %0 : tensor<1x1x2xf32>
}

// -----

// Dilation 2 makes a 3-wide kernel span 5: 10 - 5 + 1 = 6.
// CHECK-LABEL: func.func @max_pool_dilated_padded
// CHECK: tidal.max_pool %arg0 {dilations = array<i64: 2, 2>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x10x10xf32>) -> tensor<1x2x6x8xf32>
func.func @max_pool_dilated_padded(%x: tensor<1x2x10x10xf32>) -> tensor<1x2x6x8xf32> {
  %0 = tidal.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 1, 0, 1>, dilations = array<i64: 2, 2>} : (tensor<1x2x10x10xf32>) -> tensor<1x2x6x8xf32>
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// Kernel 2, stride 2 over 7: floor mode 3 windows, ceil mode 4.
// CHECK-LABEL: func.func @average_pool_2d
// CHECK: tidal.average_pool %arg0 {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x7x7xf32>) -> tensor<1x3x3x3xf32>
// CHECK: tidal.average_pool %arg0 {ceil_mode = true, count_include_pad = true, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x7x7xf32>) -> tensor<1x3x4x4xf32>
func.func @average_pool_2d(%x: tensor<1x3x7x7xf32>) {
  %0 = tidal.average_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x3x7x7xf32>) -> tensor<1x3x3x3xf32>
  %1 = tidal.average_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true, count_include_pad = true} : (tensor<1x3x7x7xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

// CHECK-LABEL: func.func @average_pool_3d
// CHECK: tidal.average_pool %arg0 {kernel_shape = array<i64: 2, 2, 2>, pads = array<i64: 0, 0, 0, 1, 1, 1>, strides = array<i64: 2, 2, 2>} : (tensor<2x4x8x8x8xf16>) -> tensor<2x4x4x4x4xf16>
func.func @average_pool_3d(%x: tensor<2x4x8x8x8xf16>) -> tensor<2x4x4x4x4xf16> {
  %0 = tidal.average_pool %x {kernel_shape = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, pads = array<i64: 0, 0, 0, 1, 1, 1>} : (tensor<2x4x8x8x8xf16>) -> tensor<2x4x4x4x4xf16>
  return %0 : tensor<2x4x4x4x4xf16>
}

// -----

// CHECK-LABEL: func.func @global_average_pool
// CHECK: tidal.global_average_pool %arg0 : (tensor<2x16x7x7xf32>) -> tensor<2x16x1x1xf32>
// CHECK: tidal.global_average_pool %arg1 : (tensor<4x8x10xf32>) -> tensor<4x8x1xf32>
func.func @global_average_pool(%x: tensor<2x16x7x7xf32>, %y: tensor<4x8x10xf32>) {
  %0 = tidal.global_average_pool %x : (tensor<2x16x7x7xf32>) -> tensor<2x16x1x1xf32>
  %1 = tidal.global_average_pool %y : (tensor<4x8x10xf32>) -> tensor<4x8x1xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Normalization and dropout
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @batch_norm_inference
// CHECK: tidal.batch_norm_inference %arg0, %arg1, %arg2, %arg3, %arg4 : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
// CHECK: tidal.batch_norm_inference %arg5, %arg1, %arg2, %arg3, %arg4 {epsilon = 1.000000e-03 : f32} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
func.func @batch_norm_inference(%x: tensor<8x16x4x4xf32>, %s: tensor<16xf32>, %b: tensor<16xf32>,
                                %m: tensor<16xf32>, %v: tensor<16xf32>, %y: tensor<8x16xf32>) {
  %0 = tidal.batch_norm_inference %x, %s, %b, %m, %v : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
  %1 = tidal.batch_norm_inference %y, %s, %b, %m, %v {epsilon = 1.0e-3 : f32} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return
}

// -----

// Five results: output, new running mean and variance, batch mean and
// (biased) batch variance.
// CHECK-LABEL: func.func @batch_norm_training
// CHECK: %output, %new_running_mean, %new_running_var, %batch_mean, %batch_var = tidal.batch_norm_training %arg0, %arg1, %arg2, %arg3, %arg4 {momentum = 9.900000e-01 : f32} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
func.func @batch_norm_training(%x: tensor<8x16x4x4xf32>, %s: tensor<16xf32>, %b: tensor<16xf32>,
                               %m: tensor<16xf32>, %v: tensor<16xf32>) {
  %0:5 = tidal.batch_norm_training %x, %s, %b, %m, %v {momentum = 0.99 : f32} : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

// Each updated running statistic keeps its own type, and the batch
// statistics follow them.
// CHECK-LABEL: func.func @batch_norm_training_mixed_types
// CHECK: tidal.batch_norm_training %arg0, %arg1, %arg2, %arg3, %arg4 : (tensor<4x3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf32>, tensor<3xbf16>) -> (tensor<4x3xf16>, tensor<3xf32>, tensor<3xbf16>, tensor<3xf32>, tensor<3xbf16>)
func.func @batch_norm_training_mixed_types(%x: tensor<4x3xf16>, %s: tensor<3xf16>, %b: tensor<3xf16>,
                                           %m: tensor<3xf32>, %v: tensor<3xbf16>) {
  %0:5 = tidal.batch_norm_training %x, %s, %b, %m, %v : (tensor<4x3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf32>, tensor<3xbf16>) -> (tensor<4x3xf16>, tensor<3xf32>, tensor<3xbf16>, tensor<3xf32>, tensor<3xbf16>)
  return
}

// -----

// Normalizing over dims [2, 4) of 2x3x4x5: the statistics are 2x3x1x1 and
// scale 4x5 and bias 5 broadcast to the normalized 4x5.
// CHECK-LABEL: func.func @layer_norm_middle_axis
// CHECK: %output, %mean, %inv_std_dev = tidal.layer_norm %arg0, %arg1, %arg2 {axis = 2 : i64} : (tensor<2x3x4x5xf32>, tensor<4x5xf32>, tensor<5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>)
func.func @layer_norm_middle_axis(%x: tensor<2x3x4x5xf32>, %s: tensor<4x5xf32>, %b: tensor<5xf32>) {
  %0:3 = tidal.layer_norm %x, %s, %b {axis = 2 : i64} : (tensor<2x3x4x5xf32>, tensor<4x5xf32>, tensor<5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @layer_norm_no_bias
// CHECK: tidal.layer_norm %arg0, %arg1 {axis = 1 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<8x128xf32>, tensor<128xf32>) -> (tensor<8x128xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
// CHECK: tidal.layer_norm %arg0, %arg1 {axis = 0 : i64} : (tensor<8x128xf32>, tensor<128xf32>) -> (tensor<8x128xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
func.func @layer_norm_no_bias(%x: tensor<8x128xf32>, %s: tensor<128xf32>) {
  %0:3 = tidal.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-6 : f32} : (tensor<8x128xf32>, tensor<128xf32>) -> (tensor<8x128xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
  %1:3 = tidal.layer_norm %x, %s {axis = 0 : i64} : (tensor<8x128xf32>, tensor<128xf32>) -> (tensor<8x128xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @random
// CHECK: tidal.random_normal {mean = 5.000000e-01 : f32, scale = 2.000000e+00 : f32, seed = 7 : i64} : tensor<2x3xf32>
// CHECK: tidal.random_uniform : tensor<5xf64>
func.func @random() -> (tensor<2x3xf32>, tensor<5xf64>) {
  %0 = tidal.random_normal {mean = 0.5 : f32, scale = 2.0 : f32, seed = 7 : i64} : tensor<2x3xf32>
  %1 = tidal.random_uniform : tensor<5xf64>
  return %0, %1 : tensor<2x3xf32>, tensor<5xf64>
}

// CHECK-LABEL: func.func @dropout
// CHECK: %output, %mask = tidal.dropout %arg0 {ratio = 1.000000e-01 : f32, seed = 42 : i64, training = true} : (tensor<4x10xf32>) -> (tensor<4x10xf32>, tensor<4x10xi1>)
// CHECK: tidal.dropout %arg0 : (tensor<4x10xf32>) -> (tensor<4x10xf32>, tensor<4x10xi1>)
func.func @dropout(%x: tensor<4x10xf32>) {
  %0:2 = tidal.dropout %x {ratio = 0.1 : f32, training = true, seed = 42 : i64} : (tensor<4x10xf32>) -> (tensor<4x10xf32>, tensor<4x10xi1>)
  %1:2 = tidal.dropout %x : (tensor<4x10xf32>) -> (tensor<4x10xf32>, tensor<4x10xi1>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// Softmax and losses
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @softmax
// CHECK: tidal.softmax %arg0 {axis = 1 : i64} : tensor<4x10xf32>
// CHECK: tidal.log_softmax %arg1 {axis = 2 : i64} : tensor<2x3x4xf16>
func.func @softmax(%x: tensor<4x10xf32>, %y: tensor<2x3x4xf16>) {
  %0 = tidal.softmax %x {axis = 1 : i64} : tensor<4x10xf32>
  %1 = tidal.log_softmax %y {axis = 2 : i64} : tensor<2x3x4xf16>
  return
}

// -----

// Scores [N, C, d1, d2] with labels [N, d1, d2]: reduction none keeps the
// label shape.
// CHECK-LABEL: func.func @softmax_cross_entropy_loss_none
// CHECK: %loss, %log_prob = tidal.softmax_cross_entropy_loss %arg0, %arg1 {reduction = #tidal<reduction none>} : (tensor<4x10x5x6xf32>, tensor<4x5x6xi64>) -> (tensor<4x5x6xf32>, tensor<4x10x5x6xf32>)
func.func @softmax_cross_entropy_loss_none(%s: tensor<4x10x5x6xf32>, %l: tensor<4x5x6xi64>) {
  %0:2 = tidal.softmax_cross_entropy_loss %s, %l {reduction = #tidal<reduction none>} : (tensor<4x10x5x6xf32>, tensor<4x5x6xi64>) -> (tensor<4x5x6xf32>, tensor<4x10x5x6xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @softmax_cross_entropy_loss_mean_weighted
// CHECK: tidal.softmax_cross_entropy_loss %arg0, %arg1, %arg2 {reduction = #tidal<reduction mean>} : (tensor<8x10xf32>, tensor<8xi64>, tensor<10xf32>) -> (tensor<f32>, tensor<8x10xf32>)
func.func @softmax_cross_entropy_loss_mean_weighted(%s: tensor<8x10xf32>, %l: tensor<8xi64>, %w: tensor<10xf32>) {
  %0:2 = tidal.softmax_cross_entropy_loss %s, %l, %w {reduction = #tidal<reduction mean>} : (tensor<8x10xf32>, tensor<8xi64>, tensor<10xf32>) -> (tensor<f32>, tensor<8x10xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @softmax_cross_entropy_loss_sum_ignore
// CHECK: tidal.softmax_cross_entropy_loss %arg0, %arg1 {ignore_index = -100 : i64, reduction = #tidal<reduction sum>} : (tensor<8x10xf32>, tensor<8xi32>) -> (tensor<f32>, tensor<8x10xf32>)
func.func @softmax_cross_entropy_loss_sum_ignore(%s: tensor<8x10xf32>, %l: tensor<8xi32>) {
  %0:2 = tidal.softmax_cross_entropy_loss %s, %l {reduction = #tidal<reduction sum>, ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi32>) -> (tensor<f32>, tensor<8x10xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @nll_loss
// CHECK: tidal.nll_loss %arg0, %arg1 {reduction = #tidal<reduction none>} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<8xf32>
// CHECK: tidal.nll_loss %arg0, %arg1, %arg2 {ignore_index = 0 : i64, reduction = #tidal<reduction mean>} : (tensor<8x10xf32>, tensor<8xi64>, tensor<10xf32>) -> tensor<f32>
// CHECK: tidal.nll_loss %arg3, %arg4 {reduction = #tidal<reduction sum>} : (tensor<2x5x3x3xf32>, tensor<2x3x3xi64>) -> tensor<f32>
func.func @nll_loss(%x: tensor<8x10xf32>, %t: tensor<8xi64>, %w: tensor<10xf32>,
                    %y: tensor<2x5x3x3xf32>, %u: tensor<2x3x3xi64>) {
  %0 = tidal.nll_loss %x, %t {reduction = #tidal<reduction none>} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<8xf32>
  %1 = tidal.nll_loss %x, %t, %w {reduction = #tidal<reduction mean>, ignore_index = 0 : i64} : (tensor<8x10xf32>, tensor<8xi64>, tensor<10xf32>) -> tensor<f32>
  %2 = tidal.nll_loss %y, %u {reduction = #tidal<reduction sum>} : (tensor<2x5x3x3xf32>, tensor<2x3x3xi64>) -> tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reduce_mean
// CHECK: tidal.reduce_mean %arg0 {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// CHECK: tidal.reduce_mean %arg0 {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
// CHECK: tidal.reduce_mean %arg0 {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
func.func @reduce_mean(%x: tensor<2x3x4xf32>) {
  %0 = tidal.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %1 = tidal.reduce_mean %x {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  %2 = tidal.reduce_mean %x {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return
}

// -----

// CHECK-LABEL: func.func @reduce_sum_i32
// CHECK: tidal.reduce_sum %arg0 {axes = array<i64: 2>} : (tensor<2x3x4xi32>) -> tensor<2x3x1xi32>
// CHECK: tidal.reduce_sum %arg0 {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xi32>) -> tensor<3xi32>
func.func @reduce_sum_i32(%x: tensor<2x3x4xi32>) {
  %0 = tidal.reduce_sum %x {axes = array<i64: 2>} : (tensor<2x3x4xi32>) -> tensor<2x3x1xi32>
  %1 = tidal.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xi32>) -> tensor<3xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Constant and shape ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @constant
// CHECK: tidal.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK: tidal.constant dense<7> : tensor<i64>
// CHECK: tidal.constant dense<[true, false, true]> : tensor<3xi1>
func.func @constant() {
  %0 = tidal.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %1 = tidal.constant dense<7> : tensor<i64>
  %2 = tidal.constant dense<[true, false, true]> : tensor<3xi1>
  return
}

// -----

// CHECK-LABEL: func.func @reshape
// CHECK: tidal.reshape %arg0 {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK: tidal.reshape %arg1 {shape = array<i64>} : (tensor<1x1xi64>) -> tensor<i64>
func.func @reshape(%x: tensor<2x3x4xf32>, %y: tensor<1x1xi64>) {
  %0 = tidal.reshape %x {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = tidal.reshape %y {shape = array<i64>} : (tensor<1x1xi64>) -> tensor<i64>
  return
}

// -----

// CHECK-LABEL: func.func @flatten
// CHECK: tidal.flatten %arg0 {axis = 2 : i64} : (tensor<2x3x4x5xf32>) -> tensor<6x20xf32>
// CHECK: tidal.flatten %arg0 {axis = 0 : i64} : (tensor<2x3x4x5xf32>) -> tensor<1x120xf32>
// CHECK: tidal.flatten %arg0 {axis = 4 : i64} : (tensor<2x3x4x5xf32>) -> tensor<120x1xf32>
func.func @flatten(%x: tensor<2x3x4x5xf32>) {
  %0 = tidal.flatten %x {axis = 2 : i64} : (tensor<2x3x4x5xf32>) -> tensor<6x20xf32>
  %1 = tidal.flatten %x {axis = 0 : i64} : (tensor<2x3x4x5xf32>) -> tensor<1x120xf32>
  %2 = tidal.flatten %x {axis = 4 : i64} : (tensor<2x3x4x5xf32>) -> tensor<120x1xf32>
  return
}

// -----

// CHECK-LABEL: func.func @squeeze_unsqueeze
// CHECK: tidal.squeeze %arg0 {axes = array<i64: 0, 2>} : (tensor<1x3x1x4xf32>) -> tensor<3x4xf32>
// CHECK: tidal.unsqueeze %arg1 {axes = array<i64: 0, 3>} : (tensor<3x4xf32>) -> tensor<1x3x4x1xf32>
// CHECK: tidal.unsqueeze %arg1 {axes = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3x1x4xf32>
func.func @squeeze_unsqueeze(%x: tensor<1x3x1x4xf32>, %y: tensor<3x4xf32>) {
  %0 = tidal.squeeze %x {axes = array<i64: 0, 2>} : (tensor<1x3x1x4xf32>) -> tensor<3x4xf32>
  %1 = tidal.unsqueeze %y {axes = array<i64: 0, 3>} : (tensor<3x4xf32>) -> tensor<1x3x4x1xf32>
  %2 = tidal.unsqueeze %y {axes = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3x1x4xf32>
  return
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK: tidal.transpose %arg0 {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = tidal.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat
// CHECK: tidal.concat %arg0, %arg1, %arg2 {axis = 1 : i64} : (tensor<2x3xi64>, tensor<2x5xi64>, tensor<2x1xi64>) -> tensor<2x9xi64>
// CHECK: tidal.concat %arg0 {axis = 0 : i64} : (tensor<2x3xi64>) -> tensor<2x3xi64>
func.func @concat(%a: tensor<2x3xi64>, %b: tensor<2x5xi64>, %c: tensor<2x1xi64>) {
  %0 = tidal.concat %a, %b, %c {axis = 1 : i64} : (tensor<2x3xi64>, tensor<2x5xi64>, tensor<2x1xi64>) -> tensor<2x9xi64>
  %1 = tidal.concat %a {axis = 0 : i64} : (tensor<2x3xi64>) -> tensor<2x3xi64>
  return
}

// -----

// CHECK-LABEL: func.func @split
// CHECK: %{{.*}}:3 = tidal.split %arg0 {axis = 0 : i64, sizes = array<i64: 3, 3, 4>} : (tensor<10x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<4x4xf32>)
// CHECK: %{{.*}}:3 = tidal.split %arg0 {axis = 1 : i64, sizes = array<i64: 2, 0, 2>} : (tensor<10x4xf32>) -> (tensor<10x2xf32>, tensor<10x0xf32>, tensor<10x2xf32>)
// CHECK: tidal.split %arg0 {axis = 1 : i64, sizes = array<i64: 4>} : (tensor<10x4xf32>) -> tensor<10x4xf32>
func.func @split(%x: tensor<10x4xf32>) {
  %0:3 = tidal.split %x {axis = 0 : i64, sizes = array<i64: 3, 3, 4>} : (tensor<10x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<4x4xf32>)
  %1:3 = tidal.split %x {axis = 1 : i64, sizes = array<i64: 2, 0, 2>} : (tensor<10x4xf32>) -> (tensor<10x2xf32>, tensor<10x0xf32>, tensor<10x2xf32>)
  %2 = tidal.split %x {axis = 1 : i64, sizes = array<i64: 4>} : (tensor<10x4xf32>) -> tensor<10x4xf32>
  return
}

// -----

// Dim 0 takes 0, 2, .., 8; dim 1 runs backwards from 7 through 0 (end -1).
// CHECK-LABEL: func.func @slice
// CHECK: tidal.slice %arg0 {ends = array<i64: 10, -1>, starts = array<i64: 0, 7>, steps = array<i64: 2, -1>} : (tensor<10x8xf32>) -> tensor<5x8xf32>
// CHECK: tidal.slice %arg1 {ends = array<i64: -1>, starts = array<i64: 9>, steps = array<i64: -3>} : (tensor<10xi64>) -> tensor<4xi64>
// CHECK: tidal.slice %arg1 {ends = array<i64: 2>, starts = array<i64: 5>, steps = array<i64: 1>} : (tensor<10xi64>) -> tensor<0xi64>
// CHECK: tidal.slice %arg0 {ends = array<i64: 9, 8>, starts = array<i64: 1, 1>, steps = array<i64: 3, 4>} : (tensor<10x8xf32>) -> tensor<3x2xf32>
func.func @slice(%x: tensor<10x8xf32>, %y: tensor<10xi64>) {
  %0 = tidal.slice %x {starts = array<i64: 0, 7>, ends = array<i64: 10, -1>, steps = array<i64: 2, -1>} : (tensor<10x8xf32>) -> tensor<5x8xf32>
  %1 = tidal.slice %y {starts = array<i64: 9>, ends = array<i64: -1>, steps = array<i64: -3>} : (tensor<10xi64>) -> tensor<4xi64>
  %2 = tidal.slice %y {starts = array<i64: 5>, ends = array<i64: 2>, steps = array<i64: 1>} : (tensor<10xi64>) -> tensor<0xi64>
  %3 = tidal.slice %x {starts = array<i64: 1, 1>, ends = array<i64: 9, 8>, steps = array<i64: 3, 4>} : (tensor<10x8xf32>) -> tensor<3x2xf32>
  return
}

// -----

// CHECK-LABEL: func.func @gather
// CHECK: tidal.gather %arg0, %arg1 {axis = 0 : i64} : (tensor<100x16xf32>, tensor<4x8xi64>) -> tensor<4x8x16xf32>
// CHECK: tidal.gather %arg2, %arg3 {axis = 1 : i64} : (tensor<2x5x3xf32>, tensor<2x2xi32>) -> tensor<2x2x2x3xf32>
// CHECK: tidal.gather %arg2, %arg4 {axis = 2 : i64} : (tensor<2x5x3xf32>, tensor<i64>) -> tensor<2x5xf32>
func.func @gather(%e: tensor<100x16xf32>, %i: tensor<4x8xi64>, %d: tensor<2x5x3xf32>,
                  %j: tensor<2x2xi32>, %k: tensor<i64>) {
  %0 = tidal.gather %e, %i {axis = 0 : i64} : (tensor<100x16xf32>, tensor<4x8xi64>) -> tensor<4x8x16xf32>
  %1 = tidal.gather %d, %j {axis = 1 : i64} : (tensor<2x5x3xf32>, tensor<2x2xi32>) -> tensor<2x2x2x3xf32>
  %2 = tidal.gather %d, %k {axis = 2 : i64} : (tensor<2x5x3xf32>, tensor<i64>) -> tensor<2x5xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Graph function attributes
//===----------------------------------------------------------------------===//

// The importer names each argument of @main and says what it is, and
// locates each op at its ONNX node.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %arg0: tensor<8x4xf32> {tidal.name = "x", tidal.role = #tidal<role input>}
// CHECK-SAME: %arg1: tensor<4x2xf32> {tidal.name = "fc.weight", tidal.role = #tidal<role param>}
// CHECK-SAME: %arg2: tensor<2xf32> {tidal.name = "bn.running_mean", tidal.role = #tidal<role state>}
// CHECK-SAME: %arg3: tensor<2xi64> {tidal.name = "shape", tidal.role = #tidal<role constant>}
// LOC-LABEL: func.func @main
// LOC: tidal.matmul %arg0, %arg1 : {{.*}} loc(#[[NODE:loc[0-9]*]])
// LOC: #[[NODE]] = loc("fc/MatMul")
func.func @main(%x: tensor<8x4xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %w: tensor<4x2xf32> {tidal.name = "fc.weight", tidal.role = #tidal<role param>},
                %m: tensor<2xf32> {tidal.name = "bn.running_mean", tidal.role = #tidal<role state>},
                %s: tensor<2xi64> {tidal.name = "shape", tidal.role = #tidal<role constant>})
    -> (tensor<8x2xf32> {tidal.name = "y"}) {
  %0 = tidal.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32> loc("fc/MatMul")
  return %0 : tensor<8x2xf32>
}
