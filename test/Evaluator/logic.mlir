// max, min, comparisons, mask logic and where against hand-derived values
// (LogicOps.cpp), with broadcasting and NaN.
// RUN: tidal-eval %s --function logic --print | FileCheck %s

// max/min keep NaN; [0, 1] < [1, 2] over rows and columns; not(<) and >=;
// where over (equal or that).
// CHECK: result 0: tensor<2x2xf32> = [1, 2, 3, nan]
// CHECK: result 1: tensor<2x2xf32> = [0, 2, 0, nan]
// CHECK: result 2: tensor<2x2xi1> = [false, true, false, false]
// CHECK: result 3: tensor<2x2xi1> = [true, true, false, true]
// CHECK: result 4: tensor<2x2xi1> = [false, false, true, false]
// CHECK: result 5: tensor<2x2xf32> = [-1, 2, 3, -1]
func.func @logic() -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xf32>) {
  %a = tidal.constant dense<[[1.0, 2.0], [3.0, 0x7FC00000]]> : tensor<2x2xf32>
  %b = tidal.constant dense<[0.0, 2.0]> : tensor<2xf32>
  %0 = tidal.max %a, %b : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %1 = tidal.min %a, %b : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %2 = tidal.equal %a, %b : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xi1>
  %r = tidal.constant dense<[[0], [1]]> : tensor<2x1xi64>
  %c = tidal.constant dense<[1, 2]> : tensor<2xi64>
  %3 = tidal.less %r, %c : (tensor<2x1xi64>, tensor<2xi64>) -> tensor<2x2xi1>
  %ge = tidal.greater_or_equal %r, %c : (tensor<2x1xi64>, tensor<2xi64>) -> tensor<2x2xi1>
  %n = tidal.logical_not %3 : tensor<2x2xi1>
  %4 = tidal.logical_and %n, %ge : (tensor<2x2xi1>, tensor<2x2xi1>) -> tensor<2x2xi1>
  %m = tidal.logical_or %2, %4 : (tensor<2x2xi1>, tensor<2x2xi1>) -> tensor<2x2xi1>
  %fill = tidal.constant dense<-1.0> : tensor<f32>
  %5 = tidal.where %m, %a, %fill : (tensor<2x2xi1>, tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xf32>
}

// cast: float to integer truncates toward zero, NaN gives 0, out of range
// saturates; to i1 is x != 0 (NaN too); i1 to float is 0 or 1.
// RUN: tidal-eval %s --function casts --print | FileCheck %s --check-prefix=CAST
// CAST: result 0: tensor<5xi8> = [-2, 2, 0, 127, -128]
// CAST: result 1: tensor<5xi1> = [true, true, true, true, true]
// CAST: result 2: tensor<2xf32> = [1, 0]
func.func @casts() -> (tensor<5xi8>, tensor<5xi1>, tensor<2xf32>) {
  %a = tidal.constant dense<[-2.7, 2.7, 0x7FC00000, 1.0e10, -1.0e10]> : tensor<5xf32>
  %0 = tidal.cast %a : (tensor<5xf32>) -> tensor<5xi8>
  %1 = tidal.cast %a : (tensor<5xf32>) -> tensor<5xi1>
  %m = tidal.constant dense<[true, false]> : tensor<2xi1>
  %2 = tidal.cast %m : (tensor<2xi1>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<5xi8>, tensor<5xi1>, tensor<2xf32>
}
