// Optimizer updates against hand-derived values (PyTorch 1.13 torch.optim
// single-tensor formulas; ai.onnx.preview.training reference formulas).
// RUN: tidal-eval %s --function sgd --print | FileCheck %s --check-prefix=SGD
// RUN: tidal-eval %s --function momentum --print | FileCheck %s --check-prefix=MOM
// RUN: tidal-eval %s --function adam --print | FileCheck %s --check-prefix=ADAM
// RUN: tidal-eval %s --function onnx_momentum --print | FileCheck %s --check-prefix=OMOM
// RUN: tidal-eval %s --function onnx_adagrad --print | FileCheck %s --check-prefix=OADAGRAD
// RUN: tidal-eval %s --function onnx_adam --print | FileCheck %s --check-prefix=OADAM

// d = g + 0.01 p = [0.51, -0.98]; p' = p - 0.1 d.
// SGD: result 0: tensor<2xf32> = [0.949, 2.098]
func.func @sgd() -> tensor<2xf32> {
  %p = tidal.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %g = tidal.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %0 = tidal.sgd_update %p, %g {lr = 0.1 : f64, weight_decay = 0.01 : f64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// Nesterov: buf' = 0.9 * 0.2 + 0.5 = 0.68, d = 0.5 + 0.9 * 0.68 = 1.112,
// p' = 1 - 0.1 * 1.112 = 0.8888. Plain with dampening 0.1:
// buf' = 0.18 + 0.9 * 0.5 = 0.63, p' = 1 - 0.1 * 0.63 = 0.937.
// MOM: result 0: tensor<1xf32> = [0.8888]
// MOM: result 1: tensor<1xf32> = [0.68]
// MOM: result 2: tensor<1xf32> = [0.937]
func.func @momentum() -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) {
  %p = tidal.constant dense<1.0> : tensor<1xf32>
  %g = tidal.constant dense<0.5> : tensor<1xf32>
  %b = tidal.constant dense<0.2> : tensor<1xf32>
  %0:2 = tidal.sgd_momentum_update %p, %g, %b {lr = 0.1 : f64, momentum = 0.9 : f64, nesterov = true} : (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>)
  %1:2 = tidal.sgd_momentum_update %p, %g, %b {lr = 0.1 : f64, momentum = 0.9 : f64, dampening = 0.1 : f64} : (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>)
  return %0#0, %0#1, %1#0 : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
}

// Step 1: m' = 0.05, v' = 0.00025; m'/(1-0.9) = 0.5, sqrt(v'/(1-0.999)) = 0.5,
// so p' = p - lr * 1 = 0.9. AdamW (weight decay 0.1): p = 0.99 first, then
// 0.89. Adam with weight decay 1: g = 0.5 + 1 = 1.5, the step is still lr.
// ADAM: result 0: tensor<1xf32> = [0.9]
// ADAM: result 1: tensor<1xf32> = [0.05]
// ADAM: result 2: tensor<1xf32> = [0.00025]
// ADAM: result 3: tensor<1xf32> = [0.89]
// ADAM: result 4: tensor<1xf32> = [0.15]
func.func @adam() -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) {
  %p = tidal.constant dense<1.0> : tensor<1xf32>
  %g = tidal.constant dense<0.5> : tensor<1xf32>
  %z = tidal.constant dense<0.0> : tensor<1xf32>
  %s = tidal.constant dense<1> : tensor<i64>
  %0:3 = tidal.adam_update %p, %g, %z, %z, %s {lr = 0.1 : f64, eps = 0.0 : f64} : (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
  %1:3 = tidal.adam_update %p, %g, %z, %z, %s {lr = 0.1 : f64, eps = 0.0 : f64, weight_decay = 0.1 : f64, decoupled = true} : (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
  %2:3 = tidal.adam_update %p, %g, %z, %z, %s {lr = 0.1 : f64, eps = 0.0 : f64, weight_decay = 1.0 : f64} : (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<i64>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
  return %0#0, %0#1, %0#2, %1#0, %2#1 : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
}

// ONNX Momentum, alpha 0.9, beta 0.5: at t = 0 the gradient is not scaled,
// v' = 0.9 * 0.2 + 0.5 = 0.68, x' = 1 - 0.1 * 0.68; at t = 1
// v' = 0.18 + 0.25 = 0.43, x' = 0.957; Nesterov at t = 1:
// x' = 1 - 0.1 * (0.5 + 0.9 * 0.43) = 0.9113.
// OMOM: result 0: tensor<1xf32> = [0.932]
// OMOM: result 1: tensor<1xf32> = [0.68]
// OMOM: result 2: tensor<1xf32> = [0.957]
// OMOM: result 3: tensor<1xf32> = [0.43]
// OMOM: result 4: tensor<1xf32> = [0.9113]
func.func @onnx_momentum() -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) {
  %r = tidal.constant dense<0.1> : tensor<f32>
  %t0 = tidal.constant dense<0> : tensor<i64>
  %t1 = tidal.constant dense<1> : tensor<i64>
  %x = tidal.constant dense<1.0> : tensor<1xf32>
  %g = tidal.constant dense<0.5> : tensor<1xf32>
  %v = tidal.constant dense<0.2> : tensor<1xf32>
  %0:2 = tidal.onnx_momentum %r, %t0, %x, %g, %v {alpha = 0.9 : f64, beta = 0.5 : f64, norm_coefficient = 0.0 : f64} : (tensor<f32>, tensor<i64>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>)
  %1:2 = tidal.onnx_momentum %r, %t1, %x, %g, %v {alpha = 0.9 : f64, beta = 0.5 : f64, norm_coefficient = 0.0 : f64} : (tensor<f32>, tensor<i64>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>)
  %2:2 = tidal.onnx_momentum %r, %t1, %x, %g, %v {alpha = 0.9 : f64, beta = 0.5 : f64, norm_coefficient = 0.0 : f64, nesterov = true} : (tensor<f32>, tensor<i64>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>)
  return %0#0, %0#1, %1#0, %1#1, %2#0 : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
}

// r' = 0.1 / (1 + 1 * 1) = 0.05, g = 3 + 0.5 * 2 = 4 (norm 0.5),
// h' = 9 + 16 = 25, x' = 2 - 0.05 * 4 / 5 = 1.96.
// OADAGRAD: result 0: tensor<1xf32> = [1.96]
// OADAGRAD: result 1: tensor<1xf32> = [25]
func.func @onnx_adagrad() -> (tensor<1xf32>, tensor<1xf32>) {
  %r = tidal.constant dense<0.1> : tensor<f32>
  %t = tidal.constant dense<1> : tensor<i64>
  %x = tidal.constant dense<2.0> : tensor<1xf32>
  %g = tidal.constant dense<3.0> : tensor<1xf32>
  %h = tidal.constant dense<9.0> : tensor<1xf32>
  %0:2 = tidal.onnx_adagrad %r, %t, %x, %g, %h {decay_factor = 1.0 : f64, epsilon = 0.0 : f64, norm_coefficient = 0.5 : f64} : (tensor<f32>, tensor<i64>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>)
  return %0#0, %0#1 : tensor<1xf32>, tensor<1xf32>
}

// alpha 0.5, beta 0.75, t 1: v' = 0.5 * 2 = 1, h' = 0.25 * 4 = 1,
// r' = 0.1 * sqrt(0.25) / 0.5 = 0.1, x' = 1 - 0.1 = 0.9, then
// x' *= 1 - 0.5 = 0.45. At t = 0 there is no bias correction: the same.
// OADAM: result 0: tensor<1xf32> = [0.45]
// OADAM: result 1: tensor<1xf32> = [1]
// OADAM: result 2: tensor<1xf32> = [1]
// OADAM: result 3: tensor<1xf32> = [0.9]
func.func @onnx_adam() -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) {
  %r = tidal.constant dense<0.1> : tensor<f32>
  %t = tidal.constant dense<1> : tensor<i64>
  %t0 = tidal.constant dense<0> : tensor<i64>
  %x = tidal.constant dense<1.0> : tensor<1xf32>
  %g = tidal.constant dense<2.0> : tensor<1xf32>
  %z = tidal.constant dense<0.0> : tensor<1xf32>
  %0:3 = tidal.onnx_adam %r, %t, %x, %g, %z, %z {alpha = 0.5 : f64, beta = 0.75 : f64, epsilon = 0.0 : f64, norm_coefficient_post = 0.5 : f64} : (tensor<f32>, tensor<i64>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
  %1:3 = tidal.onnx_adam %r, %t0, %x, %g, %z, %z {alpha = 0.5 : f64, beta = 0.75 : f64, epsilon = 0.0 : f64} : (tensor<f32>, tensor<i64>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
  return %0#0, %0#1, %0#2, %1#0 : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
}
