//===- TidalMemoryOps.td - swapping between device and host ---*- tablegen -*-===//
//
// The ops that `--tidal-schedule-swaps` inserts to move a tensor out of the
// device arena while it is idle and back before its next use. Copies are
// asynchronous: `offload` and `prefetch` start a copy on a copy stream,
// `wait` makes the compute stream wait for it. Planning decisions are these
// ops and their positions in the schedule, so tests can assert them.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALMEMORYOPS_TD
#define TIDAL_DIALECT_TIDAL_IR_TIDALMEMORYOPS_TD

// Not Pure: a copy is ordered with respect to the kernels around it, and no
// pass may merge, hoist or erase one.
class Tidal_CopyOp<string mnemonic> : Tidal_Op<mnemonic,
    [SameOperandsAndResultType, InferTypeOpInterface]> {
  let arguments = (ins Tidal_Tensor:$input);
  let results = (outs Tidal_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Tidal_OffloadOp : Tidal_CopyOp<"offload"> {
  let summary = "start copying a device tensor to host memory";
  let description = [{
    Starts an asynchronous copy of `input` (in the device arena) into a
    buffer of the host arena, on the device-to-host copy stream, after the
    compute stream's work so far. The result is the host copy; it may be
    used only through `tidal.wait`, and `input`'s device bytes stay live
    until that wait.
  }];
}

def Tidal_PrefetchOp : Tidal_CopyOp<"prefetch"> {
  let summary = "start copying a host tensor back into device memory";
  let description = [{
    Starts an asynchronous copy of `input` (a waited host copy) into a
    buffer of the device arena, on the host-to-device copy stream. The
    result is the device copy; kernels use it only through `tidal.wait`.
  }];
}

def Tidal_WaitOp : Tidal_CopyOp<"wait"> {
  let summary = "wait for a copy to finish; its result is the copied tensor";
  let description = [{
    The compute stream waits for the copy that produced `input` (an
    `offload` or a `prefetch`). The result is the same bytes, now complete:
    a waited prefetch is what the kernels after it read, and a waited
    offload ends the life of the offloaded device tensor.
  }];
  let hasVerifier = 1;
}

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALMEMORYOPS_TD
