// The data-parallel collectives in the reference evaluator (OptimizerOps.cpp):
// it runs one rank and takes every rank to hold that rank's values, so an
// all-reduce's result is input * ranks / divisor (a mean: the input); a
// shard and a reduce-scatter are rank 0's zero-padded chunk; an all-gather
// needs every rank's chunk and is refused.
// RUN: tidal-eval %s --function reduce --print | FileCheck %s
// RUN: not tidal-eval %s --function gather 2>&1 | FileCheck %s --check-prefix=GATHER

// CHECK: result 0: tensor<3xf32> = [1, 2, 3]
// CHECK: result 1: tensor<3xf32> = [4, 8, 12]
// CHECK: result 2: tensor<2xf32> = [1, 2]
// CHECK: result 3: tensor<2xf32> = [2, 4]
func.func @reduce() -> (tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>) {
  %x = tidal.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %m = tidal.all_reduce_start %x {bucket = 0 : i64, divisor = 4 : i64, ranks = 4 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  %mw = tidal.all_reduce_wait %m {bucket = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  %s = tidal.all_reduce_start %x {bucket = 1 : i64, divisor = 1 : i64, ranks = 4 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  %sw = tidal.all_reduce_wait %s {bucket = 1 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  %c = tidal.shard %x {ranks = 2 : i64} : (tensor<3xf32>) -> tensor<2xf32>
  %r = tidal.reduce_scatter_start %x {bucket = 2 : i64, divisor = 1 : i64, ranks = 2 : i64} : (tensor<3xf32>) -> tensor<2xf32>
  %rw = tidal.reduce_scatter_wait %r {bucket = 2 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  return %mw, %sw, %c, %rw : tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>
}

// GATHER: error: 'tidal.all_gather_start' op needs every rank's chunk: the reference evaluator runs one rank
func.func @gather() -> tensor<4xf32> {
  %c = tidal.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %g = tidal.all_gather_start %c {bucket = 0 : i64, ranks = 2 : i64} : (tensor<2xf32>) -> tensor<4xf32>
  %w = tidal.all_gather_wait %g {bucket = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %w : tensor<4xf32>
}
