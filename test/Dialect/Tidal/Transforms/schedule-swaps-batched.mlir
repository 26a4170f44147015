// --tidal-schedule-swaps with several steps per liveness analysis
// (ops-per-step; by default one step per 4,000 ops, so only large graphs
// batch). With ops-per-step=1 this 8-op graph takes up to 8 steps per
// analysis: both %a1 and %a2 are swapped off the peak, the second chosen
// from the bytes live updated in place (the first swap's tensor is left
// for the next analysis), and the plan verifies within the budget.
// RUN: tidal-opt %s "-tidal-schedule-swaps=budget=5200 ops-per-step=1" -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s
// Unbatched, the same two tensors are swapped.
// RUN: tidal-opt %s "-tidal-schedule-swaps=budget=5200" -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s
// RUN: not tidal-opt %s "-tidal-schedule-swaps=budget=5200 ops-per-step=0" 2>&1 | FileCheck %s --check-prefix=STEP

// CHECK-LABEL: func.func @step
// CHECK-SAME: tidal.arena_size = 5120 : i64
// CHECK-SAME: tidal.device_budget = 5200 : i64
// CHECK-SAME: tidal.host_arena_size = 2048 : i64
// CHECK: %[[A1:.*]] = tidal.exp %arg0
// CHECK: %[[A2:.*]] = tidal.relu %arg0
// CHECK-DAG: tidal.offload %[[A1]]
// CHECK-DAG: tidal.offload %[[A2]]
// CHECK: tidal.broadcast_to
// CHECK-COUNT-2: tidal.prefetch
// CHECK-NOT: tidal.offload

// STEP: error: tidal-schedule-swaps: budget must be non-negative, link-gbps positive and ops-per-step at least 1
func.func @step(%x: tensor<256xf32> {tidal.name = "x", tidal.role = #tidal<role input>}) -> tensor<f32> {
  %a1 = tidal.exp %x : tensor<256xf32>
  %a2 = tidal.relu %x : tensor<256xf32>
  %c = tidal.exp %a1 : tensor<256xf32>
  %big = tidal.broadcast_to %c : (tensor<256xf32>) -> tensor<4x256xf32>
  %s = tidal.reduce_sum %big {axes = array<i64: 0>, keepdims = false} : (tensor<4x256xf32>) -> tensor<256xf32>
  %d = tidal.mul %s, %a1 : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %e = tidal.mul %d, %a2 : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %r = tidal.reduce_sum %e {axes = array<i64: 0>, keepdims = false} : (tensor<256xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
