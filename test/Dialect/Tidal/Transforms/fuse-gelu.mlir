// --tidal-fuse-gelu: PyTorch's exported erf GELU chain becomes tidal.gelu
// when nothing else reads its intermediate values.
// RUN: tidal-opt %s -split-input-file -tidal-fuse-gelu | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-NEXT: %[[Y:.*]] = tidal.gelu %arg0 : tensor<2x8xf32>
// CHECK-NEXT: %[[S:.*]] = tidal.reduce_sum %[[Y]]
// CHECK-NEXT: return %[[S]]
func.func @main(%x: tensor<2x8xf32>) -> tensor<f32> {
  %c = tidal.constant dense<1.41421354> : tensor<f32>
  %d = tidal.div %x, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = tidal.erf %d : tensor<2x8xf32>
  %one = tidal.constant dense<1.0> : tensor<f32>
  %a = tidal.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = tidal.mul %x, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %half = tidal.constant dense<0.5> : tensor<f32>
  %y = tidal.mul %m, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %s = tidal.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x8xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// Every commutative operand swapped, x * (1/sqrt(2)) for the division,
// constants of shape [1].
// CHECK-LABEL: func.func @commuted
// CHECK-NEXT: %[[Y:.*]] = tidal.gelu %arg0 : tensor<5xf32>
// CHECK-NEXT: return %[[Y]]
func.func @commuted(%x: tensor<5xf32>) -> tensor<5xf32> {
  %c = tidal.constant dense<0.707106769> : tensor<1xf32>
  %d = tidal.mul %c, %x : (tensor<1xf32>, tensor<5xf32>) -> tensor<5xf32>
  %e = tidal.erf %d : tensor<5xf32>
  %one = tidal.constant dense<1.0> : tensor<1xf32>
  %a = tidal.add %one, %e : (tensor<1xf32>, tensor<5xf32>) -> tensor<5xf32>
  %m = tidal.mul %a, %x : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %half = tidal.constant dense<0.5> : tensor<1xf32>
  %y = tidal.mul %half, %m : (tensor<1xf32>, tensor<5xf32>) -> tensor<5xf32>
  return %y : tensor<5xf32>
}

// -----

// An intermediate value read elsewhere (the erf output is returned): the
// chain stays as written.
// CHECK-LABEL: func.func @shared
// CHECK-NOT: tidal.gelu
// CHECK: tidal.erf
func.func @shared(%x: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
  %c = tidal.constant dense<1.41421354> : tensor<f32>
  %d = tidal.div %x, %c : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %e = tidal.erf %d : tensor<5xf32>
  %one = tidal.constant dense<1.0> : tensor<f32>
  %a = tidal.add %e, %one : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %m = tidal.mul %x, %a : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %half = tidal.constant dense<0.5> : tensor<f32>
  %y = tidal.mul %m, %half : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  return %y, %e : tensor<5xf32>, tensor<5xf32>
}

// -----

// Not GELU: the final factor is 0.4, or the division is by another value.
// CHECK-LABEL: func.func @different
// CHECK-NOT: tidal.gelu
// CHECK: return
func.func @different(%x: tensor<5xf32>, %z: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
  %c = tidal.constant dense<1.41421354> : tensor<f32>
  %d = tidal.div %x, %c : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %e = tidal.erf %d : tensor<5xf32>
  %one = tidal.constant dense<1.0> : tensor<f32>
  %a = tidal.add %e, %one : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %m = tidal.mul %x, %a : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %k = tidal.constant dense<0.4> : tensor<f32>
  %y = tidal.mul %m, %k : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %d2 = tidal.div %z, %c : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %e2 = tidal.erf %d2 : tensor<5xf32>
  %a2 = tidal.add %e2, %one : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %m2 = tidal.mul %x, %a2 : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %half = tidal.constant dense<0.5> : tensor<f32>
  %y2 = tidal.mul %m2, %half : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  return %y, %y2 : tensor<5xf32>, tensor<5xf32>
}
