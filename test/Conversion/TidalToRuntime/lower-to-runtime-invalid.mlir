// RUN: not tidal-opt %s -tidal-lower-to-runtime 2>&1 | FileCheck %s --check-prefix=NOPLAN
// RUN: not tidal-opt %s -tidal-plan-memory -tidal-lower-to-runtime 2>&1 | FileCheck %s --check-prefix=NOFUNC
// RUN: not tidal-opt %s -tidal-plan-memory -tidal-lower-to-runtime=step-func=wide 2>&1 | FileCheck %s --check-prefix=TYPE
// NOPLAN: error: tidal-lower-to-runtime needs a memory plan (run tidal-plan-memory first)
// NOFUNC: error: tidal-lower-to-runtime: no function @train_step
// TYPE: error: tensor type 'tensor<4xi128>' has no runtime representation

func.func @wide(%d: tensor<4xf32>, %i: tensor<4xi128>) -> tensor<4xf32> {
  %0 = tidal.gather %d, %i {axis = 0 : i64} : (tensor<4xf32>, tensor<4xi128>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
