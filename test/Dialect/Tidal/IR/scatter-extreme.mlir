// tidal.scatter_extreme (ScatterElements/ScatterND reduction max and min):
// round trip, and what its verifier rejects.
// RUN: tidal-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @max_rows
// CHECK: tidal.scatter_extreme %arg0, %arg1, %arg2 {axis = 0 : i64, largest = true} : (tensor<5x3xf32>, tensor<4xi64>, tensor<4x3xf32>) -> tensor<5x3xf32>
func.func @max_rows(%d: tensor<5x3xf32>, %i: tensor<4xi64>, %u: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %0 = tidal.scatter_extreme %d, %i, %u {axis = 0 : i64, largest = true} : (tensor<5x3xf32>, tensor<4xi64>, tensor<4x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// CHECK-LABEL: func.func @min_axis1
// CHECK: tidal.scatter_extreme {{.*}} {axis = 1 : i64, largest = false} : (tensor<2x5xf32>, tensor<3xi32>, tensor<2x3xf32>) -> tensor<2x5xf32>
func.func @min_axis1(%d: tensor<2x5xf32>, %i: tensor<3xi32>, %u: tensor<2x3xf32>) -> tensor<2x5xf32> {
  %0 = tidal.scatter_extreme %d, %i, %u {axis = 1 : i64, largest = false} : (tensor<2x5xf32>, tensor<3xi32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @bad_updates(%d: tensor<5x3xf32>, %i: tensor<4xi64>, %u: tensor<4x2xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'tidal.scatter_extreme' op updates must have the gathered shape [4, 3], got 'tensor<4x2xf32>'}}
  %0 = tidal.scatter_extreme %d, %i, %u {axis = 0 : i64, largest = true} : (tensor<5x3xf32>, tensor<4xi64>, tensor<4x2xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @bad_axis(%d: tensor<5xf32>, %i: tensor<4xi64>, %u: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'tidal.scatter_extreme' op axis 1 out of range for rank 1}}
  %0 = tidal.scatter_extreme %d, %i, %u {axis = 1 : i64, largest = true} : (tensor<5xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @mixed_types(%d: tensor<5xf32>, %i: tensor<4xi64>, %u: tensor<4xf64>) -> tensor<5xf32> {
  // expected-error @+1 {{'tidal.scatter_extreme' op updates' element type differs from the data's}}
  %0 = tidal.scatter_extreme %d, %i, %u {axis = 0 : i64, largest = true} : (tensor<5xf32>, tensor<4xi64>, tensor<4xf64>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
