// --tidal-insert-all-reduce buckets the gradients that the updates read in
// the order the backward pass computes them, starts each bucket right after
// its last gradient and waits right before its first update; the loss rides
// in the first bucket. The divisor is the number of ranks for a mean loss,
// 1 for a sum.
// RUN: tidal-opt %s -tidal-insert-all-reduce=ranks=4 | FileCheck %s --check-prefix=ONE
// RUN: tidal-opt %s -tidal-insert-all-reduce="ranks=2 bucket-bytes=40" | FileCheck %s --check-prefix=SPLIT
// RUN: tidal-opt %s -tidal-insert-all-reduce="ranks=2 loss-reduction=sum" | FileCheck %s --check-prefix=SUM
// RUN: tidal-opt %s -tidal-insert-all-reduce=ranks=2 -tidal-schedule | FileCheck %s --check-prefix=SCHED
// The transport the cost model prices the collectives at is recorded on the
// step (MPI unless network says otherwise).
// RUN: tidal-opt %s -tidal-insert-all-reduce="ranks=2 network=nccl" | FileCheck %s --check-prefix=NCCL
// RUN: not tidal-opt %s -tidal-insert-all-reduce="ranks=2 network=gloo" 2>&1 | FileCheck %s --check-prefix=GLOO
// NCCL: func.func @train_step{{.*}} attributes {tidal.comm_network = "nccl"}
// GLOO: error: unknown network 'gloo' (expected mpi or nccl)
// A measured network (tidal-calibrate --network) is recorded for the cost
// model; negative figures are refused.
// RUN: tidal-opt %s -tidal-insert-all-reduce="ranks=2 network-gbps=2.5 network-latency-us=4" | FileCheck %s --check-prefix=MEASURED
// RUN: not tidal-opt %s -tidal-insert-all-reduce="ranks=2 network-gbps=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// MEASURED: func.func @train_step{{.*}} attributes {tidal.comm_gbps = 2.500000e+00 : f64, tidal.comm_latency_us = 4.000000e+00 : f64, tidal.comm_network = "mpi"}
// NEGATIVE: error: network-gbps and network-latency-us must not be negative

// Gradients are ready in the order g3 (8 B), g2 (32 B), g1 (16 B): one
// bucket of 56 bytes holds them all, with the loss; it starts after g1. The
// updates follow the waits, bucket by bucket.
// ONE-LABEL: func.func @train_step
// ONE: %[[L:.*]] = tidal.reduce_mean
// ONE: %[[G3:.*]] = tidal.neg %arg2
// ONE: %[[G2:.*]] = tidal.neg %arg1
// ONE: %[[G1:.*]] = tidal.neg %arg0
// ONE-NEXT: %[[S:.*]]:4 = tidal.all_reduce_start %[[G3]], %[[G2]], %[[G1]], %[[L]] {bucket = 0 : i64, divisor = 4 : i64, ranks = 4 : i64}
// ONE-NEXT: %[[W:.*]]:4 = tidal.all_reduce_wait %[[S]]#0, %[[S]]#1, %[[S]]#2, %[[S]]#3 {bucket = 0 : i64}
// ONE-NEXT: tidal.sgd_update %arg0, %[[W]]#2
// ONE-NEXT: tidal.sgd_update %arg1, %[[W]]#1
// ONE-NEXT: tidal.sgd_update %arg2, %[[W]]#0
// ONE-NEXT: return %[[W]]#3,

// At 40 bytes: {g3, g2} (40 B) with the loss, then {g1}.
// SPLIT: %[[G3:.*]] = tidal.neg %arg2
// SPLIT: %[[G2:.*]] = tidal.neg %arg1
// SPLIT-NEXT: %[[S0:.*]]:3 = tidal.all_reduce_start %[[G3]], %[[G2]], %{{.*}} {bucket = 0 : i64, divisor = 2 : i64, ranks = 2 : i64}
// SPLIT: %[[G1:.*]] = tidal.neg %arg0
// SPLIT-NEXT: %[[S1:.*]] = tidal.all_reduce_start %[[G1]] {bucket = 1 : i64, divisor = 2 : i64, ranks = 2 : i64}
// SPLIT-NEXT: %[[W0:.*]]:3 = tidal.all_reduce_wait %[[S0]]#0, %[[S0]]#1, %[[S0]]#2 {bucket = 0 : i64}
// SPLIT-NEXT: tidal.sgd_update %arg1, %[[W0]]#1
// SPLIT-NEXT: tidal.sgd_update %arg2, %[[W0]]#0
// SPLIT-NEXT: %[[W1:.*]] = tidal.all_reduce_wait %[[S1]] {bucket = 1 : i64}
// SPLIT-NEXT: tidal.sgd_update %arg0, %[[W1]]
// SPLIT-NEXT: return

// SUM: tidal.all_reduce_start {{.*}} {bucket = 0 : i64, divisor = 1 : i64, ranks = 2 : i64}

// The scheduler starts the bucket as soon as its gradients are ready.
// SCHED: tidal.neg %arg0
// SCHED-NEXT: tidal.all_reduce_start
func.func @train_step(%w1: tensor<4xf32> {tidal.name = "w1", tidal.role = #tidal<role param>},
                      %w2: tensor<8xf32> {tidal.name = "w2", tidal.role = #tidal<role param>},
                      %w3: tensor<2xf32> {tidal.name = "w3", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>},
        tensor<4xf32> {tidal.name = "w1", tidal.role = #tidal<role param>},
        tensor<8xf32> {tidal.name = "w2", tidal.role = #tidal<role param>},
        tensor<2xf32> {tidal.name = "w3", tidal.role = #tidal<role param>}) {
  %l = tidal.reduce_mean %w2 {axes = array<i64: 0>, keepdims = false} : (tensor<8xf32>) -> tensor<f32>
  %g3 = tidal.neg %w3 : tensor<2xf32>
  %g2 = tidal.neg %w2 : tensor<8xf32>
  %g1 = tidal.neg %w1 : tensor<4xf32>
  %p1 = tidal.sgd_update %w1, %g1 {lr = 0.1} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %p2 = tidal.sgd_update %w2, %g2 {lr = 0.1} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %p3 = tidal.sgd_update %w3, %g3 {lr = 0.1} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %l, %p1, %p2, %p3 : tensor<f32>, tensor<4xf32>, tensor<8xf32>, tensor<2xf32>
}
