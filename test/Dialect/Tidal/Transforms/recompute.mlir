// --tidal-recompute: fit the device arena to a budget by dropping a tensor
// that is idle across the peak and cloning the ops that define it just
// before its next use, from operands still live there.
// RUN: tidal-opt %s -tidal-recompute=budget=6200 -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s
// With --tidal-schedule-swaps=recompute=1 the cost model chooses: over a
// fast link the copies hide behind the kernels and %a is swapped; over a
// slow one the stall would cost more than the two clones.
// RUN: tidal-opt %s "-tidal-schedule-swaps=budget=6200 recompute=1" | FileCheck %s --check-prefix=FAST
// RUN: tidal-opt %s "-tidal-schedule-swaps=budget=6200 recompute=1 link-gbps=0.001" | FileCheck %s --check-prefix=SLOW

// Without recomputation the peak is 7168 bytes at the broadcast: its 4 KiB
// result, its operand, the parameter and %a, which waits for the mul. %a is
// relu(exp(w)) and w is live to the end, so both ops are cloned before the
// mul (the exp's result, dead at the relu, is not live there either) and
// the peak drops to 6144.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: tidal.arena_size = 6144 : i64
// CHECK: %[[E:.*]] = tidal.exp %arg1 {{{.*}}tidal.recompute_id = [[EID:[0-9]+]] : i64}
// CHECK-NEXT: %[[A:.*]] = tidal.relu %[[E]] {{{.*}}tidal.recompute_id = [[AID:[0-9]+]] : i64}
// CHECK-NEXT: %[[C:.*]] = tidal.exp %arg0
// CHECK-NEXT: tidal.broadcast_to %[[C]]
// CHECK-NEXT: %[[S:.*]] = tidal.reduce_sum
// CHECK-NEXT: %[[E2:.*]] = tidal.exp %arg1 {{{.*}}tidal.recompute_of = [[EID]] : i64}
// CHECK-NEXT: %[[A2:.*]] = tidal.relu %[[E2]] {{{.*}}tidal.recompute_of = [[AID]] : i64}
// CHECK-NEXT: tidal.mul %[[S]], %[[A2]]


// FAST-LABEL: func.func @chain
// FAST-NOT: recompute_of
// FAST: tidal.offload
// FAST-NOT: recompute_of

// SLOW-LABEL: func.func @chain
// SLOW-NOT: tidal.offload
// SLOW: tidal.relu {{.*}}tidal.recompute_of
// SLOW-NOT: tidal.offload

func.func @chain(%x: tensor<256xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
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

