// --tidal-verify-memory-plan rejects plans that would corrupt data. Each
// function below is a hand-written plan with one defect.
// RUN: tidal-opt %s -split-input-file -verify-diagnostics -tidal-verify-memory-plan

// Two temporaries live at the same time share bytes.
func.func @overlap(%x: tensor<16xf32> {tidal.offset = 0 : i64}) -> tensor<16xf32>
    attributes {tidal.arena_size = 192 : i64, tidal.result_offsets = array<i64: 128>} {
  %0 = tidal.exp %x {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  // expected-error @+1 {{memory plan: result 0 of tidal.exp (bytes [64, 128), live 2..3) overlaps result 0 of tidal.exp (bytes [64, 128), live 1..3) at position 2}}
  %1 = tidal.exp %x {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  %2 = tidal.add %0, %1 {tidal.offsets = array<i64: 128>} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %2 : tensor<16xf32>
}

// -----

// An in-place result over an operand that is still read later.
func.func @not_dead(%x: tensor<16xf32> {tidal.offset = 0 : i64}) -> (tensor<16xf32>, tensor<16xf32>)
    attributes {tidal.arena_size = 128 : i64, tidal.result_offsets = array<i64: 64, 0>} {
  %0 = tidal.exp %x {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  // expected-error @+1 {{memory plan: result 0 of tidal.relu (bytes [64, 128), live 2..4) overlaps result 0 of tidal.exp (bytes [64, 128), live 1..3) at position 2}}
  %1 = tidal.relu %0 {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  %2 = tidal.neg %0 {tidal.offsets = array<i64: 0>} : tensor<16xf32>
  return %1, %2 : tensor<16xf32>, tensor<16xf32>
}

// -----

// A parameter written over by something other than its own update: its
// value must survive the step.
func.func @param(%w: tensor<16xf32> {tidal.name = "w", tidal.role = #tidal<role param>, tidal.offset = 0 : i64}) -> tensor<16xf32>
    attributes {tidal.arena_size = 64 : i64, tidal.result_offsets = array<i64: 0>} {
  // expected-error @+1 {{memory plan: result 0 of tidal.relu (bytes [0, 64), live 1..2) overlaps argument 'w' (bytes [0, 64), live 0..2) at position 1}}
  %0 = tidal.relu %w {tidal.offsets = array<i64: 0>} : tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// Off the end of the arena.
func.func @too_small(%x: tensor<16xf32> {tidal.offset = 0 : i64}) -> tensor<16xf32>
    attributes {tidal.arena_size = 100 : i64, tidal.result_offsets = array<i64: 64>} {
  // expected-error @+1 {{memory plan: result 0 of tidal.exp at offset 64 (64 bytes) does not fit the arena of 100 bytes}}
  %0 = tidal.exp %x {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @misaligned(%x: tensor<16xf32> {tidal.offset = 0 : i64}) -> tensor<16xf32>
    attributes {tidal.arena_size = 256 : i64, tidal.result_offsets = array<i64: 96>} {
  // expected-error @+1 {{memory plan: result 0 of tidal.exp at offset 96 is not aligned to 64}}
  %0 = tidal.exp %x {tidal.offsets = array<i64: 96>} : tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @view(%x: tensor<16xf32> {tidal.offset = 0 : i64}) -> tensor<4x4xf32>
    attributes {tidal.arena_size = 128 : i64, tidal.result_offsets = array<i64: 64>} {
  // expected-error @+1 {{memory plan: a view must have its operand's offset 0, not 64}}
  %0 = tidal.reshape %x {shape = array<i64: 4, 4>, tidal.offsets = array<i64: 64>} : (tensor<16xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @wrong_result(%x: tensor<16xf32> {tidal.offset = 0 : i64}) -> tensor<16xf32>
    attributes {tidal.arena_size = 128 : i64, tidal.result_offsets = array<i64: 0>} {
  // expected-error @-2 {{memory plan: result 0 is read at offset 0 but computed at 64}}
  %0 = tidal.exp %x {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @unplanned(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @-1 {{memory plan: @unplanned has no tidal.arena_size (run tidal-plan-memory first)}}
  %0 = tidal.exp %x : tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @missing(%x: tensor<16xf32> {tidal.offset = 0 : i64}) -> tensor<16xf32>
    attributes {tidal.arena_size = 128 : i64, tidal.result_offsets = array<i64: 64>} {
  // expected-error @+1 {{memory plan: expected one offset per result in either tidal.offsets or tidal.const_offsets}}
  %0 = tidal.exp %x : tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @constant_in_arena(%x: tensor<16xf32> {tidal.offset = 0 : i64}) -> tensor<16xf32>
    attributes {tidal.arena_size = 128 : i64, tidal.result_offsets = array<i64: 64>} {
  // expected-error @+1 {{memory plan: only constants and views of them live in the constant arena}}
  %0 = tidal.exp %x {tidal.const_offsets = array<i64: 0>} : tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// The arena must fit the device budget that the swaps were fitted to.
func.func @over_budget(%x: tensor<16xf32> {tidal.offset = 0 : i64}) -> tensor<16xf32>
    attributes {tidal.arena_size = 128 : i64, tidal.device_budget = 100 : i64, tidal.result_offsets = array<i64: 64>} {
  // expected-error @-2 {{memory plan: the arena of 128 bytes exceeds the device budget of 100 bytes}}
  %0 = tidal.exp %x {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// A wait shares its copy's bytes.
func.func @wait_moved(%x: tensor<16xf32> {tidal.offset = 0 : i64}) -> tensor<16xf32>
    attributes {tidal.arena_size = 128 : i64, tidal.host_arena_size = 128 : i64, tidal.result_offsets = array<i64: 64>} {
  %h = tidal.offload %x {tidal.offsets = array<i64: 0>} : tensor<16xf32>
  // expected-error @+1 {{memory plan: a wait must have its operand's offset 0, not 64}}
  %hw = tidal.wait %h {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  %d = tidal.prefetch %hw {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  %dw = tidal.wait %d {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  return %dw : tensor<16xf32>
}

// -----

// Offloaded copies live in the host arena, which must hold them.
func.func @host_overflow(%x: tensor<16xf32> {tidal.offset = 0 : i64}) -> tensor<16xf32>
    attributes {tidal.arena_size = 128 : i64, tidal.host_arena_size = 32 : i64, tidal.result_offsets = array<i64: 64>} {
  // expected-error @+1 {{memory plan: result 0 of tidal.offload at offset 0 (64 bytes) does not fit the host arena of 32 bytes}}
  %h = tidal.offload %x {tidal.offsets = array<i64: 0>} : tensor<16xf32>
  %hw = tidal.wait %h {tidal.offsets = array<i64: 0>} : tensor<16xf32>
  %d = tidal.prefetch %hw {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  %dw = tidal.wait %d {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  return %dw : tensor<16xf32>
}

// -----

// The offloaded tensor is read by its copy until the wait: nothing may
// take its bytes before.
func.func @copy_source_reused(%x: tensor<16xf32> {tidal.offset = 0 : i64}) -> tensor<16xf32>
    attributes {tidal.arena_size = 128 : i64, tidal.host_arena_size = 64 : i64, tidal.result_offsets = array<i64: 64>} {
  %a = tidal.exp %x {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  %h = tidal.offload %a {tidal.offsets = array<i64: 0>} : tensor<16xf32>
  // expected-error @+1 {{memory plan: result 0 of tidal.neg (bytes [64, 128), live 3..8) overlaps result 0 of tidal.exp (bytes [64, 128), live 1..4) at position 3}}
  %b = tidal.neg %x {tidal.offsets = array<i64: 64>} : tensor<16xf32>
  %hw = tidal.wait %h {tidal.offsets = array<i64: 0>} : tensor<16xf32>
  %d = tidal.prefetch %hw {tidal.offsets = array<i64: 0>} : tensor<16xf32>
  %dw = tidal.wait %d {tidal.offsets = array<i64: 0>} : tensor<16xf32>
  %r = tidal.add %b, %dw {tidal.offsets = array<i64: 64>} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}
