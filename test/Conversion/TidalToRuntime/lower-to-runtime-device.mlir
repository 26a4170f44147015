// --tidal-lower-to-runtime=device=true: the step runs on the runtime's
// device. Kernels are enqueued with the device byte ranges they read and
// write, swaps become numbered asynchronous copies and stream waits, and the
// step ends by synchronizing the device.
// RUN: tidal-opt %s -tidal-schedule-swaps=budget=5500 -tidal-plan-memory -tidal-lower-to-runtime="step-func=step device=true" | FileCheck %s
// RUN: not tidal-opt %s -tidal-schedule-swaps=budget=5500 -tidal-plan-memory -tidal-lower-to-runtime="step-func=step" 2>&1 | FileCheck %s --check-prefix=HOST

// The first exp reads the input and writes 1024 bytes over it, in place.
// CHECK-DAG: llvm.mlir.global private constant @__tidal_ranges_0(dense<[0, 1024, 0, 1024]> : tensor<4xi64>)
// CHECK-LABEL: llvm.func @tidal_program_step(%arg0: !llvm.ptr, %arg1: !llvm.ptr) -> !llvm.ptr
// CHECK: %[[K:.*]] = llvm.mlir.addressof @tidalrt_k_exp
// CHECK: %[[R:.*]] = llvm.mlir.addressof @__tidal_ranges_0
// CHECK: llvm.call @tidalrt_dev_launch(%arg0, %[[K]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[R]], %{{.*}}, %{{.*}})
// CHECK: llvm.call @tidalrt_dev_offload(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i64, i64, i64) -> !llvm.ptr
// CHECK: llvm.call @tidalrt_dev_wait(%arg0, %{{.*}}) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK: llvm.call @tidalrt_dev_prefetch(%arg0
// CHECK: llvm.call @tidalrt_dev_wait(%arg0
// CHECK: llvm.call @tidalrt_dev_synchronize(%arg0) : (!llvm.ptr) -> !llvm.ptr
// CHECK-NOT: llvm.call @tidalrt_k_

// HOST: error: swaps need a device: lower with device=true
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
