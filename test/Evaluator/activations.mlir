// The activation family and element-wise math ops against hand-derived
// values (ActivationOps.cpp).
// RUN: tidal-eval %s --function forward --print | FileCheck %s --check-prefix=FW
// RUN: tidal-eval %s --function backward --print | FileCheck %s --check-prefix=BW

// clip to [0, 6]; hard_sigmoid 0.2x + 0.5 clamped; hard_swish x(x+3)/6 in
// [-3, 3]; elu/celu with alpha 1 at -1: e^-1 - 1; softsign 3/4; round half
// to even; sign; abs; reciprocal.
// FW: result 0: tensor<4xf32> = [0, 0.5, 6, 6]
// FW: result 1: tensor<3xf32> = [0, 0.5, 1]
// FW: result 2: tensor<3xf32> = [-0, 0.666667, 4]
// FW: result 3: tensor<2xf32> = [-0.632121, 2]
// FW: result 4: tensor<2xf32> = [0.75, -0.75]
// FW: result 5: tensor<4xf32> = [2, -2, 4, 0]
// FW: result 6: tensor<3xi64> = [-1, 0, 1]
// FW: result 7: tensor<2xf32> = [4, 0.25]
func.func @forward() -> (tensor<4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4xf32>, tensor<3xi64>, tensor<2xf32>) {
  %a = tidal.constant dense<[-1.0, 0.5, 6.0, 9.0]> : tensor<4xf32>
  %0 = tidal.clip %a {min = 0.0 : f32, max = 6.0 : f32} : tensor<4xf32>
  %b = tidal.constant dense<[-5.0, 0.0, 5.0]> : tensor<3xf32>
  %1 = tidal.hard_sigmoid %b : tensor<3xf32>
  %c = tidal.constant dense<[-3.0, 1.0, 4.0]> : tensor<3xf32>
  %2 = tidal.hard_swish %c : tensor<3xf32>
  %d = tidal.constant dense<[-1.0, 2.0]> : tensor<2xf32>
  %3 = tidal.celu %d : tensor<2xf32>
  %e = tidal.constant dense<[3.0, -3.0]> : tensor<2xf32>
  %4 = tidal.softsign %e : tensor<2xf32>
  %f = tidal.constant dense<[2.5, -2.5, 3.5, 0.2]> : tensor<4xf32>
  %5 = tidal.round %f : tensor<4xf32>
  %i = tidal.constant dense<[-7, 0, 3]> : tensor<3xi64>
  %6 = tidal.sign %i : tensor<3xi64>
  %r = tidal.constant dense<[-0.25, 4.0]> : tensor<2xf32>
  %7 = tidal.abs %r : tensor<2xf32>
  %8 = tidal.reciprocal %7 : tensor<2xf32>
  return %0, %1, %2, %3, %4, %5, %6, %8 : tensor<4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4xf32>, tensor<3xi64>, tensor<2xf32>
}

// clip passes strictly inside (0, 6); hard_swish at 0 is 1/2, at 4 is 1, at
// -4 is 0; elu at -1 with alpha 1: e^-1; softplus at 0: 1/2; softsign at 1:
// 1/4; mish at 0: tanh(log 2) = 0.6.
// BW: result 0: tensor<4xf32> = [0, 0, 2, 0]
// BW: result 1: tensor<3xf32> = [0, 1, 2]
// BW: result 2: tensor<1xf32> = [0.735759]
// BW: result 3: tensor<3xf32> = [1, 0.25, 0.6]
func.func @backward() -> (tensor<4xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>) {
  %g = tidal.constant dense<2.0> : tensor<4xf32>
  %x = tidal.constant dense<[0.0, 6.0, 3.0, -1.0]> : tensor<4xf32>
  %0 = tidal.clip_backward %g, %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<4xf32>
  %g3 = tidal.constant dense<2.0> : tensor<3xf32>
  %x3 = tidal.constant dense<[-4.0, 0.0, 4.0]> : tensor<3xf32>
  %1 = tidal.hard_swish_backward %g3, %x3 : tensor<3xf32>
  %g1 = tidal.constant dense<2.0> : tensor<1xf32>
  %x1 = tidal.constant dense<-1.0> : tensor<1xf32>
  %2 = tidal.elu_backward %g1, %x1 : tensor<1xf32>
  %ones = tidal.constant dense<[2.0, 1.0, 1.0]> : tensor<3xf32>
  %zero = tidal.constant dense<0.0> : tensor<3xf32>
  %sp = tidal.softplus_backward %ones, %zero : tensor<3xf32>
  %xs = tidal.constant dense<1.0> : tensor<3xf32>
  %ss = tidal.softsign_backward %ones, %xs : tensor<3xf32>
  %mi = tidal.mish_backward %ones, %zero : tensor<3xf32>
  %s0 = tidal.constant dense<[1.0, 0.0, 0.0]> : tensor<3xf32>
  %s1 = tidal.constant dense<[0.0, 1.0, 0.0]> : tensor<3xf32>
  %s2 = tidal.constant dense<[0.0, 0.0, 1.0]> : tensor<3xf32>
  %p0 = tidal.mul %sp, %s0 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %p1 = tidal.mul %ss, %s1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %p2 = tidal.mul %mi, %s2 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %q = tidal.add %p0, %p1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = tidal.add %q, %p2 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<3xf32>, tensor<1xf32>, tensor<3xf32>
}
