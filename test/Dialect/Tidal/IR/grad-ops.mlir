// Round trip of the gradient and optimizer ops (TidalGradOps.td,
// TidalOptimizerOps.td).
// RUN: tidal-opt %s | tidal-opt | FileCheck %s

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%g: tensor<2x3xf32>, %y: tensor<2x3xf32>, %m: tensor<2x3xi1>) {
  // CHECK: tidal.relu_backward %{{.*}}, %{{.*}} : tensor<2x3xf32>
  %0 = tidal.relu_backward %g, %y : tensor<2x3xf32>
  // CHECK: tidal.leaky_relu_backward {{.*}} {alpha = 2.000000e-01 : f32}
  %1 = tidal.leaky_relu_backward %g, %y {alpha = 0.2 : f32} : tensor<2x3xf32>
  %2 = tidal.sigmoid_backward %g, %y : tensor<2x3xf32>
  %3 = tidal.tanh_backward %g, %y : tensor<2x3xf32>
  %4 = tidal.erf_backward %g, %y : tensor<2x3xf32>
  // CHECK: tidal.dropout_backward {{.*}} -> tensor<2x3xf32>
  %5 = tidal.dropout_backward %g, %m {ratio = 0.5 : f32} : (tensor<2x3xf32>, tensor<2x3xi1>) -> tensor<2x3xf32>
  // CHECK: tidal.softmax_backward {{.*}} {axis = 1 : i64} : tensor<2x3xf32>
  %6 = tidal.softmax_backward %g, %y {axis = 1 : i64} : tensor<2x3xf32>
  %7 = tidal.log_softmax_backward %g, %y {axis = 0 : i64} : tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @windows
func.func @windows(%g: tensor<1x4x3x3xf32>, %w: tensor<4x2x3x3xf32>, %x: tensor<1x4x7x7xf32>, %gp: tensor<1x4x3x3xf32>) {
  // CHECK: tidal.conv_backward_data {{.*}} -> tensor<1x4x7x7xf32>
  %0 = tidal.conv_backward_data %g, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x7x7xf32>
  // CHECK: tidal.conv_backward_weights {{.*}} -> tensor<4x2x3x3xf32>
  %1 = tidal.conv_backward_weights %g, %x {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x3x3xf32>, tensor<1x4x7x7xf32>) -> tensor<4x2x3x3xf32>
  // CHECK: tidal.max_pool_backward
  %2 = tidal.max_pool_backward %gp, %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x3x3xf32>, tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32>
  // CHECK: tidal.average_pool_backward
  %3 = tidal.average_pool_backward %gp {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} : (tensor<1x4x3x3xf32>) -> tensor<1x4x6x5xf32>
  return
}

// CHECK-LABEL: func.func @structural
func.func @structural(%g: tensor<2x2xf32>, %i: tensor<2xi64>, %v: tensor<3xf32>) {
  // CHECK: tidal.broadcast_to {{.*}} -> tensor<4x3xf32>
  %0 = tidal.broadcast_to %v : (tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: tidal.slice_backward {{.*}} -> tensor<5x2xf32>
  %1 = tidal.slice_backward %g {starts = array<i64: 4, 0>, ends = array<i64: -1, 2>, steps = array<i64: -3, 1>} : (tensor<2x2xf32>) -> tensor<5x2xf32>
  // CHECK: tidal.gather_backward {{.*}} -> tensor<7x2xf32>
  %2 = tidal.gather_backward %g, %i {axis = 0 : i64} : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<7x2xf32>
  return
}

// CHECK-LABEL: func.func @norms_and_losses
func.func @norms_and_losses(%g: tensor<2x3x4xf32>, %x: tensor<2x3x4xf32>, %c: tensor<3xf32>, %ln: tensor<2x3x1xf32>, %s: tensor<4xf32>, %gl: tensor<f32>, %lp: tensor<2x3xf32>, %l: tensor<2xi64>) {
  // CHECK: tidal.batch_norm_backward {{.*}} -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  %0:3 = tidal.batch_norm_backward %g, %x, %c, %c, %c : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  // CHECK: tidal.layer_norm_backward {{.*}} -> (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>)
  %1:3 = tidal.layer_norm_backward %g, %x, %s, %ln, %ln {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>) -> (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK: tidal.softmax_cross_entropy_loss_backward {{.*}} -> tensor<2x3xf32>
  %2 = tidal.softmax_cross_entropy_loss_backward %gl, %lp, %l {reduction = #tidal<reduction mean>} : (tensor<f32>, tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  // CHECK: tidal.nll_loss_backward {{.*}} -> tensor<2x3xf32>
  %3 = tidal.nll_loss_backward %gl, %l, %c {reduction = #tidal<reduction sum>, ignore_index = 1 : i64} : (tensor<f32>, tensor<2xi64>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @gradient_marker
func.func @gradient_marker(%y: tensor<f32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: tidal.gradient {{.*}} : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %0 = tidal.gradient %y, %w : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @optimizers
func.func @optimizers(%p: tensor<3xf32>, %g: tensor<3xf32>, %s: tensor<i64>, %r: tensor<f32>) {
  // CHECK: tidal.sgd_update {{.*}} {lr = 1.000000e-01 : f64, weight_decay = 1.000000e-03 : f64}
  %0 = tidal.sgd_update %p, %g {lr = 0.1, weight_decay = 0.001} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  // CHECK: tidal.sgd_momentum_update {{.*}} nesterov = true
  %1:2 = tidal.sgd_momentum_update %p, %g, %p {lr = 0.1, momentum = 0.9, nesterov = true} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  // CHECK: tidal.adam_update {{.*}} {decoupled = true, weight_decay = 1.000000e-02 : f64}
  %2:3 = tidal.adam_update %p, %g, %p, %p, %s {decoupled = true, weight_decay = 0.01} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i64>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  // CHECK: tidal.onnx_momentum
  %3:2 = tidal.onnx_momentum %r, %s, %p, %g, %p {alpha = 0.9, beta = 1.0, norm_coefficient = 0.0} : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  // CHECK: tidal.onnx_adagrad
  %4:2 = tidal.onnx_adagrad %r, %s, %p, %g, %p : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  // CHECK: tidal.onnx_adam
  %5:3 = tidal.onnx_adam %r, %s, %p, %g, %p, %p : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}
