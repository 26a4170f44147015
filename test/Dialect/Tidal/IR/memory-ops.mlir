// The swap ops round-trip, and a wait must wait for a copy.
// RUN: tidal-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @swap
// CHECK: %[[H:.*]] = tidal.offload %arg0 : tensor<4xf32>
// CHECK: %[[HW:.*]] = tidal.wait %[[H]] : tensor<4xf32>
// CHECK: %[[D:.*]] = tidal.prefetch %[[HW]] : tensor<4xf32>
// CHECK: tidal.wait %[[D]] : tensor<4xf32>
func.func @swap(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = tidal.offload %x : tensor<4xf32>
  %hw = tidal.wait %h : tensor<4xf32>
  %d = tidal.prefetch %hw : tensor<4xf32>
  %dw = tidal.wait %d : tensor<4xf32>
  return %dw : tensor<4xf32>
}

// -----

func.func @wait_for_nothing(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tidal.wait' op waits for a copy: its operand must be the result of tidal.offload or tidal.prefetch}}
  %w = tidal.wait %x : tensor<4xf32>
  return %w : tensor<4xf32>
}
