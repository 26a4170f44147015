// Round trip of the activation family and the element-wise math ops
// (TidalActivationOps.td), custom and generic form.
// RUN: tidal-opt %s | tidal-opt | FileCheck %s
// RUN: tidal-opt %s --mlir-print-op-generic | tidal-opt | FileCheck %s

// CHECK-LABEL: func.func @forward
// CHECK: tidal.clip %arg0 {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32} : tensor<3x4xf32>
// CHECK: tidal.clip %arg0 {max = 0x7F800000 : f32, min = -5.000000e-01 : f32} : tensor<3x4xf32>
// CHECK: tidal.hard_sigmoid %arg0 : tensor<3x4xf32>
// CHECK: tidal.hard_sigmoid %arg0 {alpha = 0.166666672 : f32} : tensor<3x4xf32>
// CHECK: tidal.hard_swish %arg1 : tensor<5xf64>
// CHECK: tidal.elu %arg0 {alpha = 5.000000e-01 : f32} : tensor<3x4xf32>
// CHECK: tidal.selu %arg0 : tensor<3x4xf32>
// CHECK: tidal.celu %arg0 : tensor<3x4xf32>
// CHECK: tidal.softplus %arg0 : tensor<3x4xf32>
// CHECK: tidal.softsign %arg0 : tensor<3x4xf32>
// CHECK: tidal.mish %arg0 : tensor<3x4xf32>
// CHECK: tidal.abs %arg2 : tensor<6xi64>
// CHECK: tidal.reciprocal %arg0 : tensor<3x4xf32>
// CHECK: tidal.sin %arg0 : tensor<3x4xf32>
// CHECK: tidal.cos %arg0 : tensor<3x4xf32>
// CHECK: tidal.sign %arg2 : tensor<6xi64>
// CHECK: tidal.floor %arg0 : tensor<3x4xf32>
// CHECK: tidal.ceil %arg0 : tensor<3x4xf32>
// CHECK: tidal.round %arg1 : tensor<5xf64>
func.func @forward(%f: tensor<3x4xf32>, %d: tensor<5xf64>, %i: tensor<6xi64>) {
  %0 = tidal.clip %f {min = 0.0 : f32, max = 6.0 : f32} : tensor<3x4xf32>
  %1 = tidal.clip %f {min = -0.5 : f32, max = 0x7F800000 : f32} : tensor<3x4xf32>
  %2 = tidal.hard_sigmoid %f : tensor<3x4xf32>
  %3 = tidal.hard_sigmoid %f {alpha = 0.166666672 : f32} : tensor<3x4xf32>
  %4 = tidal.hard_swish %d : tensor<5xf64>
  %5 = tidal.elu %f {alpha = 0.5 : f32} : tensor<3x4xf32>
  %6 = tidal.selu %f : tensor<3x4xf32>
  %7 = tidal.celu %f : tensor<3x4xf32>
  %8 = tidal.softplus %f : tensor<3x4xf32>
  %9 = tidal.softsign %f : tensor<3x4xf32>
  %10 = tidal.mish %f : tensor<3x4xf32>
  %11 = tidal.abs %i : tensor<6xi64>
  %12 = tidal.reciprocal %f : tensor<3x4xf32>
  %13 = tidal.sin %f : tensor<3x4xf32>
  %14 = tidal.cos %f : tensor<3x4xf32>
  %15 = tidal.sign %i : tensor<6xi64>
  %16 = tidal.floor %f : tensor<3x4xf32>
  %17 = tidal.ceil %f : tensor<3x4xf32>
  %18 = tidal.round %d : tensor<5xf64>
  return
}

// CHECK-LABEL: func.func @backward
// CHECK: tidal.clip_backward %arg0, %arg1 {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32} : tensor<3x4xf32>
// CHECK: tidal.hard_sigmoid_backward %arg0, %arg1 {alpha = 0.166666672 : f32} : tensor<3x4xf32>
// CHECK: tidal.hard_swish_backward %arg0, %arg1 : tensor<3x4xf32>
// CHECK: tidal.elu_backward %arg0, %arg1 : tensor<3x4xf32>
// CHECK: tidal.selu_backward %arg0, %arg1 : tensor<3x4xf32>
// CHECK: tidal.celu_backward %arg0, %arg1 {alpha = 2.000000e+00 : f32} : tensor<3x4xf32>
// CHECK: tidal.softplus_backward %arg0, %arg1 : tensor<3x4xf32>
// CHECK: tidal.softsign_backward %arg0, %arg1 : tensor<3x4xf32>
// CHECK: tidal.mish_backward %arg0, %arg1 : tensor<3x4xf32>
func.func @backward(%g: tensor<3x4xf32>, %x: tensor<3x4xf32>) {
  %0 = tidal.clip_backward %g, %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<3x4xf32>
  %1 = tidal.hard_sigmoid_backward %g, %x {alpha = 0.166666672 : f32} : tensor<3x4xf32>
  %2 = tidal.hard_swish_backward %g, %x : tensor<3x4xf32>
  %3 = tidal.elu_backward %g, %x : tensor<3x4xf32>
  %4 = tidal.selu_backward %g, %x : tensor<3x4xf32>
  %5 = tidal.celu_backward %g, %x {alpha = 2.0 : f32} : tensor<3x4xf32>
  %6 = tidal.softplus_backward %g, %x : tensor<3x4xf32>
  %7 = tidal.softsign_backward %g, %x : tensor<3x4xf32>
  %8 = tidal.mish_backward %g, %x : tensor<3x4xf32>
  return
}
