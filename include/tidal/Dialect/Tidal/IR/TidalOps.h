//===- TidalOps.h - tidal ops, attributes and enums -------------*- C++ -*-===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALOPS_H
#define TIDAL_DIALECT_TIDAL_IR_TIDALOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tidal/Dialect/Tidal/IR/TidalDialect.h"

#include "tidal/Dialect/Tidal/IR/TidalEnums.h.inc"
#include "tidal/Dialect/Tidal/IR/TidalInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tidal/Dialect/Tidal/IR/TidalAttrs.h.inc"

#define GET_OP_CLASSES
#include "tidal/Dialect/Tidal/IR/TidalOps.h.inc"

namespace mlir::tidal {
/// Names of the argument and result attributes that the importer puts on the
/// graph function (SPEC section 1).
inline constexpr llvm::StringLiteral kNameAttr = "tidal.name";
inline constexpr llvm::StringLiteral kRoleAttr = "tidal.role";

/// The argument/result attributes `{tidal.name = name, tidal.role = role}`;
/// without `tidal.name` when `name` is null.
DictionaryAttr nameAndRoleAttrs(MLIRContext *ctx, StringAttr name,
                                ArgRole role);
/// A unit attribute on @main: the model carried an ONNX training_info, so
/// @main already computes the loss, its gradients and the optimizer's
/// updates, and the pipeline must not add a loss or an optimizer of its own.
inline constexpr llvm::StringLiteral kTrainingInfoAttr = "tidal.training_info";

/// A string attribute on the function of a data-parallel step: "mpi" or
/// "nccl", the transport its collectives run over (tidal-insert-all-reduce),
/// which the cost model prices them by (defaultCommProfile).
inline constexpr llvm::StringLiteral kCommNetworkAttr = "tidal.comm_network";
/// With a measured network (tidal-calibrate --network): its bus bandwidth
/// in GB/s and per-message latency in microseconds, which replace the
/// transport's defaults.
inline constexpr llvm::StringLiteral kCommGbpsAttr = "tidal.comm_gbps";
inline constexpr llvm::StringLiteral kCommLatencyAttr = "tidal.comm_latency_us";

// Memory plan attributes (tidal-plan-memory; docs/memory-plan.md).
inline constexpr llvm::StringLiteral kOffsetAttr = "tidal.offset";
inline constexpr llvm::StringLiteral kOffsetsAttr = "tidal.offsets";
inline constexpr llvm::StringLiteral kConstOffsetsAttr = "tidal.const_offsets";
inline constexpr llvm::StringLiteral kResultOffsetsAttr =
    "tidal.result_offsets";
inline constexpr llvm::StringLiteral kArenaSizeAttr = "tidal.arena_size";
inline constexpr llvm::StringLiteral kConstantsSizeAttr =
    "tidal.constants_size";
inline constexpr llvm::StringLiteral kLowerBoundAttr = "tidal.lower_bound";
inline constexpr llvm::StringLiteral kNoReuseSizeAttr = "tidal.no_reuse_size";
/// The device memory budget that tidal-schedule-swaps fitted a function to.
inline constexpr llvm::StringLiteral kDeviceBudgetAttr = "tidal.device_budget";
/// The host arena of offloaded copies (tidal-schedule-swaps), and its bound.
inline constexpr llvm::StringLiteral kHostArenaSizeAttr =
    "tidal.host_arena_size";
inline constexpr llvm::StringLiteral kHostLowerBoundAttr =
    "tidal.host_lower_bound";
/// Recomputation (tidal-recompute, tidal-schedule-swaps): an op whose
/// result is recomputed gets `tidal.recompute_id`, unique in its function;
/// each clone that recomputes it carries the same number in
/// `tidal.recompute_of`.
inline constexpr llvm::StringLiteral kRecomputeIdAttr = "tidal.recompute_id";
inline constexpr llvm::StringLiteral kRecomputeOfAttr = "tidal.recompute_of";
/// The optimal mode of tidal-schedule-swaps: its MILP's size and result.
inline constexpr llvm::StringLiteral kMilpAttr = "tidal.milp";
/// tidal-place auto: each placeable op's index among them, so that an op
/// of one trial (a clone) names the same op in the others and the MILP's
/// placement choices name updates across clones.
inline constexpr llvm::StringLiteral kPlaceIndexAttr = "tidal.place_index";
/// tidal-place auto with the MILP planner: `{kept = "milp" | "greedy",
/// milp_us, greedy_us}`, the predicted steps of the joint MILP's plan and
/// of the greedy planner's, and which was kept.
inline constexpr llvm::StringLiteral kPlacePlannerAttr = "tidal.place_planner";
/// tidal-place auto, host layers by cost: `{layers, before_us, after_us}`,
/// how many kernels moved to the host because that was predicted faster
/// than the plan's swaps or recomputations, and the predicted steps
/// without and with them.
inline constexpr llvm::StringLiteral kHostLayersByCostAttr =
    "tidal.host_layers_by_cost";
/// tidal-place auto under a budget: `{trials, fitted, unreachable}`, how
/// many trial plans it placed and fitted, how many fit, and how many failed
/// before a step because no state their steps reach could fit.
inline constexpr llvm::StringLiteral kPlaceTrialsAttr = "tidal.place_trials";
/// Placement (tidal-place): an op that runs on the host CPU carries
/// `tidal.device = "host"` (ops without it run on the target's device), and
/// an argument or result that lives in the host arena carries
/// `tidal.space = "host"` (its `tidal.offset` is then a host arena offset).
inline constexpr llvm::StringLiteral kDeviceAttr = "tidal.device";
inline constexpr llvm::StringLiteral kSpaceAttr = "tidal.space";
inline constexpr llvm::StringLiteral kHostValue = "host";
/// True if tidal-place put `op` on the host.
bool isHostPlaced(Operation *op);
/// True if argument `argNumber` of `func` lives in the host arena.
bool isHostArgument(FunctionOpInterface func, unsigned argNumber);
/// True if result `resultNumber` of `func` is returned in the host arena.
bool isHostResult(FunctionOpInterface func, unsigned resultNumber);
/// True for the optimizer update ops (one per parameter).
bool isOptimizerUpdate(Operation *op);
/// The gradient an optimizer update op reads (null for other ops).
Value optimizerGradient(Operation *op);
/// True for the collectives of data-parallel training (all_reduce_start/wait,
/// all_gather_start/wait): never erased, recomputed or moved across each
/// other.
bool isCollectiveOp(Operation *op);

/// An optimizer-state argument that tidal-shard-optimizer cut to this rank's
/// chunk carries `tidal.shard_of = array<i64: ...>`, the full shape.
inline constexpr llvm::StringLiteral kShardOfAttr = "tidal.shard_of";

/// The tidal-schedule strategy that ordered a function's ops.
inline constexpr llvm::StringLiteral kScheduleAttr = "tidal.schedule";

/// Ops whose result is their operand's bytes reinterpreted (no kernel).
bool isViewOp(Operation *op);

/// Gives every random op in `scope` (tidal.dropout, tidal.random_normal,
/// tidal.random_uniform) without a `stream` attribute the next stream number
/// after the largest one present, in program order.
void assignRandomStreams(Operation *scope);

/// Bytes of a static tensor type's data (booleans take one byte each).
int64_t tensorByteSize(ShapedType type);
} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALOPS_H
