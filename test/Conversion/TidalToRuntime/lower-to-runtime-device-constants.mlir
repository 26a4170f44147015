// --tidal-lower-to-runtime=device=true: device kernels read the program's
// constants through tidalrt_dev_constants (on CUDA a device copy of the
// constant image; a host pointer in device memory faults), called once,
// before the first kernel that reads one, and its failure returned as is.
// Without a device the kernels read the constant image itself.
// RUN: tidal-opt %s -tidal-place=mode=optimizer -tidal-plan-memory -tidal-lower-to-runtime="step-func=step device=true" | FileCheck %s
// RUN: tidal-opt %s -tidal-place=mode=device -tidal-plan-memory -tidal-lower-to-runtime="step-func=step" | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: llvm.func @tidal_program_step(%arg0: !llvm.ptr, %arg1: !llvm.ptr) -> !llvm.ptr
// CHECK: %[[SLOT:.*]] = llvm.alloca %{{.*}} x !llvm.ptr
// CHECK: %[[IMAGE:.*]] = llvm.mlir.addressof @__tidal_constants
// CHECK: %[[BYTES:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK: %[[S:.*]] = llvm.call @tidalrt_dev_constants(%arg0, %[[IMAGE]], %[[BYTES]], %[[SLOT]]) : (!llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> !llvm.ptr
// CHECK: llvm.cond_br %{{.*}}, ^bb1(%[[S]] : !llvm.ptr), ^[[NEXT:bb[0-9]+]]
// CHECK: ^[[NEXT]]:
// CHECK: %[[DEV:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.store %[[DEV]]
// CHECK: llvm.call @tidalrt_dev_launch(
// CHECK-NOT: @tidalrt_dev_constants
// CHECK: llvm.call @tidalrt_dev_launch_host(
// CHECK-NOT: @tidalrt_dev_constants

// CPU-LABEL: llvm.func @tidal_program_step
// CPU-NOT: tidalrt_dev_constants
// CPU: llvm.mlir.addressof @__tidal_constants
// CPU-NOT: tidalrt_dev_constants

func.func @step(%x: tensor<4x8xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %w: tensor<16x8xf32> {tidal.name = "w", tidal.role = #tidal<role param>},
                %m: tensor<16x8xf32> {tidal.name = "w.momentum_buffer", tidal.role = #tidal<role optimizer_state>})
    -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>},
        tensor<16x8xf32> {tidal.name = "w", tidal.role = #tidal<role param>},
        tensor<16x8xf32> {tidal.name = "w.momentum_buffer", tidal.role = #tidal<role optimizer_state>}) {
  %y = tidal.gemm %x, %w {trans_b = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %two = tidal.constant dense<2.000000e+00> : tensor<f32>
  %y2 = tidal.mul %y, %two : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %l = tidal.reduce_sum %y2 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x16xf32>) -> tensor<f32>
  %e = tidal.exp %y2 : tensor<4x16xf32>
  %g = tidal.gemm %e, %x {trans_a = true} : (tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
  %w2, %m2 = tidal.sgd_momentum_update %w, %g, %m {lr = 0.1, momentum = 0.9} : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>)
  return %l, %w2, %m2 : tensor<f32>, tensor<16x8xf32>, tensor<16x8xf32>
}
