// A training step without gradients has nothing to train, unless an ONNX
// training_info algorithm already updates the weights.
// RUN: tidal-opt %s -split-input-file -tidal-insert-optimizer -verify-diagnostics | FileCheck %s

// expected-error @+1 {{no parameter gets a gradient: nothing to train}}
func.func @train_step(%l: tensor<f32>) -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>}) {
  return %l : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @train_step
// CHECK-NOT: update
// CHECK: return %arg0
func.func @train_step(%l: tensor<f32>) -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>}) attributes {tidal.training_info} {
  return %l : tensor<f32>
}
