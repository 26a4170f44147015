// --tidal-plan-memory (strategy slots): every tensor its own aligned slot,
// views alias their operand, constants go to the module's constant arena.
// RUN: tidal-opt %s -split-input-file -tidal-plan-memory=strategy=slots | FileCheck %s
// RUN: tidal-opt %s -split-input-file -tidal-plan-memory="strategy=slots alignment=16" | FileCheck %s --check-prefix=A16

// CHECK-LABEL: module attributes {tidal.constants_size = 64 : i64}
// CHECK: func.func @step(%arg0: tensor<2x3xf32> {tidal.offset = 0 : i64}, %arg1: tensor<3xf32> {tidal.offset = 64 : i64})
// CHECK-SAME: tidal.arena_size = 384 : i64, tidal.result_offsets = array<i64: 320, 256>
// CHECK: tidal.add %arg0, %arg1 {tidal.offsets = array<i64: 128>}
// CHECK: tidal.reshape {{.*}} {shape = array<i64: 6>, tidal.offsets = array<i64: 128>}
// CHECK: tidal.constant {tidal.const_offsets = array<i64: 0>} dense<1.000000e+00> : tensor<6xf32>
// CHECK: tidal.mul {{.*}} {tidal.offsets = array<i64: 192>}
// CHECK: tidal.reduce_sum {{.*}} tidal.offsets = array<i64: 256>
// A16: func.func @step(%arg0: tensor<2x3xf32> {tidal.offset = 0 : i64}, %arg1: tensor<3xf32> {tidal.offset = 32 : i64})
// A16-SAME: tidal.arena_size = 160 : i64, tidal.result_offsets = array<i64: 128, 112>
func.func @step(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<6xf32>, tensor<f32>) {
  %0 = tidal.add %x, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = tidal.reshape %0 {shape = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
  %c = tidal.constant dense<1.0> : tensor<6xf32>
  %2 = tidal.mul %1, %c : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %3 = tidal.reduce_sum %2 {axes = array<i64: 0>, keepdims = false} : (tensor<6xf32>) -> tensor<f32>
  // A returned constant gets an arena slot of its own (320 above).
  return %c, %3 : tensor<6xf32>, tensor<f32>
}

// -----

// Multi-result ops get one offset per result; booleans take a byte each.
// CHECK-LABEL: func.func @dropout
// CHECK-SAME: tidal.arena_size = 192 : i64
// CHECK: tidal.dropout {{.*}}tidal.offsets = array<i64: 64, 128>
func.func @dropout(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y, %m = tidal.dropout %x {ratio = 0.5 : f32, training = true} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xi1>)
  return %y : tensor<4x4xf32>
}
