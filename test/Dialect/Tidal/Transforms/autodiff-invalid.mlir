// Errors of --tidal-autodiff.
// RUN: tidal-opt %s -split-input-file -tidal-autodiff -verify-diagnostics

// expected-error @+1 {{the model's first output must be a scalar loss, got 'tensor<2x3xf32>'; pass --loss cross-entropy or --loss mse to add one}}
func.func @main(%w: tensor<2x3xf32> {tidal.name = "w", tidal.role = #tidal<role param>}) -> tensor<2x3xf32> {
  %r = tidal.relu %w : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

func.func @main(%w: tensor<3xf32> {tidal.name = "w", tidal.role = #tidal<role param>},
                %e: tensor<i64> {tidal.name = "e", tidal.role = #tidal<role input>}) -> tensor<f32> {
  // expected-error @+1 {{cannot differentiate tidal.pow: an integer exponent that is not a constant}}
  %p = tidal.pow %w, %e : (tensor<3xf32>, tensor<i64>) -> tensor<3xf32>
  %l = tidal.reduce_sum %p {axes = array<i64: 0>, keepdims = false} : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @main(%x: tensor<2x4xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %s: tensor<4xf32> {tidal.name = "s", tidal.role = #tidal<role param>}) -> tensor<f32> {
  // expected-error @+1 {{cannot differentiate tidal.layer_norm: result #1 is used in a differentiated computation}}
  %ln:3 = tidal.layer_norm %x, %s {axis = 1 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %l = tidal.reduce_sum %ln#1 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x1xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @main(%p: tensor<3xf32> {tidal.name = "p", tidal.role = #tidal<role param>}) -> tensor<f32> {
  // expected-error @+1 {{cannot differentiate tidal.sgd_update: the op has no gradient rule}}
  %u = tidal.sgd_update %p, %p {lr = 0.1} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %l = tidal.reduce_sum %u {axes = array<i64: 0>, keepdims = false} : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @main(%x: tensor<2x3xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %s: tensor<3xf32> {tidal.name = "s", tidal.role = #tidal<role param>},
                %rm: tensor<3xf32> {tidal.name = "rm", tidal.role = #tidal<role state>},
                %rv: tensor<3xf32> {tidal.name = "rv", tidal.role = #tidal<role state>}) -> tensor<f32> {
  %a:5 = tidal.batch_norm_training %x, %s, %s, %rm, %rv : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  // expected-error @+1 {{running statistic 'rm' is updated by two BatchNormalization nodes}}
  %b:5 = tidal.batch_norm_training %a#0, %s, %s, %rm, %rv : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %l = tidal.reduce_sum %b#0 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{a function named 'train_step' already exists}}
func.func @main(%w: tensor<f32> {tidal.name = "w", tidal.role = #tidal<role param>}) -> tensor<f32> {
  return %w : tensor<f32>
}
func.func @train_step() {
  return
}

// -----

// expected-error @+1 {{the model has no output to train}}
func.func @main(%w: tensor<f32> {tidal.name = "w", tidal.role = #tidal<role param>}) {
  return
}

// -----

// A batch normalization with a fused ReLU (tidal-fuse-epilogues runs after
// autodiff) has no gradient rule.
func.func @main(%x: tensor<2x3xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %s: tensor<3xf32> {tidal.name = "s", tidal.role = #tidal<role param>},
                %rm: tensor<3xf32> {tidal.name = "rm", tidal.role = #tidal<role state>},
                %rv: tensor<3xf32> {tidal.name = "rv", tidal.role = #tidal<role state>}) -> tensor<f32> {
  // expected-error @+1 {{cannot differentiate tidal.batch_norm_training: a fused ReLU or clip (tidal-fuse-epilogues runs after autodiff)}}
  %a:5 = tidal.batch_norm_training %x, %s, %s, %rm, %rv {relu = true} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %l = tidal.reduce_sum %a#0 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Nor with a fused clip (ReLU6).
func.func @main(%x: tensor<2x3xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %s: tensor<3xf32> {tidal.name = "s", tidal.role = #tidal<role param>},
                %rm: tensor<3xf32> {tidal.name = "rm", tidal.role = #tidal<role state>},
                %rv: tensor<3xf32> {tidal.name = "rv", tidal.role = #tidal<role state>}) -> tensor<f32> {
  // expected-error @+1 {{cannot differentiate tidal.batch_norm_training: a fused ReLU or clip (tidal-fuse-epilogues runs after autodiff)}}
  %a:5 = tidal.batch_norm_training %x, %s, %s, %rm, %rv {clip_min = 0.0 : f32, clip_max = 6.0 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %l = tidal.reduce_sum %a#0 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
