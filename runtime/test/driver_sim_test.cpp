// driver_sim_test.cpp - --target sim: the step on a SIM device equal to
// the cpu target, the device figures in the log, faults on the device's
// streams, slots in the host arena.
#include "driver_train_fixtures.h"

#include <cstring>
#include <set>

namespace {

using namespace driver_test;

//===----------------------------------------------------------------------===
// --target sim: the step runs on a SIM device whose memory is the arena.
//===----------------------------------------------------------------------===

TEST_F(DriverEvalTest, SimTargetEqualsCpu) {
  run_result cpu = run({"--steps", "3", "--log", path("cpu.jsonl")});
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  std::vector<float> cpu_w = classifier().predict_w;
  // The step on a device; the predict function on the host (no
  // device_bytes), then on a device of its own.
  program.manifest["target"] = "sim";
  program.manifest["functions"]["step"]["device_bytes"] =
      classifier().step.arena_bytes + 64;
  for (bool predict_on_device : {false, true}) {
    if (predict_on_device)
      program.manifest["functions"]["predict"]["device_bytes"] =
          classifier().predict.arena_bytes;
    classifier().predict_calls = 0;
    run_result sim = run({"--steps", "3", "--log", path("sim.jsonl")});
    ASSERT_EQ(sim.status, 0) << sim.err;
    EXPECT_EQ(untimed(sim.out), untimed(cpu.out));
    EXPECT_EQ(classifier().predict_calls, 3);
    EXPECT_EQ(classifier().predict_w, cpu_w);
    // Host memory: the predict arena if it is on the host (the step's
    // arena is device memory; no copies, no scratch).
    EXPECT_EQ(read_jsonl(path("sim.jsonl")).at(0)["host_peak_bytes"],
              predict_on_device ? 0 : classifier().predict.arena_bytes);
  }
}

TEST_F(DriverSimDeviceTest, TrainingEqualsTheCpuTarget) {
  fake_program cpu_program;
  make_linear_program(cpu_program);
  std::vector<std::string> args = {"--input",  "x=" + path("x.npy"),
                                   "--input",  "y=" + path("y.npy"),
                                   "--steps",  "7",
                                   "--shuffle"};
  std::vector<std::string> cpu_args = args, sim_args = args;
  cpu_args.insert(cpu_args.end(), {"--save", path("cpu.onnx")});
  sim_args.insert(sim_args.end(), {"--save", path("sim.onnx")});
  run_result cpu = run_driver(cpu_program.get(), cpu_args);
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  std::vector<float> cpu_losses = linear().losses;
  std::vector<float> cpu_w = linear().last_w;
  make_sim_program(program);
  run_result sim = run_driver(program.get(), sim_args);
  ASSERT_EQ(sim.status, 0) << sim.err;
  EXPECT_EQ(linear().prepare_calls, 1);
  EXPECT_EQ(linear().losses, cpu_losses);
  EXPECT_EQ(linear().last_w, cpu_w);
  EXPECT_EQ(untimed(sim.out), untimed(cpu.out));
  EXPECT_EQ(read_file(path("sim.onnx")), read_file(path("cpu.onnx")));
}

TEST_F(DriverSimDeviceTest, LogHasTheDeviceFigures) {
  ASSERT_EQ(run({"--steps", "3", "--log", path("log.jsonl")}).status, 0);
  std::vector<json> log = read_jsonl(path("log.jsonl"));
  ASSERT_EQ(log.size(), 3u);
  for (const json &entry : log) {
    // Op 0 touches the whole arena: the measured peak is its size.
    EXPECT_EQ(entry["device_peak_bytes"], linear().step.arena_bytes);
    EXPECT_EQ(entry["bytes_to_host"], 8);
    EXPECT_EQ(entry["bytes_to_device"], 8);
    // Host memory: the 64-byte host arena (no scratch).
    EXPECT_EQ(entry["host_peak_bytes"], 64);
  }
}

TEST_F(DriverSimDeviceTest, KernelFaultNamesTheLaunchedOp) {
  linear().fail_call = 1;
  linear().fail_op = 2; // the launch's op (0) wins
  run_result result = run({"--steps", "3", "--log", path("log.jsonl")});
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err.rfind("prog: error: op '/MatMul' (matmul): ", 0), 0u)
      << result.err;
  EXPECT_NE(result.err.find("stream 0 (compute)"), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("injected failure"), std::string::npos)
      << result.err;
  EXPECT_EQ(read_jsonl(path("log.jsonl")).size(), 1u);
}

