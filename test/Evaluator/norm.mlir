// Batch and layer normalization, forward and backward, hand-derived.
// RUN: tidal-eval %s --function batch_norm --print | FileCheck %s --check-prefix=BN
// RUN: tidal-eval %s --function layer_norm --print | FileCheck %s --check-prefix=LN

// x = [1, 3] (N = 2, C = 1): mean 2, biased var 1, unbiased var 2.
// Running stats (momentum 0.5, exact in f32): 0.5 * 0 + 0.5 * 2 and
// 0.5 * 1 + 0.5 * 2 (the unbiased variance).
// Backward on x = [0, 0, 3, 3] (mean 1.5, var 2.25, xhat = [-1, -1, 1, 1])
// with dy = [1, 0, 0, 0], scale 1: grad_bias 1, grad_scale -1,
// dx = (dy - 1/4 - xhat * -1/4) / 1.5 = [1/3, -1/3, 0, 0].
// BN: result 0: tensor<2x1xf64> = [-1, 1]
// BN: result 1: tensor<1xf64> = [1]
// BN: result 2: tensor<1xf64> = [1.5]
// BN: result 3: tensor<1xf64> = [2]
// BN: result 4: tensor<1xf64> = [1]
// BN: result 5: tensor<4x1xf64> = [0.333333333333, -0.333333333333, 0, 0]
// BN: result 6: tensor<1xf64> = [-1]
// BN: result 7: tensor<1xf64> = [1]
// BN: result 8: tensor<2x1xf64> = [-0.5, 0.5]
func.func @batch_norm() -> (tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<4x1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<2x1xf64>) {
  %x = tidal.constant dense<[[1.0], [3.0]]> : tensor<2x1xf64>
  %one = tidal.constant dense<1.0> : tensor<1xf64>
  %zero = tidal.constant dense<0.0> : tensor<1xf64>
  %0:5 = tidal.batch_norm_training %x, %one, %zero, %zero, %one {epsilon = 0.0 : f32, momentum = 0.5 : f32} : (tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>) -> (tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>)
  %x4 = tidal.constant dense<[[0.0], [0.0], [3.0], [3.0]]> : tensor<4x1xf64>
  %dy = tidal.constant dense<[[1.0], [0.0], [0.0], [0.0]]> : tensor<4x1xf64>
  %mean = tidal.constant dense<1.5> : tensor<1xf64>
  %var = tidal.constant dense<2.25> : tensor<1xf64>
  %1:3 = tidal.batch_norm_backward %dy, %x4, %one, %mean, %var {epsilon = 0.0 : f32} : (tensor<4x1xf64>, tensor<4x1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>) -> (tensor<4x1xf64>, tensor<1xf64>, tensor<1xf64>)
  // Inference with mean 2, var 4, scale 1, bias 0: (x - 2) / 2.
  %four = tidal.constant dense<4.0> : tensor<1xf64>
  %two = tidal.constant dense<2.0> : tensor<1xf64>
  %2 = tidal.batch_norm_inference %x, %one, %zero, %two, %four {epsilon = 0.0 : f32} : (tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>) -> tensor<2x1xf64>
  return %0#0, %0#1, %0#2, %0#3, %0#4, %1#0, %1#1, %1#2, %2 : tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<4x1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<2x1xf64>
}

