// Training-mode dropout draws its mask from --seed: the same seed gives the
// same mask, kept elements are scaled by 1 / (1 - ratio), and about `ratio`
// of them are dropped.
// RUN: rm -rf %t && mkdir -p %t
// RUN: tidal-eval %s --seed 1 --output-dir %t/a
// RUN: tidal-eval %s --seed 1 --output-dir %t/b
// RUN: tidal-eval %s --seed 2 --output-dir %t/c
// RUN: %python -c "import numpy as np; L = lambda d, i: np.load('%t/' + d + '/result_%%d.npy' %% i); y, m = L('a', 0), L('a', 1); print('same', (L('b', 0) == y).all() and (L('b', 1) == m).all()); print('differs', (L('c', 1) != m).any()); print('scaled', np.array_equal(y, np.where(m, 4.0, 0.0).astype(np.float32))); print('rate', abs((~m).mean() - 0.75) < 0.05)" | FileCheck %s
// CHECK: same True
// CHECK-NEXT: differs True
// CHECK-NEXT: scaled True
// CHECK-NEXT: rate True

func.func @main() -> (tensor<1000xf32>, tensor<1000xi1>) {
  %x = tidal.constant dense<1.0> : tensor<1000xf32>
  %y, %m = tidal.dropout %x {ratio = 0.75 : f32, training = true} : (tensor<1000xf32>) -> (tensor<1000xf32>, tensor<1000xi1>)
  return %y, %m : tensor<1000xf32>, tensor<1000xi1>
}
