// Errors of the logic family's verifiers and inference (LogicOps.cpp).
// RUN: tidal-opt %s -split-input-file -verify-diagnostics

func.func @compare_types(%a: tensor<3xf32>, %b: tensor<3xi64>) {
  // expected-error @+1 {{'tidal.less' op compares operands of different element types 'f32' and 'i64'}}
  %0 = tidal.less %a, %b : (tensor<3xf32>, tensor<3xi64>) -> tensor<3xi1>
  return
}

// -----

func.func @compare_no_broadcast(%a: tensor<3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{operand shapes [3] and [4] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tidal.equal %a, %b : (tensor<3xf32>, tensor<4xf32>) -> tensor<3xi1>
  return
}

// -----

func.func @where_types(%c: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xf64>) {
  // expected-error @+1 {{'tidal.where' op selects between element types 'f32' and 'f64'; they must match}}
  %0 = tidal.where %c, %a, %b : (tensor<3xi1>, tensor<3xf32>, tensor<3xf64>) -> tensor<3xf32>
  return
}

// -----

func.func @where_condition(%c: tensor<3xf32>, %a: tensor<3xf32>) {
  // expected-error @+1 {{'tidal.where' op operand #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = tidal.where %c, %a, %a : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @logic_on_floats(%a: tensor<3xf32>) {
  // expected-error @+1 {{'tidal.logical_and' op operand #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = tidal.logical_and %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return
}

// -----

func.func @cast_reshapes(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'tidal.cast' op result shape 3x2 differs from the input's 2x3}}
  %0 = tidal.cast %a : (tensor<2x3xf32>) -> tensor<3x2xi64>
  return
}