// One row [0, 0, 3, 3]: mean 1.5, inv_std 1/1.5, y = xhat (+ bias 1).
// Backward with dy = [1, 0, 0, 0], scale 1: g = dy, mean(g) = 1/4,
// mean(g * xhat) = -1/4, dx = (g - 1/4 + xhat / 4) / 1.5 = [1/3, -1/3, 0, 0];
// grad_scale = dy * xhat, grad_bias = dy.
// LN: result 0: tensor<1x4xf64> = [0, 0, 2, 2]
// LN: result 1: tensor<1x1xf64> = [1.5]
// LN: result 2: tensor<1x1xf64> = [0.666666666667]
// LN: result 3: tensor<1x4xf64> = [0.333333333333, -0.333333333333, 0, 0]
// LN: result 4: tensor<4xf64> = [-1, 0, 0, 0]
// LN: result 5: tensor<4xf64> = [1, 0, 0, 0]
func.func @layer_norm() -> (tensor<1x4xf64>, tensor<1x1xf64>, tensor<1x1xf64>, tensor<1x4xf64>, tensor<4xf64>, tensor<4xf64>) {
  %x = tidal.constant dense<[[0.0, 0.0, 3.0, 3.0]]> : tensor<1x4xf64>
  %scale = tidal.constant dense<1.0> : tensor<4xf64>
  %y, %mean, %inv = tidal.layer_norm %x, %scale, %scale {axis = 1 : i64, epsilon = 0.0 : f32} : (tensor<1x4xf64>, tensor<4xf64>, tensor<4xf64>) -> (tensor<1x4xf64>, tensor<1x1xf64>, tensor<1x1xf64>)
  %dy = tidal.constant dense<[[1.0, 0.0, 0.0, 0.0]]> : tensor<1x4xf64>
  %0:3 = tidal.layer_norm_backward %dy, %x, %scale, %mean, %inv {axis = 1 : i64} : (tensor<1x4xf64>, tensor<1x4xf64>, tensor<4xf64>, tensor<1x1xf64>, tensor<1x1xf64>) -> (tensor<1x4xf64>, tensor<4xf64>, tensor<4xf64>)
  return %y, %mean, %inv, %0#0, %0#1, %0#2 : tensor<1x4xf64>, tensor<1x1xf64>, tensor<1x1xf64>, tensor<1x4xf64>, tensor<4xf64>, tensor<4xf64>
}

// relu = true (tidal-fuse-epilogues): max(y, 0), statistics unchanged.
// RUN: tidal-eval %s --function batch_norm_relu --print | FileCheck %s --check-prefix=FUSED
// FUSED: result 0: tensor<2x1xf64> = [0, 1]
// FUSED: result 1: tensor<1xf64> = [1]
// FUSED: result 2: tensor<2x1xf64> = [0, 0.5]
func.func @batch_norm_relu() -> (tensor<2x1xf64>, tensor<1xf64>, tensor<2x1xf64>) {
  %x = tidal.constant dense<[[1.0], [3.0]]> : tensor<2x1xf64>
  %one = tidal.constant dense<1.0> : tensor<1xf64>
  %zero = tidal.constant dense<0.0> : tensor<1xf64>
  %two = tidal.constant dense<2.0> : tensor<1xf64>
  %four = tidal.constant dense<4.0> : tensor<1xf64>
  %0:5 = tidal.batch_norm_training %x, %one, %zero, %zero, %one {epsilon = 0.0 : f32, momentum = 0.5 : f32, relu = true} : (tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>) -> (tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>)
  %1 = tidal.batch_norm_inference %x, %one, %zero, %two, %four {epsilon = 0.0 : f32, relu = true} : (tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>) -> tensor<2x1xf64>
  return %0#0, %0#1, %1 : tensor<2x1xf64>, tensor<1xf64>, tensor<2x1xf64>
}

// clip_min/clip_max (tidal-fuse-epilogues on ReLU6): tidal.clip's formula
// on y = [-1, 1] (training) and [-0.5, 0.5] (inference), bounds [-0.75, 0.25].
// RUN: tidal-eval %s --function batch_norm_clip --print | FileCheck %s --check-prefix=CLIP
// CLIP: result 0: tensor<2x1xf64> = [-0.75, 0.25]
// CLIP: result 1: tensor<1xf64> = [1]
// CLIP: result 2: tensor<2x1xf64> = [-0.5, 0.25]
func.func @batch_norm_clip() -> (tensor<2x1xf64>, tensor<1xf64>, tensor<2x1xf64>) {
  %x = tidal.constant dense<[[1.0], [3.0]]> : tensor<2x1xf64>
  %one = tidal.constant dense<1.0> : tensor<1xf64>
  %zero = tidal.constant dense<0.0> : tensor<1xf64>
  %two = tidal.constant dense<2.0> : tensor<1xf64>
  %four = tidal.constant dense<4.0> : tensor<1xf64>
  %0:5 = tidal.batch_norm_training %x, %one, %zero, %zero, %one {epsilon = 0.0 : f32, momentum = 0.5 : f32, clip_min = -0.75 : f32, clip_max = 0.25 : f32} : (tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>) -> (tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>)
  %1 = tidal.batch_norm_inference %x, %one, %zero, %two, %four {epsilon = 0.0 : f32, clip_min = -0.75 : f32, clip_max = 0.25 : f32} : (tensor<2x1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>, tensor<1xf64>) -> tensor<2x1xf64>
  return %0#0, %0#1, %1 : tensor<2x1xf64>, tensor<1xf64>, tensor<2x1xf64>
}
