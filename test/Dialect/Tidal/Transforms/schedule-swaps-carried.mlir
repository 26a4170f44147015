// --tidal-schedule-swaps across liveness analyses: the link time a copy
// takes under the kernels is carried to the next analysis (this small step
// takes one swap per analysis). %a1 is swapped first: its offload hides
// behind the relu and the exp after it, where its wait goes. %a2, swapped
// in the next analysis, finds the link time under that exp taken, so the
// wait for its offload goes two exps after %a1's (with that time counted
// as free again, one exp earlier).
// RUN: tidal-opt %s "-tidal-schedule-swaps=budget=90000 link-gbps=2" | FileCheck %s

// CHECK-LABEL: func.func @step
// CHECK: %[[A1:.*]] = tidal.exp %arg0
// CHECK-NEXT: %[[H1:.*]] = tidal.offload %[[A1]]
// CHECK-NEXT: %[[A2:.*]] = tidal.relu %arg0
// CHECK-NEXT: %[[H2:.*]] = tidal.offload %[[A2]]
// CHECK-NEXT: %[[K1:.*]] = tidal.exp %arg0
// CHECK-NEXT: tidal.wait %[[H1]]
// CHECK-NEXT: %[[K2:.*]] = tidal.exp %[[K1]]
// CHECK-NEXT: %[[K3:.*]] = tidal.exp %[[K2]]
// CHECK-NEXT: tidal.wait %[[H2]]
// CHECK-NEXT: tidal.exp %[[K3]]
// CHECK-NEXT: tidal.broadcast_to
func.func @step(%x: tensor<4096xf32> {tidal.name = "x", tidal.role = #tidal<role input>}) -> tensor<f32> {
  %a1 = tidal.exp %x : tensor<4096xf32>
  %a2 = tidal.relu %x : tensor<4096xf32>
  %k1 = tidal.exp %x : tensor<4096xf32>
  %k2 = tidal.exp %k1 : tensor<4096xf32>
  %k3 = tidal.exp %k2 : tensor<4096xf32>
  %k4 = tidal.exp %k3 : tensor<4096xf32>
  %big = tidal.broadcast_to %k4 : (tensor<4096xf32>) -> tensor<4x4096xf32>
  %s = tidal.reduce_sum %big {axes = array<i64: 0>, keepdims = false} : (tensor<4x4096xf32>) -> tensor<4096xf32>
  %m1 = tidal.exp %s : tensor<4096xf32>
  %m2 = tidal.exp %m1 : tensor<4096xf32>
  %m3 = tidal.exp %m2 : tensor<4096xf32>
  %d = tidal.mul %m3, %a1 : (tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
  %e = tidal.mul %d, %a2 : (tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
  %r = tidal.reduce_sum %e {axes = array<i64: 0>, keepdims = false} : (tensor<4096xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
