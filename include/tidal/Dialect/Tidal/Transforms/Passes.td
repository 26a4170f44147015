//===- Passes.td - tidal dialect passes -----------------------*- tablegen -*-===//
//
// The passes that turn an imported forward graph into a training step.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_TRANSFORMS_PASSES_TD
#define TIDAL_DIALECT_TIDAL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TidalAddLossPass : Pass<"tidal-add-loss", "mlir::ModuleOp"> {
  let summary = "append a loss to a forward model's first output";
  let description = [{
    For a model whose first output is a prediction (SPEC section 1): adds a
    graph input `label` and makes the loss the function's first result, with
    role `loss`. `cross-entropy` takes int64 class indices `[N]` and averages
    over the batch (tidal.softmax_cross_entropy_loss); `mse` takes a target
    of the prediction's type and averages over all elements. Other outputs
    remain as results with role `output`.
  }];
  let options = [
    Option<"loss", "loss", "std::string", "\"cross-entropy\"",
           "cross-entropy or mse">,
    Option<"funcName", "func-name", "std::string", "\"main\"",
           "the forward function">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

def TidalAutodiffPass : Pass<"tidal-autodiff", "mlir::ModuleOp"> {
  let summary = "build the backward graph (reverse-mode automatic differentiation)";
  let description = [{
    Expands every `tidal.gradient` op into the backward graph of its scalar
    `y` for its `xs`. When the function has none (a forward model with a
    loss), differentiates its first result, which must be a scalar, for every
    argument of role `param`, and returns the gradients as results of role
    `gradient` named after their parameters. Running statistics that
    `tidal.batch_norm_training` updates are returned as results of role
    `state`; other non-loss results are dropped. The function is renamed
    `train_step`.

    Gradients of values used more than once are summed; operands that are
    not differentiable (labels, indices, masks) or do not depend on a
    parameter get none.
  }];
  let options = [
    Option<"funcName", "func-name", "std::string", "\"main\"",
           "the function to differentiate">,
  ];
  let statistics = [
    Statistic<"numBackwardOps", "backward-ops", "ops added for the backward pass">,
    Statistic<"numGradients", "gradients", "parameters that get a gradient">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

def TidalInsertOptimizerPass : Pass<"tidal-insert-optimizer", "mlir::ModuleOp"> {
  let summary = "replace gradient results by optimizer updates";
  let description = [{
    For every result of role `gradient` of `train_step`, adds the update of
    the parameter of the same name with torch.optim's semantics
    (docs/optimizers.md) and returns the new parameter (role `param`) in
    place of the gradient. Optimizer state becomes arguments and results of
    role `optimizer_state`, named `<param>.momentum_buffer` (SGD with
    momentum), `<param>.exp_avg` and `<param>.exp_avg_sq` (Adam, AdamW) and
    `optimizer.step` (Adam, AdamW; int64, the number of steps taken).
    A negative `lr` or `weight-decay` selects the optimizer's default.
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", "\"sgd\"",
           "sgd, adam or adamw">,
    Option<"lr", "lr", "double", "-1.0",
           "learning rate (default: 0.01 for sgd, 0.001 for adam/adamw)">,
    Option<"momentum", "momentum", "double", "0.0", "SGD momentum">,
    Option<"dampening", "dampening", "double", "0.0", "SGD dampening">,
    Option<"nesterov", "nesterov", "bool", "false", "SGD Nesterov momentum">,
    Option<"weightDecay", "weight-decay", "double", "-1.0",
           "L2 penalty (adam, sgd) or decoupled decay (adamw; default 0.01)">,
    Option<"beta1", "beta1", "double", "0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", "0.999", "Adam beta2">,
    Option<"eps", "eps", "double", "1.0e-8", "Adam epsilon">,
    Option<"funcName", "func-name", "std::string", "\"train_step\"",
           "the training-step function">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

include "tidal/Dialect/Tidal/Transforms/DistributedPasses.td"

def TidalAddPredictPass : Pass<"tidal-add-predict", "mlir::ModuleOp"> {
  let summary = "keep an eval-mode copy of the forward function for inference";
  let description = [{
    Clones the forward function (before a loss is added) into a function
    named `predict` in evaluation mode, as PyTorch's `model.eval()`:
    `tidal.batch_norm_training` becomes `tidal.batch_norm_inference` on the
    running statistics (which the function then returns unchanged), and
    `tidal.dropout` passes its input through. Its results keep role `output`
    (or `state`); the generated executable uses it to report held-out loss
    and accuracy.
  }];
  let options = [
    Option<"funcName", "func-name", "std::string", "\"main\"",
           "the forward function">,
    Option<"predictName", "predict-name", "std::string", "\"predict\"",
           "the name of the eval-mode copy">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

def TidalFuseGeluPass : Pass<"tidal-fuse-gelu", "mlir::ModuleOp"> {
  let summary = "form tidal.gelu from the exported erf GELU chain";
  let description = [{
    ONNX before opset 20 has no Gelu, so PyTorch exports `nn.GELU()` as
    `Mul(Mul(x, Add(Erf(Div(x, sqrt(2))), 1)), 0.5)` (any operand order of
    the commutative ops, `Mul(x, 1/sqrt(2))` for the division, constants as
    scalars). This pass replaces each such chain whose intermediate values
    have no other use by one `tidal.gelu`, whose backward
    (`tidal.gelu_backward`) keeps only `x` for the backward pass instead of
    four intermediate tensors. Runs first in the training pipeline.
  }];
  let statistics = [
    Statistic<"numFused", "fused", "GELU chains replaced by tidal.gelu">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

def TidalBlockChannelsPass : Pass<"tidal-block-channels", "mlir::ModuleOp"> {
  let summary = "keep conv -> batch norm -> element-wise activations channel-blocked";
  let description = [{
    Marks the activations that flow between convolutions, batch
    normalizations and the element-wise ops around them as channel-blocked
    (`tidal.blocked = array<i64: result indices>` on the defining op): the
    cpu runtime keeps them in oneDNN's nChw16c (AVX-512) or nChw8c (AVX2)
    layout, so a convolution reads and writes them without reorders and a
    batch normalization runs oneDNN's vectorized kernels instead of its
    generic NCHW loop.

    Values that an element-wise op on same-shaped tensors (broadcast
    scalars aside), a copy, or a concat or split along the channels reads
    and writes must share one layout, so the pass works on the groups they
    connect. A group is blocked when every value in it is a float32 rank-4
    tensor whose channel count (dim 1) is a multiple of 16 (so blocked and
    dense bytes are the same size) and every other op that defines or reads
    one of its values takes a blocked tensor there: the data operands and
    results of `conv`, `conv_backward_data`, `conv_backward_weights`,
    `batch_norm_training`, `batch_norm_inference`, `batch_norm_backward`,
    `max_pool`, `max_pool_backward`, `average_pool` and
    `average_pool_backward`, the input of `global_average_pool` and the
    result of a `broadcast_to` from `[N, C, 1...]`.
    Function arguments and results stay dense. Semantics do not change; the
    reference evaluator ignores the mark. Runs on the cpu and sim targets
    (tidalc `--block-channels`).
  }];
  let statistics = [
    Statistic<"numBlocked", "blocked-values",
              "values kept channel-blocked">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

def TidalFuseEpiloguesPass : Pass<"tidal-fuse-epilogues", "mlir::ModuleOp"> {
  let summary = "fold a ReLU or clip into the batch normalization that feeds it";
  let description = [{
    A `tidal.relu` or `tidal.clip` (ReLU6) whose operand is the output of a
    `batch_norm_training` or `batch_norm_inference` that nothing else reads
    is folded into the normalization: the op gets `relu = true` (its output
    is then `max(y, 0)`) or the clip's bounds as `clip_min`/`clip_max`, the
    activation's users read that output, and the activation is gone. The
    cpu runtime applies it in the normalization's element-wise pass, so it
    costs no kernel call and no pass over memory of its own, and the
    normalization's raw output is never stored. `relu_backward` and
    `clip_backward` read the activation's output, so the backward pass is
    unchanged.

    Runs after autodiff (the gradient rules do not take a fused op), first
    in the memory pipeline, on the cpu target (tidalc `--fuse-epilogues`;
    the sim and cuda targets keep the device's unfused graph).
    Values are those of the unfused ops bit for bit.
  }];
  let statistics = [
    Statistic<"numFused", "fused-activations",
              "ReLUs and clips folded into their producer">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

def TidalFuseElementwisePass
    : Pass<"tidal-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "compute chains of float32 element-wise ops in one kernel call";
  let description = [{
    Groups float32 element-wise ops (add, sub, mul, div; neg, relu, sigmoid,
    tanh, sqrt, erf, exp, log, leaky_relu, gelu; the backward ops of relu,
    leaky_relu, sigmoid, tanh, erf, gelu) whose results have one type and
    one layout into `tidal.fused_elementwise` ops. An op joins the group of
    an operand's producer when the fused op, placed where the op is, still
    comes before every other reader of the group's values (so no value is
    read before it is computed) and, where other ops run between the group
    and the op, the inputs that die inside the group are no more bytes than
    the group's values the op alone reads (moving a group later must not
    keep more bytes live: a gradient summed over an RNN's time steps stays
    a chain of adds); binary operands may be one-element tensors
    (broadcast scalars). A group's values that ops outside it (or
    the function's return) read become its results; the others are never
    stored. Groups of one op are left alone; a group stops growing at the
    runtime's limits (32 steps, 16 inputs, 8 results).

    The cpu runtime runs a fused op as one parallel loop over cache-sized
    tiles: one parallel region and one pass over memory per chain instead
    of one per op, bit for bit the unfused ops' values (the same vector
    loops).

    Runs after autodiff and `tidal-block-channels` (layouts are known),
    before `tidal-schedule`, on the cpu target (tidalc
    `--fuse-elementwise`; the sim and cuda targets keep the unfused graph).
  }];
  let statistics = [
    Statistic<"numGroups", "fused-groups", "fused_elementwise ops created">,
    Statistic<"numFusedOps", "fused-ops", "element-wise ops fused">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

def TidalSchedulePass : Pass<"tidal-schedule", "mlir::ModuleOp"> {
  let summary = "order each function's ops to keep the bytes live low";
  let description = [{
    Reorders the ops of every function into a topological order that keeps
    the memory live at each point low; the block order is the schedule that
    liveness, the memory plan and code generation follow.

    Strategy `memory` is a list scheduler: among the ops whose operands are
    ready, it runs first any op that frees more bytes than it allocates (an
    op whose operands die at it, counting results written in place, e.g. an
    optimizer update once the last reader of its parameter has run, a
    gradient accumulation, an in-place activation backward), and otherwise
    the ready op that came first in program order. So gradients and the
    activations saved for them die as early as the dependencies allow and
    each parameter is updated in place as soon as its gradient is complete.
    Strategy `program` keeps the order as written.

    Dropout ops are numbered (`stream`) before reordering so that their
    masks do not depend on the schedule. Sets `tidal.schedule` on each
    function to the strategy used.
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", "\"memory\"",
           "memory (free-early list scheduling) or program (as written)">,
  ];
  let statistics = [
    Statistic<"numMoved", "moved", "ops whose position changed">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

def TidalPlacePass : Pass<"tidal-place", "mlir::ModuleOp"> {
  let summary = "place ops on the device or the host CPU, and tensors in "
                "device or host memory";
  let description = [{
    Chooses, for a scheduled function of a device target, which ops run on
    the host CPU (`tidal.device = "host"`) and which arguments and results
    live in the host arena (`tidal.space = "host"`), and inserts the copies
    that this needs: a device tensor that a host op reads is offloaded
    after its definition (`tidal.offload`) and waited for just before the
    host op; a host tensor that a device op reads is prefetched after its
    definition and waited for just before its first device use; a value
    returned in place of an argument goes back to the argument's memory.
    An argument whose every use is on the host lives in the host arena.

    `mode`:
    - `device`: nothing moves (the default of targets without placement);
    - `host`: every op runs on the host; the device holds nothing;
    - `optimizer`: ZeRO-Offload: every update with optimizer state
      (momentum, Adam's moments, Adagrad's accumulator) runs on the host,
      and that state lives in the host arena, so it never takes device
      memory; each step copies the gradient and the parameter to the host
      and the updated parameter back;
    - `stream`: as `optimizer`, for every update (plain SGD too), and the
      parameters it updates live in the host arena: device ops read copies
      prefetched before them (early enough, by the cost model, to hide the
      copy), and the update writes the host bytes in place, so nothing
      comes back. tidal-schedule-swaps drops such a copy across a peak and
      prefetches it again ("refetch"). The device holds no parameter for
      the whole step;
    - `auto` (with a `budget`): everything on the device if the step fits
      that way without moving a tensor; otherwise the fitted host plans
      (`optimizer`, and `stream` when `optimizer` does not fit without
      moving tensors) compete with the fitted all-device one, and so do
      per-parameter plans: only the k largest parameters' updates and
      state on the host, and those parameters also streamed (k = 1, 2, 4,
      ... below all of them; graphs up to
      `large-graph-ops` ops, where a host plan fits or the all-device one
      moved tensors). A host plan is taken if only it fits, or if
      predicted at least 5% faster; between host plans the faster wins.
      With `planner=milp`, one MILP first chooses the swaps,
      recomputations, per optimizer update host update or streamed
      parameter, and with `host-layers-by-cost` per kernel host or device,
      together (each placement option measured on a copy of the
      step with it applied, then re-priced against the MILP's last choice,
      at most 8 rounds within `milp-time-limit`, starting from the greedy
      plan's placements); the greedy planner's plan (the trials above,
      fitted greedily) is also the fallback, the faster predicted step is
      kept, and the function gets `tidal.place_planner =
      {kept, milp_us, greedy_us}`; if neither fits, the trials run with
      the MILP. If none fits and `host-layers` is on,
      the device kernel at the streamed plan's floor moves to the host, one
      per trial, until a plan fits (the best set kept; at most 48, stopping
      after 16 that do not lower the floor). If none fits, the one whose
      steps reach the smallest budget (tidal-schedule-swaps then states it).
      With `host-layers-by-cost`, where the chosen plan offloads or
      recomputes a device kernel's result, that kernel (alone, then with
      its result's readers) is tried on the host, a fitted trial each (at
      most 12, stopping after 4 in a row not taken), each step kept if
      predicted 1% faster; the layers stay if
      the step is predicted at least 5% faster than without them, recorded
      as `tidal.host_layers_by_cost = {layers, before_us, after_us}`.
      The plans
      are fitted trials of
      tidal-schedule-swaps's engine with the `swap`, `recompute` and
      `planner` options (the all-device one is ruled out at once when the
      persistent arguments alone exceed the budget); the chosen one is
      kept, so tidal-schedule-swaps then finds nothing to do. On a graph
      of more than `large-graph-ops` ops a fitted all-device plan is taken
      without the second trial.

    A host op is moved later in the schedule, past device kernels that do
    not use its results, until those kernels' predicted time (cost model)
    hides the copies of its device operands, so the compute stream does not
    stall on them.
  }];
  let options = [
    Option<"mode", "mode", "std::string", "\"auto\"",
           "auto, device, host, optimizer or stream">,
    Option<"budget", "budget", "int64_t", "0",
           "device memory budget in bytes, for auto (0: no limit)">,
    Option<"hostLayers", "host-layers", "bool", "true",
           "auto: when no plan fits even with streamed parameters, move the "
           "device kernel at the floor's peak to the host, one after "
           "another, until one fits">,
    Option<"hostLayersByCost", "host-layers-by-cost", "bool", "true",
           "auto: where the chosen plan swaps or recomputes a kernel's "
           "result, or copies it out for a host op, try that kernel (alone "
           "and with its readers) on the host; keep what the cost model "
           "predicts faster (at least 5% over the whole step)">,
    Option<"sharedCpu", "shared-cpu", "bool", "false",
           "the device is the host's own CPU and runs one kernel at a time "
           "with host ops (the sim target): the predicted step does not "
           "overlap host ops with device kernels, and prices them alike">,
    Option<"swap", "swap", "bool", "true",
           "auto: whether the budget may be fitted with swaps">,
    Option<"recompute", "recompute", "bool", "false",
           "auto: whether the budget may be fitted with recomputation">,
    Option<"planner", "planner", "std::string", "\"greedy\"",
           "auto mode: greedy (the trials, fitted greedily), milp (one MILP "
           "with placement, the greedy choice as fallback) or auto (milp "
           "on functions of at most 200 ops)">,
    Option<"largeGraphOps", "large-graph-ops", "int64_t", "8000",
           "auto: on graphs of more ops, a fitted all-device plan is taken "
           "without trying the host optimizer (a second trial doubles "
           "compile time and memory)">,
    Option<"linkGbps", "link-gbps", "double", "16.0",
           "host<->device copy bandwidth, GB/s">,
    Option<"alignment", "alignment", "int64_t", "64",
           "the memory plan's alignment">,
    Option<"function", "function", "std::string", "\"\"",
           "only this function (empty: every function)">,
    Option<"gflops", "gflops", "double", "0.0",
           "the device's GFLOP/s for the cost model (0: default)">,
    Option<"gbytesPerS", "gbytes-per-s", "double", "0.0",
           "its memory bandwidth, GB/s (0: default)">,
    Option<"opOverheadUs", "op-overhead-us", "double", "-1.0",
           "its cost per kernel call, us (negative: default)">,
    Option<"profile", "profile", "std::string", "\"\"",
           "a machine profile (tidal-calibrate) whose host section prices "
           "the ops, its measured op times (host.op_us) included; the "
           "three options above, where given, override its figures">,
  ];
  let statistics = [
    Statistic<"numHostOps", "host-ops", "ops placed on the host">,
    Statistic<"numHostArgs", "host-args", "arguments placed in host memory">,
    Statistic<"bytesHostArgs", "host-arg-bytes",
              "bytes of arguments placed in host memory">,
    Statistic<"numCopies", "copies", "offloads and prefetches inserted">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

def TidalScheduleSwapsPass : Pass<"tidal-schedule-swaps", "mlir::ModuleOp"> {
  let summary = "offload idle tensors to host memory (and, with recompute, "
                "recompute them) to fit a device budget";
  let description = [{
    Makes each function's device arena fit `budget` bytes by freeing the
    bytes of tensors while they are idle: a tensor that is not used between
    two uses (typically an activation saved by the forward pass for the
    backward pass) is copied to host memory after the first
    (`tidal.offload`, waited for before the peak with `tidal.wait`) and back
    before the second (`tidal.prefetch`, started early enough for the copy
    to hide behind the kernels in between, by the cost model and
    `link-gbps`, and waited for just before the use).

    With `recompute`, the op that defines such a tensor may instead be
    cloned just before the second use (as tidal-recompute does), whichever
    the cost model predicts cheaper: a swap costs the part of its copies
    that the kernels around them cannot hide (earlier copies' link time
    counted), a recomputation the clones' time.

    A device copy of a host-resident argument (a parameter that
    tidal-place streams from the host) is instead dropped after the first
    use and prefetched again from the host before the second ("refetch"),
    as long as nothing overwrites the host bytes in between, together with
    its other idle gaps near the peak's level; its cost is those
    prefetches' stalls. Refetches are placement's own copies:
    `swap=false` does not turn them off.

    Greedy, as vDNN and Capuchin: while the device arena exceeds the
    budget, it frees the tensor idle across the peak position that costs
    least per byte (the largest among equals). If nothing is left and the
    step still does not fit, the error states the smallest budget these
    steps reach. Arguments that outlive the step and returned values stay
    on the device. The function gets `tidal.device_budget`.
  }];
  let options = [
    Option<"budget", "budget", "int64_t", "0",
           "device memory budget in bytes (0: no limit, no swaps)">,
    Option<"linkGbps", "link-gbps", "double", "16.0",
           "host<->device copy bandwidth, GB/s, for placing the copies">,
    Option<"swap", "swap", "bool", "true",
           "swap tensors (false: only recompute them, or with recompute "
           "false too, only check that the step fits)">,
    Option<"recompute", "recompute", "bool", "false",
           "also consider recomputing a tensor instead of swapping it">,
    Option<"strategy", "strategy", "std::string", "\"greedy\"",
           "greedy, milp: first choose every tensor's swap or "
           "recomputation at once with an MILP (GLPK), then fit the rest "
           "greedily, or auto: milp on functions of at most 200 ops">,
    Option<"milpTimeLimit", "milp-time-limit", "double", "10.0",
           "seconds the MILP solver may take (then its best choice)">,
    Option<"opsPerStep", "ops-per-step", "int64_t", "4000",
           "steps taken per liveness analysis: one per this many ops "
           "(at least one; a graph-size rule, never the budget's)">,
    Option<"alignment", "alignment", "int64_t", "64",
           "the memory plan's alignment">,
    Option<"function", "function", "std::string", "\"\"",
           "only this function (empty: every function)">,
    Option<"gflops", "gflops", "double", "0.0",
           "the compute device's GFLOP/s for the cost model (0: the "
           "uncalibrated host default)">,
    Option<"gbytesPerS", "gbytes-per-s", "double", "0.0",
           "its memory bandwidth, GB/s (0: default)">,
    Option<"opOverheadUs", "op-overhead-us", "double", "-1.0",
           "its cost per kernel call, us (negative: default)">,
    Option<"profile", "profile", "std::string", "\"\"",
           "a machine profile (tidal-calibrate) whose host section prices "
           "the ops, its measured op times (host.op_us) included; the "
           "three options above, where given, override its figures">,
  ];
  let statistics = [
    Statistic<"numSwapped", "swapped", "tensors offloaded and prefetched">,
    Statistic<"numRefetched", "refetched",
              "device copies of host values dropped and prefetched again">,
    Statistic<"bytesSwapped", "swapped-bytes", "bytes offloaded per step">,
    Statistic<"numRecomputed", "recomputed", "tensors recomputed">,
    Statistic<"numClones", "recompute-ops", "ops cloned to recompute them">,
    Statistic<"numMoved", "copies-moved",
              "prefetches delayed and offload waits advanced">,
    Statistic<"numMilpCandidates", "milp-candidates",
              "idle gaps the MILP chose among">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

def TidalRecomputePass : Pass<"tidal-recompute", "mlir::ModuleOp"> {
  let summary = "drop idle tensors and recompute them before their next use "
                "to fit a device budget";
  let description = [{
    Makes each function's device arena fit `budget` bytes by recomputation
    alone (Chen et al., Checkmate, SuperNeurons): a tensor idle across the
    peak whose defining op can run again just before the tensor's next use
    -- from operands still live there, or from ops cloned along with it, at
    most `max-chain` in all -- is dropped after its last use before the
    peak, and the clones (`tidal.recompute_of` = the original's
    `tidal.recompute_id`) produce it again. Clones compute bitwise the same
    values. Each step takes the tensor that costs least per byte freed, by
    the cost model; clones whose other results would raise the bytes live
    to the peak's level are not taken. If nothing is left and the step
    still does not fit, the error states the smallest budget reached.
  }];
  let options = [
    Option<"budget", "budget", "int64_t", "0",
           "device memory budget in bytes (0: no limit, nothing recomputed)">,
    Option<"maxChain", "max-chain", "int64_t", "3",
           "the most ops one recomputation may clone">,
    Option<"alignment", "alignment", "int64_t", "64",
           "the memory plan's alignment">,
    Option<"function", "function", "std::string", "\"\"",
           "only this function (empty: every function)">,
    Option<"gflops", "gflops", "double", "0.0",
           "the compute device's GFLOP/s for the cost model (0: default)">,
    Option<"gbytesPerS", "gbytes-per-s", "double", "0.0",
           "its memory bandwidth, GB/s (0: default)">,
    Option<"opOverheadUs", "op-overhead-us", "double", "-1.0",
           "its cost per kernel call, us (negative: default)">,
    Option<"profile", "profile", "std::string", "\"\"",
           "a machine profile (tidal-calibrate) whose host section prices "
           "the ops, its measured op times (host.op_us) included; the "
           "three options above, where given, override its figures">,
  ];
  let statistics = [
    Statistic<"numRecomputed", "recomputed", "tensors recomputed">,
    Statistic<"numClones", "recompute-ops", "ops cloned to recompute them">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

def TidalPrintLivenessPass : Pass<"tidal-print-liveness", "mlir::ModuleOp"> {
  let summary = "print every buffer's lifetime and the in-place decisions";
  let description = [{
    A printer for the liveness analysis (BufferLiveness) that the memory
    plan uses, for tests and for reading a plan: per function, the ops in
    schedule order, every buffer with its size, first and last position and
    the values that share it (views, results written in place), the
    in-place decisions, the bytes live at each position and the lower bound.
    Writes to stderr; the IR is unchanged.
  }];
  let options = [
    Option<"inPlace", "in-place", "bool", "true",
           "let results take the bytes of operands that die at the op">,
    Option<"alignment", "alignment", "int64_t", "64",
           "round each buffer up to this many bytes for the live totals">,
  ];
}

def TidalPlanMemoryPass : Pass<"tidal-plan-memory", "mlir::ModuleOp"> {
  let summary = "assign every tensor a byte offset in its function's arena";
  let description = [{
    Gives every tensor of every function a home: an offset in the
    function's arena (`tidal.offset` on arguments, `tidal.offsets` on ops,
    one per result, `tidal.result_offsets` and `tidal.arena_size` on the
    function) or, for `tidal.constant` results and views of them, an offset
    in the module's read-only constant arena (`tidal.const_offsets`,
    `tidal.constants_size` on the module). Views (reshape, flatten, squeeze,
    unsqueeze, identity) alias their operand's bytes. Every slot is aligned
    to `alignment` bytes.

    Strategy `packed` (the default) plans the function as scheduled: tensors
    whose lifetimes (BufferLiveness) do not overlap share bytes, a result
    takes its operand's bytes where the op runs in place, and offsets come
    from the better of two greedy assignments (largest buffer first, and
    longest-lived first), each putting a buffer in the tightest gap left by
    the buffers it overlaps in time. Buffers live for the whole step
    (parameters, optimizer state) are laid out first, at the bottom. The
    function gets `tidal.lower_bound` (the most bytes live at one point,
    which no assignment beats) and `tidal.no_reuse_size` (the arena without
    any sharing).

    Strategy `slots` gives each tensor its own slot for the whole step (no
    reuse): the baseline that the packed plan improves on.
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", "\"packed\"",
           "packed (liveness-based reuse) or slots (no reuse)">,
    Option<"inPlace", "in-place", "bool", "true",
           "packed: let results take the bytes of operands that die at the "
           "op">,
    Option<"alignment", "alignment", "int64_t", "64",
           "byte alignment of every slot">,
  ];
  let statistics = [
    Statistic<"numSlots", "slots", "tensors given bytes of their own">,
    Statistic<"numInPlace", "in-place", "results written over an operand">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

def TidalVerifyMemoryPlanPass
    : Pass<"tidal-verify-memory-plan", "mlir::ModuleOp"> {
  let summary = "check that no two live tensors share bytes";
  let description = [{
    Checks a memory plan independently of how it was made: every tensor has
    an offset, is aligned and fits its arena; views have their operand's
    offset; and no two tensors that are live at the same schedule position
    overlap, except a result written in place over an operand that dies at
    its op (an InPlaceOpInterface op, same size, same offset) or over the
    argument it replaces. Lifetimes are recomputed from the block order:
    arguments that outlive the step and returned values are live to the
    end. Fails with an error naming both tensors and the position.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "64",
           "the alignment every offset must have">,
  ];
}

#endif // TIDAL_DIALECT_TIDAL_TRANSFORMS_PASSES_TD
