// --tidal-sync-batch-norm: the batch norm's statistics are averaged over the
// ranks (shifted by the running mean) and its backward sums are summed over
// them, each by an all-reduce waited for at once, numbered after the
// buckets already in the step; one rank changes nothing.
// RUN: tidal-opt %s -tidal-sync-batch-norm=ranks=4 | FileCheck %s
// RUN: tidal-opt %s -tidal-sync-batch-norm=ranks=1 | FileCheck %s --check-prefix=ONE

// CHECK-LABEL: func.func @train_step
// CHECK: %[[RM:.*]] = tidal.reshape %arg3 {shape = array<i64: 1, 3, 1>}
// CHECK: %[[C:.*]] = tidal.sub %arg0, %[[RM]]
// CHECK: %[[M:.*]] = tidal.reduce_mean %[[C]] {axes = array<i64: 0, 2>, keepdims = false}
// CHECK: %[[CC:.*]] = tidal.mul %[[C]], %[[C]]
// CHECK: %[[SQ:.*]] = tidal.reduce_mean %[[CC]] {axes = array<i64: 0, 2>, keepdims = false}
// CHECK: %[[S:.*]]:2 = tidal.all_reduce_start %[[M]], %[[SQ]] {bucket = 1 : i64, divisor = 4 : i64, ranks = 4 : i64}
// CHECK-NEXT: %[[W:.*]]:2 = tidal.all_reduce_wait %[[S]]#0, %[[S]]#1 {bucket = 1 : i64}
// CHECK-NEXT: %[[MEAN:.*]] = tidal.add %arg3, %[[W]]#0
// CHECK: %[[VAR:.*]] = tidal.max
// CHECK: %[[Y:.*]] = tidal.batch_norm_inference %arg0, %arg1, %arg2, %[[MEAN]], %[[VAR]] {epsilon = 1.000000e-03 : f32}
// The unbiased variance of the global batch: 32 / 31.
// CHECK: tidal.constant dense<1.03225803> : tensor<f32>
// Backward: sums of grad and grad * xhat over every rank.
// CHECK: %[[SG:.*]] = tidal.reduce_sum %arg5 {axes = array<i64: 0, 2>, keepdims = false}
// CHECK: %[[SGX:.*]] = tidal.reduce_sum
// CHECK: tidal.all_reduce_start %[[SG]], %[[SGX]] {bucket = 2 : i64, divisor = 1 : i64, ranks = 4 : i64}
// CHECK-NEXT: tidal.all_reduce_wait {{.*}} {bucket = 2 : i64}
// The global element count per channel: 2 * 4 * 4 ranks.
// CHECK: tidal.constant dense<3.200000e+01> : tensor<f32>
// CHECK-NOT: tidal.batch_norm_training
// CHECK-NOT: tidal.batch_norm_backward
// CHECK: return %[[Y]], {{.*}}, %[[SGX]], %[[SG]] :

// ONE: tidal.batch_norm_training
// ONE: tidal.batch_norm_backward
func.func @train_step(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %rm: tensor<3xf32>, %rv: tensor<3xf32>, %g: tensor<2x3x4xf32>, %w: tensor<5xf32>)
    -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3x4xf32>, tensor<5xf32>, tensor<3xf32>, tensor<3xf32>) {
  %y, %nm, %nv, %bm, %bv = tidal.batch_norm_training %x, %s, %b, %rm, %rv {epsilon = 1.0e-3 : f32} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %gx, %gs, %gb = tidal.batch_norm_backward %g, %x, %s, %bm, %bv {epsilon = 1.0e-3 : f32} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  %o = tidal.all_reduce_start %w {bucket = 0 : i64, divisor = 4 : i64, ranks = 4 : i64} : (tensor<5xf32>) -> tensor<5xf32>
  %ow = tidal.all_reduce_wait %o {bucket = 0 : i64} : (tensor<5xf32>) -> tensor<5xf32>
  return %y, %nm, %nv, %gx, %ow, %gs, %gb : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3x4xf32>, tensor<5xf32>, tensor<3xf32>, tensor<3xf32>
}
