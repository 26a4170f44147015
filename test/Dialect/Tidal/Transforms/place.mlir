// --tidal-place: ops on the host CPU and tensors in host memory, with the
// copies between the two explicit in the IR.
// RUN: tidal-opt %s -tidal-place=mode=optimizer -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s --check-prefix=OPT
// RUN: tidal-opt %s -tidal-place=mode=host -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s --check-prefix=HOST
// RUN: tidal-opt %s -tidal-place=mode=device | FileCheck %s --check-prefix=DEV
// RUN: tidal-opt %s -tidal-place="mode=auto budget=3000" -tidal-schedule-swaps=budget=3000 | FileCheck %s --check-prefix=DEV
// RUN: tidal-opt %s -tidal-place="mode=auto budget=1500" -tidal-schedule-swaps=budget=1500 -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s --check-prefix=STREAM
// RUN: tidal-opt %s -tidal-place=mode=stream -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s --check-prefix=STREAM
// RUN: tidal-opt %s -tidal-place="mode=auto budget=960" -tidal-schedule-swaps=budget=960 -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s --check-prefix=STREAM
// RUN: not tidal-opt %s -tidal-place="mode=auto budget=959 host-layers=false" -tidal-schedule-swaps=budget=959 2>&1 | FileCheck %s --check-prefix=FLOOR
// RUN: tidal-opt %s -tidal-place="mode=auto budget=960" | FileCheck %s --check-prefix=TRIALS
// RUN: tidal-opt %s -tidal-place="mode=auto budget=600" -tidal-schedule-swaps=budget=600 -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s --check-prefix=LAYERS
// RUN: not tidal-opt %s -tidal-place="mode=auto budget=1500 profile=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=PROFILE
// RUN: not tidal-opt %s -tidal-place=mode=gpu 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not tidal-opt %s -tidal-place="mode=auto budget=-1" 2>&1 | FileCheck %s --check-prefix=BUDGET

// ZeRO-Offload: the momentum buffer lives in the host arena (offset 0 of
// it, updated in place); the gradient and the parameter go to the host,
// the update runs there, and the new parameter comes back into the
// parameter's own device bytes (offset 0 of the device arena), so the
// driver copies nothing. The device arena no longer holds the momentum:
// 1472 bytes instead of 1984 with everything on the device.
// OPT-LABEL: func.func @step
// OPT-SAME: %arg1: tensor<16x8xf32> {tidal.name = "w", tidal.offset = 0 : i64, tidal.role = #tidal<role param>}
// OPT-SAME: %arg2: tensor<16x8xf32> {tidal.name = "w.momentum_buffer", tidal.offset = 0 : i64, tidal.role = #tidal<role optimizer_state>, tidal.space = "host"}
// OPT-SAME: tensor<16x8xf32> {tidal.name = "w", tidal.role = #tidal<role param>}
// OPT-SAME: tensor<16x8xf32> {tidal.name = "w.momentum_buffer", tidal.role = #tidal<role optimizer_state>, tidal.space = "host"}
// OPT-SAME: tidal.arena_size = 1472 : i64
// OPT-SAME: tidal.host_arena_size = 1536 : i64
// OPT-SAME: tidal.result_offsets = array<i64: 1408, 0, 0>
// OPT: %[[G:.*]] = tidal.gemm %{{.*}}, %arg0 {{{.*}}trans_a = true}
// OPT-NEXT: %[[GH:.*]] = tidal.offload %[[G]]
// OPT-NEXT: %[[WH:.*]] = tidal.offload %arg1
// OPT-NEXT: %[[WHW:.*]] = tidal.wait %[[WH]]
// OPT-NEXT: %[[GHW:.*]] = tidal.wait %[[GH]]
// OPT-NEXT: %[[W2:.*]], %[[M2:.*]] = tidal.sgd_momentum_update %[[WHW]], %[[GHW]], %arg2 {{{.*}}tidal.device = "host", tidal.offsets = array<i64: 512, 0>}
// OPT-NEXT: %[[P:.*]] = tidal.prefetch %[[W2]] {tidal.offsets = array<i64: 0>}
// OPT-NEXT: %[[PW:.*]] = tidal.wait %[[P]] {tidal.offsets = array<i64: 0>}
// OPT-NEXT: return %{{.*}}, %[[PW]], %[[M2]]

// Everything on the host: every op, argument and result is in the host
// arena, the device arena is empty and nothing is copied.
// HOST-LABEL: func.func @step
// HOST-SAME: tidal.name = "x", tidal.offset = {{[0-9]+}} : i64, tidal.role = #tidal<role input>, tidal.space = "host"
// HOST-SAME: tidal.name = "w", tidal.offset = {{[0-9]+}} : i64, tidal.role = #tidal<role param>, tidal.space = "host"
// HOST-SAME: tidal.name = "loss", tidal.role = #tidal<role loss>, tidal.space = "host"
// HOST-SAME: tidal.arena_size = 0 : i64
// HOST-NOT: tidal.offload
// HOST-NOT: tidal.prefetch
// HOST: tidal.gemm {{.*}}tidal.device = "host"
// HOST: tidal.reduce_sum {{.*}}tidal.device = "host"
// HOST: tidal.exp {{.*}}tidal.device = "host"
// HOST: tidal.gemm {{.*}}tidal.device = "host"
// HOST: tidal.sgd_momentum_update {{.*}}tidal.device = "host"

