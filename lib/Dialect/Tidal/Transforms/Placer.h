//===- Placer.h - the general placement rule --------------------*- C++ -*-===//
//
// tidal-place's rewrite (docs/memory-plan.md, "The general rule"): given the
// ops to run on the host, their results live in host memory, arguments
// that only host ops use live there too, and each value read across the
// boundary is copied once and waited for before its first reader. Shared
// by the placement modes and auto's trials (Place.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_PLACER_H
#define TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_PLACER_H

#include "FitBudget.h"

#include "tidal/Dialect/Tidal/Analysis/StepTimeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::tidal::place {

/// Ops that run a kernel, and so may run on either side.
bool isPlaceable(Operation *op);

struct PlaceStats {
  int64_t hostOps = 0, hostArgs = 0, hostArgBytes = 0, copies = 0;
};

class Placer {
public:
  /// `stream`: persistent arguments that a host op reads (a parameter
  /// updated on the host) live in host memory, and device ops read copies
  /// prefetched before them; with `streamOnly`, only those that one of
  /// these host ops reads.
  Placer(func::FuncOp func, const FitBudgetOptions &options,
         DenseSet<Operation *> hostOps, bool stream,
         DenseSet<Operation *> streamOnly = {})
      : func(func), options(options), hostOps(std::move(hostOps)),
        link(simulatedLinkProfile(options.linkGbps, options.linkLatencyUs)),
        stream(stream), streamOnly(std::move(streamOnly)) {}

  void run(PlaceStats &stats);

private:
  bool onHost(Value v) const;
  bool usedOnlyOnHost(Value v) const;
  bool readOnHost(Value v) const;
  void sinkHostOps();
  /// The waited copy of `v` on the other side, for `user` (created before
  /// the first user asks; `anchor` is where an argument's copy starts).
  Value copyFor(Value v, Operation *user, Operation *anchor);

  func::FuncOp func;
  const FitBudgetOptions &options;
  DenseSet<Operation *> hostOps;
  DenseSet<Value> hostArgs;
  DenseMap<Value, Value> copies;
  LinkProfile link;
  bool stream;
  DenseSet<Operation *> streamOnly;
  int64_t numCopies = 0;
};

/// The bytes of `func`'s persistent arguments (parameters, optimizer
/// state), each aligned to `alignment`.
int64_t persistentBytes(func::FuncOp func, int64_t alignment);

/// Each placeable op of a function carries its index among them
/// (kPlaceIndexAttr, TidalOps.h), so that an op found in a trial (a clone)
/// names the same op in the others.

/// The ops that `mode` (host, optimizer or stream) puts on the host, and
/// the placeable ops whose index is in `layers`.
DenseSet<Operation *> hostOpsFor(func::FuncOp func, StringRef mode,
                                 const DenseSet<int64_t> &layers = {});

} // namespace mlir::tidal::place

#endif // TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_PLACER_H
