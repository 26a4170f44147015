// --tidal-shard-optimizer: each update runs on this rank's chunk of its
// parameter and all-reduced gradient, with optimizer state of the chunk's
// size (marked with its full shape); each gradient bucket's updated chunks
// are all-gathered into the full parameters, waited for at the end.
// RUN: tidal-opt %s -tidal-shard-optimizer=ranks=4 | FileCheck %s
// RUN: tidal-opt %s -tidal-shard-optimizer=ranks=1 | FileCheck %s --check-prefix=ONE

// 10 elements on 4 ranks: chunks of 3 (the last padded); 6 elements: 2.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %arg2: tensor<3xf32> {tidal.name = "w.momentum_buffer", tidal.role = #tidal<role optimizer_state>, tidal.shard_of = array<i64: 2, 5>}
// CHECK-SAME: %arg3: tensor<2xf32> {tidal.name = "v.momentum_buffer", tidal.role = #tidal<role optimizer_state>, tidal.shard_of = array<i64: 6>}
// CHECK-SAME: -> (tensor<2x5xf32> {{.*}}, tensor<3xf32> {{.*}}, tensor<6xf32> {{.*}}, tensor<2xf32>
// CHECK: %[[WG:.*]] = tidal.all_reduce_wait %{{.*}} {bucket = 0 : i64}
// CHECK-DAG: %[[P:.*]] = tidal.shard %arg0 {ranks = 4 : i64} : (tensor<2x5xf32>) -> tensor<3xf32>
// CHECK-DAG: %[[G:.*]] = tidal.shard %[[WG]] {ranks = 4 : i64} : (tensor<2x5xf32>) -> tensor<3xf32>
// CHECK: %[[U:.*]], %[[M:.*]] = tidal.sgd_momentum_update %[[P]], %[[G]], %arg2 {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT: %[[S0:.*]] = tidal.all_gather_start %[[U]] {bucket = 2 : i64, ranks = 4 : i64} : (tensor<3xf32>) -> tensor<2x5xf32>
// CHECK: tidal.all_reduce_wait %{{.*}} {bucket = 1 : i64}
// CHECK: tidal.sgd_momentum_update {{.*}} : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT: %[[S1:.*]] = tidal.all_gather_start {{.*}} {bucket = 3 : i64, ranks = 4 : i64} : (tensor<2xf32>) -> tensor<6xf32>
// CHECK: %[[W0:.*]] = tidal.all_gather_wait %[[S0]] {bucket = 2 : i64}
// CHECK: %[[W1:.*]] = tidal.all_gather_wait %[[S1]] {bucket = 3 : i64}
// CHECK-NEXT: return %[[W0]], %[[M]], %[[W1]],

// ONE-NOT: tidal.shard
func.func @train_step(%w: tensor<2x5xf32> {tidal.name = "w", tidal.role = #tidal<role param>},
                      %v: tensor<6xf32> {tidal.name = "v", tidal.role = #tidal<role param>},
                      %wm: tensor<2x5xf32> {tidal.name = "w.momentum_buffer", tidal.role = #tidal<role optimizer_state>},
                      %vm: tensor<6xf32> {tidal.name = "v.momentum_buffer", tidal.role = #tidal<role optimizer_state>})
    -> (tensor<2x5xf32> {tidal.name = "w", tidal.role = #tidal<role param>},
        tensor<2x5xf32> {tidal.name = "w.momentum_buffer", tidal.role = #tidal<role optimizer_state>},
        tensor<6xf32> {tidal.name = "v", tidal.role = #tidal<role param>},
        tensor<6xf32> {tidal.name = "v.momentum_buffer", tidal.role = #tidal<role optimizer_state>}) {
  %gw = tidal.neg %w : tensor<2x5xf32>
  %s0 = tidal.all_reduce_start %gw {bucket = 0 : i64, divisor = 4 : i64, ranks = 4 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %gv = tidal.neg %v : tensor<6xf32>
  %s1 = tidal.all_reduce_start %gv {bucket = 1 : i64, divisor = 4 : i64, ranks = 4 : i64} : (tensor<6xf32>) -> tensor<6xf32>
  %w0 = tidal.all_reduce_wait %s0 {bucket = 0 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %u0:2 = tidal.sgd_momentum_update %w, %w0, %wm {lr = 0.1, momentum = 0.9} : (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>)
  %w1 = tidal.all_reduce_wait %s1 {bucket = 1 : i64} : (tensor<6xf32>) -> tensor<6xf32>
  %u1:2 = tidal.sgd_momentum_update %v, %w1, %vm {lr = 0.1, momentum = 0.9} : (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>)
  return %u0#0, %u0#1, %u1#0, %u1#1 : tensor<2x5xf32>, tensor<2x5xf32>, tensor<6xf32>, tensor<6xf32>
}

// ZeRO stage 2: the buckets are reduce-scattered; the updates read the
// chunks directly.
// RUN: tidal-opt %s -tidal-shard-optimizer="ranks=4 gradients=true" | FileCheck %s --check-prefix=GRADS
// GRADS: %[[RS:.*]] = tidal.reduce_scatter_start %{{.*}} {bucket = 0 : i64, divisor = 4 : i64, ranks = 4 : i64} : (tensor<2x5xf32>) -> tensor<3xf32>
// GRADS: tidal.reduce_scatter_start %{{.*}} {bucket = 1 : i64, divisor = 4 : i64, ranks = 4 : i64} : (tensor<6xf32>) -> tensor<2xf32>
// GRADS: %[[G:.*]] = tidal.reduce_scatter_wait %[[RS]] {bucket = 0 : i64}
// GRADS-NEXT: %[[P:.*]] = tidal.shard %arg0
// GRADS-NEXT: tidal.sgd_momentum_update %[[P]], %[[G]], %arg2
// GRADS-NOT: tidal.all_reduce
