//===- TidalCommOps.td - collectives of data-parallel training -*- tablegen -*-===//
//
// The gradient all-reduce that `--tidal-insert-all-reduce` adds to a
// training step compiled for several processes (`tidalc --distributed`).
// A bucket of gradients is started as soon as its last gradient is
// computed and waited for just before the first optimizer update that
// reads one of them, so that the reduction overlaps the rest of the
// backward pass. Both ops write their results over their operands when the
// memory plan allows: a bucket's gradients stay live from the start to the
// wait, and the plan counts them there.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALCOMMOPS_TD
#define TIDAL_DIALECT_TIDAL_IR_TIDALCOMMOPS_TD

// Not Pure: every rank must run the same collectives in the same order, so
// no pass may erase, merge, duplicate (recompute) or reorder one against
// another.
class Tidal_CollectiveOp<string mnemonic>
    : Tidal_InferOp<mnemonic, [DeclareOpInterfaceMethods<
          Tidal_InPlaceOpInterface, ["getInPlaceOperands"]>]> {
  let results = (outs Variadic<Tidal_FloatTensor>:$outputs);
  let hasVerifier = 1;
}

def Tidal_AllReduceStartOp : Tidal_CollectiveOp<"all_reduce_start"> {
  let summary = "start summing a bucket of float32 tensors over the ranks";
  let description = [{
    Starts, on the communicator's own thread, the all-reduce of `inputs` as
    one message: each element of result i becomes the sum of input i over
    the `ranks` processes of the run, added in rank order (the same bits on
    every rank and in every run), divided by `divisor` (`ranks` for a mean
    loss: the gradient of the global batch's mean). Results may be read
    only through the `tidal.all_reduce_wait` of the same `bucket`; `bucket`
    numbers the step's buckets from 0 in the order they start. The
    reference evaluator treats every rank as holding the same values
    (result = input * ranks / divisor).
  }];
  let arguments = (ins Variadic<Tidal_FloatTensor>:$inputs,
                       ConfinedAttr<I64Attr, [IntMinValue<0>]>:$bucket,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$divisor,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$ranks);
}

def Tidal_AllReduceWaitOp : Tidal_CollectiveOp<"all_reduce_wait"> {
  let summary = "wait for a bucket's all-reduce; its results are the sums";
  let description = [{
    Waits for the `tidal.all_reduce_start` whose results are `inputs` (all
    of them, in order). The results are the same bytes, now reduced: the
    optimizer updates of the bucket read them.
  }];
  let arguments = (ins Variadic<Tidal_FloatTensor>:$inputs,
                       ConfinedAttr<I64Attr, [IntMinValue<0>]>:$bucket);
}

//===----------------------------------------------------------------------===//
// A sharded optimizer (ZeRO stage 1, tidalc --shard optimizer)
//===----------------------------------------------------------------------===//

def Tidal_ShardOp : Tidal_Op<"shard", [Pure]> {
  let summary = "this rank's chunk of a tensor";
  let description = [{
    The flattened `input` of n elements in `ranks` chunks of c =
    ceil(n / ranks): rank r's result holds elements [r * c, (r + 1) * c),
    the last chunk padded with zeros. The result is 1-D of c elements. The
    reference evaluator is rank 0.
  }];
  let arguments = (ins Tidal_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$ranks);
  let results = (outs Tidal_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type($input, results)";
  let hasVerifier = 1;
}

def Tidal_AllGatherStartOp : Tidal_Op<"all_gather_start"> {
  let summary = "start assembling tensors from every rank's chunk";
  let description = [{
    Starts, on the communicator's thread, the all-gather of `inputs` (each
    rank's chunk, as `tidal.shard` takes it): result i receives every
    rank's input i in rank order, cut at its own size (ceil(n / ranks) = the
    chunk's). Results may be read only through the `tidal.all_gather_wait`
    of the same `bucket`. Not Pure, as every collective. The reference
    evaluator gives each rank's chunk rank 0's values.
  }];
  let arguments = (ins Variadic<Tidal_FloatTensor>:$inputs,
                       ConfinedAttr<I64Attr, [IntMinValue<0>]>:$bucket,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$ranks);
  let results = (outs Variadic<Tidal_FloatTensor>:$outputs);
  let assemblyFormat =
      "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

def Tidal_AllGatherWaitOp : Tidal_CollectiveOp<"all_gather_wait"> {
  let summary = "wait for a bucket's all-gather; its results are the tensors";
  let description = [{
    Waits for the `tidal.all_gather_start` whose results are `inputs` (all
    of them, in order).
  }];
  let arguments = (ins Variadic<Tidal_FloatTensor>:$inputs,
                       ConfinedAttr<I64Attr, [IntMinValue<0>]>:$bucket);
}

//===----------------------------------------------------------------------===//
// Sharded gradients (ZeRO stage 2, tidalc --shard gradients)
//===----------------------------------------------------------------------===//

def Tidal_ReduceScatterStartOp : Tidal_Op<"reduce_scatter_start"> {
  let summary = "start summing a bucket over the ranks, keeping this rank's chunks";
  let description = [{
    Starts, on the communicator's thread, the reduce-scatter of `inputs`:
    result i receives this rank's chunk (as `tidal.shard` takes it) of the
    rank-order sum of input i over the ranks, divided by `divisor`. Half
    the traffic of an all-reduce. Results may be read only through the
    `tidal.reduce_scatter_wait` of the same `bucket`. The reference
    evaluator is rank 0 with every rank holding the same values.
  }];
  let arguments = (ins Variadic<Tidal_FloatTensor>:$inputs,
                       ConfinedAttr<I64Attr, [IntMinValue<0>]>:$bucket,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$divisor,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$ranks);
  let results = (outs Variadic<Tidal_FloatTensor>:$outputs);
  let assemblyFormat =
      "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

def Tidal_ReduceScatterWaitOp : Tidal_CollectiveOp<"reduce_scatter_wait"> {
  let summary = "wait for a bucket's reduce-scatter; its results are the chunks";
  let description = [{
    Waits for the `tidal.reduce_scatter_start` whose results are `inputs`
    (all of them, in order).
  }];
  let arguments = (ins Variadic<Tidal_FloatTensor>:$inputs,
                       ConfinedAttr<I64Attr, [IntMinValue<0>]>:$bucket);
}

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALCOMMOPS_TD
