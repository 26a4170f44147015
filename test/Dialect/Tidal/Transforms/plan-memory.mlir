// --tidal-plan-memory (strategy packed, the default): tensors whose
// lifetimes do not overlap share bytes, results written in place take their
// operand's offset, and the arena meets the lower bound on these graphs.
// RUN: tidal-opt %s -split-input-file -tidal-plan-memory -tidal-verify-memory-plan | FileCheck %s
// RUN: tidal-opt %s -split-input-file -tidal-plan-memory=in-place=false -tidal-verify-memory-plan | FileCheck %s --check-prefix=NOINPLACE

// The parameter (live for the whole step) sits at the bottom; the input,
// the mul, relu and relu_backward written over it, and the view share one
// slot; the two reductions get their own.
// CHECK-LABEL: func.func @step
// CHECK-SAME: %arg0: tensor<2x8xf32> {tidal.name = "x", tidal.offset = 64 : i64
// CHECK-SAME: %arg1: tensor<8xf32> {tidal.name = "w", tidal.offset = 0 : i64
// CHECK-SAME: tidal.arena_size = 256 : i64, tidal.lower_bound = 256 : i64, tidal.no_reuse_size = 512 : i64, tidal.result_offsets = array<i64: 128, 0>
// CHECK: tidal.mul {{.*}}tidal.offsets = array<i64: 64>
// CHECK: tidal.relu {{.*}}tidal.offsets = array<i64: 64>
// CHECK: tidal.reshape {{.*}}tidal.offsets = array<i64: 64>
// CHECK: tidal.reduce_sum {{.*}}tidal.offsets = array<i64: 128>
// CHECK: tidal.relu_backward {{.*}}tidal.offsets = array<i64: 64>
// CHECK: tidal.reduce_sum {{.*}}tidal.offsets = array<i64: 192>
// CHECK: tidal.sgd_update {{.*}}tidal.offsets = array<i64: 0>

