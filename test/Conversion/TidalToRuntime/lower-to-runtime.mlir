// --tidal-lower-to-runtime: one runtime kernel call per op, tensors by arena
// offset, a constant descriptor per call site.
// RUN: tidal-opt %s -tidal-plan-memory=strategy=slots -tidal-lower-to-runtime="step-func=step" | FileCheck %s

// The constant arena holds the constant's bytes (2.0f = 0x40000000).
// CHECK-DAG: llvm.mlir.global internal constant @__tidal_constants(dense<[0, 0, 0, 64, 0, 0, 0, 64, {{.*}}alignment = 64

// Descriptor of the gemm (op 0): 4 tensors (a, b, absent c, result),
// f32 = 1, rank, dims; then 4 attributes in name order: alpha, beta (FLOAT
// = 2, IEEE bits of 1.0), trans_a, trans_b (INT = 1).
// CHECK-DAG: llvm.mlir.global private constant @__tidal_desc_0(dense<[0, 4, 1, 2, 2, 3, 1, 2, 4, 3, 1, -1, 1, 2, 2, 4, 4, 2, 4607182418800017408, 2, 4607182418800017408, 1, 0, 1, 1]>
// Descriptor of the add (op 1): operands then result, no attributes.
// CHECK-DAG: llvm.mlir.global private constant @__tidal_desc_1(dense<[1, 3, 1, 2, 2, 4, 1, 1, 4, 1, 2, 2, 4, 0]>

// CHECK-LABEL: llvm.func @tidal_program_step(%arg0: !llvm.ptr, %arg1: !llvm.ptr) -> !llvm.ptr
// CHECK: %[[BUFS:.*]] = llvm.alloca %{{.*}} x !llvm.ptr
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// The first operand lives at offset 0: the arena pointer itself.
// CHECK: llvm.store %arg1, %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK: %[[OFF:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK: llvm.getelementptr %arg1[%[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// The absent bias is a null pointer.
// CHECK: llvm.store %[[NULL]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK: %[[D0:.*]] = llvm.mlir.addressof @__tidal_desc_0
// CHECK: %[[S0:.*]] = llvm.call @tidalrt_k_gemm(%arg0, %[[D0]], %[[BUFS]])
// CHECK: %[[F0:.*]] = llvm.icmp "ne" %[[S0]], %[[NULL]]
// CHECK: llvm.cond_br %[[F0]], ^[[FAIL:.*]](%[[S0]], %{{.*}} : !llvm.ptr, i64), ^
// One shared exit records the failing op's index and returns its status.
// CHECK: ^[[FAIL]](%[[S:.*]]: !llvm.ptr, %[[I:.*]]: i64):
// CHECK: llvm.call @tidalrt_context_fail_at(%arg0, %[[I]])
// CHECK: llvm.return %[[S]]
// The constant operand comes from the constant arena.
// CHECK: llvm.mlir.addressof @__tidal_constants
// CHECK: llvm.call @tidalrt_k_add
// CHECK: llvm.return %[[NULL]]

// Without a predict function, an empty one keeps the symbol defined.
// CHECK-LABEL: llvm.func @tidal_program_predict
// CHECK-NEXT: llvm.mlir.zero
// CHECK-NEXT: llvm.return
func.func @step(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x4xf32> {
  %0 = tidal.gemm %a, %b {trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %c = tidal.constant dense<2.0> : tensor<4xf32>
  %1 = tidal.add %0, %c : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}
