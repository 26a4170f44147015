// Errors of tidal.pad and pad_backward (PadOps.cpp).
// RUN: tidal-opt %s -split-input-file -verify-diagnostics

func.func @reflect_too_far(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{reflect padding of 3 on dimension 1 of size 3 exceeds the size minus one}}
  %0 = tidal.pad %x {pads = array<i64: 0, 3, 0, 0>, mode = #tidal<pad_mode reflect>} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{pads must not be negative, got -1 for dimension 1}}
  %0 = tidal.pad %x {pads = array<i64: 0, -1, 0, 2>, mode = #tidal<pad_mode constant>} : (tensor<2x3xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @pad_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{expects 4 pads for rank 2, got 2}}
  %0 = tidal.pad %x {pads = array<i64: 1, 1>, mode = #tidal<pad_mode edge>} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @backward_shape(%g: tensor<3x7xf32>) {
  // expected-error @+1 {{result shape 2x3 padded by [1, 0, 0, 3] is not the grad's shape 3x7}}
  %0 = tidal.pad_backward %g {pads = array<i64: 1, 0, 0, 3>, mode = #tidal<pad_mode edge>} : (tensor<3x7xf32>) -> tensor<2x3xf32>
  return
}
