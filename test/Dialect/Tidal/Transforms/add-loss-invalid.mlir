// Errors of --tidal-add-loss.
// RUN: tidal-opt %s -split-input-file -tidal-add-loss=loss=cross-entropy -verify-diagnostics

// expected-error @+1 {{the first output is already a scalar; it is taken as the loss without --loss}}
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}

// -----

// expected-error @+1 {{the model already has an input named 'label'}}
func.func @main(%x: tensor<2x3xf32>, %y: tensor<2xi64> {tidal.name = "label"}) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}

// -----

// expected-error @+1 {{cross-entropy needs class scores [N, C, ...], got a prediction of rank 1}}
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}

// -----

// expected-error @+1 {{the first output must be a floating-point tensor to add a loss, got 'tensor<3xi64>'}}
func.func @main(%x: tensor<3xi64>) -> tensor<3xi64> {
  return %x : tensor<3xi64>
}