TEST_F(DriverSimDeviceTest, PrepareFaultNamesTheLaunchedOp) {
  linear().fail_prepare = true;
  linear().fail_op = 2;
  run_result result = run({"--steps", "3"});
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err,
            "prog: error: op '/MatMul' (matmul): injected prepare\n");
  EXPECT_TRUE(linear().steps.empty());
}

TEST_F(DriverSimDeviceTest, ManifestErrors) {
  auto expect_error = [&](const std::string &message) {
    run_result result = run({"--steps", "1"});
    EXPECT_EQ(result.status, 2);
    EXPECT_NE(result.err.find(message), std::string::npos) << result.err;
  };
  json &step = program.manifest["functions"]["step"];
  program.manifest["target"] = "tpu";
  expect_error("malformed program manifest: target 'tpu' is not one this "
               "runtime runs (cpu, sim, cuda)");
  program.manifest["target"] = "sim";
  step["device_bytes"] = linear().step.arena_bytes - 64;
  expect_error("functions.step.device_bytes " +
               std::to_string(linear().step.arena_bytes - 64) +
               " is below its arena_bytes");
  step.erase("device_bytes");
  expect_error("functions.step has copies (host_arena_bytes, num_copies) but "
               "no device_bytes");
  step["host_arena_bytes"] = 0;
  step["num_copies"] = 0;
  expect_error("functions.step of a sim program has no \"device_bytes\"");
  program.manifest["target"] = "cpu";
  step["num_copies"] = 2;
  step["device_bytes"] = 4096;
  expect_error("a cpu program has copies");
}

TEST_F(DriverSimDeviceTest, LinkBandwidthFromTheEnvironment) {
  setenv("TIDAL_SIM_LINK_GBPS", "fast", 1);
  run_result bad = run({"--steps", "1"});
  setenv("TIDAL_SIM_LINK_GBPS", "0.001", 1); // 8 bytes in 8 us
  run_result slow = run({"--steps", "2"});
  unsetenv("TIDAL_SIM_LINK_GBPS");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("TIDAL_SIM_LINK_GBPS='fast' is not a bandwidth"),
            std::string::npos)
      << bad.err;
  EXPECT_EQ(slow.status, 0) << slow.err;
}

//===----------------------------------------------------------------------===
// Slots in the host arena ("space": "host"): ZeRO-Offload keeps the
// optimizer state in host memory (with --placement host, even the inputs,
// params and loss). Such a slot's offset is in the function's host arena,
// which the driver allocates (zeroed) and attaches to the device, and where
// it loads, updates, syncs, reads and saves the value.
//===----------------------------------------------------------------------===

// A function whose code (`inner`) finds every slot at its place in the
// arena (a function_layout), while the manifest puts some of them in the
// host arena: the function prefetches those args from the host arena to
// their arena places before running `inner`, and offloads those results
// from their arena places to the host arena after it. The values live in
// the host arena between calls: only the driver puts them there.
struct host_slot {
  bool result;
  uint64_t host_offset;
  uint64_t device_offset;
  uint64_t bytes;
};

struct host_placement {
  std::vector<host_slot> slots;
  int64_t first_copy = 0;
  tidalrt_status_t (*inner)(tidalrt_context_t *, uint8_t *) = nullptr;
};

host_placement &step_placement() {
  static host_placement placement;
  return placement;
}

host_placement &predict_placement() {
  static host_placement placement;
  return placement;
}

tidalrt_status_t run_placed(const host_placement &p, tidalrt_context_t *ctx,
                            uint8_t *arena) {
  tidalrt_status_t status = nullptr;
  int64_t copy = p.first_copy;
  for (const host_slot &slot : p.slots)
    if (!slot.result && !status)
      status = tidalrt_dev_prefetch(ctx, copy++, slot.host_offset,
                                    slot.device_offset, slot.bytes);
  // `inner` may read the arena on this thread: let the prefetches land.
  if (!status)
    status = tidalrt_dev_synchronize(ctx);
  if (!status)
    status = p.inner(ctx, arena);
  for (const host_slot &slot : p.slots)
    if (slot.result && !status)
      status = tidalrt_dev_offload(ctx, copy++, slot.host_offset,
                                   slot.device_offset, slot.bytes);
  if (status)
    return status;
  return tidalrt_dev_synchronize(ctx);
}

