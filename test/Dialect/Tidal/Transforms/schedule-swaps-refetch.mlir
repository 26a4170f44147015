// --tidal-schedule-swaps on a placed step: the device copy of a streamed
// (host-resident) parameter is dropped after its forward use and prefetched
// again from the host before its backward use ("refetch"), ahead of the
// host update that overwrites the host bytes in place.
// RUN: tidal-opt %s -tidal-place=mode=stream -tidal-schedule-swaps=budget=4000 -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s
// RUN: tidal-opt %s -tidal-place=mode=stream -tidal-schedule-swaps=budget=2880 -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s --check-prefix=FLOOR
// RUN: not tidal-opt %s -tidal-place=mode=stream -tidal-schedule-swaps=budget=2879 2>&1 | FileCheck %s --check-prefix=BELOW
// The optimal mode has the refetch among its candidates (3 tensors and the
// copy's one gap over the budget). Its choice for this budget leaves the
// greedy loop short, so it falls back to the greedy loop alone, which
// fits; its smallest budget is the greedy loop's.
// RUN: tidal-opt %s -tidal-place=mode=stream -tidal-schedule-swaps="budget=3300 strategy=milp" -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s --check-prefix=MILP
// RUN: not tidal-opt %s -tidal-place=mode=stream -tidal-schedule-swaps="budget=2879 strategy=milp" 2>&1 | FileCheck %s --check-prefix=BELOW

// CHECK-LABEL: func.func @step
// CHECK-SAME: %arg2: tensor<32x16xf32> {tidal.name = "w2", tidal.offset = {{[0-9]+}} : i64, tidal.role = #tidal<role param>, tidal.space = "host"}
// CHECK-SAME: tidal.arena_size = 3264 : i64
// CHECK: %[[P:.*]] = tidal.prefetch %arg2
// CHECK: %[[W:.*]] = tidal.wait %[[P]]
// CHECK: %[[Y:.*]] = tidal.gemm %{{.*}}, %[[W]] {{.*}}trans_b = true
// CHECK: %[[E:.*]] = tidal.exp %[[Y]]
// CHECK: %[[G2:.*]] = tidal.gemm %[[E]], %{{.*}} {{.*}}trans_a = true
// CHECK: %[[P2:.*]] = tidal.prefetch %arg2
// CHECK-NEXT: %[[W2:.*]] = tidal.wait %[[P2]]
// CHECK-NEXT: tidal.gemm %[[E]], %[[W2]]
// CHECK: tidal.sgd_update %arg2, {{.*}}tidal.device = "host"

// MILP: tidal.arena_size = 3264 : i64
// MILP-SAME: tidal.milp = {candidates = 4 : i64, {{.*}}greedy_fallback = true
// MILP: tidal.prefetch %arg2
// MILP: tidal.prefetch %arg2

// FLOOR: tidal.arena_size = 2880 : i64
// BELOW: error: device memory budget 2879 bytes is too small for @step: the smallest budget its plan reaches is 2880 bytes

func.func @step(%x: tensor<4x8xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %w1: tensor<16x8xf32> {tidal.name = "w1", tidal.role = #tidal<role param>},
                %w2: tensor<32x16xf32> {tidal.name = "w2", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>},
        tensor<16x8xf32> {tidal.name = "w1", tidal.role = #tidal<role param>},
        tensor<32x16xf32> {tidal.name = "w2", tidal.role = #tidal<role param>}) {
  %h = tidal.gemm %x, %w1 {trans_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %r = tidal.relu %h : tensor<4x16xf32>
  %y = tidal.gemm %r, %w2 {trans_b = true} : (tensor<4x16xf32>, tensor<32x16xf32>) -> tensor<4x32xf32>
  %l = tidal.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x32xf32>) -> tensor<f32>
  %e = tidal.exp %y : tensor<4x32xf32>
  %g2 = tidal.gemm %e, %r {trans_a = true} : (tensor<4x32xf32>, tensor<4x16xf32>) -> tensor<32x16xf32>
  %dr = tidal.gemm %e, %w2 : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
  %dh = tidal.relu_backward %dr, %r : tensor<4x16xf32>
  %g1 = tidal.gemm %dh, %x {trans_a = true} : (tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
  %w1n = tidal.sgd_update %w1, %g1 {lr = 0.1} : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %w2n = tidal.sgd_update %w2, %g2 {lr = 0.1} : (tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<32x16xf32>
  return %l, %w1n, %w2n : tensor<f32>, tensor<16x8xf32>, tensor<32x16xf32>
}
