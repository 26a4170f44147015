// --tidal-add-predict: an eval-mode copy of the forward function.
// RUN: tidal-opt %s -split-input-file -tidal-add-predict | FileCheck %s
// RUN: tidal-opt %s -split-input-file -tidal-add-predict="predict-name=infer" | FileCheck %s --check-prefix=NAME

// CHECK-LABEL: func.func @main
// CHECK: tidal.batch_norm_training
// CHECK: tidal.dropout
// CHECK-LABEL: func.func @predict(%arg0: tensor<2x3xf32> {tidal.name = "x", tidal.role = #tidal<role input>}
// CHECK: %[[Y:.*]] = tidal.batch_norm_inference %arg0, %arg1, %arg2, %arg3, %arg4 {epsilon = 1.000000e-03 : f32}
// CHECK-NOT: tidal.dropout
// CHECK: %[[R:.*]] = tidal.relu %[[Y]]
// CHECK: return %[[R]], %arg3, %arg4
// NAME: func.func @infer(
func.func @main(%x: tensor<2x3xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %s: tensor<3xf32>, %b: tensor<3xf32>, %rm: tensor<3xf32>, %rv: tensor<3xf32>)
    -> (tensor<2x3xf32> {tidal.name = "y", tidal.role = #tidal<role output>},
        tensor<3xf32> {tidal.name = "rm", tidal.role = #tidal<role state>},
        tensor<3xf32> {tidal.name = "rv", tidal.role = #tidal<role state>}) {
  %y, %nm, %nv, %bm, %bv = tidal.batch_norm_training %x, %s, %b, %rm, %rv {epsilon = 1.0e-3 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %d, %m = tidal.dropout %y {ratio = 0.5 : f32, training = true} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>)
  %r = tidal.relu %d : tensor<2x3xf32>
  return %r, %nm, %nv : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// A training_info graph has its own algorithm: no copy.
// CHECK-LABEL: func.func @main
// CHECK-NOT: @predict
func.func @main(%x: tensor<f32>) -> tensor<f32> attributes {tidal.training_info} {
  return %x : tensor<f32>
}
