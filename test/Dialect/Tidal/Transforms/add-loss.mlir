// --tidal-add-loss appends PyTorch's default losses (SPEC section 1).
// RUN: tidal-opt %s -split-input-file -tidal-add-loss=loss=cross-entropy | FileCheck %s --check-prefix=CE
// RUN: tidal-opt %s -split-input-file -tidal-add-loss=loss=mse | FileCheck %s --check-prefix=MSE

// CE-LABEL: func.func @main
// CE-SAME: %arg1: tensor<4xi64> {tidal.name = "label", tidal.role = #tidal<role input>}
// CE-SAME: -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>}, tensor<4x10xf32> {tidal.name = "logits", tidal.role = #tidal<role output>})
// CE: %[[L:.*]], %{{.*}} = tidal.softmax_cross_entropy_loss %arg0, %arg1 {ignore_index = -100 : i64, reduction = #tidal<reduction mean>}
// CE: return %[[L]], %arg0

// MSE-LABEL: func.func @main
// MSE-SAME: %arg1: tensor<4x10xf32> {tidal.name = "label", tidal.role = #tidal<role input>}
// MSE: %[[D:.*]] = tidal.sub %arg0, %arg1
// MSE: %[[SQ:.*]] = tidal.mul %[[D]], %[[D]]
// MSE: %[[L:.*]] = tidal.reduce_mean %[[SQ]] {axes = array<i64: 0, 1>, keepdims = false}
// MSE: return %[[L]], %arg0
func.func @main(%x: tensor<4x10xf32> {tidal.name = "x", tidal.role = #tidal<role input>})
    -> (tensor<4x10xf32> {tidal.name = "logits"}) {
  return %x : tensor<4x10xf32>
}
