// The backward graphs that --tidal-autodiff builds, one case per rule family.
// RUN: tidal-opt %s -split-input-file -tidal-autodiff | FileCheck %s

// A two-layer MLP with a cross-entropy loss: the gradients flow back through
// the loss, both Gemms and the Relu; the input gets none.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>},
// CHECK-SAME: tensor<4x8xf32> {tidal.name = "w1", tidal.role = #tidal<role gradient>},
// CHECK-SAME: tensor<4xf32> {tidal.name = "b1", tidal.role = #tidal<role gradient>},
// CHECK-SAME: tensor<3x4xf32> {tidal.name = "w2", tidal.role = #tidal<role gradient>})
// CHECK: %[[H:.*]] = tidal.gemm %arg0, %arg1, %arg2 {trans_b = true}
// CHECK: %[[A:.*]] = tidal.relu %[[H]]
// CHECK: %[[Y:.*]] = tidal.gemm %[[A]], %arg3 {trans_b = true}
// CHECK: %[[LOSS:.*]], %[[LP:.*]] = tidal.softmax_cross_entropy_loss %[[Y]], %arg4
// CHECK: %[[ONE:.*]] = tidal.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DY:.*]] = tidal.softmax_cross_entropy_loss_backward %[[ONE]], %[[LP]], %arg4
// CHECK: %[[DA:.*]] = tidal.gemm %[[DY]], %arg3 : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[DW2:.*]] = tidal.gemm %[[DY]], %[[A]] {trans_a = true} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK: %[[DH:.*]] = tidal.relu_backward %[[DA]], %[[A]]
// CHECK: %[[DW1:.*]] = tidal.gemm %[[DH]], %arg0 {trans_a = true} : (tensor<2x4xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[DB1:.*]] = tidal.reduce_sum %[[DH]] {axes = array<i64: 0>, keepdims = false}
// CHECK: return %[[LOSS]], %[[DW1]], %[[DB1]], %[[DW2]]
func.func @main(%x: tensor<2x8xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %w1: tensor<4x8xf32> {tidal.name = "w1", tidal.role = #tidal<role param>},
                %b1: tensor<4xf32> {tidal.name = "b1", tidal.role = #tidal<role param>},
                %w2: tensor<3x4xf32> {tidal.name = "w2", tidal.role = #tidal<role param>},
                %label: tensor<2xi64> {tidal.name = "label", tidal.role = #tidal<role input>})
    -> (tensor<f32> {tidal.name = "loss"}) {
  %h = tidal.gemm %x, %w1, %b1 {trans_b = true} : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %a = tidal.relu %h : tensor<2x4xf32>
  %y = tidal.gemm %a, %w2 {trans_b = true} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  %loss, %lp = tidal.softmax_cross_entropy_loss %y, %label {reduction = #tidal<reduction mean>} : (tensor<2x3xf32>, tensor<2xi64>) -> (tensor<f32>, tensor<2x3xf32>)
  return %loss : tensor<f32>
}

// -----

// Fan-out: w feeds both operands of a Mul and a broadcasting Add; the three
// contributions are summed, the broadcast one reduced back to w's shape.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[M:.*]] = tidal.mul %arg0, %arg0
// CHECK: %[[S:.*]] = tidal.add %[[M]], %arg1
// CHECK: %[[L:.*]] = tidal.reduce_sum %[[S]] {axes = array<i64: 0, 1>, keepdims = false}
// CHECK: %[[ONE:.*]] = tidal.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[R:.*]] = tidal.reshape %[[ONE]] {shape = array<i64: 1, 1>}
// CHECK: %[[G:.*]] = tidal.broadcast_to %[[R]] : (tensor<1x1xf32>) -> tensor<2x3xf32>
// CHECK: %[[GB:.*]] = tidal.reduce_sum %[[G]] {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<3xf32>
// CHECK: %[[G1:.*]] = tidal.mul %[[G]], %arg0
// CHECK: %[[G2:.*]] = tidal.mul %[[G]], %arg0
// CHECK: %[[SUM:.*]] = tidal.add %[[G1]], %[[G2]]
// CHECK: return %[[L]], %[[SUM]], %[[GB]]
func.func @main(%w: tensor<2x3xf32> {tidal.name = "w", tidal.role = #tidal<role param>},
                %b: tensor<3xf32> {tidal.name = "b", tidal.role = #tidal<role param>})
    -> tensor<f32> {
  %m = tidal.mul %w, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = tidal.add %m, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %l = tidal.reduce_sum %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Convolution, max pooling and training-mode batch norm: dedicated backward
// ops; the running statistics come back as state results before the
// gradients; the frozen weight (role constant) gets no gradient.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>},
// CHECK-SAME: tensor<4xf32> {tidal.name = "bn.running_mean", tidal.role = #tidal<role state>},
// CHECK-SAME: tensor<4xf32> {tidal.name = "bn.running_var", tidal.role = #tidal<role state>},
// CHECK-SAME: tensor<4x3x3x3xf32> {tidal.name = "conv.weight", tidal.role = #tidal<role gradient>},
// CHECK-SAME: tensor<4xf32> {tidal.name = "bn.weight", tidal.role = #tidal<role gradient>},
// CHECK-SAME: tensor<4xf32> {tidal.name = "conv.bias", tidal.role = #tidal<role gradient>})
// CHECK-NOT: bn.bias", tidal.role = #tidal<role gradient>
// CHECK: %[[C:.*]] = tidal.conv
// CHECK: %[[BN:.*]], %[[RM:.*]], %[[RV:.*]], %[[BM:.*]], %[[BVAR:.*]] = tidal.batch_norm_training %[[C]]
// CHECK: %[[P:.*]] = tidal.max_pool %[[BN]]
// CHECK: tidal.global_average_pool
// CHECK: %[[DP:.*]] = tidal.max_pool_backward %{{.*}}, %[[BN]] {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x4x3x3xf32>, tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
// CHECK: %[[DX:.*]], %[[DS:.*]], %[[DB:.*]] = tidal.batch_norm_backward %[[DP]], %[[C]], %arg2, %[[BM]], %[[BVAR]]
// CHECK: %[[DW:.*]] = tidal.conv_backward_weights %[[DX]], %arg0 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
// CHECK: %[[DCB:.*]] = tidal.reduce_sum %[[DX]] {axes = array<i64: 0, 2, 3>, keepdims = false}
// CHECK-NOT: tidal.conv_backward_data
// CHECK: return %{{.*}}, %[[RM]], %[[RV]], %[[DW]], %[[DS]], %[[DCB]]
func.func @main(%x: tensor<2x3x6x6xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %w: tensor<4x3x3x3xf32> {tidal.name = "conv.weight", tidal.role = #tidal<role param>},
                %s: tensor<4xf32> {tidal.name = "bn.weight", tidal.role = #tidal<role param>},
                %b: tensor<4xf32> {tidal.name = "bn.bias", tidal.role = #tidal<role constant>},
                %rm: tensor<4xf32> {tidal.name = "bn.running_mean", tidal.role = #tidal<role state>},
                %rv: tensor<4xf32> {tidal.name = "bn.running_var", tidal.role = #tidal<role state>},
                %cb: tensor<4xf32> {tidal.name = "conv.bias", tidal.role = #tidal<role param>})
    -> tensor<f32> {
  %c = tidal.conv %x, %w, %cb {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %bn:5 = tidal.batch_norm_training %c, %s, %b, %rm, %rv : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %p = tidal.max_pool %bn#0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x4x6x6xf32>) -> tensor<2x4x3x3xf32>
  %g = tidal.global_average_pool %p : (tensor<2x4x3x3xf32>) -> tensor<2x4x1x1xf32>
  %l = tidal.reduce_mean %g {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x4x1x1xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// MatMul with a 1-D right operand: promoted to a column, the gradient
// reshaped back; the transpose of a batched operand swaps its last two dims.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[Y:.*]] = tidal.matmul %arg0, %arg1 : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
// CHECK: %[[G2:.*]] = tidal.reshape %{{.*}} {shape = array<i64: 2, 3, 1>}
// CHECK: %[[AT:.*]] = tidal.transpose %arg0 {perm = array<i64: 0, 2, 1>}
// CHECK: %[[D:.*]] = tidal.matmul %[[AT]], %[[G2]] : (tensor<2x4x3xf32>, tensor<2x3x1xf32>) -> tensor<2x4x1xf32>
// CHECK: %[[S:.*]] = tidal.reduce_sum %[[D]] {axes = array<i64: 0>, keepdims = false}
// CHECK: %[[R:.*]] = tidal.reshape %[[S]] {shape = array<i64: 4>}
// CHECK: return %{{.*}}, %[[R]]
func.func @main(%a: tensor<2x3x4xf32> {tidal.name = "a", tidal.role = #tidal<role input>},
                %v: tensor<4xf32> {tidal.name = "v", tidal.role = #tidal<role param>})
    -> tensor<f32> {
  %y = tidal.matmul %a, %v : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  %l = tidal.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// LayerNorm, softmax and an Erf-based GELU; the unused parameter gets no
// gradient result, as in PyTorch.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>},
// CHECK-SAME: tensor<4xf32> {tidal.name = "ln.weight", tidal.role = #tidal<role gradient>},
// CHECK-SAME: tensor<4xf32> {tidal.name = "ln.bias", tidal.role = #tidal<role gradient>})
// CHECK: tidal.softmax_backward %{{.*}}, %{{.*}} {axis = 1 : i64}
// CHECK: tidal.erf_backward
// CHECK: %{{.*}}, %[[GS:.*]], %[[GB:.*]] = tidal.layer_norm_backward %{{.*}}, %arg0, %arg1, %mean, %inv_std_dev {axis = 1 : i64}
// CHECK: return %{{.*}}, %[[GS]], %[[GB]]
func.func @main(%x: tensor<2x4xf32> {tidal.name = "x", tidal.role = #tidal<role input>},
                %s: tensor<4xf32> {tidal.name = "ln.weight", tidal.role = #tidal<role param>},
                %b: tensor<4xf32> {tidal.name = "ln.bias", tidal.role = #tidal<role param>},
                %unused: tensor<4xf32> {tidal.name = "unused", tidal.role = #tidal<role param>})
    -> tensor<f32> {
  %ln:3 = tidal.layer_norm %x, %s, %b {axis = 1 : i64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %e = tidal.erf %ln#0 : tensor<2x4xf32>
  %sm = tidal.softmax %e {axis = 1 : i64} : tensor<2x4xf32>
  %l = tidal.reduce_sum %sm {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The training_info form: a tidal.gradient marker is replaced by the backward
// graph in place; the function's results stay as the importer set them.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>}, tensor<3xf32> {tidal.name = "w", tidal.role = #tidal<role param>})
// CHECK-NOT: tidal.gradient
// CHECK: %[[G:.*]] = tidal.mul
// CHECK: tidal.onnx_momentum %arg2, %arg3, %arg0, %{{.*}}, %arg1
func.func @main(%w: tensor<3xf32> {tidal.name = "w", tidal.role = #tidal<role param>},
                %v: tensor<3xf32> {tidal.name = "v", tidal.role = #tidal<role optimizer_state>},
                %r: tensor<f32> {tidal.name = "r", tidal.role = #tidal<role constant>},
                %t: tensor<i64> {tidal.name = "t", tidal.role = #tidal<role optimizer_state>})
    -> (tensor<f32> {tidal.name = "loss", tidal.role = #tidal<role loss>}, tensor<3xf32> {tidal.name = "w", tidal.role = #tidal<role param>})
    attributes {tidal.training_info} {
  %sq = tidal.mul %w, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %l = tidal.reduce_sum %sq {axes = array<i64: 0>, keepdims = false} : (tensor<3xf32>) -> tensor<f32>
  %g = tidal.gradient %l, %w : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %nw:2 = tidal.onnx_momentum %r, %t, %w, %g, %v {alpha = 0.9, beta = 1.0, norm_coefficient = 0.0} : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %l, %nw#0 : tensor<f32>, tensor<3xf32>
}

// -----

// Pow with an integer constant exponent (valid ONNX): the exponent becomes a
// float constant for d(a^b)/da = b * a^(b-1).
// CHECK-LABEL: func.func @train_step
// CHECK: %[[E:.*]] = tidal.constant dense<3.000000e+00> : tensor<f32>
// CHECK: %[[ONE:.*]] = tidal.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[EM1:.*]] = tidal.sub %[[E]], %[[ONE]]
// CHECK: %[[P:.*]] = tidal.pow %arg0, %[[EM1]]
// CHECK: tidal.mul %[[P]], %[[E]]
func.func @main(%w: tensor<3xf32> {tidal.name = "w", tidal.role = #tidal<role param>}) -> tensor<f32> {
  %e = tidal.constant dense<3> : tensor<i64>
  %p = tidal.pow %w, %e : (tensor<3xf32>, tensor<i64>) -> tensor<3xf32>
  %l = tidal.reduce_sum %p {axes = array<i64: 0>, keepdims = false} : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A batch of rows times a weight matrix folds the batch into the rows: one
// gemm for each gradient, no transposed copies, no per-batch products.
// CHECK-LABEL: func.func @train_step(%arg0: tensor<2x3x4xf32>, %arg1: tensor<4x5xf32>)
// CHECK-DAG: %[[AF:.*]] = tidal.reshape %arg0 {shape = array<i64: 6, 4>}
// CHECK-DAG: %[[GF:.*]] = tidal.reshape %{{.*}} {shape = array<i64: 6, 5>} : (tensor<2x3x5xf32>) -> tensor<6x5xf32>
// CHECK: %[[DA:.*]] = tidal.gemm %[[GF]], %arg1 {trans_b = true} : (tensor<6x5xf32>, tensor<4x5xf32>) -> tensor<6x4xf32>
// CHECK: %[[DA3:.*]] = tidal.reshape %[[DA]] {shape = array<i64: 2, 3, 4>}
// CHECK: %[[DW:.*]] = tidal.gemm %[[AF]], %[[GF]] {trans_a = true} : (tensor<6x4xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
// CHECK-NOT: tidal.transpose
// CHECK: return %[[DA3]], %[[DW]]
func.func @main(%a: tensor<2x3x4xf32>, %w: tensor<4x5xf32>) -> (tensor<2x3x4xf32>, tensor<4x5xf32>) {
  %y = tidal.matmul %a, %w : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %s = tidal.reduce_sum %y {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x5xf32>) -> tensor<f32>
  %g:2 = tidal.gradient %s, %a, %w : (tensor<f32>, tensor<2x3x4xf32>, tensor<4x5xf32>) -> (tensor<2x3x4xf32>, tensor<4x5xf32>)
  return %g#0, %g#1 : tensor<2x3x4xf32>, tensor<4x5xf32>
}

// -----

// GELU's backward keeps only the forward input.
// CHECK-LABEL: func.func @train_step(%arg0: tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK: %[[G:.*]] = tidal.broadcast_to
// CHECK: tidal.gelu_backward %[[G]], %arg0 : tensor<2x8xf32>
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %y = tidal.gelu %x : tensor<2x8xf32>
  %s = tidal.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x8xf32>) -> tensor<f32>
  %g = tidal.gradient %s, %x : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

// Weight standardisation (BiT's F.batch_norm over a convolution's weight
// without running statistics, which PyTorch exports as ReduceMeans of the
// weight in their place): the running statistics depend on the parameter
// but get no gradient; the weight's comes through batch_norm_backward.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[RM:.*]] = tidal.reduce_mean %arg0 {axes = array<i64: 1>, keepdims = false}
// CHECK: %[[RV:.*]] = tidal.reduce_mean
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %[[BM:.*]], %[[BV:.*]] = tidal.batch_norm_training %[[W:.*]], %{{.*}}, %{{.*}}, %[[RM]], %[[RV]]
// CHECK: %[[DX:.*]], %{{.*}}, %{{.*}} = tidal.batch_norm_backward %{{.*}}, %[[W]], %{{.*}}, %[[BM]], %[[BV]]
// CHECK: %[[DW:.*]] = tidal.reshape %[[DX]] {shape = array<i64: 4, 6>}
// CHECK-NOT: batch_norm_backward
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<4x6xf32>
func.func @main(%w: tensor<4x6xf32> {tidal.name = "conv.weight", tidal.role = #tidal<role param>})
    -> tensor<f32> {
  %w3 = tidal.reshape %w {shape = array<i64: 1, 4, 6>} : (tensor<4x6xf32>) -> tensor<1x4x6xf32>
  %one = tidal.constant dense<1.0> : tensor<4xf32>
  %zero = tidal.constant dense<0.0> : tensor<4xf32>
  %rm = tidal.reduce_mean %w {axes = array<i64: 1>, keepdims = false} : (tensor<4x6xf32>) -> tensor<4xf32>
  %sq = tidal.mul %w, %w : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %rv = tidal.reduce_mean %sq {axes = array<i64: 1>, keepdims = false} : (tensor<4x6xf32>) -> tensor<4xf32>
  %bn:5 = tidal.batch_norm_training %w3, %one, %zero, %rm, %rv : (tensor<1x4x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %sq2 = tidal.mul %bn#0, %bn#0 : (tensor<1x4x6xf32>, tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
  %l = tidal.reduce_sum %sq2 {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<1x4x6xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
