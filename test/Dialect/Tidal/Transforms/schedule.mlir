// --tidal-schedule: a memory-aware op order. The training pipeline leaves
// every optimizer update at the end; the scheduler runs each one as soon as
// its gradient is complete and the parameter's last reader has run, so the
// gradient dies at once and the update writes over the parameter in place.
// RUN: tidal-opt %s -split-input-file -tidal-schedule | FileCheck %s
// RUN: tidal-opt %s -split-input-file -tidal-schedule=strategy=program | FileCheck %s --check-prefix=PROGRAM
// RUN: tidal-opt %s -split-input-file -tidal-schedule -tidal-print-liveness -o /dev/null 2>&1 | FileCheck %s --check-prefix=LIVE
// RUN: not tidal-opt %s -tidal-schedule=strategy=bogus 2>&1 | FileCheck %s --check-prefix=STRATEGY

// CHECK-LABEL: func.func @step
// CHECK-SAME: tidal.schedule = "memory"
// CHECK: %[[H:.*]] = tidal.matmul %arg0, %arg1
// CHECK: %[[R:.*]] = tidal.relu %[[H]]
// CHECK: tidal.matmul %[[R]], %arg2
// CHECK: tidal.reduce_sum
// CHECK: %[[GW2:.*]] = tidal.gemm %[[R]], %{{.*}} {trans_a = true}
// CHECK: %[[GR:.*]] = tidal.gemm %{{.*}}, %arg2 {trans_b = true}
// CHECK-NEXT: %[[GH:.*]] = tidal.relu_backward %[[GR]], %[[R]]
// CHECK-NEXT: %[[N2:.*]] = tidal.sgd_update %arg2, %[[GW2]]
// CHECK-NEXT: %[[GW1:.*]] = tidal.gemm %arg0, %[[GH]] {trans_a = true}
// CHECK-NEXT: %[[N1:.*]] = tidal.sgd_update %arg1, %[[GW1]]
// CHECK-NEXT: return %{{.*}}, %[[N1]], %[[N2]]

// PROGRAM-LABEL: func.func @step
// PROGRAM-SAME: tidal.schedule = "program"
// PROGRAM: tidal.relu_backward
// PROGRAM: tidal.gemm
// PROGRAM-NEXT: tidal.sgd_update %arg1
// PROGRAM-NEXT: tidal.sgd_update %arg2

// Scheduled, the gradient of w2 lives from position 6 to 9 instead of to
// 11, and both updates are in place.
// LIVE-LABEL: liveness @step
// LIVE: buffer {{[0-9]+}}: 256 bytes [6, 9]: %5@6..9
// LIVE: in-place %{{.*}} <- %arg2 at 9 (tidal.sgd_update)
// LIVE: in-place %{{.*}} <- %arg1 at 11 (tidal.sgd_update)
func.func @step(%x: tensor<4x8xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %w1: tensor<8x8xf32> {tidal.name = "w1", tidal.role = #tidal<role param>},
                %w2: tensor<8x8xf32> {tidal.name = "w2", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>},
        tensor<8x8xf32> {tidal.name = "w1", tidal.role = #tidal<role param>},
        tensor<8x8xf32> {tidal.name = "w2", tidal.role = #tidal<role param>}) {
  %h = tidal.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %r = tidal.relu %h : tensor<4x8xf32>
  %y = tidal.matmul %r, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %l = tidal.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
  %g = tidal.constant dense<1.0> : tensor<4x8xf32>
  %gw2 = tidal.gemm %r, %g {trans_a = true} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %gr = tidal.gemm %g, %w2 {trans_b = true} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %gh = tidal.relu_backward %gr, %r : tensor<4x8xf32>
  %gw1 = tidal.gemm %x, %gh {trans_a = true} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %n1 = tidal.sgd_update %w1, %gw1 {lr = 1.0e-01 : f64} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %n2 = tidal.sgd_update %w2, %gw2 {lr = 1.0e-01 : f64} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %l, %n1, %n2 : tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Dropout ops are numbered in program order before anything moves, so the
// masks do not depend on the schedule; a stream already set is kept.
// CHECK-LABEL: func.func @dropouts
// CHECK: tidal.dropout %arg0 {stream = 3 : i64, training = true}
// CHECK: tidal.dropout %arg0 {stream = 4 : i64, training = true}
// CHECK: tidal.dropout %arg0 {stream = 2 : i64, training = true}
func.func @dropouts(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a, %ma = tidal.dropout %x {ratio = 0.5 : f32, training = true} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  %b, %mb = tidal.dropout %x {ratio = 0.5 : f32, training = true} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  %c, %mc = tidal.dropout %x {ratio = 0.5 : f32, training = true, stream = 2 : i64} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  return %a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Random draws share dropout's numbering, in program order: none of them
// may share a stream with another.
// CHECK-LABEL: func.func @random_draws
// CHECK-DAG: tidal.random_normal {stream = 0 : i64} : tensor<4xf32>
// CHECK-DAG: tidal.dropout %arg0 {stream = 1 : i64, training = true}
// CHECK-DAG: tidal.random_uniform {high = 2.000000e+00 : f32, stream = 2 : i64} : tensor<4xf32>
func.func @random_draws(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %n = tidal.random_normal : tensor<4xf32>
  %a, %ma = tidal.dropout %x {ratio = 0.5 : f32, training = true} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  %u = tidal.random_uniform {high = 2.0 : f32} : tensor<4xf32>
  return %n, %a, %u : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// STRATEGY: error: tidal-schedule: unknown strategy 'bogus' (expected memory or program)