// Without in-place reuse the update gets bytes of its own (the driver then
// copies it over the parameter after the step).
// NOINPLACE-LABEL: func.func @step
// NOINPLACE-SAME: tidal.arena_size = 256 : i64, tidal.lower_bound = 256 : i64
// NOINPLACE: tidal.sgd_update %arg1, {{.*}}tidal.offsets = array<i64: 192>
func.func @step(%x: tensor<2x8xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %w: tensor<8xf32> {tidal.name = "w", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>},
        tensor<8xf32> {tidal.name = "w", tidal.role = #tidal<role param>}) {
  %0 = tidal.mul %x, %w : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %1 = tidal.relu %0 : tensor<2x8xf32>
  %2 = tidal.reshape %1 {shape = array<i64: 16>} : (tensor<2x8xf32>) -> tensor<16xf32>
  %3 = tidal.reduce_sum %2 {axes = array<i64: 0>, keepdims = false} : (tensor<16xf32>) -> tensor<f32>
  %4 = tidal.relu_backward %1, %1 : tensor<2x8xf32>
  %5 = tidal.reduce_sum %4 {axes = array<i64: 0>, keepdims = false} : (tensor<2x8xf32>) -> tensor<8xf32>
  %6 = tidal.sgd_update %w, %5 {lr = 1.0e-01 : f64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %3, %6 : tensor<f32>, tensor<8xf32>
}

// -----

// A chain of element-wise ops: the input and one temporary are live at
// once, and each later result is written over its dying operand; the
// reductions are returned, so they live to the end; the constant goes to the
// constant arena and is returned through an arena slot of its own
// (1600 + 1600 + 64: the lower bound).
// CHECK-LABEL: module attributes {tidal.constants_size = 64 : i64}
// CHECK: func.func @chain
// CHECK-SAME: tidal.arena_size = 3264 : i64, tidal.lower_bound = 3264 : i64, tidal.no_reuse_size = 6592 : i64
// CHECK: tidal.exp {{.*}}tidal.offsets = array<i64: [[A:[0-9]+]]>
// CHECK: tidal.reduce_sum
// CHECK: tidal.mul {{.*}}tidal.offsets = array<i64: [[A]]>
// CHECK: tidal.exp {{.*}}tidal.offsets = array<i64: [[A]]>
// CHECK: tidal.constant {tidal.const_offsets = array<i64: 0>}
func.func @chain(%x: tensor<400xf32> {tidal.name = "x", tidal.role = #tidal<role input>})
    -> (tensor<f32>, tensor<f32>, tensor<4xf32>) {
  %0 = tidal.exp %x : tensor<400xf32>
  %1 = tidal.reduce_sum %0 {axes = array<i64: 0>, keepdims = false} : (tensor<400xf32>) -> tensor<f32>
  %2 = tidal.mul %0, %x : (tensor<400xf32>, tensor<400xf32>) -> tensor<400xf32>
  %3 = tidal.exp %2 : tensor<400xf32>
  %4 = tidal.reduce_sum %3 {axes = array<i64: 0>, keepdims = false} : (tensor<400xf32>) -> tensor<f32>
  %c = tidal.constant dense<1.0> : tensor<4xf32>
  return %1, %4, %c : tensor<f32>, tensor<f32>, tensor<4xf32>
}

// -----

// BatchNorm state updated where it lives: the new running mean and
// variance take the bytes of the running statistics they replace (returned
// under the same names), so the driver copies nothing back and the arena
// holds no second copy (1024 against 1152 bytes).
// CHECK-LABEL: func.func @bn_state
// CHECK-SAME: tidal.name = "rm", tidal.offset = [[RM:[0-9]+]]
// CHECK-SAME: tidal.name = "rv", tidal.offset = [[RV:[0-9]+]]
// CHECK-SAME: tidal.arena_size = 1024 : i64, tidal.lower_bound = 1024 : i64
// CHECK-SAME: tidal.result_offsets = array<i64: [[O:[0-9]+]], [[RM]], [[RV]]>
// CHECK: tidal.batch_norm_training {{.*}}tidal.offsets = array<i64: [[O]], [[RM]], [[RV]], {{[0-9]+}}, {{[0-9]+}}>
// NOINPLACE-LABEL: func.func @bn_state
// NOINPLACE-SAME: tidal.arena_size = 1152 : i64
// NOINPLACE-SAME: tidal.result_offsets = array<i64: 576, 896, 960>
func.func @bn_state(%x: tensor<2x4x3x3xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                    %s: tensor<4xf32> {tidal.name = "s", tidal.role = #tidal<role param>},
                    %b: tensor<4xf32> {tidal.name = "b", tidal.role = #tidal<role param>},
                    %m: tensor<4xf32> {tidal.name = "rm", tidal.role = #tidal<role state>},
                    %v: tensor<4xf32> {tidal.name = "rv", tidal.role = #tidal<role state>})
    -> (tensor<2x4x3x3xf32> {tidal.name = "y"},
        tensor<4xf32> {tidal.name = "rm", tidal.role = #tidal<role state>},
        tensor<4xf32> {tidal.name = "rv", tidal.role = #tidal<role state>}) {
  %o, %rm, %rv, %bm, %bv = tidal.batch_norm_training %x, %s, %b, %m, %v : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %o, %rm, %rv : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>
}

// The named pipeline that tidalc runs: schedule, plan, verify.
// RUN: tidal-opt %s -split-input-file -tidal-memory-pipeline | FileCheck %s --check-prefix=PIPELINE
// RUN: tidal-opt %s -split-input-file -tidal-memory-pipeline="schedule=program strategy=slots" | FileCheck %s --check-prefix=PIPESLOTS
// PIPELINE-LABEL: func.func @step
// PIPELINE-SAME: tidal.arena_size = 256 : i64
// PIPELINE-SAME: tidal.schedule = "memory"
// PIPESLOTS-LABEL: func.func @step
// PIPESLOTS-SAME: tidal.arena_size = 512 : i64
// PIPESLOTS-SAME: tidal.schedule = "program"
