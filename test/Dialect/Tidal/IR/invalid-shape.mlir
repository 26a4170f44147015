// Errors of the reduction, constant and data-movement ops (ShapeOps.cpp).
// RUN: tidal-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// Reductions check their axes in the verifier, which runs before the
// inferred types are compared, so no inference error follows.
func.func @reduce_axis_range(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{axis 3 out of range for rank 3}}
  %0 = tidal.reduce_mean %x {axes = array<i64: 3>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

// Axes are normalized at import: a negative one is an error here.
func.func @reduce_negative_axis(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{axis -1 out of range for rank 3}}
  %0 = tidal.reduce_sum %x {axes = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  return
}

// -----

func.func @reduce_unsorted(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{axes must be sorted and unique}}
  %0 = tidal.reduce_sum %x {axes = array<i64: 2, 0>} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  return
}

// -----

func.func @reduce_duplicate(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{axes must be sorted and unique}}
  %0 = tidal.reduce_mean %x {axes = array<i64: 1, 1>} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  return
}

// -----

func.func @reduce_keepdims_result(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x1x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

// The custom form infers the result type while parsing.
func.func @constant_vector() {
  // expected-error @+1 {{value must be a ranked tensor}}
  %0 = tidal.constant dense<1.0> : vector<2xf32>
  return
}

// -----

func.func @constant_vector_generic() {
  // expected-error @+2 {{value must be a ranked tensor}}
  // expected-error @+1 {{'tidal.constant' op failed to infer returned types}}
  %0 = "tidal.constant"() {value = dense<1.0> : vector<2xf32>} : () -> tensor<2xf32>
  return
}

// -----

func.func @constant_result_type() {
  // expected-error @+2 {{inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "tidal.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Reshape, Flatten, Squeeze, Unsqueeze
//===----------------------------------------------------------------------===//

// ONNX's -1 and 0 entries are resolved at import.
func.func @reshape_unresolved(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{shape must be resolved and non-negative, got -1x4}}
  // expected-error @+1 {{'tidal.reshape' op failed to infer returned types}}
  %0 = tidal.reshape %x {shape = array<i64: -1, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{cannot reshape 2x3x4 (24 elements) to 5x5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.reshape %x {shape = array<i64: 5, 5>} : (tensor<2x3x4xf32>) -> tensor<5x5xf32>
  return
}

// -----

func.func @flatten_axis(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{axis 3 out of range for rank 2}}
  // expected-error @+1 {{'tidal.flatten' op failed to infer returned types}}
  %0 = tidal.flatten %x {axis = 3 : i64} : (tensor<2x3xf32>) -> tensor<6x1xf32>
  return
}

// -----

func.func @flatten_negative_axis(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{axis -1 out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.flatten %x {axis = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @squeeze_non_unit(%x: tensor<1x3x1xf32>) {
  // expected-error @+2 {{cannot squeeze dim 1 of size 3}}
  // expected-error @+1 {{'tidal.squeeze' op failed to infer returned types}}
  %0 = tidal.squeeze %x {axes = array<i64: 0, 1>} : (tensor<1x3x1xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @squeeze_axis_range(%x: tensor<1x3x1xf32>) {
  // expected-error @+2 {{axis 3 out of range for rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.squeeze %x {axes = array<i64: 3>} : (tensor<1x3x1xf32>) -> tensor<1x3x1xf32>
  return
}

// -----

func.func @squeeze_unsorted(%x: tensor<1x3x1xf32>) {
  // expected-error @+2 {{axes must be sorted and unique}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.squeeze %x {axes = array<i64: 2, 0>} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  return
}

// -----

// Unsqueeze axes index the result, here of rank 3.
func.func @unsqueeze_axis_range(%x: tensor<3x4xf32>) {
  // expected-error @+2 {{axis 3 out of range for rank 3}}
  // expected-error @+1 {{'tidal.unsqueeze' op failed to infer returned types}}
  %0 = tidal.unsqueeze %x {axes = array<i64: 3>} : (tensor<3x4xf32>) -> tensor<3x4x1xf32>
  return
}

// -----

func.func @unsqueeze_duplicate(%x: tensor<3x4xf32>) {
  // expected-error @+2 {{axes must be sorted and unique}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.unsqueeze %x {axes = array<i64: 0, 0>} : (tensor<3x4xf32>) -> tensor<1x1x3x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

func.func @transpose_perm_size(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{perm has 2 entries for rank 3}}
  // expected-error @+1 {{'tidal.transpose' op failed to infer returned types}}
  %0 = tidal.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  return
}

// -----

func.func @transpose_duplicate(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{perm is not a permutation}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.transpose %x {perm = array<i64: 0, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<2x2x3xf32>
  return
}

// -----

func.func @transpose_out_of_range(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{perm is not a permutation}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.transpose %x {perm = array<i64: 0, 1, 3>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Concat
//===----------------------------------------------------------------------===//

func.func @concat_empty() {
  // expected-error @+2 {{expects at least one input}}
  // expected-error @+1 {{'tidal.concat' op failed to infer returned types}}
  %0 = tidal.concat {axis = 0 : i64} : () -> tensor<0xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{axis 2 out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.concat %a, %a {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  // expected-error @+2 {{inputs differ in rank or element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3x1xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_element_type(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>) {
  // expected-error @+2 {{inputs differ in rank or element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_shape(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{input of shape 3x5 does not match 2x3 outside axis 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Split
//===----------------------------------------------------------------------===//

func.func @split_axis(%x: tensor<10x4xf32>) {
  // expected-error @+2 {{axis 2 out of range for rank 2}}
  // expected-error @+1 {{'tidal.split' op failed to infer returned types}}
  %0:2 = tidal.split %x {axis = 2 : i64, sizes = array<i64: 2, 2>} : (tensor<10x4xf32>) -> (tensor<10x2xf32>, tensor<10x2xf32>)
  return
}

// -----

func.func @split_negative_size(%x: tensor<10x4xf32>) {
  // expected-error @+2 {{split sizes must be non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = tidal.split %x {axis = 0 : i64, sizes = array<i64: 12, -2>} : (tensor<10x4xf32>) -> (tensor<12x4xf32>, tensor<10x4xf32>)
  return
}

// -----

func.func @split_sum(%x: tensor<10x4xf32>) {
  // expected-error @+2 {{split sizes sum to 9, dim 0 has 10}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = tidal.split %x {axis = 0 : i64, sizes = array<i64: 4, 5>} : (tensor<10x4xf32>) -> (tensor<4x4xf32>, tensor<5x4xf32>)
  return
}

// -----

// At least one part, even of an empty dimension.
func.func @split_no_sizes(%x: tensor<0x4xf32>) {
  // expected-error @+2 {{split sizes sum to 0, dim 0 has 0}}
  // expected-error @+1 {{failed to infer returned types}}
  tidal.split %x {axis = 0 : i64, sizes = array<i64>} : (tensor<0x4xf32>) -> ()
  return
}

// -----

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

func.func @slice_entries(%x: tensor<10x8xf32>) {
  // expected-error @+2 {{expects one start, end and step per dimension (2)}}
  // expected-error @+1 {{'tidal.slice' op failed to infer returned types}}
  %0 = tidal.slice %x {starts = array<i64: 0>, ends = array<i64: 5>, steps = array<i64: 1>} : (tensor<10x8xf32>) -> tensor<5x8xf32>
  return
}

// -----

func.func @slice_zero_step(%x: tensor<10xf32>) {
  // expected-error @+2 {{step of dim 0 is zero}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.slice %x {starts = array<i64: 0>, ends = array<i64: 5>, steps = array<i64: 0>} : (tensor<10xf32>) -> tensor<5xf32>
  return
}

// -----

// ONNX clamps out-of-range bounds; the importer does that, not this op.
func.func @slice_unclamped_end(%x: tensor<10x8xf32>) {
  // expected-error @+2 {{slice bounds [0, 9) not clamped to dim 1 of size 8}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 10, 9>, steps = array<i64: 1, 1>} : (tensor<10x8xf32>) -> tensor<10x8xf32>
  return
}

// -----

func.func @slice_negative_start(%x: tensor<10xf32>) {
  // expected-error @+2 {{slice bounds [-1, 5) not clamped to dim 0 of size 10}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.slice %x {starts = array<i64: -1>, ends = array<i64: 5>, steps = array<i64: 1>} : (tensor<10xf32>) -> tensor<5xf32>
  return
}

// -----

// With a negative step the start must be a valid index.
func.func @slice_negative_step_start(%x: tensor<10xf32>) {
  // expected-error @+2 {{slice bounds [10, -1) not clamped to dim 0 of size 10}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.slice %x {starts = array<i64: 10>, ends = array<i64: -1>, steps = array<i64: -1>} : (tensor<10xf32>) -> tensor<10xf32>
  return
}

// -----

func.func @slice_negative_step_end(%x: tensor<10xf32>) {
  // expected-error @+2 {{slice bounds [9, -2) not clamped to dim 0 of size 10}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.slice %x {starts = array<i64: 9>, ends = array<i64: -2>, steps = array<i64: -1>} : (tensor<10xf32>) -> tensor<10xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

func.func @gather_axis(%d: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+2 {{axis 2 out of range for rank 2}}
  // expected-error @+1 {{'tidal.gather' op failed to infer returned types}}
  %0 = tidal.gather %d, %i {axis = 2 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<10x4x3xf32>
  return
}

// -----

func.func @gather_scalar_data(%d: tensor<f32>, %i: tensor<3xi64>) {
  // expected-error @+2 {{axis 0 out of range for rank 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.gather %d, %i {axis = 0 : i64} : (tensor<f32>, tensor<3xi64>) -> tensor<3xf32>
  return
}

// -----

func.func @gather_padding_axis(%d: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{padding_index needs axis 0 (an embedding lookup), not axis 1}}
  %0 = tidal.gather %d, %i {axis = 1 : i64, padding_index = 0 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<10x3xf32>
  return
}

// -----

func.func @gather_padding_row(%d: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{padding_index 10 is not a row of the 10-row data}}
  %0 = tidal.gather %d, %i {axis = 0 : i64, padding_index = 10 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return
}
