// Errors of the convolution, pooling, normalization, dropout, softmax and
// loss ops (NNOps.cpp).
// RUN: tidal-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

func.func @conv_input_rank(%x: tensor<4x3xf32>, %w: tensor<4x3xf32>) {
  // expected-error @+2 {{expects input of rank 3 or more, got 4x3}}
  // expected-error @+1 {{'tidal.conv' op failed to infer returned types}}
  %0 = tidal.conv %x, %w {strides = array<i64>, pads = array<i64>, dilations = array<i64>} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @conv_weight_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+2 {{weight rank 3 differs from input rank 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_group_zero(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+2 {{group 0 must divide input and output channels}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// 3 groups divide the 6 input but not the 4 output channels.
func.func @conv_group_divides(%x: tensor<1x6x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+2 {{group 3 must divide input and output channels}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<1x6x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{weight expects 6 input channels, input has 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_attr_sizes(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{expects 2 strides and dilations and 4 pads for a 4-D input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_zero_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{kernel, strides and dilations must be positive and pads non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.conv %x, %w {strides = array<i64: 1, 0>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_negative_pad(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{kernel, strides and dilations must be positive and pads non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, -1>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Dilation 2 makes the 3-wide kernel span 5 > 4.
func.func @conv_window_too_big(%x: tensor<1x3x4x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{window of size 3 does not fit spatial dim 0 of size 4 with its padding}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 2, 1>} : (tensor<1x3x4x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x6xf32>
  return
}

// -----

func.func @conv_element_types(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) {
  // expected-error @+1 {{'tidal.conv' op requires input and weight of the same element type}}
  %0 = tidal.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_bias_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'tidal.conv' op bias must be 1-D with one entry per output channel}}
  %0 = tidal.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_bias_element_type(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'tidal.conv' op requires a bias of the input's element type}}
  %0 = tidal.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf16>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// The verifier runs before inference has checked the weight's rank; it must
// not read the output channels of a rank-0 weight.
func.func @conv_bias_scalar_weight(%x: tensor<1x3x8x8xf32>, %w: tensor<f32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{weight rank 0 differs from input rank 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<f32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_bias_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{'tidal.conv' op bias must be 1-D with one entry per output channel}}
  %0 = tidal.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

func.func @max_pool_rank(%x: tensor<3x8xf32>) {
  // expected-error @+2 {{expects input of rank 3 or more, got 3x8}}
  // expected-error @+1 {{'tidal.max_pool' op failed to infer returned types}}
  %0 = tidal.max_pool %x {kernel_shape = array<i64>, strides = array<i64>, pads = array<i64>, dilations = array<i64>} : (tensor<3x8xf32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @max_pool_kernel_dims(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{expects 2 kernel dims, got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @max_pool_dilations(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{expects 2 strides and dilations and 4 pads for a 4-D input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @max_pool_zero_dilation(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{kernel, strides and dilations must be positive and pads non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @average_pool_rank(%x: tensor<8xf32>) {
  // expected-error @+2 {{expects input of rank 3 or more, got 8}}
  // expected-error @+1 {{'tidal.average_pool' op failed to infer returned types}}
  %0 = tidal.average_pool %x {kernel_shape = array<i64>, strides = array<i64>, pads = array<i64>} : (tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @average_pool_zero_kernel(%x: tensor<1x3x8xf32>) {
  // expected-error @+2 {{kernel, strides and dilations must be positive and pads non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.average_pool %x {kernel_shape = array<i64: 0>, strides = array<i64: 1>, pads = array<i64: 0, 0>} : (tensor<1x3x8xf32>) -> tensor<1x3x8xf32>
  return
}

// -----

// Padding counts: 4 + 1 + 1 = 6 fits a 6-wide window, 4 + 1 does not.
func.func @average_pool_window(%x: tensor<1x3x4xf32>) {
  // expected-error @+2 {{window of size 6 does not fit spatial dim 0 of size 4 with its padding}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.average_pool %x {kernel_shape = array<i64: 6>, strides = array<i64: 1>, pads = array<i64: 1, 0>} : (tensor<1x3x4xf32>) -> tensor<1x3x1xf32>
  return
}

// -----

func.func @global_average_pool_rank(%x: tensor<2x16xf32>) {
  // expected-error @+2 {{expects input of rank 3 or more, got 2x16}}
  // expected-error @+1 {{'tidal.global_average_pool' op failed to infer returned types}}
  %0 = tidal.global_average_pool %x : (tensor<2x16xf32>) -> tensor<2x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

func.func @batch_norm_inference_rank(%x: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'tidal.batch_norm_inference' op expects an input of rank 2 or more}}
  %0 = tidal.batch_norm_inference %x, %c, %c, %c, %c : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return
}

// -----

func.func @batch_norm_inference_channels(%x: tensor<8x16x4x4xf32>, %c: tensor<16xf32>, %v: tensor<8xf32>) {
  // expected-error @+1 {{'tidal.batch_norm_inference' op expects per-channel operands of shape 16, got 8}}
  %0 = tidal.batch_norm_inference %x, %c, %c, %c, %v : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8xf32>) -> tensor<8x16x4x4xf32>
  return
}

// -----

// The fused epilogues (tidal-fuse-epilogues): clip bounds come in pairs,
// and one epilogue at most.
func.func @batch_norm_inference_half_clip(%x: tensor<8x16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'tidal.batch_norm_inference' op expects clip_min and clip_max together}}
  %0 = tidal.batch_norm_inference %x, %c, %c, %c, %c {clip_min = 0.0 : f32} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return
}

// -----

func.func @batch_norm_training_two_epilogues(%x: tensor<8x16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'tidal.batch_norm_training' op expects at most one fused epilogue (relu or clip_min/clip_max)}}
  %0:5 = tidal.batch_norm_training %x, %c, %c, %c, %c {relu = true, clip_min = 0.0 : f32, clip_max = 6.0 : f32} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

func.func @batch_norm_training_rank(%x: tensor<16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'tidal.batch_norm_training' op expects an input of rank 2 or more}}
  %0:5 = tidal.batch_norm_training %x, %c, %c, %c, %c : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

func.func @batch_norm_training_channels(%x: tensor<8x16xf32>, %c: tensor<16xf32>, %s: tensor<1x16xf32>) {
  // expected-error @+1 {{'tidal.batch_norm_training' op expects per-channel operands of shape 16, got 1x16}}
  %0:5 = tidal.batch_norm_training %x, %s, %c, %c, %c : (tensor<8x16xf32>, tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

func.func @batch_norm_training_momentum(%x: tensor<8x16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'tidal.batch_norm_training' op momentum must lie in [0, 1], got 1.500000e+00}}
  %0:5 = tidal.batch_norm_training %x, %c, %c, %c, %c {momentum = 1.5 : f32} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

func.func @batch_norm_training_momentum_nan(%x: tensor<8x16xf32>, %c: tensor<16xf32>) {
  // expected-error @+1 {{'tidal.batch_norm_training' op momentum must lie in [0, 1], got nan}}
  %0:5 = tidal.batch_norm_training %x, %c, %c, %c, %c {momentum = 0x7FC00000 : f32} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

func.func @layer_norm_axis(%x: tensor<8x128xf32>, %s: tensor<128xf32>) {
  // expected-error @+2 {{axis 2 out of range for rank 2}}
  // expected-error @+1 {{'tidal.layer_norm' op failed to infer returned types}}
  %0:3 = tidal.layer_norm %x, %s {axis = 2 : i64} : (tensor<8x128xf32>, tensor<128xf32>) -> (tensor<8x128xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
  return
}

// -----

// Axes are normalized at import: a negative one is an error here.
func.func @layer_norm_negative_axis(%x: tensor<8x128xf32>, %s: tensor<128xf32>) {
  // expected-error @+2 {{axis -1 out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = tidal.layer_norm %x, %s {axis = -1 : i64} : (tensor<8x128xf32>, tensor<128xf32>) -> (tensor<8x128xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
  return
}

// -----

// The verifier runs before inference has checked the axis; it must not
// index the shape with it.
func.func @layer_norm_huge_axis(%x: tensor<8x128xf32>, %s: tensor<128xf32>) {
  // expected-error @+2 {{axis 1000000 out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = tidal.layer_norm %x, %s {axis = 1000000 : i64} : (tensor<8x128xf32>, tensor<128xf32>) -> (tensor<8x128xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
  return
}

// -----

func.func @layer_norm_scale(%x: tensor<2x3x4x5xf32>, %s: tensor<3x4x5xf32>) {
  // expected-error @+1 {{'tidal.layer_norm' op scale and bias must broadcast to the normalized shape 4x5, got 3x4x5}}
  %0:3 = tidal.layer_norm %x, %s {axis = 2 : i64} : (tensor<2x3x4x5xf32>, tensor<3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>)
  return
}

// -----

func.func @layer_norm_bias(%x: tensor<2x3x4x5xf32>, %s: tensor<5xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'tidal.layer_norm' op scale and bias must broadcast to the normalized shape 4x5, got 4}}
  %0:3 = tidal.layer_norm %x, %s, %b {axis = 2 : i64} : (tensor<2x3x4x5xf32>, tensor<5xf32>, tensor<4xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>)
  return
}

// -----

func.func @layer_norm_element_type(%x: tensor<2x3x4x5xf32>, %s: tensor<5xbf16>) {
  // expected-error @+1 {{'tidal.layer_norm' op requires scale and bias of the input's element type}}
  %0:3 = tidal.layer_norm %x, %s {axis = 2 : i64} : (tensor<2x3x4x5xf32>, tensor<5xbf16>) -> (tensor<2x3x4x5xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

func.func @dropout_ratio_one(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tidal.dropout' op ratio must lie in [0, 1), got 1.000000e+00}}
  %0:2 = tidal.dropout %x {ratio = 1.0 : f32} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  return
}

// -----

func.func @dropout_ratio_negative(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tidal.dropout' op ratio must lie in [0, 1), got -2.500000e-01}}
  %0:2 = tidal.dropout %x {ratio = -0.25 : f32} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

func.func @softmax_axis(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'tidal.softmax' op axis 2 out of range for rank 2}}
  %0 = tidal.softmax %x {axis = 2 : i64} : tensor<4x10xf32>
  return
}

// -----

func.func @log_softmax_negative_axis(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'tidal.log_softmax' op axis -1 out of range for rank 2}}
  %0 = tidal.log_softmax %x {axis = -1 : i64} : tensor<4x10xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

func.func @sce_scores_rank(%s: tensor<10xf32>, %l: tensor<i64>) {
  // expected-error @+2 {{expects scores of rank 2 or more, got 10}}
  // expected-error @+1 {{'tidal.softmax_cross_entropy_loss' op failed to infer returned types}}
  %0:2 = tidal.softmax_cross_entropy_loss %s, %l {reduction = #tidal<reduction mean>} : (tensor<10xf32>, tensor<i64>) -> (tensor<f32>, tensor<10xf32>)
  return
}

// -----

func.func @sce_labels_shape(%s: tensor<8x10x3xf32>, %l: tensor<8x10xi64>) {
  // expected-error @+2 {{labels of shape 8x10 do not match scores of shape 8x10x3; expected 8x3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = tidal.softmax_cross_entropy_loss %s, %l {reduction = #tidal<reduction none>} : (tensor<8x10x3xf32>, tensor<8x10xi64>) -> (tensor<8x3xf32>, tensor<8x10x3xf32>)
  return
}

// -----

func.func @sce_weights(%s: tensor<8x10xf32>, %l: tensor<8xi64>, %w: tensor<8xf32>) {
  // expected-error @+1 {{'tidal.softmax_cross_entropy_loss' op weights must have one entry per class (10), got 8}}
  %0:2 = tidal.softmax_cross_entropy_loss %s, %l, %w {reduction = #tidal<reduction mean>} : (tensor<8x10xf32>, tensor<8xi64>, tensor<8xf32>) -> (tensor<f32>, tensor<8x10xf32>)
  return
}

// -----

func.func @sce_weights_element_type(%s: tensor<8x10xf32>, %l: tensor<8xi64>, %w: tensor<10xf16>) {
  // expected-error @+1 {{'tidal.softmax_cross_entropy_loss' op requires weights of the scores' element type}}
  %0:2 = tidal.softmax_cross_entropy_loss %s, %l, %w {reduction = #tidal<reduction mean>} : (tensor<8x10xf32>, tensor<8xi64>, tensor<10xf16>) -> (tensor<f32>, tensor<8x10xf32>)
  return
}

// -----

// With a reduction the loss is a scalar.
func.func @sce_reduced_loss_type(%s: tensor<8x10xf32>, %l: tensor<8xi64>) {
  // expected-error @+2 {{inferred type(s) 'tensor<f32>', 'tensor<8x10xf32>' are incompatible with return type(s) of operation 'tensor<8xf32>', 'tensor<8x10xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = tidal.softmax_cross_entropy_loss %s, %l {reduction = #tidal<reduction sum>} : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8xf32>, tensor<8x10xf32>)
  return
}

// -----

func.func @nll_input_rank(%s: tensor<10xf32>, %l: tensor<i64>) {
  // expected-error @+2 {{expects scores of rank 2 or more, got 10}}
  // expected-error @+1 {{'tidal.nll_loss' op failed to infer returned types}}
  %0 = tidal.nll_loss %s, %l {reduction = #tidal<reduction mean>} : (tensor<10xf32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

func.func @nll_target_shape(%s: tensor<8x10xf32>, %l: tensor<10xi64>) {
  // expected-error @+2 {{labels of shape 10 do not match scores of shape 8x10; expected 8}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.nll_loss %s, %l {reduction = #tidal<reduction mean>} : (tensor<8x10xf32>, tensor<10xi64>) -> tensor<f32>
  return
}

// -----

func.func @nll_weight(%s: tensor<8x10xf32>, %l: tensor<8xi64>, %w: tensor<1x10xf32>) {
  // expected-error @+1 {{'tidal.nll_loss' op weights must have one entry per class (10), got 1x10}}
  %0 = tidal.nll_loss %s, %l, %w {reduction = #tidal<reduction none>} : (tensor<8x10xf32>, tensor<8xi64>, tensor<1x10xf32>) -> tensor<8xf32>
  return
}

// -----

// The verifier runs before inference has checked the scores' rank; it must
// not read the class count of 1-D scores.
func.func @nll_weight_rank1_input(%s: tensor<10xf32>, %l: tensor<i64>, %w: tensor<10xf32>) {
  // expected-error @+2 {{expects scores of rank 2 or more, got 10}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.nll_loss %s, %l, %w {reduction = #tidal<reduction mean>} : (tensor<10xf32>, tensor<i64>, tensor<10xf32>) -> tensor<f32>
  return
}

// -----

func.func @nll_bad_reduction(%s: tensor<8x10xf32>, %l: tensor<8xi64>) {
  // expected-error @+2 {{expected ::mlir::tidal::Reduction to be one of: none, sum, mean}}
  // expected-error @+1 {{failed to parse Tidal_ReductionAttr parameter 'value'}}
  %0 = tidal.nll_loss %s, %l {reduction = #tidal<reduction max>} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  return
}

// -----

func.func @random_normal_negative_scale() {
  // expected-error @+1 {{'tidal.random_normal' op mean must be finite and scale finite and >= 0, got mean 0.000000e+00, scale -1.000000e+00}}
  %0 = tidal.random_normal {scale = -1.0 : f32} : tensor<4xf32>
  return
}

// -----

func.func @random_uniform_empty_range() {
  // expected-error @+1 {{'tidal.random_uniform' op low and high must be finite with low <= high, got [2.000000e+00, 1.000000e+00)}}
  %0 = tidal.random_uniform {low = 2.0 : f32, high = 1.0 : f32} : tensor<4xf32>
  return
}

// -----

func.func @random_integer_result() {
  // expected-error @+1 {{'tidal.random_normal' op result #0 must be statically shaped tensor of floating-point values}}
  %0 = tidal.random_normal : tensor<4xi32>
  return
}
