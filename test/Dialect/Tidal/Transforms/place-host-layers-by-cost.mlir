// --tidal-place auto, host layers by cost: where the chosen plan copies a
// kernel's result across the link, that kernel is tried on the host, and
// kept when the cost model predicts the step at least 5% faster.
// RUN: tidal-opt %s -tidal-place="mode=auto budget=6000000" -tidal-schedule-swaps=budget=6000000 -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s --check-prefix=COST
// RUN: tidal-opt %s -tidal-place="mode=auto budget=6000000 host-layers-by-cost=false" -tidal-schedule-swaps=budget=6000000 -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s --check-prefix=FIT
// RUN: tidal-opt %s -tidal-place="mode=auto budget=20000000" | FileCheck %s --check-prefix=FITS
// RUN: tidal-opt %s -tidal-place="mode=auto budget=6000000 planner=milp" | FileCheck %s --check-prefix=MILP
// RUN: tidal-opt %s -tidal-place="mode=auto budget=6000000 planner=milp host-layers-by-cost=false" | FileCheck %s --check-prefix=MILP-NOLAYERS

// A 4 MiB weight with its momentum does not fit 6 MB with everything on the
// device: it is streamed from host memory and updated there. Its gradient
// (4 MiB, a GEMM of two 8 KiB operands) would be offloaded for the host
// update; by cost the GEMM runs on the host instead, so only its operands
// cross the link (16 KiB instead of 4 MiB), and the attribute records the
// predicted steps without and with it.
// COST-LABEL: func.func @step
// COST-SAME: tidal.host_layers_by_cost = {after_us = [[AFTER:[0-9.e+]+]] : f64, before_us = [[BEFORE:[0-9.e+]+]] : f64, layers = 1 : i64}
// COST: %[[Y:.*]] = tidal.gemm %arg0, %{{.*}} {{{.*}}trans_b = true
// COST: %[[E:.*]] = tidal.exp %[[Y]]
// COST-DAG: %[[XH:.*]] = tidal.offload %arg0
// COST-DAG: %[[EH:.*]] = tidal.offload %[[E]]
// COST-DAG: %[[EW:.*]] = tidal.wait %[[EH]]
// COST-DAG: %[[XW:.*]] = tidal.wait %[[XH]]
// COST: %[[G:.*]] = tidal.gemm %[[EW]], %[[XW]] {{{.*}}tidal.device = "host"{{.*}}trans_a = true}
// COST-NEXT: tidal.sgd_momentum_update %arg1, %[[G]], %arg2 {{{.*}}tidal.device = "host"
// COST-NOT: tidal.offload

// With the MILP planner the kernels are candidates of its solve, next
// to the swaps, recomputations and the update's placement, each measured
// on a copy of the step with it alone on the host, then re-priced against
// the solve's choice. With the parameter streamed from host memory, every
// kernel that reads it is cheaper on the host (the 4 MiB weight never
// crosses the link): the whole step runs there, nothing is copied, and
// that is predicted faster than the greedy planner's plan.
// MILP-LABEL: func.func @step
// MILP-NOT: tidal.host_layers_by_cost
// MILP-SAME: tidal.milp = {{{.*}}host_layers = 4 : i64, host_updates = 0 : i64, layers = 4 : i64, {{.*}}streamed = 1 : i64}
// MILP-SAME: tidal.place_planner = {greedy_us = {{.*}}, kept = "milp", milp_us = {{.*}}}
// MILP: tidal.gemm {{.*}}tidal.device = "host"{{.*}}trans_b = true
// MILP-NEXT: tidal.reduce_sum {{.*}}tidal.device = "host"
// MILP-NEXT: tidal.exp {{.*}}tidal.device = "host"
// MILP-NEXT: tidal.gemm {{.*}}tidal.device = "host"{{.*}}trans_a = true
// MILP-NEXT: tidal.sgd_momentum_update {{.*}}tidal.device = "host"
// MILP-NOT: tidal.offload
// MILP-NOT: tidal.prefetch

// Without host layers by cost the MILP has no layer candidates (its summary
// no `layers`): the parameter is streamed, the kernels stay on the device.
// MILP-NOLAYERS-LABEL: func.func @step
// MILP-NOLAYERS-NOT: host_layers
// MILP-NOLAYERS-SAME: tidal.milp = {{{.*}}streamed = 1 : i64}
// MILP-NOLAYERS-NOT: tidal.device = "host"
// MILP-NOLAYERS: tidal.sgd_momentum_update {{.*}}tidal.device = "host"

// Without host layers by cost: the gradient is computed on the device and
// offloaded whole.
// FIT-LABEL: func.func @step
// FIT-NOT: tidal.host_layers_by_cost
// FIT: %[[G:.*]] = tidal.gemm {{.*}}trans_a = true
// FIT-NOT: tidal.device = "host"
// FIT: tidal.offload %[[G]]
// FIT: tidal.sgd_momentum_update {{.*}}tidal.device = "host"

// Where everything fits on the device without moving a tensor, nothing is
// tried: no copy, so no layer to save one.
// FITS-LABEL: func.func @step
// FITS-NOT: tidal.host_layers_by_cost
// FITS-NOT: tidal.device = "host"
func.func @step(%x: tensor<2x1024xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %w: tensor<1024x1024xf32> {tidal.name = "w", tidal.role = #tidal<role param>},
                %m: tensor<1024x1024xf32> {tidal.name = "w.momentum_buffer", tidal.role = #tidal<role optimizer_state>})
    -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>},
        tensor<1024x1024xf32> {tidal.name = "w", tidal.role = #tidal<role param>},
        tensor<1024x1024xf32> {tidal.name = "w.momentum_buffer", tidal.role = #tidal<role optimizer_state>}) {
  %y = tidal.gemm %x, %w {trans_b = true} : (tensor<2x1024xf32>, tensor<1024x1024xf32>) -> tensor<2x1024xf32>
  %l = tidal.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x1024xf32>) -> tensor<f32>
  %e = tidal.exp %y : tensor<2x1024xf32>
  %g = tidal.gemm %e, %x {trans_a = true} : (tensor<2x1024xf32>, tensor<2x1024xf32>) -> tensor<1024x1024xf32>
  %w2, %m2 = tidal.sgd_momentum_update %w, %g, %m {lr = 0.1, momentum = 0.9} : (tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>)
  return %l, %w2, %m2 : tensor<f32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>
}
