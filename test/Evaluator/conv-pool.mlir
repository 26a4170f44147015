// Convolution and pooling, forward and backward, against hand-derived values.
// RUN: tidal-eval %s --function conv --print | FileCheck %s --check-prefix=CONV
// RUN: tidal-eval %s --function maxpool --print | FileCheck %s --check-prefix=MAX
// RUN: tidal-eval %s --function avgpool --print | FileCheck %s --check-prefix=AVG

// x = [1, 2, 3, 4], w = [1, -1]: y[o] = x[o] - x[o+1] (+ bias 10).
// Backward data: dx[i] = sum_o dy[o] w[i-o] = [1, 2-1, 3-2, -3].
// Backward weights: dw[k] = sum_o dy[o] x[o+k] = [1+4+9, 2+6+12].
// Grouped (2 groups, 1x1 kernels [2], [3]): each channel scaled alone.
// CONV: result 0: tensor<1x1x3xf32> = [9, 9, 9]
// CONV: result 1: tensor<1x1x4xf32> = [1, 1, 1, -3]
// CONV: result 2: tensor<1x1x2xf32> = [14, 20]
// CONV: result 3: tensor<1x2x2xf32> = [2, 4, 9, 12]
func.func @conv() -> (tensor<1x1x3xf32>, tensor<1x1x4xf32>, tensor<1x1x2xf32>, tensor<1x2x2xf32>) {
  %x = tidal.constant dense<[[[1.0, 2.0, 3.0, 4.0]]]> : tensor<1x1x4xf32>
  %w = tidal.constant dense<[[[1.0, -1.0]]]> : tensor<1x1x2xf32>
  %b = tidal.constant dense<10.0> : tensor<1xf32>
  %0 = tidal.conv %x, %w, %b {dilations = array<i64: 1>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x1x4xf32>, tensor<1x1x2xf32>, tensor<1xf32>) -> tensor<1x1x3xf32>
  %dy = tidal.constant dense<[[[1.0, 2.0, 3.0]]]> : tensor<1x1x3xf32>
  %1 = tidal.conv_backward_data %dy, %w {dilations = array<i64: 1>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x1x3xf32>, tensor<1x1x2xf32>) -> tensor<1x1x4xf32>
  %2 = tidal.conv_backward_weights %dy, %x {dilations = array<i64: 1>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x1x3xf32>, tensor<1x1x4xf32>) -> tensor<1x1x2xf32>
  %xg = tidal.constant dense<[[[1.0, 2.0], [3.0, 4.0]]]> : tensor<1x2x2xf32>
  %wg = tidal.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %3 = tidal.conv %xg, %wg {dilations = array<i64: 1>, pads = array<i64: 0, 0>, strides = array<i64: 1>, group = 2 : i64} : (tensor<1x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2xf32>
  return %0, %1, %2, %3 : tensor<1x1x3xf32>, tensor<1x1x4xf32>, tensor<1x1x2xf32>, tensor<1x2x2xf32>
}

// Kernel 2, stride 2 on [1, 3, 3, 2]: maxima 3 (index 1) and 3 (index 2).
// Stride 1 on [5, 5, 1, 0]: the tie in the first window goes to index 0.
// MAX: result 0: tensor<1x1x2xf32> = [3, 3]
// MAX: result 1: tensor<1x1x4xf32> = [0, 1, 2, 0]
// MAX: result 2: tensor<1x1x4xf32> = [1, 1, 1, 0]
func.func @maxpool() -> (tensor<1x1x2xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>) {
  %x = tidal.constant dense<[[[1.0, 3.0, 3.0, 2.0]]]> : tensor<1x1x4xf32>
  %0 = tidal.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : (tensor<1x1x4xf32>) -> tensor<1x1x2xf32>
  %dy = tidal.constant dense<[[[1.0, 2.0]]]> : tensor<1x1x2xf32>
  %1 = tidal.max_pool_backward %dy, %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : (tensor<1x1x2xf32>, tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  %t = tidal.constant dense<[[[5.0, 5.0, 1.0, 0.0]]]> : tensor<1x1x4xf32>
  %ones = tidal.constant dense<1.0> : tensor<1x1x3xf32>
  %2 = tidal.max_pool_backward %ones, %t {kernel_shape = array<i64: 2>, strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : (tensor<1x1x3xf32>, tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  return %0, %1, %2 : tensor<1x1x2xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>
}

// Kernel 2, stride 2, pads 1/1 on [1, 2, 3, 4]: windows {pad, 1}, {2, 3},
// {4, pad}. Without the padding counted: [1, 2.5, 4]; with it: [0.5, 2.5, 2].
// Backward of ones: each in-bounds element gets 1/divisor.
// ceil_mode, kernel 2, stride 2 on [1..5]: the last window holds 5 alone.
// AVG: result 0: tensor<1x1x3xf32> = [1, 2.5, 4]
// AVG: result 1: tensor<1x1x3xf32> = [0.5, 2.5, 2]
// AVG: result 2: tensor<1x1x4xf32> = [1, 0.5, 0.5, 1]
// AVG: result 3: tensor<1x1x4xf32> = [0.5, 0.5, 0.5, 0.5]
// AVG: result 4: tensor<1x1x3xf32> = [1.5, 3.5, 5]
// AVG: result 5: tensor<1x1x1xf32> = [2.5]
func.func @avgpool() -> (tensor<1x1x3xf32>, tensor<1x1x3xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>, tensor<1x1x3xf32>, tensor<1x1x1xf32>) {
  %x = tidal.constant dense<[[[1.0, 2.0, 3.0, 4.0]]]> : tensor<1x1x4xf32>
  %0 = tidal.average_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 1, 1>} : (tensor<1x1x4xf32>) -> tensor<1x1x3xf32>
  %1 = tidal.average_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 1, 1>, count_include_pad = true} : (tensor<1x1x4xf32>) -> tensor<1x1x3xf32>
  %ones = tidal.constant dense<1.0> : tensor<1x1x3xf32>
  %2 = tidal.average_pool_backward %ones {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 1, 1>} : (tensor<1x1x3xf32>) -> tensor<1x1x4xf32>
  %3 = tidal.average_pool_backward %ones {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 1, 1>, count_include_pad = true} : (tensor<1x1x3xf32>) -> tensor<1x1x4xf32>
  %x5 = tidal.constant dense<[[[1.0, 2.0, 3.0, 4.0, 5.0]]]> : tensor<1x1x5xf32>
  %4 = tidal.average_pool %x5 {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 0, 0>, ceil_mode = true} : (tensor<1x1x5xf32>) -> tensor<1x1x3xf32>
  %5 = tidal.global_average_pool %x : (tensor<1x1x4xf32>) -> tensor<1x1x1xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<1x1x3xf32>, tensor<1x1x3xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>, tensor<1x1x3xf32>, tensor<1x1x1xf32>
}
