// Errors of the element-wise and matrix ops (TidalOps.cpp), of the ODS type
// constraints every op shares, and of a declared result type that disagrees
// with inference.
// RUN: tidal-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Inferred result types
//===----------------------------------------------------------------------===//

// A result type that the op's inference disagrees with is an error; the
// verifier then also reports that inference failed.
func.func @wrong_result_type(%a: tensor<2x4xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+2 {{'tidal.add' op inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x3x4xf32>'}}
  // expected-error @+1 {{'tidal.add' op failed to infer returned types}}
  %0 = tidal.add %a, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

func.func @wrong_result_element_type(%a: tensor<2x4xf32>, %b: tensor<4x4xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<2x4xf16>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.matmul %a, %b : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf16>
  return
}

// -----

func.func @wrong_result_count(%x: tensor<10x4xf32>) {
  // expected-error @+2 {{'tidal.split' op inferred type(s) 'tensor<5x4xf32>', 'tensor<5x4xf32>' are incompatible with return type(s) of operation 'tensor<10x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.split %x {axis = 0 : i64, sizes = array<i64: 5, 5>} : (tensor<10x4xf32>) -> tensor<10x4xf32>
  return
}

// -----

// Unary ops have the operand's type by construction.
func.func @unary_result_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tidal.relu' op requires the same type for all operands and results}}
  %0 = "tidal.relu"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

func.func @dynamic_shape(%a: tensor<?x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'tidal.add' op operand #0 must be statically shaped tensor of floating-point or integer values, but got 'tensor<?x4xf32>'}}
  %0 = tidal.add %a, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return
}

// -----

// The custom form of unary ops only parses ranked tensors; the generic form
// reaches the verifier.
func.func @unranked(%a: tensor<*xf32>) {
  // expected-error @+1 {{'tidal.identity' op operand #0 must be statically shaped tensor of any type values, but got 'tensor<*xf32>'}}
  %0 = "tidal.identity"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @not_a_tensor(%a: memref<4xf32>) {
  // expected-error @+1 {{'tidal.neg' op operand #0 must be statically shaped tensor of floating-point or integer values, but got 'memref<4xf32>'}}
  %0 = "tidal.neg"(%a) : (memref<4xf32>) -> memref<4xf32>
  return
}

// -----

func.func @not_a_tensor_custom(%a: memref<4xf32>) {
  // expected-error @+1 {{custom op 'tidal.neg' invalid kind of type specified}}
  %0 = tidal.neg %a : memref<4xf32>
  return
}

// -----

func.func @float_op_on_integers(%a: tensor<4xi32>) {
  // expected-error @+1 {{'tidal.sigmoid' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = tidal.sigmoid %a : tensor<4xi32>
  return
}

// -----

func.func @leaky_relu_on_integers(%a: tensor<4xi8>) {
  // expected-error @+1 {{'tidal.leaky_relu' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi8>'}}
  %0 = tidal.leaky_relu %a : tensor<4xi8>
  return
}

// -----

func.func @conv_on_integers(%x: tensor<1x3x8x8xi8>, %w: tensor<4x3x3x3xi8>) {
  // expected-error @+1 {{'tidal.conv' op operand #0 must be statically shaped tensor of floating-point values, but got 'tensor<1x3x8x8xi8>'}}
  %0 = tidal.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xi8>, tensor<4x3x3x3xi8>) -> tensor<1x4x6x6xi8>
  return
}

// -----

func.func @float_labels(%s: tensor<8x10xf32>, %l: tensor<8xf32>) {
  // expected-error @+1 {{'tidal.nll_loss' op operand #1 must be statically shaped tensor of integer values, but got 'tensor<8xf32>'}}
  %0 = tidal.nll_loss %s, %l {reduction = #tidal<reduction mean>} : (tensor<8x10xf32>, tensor<8xf32>) -> tensor<f32>
  return
}

// -----

func.func @float_indices(%d: tensor<10x4xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{'tidal.gather' op operand #1 must be statically shaped tensor of integer values, but got 'tensor<3xf32>'}}
  %0 = tidal.gather %d, %i {axis = 0 : i64} : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @dropout_mask_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tidal.dropout' op result #1 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4xi8>'}}
  %0:2 = tidal.dropout %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi8>)
  return
}

// -----

func.func @missing_attribute(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'tidal.conv' op requires attribute 'pads'}}
  %0 = tidal.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Binary element-wise ops
//===----------------------------------------------------------------------===//

func.func @no_broadcast(%a: tensor<2x4xf32>, %b: tensor<3x1xf32>) {
  // expected-error @+2 {{operand shapes 2x4 and 3x1 do not broadcast}}
  // expected-error @+1 {{'tidal.sub' op failed to infer returned types}}
  %0 = tidal.sub %a, %b : (tensor<2x4xf32>, tensor<3x1xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @mixed_element_types(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'tidal.add' op requires operands of the same element type}}
  %0 = tidal.add %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @mixed_element_types_div(%a: tensor<4xf16>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'tidal.div' op requires operands of the same element type}}
  %0 = tidal.div %a, %b : (tensor<4xf16>, tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

func.func @gemm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{expects 2-D operands A and B, got 2x3x4 and 4x5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.gemm %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @gemm_rank_scalar(%a: tensor<f32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{expects 2-D operands A and B, got scalar and 4x5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.gemm %a, %b : (tensor<f32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  return
}

// -----

// trans_b makes B [5, 4]: K is 3 for A, 4 for B.
func.func @gemm_inner(%a: tensor<2x3xf32>, %b: tensor<5x4xf32>) {
  // expected-error @+2 {{inner dimensions differ: A gives 3, B gives 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.gemm %a, %b {trans_b = true} : (tensor<2x3xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @gemm_element_types(%a: tensor<2x3xf32>, %b: tensor<3x4xf16>) {
  // expected-error @+1 {{'tidal.gemm' op requires A and B of the same element type}}
  %0 = tidal.gemm %a, %b : (tensor<2x3xf32>, tensor<3x4xf16>) -> tensor<2x4xf32>
  return
}

// -----

func.func @gemm_c_shape(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %c: tensor<3x5xf32>) {
  // expected-error @+1 {{'tidal.gemm' op C of shape 3x5 does not broadcast to 4x5}}
  %0 = tidal.gemm %a, %b, %c : (tensor<4x3xf32>, tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return
}

// -----

func.func @gemm_c_element_type(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %c: tensor<5xf16>) {
  // expected-error @+1 {{'tidal.gemm' op requires C of the same element type as A and B}}
  %0 = tidal.gemm %a, %b, %c : (tensor<4x3xf32>, tensor<3x5xf32>, tensor<5xf16>) -> tensor<4x5xf32>
  return
}

// -----

// C broadcasts unidirectionally only: it may not add dimensions to [M, N].
func.func @gemm_c_rank(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %c: tensor<1x4x5xf32>) {
  // expected-error @+1 {{'tidal.gemm' op C of shape 1x4x5 does not broadcast to 4x5}}
  %0 = tidal.gemm %a, %b, %c : (tensor<4x3xf32>, tensor<3x5xf32>, tensor<1x4x5xf32>) -> tensor<4x5xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{expects operands of rank 1 or more}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.matmul %a, %b : (tensor<f32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @matmul_inner(%a: tensor<3x4xf32>, %b: tensor<5x6xf32>) {
  // expected-error @+2 {{inner dimensions differ: 3x4 x 5x6}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.matmul %a, %b : (tensor<3x4xf32>, tensor<5x6xf32>) -> tensor<3x6xf32>
  return
}

// -----

func.func @matmul_inner_vector(%a: tensor<3x4xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{inner dimensions differ: 3x4 x 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.matmul %a, %b : (tensor<3x4xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  // expected-error @+2 {{batch dimensions of 2x3x4 and 3x4x5 do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.matmul %a, %b : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  return
}

// -----

func.func @matmul_element_types(%a: tensor<3x4xi32>, %b: tensor<4x5xi64>) {
  // expected-error @+1 {{'tidal.matmul' op requires operands of the same element type}}
  %0 = tidal.matmul %a, %b : (tensor<3x4xi32>, tensor<4x5xi64>) -> tensor<3x5xi32>
  return
}
