// --tidal-recompute when nothing can be recomputed: the error states the
// smallest budget the pass reaches.
// RUN: tidal-opt %s -split-input-file -tidal-recompute="budget=6200 max-chain=1" -verify-diagnostics -o /dev/null
// RUN: not tidal-opt %s -tidal-recompute="budget=100 max-chain=0" 2>&1 | FileCheck %s --check-prefix=CHAIN

// %a is relu(exp(w)): with at most one clone per recomputation it cannot
// be redone.
// expected-error @+1 {{device memory budget 6200 bytes is too small for @chain: the smallest budget its plan reaches is 7168 bytes (0 tensors swapped, 0 recomputed; the peak is at op 4)}}
func.func @chain(%x: tensor<256xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                 %w: tensor<256xf32> {tidal.name = "w", tidal.role = #tidal<role param>}) -> tensor<f32> {
  %e = tidal.exp %w : tensor<256xf32>
  %a = tidal.relu %e : tensor<256xf32>
  %c = tidal.exp %x : tensor<256xf32>
  %big = tidal.broadcast_to %c : (tensor<256xf32>) -> tensor<4x256xf32>
  %s = tidal.reduce_sum %big {axes = array<i64: 0>, keepdims = false} : (tensor<4x256xf32>) -> tensor<256xf32>
  %d = tidal.mul %s, %a : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %r = tidal.reduce_sum %d {axes = array<i64: 0>, keepdims = false} : (tensor<256xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// relu(w) cannot be recomputed at the mul: the SGD update has written the
// new w over the old one by then. Nothing else is idle across the peak.
// expected-error @+1 {{device memory budget 6200 bytes is too small for @updated: the smallest budget its plan reaches is 7168 bytes (0 tensors swapped, 0 recomputed; the peak is at op 5)}}
func.func @updated(%x: tensor<256xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                   %w: tensor<256xf32> {tidal.name = "w", tidal.role = #tidal<role param>})
    -> (tensor<f32>, tensor<256xf32> {tidal.name = "w", tidal.role = #tidal<role param>}) {
  %a = tidal.relu %w : tensor<256xf32>
  %g = tidal.exp %x : tensor<256xf32>
  %w2 = tidal.sgd_update %w, %g {lr = 1.0e-01 : f64} : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %c = tidal.exp %w2 : tensor<256xf32>
  %big = tidal.broadcast_to %c : (tensor<256xf32>) -> tensor<4x256xf32>
  %s = tidal.reduce_sum %big {axes = array<i64: 0>, keepdims = false} : (tensor<4x256xf32>) -> tensor<256xf32>
  %d = tidal.mul %s, %a : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %r = tidal.reduce_sum %d {axes = array<i64: 0>, keepdims = false} : (tensor<256xf32>) -> tensor<f32>
  return %r, %w2 : tensor<f32>, tensor<256xf32>
}

// CHAIN: error: tidal-recompute: budget must be non-negative and max-chain at least 1
