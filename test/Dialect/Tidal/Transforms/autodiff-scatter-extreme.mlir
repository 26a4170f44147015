// scatter_extreme (reduction max): the result's gradient, shared evenly
// among the data and update elements equal to the result (PyTorch's
// scatter_reduce amax backward): count = (data == y) + scatter_add(updates
// == gather(y)), data gets where(data == y, g / count, 0), the updates
// where(u == gather(y), gather(g / count), 0) (IndexingRules.cpp).
// RUN: tidal-opt %s -tidal-autodiff | FileCheck %s

// CHECK-LABEL: func.func @train_step
// CHECK: %[[Y:.*]] = tidal.scatter_extreme %arg0, %arg1, %arg2 {axis = 0 : i64, largest = true}
// CHECK: %[[AT:.*]] = tidal.gather %[[Y]], %arg1 {axis = 0 : i64} : (tensor<5x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
// CHECK: %[[SH:.*]] = tidal.equal %arg0, %[[Y]]
// CHECK: %[[UH:.*]] = tidal.equal %arg2, %[[AT]]
// CHECK: %[[SF:.*]] = tidal.cast %[[SH]] : (tensor<5x3xi1>) -> tensor<5x3xf32>
// CHECK: %[[UF:.*]] = tidal.cast %[[UH]] : (tensor<4x3xi1>) -> tensor<4x3xf32>
// CHECK: %[[UC:.*]] = tidal.gather_backward %[[UF]], %arg1 {axis = 0 : i64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<5x3xf32>
// CHECK: %[[N:.*]] = tidal.add %[[SF]], %[[UC]]
// CHECK: %[[SHARE:.*]] = tidal.div %{{.*}}, %[[N]]
// CHECK: %[[DD:.*]] = tidal.where %[[SH]], %[[SHARE]], %{{.*}}
// CHECK: %[[GS:.*]] = tidal.gather %[[SHARE]], %arg1 {axis = 0 : i64}
// CHECK: %[[DU:.*]] = tidal.where %[[UH]], %[[GS]], %{{.*}}
// CHECK: return %{{.*}}, %[[DD]], %[[DU]]
func.func @main(%d: tensor<5x3xf32> {tidal.name = "d", tidal.role = #tidal<role param>},
                %i: tensor<4xi64> {tidal.name = "i", tidal.role = #tidal<role input>},
                %u: tensor<4x3xf32> {tidal.name = "u", tidal.role = #tidal<role param>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %s = tidal.scatter_extreme %d, %i, %u {axis = 0 : i64, largest = true} : (tensor<5x3xf32>, tensor<4xi64>, tensor<4x3xf32>) -> tensor<5x3xf32>
  %l = tidal.reduce_sum %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<5x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
