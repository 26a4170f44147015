// --tidal-schedule-swaps: the order in which the greedy loop prefers its
// choices (docs/memory-plan.md, "The greedy loop"): the least cost per byte
// freed, then the most bytes, then the longest idle span around the peak,
// then the first tensor in schedule order.
// RUN: tidal-opt %s -split-input-file -tidal-schedule-swaps=budget=8000 | FileCheck %s --check-prefix=ONE
// RUN: tidal-opt %s -split-input-file -tidal-schedule-swaps=budget=7000 | FileCheck %s --check-prefix=TWO

// %a, %b and %c are all 1 KiB and idle across the peak at the broadcast,
// and every copy hides behind the kernels, so all three swaps cost the
// same. %b is idle longest (from the exp of %b to the last mul), so one
// swap takes it; a second takes %a, idle longer than %c once %b's copies
// are in the schedule.

// ONE-LABEL: func.func @idle
// ONE: %[[A:.*]] = tidal.exp %arg0
// ONE-NEXT: %[[B:.*]] = tidal.exp %[[A]]
// ONE-NEXT: %[[C:.*]] = tidal.exp %[[B]]
// ONE-NEXT: tidal.offload %[[B]]
// ONE-NOT: tidal.offload

// TWO-LABEL: func.func @idle
// TWO: %[[A:.*]] = tidal.exp %arg0
// TWO-NEXT: %[[B:.*]] = tidal.exp %[[A]]
// TWO-NEXT: tidal.offload %[[A]]
// TWO-NEXT: %[[C:.*]] = tidal.exp %[[B]]
// TWO-NOT: tidal.offload %[[C]]
// TWO: tidal.offload %[[B]]
// TWO-NOT: tidal.offload
func.func @idle(%x: tensor<256xf32> {tidal.name = "x", tidal.role = #tidal<role input>}) -> tensor<f32> {
  %a = tidal.exp %x : tensor<256xf32>
  %b = tidal.exp %a : tensor<256xf32>
  %c = tidal.exp %b : tensor<256xf32>
  %big = tidal.broadcast_to %c : (tensor<256xf32>) -> tensor<4x256xf32>
  %s = tidal.reduce_sum %big {axes = array<i64: 0>, keepdims = false} : (tensor<4x256xf32>) -> tensor<256xf32>
  %d1 = tidal.mul %s, %a : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %d2 = tidal.mul %d1, %d1 : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %d3 = tidal.mul %d2, %c : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %d4 = tidal.mul %d3, %b : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %r = tidal.reduce_sum %d4 {axes = array<i64: 0>, keepdims = false} : (tensor<256xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// %a and %c are 1 KiB, idle from the add to the second mul, and their
// swaps cost the same: the first in schedule order, %a, goes.
// ONE-LABEL: func.func @order
// ONE-NOT: tidal.offload
// TWO-LABEL: func.func @order
// TWO: %[[A:.*]] = tidal.exp %arg0
// TWO-NOT: tidal.offload
// TWO: tidal.offload %[[A]]
// TWO-NOT: tidal.offload
func.func @order(%x: tensor<256xf32> {tidal.name = "x", tidal.role = #tidal<role input>}) -> tensor<f32> {
  %a = tidal.exp %x : tensor<256xf32>
  %c = tidal.relu %x : tensor<256xf32>
  %m = tidal.add %a, %c : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %big = tidal.broadcast_to %m : (tensor<256xf32>) -> tensor<4x256xf32>
  %s = tidal.reduce_sum %big {axes = array<i64: 0>, keepdims = false} : (tensor<4x256xf32>) -> tensor<256xf32>
  %d1 = tidal.mul %s, %s : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %d2 = tidal.mul %c, %a : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %d3 = tidal.mul %d1, %d2 : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %r = tidal.reduce_sum %d3 {axes = array<i64: 0>, keepdims = false} : (tensor<256xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
