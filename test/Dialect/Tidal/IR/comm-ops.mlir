// The all-reduce ops round-trip; a wait reads all of one start's results, in
// order, of its own bucket; buckets hold float32 tensors; the divisor is 1
// or the number of ranks.
// RUN: tidal-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @bucket
// CHECK: %[[S:.*]]:2 = tidal.all_reduce_start %arg0, %arg1 {bucket = 0 : i64, divisor = 4 : i64, ranks = 4 : i64} : (tensor<4xf32>, tensor<2x3xf32>) -> (tensor<4xf32>, tensor<2x3xf32>)
// CHECK: %[[W:.*]]:2 = tidal.all_reduce_wait %[[S]]#0, %[[S]]#1 {bucket = 0 : i64} : (tensor<4xf32>, tensor<2x3xf32>) -> (tensor<4xf32>, tensor<2x3xf32>)
// CHECK: return %[[W]]#0, %[[W]]#1
func.func @bucket(%a: tensor<4xf32>, %b: tensor<2x3xf32>) -> (tensor<4xf32>, tensor<2x3xf32>) {
  %s:2 = tidal.all_reduce_start %a, %b {bucket = 0 : i64, divisor = 4 : i64, ranks = 4 : i64} : (tensor<4xf32>, tensor<2x3xf32>) -> (tensor<4xf32>, tensor<2x3xf32>)
  %w:2 = tidal.all_reduce_wait %s#0, %s#1 {bucket = 0 : i64} : (tensor<4xf32>, tensor<2x3xf32>) -> (tensor<4xf32>, tensor<2x3xf32>)
  return %w#0, %w#1 : tensor<4xf32>, tensor<2x3xf32>
}

// -----

func.func @wait_for_part(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %s:2 = tidal.all_reduce_start %a, %b {bucket = 0 : i64, divisor = 1 : i64, ranks = 2 : i64} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  // expected-error @+1 {{'tidal.all_reduce_wait' op waits for one all_reduce_start: its operands must be all the results of one, in order}}
  %w = tidal.all_reduce_wait %s#1 {bucket = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @wait_for_argument(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tidal.all_reduce_wait' op waits for one all_reduce_start}}
  %w = tidal.all_reduce_wait %a {bucket = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @other_bucket(%a: tensor<4xf32>) -> tensor<4xf32> {
  %s = tidal.all_reduce_start %a {bucket = 1 : i64, divisor = 2 : i64, ranks = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'tidal.all_reduce_wait' op waits for bucket 0 but its operands come from bucket 1}}
  %w = tidal.all_reduce_wait %s {bucket = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

func.func @not_f32(%a: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{'tidal.all_reduce_start' op reduces float32 tensors only, got 'tensor<4xf64>'}}
  %s = tidal.all_reduce_start %a {bucket = 0 : i64, divisor = 2 : i64, ranks = 2 : i64} : (tensor<4xf64>) -> tensor<4xf64>
  return %s : tensor<4xf64>
}

// -----

func.func @bad_divisor(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tidal.all_reduce_start' op divisor must be 1 (a sum) or the number of ranks (a mean), got 3 for 4 ranks}}
  %s = tidal.all_reduce_start %a {bucket = 0 : i64, divisor = 3 : i64, ranks = 4 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @no_ranks(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tidal.all_reduce_start' op attribute 'ranks' failed to satisfy constraint}}
  %s = tidal.all_reduce_start %a {bucket = 0 : i64, divisor = 1 : i64, ranks = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @gather
// CHECK: tidal.shard %arg0 {ranks = 2 : i64} : (tensor<2x3xf32>) -> tensor<3xf32>
// CHECK: tidal.all_gather_start {{.*}} {bucket = 0 : i64, ranks = 2 : i64} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK: tidal.all_gather_wait {{.*}} {bucket = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @gather(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = tidal.shard %a {ranks = 2 : i64} : (tensor<2x3xf32>) -> tensor<3xf32>
  %s = tidal.all_gather_start %c {bucket = 0 : i64, ranks = 2 : i64} : (tensor<3xf32>) -> tensor<2x3xf32>
  %w = tidal.all_gather_wait %s {bucket = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %w : tensor<2x3xf32>
}

// -----

func.func @bad_chunk(%a: tensor<7xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'tidal.shard' op result must be 1-D with ceil(7 / 2) = 4 elements, got 'tensor<2xf32>'}}
  %c = tidal.shard %a {ranks = 2 : i64} : (tensor<7xf32>) -> tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

func.func @bad_gather(%c: tensor<3xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'tidal.all_gather_start' op operand 'tensor<3xf32>' is not a chunk of 'tensor<8xf32>' over 2 ranks}}
  %s = tidal.all_gather_start %c {bucket = 0 : i64, ranks = 2 : i64} : (tensor<3xf32>) -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

func.func @gather_wait_for_reduce(%a: tensor<4xf32>) -> tensor<4xf32> {
  %s = tidal.all_reduce_start %a {bucket = 0 : i64, divisor = 2 : i64, ranks = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'tidal.all_gather_wait' op waits for one all_gather_start}}
  %w = tidal.all_gather_wait %s {bucket = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @scatter
// CHECK: tidal.reduce_scatter_start %arg0 {bucket = 0 : i64, divisor = 2 : i64, ranks = 2 : i64} : (tensor<2x3xf32>) -> tensor<3xf32>
// CHECK: tidal.reduce_scatter_wait {{.*}} {bucket = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
func.func @scatter(%a: tensor<2x3xf32>) -> tensor<3xf32> {
  %s = tidal.reduce_scatter_start %a {bucket = 0 : i64, divisor = 2 : i64, ranks = 2 : i64} : (tensor<2x3xf32>) -> tensor<3xf32>
  %w = tidal.reduce_scatter_wait %s {bucket = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %w : tensor<3xf32>
}

// -----

func.func @bad_scatter(%a: tensor<7xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'tidal.reduce_scatter_start' op result 'tensor<3xf32>' is not a chunk of 'tensor<7xf32>' over 2 ranks}}
  %s = tidal.reduce_scatter_start %a {bucket = 0 : i64, divisor = 2 : i64, ranks = 2 : i64} : (tensor<7xf32>) -> tensor<3xf32>
  return %s : tensor<3xf32>
}
