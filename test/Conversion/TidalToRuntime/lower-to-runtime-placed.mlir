// --tidal-lower-to-runtime=device=true after tidal-place: host-placed ops
// are launched with tidalrt_dev_launch_host on buffers in the host arena
// (its base from tidalrt_dev_host_arena), the gradient and parameter go out
// with offloads, the new parameter comes back with a prefetch, and the
// momentum buffer stays in the host arena.
// RUN: tidal-opt %s -tidal-place=mode=optimizer -tidal-plan-memory -tidal-lower-to-runtime="step-func=step device=true" | FileCheck %s
// RUN: not tidal-opt %s -tidal-place=mode=host -tidal-plan-memory -tidal-lower-to-runtime="step-func=step" 2>&1 | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: llvm.func @tidal_program_step(%arg0: !llvm.ptr, %arg1: !llvm.ptr) -> !llvm.ptr
// CHECK: %[[HOST:.*]] = llvm.call @tidalrt_dev_host_arena(%arg0) : (!llvm.ptr) -> !llvm.ptr
// CHECK: llvm.call @tidalrt_dev_launch(%arg0, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64) -> !llvm.ptr
// CHECK: llvm.call @tidalrt_dev_offload(
// CHECK: llvm.call @tidalrt_dev_offload(
// CHECK: llvm.call @tidalrt_dev_wait(
// CHECK: llvm.call @tidalrt_dev_wait(
// The update's buffers are host pointers: the parameter and the gradient
// copies (host offsets 512, 1024), the momentum buffer (offset 0: the base
// itself), the new parameter (over the parameter copy) and the new momentum
// buffer (over the old).
// CHECK: llvm.getelementptr %[[HOST]][
// CHECK: llvm.getelementptr %[[HOST]][
// CHECK: llvm.store %[[HOST]]
// CHECK: llvm.getelementptr %[[HOST]][
// CHECK: llvm.store %[[HOST]]
// CHECK: %[[K:.*]] = llvm.mlir.addressof @tidalrt_k_sgd_momentum_update
// CHECK: llvm.call @tidalrt_dev_launch_host(%arg0, %[[K]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64) -> !llvm.ptr
// CHECK: llvm.call @tidalrt_dev_prefetch(
// CHECK: llvm.call @tidalrt_dev_wait(
// CHECK: llvm.call @tidalrt_dev_synchronize(%arg0)

// CPU: error: a host-placed op needs a device program: lower with device=true

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