tidalrt_status_t placed_step(tidalrt_context_t *ctx, uint8_t *arena) {
  return run_placed(step_placement(), ctx, arena);
}

tidalrt_status_t placed_predict(tidalrt_context_t *ctx, uint8_t *arena) {
  return run_placed(predict_placement(), ctx, arena);
}

// Moves the args named in `args` and the results named in `results` of
// `function` (a manifest function with a device_bytes) to its host arena,
// after the host_arena_bytes it has, 64-byte aligned; with `in_place`, a
// moved result shares the host bytes of the moved arg of its name. Adds one
// copy id per moved slot.
host_placement
place_in_host(json &function, const std::set<std::string> &args,
              const std::set<std::string> &results, bool in_place,
              tidalrt_status_t (*inner)(tidalrt_context_t *, uint8_t *)) {
  host_placement placement;
  placement.inner = inner;
  uint64_t next = function.value("host_arena_bytes", uint64_t{0});
  next = (next + 63) / 64 * 64;
  int64_t copies = function.value("num_copies", int64_t{0});
  placement.first_copy = copies;
  std::map<std::string, uint64_t> arg_offsets;
  auto move = [&](json &slot, bool result) {
    std::string name = slot["name"].get<std::string>();
    uint64_t bytes = slot["bytes"].get<uint64_t>();
    uint64_t host_offset;
    if (result && in_place && arg_offsets.count(name)) {
      host_offset = arg_offsets[name];
    } else {
      host_offset = next;
      next += (bytes + 63) / 64 * 64;
    }
    if (!result)
      arg_offsets[name] = host_offset;
    placement.slots.push_back(
        {result, host_offset, slot["offset"].get<uint64_t>(), bytes});
    slot["space"] = "host";
    slot["offset"] = host_offset;
    ++copies;
  };
  for (json &slot : function["args"])
    if (args.count(slot["name"].get<std::string>()))
      move(slot, false);
  for (json &slot : function["results"])
    if (results.count(slot["name"].get<std::string>()))
      move(slot, true);
  function["host_arena_bytes"] = next;
  function["num_copies"] = copies;
  return placement;
}

class DriverHostArenaTest : public DriverSimDeviceTest {
protected:
  // The sim program of the linear model with the named args and results
  // in the host arena.
  static void make_host_program(fake_program &p,
                                const std::set<std::string> &args,
                                const std::set<std::string> &results,
                                bool in_place = false) {
    make_sim_program(p);
    step_placement() = place_in_host(p.manifest["functions"]["step"], args,
                                     results, in_place, linear_sim_step);
    p.program.step = placed_step;
  }
  static void make_host_program(fake_program &p,
                                const std::set<std::string> &names,
                                bool in_place = false) {
    make_host_program(p, names, names, in_place);
  }

  struct outcome {
    run_result result;
    std::vector<float> losses;
    std::vector<float> last_w;
    std::string saved;
  };

  // Runs `p` with the data and `more`, saving to `save`.
  outcome train(fake_program &p, std::vector<std::string> more,
                const std::string &save) {
    std::vector<std::string> args = {"--input", "x=" + path("x.npy"),
                                     "--input", "y=" + path("y.npy"),
                                     "--save",  save};
    args.insert(args.end(), more.begin(), more.end());
    outcome o;
    o.result = run_driver(p.get(), args);
    o.losses = linear().losses;
    o.last_w = linear().last_w;
    o.saved = read_file(save);
    return o;
  }

