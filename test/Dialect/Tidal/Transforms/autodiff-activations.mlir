// The backward graphs --tidal-autodiff builds for the activation family
// (ActivationRules.cpp): a backward op taking the forward input, forward ops
// for abs, reciprocal, sin and cos, nothing through the zero-gradient ops.
// RUN: tidal-opt %s -split-input-file -tidal-autodiff | FileCheck %s

// CHECK-LABEL: func.func @train_step
// CHECK: %[[C:.*]] = tidal.clip %arg0 {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32}
// CHECK: %[[H:.*]] = tidal.hard_swish %[[C]]
// CHECK: %[[S:.*]] = tidal.hard_sigmoid %[[H]] {alpha = 0.166666672 : f32}
// CHECK: %[[DH:.*]] = tidal.hard_sigmoid_backward %{{.*}}, %[[H]] {alpha = 0.166666672 : f32}
// CHECK: %[[DC:.*]] = tidal.hard_swish_backward %[[DH]], %[[C]]
// Clip's backward reads its output (the same mask), not its input.
// CHECK: %[[DX:.*]] = tidal.clip_backward %[[DC]], %[[C]] {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32}
// CHECK: return %{{.*}}, %[[DX]]
func.func @main(%x: tensor<2x8xf32> {tidal.name = "x", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %c = tidal.clip %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<2x8xf32>
  %h = tidal.hard_swish %c : tensor<2x8xf32>
  %s = tidal.hard_sigmoid %h {alpha = 0.166666672 : f32} : tensor<2x8xf32>
  %l = tidal.reduce_sum %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Elu, Selu, Celu, Softplus, Softsign and Mish each save their input.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[E:.*]] = tidal.elu %arg0
// CHECK: %[[SE:.*]] = tidal.selu %[[E]]
// CHECK: %[[CE:.*]] = tidal.celu %[[SE]]
// CHECK: %[[SP:.*]] = tidal.softplus %[[CE]]
// CHECK: %[[SS:.*]] = tidal.softsign %[[SP]]
// CHECK: tidal.mish_backward %{{.*}}, %[[SS]] :
// CHECK: tidal.softsign_backward %{{.*}}, %[[SP]] :
// CHECK: tidal.softplus_backward %{{.*}}, %[[CE]] :
// CHECK: tidal.celu_backward %{{.*}}, %[[SE]] {alpha = 2.000000e+00 : f32}
// CHECK: tidal.selu_backward %{{.*}}, %[[E]] :
// CHECK: tidal.elu_backward %{{.*}}, %arg0 {alpha = 5.000000e-01 : f32}
func.func @main(%x: tensor<4xf32> {tidal.name = "x", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %0 = tidal.elu %x {alpha = 0.5 : f32} : tensor<4xf32>
  %1 = tidal.selu %0 : tensor<4xf32>
  %2 = tidal.celu %1 {alpha = 2.0 : f32} : tensor<4xf32>
  %3 = tidal.softplus %2 : tensor<4xf32>
  %4 = tidal.softsign %3 : tensor<4xf32>
  %5 = tidal.mish %4 : tensor<4xf32>
  %l = tidal.reduce_sum %5 {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// d|x| = g * sign(x); d(1/x) = -(g * y * y); dsin = g * cos(x);
// dcos = -(g * sin(x)).
// CHECK-LABEL: func.func @train_step
// CHECK: %[[A:.*]] = tidal.abs %arg0
// CHECK: %[[R:.*]] = tidal.reciprocal %[[A]]
// CHECK: %[[S:.*]] = tidal.sin %[[R]]
// CHECK: %[[C:.*]] = tidal.cos %[[S]]
// CHECK: %[[SIN:.*]] = tidal.sin %[[S]]
// CHECK: %[[M1:.*]] = tidal.mul %{{.*}}, %[[SIN]]
// CHECK: %[[DS:.*]] = tidal.neg %[[M1]]
// CHECK: %[[COS:.*]] = tidal.cos %[[R]]
// CHECK: %[[DR:.*]] = tidal.mul %[[DS]], %[[COS]]
// CHECK: %[[YY:.*]] = tidal.mul %[[R]], %[[R]]
// CHECK: %[[M2:.*]] = tidal.mul %[[DR]], %[[YY]]
// CHECK: %[[DA:.*]] = tidal.neg %[[M2]]
// CHECK: %[[SG:.*]] = tidal.sign %arg0
// CHECK: %[[DX:.*]] = tidal.mul %[[DA]], %[[SG]]
// CHECK: return %{{.*}}, %[[DX]]
func.func @main(%x: tensor<4xf32> {tidal.name = "x", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %0 = tidal.abs %x : tensor<4xf32>
  %1 = tidal.reciprocal %0 : tensor<4xf32>
  %2 = tidal.sin %1 : tensor<4xf32>
  %3 = tidal.cos %2 : tensor<4xf32>
  %l = tidal.reduce_sum %3 {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Floor's gradient is zero: only the product's direct path reaches x.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[F:.*]] = tidal.floor %arg0
// CHECK: tidal.mul %arg0, %[[F]]
// CHECK-NOT: floor
// CHECK: %[[DX:.*]] = tidal.mul %{{.*}}, %[[F]]
// CHECK-NEXT: return %{{.*}}, %[[DX]]
func.func @main(%x: tensor<4xf32> {tidal.name = "x", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %f = tidal.floor %x : tensor<4xf32>
  %p = tidal.mul %x, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = tidal.reduce_sum %p {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
