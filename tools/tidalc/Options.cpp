//===- Options.cpp - tidalc's command-line options ------------------------===//

#include "Options.h"

using namespace llvm;

namespace tidalc {

cl::OptionCategory category("tidalc options");

// Optional only so that --list-ops needs no model; main checks it is given.
cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx>"),
                               cl::cat(category));
cl::opt<std::string> outputPath("o", cl::desc("Output file ('-' for stdout)"),
                                cl::value_desc("file"), cl::init(""),
                                cl::cat(category));
cl::opt<std::string>
    emit("emit",
         cl::desc("Stop after a stage: exe (a training executable), lib (a "
                  "shared library with the trainer C ABI, tidalrt/trainer.h), "
                  "obj, llvm, mlir, plan (the plan JSON)"),
         cl::init("exe"), cl::cat(category));
cl::opt<int64_t> batchSize("batch-size",
                           cl::desc("Bind the symbolic batch dimension"),
                           cl::init(0), cl::cat(category));
cl::opt<std::string>
    distributed("distributed",
                cl::desc("Data-parallel training over processes, launched "
                         "by mpirun: mpi (--target cpu or sim) or nccl "
                         "(--target cuda, one GPU per rank); needs --ranks "
                         "and --batch-size (the global batch)"),
                cl::init(""), cl::cat(category));
cl::opt<int64_t> ranks("ranks",
                       cl::desc("The number of processes of a --distributed "
                                "run; each takes batch-size / ranks samples "
                                "of every global batch"),
                       cl::init(0), cl::cat(category));
cl::opt<std::string>
    shard("shard",
          cl::desc("optimizer: split the optimizer state over the ranks of a "
                   "--distributed run (ZeRO stage 1); gradients: also "
                   "reduce-scatter the gradients (stage 2)"),
          cl::init(""), cl::cat(category));
cl::opt<bool> syncBatchNorm(
    "sync-batch-norm",
    cl::desc("BatchNorm statistics of the global batch in a --distributed run "
             "(torch.nn.SyncBatchNorm); default: each rank's own, as DDP"),
    cl::init(false), cl::cat(category));
cl::opt<std::string>
    bucketSize("bucket-size",
               cl::desc("Largest gradient all-reduce bucket of a "
                        "--distributed run (default 25MiB, as PyTorch DDP)"),
               cl::value_desc("size"), cl::init("25MiB"), cl::cat(category));
cl::list<std::string> freeze("freeze",
                             cl::desc("Initializers that are not trained"),
                             cl::CommaSeparated, cl::cat(category));
cl::list<std::string> embeddingPadding(
    "embedding-padding",
    cl::desc("NAME:ROW,...: the initializer NAME is an nn.Embedding weight "
             "whose padding_idx is ROW (ONNX does not keep it): lookups "
             "of that row do not train it, as in PyTorch"),
    cl::CommaSeparated, cl::cat(category));
cl::opt<std::string> loss("loss",
                          cl::desc("cross-entropy, mse, or output (the "
                                   "model's first output is the loss; the "
                                   "default when it is a scalar)"),
                          cl::init("output"), cl::cat(category));
cl::opt<std::string> optimizer("optimizer",
                               cl::desc("sgd, adam or adamw (torch.optim)"),
                               cl::init("sgd"), cl::cat(category));
cl::opt<double> lr("lr",
                   cl::desc("Learning rate (default 0.01 for sgd, 0.001 "
                            "for adam and adamw)"),
                   cl::init(-1.0), cl::cat(category));
cl::opt<double> momentum("momentum", cl::desc("SGD momentum"), cl::init(0.0),
                         cl::cat(category));
cl::opt<double> dampening("dampening", cl::desc("SGD dampening"), cl::init(0.0),
                          cl::cat(category));
cl::opt<bool> nesterov("nesterov", cl::desc("SGD Nesterov momentum"),
                       cl::cat(category));
cl::opt<double> weightDecay("weight-decay",
                            cl::desc("Weight decay (default 0, 0.01 for "
                                     "adamw)"),
                            cl::init(-1.0), cl::cat(category));
cl::opt<double> beta1("beta1", cl::desc("Adam beta1"), cl::init(0.9),
                      cl::cat(category));
cl::opt<double> beta2("beta2", cl::desc("Adam beta2"), cl::init(0.999),
                      cl::cat(category));
cl::opt<double> eps("eps", cl::desc("Adam epsilon"), cl::init(1e-8),
                    cl::cat(category));
cl::opt<std::string> mode("mode",
                          cl::desc("train (the training step, default) or "
                                   "forward (the model's forward pass as "
                                   "written, run once over its inputs)"),
                          cl::init("train"), cl::cat(category));
cl::opt<std::string> target("target",
                            cl::desc("cpu (every op on the host), cuda (an "
                                     "NVIDIA GPU, host memory as overflow) "
                                     "or sim (a simulated device with "
                                     "cuda's planning and runtime "
                                     "semantics)"),
                            cl::init("cpu"), cl::cat(category));
cl::opt<std::string>
    deviceMemory("device-memory",
                 cl::desc("Device memory budget (512MiB, 12GiB, 1.5GB, "
                          "bytes) that the plan must fit"),
                 cl::value_desc("size"), cl::init(""), cl::cat(category));
cl::opt<std::string> swapMode("swap",
                              cl::desc("auto (offload and prefetch tensors "
                                       "to fit --device-memory) or off"),
                              cl::init("auto"), cl::cat(category));
