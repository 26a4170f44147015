//===- Passes.td - tidal conversion passes --------------------*- tablegen -*-===//
//
// Lowering the planned tidal dialect to the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_CONVERSION_PASSES_TD
#define TIDAL_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def TidalLowerToRuntimePass : Pass<"tidal-lower-to-runtime", "mlir::ModuleOp"> {
  let summary = "lower planned tidal functions to calls into the C runtime";
  let description = [{
    Replaces each planned function (after tidal-plan-memory) by an LLVM
    function `tidalrt_status_t SYMBOL(tidalrt_context_t *ctx, uint8_t
    *arena)` that makes one call per op into the runtime's kernel ABI
    (runtime/include/tidalrt/tidalrt.h, "Kernel call ABI"):
    `tidalrt_k_<op>(ctx, desc, buffers)`, where `desc` is a constant global
    describing the op's tensors and attributes and `buffers` holds the
    tensors' addresses: the arena pointer plus the planned offset, or the
    module's constant arena (`__tidal_constants`) plus its offset. A failing
    kernel's status is returned after `tidalrt_context_fail_at(ctx, index)`.
    Views and constants emit no code. Ops are numbered in module order; the
    number is the first word of their descriptor.

    With `device`, the step function runs on the runtime's device: each
    kernel is enqueued on the compute stream (`tidalrt_dev_launch`, with the
    device byte ranges it reads and writes), each `tidal.offload` /
    `tidal.prefetch` becomes an asynchronous copy numbered in block order
    (`tidalrt_dev_offload` / `tidalrt_dev_prefetch`), each `tidal.wait` a
    stream wait (`tidalrt_dev_wait`), and the function ends with
    `tidalrt_dev_synchronize`. The predict function stays on the host.

    The step function becomes `tidal_program_step` and the predict function
    (if any) `tidal_program_predict`; a missing predict function is emitted
    as one that does nothing, so every program defines both symbols.
  }];
  let options = [
    Option<"stepFunc", "step-func", "std::string", "\"train_step\"",
           "the function that becomes tidal_program_step">,
    Option<"predictFunc", "predict-func", "std::string", "\"predict\"",
           "the function that becomes tidal_program_predict">,
    Option<"device", "device", "bool", "false",
           "run the step function on the runtime's device (--target sim): "
           "kernels are enqueued with tidalrt_dev_launch, swaps become "
           "tidalrt_dev_offload/prefetch/wait, and the step ends with "
           "tidalrt_dev_synchronize">,
  ];
  let statistics = [
    Statistic<"numKernelCalls", "kernel-calls", "kernel calls emitted">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TIDAL_CONVERSION_PASSES_TD
