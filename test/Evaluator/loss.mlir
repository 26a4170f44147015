// Cross entropy and negative log likelihood, forward and backward, with
// class weights, ignore_index and each reduction, hand-derived.
// RUN: tidal-eval %s --function sce --print | FileCheck %s --check-prefix=SCE
// RUN: tidal-eval %s --function nll --print | FileCheck %s --check-prefix=NLL

// Scores [[0, ln 3], [ln 3, 0]]: probabilities [[1/4, 3/4], [3/4, 1/4]].
// Labels [1, 0], weights [2, 1]: losses -1 * ln(3/4) = 0.287682 and
// -2 * ln(3/4) = 0.575364; mean divides by the applied weights 1 + 2.
// ignore_index 0 drops the second sample (mean over weight 1).
// Backward (mean, grad 1): g = 1/3, sample 0: 1/3 * 1 * ([1/4, 3/4] - [0, 1]),
// sample 1: 1/3 * 2 * ([3/4, 1/4] - [1, 0]). Ignoring 0: sample 0 / 1.
// SCE: result 0: tensor<2xf32> = [0.287682, 0.575364]
// SCE: result 1: tensor<f32> = [0.863046]
// SCE: result 2: tensor<f32> = [0.287682]
// SCE: result 3: tensor<f32> = [0.287682]
// SCE: result 4: tensor<2x2xf32> = [-1.38629, -0.287682, -0.287682, -1.38629]
// SCE: result 5: tensor<2x2xf32> = [0.0833333, -0.0833333, -0.166667, 0.166667]
// SCE: result 6: tensor<2x2xf32> = [0.25, -0.25, 0, 0]
func.func @sce() -> (tensor<2xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %s = tidal.constant dense<[[0.0, 1.09861229], [1.09861229, 0.0]]> : tensor<2x2xf32>
  %l = tidal.constant dense<[1, 0]> : tensor<2xi64>
  %w = tidal.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %0, %lp = tidal.softmax_cross_entropy_loss %s, %l, %w {reduction = #tidal<reduction none>} : (tensor<2x2xf32>, tensor<2xi64>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2x2xf32>)
  %1, %lp1 = tidal.softmax_cross_entropy_loss %s, %l, %w {reduction = #tidal<reduction sum>} : (tensor<2x2xf32>, tensor<2xi64>, tensor<2xf32>) -> (tensor<f32>, tensor<2x2xf32>)
  %2, %lp2 = tidal.softmax_cross_entropy_loss %s, %l, %w {reduction = #tidal<reduction mean>} : (tensor<2x2xf32>, tensor<2xi64>, tensor<2xf32>) -> (tensor<f32>, tensor<2x2xf32>)
  %3, %lp3 = tidal.softmax_cross_entropy_loss %s, %l, %w {reduction = #tidal<reduction mean>, ignore_index = 0 : i64} : (tensor<2x2xf32>, tensor<2xi64>, tensor<2xf32>) -> (tensor<f32>, tensor<2x2xf32>)
  %g = tidal.constant dense<1.0> : tensor<f32>
  %4 = tidal.softmax_cross_entropy_loss_backward %g, %lp, %l, %w {reduction = #tidal<reduction mean>} : (tensor<f32>, tensor<2x2xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<2x2xf32>
  %5 = tidal.softmax_cross_entropy_loss_backward %g, %lp, %l, %w {reduction = #tidal<reduction mean>, ignore_index = 0 : i64} : (tensor<f32>, tensor<2x2xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<2x2xf32>
  return %0, %1, %2, %3, %lp, %4, %5 : tensor<2xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// input [[-1, -2], [-3, -4]], targets [1, 0], weights [2, 1]:
// losses 1 * 2 and 2 * 3; mean (2 + 6) / 3. Backward (mean, grad 1):
// -1/3 * w at the target; with none and grads [1, 2]: -g * w.
// Without weights, ignore_index 1 keeps sample 1 only: mean 3.
// NLL: result 0: tensor<2xf32> = [2, 6]
// NLL: result 1: tensor<f32> = [8]
// NLL: result 2: tensor<f32> = [2.66667]
// NLL: result 3: tensor<2x2xf32> = [0, -0.333333, -0.666667, 0]
// NLL: result 4: tensor<2x2xf32> = [0, -1, -4, 0]
// NLL: result 5: tensor<f32> = [3]
func.func @nll() -> (tensor<2xf32>, tensor<f32>, tensor<f32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<f32>) {
  %x = tidal.constant dense<[[-1.0, -2.0], [-3.0, -4.0]]> : tensor<2x2xf32>
  %t = tidal.constant dense<[1, 0]> : tensor<2xi64>
  %w = tidal.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %0 = tidal.nll_loss %x, %t, %w {reduction = #tidal<reduction none>} : (tensor<2x2xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<2xf32>
  %1 = tidal.nll_loss %x, %t, %w {reduction = #tidal<reduction sum>} : (tensor<2x2xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<f32>
  %2 = tidal.nll_loss %x, %t, %w {reduction = #tidal<reduction mean>} : (tensor<2x2xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<f32>
  %g = tidal.constant dense<1.0> : tensor<f32>
  %3 = tidal.nll_loss_backward %g, %t, %w {reduction = #tidal<reduction mean>} : (tensor<f32>, tensor<2xi64>, tensor<2xf32>) -> tensor<2x2xf32>
  %gn = tidal.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %4 = tidal.nll_loss_backward %gn, %t, %w {reduction = #tidal<reduction none>} : (tensor<2xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<2x2xf32>
  %5 = tidal.nll_loss %x, %t {reduction = #tidal<reduction mean>, ignore_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32>
  return %0, %1, %2, %3, %4, %5 : tensor<2xf32>, tensor<f32>, tensor<f32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<f32>
}