  // Training the linear model with the named args and results in the host
  // arena is bit for bit that of the program with every slot in the arena
  // (and that of the cpu target).
  void expect_same_training(const std::set<std::string> &args,
                            const std::set<std::string> &results,
                            bool in_place = false,
                            std::vector<std::string> more = {"--steps", "7",
                                                             "--shuffle"}) {
    fake_program cpu_program, arena_program, host_program;
    make_linear_program(cpu_program);
    outcome cpu = train(cpu_program, more, path("cpu.onnx"));
    ASSERT_EQ(cpu.result.status, 0) << cpu.result.err;
    make_sim_program(arena_program);
    outcome in_arena = train(arena_program, more, path("arena.onnx"));
    ASSERT_EQ(in_arena.result.status, 0) << in_arena.result.err;
    make_host_program(host_program, args, results, in_place);
    std::vector<std::string> logged = more;
    logged.insert(logged.end(), {"--log", path("host.jsonl")});
    outcome in_host = train(host_program, logged, path("host.onnx"));
    ASSERT_EQ(in_host.result.status, 0) << in_host.result.err;
    ASSERT_FALSE(in_host.losses.empty());
    EXPECT_EQ(in_host.losses, in_arena.losses);
    EXPECT_EQ(in_host.last_w, in_arena.last_w);
    EXPECT_EQ(untimed(in_host.result.out), untimed(in_arena.result.out));
    EXPECT_EQ(in_host.saved, in_arena.saved);
    EXPECT_EQ(in_arena.saved, cpu.saved);
    EXPECT_EQ(in_arena.losses, cpu.losses);
    // Host memory: the host arena, copies and host slots alike.
    uint64_t host_arena_bytes =
        host_program.manifest["functions"]["step"]["host_arena_bytes"];
    for (const json &entry : read_jsonl(path("host.jsonl")))
      EXPECT_EQ(entry["host_peak_bytes"], host_arena_bytes);
  }
};

TEST_F(DriverHostArenaTest, OptimizerStateTrainsAsInTheArena) {
  std::set<std::string> names = {"w.momentum_buffer", "optimizer.step"};
  expect_same_training(names, names);
}

TEST_F(DriverHostArenaTest, ParamStateAndConstantTrainAsInTheArena) {
  // "two" is a constant: an arg without a result, loaded from the model.
  std::set<std::string> names = {"w", "seen", "two"};
  expect_same_training(names, names);
}

TEST_F(DriverHostArenaTest, EverySlotInTheHostArena) {
  // --placement host: the inputs, every persistent value and the loss.
  std::set<std::string> names = {
      "x",    "y",   "loss",          "w", "w.momentum_buffer",
      "seen", "two", "optimizer.step"};
  expect_same_training(names, names);
  // Epochs read the loss from the host arena too.
  expect_same_training(names, names, false, {"--epochs", "2"});
}

TEST_F(DriverHostArenaTest, InPlaceHostSlotsTrainAsInTheArena) {
  std::set<std::string> names = {"w", "w.momentum_buffer", "optimizer.step",
                                 "seen"};
  expect_same_training(names, names, /*in_place=*/true);
}

TEST_F(DriverHostArenaTest, ArgAndResultInDifferentSpaces) {
  // The new w goes to the host arena and is copied into the arena's w; the
  // new momentum buffer goes to the arena and is copied into the host
  // arena's.
  expect_same_training({"w.momentum_buffer", "seen"}, {"w", "seen"});
}

TEST_F(DriverHostArenaTest, UpdatesCompareSpaceAndOffset) {
  auto updates = [](fake_program &p) {
    const tidalrt_program_t *program = p.get();
    tidalrt_driver::manifest m =
        tidalrt_driver::parse_manifest(program->manifest, program->blob_size);
    std::map<std::string, std::pair<bool, bool>> found; // arg, result host
    for (const tidalrt_driver::update &u : tidalrt_driver::find_updates(m.step))
      found[u.arg->name] = {u.arg->host, u.result->host};
    return found;
  };
  using spaces = std::map<std::string, std::pair<bool, bool>>;
  fake_program p;
  make_sim_program(p);
  spaces in_arena = {{"w", {false, false}},
                     {"w.momentum_buffer", {false, false}},
                     {"optimizer.step", {false, false}},
                     {"seen", {false, false}}};
  EXPECT_EQ(updates(p), in_arena);
  // Same space, other offsets: copied.
  make_host_program(p, {"w", "w.momentum_buffer", "optimizer.step", "seen"});
  spaces in_host = {{"w", {true, true}},
                    {"w.momentum_buffer", {true, true}},
                    {"optimizer.step", {true, true}},
                    {"seen", {true, true}}};
  EXPECT_EQ(updates(p), in_host);
  // Same space, same offset: nothing to copy.
  make_host_program(p, {"w", "w.momentum_buffer"}, /*in_place=*/true);
  spaces in_place = {{"optimizer.step", {false, false}},
                     {"seen", {false, false}}};
  EXPECT_EQ(updates(p), in_place);
  // Another space at the same offset: copied.
  make_sim_program(p);
  json &step = p.manifest["functions"]["step"];
  step["host_arena_bytes"] = 4096;
  for (json &slot : step["results"])
    if (slot["name"] == "w") {
      for (json &arg : step["args"])
        if (arg["name"] == "w")
          slot["offset"] = arg["offset"];
      slot["space"] = "host";
    }
  spaces crossed = in_arena;
  crossed["w"] = {false, true};
  EXPECT_EQ(updates(p), crossed);
}