cl::opt<std::string> placement(
    "placement",
    cl::desc("auto (the cost model's choice when the step does not fit "
             "--device-memory otherwise: the optimizer and its state on the "
             "host, the parameters too, streamed in before use, and, with "
             "--host-layers on, layers), device (every op on the device) or "
             "host (every op on the host CPU)"),
    cl::init("auto"), cl::cat(category));
cl::opt<std::string> hostLayers(
    "host-layers",
    cl::desc("on (with --placement auto, layers run on the host CPU when "
             "nothing else fits --device-memory, and where the cost model "
             "predicts that faster than swapping, recomputing or copying "
             "their results; the default), fit (only the first) or off"),
    cl::init("on"), cl::cat(category));
cl::opt<std::string> blockChannels(
    "block-channels",
    cl::desc("on (the default on the cpu and sim targets: activations "
             "between convolutions, batch norms and element-wise ops stay in "
             "the CPU kernels' channel-blocked layout) or off (dense NCHW "
             "everywhere)"),
    cl::init("on"), cl::cat(category));
cl::opt<std::string> fuseEpilogues(
    "fuse-epilogues",
    cl::desc("on (the default on the cpu target: a ReLU that only a batch "
             "normalization feeds runs in that kernel's epilogue) or off"),
    cl::init("on"), cl::cat(category));
cl::opt<std::string> fuseElementwise(
    "fuse-elementwise",
    cl::desc("on (the default on the cpu target: chains of float32 "
             "element-wise ops run as one kernel call each) or off"),
    cl::init("on"), cl::cat(category));
cl::opt<std::string> recomputeMode(
    "recompute",
    cl::desc("auto (recompute tensors where the cost model finds that "
             "cheaper than swapping them, to fit --device-memory) or off"),
    cl::init("auto"), cl::cat(category));
cl::opt<std::string>
    planner("planner",
            cl::desc("greedy (vDNN/Capuchin-style, fast), milp: choose "
                     "every swap, recomputation, optimizer placement and "
                     "(with --host-layers on) layer placement at once with "
                     "an MILP (GLPK), the greedy plan as fallback, or auto: "
                     "milp on steps of at most 200 ops, greedy on larger "
                     "ones"),
            cl::init("greedy"), cl::cat(category));
cl::opt<double> linkGbps("link-gbps",
                         cl::desc("Host<->device bandwidth in GB/s that the "
                                  "planner assumes (default 16)"),
                         cl::init(16.0), cl::cat(category));
cl::opt<int64_t> linkShare(
    "link-share",
    cl::desc("Devices whose copies share one host link (a PCIe switch in "
             "front of N GPUs, the N ranks of a data-parallel run on one "
             "machine): the planner gives this device 1/N of --link-gbps "
             "(default 1)"),
    cl::init(1), cl::cat(category));
cl::list<std::string>
    embedData("embed-data",
              cl::desc("NAME=FILE.npy: compile example data into the "
                       "executable (repeatable)"),
              cl::cat(category));
cl::opt<std::string>
    tracePath("trace",
              cl::desc("Write the planned schedule as a Chrome/Perfetto "
                       "trace"),
              cl::value_desc("file.json"), cl::init(""), cl::cat(category));
cl::opt<bool> explain("explain",
                      cl::desc("Print what the planner decided and why: "
                               "the plan against the all-device plan, each "
                               "tensor off the device and every op's place"),
                      cl::init(false), cl::cat(category));
cl::opt<std::string>
    scheduleStrategy("schedule",
                     cl::desc("Op order: memory (free-early list "
                              "scheduling, default) or program (as "
                              "written)"),
                     cl::init("memory"), cl::cat(category));
cl::opt<std::string>
    memoryPlan("memory-plan",
               cl::desc("Offsets: packed (liveness-based reuse, default) or "
                        "slots (no reuse, the baseline)"),
               cl::init("packed"), cl::cat(category));
cl::opt<bool> inPlace("in-place",
                      cl::desc("Let element-wise ops and optimizer updates "
                               "write over an operand that dies (default "
                               "true)"),
                      cl::init(true), cl::cat(category));
cl::opt<std::string>
    deviceProfile("device-profile",
                  cl::desc("A machine profile from tidal-calibrate for the "
                           "cost model (default: uncalibrated defaults)"),
                  cl::value_desc("profile.json"), cl::init(""),
                  cl::cat(category));
cl::opt<bool> verbose("v", cl::desc("Print statistics to stderr"),
                      cl::cat(category));
cl::opt<bool> timings("timings", cl::desc("Print stage timings to stderr"),
                      cl::cat(category));
cl::opt<bool> listOps("list-ops",
                      cl::desc("Print the supported ONNX operators and "
                               "opsets as Markdown (to -o, or stdout)"),
                      cl::cat(category));

/// `--stop-after`. LLVM's code generator already registers an option of that
/// name in libLLVM (TargetPassConfig), so tidalc adopts it rather than
/// registering a second one, which would abort at start-up.
cl::opt<std::string> &stopAfterOption() {
  static cl::opt<std::string> *opt = [] {
    auto &registered = cl::getRegisteredOptions();
    auto it = registered.find("stop-after");
    cl::opt<std::string> *o =
        it != registered.end()
            ? static_cast<cl::opt<std::string> *>(it->second)
            : new cl::opt<std::string>("stop-after", cl::init(""));
    o->setDescription("With --emit mlir: print the IR after this stage "
                      "(import, tidal-add-loss, tidal-autodiff, "
                      "tidal-insert-optimizer, tidal-schedule, "
                      "tidal-plan-memory)");
    o->setValueStr("stage");
    o->addCategory(category);
    o->setHiddenFlag(cl::NotHidden);
    return o;
  }();
  return *opt;
}

} // namespace tidalc
