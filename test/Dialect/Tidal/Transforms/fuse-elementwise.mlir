// --tidal-fuse-elementwise: chains of float32 element-wise ops become one
// tidal.fused_elementwise op each; values read outside the chain become its
// results, the others disappear.
// RUN: tidal-opt %s -split-input-file -tidal-fuse-elementwise | FileCheck %s
// RUN: tidal-opt %s -split-input-file -tidal-fuse-elementwise -mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// A residual add, its relu, and the relu's backward of an accumulated
// gradient: one op. Registers 0-3 are the inputs; add(0, 1) -> 4,
// relu(4) -> 5, add(2, 3) -> 6, relu_backward(6, 5) -> 7. The relu's value
// (read by the return) and the gradient are its results; the sums are
// never stored.
// CHECK-LABEL: func.func @residual
// CHECK: %[[F:.*]]:2 = tidal.fused_elementwise %arg0, %arg1, %arg2, %arg3 {outputs = array<i64: 5, 7>, program = array<i64: 1, 0, 1, 0, 11, 4, -1, 0, 1, 2, 3, 0, 30, 6, 5, 0>} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NOT: tidal.add
// CHECK-NOT: tidal.relu
// CHECK: return %[[F]]#0, %[[F]]#1
// LOC-LABEL: func.func @residual
// LOC: tidal.fused_elementwise {{.*}} loc(#[[L:loc[0-9]*]])
// LOC-DAG: #[[A:loc[0-9]+]] = loc("res")
// LOC-DAG: #[[R:loc[0-9]+]] = loc("act")
// LOC: #[[L]] = loc(fused[#[[A]], #[[R]],
func.func @residual(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>,
                    %g1: tensor<4x8xf32>, %g2: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = tidal.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> loc("res")
  %r = tidal.relu %s : tensor<4x8xf32> loc("act")
  %g = tidal.add %g1, %g2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = tidal.relu_backward %g, %r : tensor<4x8xf32>
  return %r, %d : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An LSTM-style cell: sigmoid and tanh gates, a broadcast scalar, and
// values kept for the backward pass (c and the gates) as extra results.
// CHECK-LABEL: func.func @cell
// CHECK: %[[R:.*]]:3 = tidal.fused_elementwise %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 {outputs = array<i64: 12, 13, 15>, program = array<i64: 12, 0, -1, 0, 12, 1, -1, 0, 12, 2, -1, 0, 13, 3, -1, 0, 3, 7, 4, 0, 3, 6, 9, 0, 1, 10, 11, 0, 13, 12, -1, 0, 3, 8, 13, 0, 3, 14, 5, 0>}
// CHECK-NOT: tidal.sigmoid
// CHECK-NOT: tidal.mul
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @cell(%i: tensor<2x16xf32>, %f: tensor<2x16xf32>, %o: tensor<2x16xf32>,
                %gg: tensor<2x16xf32>, %c: tensor<2x16xf32>, %k: tensor<1xf32>)
    -> (tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>) {
  %si = tidal.sigmoid %i : tensor<2x16xf32>
  %sf = tidal.sigmoid %f : tensor<2x16xf32>
  %so = tidal.sigmoid %o : tensor<2x16xf32>
  %tg = tidal.tanh %gg : tensor<2x16xf32>
  %fc = tidal.mul %sf, %c : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %ig = tidal.mul %si, %tg : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %c2 = tidal.add %fc, %ig : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %tc = tidal.tanh %c2 : tensor<2x16xf32>
  %h = tidal.mul %so, %tc : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %hs = tidal.mul %h, %k : (tensor<2x16xf32>, tensor<1xf32>) -> tensor<2x16xf32>
  return %c2, %tc, %hs : tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>
}

// -----

// Not fused: a value read by another op before the chain ends (fusing
// would move its computation after that reader), float64, a broadcast
// that is not a scalar, a lone op.
// CHECK-LABEL: func.func @not_fused
// CHECK: tidal.relu %arg0
// CHECK: tidal.softmax
// CHECK: tidal.add
// CHECK: tidal.exp {{.*}} : tensor<4x8xf64>
// CHECK: tidal.neg {{.*}} : tensor<4x8xf64>
// CHECK: tidal.add %arg0, %arg2
// CHECK: tidal.relu
// CHECK-NOT: tidal.fused_elementwise
func.func @not_fused(%x: tensor<4x8xf32>, %d: tensor<4x8xf64>, %row: tensor<8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf64>, tensor<4x8xf32>) {
  %r = tidal.relu %x : tensor<4x8xf32>
  %s = tidal.softmax %r {axis = 1 : i64} : tensor<4x8xf32>
  %a = tidal.add %r, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tidal.exp %d : tensor<4x8xf64>
  %n = tidal.neg %e : tensor<4x8xf64>
  %b = tidal.add %x, %row : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %q = tidal.relu %b : tensor<4x8xf32>
  return %a, %n, %q : tensor<4x8xf32>, tensor<4x8xf64>, tensor<4x8xf32>
}

// -----

// Blocked and dense values do not mix; a blocked chain keeps its mark.
// CHECK-LABEL: func.func @layouts
// CHECK: tidal.fused_elementwise %arg0, %arg1 {outputs = array<i64: 3>, program = array<i64: 1, 0, 1, 0, 11, 2, -1, 0>, tidal.blocked = array<i64: 0>}
// CHECK: tidal.relu
func.func @layouts(%x: tensor<2x16x4x4xf32>, %y: tensor<2x16x4x4xf32>)
    -> (tensor<2x16x4x4xf32>, tensor<2x16x4x4xf32>) {
  %a = tidal.add %x, %y {tidal.blocked = array<i64: 0>} : (tensor<2x16x4x4xf32>, tensor<2x16x4x4xf32>) -> tensor<2x16x4x4xf32>
  %r = tidal.relu %a {tidal.blocked = array<i64: 0>} : tensor<2x16x4x4xf32>
  %d = tidal.relu %r : tensor<2x16x4x4xf32>
  return %r, %d : tensor<2x16x4x4xf32>, tensor<2x16x4x4xf32>
}

// -----

// A sum of values produced far apart (an RNN weight's gradient over the
// time steps): fusing the second add would keep both addends of the first
// alive across the softmax in between, for one sum no longer stored. Not
// fused. The same sum with nothing in between is.
// CHECK-LABEL: func.func @accumulate
// CHECK: %[[A1:.*]] = tidal.add
// CHECK: tidal.softmax
// CHECK: tidal.add %[[A1]]
// CHECK-NOT: tidal.fused_elementwise
// CHECK-LABEL: func.func @accumulate_adjacent
// CHECK: tidal.fused_elementwise {{.*}}program = array<i64: 1, 0, 1, 0, 1, 3, 2, 0>
func.func @accumulate(%x0: tensor<4x8xf32>, %x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %p = tidal.softmax %x0 {axis = 1 : i64} : tensor<4x8xf32>
  %q = tidal.softmax %x1 {axis = 1 : i64} : tensor<4x8xf32>
  %a1 = tidal.add %p, %q : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = tidal.softmax %x2 {axis = 1 : i64} : tensor<4x8xf32>
  %a2 = tidal.add %a1, %r : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a2 : tensor<4x8xf32>
}
func.func @accumulate_adjacent(%x0: tensor<4x8xf32>, %x1: tensor<4x8xf32>, %x2: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %p = tidal.softmax %x0 {axis = 1 : i64} : tensor<4x8xf32>
  %q = tidal.softmax %x1 {axis = 1 : i64} : tensor<4x8xf32>
  %r = tidal.softmax %x2 {axis = 1 : i64} : tensor<4x8xf32>
  %a1 = tidal.add %p, %q : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %a2 = tidal.add %a1, %r : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a2 : tensor<4x8xf32>
}