TEST_F(DriverHostArenaTest, InitLoadsHostResidentValues) {
  // A checkpoint with trained params, momentum, optimizer step and state.
  fake_program cpu_program, arena_program, host_program;
  make_linear_program(cpu_program);
  outcome start = train(cpu_program, {"--steps", "3"}, path("start.onnx"));
  ASSERT_EQ(start.result.status, 0) << start.result.err;
  std::vector<std::string> more = {"--init", path("start.onnx"), "--steps",
                                   "4"};
  make_sim_program(arena_program);
  outcome in_arena = train(arena_program, more, path("arena.onnx"));
  ASSERT_EQ(in_arena.result.status, 0) << in_arena.result.err;
  make_host_program(host_program, {"w", "w.momentum_buffer", "optimizer.step",
                                   "seen", "two"});
  outcome in_host = train(host_program, more, path("host.onnx"));
  ASSERT_EQ(in_host.result.status, 0) << in_host.result.err;
  EXPECT_EQ(in_host.losses, in_arena.losses);
  EXPECT_EQ(in_host.saved, in_arena.saved);
  EXPECT_NE(in_host.saved, start.saved);
  EXPECT_EQ(untimed(in_host.result.out), untimed(in_arena.result.out));
  // The resumed run went on from the checkpoint's values: its first loss
  // is not that of the initial weights.
  make_host_program(host_program, {"w", "w.momentum_buffer", "optimizer.step",
                                   "seen", "two"});
  outcome fresh = train(host_program, {"--steps", "4"}, path("fresh.onnx"));
  ASSERT_EQ(fresh.result.status, 0) << fresh.result.err;
  ASSERT_FALSE(fresh.losses.empty());
  EXPECT_NE(in_host.losses.at(0), fresh.losses.at(0));
}

TEST_F(DriverHostArenaTest, ForwardModeUsesHostSlots) {
  auto forward_run = [&](fake_program &p, const std::string &dir) {
    p.manifest["mode"] = "forward";
    run_result result =
        run_driver(p.get(), {"--input", "x=" + path("x.npy"), "--input",
                             "y=" + path("y.npy"), "--output-dir", path(dir)});
    EXPECT_EQ(result.status, 0) << result.err;
    return read_file(path(dir + "/loss.npy"));
  };
  fake_program arena_program, host_program;
  make_sim_program(arena_program);
  std::string in_arena = forward_run(arena_program, "arena");
  std::vector<float> arena_losses = linear().losses;
  make_host_program(host_program, {"x", "y", "loss", "w", "two"});
  std::string in_host = forward_run(host_program, "host");
  EXPECT_EQ(linear().losses.size(), 3u);
  EXPECT_EQ(linear().losses, arena_losses);
  EXPECT_FALSE(in_host.empty());
  EXPECT_EQ(in_host, in_arena);
}

