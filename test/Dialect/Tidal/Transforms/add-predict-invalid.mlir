// RUN: tidal-opt %s -split-input-file -verify-diagnostics -tidal-add-predict

// expected-error @+1 {{tidal-add-predict: no function @main}}
module {
  func.func @other() {
    return
  }
}

// -----

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xi1> {
  // expected-error @+1 {{the dropout mask is used by the forward graph; no eval-mode copy can be made}}
  %d, %m = tidal.dropout %x {ratio = 0.5 : f32, training = true} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  return %m : tensor<2x3xi1>
}

// -----

// expected-error @+1 {{tidal-add-predict: @predict already exists}}
module {
  func.func @main() {
    return
  }
  func.func @predict() {
    return
  }
}
