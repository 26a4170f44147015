// Errors of the gradient and optimizer ops (GradOps.cpp, OptimizerOps.cpp).
// RUN: tidal-opt %s -split-input-file -verify-diagnostics

func.func @gradient_not_scalar(%y: tensor<2xf32>, %w: tensor<3xf32>) {
  // expected-error @+1 {{differentiates a scalar, got y of shape 2}}
  %0 = tidal.gradient %y, %w : (tensor<2xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @conv_data_shape(%g: tensor<1x4x4x4xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{gradient of shape 1x4x4x4 does not match the convolution output shape 1x4x3x3}}
  %0 = tidal.conv_backward_data %g, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x7x7xf32>
  return
}

// -----

func.func @conv_weights_group(%g: tensor<1x4x5x5xf32>, %x: tensor<1x4x7x7xf32>) {
  // expected-error @+1 {{group 3 does not fit input 1x4x7x7 and weight 4x4x3x3}}
  %0 = tidal.conv_backward_weights %g, %x {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<1x4x5x5xf32>, tensor<1x4x7x7xf32>) -> tensor<4x4x3x3xf32>
  return
}

// -----

func.func @max_pool_type(%g: tensor<1x1x2x2xf32>, %x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{result type must be the forward input's type}}
  %0 = tidal.max_pool_backward %g, %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x5x5xf32>
  return
}

// -----

func.func @slice_shape(%g: tensor<3xf32>) {
  // expected-error @+1 {{gradient of shape 3 does not match the slice output shape 2}}
  %0 = tidal.slice_backward %g {starts = array<i64: 0>, ends = array<i64: 4>, steps = array<i64: 2>} : (tensor<3xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @gather_shape(%g: tensor<3x2xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{gradient of shape 3x2 does not match the gather output shape 2x2}}
  %0 = tidal.gather_backward %g, %i {axis = 0 : i64} : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<7x2xf32>
  return
}

// -----

func.func @broadcast(%v: tensor<3xf32>) {
  // expected-error @+1 {{input of shape 3 does not broadcast to 4x2}}
  %0 = tidal.broadcast_to %v : (tensor<3xf32>) -> tensor<4x2xf32>
  return
}

// -----

func.func @dropout_mask(%g: tensor<2x3xf32>, %m: tensor<3x2xi1>) {
  // expected-error @+1 {{mask and gradient shapes differ}}
  %0 = tidal.dropout_backward %g, %m {ratio = 0.5 : f32} : (tensor<2x3xf32>, tensor<3x2xi1>) -> tensor<2x3xf32>
  return
}

// -----

func.func @softmax_axis(%g: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 out of range for rank 2}}
  %0 = tidal.softmax_backward %g, %g {axis = 2 : i64} : tensor<2x3xf32>
  return
}

// -----

func.func @bn_channels(%g: tensor<2x3xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{expects per-channel operands of shape 3, got 4}}
  %0:3 = tidal.batch_norm_backward %g, %g, %c, %c, %c : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x3xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @ln_stats(%g: tensor<2x3xf32>, %s: tensor<3xf32>, %st: tensor<2x3xf32>) {
  // expected-error @+1 {{statistics must have shape 2x1, got 2x3}}
  %0:3 = tidal.layer_norm_backward %g, %g, %s, %st, %st {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @sce_grad_shape(%gl: tensor<2xf32>, %lp: tensor<2x3xf32>, %l: tensor<2xi64>) {
  // expected-error @+1 {{loss gradient of shape 2 does not fit the reduction}}
  %0 = tidal.softmax_cross_entropy_loss_backward %gl, %lp, %l {reduction = #tidal<reduction mean>} : (tensor<2xf32>, tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @sgd_state_type(%p: tensor<3xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{requires gradient and state of the parameter's type 'tensor<3xf32>', got 'tensor<4xf32>'}}
  %0 = tidal.sgd_update %p, %g {lr = 0.1} : (tensor<3xf32>, tensor<4xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @sgd_negative_lr(%p: tensor<3xf32>) {
  // expected-error @+1 {{lr must be non-negative, got -1}}
  %0 = tidal.sgd_update %p, %p {lr = -1.0} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @nesterov_dampening(%p: tensor<3xf32>) {
  // expected-error @+1 {{Nesterov momentum requires a momentum and zero dampening}}
  %0:2 = tidal.sgd_momentum_update %p, %p, %p {lr = 0.1, momentum = 0.9, dampening = 0.1, nesterov = true} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @adam_betas(%p: tensor<3xf32>, %s: tensor<i64>) {
  // expected-error @+1 {{betas must lie in [0, 1), got 1.000000e+00}}
  %0:3 = tidal.adam_update %p, %p, %p, %p, %s {beta1 = 1.0} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i64>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @onnx_scalar_rate(%r: tensor<1xf32>, %s: tensor<i64>, %p: tensor<3xf32>) {
  // expected-error @+1 {{requires scalar learning rate and step count, got 'tensor<1xf32>'}}
  %0:2 = tidal.onnx_adagrad %r, %s, %p, %p, %p : (tensor<1xf32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return
}
