// --tidal-insert-all-reduce's errors.
// RUN: tidal-opt %s -split-input-file -tidal-insert-all-reduce=ranks=2 -verify-diagnostics

// expected-error @+1 {{no optimizer update reads a gradient: nothing to all-reduce (run --tidal-insert-optimizer first)}}
func.func @train_step(%w: tensor<4xf32>) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{no function 'train_step' to add an all-reduce to (run --tidal-insert-optimizer first)}}
module {
  func.func @main(%w: tensor<4xf32>) -> tensor<4xf32> {
    return %w : tensor<4xf32>
  }
}

// -----

func.func @train_step(%w: tensor<4xf64>, %g: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{data-parallel training reduces float32 gradients only, got 'tensor<4xf64>'}}
  %p = tidal.sgd_update %w, %g {lr = 0.1} : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  return %p : tensor<4xf64>
}

// -----

func.func @train_step(%w: tensor<4xf32>, %g: tensor<4xf32>, %x: tensor<2x3xf32>, %t: tensor<2xi64>)
    -> (tensor<2xf32> {tidal.name = "loss", tidal.role = #tidal<role loss>}, tensor<4xf32>) {
  // expected-error @+1 {{the loss has reduction 'none': data-parallel training needs a mean or a sum over the batch}}
  %l:2 = tidal.softmax_cross_entropy_loss %x, %t {reduction = #tidal<reduction none>} : (tensor<2x3xf32>, tensor<2xi64>) -> (tensor<2xf32>, tensor<2x3xf32>)
  %p = tidal.sgd_update %w, %g {lr = 0.1} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %l#0, %p : tensor<2xf32>, tensor<4xf32>
}
