// Every error is one line `FILE: error: ...` with exit status 1.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.zeros(3, np.float32)); np.save('%t/x64.npy', np.zeros(3, np.float64)); np.save('%t/x4.npy', np.zeros(4, np.float32)); np.save('%t/i.npy', np.array([5], np.int64)); open('%t/junk.npy', 'w').write('junk')"

// RUN: not tidal-eval %s 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: {{^}}{{.*}}errors.mlir: error: argument 'x' of @main is not bound (--arg x=FILE.npy){{$}}
// RUN: not tidal-eval %s 2>&1 | count 1

// RUN: not tidal-eval %s --arg x=%t/x64.npy 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: {{^}}{{.*}}x64.npy: error: argument 'x' expects float32 [3], got float64 [3]{{$}}

// RUN: not tidal-eval %s --arg x=%t/x4.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: {{^}}{{.*}}x4.npy: error: argument 'x' expects float32 [3], got float32 [4]{{$}}

// RUN: not tidal-eval %s --arg x=%t/junk.npy 2>&1 | FileCheck %s --check-prefix=JUNK
// JUNK: {{^}}{{.*}}junk.npy: error: {{.+}}

// RUN: not tidal-eval %s --arg x=%t/none.npy 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: {{^}}{{.*}}none.npy: error: {{.+}}

// RUN: not tidal-eval %s --arg x=%t/x.npy --arg y=%t/x.npy 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: errors.mlir: error: --arg 'y' names no argument of @main

// RUN: not tidal-eval %s --function nope 2>&1 | FileCheck %s --check-prefix=NOFUNC
// NOFUNC: errors.mlir: error: no function named 'nope'

// RUN: not tidal-eval %s --function gradient 2>&1 | FileCheck %s --check-prefix=GRAD
// GRAD: {{^}}{{.*}}errors.mlir: error: 'tidal.gradient' op tidal.gradient must be expanded by --tidal-autodiff first (line [[# @LINE + 4]]){{$}}
func.func @gradient() -> tensor<3xf32> {
  %x = tidal.constant dense<1.0> : tensor<3xf32>
  %y = tidal.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<3xf32>) -> tensor<f32>
  %g = tidal.gradient %y, %x : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %g : tensor<3xf32>
}

// RUN: not tidal-eval %s --function gather --arg %%0=%t/i.npy 2>&1 | FileCheck %s --check-prefix=GATHER
// GATHER: errors.mlir: error: 'tidal.gather' op index 5 is out of range [-3, 3) (line [[# @LINE + 3]])
func.func @gather(%i: tensor<1xi64>) -> tensor<1xf32> {
  %d = tidal.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %0 = tidal.gather %d, %i {axis = 0 : i64} : (tensor<3xf32>, tensor<1xi64>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// RUN: not tidal-eval %s --function labels 2>&1 | FileCheck %s --check-prefix=LABEL
// LABEL: errors.mlir: error: 'tidal.nll_loss' op label 7 is out of range [0, 2)
func.func @labels() -> tensor<f32> {
  %x = tidal.constant dense<0.0> : tensor<1x2xf32>
  %t = tidal.constant dense<7> : tensor<1xi64>
  %0 = tidal.nll_loss %x, %t {reduction = #tidal<reduction mean>} : (tensor<1x2xf32>, tensor<1xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// RUN: echo 'func.func @f() {' > %t/bad.mlir
// RUN: not tidal-eval %t/bad.mlir 2>&1 | FileCheck %s --check-prefix=PARSE
// PARSE: bad.mlir:1:17: error: expected operation name in quotes
// RUN: not tidal-eval %t/bad.mlir 2>&1 | count 1

func.func @main(%x: tensor<3xf32> {tidal.name = "x"}) -> tensor<3xf32> {
  %0 = tidal.relu %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}