TEST_F(DriverHostArenaTest, ManifestErrors) {
  auto expect_error = [&](const std::string &message) {
    run_result result = run({"--steps", "1"});
    EXPECT_EQ(result.status, 2);
    EXPECT_NE(result.err.find("malformed program manifest: " + message),
              std::string::npos)
        << result.err;
  };
  make_host_program(program, {"w.momentum_buffer"});
  json &step = program.manifest["functions"]["step"];
  json &buf = step["args"][3];
  ASSERT_EQ(buf["name"], "w.momentum_buffer");
  uint64_t host_arena_bytes = step["host_arena_bytes"];
  // "space": "device" is the arena, as no space.
  step["args"][2]["space"] = "device";
  EXPECT_EQ(run({"--steps", "1"}).status, 0);
  buf["space"] = "gpu";
  expect_error("functions.step.args[3] ('w.momentum_buffer') has unknown "
               "space 'gpu' (neither 'device' nor 'host')");
  buf["space"] = 1;
  expect_error("functions.step.args[3] ('w.momentum_buffer').space is not a "
               "string");
  buf["space"] = "host";
  buf["offset"] = host_arena_bytes - 4;
  expect_error("functions.step.args[3] ('w.momentum_buffer') lies outside "
               "the " +
               std::to_string(host_arena_bytes) + "-byte host arena");
  // Within the arena, but the host arena is smaller.
  buf["offset"] = host_arena_bytes + 64;
  ASSERT_LT(host_arena_bytes + 72, linear().step.arena_bytes);
  expect_error("functions.step.args[3] ('w.momentum_buffer') lies outside "
               "the " +
               std::to_string(host_arena_bytes) + "-byte host arena");
  buf["offset"] = 64;
  ASSERT_EQ(run({"--steps", "1"}).status, 0);
  // A cpu program has no host arena, whatever its device fields say.
  program.manifest["target"] = "cpu";
  expect_error("functions.step.args[3] ('w.momentum_buffer') is in the host "
               "arena (\"space\": \"host\"), which a cpu program does not "
               "have");
  step["host_arena_bytes"] = 0;
  step["num_copies"] = 0;
  buf["offset"] = 0;
  buf["bytes"] = 0;
  buf["shape"] = json::array({0});
  expect_error("functions.step.args[3] ('w.momentum_buffer') is in the host "
               "arena (\"space\": \"host\"), which a cpu program does not "
               "have");
}

TEST_F(DriverEvalTest, HostSlotsNeedADevice) {
  // A sim predict function without a device_bytes runs on the host: it has
  // no host arena.
  program.manifest["target"] = "sim";
  json &functions = program.manifest["functions"];
  functions["step"]["device_bytes"] = classifier().step.arena_bytes;
  functions["predict"]["host_arena_bytes"] = 0;
  functions["predict"]["args"][2]["space"] = "host";
  run_result result = run({"--steps", "1"});
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find("malformed program manifest: "
                            "functions.predict.args[2] ('w') is in the host "
                            "arena (\"space\": \"host\"), but "
                            "functions.predict has no \"device_bytes\": it "
                            "runs on the host, without a host arena"),
            std::string::npos)
      << result.err;
}

TEST_F(DriverEvalTest, PredictSyncsFromHostSlots) {
  run_result cpu = run({"--steps", "3"});
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  std::vector<float> cpu_w = classifier().predict_w;
  // The step keeps w (and reads x) in its host arena; the predict function
  // runs on the host, then on a device of its own with w, x, its logits
  // and loss in its host arena.
  program.manifest["target"] = "sim";
  json &functions = program.manifest["functions"];
  functions["step"]["device_bytes"] = classifier().step.arena_bytes;
  step_placement() = place_in_host(functions["step"], {"w", "x"}, {"w"},
                                   /*in_place=*/false, classifier_step);
  program.program.step = placed_step;
  for (bool predict_on_device : {false, true}) {
    if (predict_on_device) {
      functions["predict"]["device_bytes"] = classifier().predict.arena_bytes;
      predict_placement() =
          place_in_host(functions["predict"], {"w", "x"}, {"logits", "loss"},
                        /*in_place=*/false, classifier_predict);
      program.program.predict = placed_predict;
    }
    classifier().predict_calls = 0;
    classifier().predict_w.clear();
    run_result sim = run({"--steps", "3"});
    ASSERT_EQ(sim.status, 0) << sim.err;
    EXPECT_EQ(untimed(sim.out), untimed(cpu.out));
    EXPECT_NE(untimed(sim.out).find("eval_accuracy "), std::string::npos);
    EXPECT_EQ(classifier().predict_calls, 3);
    EXPECT_EQ(classifier().predict_w, cpu_w);
  }
}

} // namespace
