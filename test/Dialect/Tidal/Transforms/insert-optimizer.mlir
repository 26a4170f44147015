// --tidal-insert-optimizer replaces gradient results by torch.optim updates.
// RUN: tidal-opt %s -tidal-insert-optimizer | FileCheck %s --check-prefix=SGD
// RUN: tidal-opt %s -tidal-insert-optimizer="momentum=0.9 nesterov=true weight-decay=5e-4 lr=0.1" | FileCheck %s --check-prefix=MOM
// RUN: tidal-opt %s -tidal-insert-optimizer=optimizer=adam | FileCheck %s --check-prefix=ADAM
// RUN: tidal-opt %s -tidal-insert-optimizer="optimizer=adamw beta2=0.99" | FileCheck %s --check-prefix=ADAMW

// SGD defaults: lr 0.01, no weight decay; state results stay in place.
// SGD-LABEL: func.func @train_step
// SGD-SAME: -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>}, tensor<3xf32> {tidal.name = "bn.running_mean", tidal.role = #tidal<role state>}, tensor<2x3xf32> {tidal.name = "w", tidal.role = #tidal<role param>})
// SGD: %[[P:.*]] = tidal.sgd_update %arg0, %arg2 {lr = 1.000000e-02 : f64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// SGD: return %arg1, %arg3, %[[P]]

// MOM: func.func @train_step({{.*}}%arg4: tensor<2x3xf32> {tidal.name = "w.momentum_buffer", tidal.role = #tidal<role optimizer_state>})
// MOM-SAME: tensor<2x3xf32> {tidal.name = "w", tidal.role = #tidal<role param>}, tensor<2x3xf32> {tidal.name = "w.momentum_buffer", tidal.role = #tidal<role optimizer_state>})
// MOM: %[[P:.*]], %[[B:.*]] = tidal.sgd_momentum_update %arg0, %arg2, %arg4 {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = true, weight_decay = 5.000000e-04 : f64}
// MOM: return %arg1, %arg3, %[[P]], %[[B]]

// Adam: one int64 step counter shared by every parameter, incremented first.
// ADAM: func.func @train_step({{.*}}%arg4: tensor<i64> {tidal.name = "optimizer.step", tidal.role = #tidal<role optimizer_state>}, %arg5: tensor<2x3xf32> {tidal.name = "w.exp_avg", tidal.role = #tidal<role optimizer_state>}, %arg6: tensor<2x3xf32> {tidal.name = "w.exp_avg_sq", tidal.role = #tidal<role optimizer_state>})
// ADAM: %[[ONE:.*]] = tidal.constant dense<1> : tensor<i64>
// ADAM: %[[STEP:.*]] = tidal.add %arg4, %[[ONE]]
// ADAM: %[[P:.*]], %[[M:.*]], %[[V:.*]] = tidal.adam_update %arg0, %arg2, %arg5, %arg6, %[[STEP]] :
// ADAM: return %arg1, %arg3, %[[P]], %[[M]], %[[V]], %[[STEP]]

// ADAMW: tidal.adam_update {{.*}} {beta2 = 0.98999999999999999 : f64, decoupled = true, weight_decay = 1.000000e-02 : f64}
func.func @train_step(%w: tensor<2x3xf32> {tidal.name = "w", tidal.role = #tidal<role param>},
                      %l: tensor<f32>, %g: tensor<2x3xf32>,
                      %rm: tensor<3xf32> {tidal.name = "bn.running_mean", tidal.role = #tidal<role state>})
    -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>},
        tensor<3xf32> {tidal.name = "bn.running_mean", tidal.role = #tidal<role state>},
        tensor<2x3xf32> {tidal.name = "w", tidal.role = #tidal<role gradient>}) {
  return %l, %rm, %g : tensor<f32>, tensor<3xf32>, tensor<2x3xf32>
}
