// --tidal-print-liveness: every buffer's lifetime, the values sharing it
// (views and results written in place) and the bytes live at each position.
// RUN: tidal-opt %s --tidal-print-liveness -o /dev/null 2>&1 | FileCheck %s
// RUN: tidal-opt %s --tidal-print-liveness=in-place=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOINPLACE
// RUN: not tidal-opt %s --tidal-print-liveness=alignment=3 -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALIGN

// The input dies at the mul, which writes over it; relu and relu_backward
// follow in the same bytes; the reshape is a view. The parameter is live for
// the whole step and its update takes its bytes. The loss is returned, so it
// lives to the end (position 8).
// CHECK-LABEL: liveness @step: 7 ops, 4 buffers, end 8
// CHECK: op 1: tidal.mul -> %0
// CHECK: op 3: tidal.reshape -> %2
// CHECK: op 7: tidal.sgd_update -> %6
// CHECK: buffer 0: 64 bytes [0, 6]: %arg0@0..1 %0@1..2 %1@2..5 %2@3..4 %4@5..6
// CHECK: buffer 1: 32 bytes [0, 8] persistent returned: %arg1@0..7 %6@7..8
// CHECK: buffer 2: 4 bytes [4, 8] returned: %3@4..8
// CHECK: buffer 3: 32 bytes [6, 7]: %5@6..7
// CHECK: in-place %0 <- %arg0 at 1 (tidal.mul)
// CHECK: in-place %1 <- %0 at 2 (tidal.relu)
// CHECK: in-place %4 <- %1 at 5 (tidal.relu_backward)
// CHECK: in-place %6 <- %arg1 at 7 (tidal.sgd_update)
// CHECK: live: 128 128 128 128 192 192 256 192 128
// CHECK: lower bound 256 bytes, no reuse 512 bytes

// Without in-place reuse every non-view result has bytes of its own.
// NOINPLACE-LABEL: liveness @step: 7 ops, 8 buffers
// NOINPLACE: buffer 0: 64 bytes [0, 1]: %arg0@0..1
// NOINPLACE: buffer 1: 32 bytes [0, 8] persistent: %arg1@0..7{{$}}
// NOINPLACE: buffer 3: 64 bytes [2, 5]: %1@2..5 %2@3..4
// NOINPLACE: buffer 7: 32 bytes [7, 8] returned: %6@7..8
// NOINPLACE-NOT: in-place
// NOINPLACE: live: 128 192 192 128 192 256 256 256 192
// NOINPLACE: lower bound 256 bytes, no reuse 512 bytes

// ALIGN: error: tidal-print-liveness: alignment 3 is not a power of two

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

// A parameter that nothing replaces and a frozen initializer (role
// constant) stay live to the end and are never written over: the driver
// loads them once; a returned constant needs arena bytes at the end.
// CHECK-LABEL: liveness @frozen: 3 ops, 3 buffers, end 4
// CHECK: buffer 0: 32 bytes [0, 4] persistent: %arg0@0..1
// CHECK: buffer 1: 32 bytes [0, 4] persistent: %arg1@0..2
// CHECK: buffer 2: 32 bytes [1, 4] returned: %0@1..2 %1@2..4
// CHECK: in-place %1 <- %0 at 2 (tidal.mul)
// CHECK-NOT: in-place
// CHECK: returned constant %2
// CHECK: live: 128 192 192 192 256
func.func @frozen(%w: tensor<8xf32> {tidal.name = "w", tidal.role = #tidal<role param>},
                  %f: tensor<8xf32> {tidal.name = "f", tidal.role = #tidal<role constant>})
    -> (tensor<8xf32>, tensor<8xf32>) {
  %r = tidal.relu %w : tensor<8xf32>
  %0 = tidal.mul %r, %f : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %c = tidal.constant dense<1.0> : tensor<8xf32>
  return %0, %c : tensor<8xf32>, tensor<8xf32>
}
