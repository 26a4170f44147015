// --tidal-plan-memory=strategy=slots (the no-reuse baseline) does not plan
// swaps: their host arena needs the packed strategy.
// RUN: tidal-opt %s -verify-diagnostics -tidal-plan-memory=strategy=slots

func.func @slots_swap(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{tidal-plan-memory: strategy slots does not plan swaps (use packed)}}
  %h = tidal.offload %x : tensor<4xf32>
  %hw = tidal.wait %h : tensor<4xf32>
  %d = tidal.prefetch %hw : tensor<4xf32>
  %dw = tidal.wait %d : tensor<4xf32>
  return %dw : tensor<4xf32>
}
