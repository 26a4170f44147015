// A host-placed op must read host tensors, and a device op device tensors:
// tidal-place inserts the copies, and the lowering rejects IR without them.
// RUN: tidal-opt %s -split-input-file -tidal-plan-memory -tidal-lower-to-runtime="step-func=step device=true" -verify-diagnostics

func.func @step(%x: tensor<16xf32> {tidal.name = "x", tidal.role = #tidal<role input>}) -> tensor<16xf32> {
  // expected-error @+1 {{reads a tensor in device memory but runs on the host (tidal-place inserts the copies)}}
  %a = tidal.exp %x {tidal.device = "host"} : tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func @step(%x: tensor<16xf32> {tidal.name = "x", tidal.role = #tidal<role input>, tidal.space = "host"}) -> tensor<16xf32> {
  // expected-error @+1 {{reads a tensor in host memory but runs on the device (tidal-place inserts the copies)}}
  %a = tidal.exp %x : tensor<16xf32>
  return %a : tensor<16xf32>
}