// Nothing placed: with mode=device, and with auto when the budget is met
// on the device.
// DEV-LABEL: func.func @step
// DEV-NOT: tidal.space
// DEV-NOT: tidal.device =
// DEV-NOT: tidal.offload

// Streamed parameters (and auto below the all-device 1984 bytes: both host
// plans fit at 1500, and streaming, which copies the parameter in once
// instead of out and back, is predicted faster; and at exactly the
// smallest budget auto reports): the parameter lives in the host
// arena with its momentum; the device reads a copy prefetched before the
// forward gemm, and the update runs on the host in place, so nothing comes
// back. The device arena drops to 960 bytes.
// STREAM-LABEL: func.func @step
// STREAM-SAME: %arg1: tensor<16x8xf32> {tidal.name = "w", tidal.offset = 0 : i64, tidal.role = #tidal<role param>, tidal.space = "host"}
// STREAM-SAME: %arg2: tensor<16x8xf32> {tidal.name = "w.momentum_buffer", tidal.offset = 512 : i64, tidal.role = #tidal<role optimizer_state>, tidal.space = "host"}
// STREAM-SAME: tensor<16x8xf32> {tidal.name = "w", tidal.role = #tidal<role param>, tidal.space = "host"}
// STREAM-SAME: tidal.arena_size = 960 : i64
// STREAM: %[[P:.*]] = tidal.prefetch %arg1
// STREAM-NEXT: %[[PW:.*]] = tidal.wait %[[P]]
// STREAM-NEXT: tidal.gemm %arg0, %[[PW]]
// STREAM: %[[GH:.*]] = tidal.offload
// STREAM-NEXT: %[[GHW:.*]] = tidal.wait %[[GH]]
// STREAM-NEXT: %[[W2:.*]], %[[M2:.*]] = tidal.sgd_momentum_update %arg1, %[[GHW]], %arg2 {{{.*}}tidal.device = "host", tidal.offsets = array<i64: 0, 512>}
// STREAM-NOT: tidal.prefetch
// STREAM: return %{{.*}}, %[[W2]], %[[M2]]

// Under the streamed floor, with host layers: the forward gemm at the
// floor's peak runs on the host (reading the host weight directly; x goes
// out, y comes in), and the arena fits 600 bytes.
// LAYERS-LABEL: func.func @step
// LAYERS-SAME: tidal.arena_size = {{[0-9]+}} : i64
// LAYERS: tidal.gemm %{{.*}}, %arg1 {{{.*}}tidal.device = "host"

// At 960 bytes the momentum alone puts the all-device plan over the budget
// (no trial); the host optimizer keeps w (512 bytes) on the device, and the
// weight gradient's gemm needs e, x and its result (896 bytes) beside it:
// no state its steps reach can fit, so that trial fails before a step. The
// streamed plan fits, and so does a host-layers-by-cost trial.
// TRIALS: tidal.place_trials = {fitted = 2 : i64, trials = 3 : i64, unreachable = 1 : i64}

// FLOOR: error: device memory budget 959 bytes is too small for @step: the smallest budget its plan reaches is 960 bytes

// PROFILE: error: tidal-place: {{.*}}missing.json: cannot read
// MODE: error: tidal-place: unknown mode 'gpu' (expected auto, device, host, optimizer or stream)
// BUDGET: error: tidal-place: budget must be non-negative and link-gbps positive

func.func @step(%x: tensor<4x8xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %w: tensor<16x8xf32> {tidal.name = "w", tidal.role = #tidal<role param>},
                %m: tensor<16x8xf32> {tidal.name = "w.momentum_buffer", tidal.role = #tidal<role optimizer_state>})
    -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>},
        tensor<16x8xf32> {tidal.name = "w", tidal.role = #tidal<role param>},
        tensor<16x8xf32> {tidal.name = "w.momentum_buffer", tidal.role = #tidal<role optimizer_state>}) {
  %y = tidal.gemm %x, %w {trans_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %l = tidal.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x16xf32>) -> tensor<f32>
  %e = tidal.exp %y : tensor<4x16xf32>
  %g = tidal.gemm %e, %x {trans_a = true} : (tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
  %w2, %m2 = tidal.sgd_momentum_update %w, %g, %m {lr = 0.1, momentum = 0.9} : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>)
  return %l, %w2, %m2 : tensor<f32>, tensor<16x8xf32>, tensor<16x8xf32>
}
