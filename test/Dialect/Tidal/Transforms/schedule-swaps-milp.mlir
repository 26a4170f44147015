// --tidal-schedule-swaps=strategy=milp: every tensor's longest idle gap is
// a candidate (swap with each copy hidden or waited for at once, or a
// recomputation), and GLPK chooses the cheapest set that fits the budget.
// RUN: tidal-opt %s "-tidal-schedule-swaps=budget=6200 strategy=milp" -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s
// RUN: tidal-opt %s "-tidal-schedule-swaps=budget=6200 strategy=milp recompute=1 link-gbps=0.001" | FileCheck %s --check-prefix=SLOW
// RUN: not tidal-opt %s "-tidal-schedule-swaps=budget=6200 strategy=best" 2>&1 | FileCheck %s --check-prefix=STRATEGY

// Positions 4 (the broadcast) and 5 (the reduce_sum) are over the budget,
// and %a is idle across both. The offload hides behind the exp of %x, but
// the prefetch cannot come before position 6 without being live at 5: it is
// waited for at once. Cost: one copy of 1 KiB at 16 GB/s (0.064 us) and
// 1 us for the swap's ops.
// CHECK-LABEL: func.func @step
// CHECK-SAME: tidal.arena_size = 6144 : i64
// CHECK-SAME: tidal.milp = {candidates = 1 : i64, cost_us = 1.064{{0*}}e+00 : f64, feasible = true, optimal = true}
// CHECK: %[[A:.*]] = tidal.relu
// CHECK-NEXT: %[[H:.*]] = tidal.offload %[[A]]
// CHECK-NEXT: %[[C:.*]] = tidal.exp %arg0
// CHECK-NEXT: %[[HW:.*]] = tidal.wait %[[H]]
// CHECK-NEXT: tidal.broadcast_to %[[C]]
// CHECK-NEXT: %[[S:.*]] = tidal.reduce_sum
// CHECK-NEXT: %[[P:.*]] = tidal.prefetch %[[HW]]
// CHECK-NEXT: %[[D:.*]] = tidal.wait %[[P]]
// CHECK-NEXT: tidal.mul %[[S]], %[[D]]

// Over a slow link the two clones (4.4 us) cost less than the copies.
// SLOW-LABEL: func.func @step
// SLOW-SAME: tidal.milp = {candidates = 2 : i64
// SLOW-NOT: tidal.offload
// SLOW: tidal.relu {{.*}}tidal.recompute_of

// STRATEGY: error: tidal-schedule-swaps: unknown strategy 'best' (expected greedy, milp or auto)
func.func @step(%x: tensor<256xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %w: tensor<256xf32> {tidal.name = "w", tidal.role = #tidal<role param>}) -> tensor<f32> {
  %e = tidal.exp %w : tensor<256xf32>
  %a = tidal.relu %e : tensor<256xf32>
  %c = tidal.exp %x : tensor<256xf32>
  %big = tidal.broadcast_to %c : (tensor<256xf32>) -> tensor<4x256xf32>
  %s = tidal.reduce_sum %big {axes = array<i64: 0>, keepdims = false} : (tensor<4x256xf32>) -> tensor<256xf32>
  %d = tidal.mul %s, %a : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %r = tidal.reduce_sum %d {axes = array<i64: 0>, keepdims = false} : (tensor<256xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
