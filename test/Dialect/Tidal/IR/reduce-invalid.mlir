// Errors of the reductions' and argmax/argmin's verifiers and inference
// (ReduceOps.cpp).
// RUN: tidal-opt %s -split-input-file -verify-diagnostics

func.func @max_axis_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 out of range for rank 2}}
  %0 = tidal.reduce_max %x {axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @min_unsorted(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axes must be sorted and unique}}
  %0 = tidal.reduce_min %x {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  return
}

// -----

func.func @prod_result_shape(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'tidal.reduce_prod' op inferred type(s) 'tensor<2x1xf32>' are incompatible with return type(s) of operation 'tensor<2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.reduce_prod %x {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @max_result_type(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'tidal.reduce_max' op inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<2xf64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf64>
  return
}

// -----

func.func @argmax_axis_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 out of range for rank 2}}
  %0 = tidal.argmax %x {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi64>
  return
}

// -----

// Axes are normalized at import: a negative one is an error here.
func.func @argmin_negative_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis -1 out of range for rank 2}}
  %0 = tidal.argmin %x {axis = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xi64>
  return
}

// -----

func.func @argmax_empty_axis(%x: tensor<2x0xf32>) {
  // expected-error @+1 {{'tidal.argmax' op takes an index along axis 1 of extent 0}}
  %0 = tidal.argmax %x {axis = 1 : i64} : (tensor<2x0xf32>) -> tensor<2x1xi64>
  return
}

// -----

func.func @argmax_result_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tidal.argmax' op result #0 must be statically shaped tensor of 64-bit signless integer values}}
  %0 = tidal.argmax %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xi32>
  return
}

// -----

func.func @argmin_keepdims_shape(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'tidal.argmin' op inferred type(s) 'tensor<2xi64>' are incompatible with return type(s) of operation 'tensor<2x1xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.argmin %x {axis = 1 : i64, keepdims = false} : (tensor<2x3xf32>) -> tensor<2x1xi64>
  return
}
