// --tidal-schedule-swaps: fit the device arena to a budget by offloading a
// tensor that is idle across the peak and prefetching it before its next
// use; the copies are explicit ops at their positions in the schedule.
// RUN: tidal-opt %s -split-input-file -tidal-schedule-swaps=budget=5500 -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s
// RUN: tidal-opt %s -split-input-file -tidal-schedule-swaps=budget=7000 | FileCheck %s --check-prefix=FITS
// RUN: tidal-opt %s -split-input-file -tidal-schedule-swaps=budget=4000 -verify-diagnostics -o /dev/null
// RUN: not tidal-opt %s -tidal-schedule-swaps=link-gbps=0 2>&1 | FileCheck %s --check-prefix=LINK

// Without swaps the peak is 6144 bytes at the broadcast (its 4 KiB result,
// the input of the mul kept for the end, and the exp feeding it). The exp
// %a is idle from the relu to the mul: it goes to the host after the relu,
// the offload is waited for before the peak, and the prefetch comes after
// the peak, waited for just before the mul, which reads the device copy.
// CHECK-LABEL: func.func @step
// CHECK-SAME: tidal.arena_size = 5120 : i64
// CHECK-SAME: tidal.device_budget = 5500 : i64
// CHECK-SAME: tidal.host_arena_size = 1024 : i64
// CHECK: %[[A:.*]] = tidal.exp %arg0
// CHECK-NEXT: %[[R:.*]] = tidal.relu %[[A]]
// CHECK-NEXT: %[[H:.*]] = tidal.offload %[[A]] {tidal.offsets = array<i64: 0>}
// CHECK-NEXT: %[[C:.*]] = tidal.exp %[[R]]
// CHECK-NEXT: %[[HW:.*]] = tidal.wait %[[H]] {tidal.offsets = array<i64: 0>}
// CHECK-NEXT: tidal.broadcast_to %[[C]]
// CHECK-NEXT: %[[S:.*]] = tidal.reduce_sum
// CHECK-NEXT: %[[P:.*]] = tidal.prefetch %[[HW]]
// CHECK-NEXT: %[[D:.*]] = tidal.wait %[[P]]
// CHECK-NEXT: tidal.mul %[[S]], %[[D]]

// A budget the step already fits changes nothing.
// FITS-LABEL: func.func @step
// FITS-NOT: tidal.offload

// expected-error @+1 {{device memory budget 4000 bytes is too small for @step: the smallest budget its plan reaches is 5120 bytes (1 tensors swapped, 0 recomputed; the peak is at op 6)}}
func.func @step(%x: tensor<256xf32> {tidal.name = "x", tidal.role = #tidal<role input>}) -> tensor<f32> {
  %a = tidal.exp %x : tensor<256xf32>
  %b = tidal.relu %a : tensor<256xf32>
  %c = tidal.exp %b : tensor<256xf32>
  %big = tidal.broadcast_to %c : (tensor<256xf32>) -> tensor<4x256xf32>
  %s = tidal.reduce_sum %big {axes = array<i64: 0>, keepdims = false} : (tensor<4x256xf32>) -> tensor<256xf32>
  %d = tidal.mul %s, %a : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %r = tidal.reduce_sum %d {axes = array<i64: 0>, keepdims = false} : (tensor<256xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// LINK: error: tidal-schedule-swaps: budget must be non-negative, link-gbps positive and ops-per-step at least 1
