// --tidal-block-channels: activations between convolutions, batch norms and
// same-shaped element-wise ops are marked channel-blocked on their defining
// op (tidal.blocked = result indices); anything a dense-only op, a function
// argument or a function result touches stays dense.
// RUN: tidal-opt %s -split-input-file -tidal-block-channels | FileCheck %s

// conv -> batch norm -> relu -> conv -> residual add -> relu, and the
// backward ops of the chain. The image argument stays dense (the first
// conv reads it as it is), and so does the 3-channel image gradient.
// CHECK-LABEL: func.func @chain
// CHECK: %[[C0:.*]] = tidal.conv %arg0, %arg1 {{.*}}tidal.blocked = array<i64: 0>
// CHECK: tidal.batch_norm_training %[[C0]], {{.*}}tidal.blocked = array<i64: 0>
// CHECK: %[[R:.*]] = tidal.relu %{{.*}} {tidal.blocked = array<i64: 0>}
// CHECK: tidal.conv %[[R]], %arg6 {{.*}}tidal.blocked = array<i64: 0>
// CHECK: tidal.add {{.*}}tidal.blocked = array<i64: 0>
// CHECK: %[[Y:.*]] = tidal.relu %{{.*}} {tidal.blocked = array<i64: 0>}
// CHECK: %[[DY:.*]] = tidal.relu_backward %{{.*}}, %[[Y]] {tidal.blocked = array<i64: 0>}
// CHECK: tidal.conv_backward_data %[[DY]], %arg6 {{.*}}tidal.blocked = array<i64: 0>
// CHECK: tidal.conv_backward_weights %[[DY]], %[[R]]
// CHECK-NOT: tidal.blocked
// CHECK: %[[GI:.*]], %{{.*}}, %{{.*}} = tidal.batch_norm_backward {{.*}}tidal.blocked = array<i64: 0>
// CHECK: tidal.conv_backward_data %[[GI]], %arg1
// CHECK-NOT: tidal.blocked
// CHECK: tidal.reduce_sum
// CHECK-NOT: tidal.blocked
// CHECK: return
func.func @chain(%x: tensor<2x3x8x8xf32>, %w0: tensor<16x3x3x3xf32>,
                 %s: tensor<16xf32>, %b: tensor<16xf32>, %m: tensor<16xf32>,
                 %v: tensor<16xf32>, %w1: tensor<16x16x3x3xf32>) -> (tensor<f32>, tensor<16x16x3x3xf32>, tensor<16xf32>) {
  %c0 = tidal.conv %x, %w0 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<2x16x8x8xf32>
  %o, %rm, %rv, %bm, %bv = tidal.batch_norm_training %c0, %s, %b, %m, %v : (tensor<2x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<2x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  %r = tidal.relu %o : tensor<2x16x8x8xf32>
  %c1 = tidal.conv %r, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<2x16x8x8xf32>
  %a = tidal.add %c1, %r : (tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %y = tidal.relu %a : tensor<2x16x8x8xf32>
  %gb = tidal.conv %y, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<2x16x8x8xf32>
  %dy = tidal.relu_backward %gb, %y : tensor<2x16x8x8xf32>
  %dx = tidal.conv_backward_data %dy, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<2x16x8x8xf32>
  %dw = tidal.conv_backward_weights %dy, %r {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>) -> tensor<16x16x3x3xf32>
  %gi, %gs, %gbias = tidal.batch_norm_backward %dx, %c0, %s, %bm, %bv : (tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<2x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>)
  %gx = tidal.conv_backward_data %gi, %w0 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x16x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<2x3x8x8xf32>
  %l = tidal.reduce_sum %gx {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x3x8x8xf32>) -> tensor<f32>
  return %l, %dw, %gs : tensor<f32>, tensor<16x16x3x3xf32>, tensor<16xf32>
}

// -----

// Channels that are not a multiple of 16 stay dense; so does a group that
// a dense-only op reads (reshape), that a broadcasting add joins, or that a
// function returns.
// CHECK-LABEL: func.func @dense
// CHECK-NOT: tidal.blocked
// CHECK: return
func.func @dense(%x: tensor<2x8x4x4xf32>, %w8: tensor<8x8x1x1xf32>,
                 %x16: tensor<2x16x4x4xf32>, %w16: tensor<16x16x1x1xf32>,
                 %bias: tensor<16x1x1xf32>)
    -> (tensor<2x8x4x4xf32>, tensor<2x256xf32>, tensor<2x16x4x4xf32>, tensor<2x16x4x4xf32>) {
  %a = tidal.conv %x, %w8 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x4x4xf32>
  %b = tidal.conv %x16, %w16 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x4x4xf32>
  %br = tidal.relu %b : tensor<2x16x4x4xf32>
  %flat = tidal.reshape %br {shape = array<i64: 2, 256>} : (tensor<2x16x4x4xf32>) -> tensor<2x256xf32>
  %c = tidal.conv %x16, %w16 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x4x4xf32>
  %cb = tidal.add %c, %bias : (tensor<2x16x4x4xf32>, tensor<16x1x1xf32>) -> tensor<2x16x4x4xf32>
  %d = tidal.conv %x16, %w16 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x4x4xf32>
  %dr = tidal.relu %d : tensor<2x16x4x4xf32>
  return %a, %flat, %cb, %dr : tensor<2x8x4x4xf32>, tensor<2x256xf32>, tensor<2x16x4x4xf32>, tensor<2x16x4x4xf32>
}

// -----

// Copies pass the layout on without a mark of their own: the conv that
// reads the prefetched copy reads a blocked tensor. A softmax over the
// channels is not element-wise: its operand's group stays dense.
// CHECK-LABEL: func.func @copies
// CHECK: %[[A:.*]] = tidal.conv {{.*}}tidal.blocked = array<i64: 0>
// CHECK: %[[O:.*]] = tidal.offload %[[A]] : tensor<2x16x4x4xf32>
// CHECK: tidal.wait %[[O]] : tensor<2x16x4x4xf32>
// CHECK: tidal.conv {{.*}}tidal.blocked = array<i64: 0>
// CHECK: tidal.conv
// CHECK-NOT: tidal.blocked
// CHECK: tidal.softmax
func.func @copies(%x: tensor<2x16x4x4xf32>, %w: tensor<16x16x1x1xf32>)
    -> tensor<2x16x4x4xf32> {
  %a = tidal.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x4x4xf32>
  %o = tidal.offload %a : tensor<2x16x4x4xf32>
  %ow = tidal.wait %o : tensor<2x16x4x4xf32>
  %p = tidal.prefetch %ow : tensor<2x16x4x4xf32>
  %pw = tidal.wait %p : tensor<2x16x4x4xf32>
  %b = tidal.conv %pw, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x4x4xf32>
  %c = tidal.conv %b, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x4x4xf32>
  %s = tidal.softmax %c {axis = 1 : i64} : tensor<2x16x4x4xf32>
  return %s : tensor<2x16x4x4xf32>
}

// -----

// Pooling takes blocked tensors: the relu before a max pool and the pool's
// output feeding the next conv stay blocked, and so does the max pool's
// backward. The flattened pool output before a dense layer does not.
// CHECK-LABEL: func.func @pooling
// CHECK: %[[R:.*]] = tidal.relu %{{.*}} {tidal.blocked = array<i64: 0>}
// CHECK: %[[P:.*]] = tidal.max_pool %[[R]] {{.*}}tidal.blocked = array<i64: 0>
// CHECK: tidal.conv %[[P]], {{.*}}tidal.blocked = array<i64: 0>
// CHECK: tidal.average_pool {{.*}} : (tensor<2x16x4x4xf32>) -> tensor<2x16x2x2xf32>
// CHECK-NOT: tidal.blocked
// CHECK: tidal.flatten
// CHECK: tidal.max_pool_backward %{{.*}}, %[[R]] {{.*}}tidal.blocked = array<i64: 0>
func.func @pooling(%x: tensor<2x16x8x8xf32>, %w: tensor<16x16x1x1xf32>, %g: tensor<2x16x4x4xf32>)
    -> (tensor<2x64xf32>, tensor<2x16x8x8xf32>) {
  %c = tidal.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x8x8xf32>
  %r = tidal.relu %c : tensor<2x16x8x8xf32>
  %p = tidal.max_pool %r {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x16x8x8xf32>) -> tensor<2x16x4x4xf32>
  %c2 = tidal.conv %p, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x4x4xf32>
  %a = tidal.average_pool %c2 {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x16x4x4xf32>) -> tensor<2x16x2x2xf32>
  %f = tidal.flatten %a {axis = 1 : i64} : (tensor<2x16x2x2xf32>) -> tensor<2x64xf32>
  %gp = tidal.conv %g, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x4x4xf32>
  %dx = tidal.max_pool_backward %gp, %r {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x16x4x4xf32>, tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %dr = tidal.conv %dx, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x8x8xf32>
  %o = tidal.relu %dr : tensor<2x16x8x8xf32>
  return %f, %o : tensor<2x64xf32>, tensor<2x16x8x8xf32>
}

// -----

// The network's tail: a global average pool reads the blocked residual
// stream (its [N, C, 1, 1] result is dense), and its gradient, broadcast
// back over the spatial dims and scaled by a scalar, is blocked again.
// CHECK-LABEL: func.func @tail
// CHECK: %[[Y:.*]] = tidal.relu %{{.*}} {tidal.blocked = array<i64: 0>}
// CHECK: tidal.global_average_pool %[[Y]] : (tensor<2x16x4x4xf32>) -> tensor<2x16x1x1xf32>
// CHECK: %[[B:.*]] = tidal.broadcast_to %{{.*}} {tidal.blocked = array<i64: 0>}
// CHECK: %[[S:.*]] = tidal.mul %[[B]], %{{.*}} {tidal.blocked = array<i64: 0>}
// CHECK: tidal.relu_backward %[[S]], %[[Y]] {tidal.blocked = array<i64: 0>}
func.func @tail(%x: tensor<2x16x4x4xf32>, %w: tensor<16x16x1x1xf32>, %g: tensor<2x16x1x1xf32>)
    -> (tensor<2x16x1x1xf32>, tensor<16x16x1x1xf32>) {
  %c = tidal.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x4x4xf32>
  %y = tidal.relu %c : tensor<2x16x4x4xf32>
  %p = tidal.global_average_pool %y : (tensor<2x16x4x4xf32>) -> tensor<2x16x1x1xf32>
  %b = tidal.broadcast_to %g : (tensor<2x16x1x1xf32>) -> tensor<2x16x4x4xf32>
  %k = tidal.constant dense<6.250000e-02> : tensor<f32>
  %s = tidal.mul %b, %k : (tensor<2x16x4x4xf32>, tensor<f32>) -> tensor<2x16x4x4xf32>
  %d = tidal.relu_backward %s, %y : tensor<2x16x4x4xf32>
  %dw = tidal.conv_backward_weights %d, %x {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>, tensor<2x16x4x4xf32>) -> tensor<16x16x1x1xf32>
  return %p, %dw : tensor<2x16x1x1xf32>, tensor<16x16x1x1xf32>
}

// -----

// Concat along the channels joins its parts' groups into one (DenseNet's
// and GoogLeNet's blocks); a part of 8 channels keeps them all dense. (The
// batch norm's output is returned: dense.)
// CHECK-LABEL: func.func @concat
// CHECK: %[[CAT:.*]] = tidal.concat {{.*}}tidal.blocked = array<i64: 0>
// CHECK-NEXT: tidal.batch_norm_training %[[CAT]], %arg4, %arg5, %arg4, %arg4 :
// CHECK: tidal.conv %arg2
// CHECK-NOT: tidal.blocked
// CHECK: tidal.concat
// CHECK-NOT: tidal.blocked
// CHECK: return
func.func @concat(%x: tensor<2x16x4x4xf32>, %w: tensor<16x16x1x1xf32>,
                  %x8: tensor<2x8x4x4xf32>, %w8: tensor<8x8x1x1xf32>,
                  %s: tensor<32xf32>, %b: tensor<32xf32>)
    -> (tensor<2x32x4x4xf32>, tensor<2x24x4x4xf32>, tensor<32xf32>) {
  %c0 = tidal.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x4x4xf32>
  %c1 = tidal.conv %c0, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x4x4xf32>
  %cat = tidal.concat %c0, %c1 {axis = 1 : i64} : (tensor<2x16x4x4xf32>, tensor<2x16x4x4xf32>) -> tensor<2x32x4x4xf32>
  %o, %rm, %rv, %bm, %bv = tidal.batch_norm_training %cat, %s, %b, %s, %s : (tensor<2x32x4x4xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<2x32x4x4xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  %c8 = tidal.conv %x8, %w8 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x4x4xf32>
  %c2 = tidal.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x4x4xf32>
  %cat2 = tidal.concat %c2, %c8 {axis = 1 : i64} : (tensor<2x16x4x4xf32>, tensor<2x8x4x4xf32>) -> tensor<2x24x4x4xf32>
  return %o, %cat2, %bm : tensor<2x32x4x4xf32>, tensor<2x24x4x4xf32>, tensor<32xf32>
}
