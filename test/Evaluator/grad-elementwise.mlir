// Element-wise, dropout and softmax backward ops against hand-derived values.
// RUN: tidal-eval %s --function pointwise --print | FileCheck %s --check-prefix=PW
// RUN: tidal-eval %s --function dropout --print | FileCheck %s --check-prefix=DROP
// RUN: tidal-eval %s --function softmax --print | FileCheck %s --check-prefix=SM

// relu_backward passes grad where the saved output is positive;
// leaky_relu_backward scales by alpha where the saved input is not;
// sigmoid: 2 * 0.25 * 0.75; tanh: 2 * (1 - 0.25); erf at 0: 2 / sqrt(pi).
// PW: result 0: tensor<3xf32> = [0, 2, 3]
// PW: result 1: tensor<2xf32> = [0.1, 1]
// PW: result 2: tensor<1xf32> = [0.375]
// PW: result 3: tensor<1xf32> = [1.5]
// PW: result 4: tensor<1xf32> = [1.12838]
func.func @pointwise() -> (tensor<3xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) {
  %g3 = tidal.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %y3 = tidal.constant dense<[0.0, 0.5, 2.0]> : tensor<3xf32>
  %0 = tidal.relu_backward %g3, %y3 : tensor<3xf32>
  %g2 = tidal.constant dense<1.0> : tensor<2xf32>
  %x2 = tidal.constant dense<[-2.0, 3.0]> : tensor<2xf32>
  %1 = tidal.leaky_relu_backward %g2, %x2 {alpha = 0.1 : f32} : tensor<2xf32>
  %two = tidal.constant dense<2.0> : tensor<1xf32>
  %quarter = tidal.constant dense<0.25> : tensor<1xf32>
  %half = tidal.constant dense<0.5> : tensor<1xf32>
  %2 = tidal.sigmoid_backward %two, %quarter : tensor<1xf32>
  %3 = tidal.tanh_backward %two, %half : tensor<1xf32>
  %one = tidal.constant dense<1.0> : tensor<1xf32>
  %zero = tidal.constant dense<0.0> : tensor<1xf32>
  %4 = tidal.erf_backward %one, %zero : tensor<1xf32>
  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
}

// Inference dropout is the identity with an all-true mask; the backward
// scales the kept elements by 1 / (1 - 0.5).
// DROP: result 0: tensor<4xf32> = [1, 2, 3, 4]
// DROP: result 1: tensor<4xi1> = [true, true, true, true]
// DROP: result 2: tensor<4xf32> = [2, 0, 6, 0]
func.func @dropout() -> (tensor<4xf32>, tensor<4xi1>, tensor<4xf32>) {
  %x = tidal.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %y, %m = tidal.dropout %x {ratio = 0.5 : f32} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  %mask = tidal.constant dense<[true, false, true, false]> : tensor<4xi1>
  %0 = tidal.dropout_backward %x, %mask {ratio = 0.5 : f32} : (tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>
  return %y, %m, %0 : tensor<4xf32>, tensor<4xi1>, tensor<4xf32>
}

// softmax([0, ln 3]) = [0.25, 0.75]. softmax_backward with g = [1, 0]:
// y * (g - sum(g * y)) = [0.25 * 0.75, 0.75 * -0.25]; log_softmax_backward
// with g = [1, 1]: g - exp(y) * 2 = [0.5, -0.5].
// SM: result 0: tensor<1x2xf64> = [0.25, 0.75]
// SM: result 1: tensor<1x2xf64> = [0.1875, -0.1875]
// SM: result 2: tensor<1x2xf64> = [0.5, -0.5]
func.func @softmax() -> (tensor<1x2xf64>, tensor<1x2xf64>, tensor<1x2xf64>) {
  %x = tidal.constant dense<[[0.0, 1.0986122886681098]]> : tensor<1x2xf64>
  %y = tidal.softmax %x {axis = 1 : i64} : tensor<1x2xf64>
  %ly = tidal.log_softmax %x {axis = 1 : i64} : tensor<1x2xf64>
  %g = tidal.constant dense<[[1.0, 0.0]]> : tensor<1x2xf64>
  %0 = tidal.softmax_backward %g, %y {axis = 1 : i64} : tensor<1x2xf64>
  %ones = tidal.constant dense<1.0> : tensor<1x2xf64>
  %1 = tidal.log_softmax_backward %ones, %ly {axis = 1 : i64} : tensor<1x2xf64>
  return %y, %0, %1 : tensor<1x2xf64>, tensor<1x2xf64>, tensor<1x2xf64>
}
