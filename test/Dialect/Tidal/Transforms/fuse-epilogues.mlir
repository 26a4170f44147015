// --tidal-fuse-epilogues: a relu or clip that is the only reader of a batch
// normalization's output is folded into it (relu = true, or the clip's
// bounds as clip_min/clip_max); its users, relu_backward and clip_backward
// among them, read the normalization's output instead.
// RUN: tidal-opt %s -split-input-file -tidal-fuse-epilogues -mlir-print-debuginfo | FileCheck %s

// Training: the relu goes, its backward reads the fused output.
// CHECK-LABEL: func.func @training
// CHECK: %[[O:.*]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = tidal.batch_norm_training %arg0, {{.*}} {relu = true} {{.*}} loc(#[[LOC:loc[0-9]+]])
// CHECK-NOT: tidal.relu %
// CHECK: tidal.relu_backward %arg5, %[[O]]
// CHECK: return %[[O]]
// CHECK: #[[BN:loc[0-9]+]] = loc("bn")
// CHECK: #[[R:loc[0-9]+]] = loc("r")
// CHECK: #[[LOC]] = loc(fused[#[[BN]], #[[R]]])
func.func @training(%x: tensor<2x4x3x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>,
                    %m: tensor<4xf32>, %v: tensor<4xf32>, %g: tensor<2x4x3x3xf32>)
    -> (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) {
  %o, %rm, %rv, %bm, %bv = tidal.batch_norm_training %x, %s, %b, %m, %v : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) loc("bn")
  %r = tidal.relu %o : tensor<2x4x3x3xf32> loc("r")
  %dr = tidal.relu_backward %g, %r : tensor<2x4x3x3xf32>
  return %r, %dr : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
}

// -----

// Inference (the predict function's form) fuses too.
// CHECK-LABEL: func.func @inference
// CHECK: %[[Y:.*]] = tidal.batch_norm_inference {{.*}} {relu = true}
// CHECK-NOT: tidal.relu
// CHECK: return %[[Y]]
func.func @inference(%x: tensor<2x4xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>,
                     %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<2x4xf32> {
  %y = tidal.batch_norm_inference %x, %s, %b, %m, %v : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %r = tidal.relu %y : tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// The normalization's output has another reader (a residual add, a
// result): nothing is fused, since that reader needs the values before the
// ReLU. A relu of something else stays as it is.
// CHECK-LABEL: func.func @kept
// CHECK: tidal.batch_norm_inference
// CHECK-NOT: relu = true
// CHECK: tidal.relu
// CHECK: tidal.add
// CHECK: tidal.relu %arg0
func.func @kept(%x: tensor<2x4xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>,
                %m: tensor<4xf32>, %v: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %y = tidal.batch_norm_inference %x, %s, %b, %m, %v : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %r = tidal.relu %y : tensor<2x4xf32>
  %a = tidal.add %r, %y : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %q = tidal.relu %x : tensor<2x4xf32>
  return %a, %q : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// A clip (ReLU6) folds in as clip_min/clip_max; its backward, which reads
// the clip's output, reads the fused output.
// CHECK-LABEL: func.func @relu6
// CHECK: %[[O:.*]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = tidal.batch_norm_training %arg0, {{.*}} {clip_max = 6.000000e+00 : f32, clip_min = 0.000000e+00 : f32}
// CHECK-NOT: tidal.clip %
// CHECK: tidal.clip_backward %arg5, %[[O]] {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32}
// CHECK: return %[[O]]
func.func @relu6(%x: tensor<2x4x3x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>,
                 %m: tensor<4xf32>, %v: tensor<4xf32>, %g: tensor<2x4x3x3xf32>)
    -> (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) {
  %o, %rm, %rv, %bm, %bv = tidal.batch_norm_training %x, %s, %b, %m, %v : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %c = tidal.clip %o {min = 0.0 : f32, max = 6.0 : f32} : tensor<2x4x3x3xf32>
  %dc = tidal.clip_backward %g, %c {min = 0.0 : f32, max = 6.0 : f32} : tensor<2x4x3x3xf32>
  return %c, %dc : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
}

// -----

// One epilogue per normalization: a clip after a fused relu's output stays.
// CHECK-LABEL: func.func @one_epilogue
// CHECK: tidal.batch_norm_inference {{.*}} {relu = true}
// CHECK: tidal.clip
func.func @one_epilogue(%x: tensor<2x4xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>,
                        %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<2x4xf32> {
  %y = tidal.batch_norm_inference %x, %s, %b, %m, %v {relu = true} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %c = tidal.clip %y {min = 0.0 : f32, max = 6.0 : f32} : tensor<2x4xf32>
  return %c : tensor<2x4xf32>
}
