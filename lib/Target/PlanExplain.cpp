//===- PlanExplain.cpp - the plan as a table for people -------------------===//
//
// See PlanExplain.h. Everything here is read from the plan document, so the
// explanation states exactly what the plan file states.
//
//===----------------------------------------------------------------------===//

#include "tidal/Target/PlanExplain.h"
#include "tidal/Support/Json.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <optional>

using namespace llvm;

namespace {

struct Op {
  int64_t position = 0;
  std::string op, name, device, stream;
  bool kernel = false;
  double startUs = 0, us = 0;
  std::optional<int64_t> recomputeOf;
  SmallVector<int64_t, 4> reads, writes;
};

struct Tensor {
  int64_t id = 0, bytes = 0, producer = 0;
  std::string name, role, space;
  const json::Array *swaps = nullptr, *recomputations = nullptr;
};

struct Plan {
  std::string model, target, function;
  std::optional<int64_t> budget;
  int64_t devicePeak = 0, hostPeak = 0, noReuse = 0;
  double stepUs = 0, stallUs = 0;
  int64_t peakPosition = 0;
  /// Host layers by cost: how many, and the predicted step without them.
  int64_t costLayers = 0;
  double costBeforeUs = 0;
  /// The optimal planner: which plan tidal-place kept ("milp" or "greedy";
  /// empty without it), both predictions, and what the MILP's solve moved.
  std::string kept;
  double milpUs = -1, greedyUs = -1;
  int64_t milpLayers = -1, milpUpdates = 0, milpStreamed = 0, milpSolves = 0;
  std::vector<Op> ops;         // by position - 1
  std::vector<Tensor> tensors; // by id
};

int64_t intOr(const json::Object &o, StringRef key, int64_t fallback = 0) {
  return o.getInteger(key).value_or(fallback);
}
double numberOr(const json::Object &o, StringRef key, double fallback = 0) {
  return o.getNumber(key).value_or(fallback);
}
std::string stringOr(const json::Object &o, StringRef key) {
  return o.getString(key).value_or("").str();
}
/// An op's kind without the dialect prefix: "gemm" for "tidal.gemm".
std::string kindOf(StringRef op) {
  op.consume_front("tidal.");
  return op.str();
}

bool parsePlan(StringRef text, Plan &plan, json::Value &storage,
               std::string &error) {
  Expected<json::Value> parsed = mlir::tidal::parseJsonBounded(text);
  if (!parsed) {
    error = "the plan is not JSON: " + toString(parsed.takeError());
    return false;
  }
  storage = std::move(*parsed);
  const json::Object *root = storage.getAsObject();
  const json::Object *predicted = root ? root->getObject("predicted") : nullptr;
  const json::Object *baseline = root ? root->getObject("baseline") : nullptr;
  const json::Array *schedule = root ? root->getArray("schedule") : nullptr;
  const json::Array *tensors = root ? root->getArray("tensors") : nullptr;
  if (!predicted || !baseline || !schedule || !tensors) {
    error = "the plan lacks 'predicted', 'baseline', 'schedule' or 'tensors'";
    return false;
  }
  plan.model = stringOr(*root, "model");
  plan.target = stringOr(*root, "target");
  plan.function = stringOr(*root, "function");
  plan.budget = root->getInteger("budget_bytes");
  plan.devicePeak = intOr(*predicted, "peak_device_bytes");
  plan.hostPeak = intOr(*predicted, "peak_host_bytes");
  plan.stepUs = numberOr(*predicted, "step_time_us");
  plan.stallUs = numberOr(*predicted, "copy_stall_us");
  if (const json::Object *byCost = root->getObject("host_layers_by_cost")) {
    plan.costLayers = intOr(*byCost, "layers");
    plan.costBeforeUs = numberOr(*byCost, "before_us");
  }
  if (const json::Object *planner = root->getObject("planner")) {
    plan.kept = stringOr(*planner, "kept");
    plan.milpUs = numberOr(*planner, "milp_us", -1);
    plan.greedyUs = numberOr(*planner, "greedy_us", -1);
    if (const json::Object *milp = planner->getObject("milp")) {
      plan.milpLayers = intOr(*milp, "host_layers", -1);
      plan.milpUpdates = intOr(*milp, "host_updates");
      plan.milpStreamed = intOr(*milp, "streamed");
      plan.milpSolves = intOr(*milp, "solves");
    }
  }
  plan.noReuse = intOr(*baseline, plan.target == "cpu" ? "peak_host_bytes"
                                                       : "peak_device_bytes");
  if (const json::Array *live = root->getArray("live_bytes")) {
    int64_t most = -1;
    for (auto [i, v] : llvm::enumerate(*live))
      if (int64_t bytes = v.getAsInteger().value_or(0); bytes > most)
        most = bytes, plan.peakPosition = i;
  }
  for (const json::Value &v : *schedule) {
    const json::Object *o = v.getAsObject();
    if (!o)
      continue;
    Op op;
    op.position = intOr(*o, "position");
    op.op = stringOr(*o, "op");
    op.name = stringOr(*o, "name");
    op.device = stringOr(*o, "device");
    op.stream = stringOr(*o, "stream");
    op.kernel = o->getBoolean("kernel").value_or(false);
    op.startUs = numberOr(*o, "start_us");
    op.us = numberOr(*o, "duration_us");
    op.recomputeOf = o->getInteger("recompute_of");
    for (StringRef key : {"reads", "writes"})
      if (const json::Array *ids = o->getArray(key))
        for (const json::Value &id : *ids)
          (key == "reads" ? op.reads : op.writes)
              .push_back(id.getAsInteger().value_or(-1));
    plan.ops.push_back(std::move(op));
  }
  for (const json::Value &v : *tensors) {
    const json::Object *o = v.getAsObject();
    if (!o)
      continue;
    Tensor t;
    t.id = intOr(*o, "id");
    t.bytes = intOr(*o, "bytes");
    t.name = stringOr(*o, "name");
    t.role = stringOr(*o, "role");
    t.producer = intOr(*o, "producer");
    if (const json::Object *home = o->getObject("home"))
      t.space = stringOr(*home, "space");
    t.swaps = o->getArray("swaps");
    t.recomputations = o->getArray("recomputations");
    plan.tensors.push_back(std::move(t));
  }
  // Byte counts are summed and subtracted below: keep them to what a plan
  // can hold (JSON's exact integers), so that the arithmetic cannot
  // overflow.
  const int64_t kMaxBytes = int64_t(1) << 53;
  auto badBytes = [&](int64_t b) { return b < 0 || b > kMaxBytes; };
  bool bad = badBytes(plan.devicePeak) || badBytes(plan.hostPeak) ||
             badBytes(plan.noReuse);
  for (const Tensor &t : plan.tensors)
    bad = bad || badBytes(t.bytes);
  if (bad) {
    error = "the plan has a byte count outside [0, 2^53]";
    return false;
  }
  return true;
}

const Op *opAt(const Plan &plan, int64_t position) {
  if (position < 1 || position > static_cast<int64_t>(plan.ops.size()))
    return nullptr;
  return &plan.ops[position - 1];
}

/// The stall of the wait at `position` (its time on the compute stream).
double waitUs(const Plan &plan, std::optional<int64_t> position) {
  const Op *op = position ? opAt(plan, *position) : nullptr;
  return op && op->op == "tidal.wait" ? op->us : 0.0;
}

std::string opLabel(const Plan &plan, int64_t position) {
  const Op *op = opAt(plan, position);
  if (!op)
    return "op " + std::to_string(position);
  return "op " + std::to_string(position) + " (" + kindOf(op->op) +
         (op->name.empty() ? "" : " " + op->name) + ")";
}

/// Whether `t`'s offloads come back (a swap), rather than feed host ops.
bool isSwap(const Tensor &t) {
  for (const json::Value &s : *t.swaps)
    if (const json::Object *o = s.getAsObject())
      if (const json::Array *back = o->getArray("prefetches");
          back && !back->empty())
        return true;
  return false;
}

bool isUpdate(StringRef op) {
  return op.contains("_update") || op.starts_with("tidal.onnx_");
}

} // namespace

bool mlir::tidal::explainPlan(StringRef planJson, StringRef allDeviceJson,
                              std::string &text, std::string &error) {
  Plan plan, all;
  json::Value planStorage(nullptr), allStorage(nullptr);
  if (!parsePlan(planJson, plan, planStorage, error))
    return false;
  bool compare = !allDeviceJson.empty();
  if (compare && !parsePlan(allDeviceJson, all, allStorage, error))
    return false;

  raw_string_ostream os(text);
  bool onDevice = plan.target != "cpu";
  os << "Plan of " << plan.model << ": @" << plan.function << " on the "
     << plan.target << " target";
  if (plan.budget)
    os << ", device budget " << *plan.budget << " bytes";
  os << "\n\n";
  os << format("  %-24s %16s %16s %16s\n", (const char *)"",
               (const char *)"this plan", compare ? "all-device" : "",
               (const char *)"no reuse");
  auto row = [&](const char *what, std::string mine, std::string theirs,
                 std::string base) {
    os << format("  %-24s %16s %16s %16s\n", what, mine.c_str(), theirs.c_str(),
                 base.c_str());
  };
  auto bytes = [](int64_t b) { return std::to_string(b); };
  auto us = [](double v) {
    std::string s;
    raw_string_ostream(s) << format("%.1f", v);
    return s;
  };
  if (onDevice) {
    row("device peak (bytes)", bytes(plan.devicePeak),
        compare ? bytes(all.devicePeak) : "", bytes(plan.noReuse));
    row("host peak (bytes)", bytes(plan.hostPeak),
        compare ? bytes(all.hostPeak) : "", "");
  } else {
    row("peak (bytes)", bytes(plan.hostPeak), "", bytes(plan.noReuse));
  }
  row("step time (us)", us(plan.stepUs), compare ? us(all.stepUs) : "", "");
  if (onDevice)
    row("copy stall (us)", us(plan.stallUs), compare ? us(all.stallUs) : "",
        "");
  if (onDevice)
    os << "  The device peak is at " << opLabel(plan, plan.peakPosition)
       << ".\n";
  if (compare)
    os << "  all-device: the same step with every op and tensor on the "
          "device and no budget.\n";
  os << "  no reuse: every tensor kept for the whole step.\n";
  if (!onDevice) {
    os << "\nThe cpu target runs every op on the host CPU in one arena, "
          "reused as tensors die; nothing is swapped, streamed or "
          "recomputed.\n";
  }

  // What each mechanism did.
  // Any int64 may be an id in a malformed plan: a std::map, as DenseMap
  // reserves two keys.
  std::map<int64_t, SmallVector<int64_t, 2>> prefetchesOf; // host id -> ops
  int64_t hostOps = 0, hostUpdates = 0, hostLayers = 0;
  double hostUs = 0;
  for (const Op &op : plan.ops) {
    if (op.op == "tidal.prefetch" && !op.reads.empty())
      prefetchesOf[op.reads.front()].push_back(op.position);
    if (op.kernel && op.device == "host") {
      ++hostOps, hostUs += op.us;
      hostUpdates += isUpdate(op.op);
      hostLayers += !isUpdate(op.op);
    }
  }
  int64_t streamed = 0, refetches = 0, hostState = 0, swapped = 0,
          recomputed = 0, sent = 0;
  uint64_t streamedBytes = 0, hostStateBytes = 0, swappedBytes = 0,
           recomputedBytes = 0, sentBytes = 0;
  double swapStall = 0, cloneUs = 0, sentStall = 0;
  for (const Tensor &t : plan.tensors) {
    bool arg = !t.role.empty();
    if (arg && t.space == "host" && onDevice) {
      if (prefetchesOf.count(t.id)) {
        ++streamed, streamedBytes += t.bytes;
        refetches += prefetchesOf[t.id].size() - 1;
      } else if (t.role == "optimizer_state" || t.role == "param") {
        ++hostState, hostStateBytes += t.bytes;
      }
    }
    if (t.swaps && !t.swaps->empty() && !isSwap(t)) {
      ++sent, sentBytes += t.bytes;
      for (const json::Value &s : *t.swaps)
        if (const json::Object *o = s.getAsObject())
          sentStall += waitUs(plan, o->getInteger("offload_wait"));
    } else if (t.swaps && !t.swaps->empty()) {
      ++swapped, swappedBytes += t.bytes;
      for (const json::Value &s : *t.swaps)
        if (const json::Object *o = s.getAsObject()) {
          swapStall += waitUs(plan, o->getInteger("offload_wait"));
          if (const json::Array *back = o->getArray("prefetches"))
            for (const json::Value &p : *back)
              if (const json::Object *po = p.getAsObject())
                swapStall += waitUs(plan, po->getInteger("prefetch_wait"));
          if (auto host = o->getInteger("host_tensor"))
            if (auto it = prefetchesOf.find(*host); it != prefetchesOf.end())
              refetches += it->second.size() - 1;
        }
    }
    if (t.recomputations && !t.recomputations->empty()) {
      ++recomputed, recomputedBytes += t.bytes;
      for (const json::Value &r : *t.recomputations)
        if (const json::Object *o = r.getAsObject())
          if (const Op *clone = opAt(plan, intOr(*o, "position", -1)))
            cloneUs += clone->us;
    }
  }
  if (onDevice) {
    os << "\nWhat the planner did";
    if (compare)
      os << " (against the all-device plan: "
         << format("%+.1f us", plan.stepUs - all.stepUs) << " per step, "
         << format("%+lld", (long long)(plan.devicePeak - all.devicePeak))
         << " bytes of device peak)";
    os << "\n";
    if (!plan.kept.empty()) {
      os << "  planner                kept "
         << (plan.kept == "milp" ? "the MILP's" : "the greedy planner's")
         << " plan";
      if (plan.milpUs >= 0 && plan.greedyUs >= 0)
        os << " (predicted: MILP " << us(plan.milpUs) << " us, greedy "
           << us(plan.greedyUs) << " us)";
      os << "\n";
      if (plan.kept == "milp" && plan.milpLayers >= 0) {
        os << "    its solve placed " << plan.milpLayers << " layers and "
           << plan.milpUpdates + plan.milpStreamed
           << " optimizer updates on the host (" << plan.milpStreamed
           << " parameters streamed) with the swaps and recomputations";
        if (plan.milpSolves > 1)
          os << ", the best of " << plan.milpSolves
             << " choices applied and predicted";
        os << "\n";
      }
    }
    auto line = [&](const char *what, int64_t count, std::string detail) {
      os << format("  %-22s %6lld  ", what, (long long)count) << detail << "\n";
    };
    line("streamed parameters", streamed,
         std::to_string(streamedBytes) +
             " bytes in host memory, updated there, copied in before use");
    line("host optimizer state", hostState,
         std::to_string(hostStateBytes) + " bytes in host memory");
    line("host ops", hostOps,
         std::to_string(hostUpdates) + " optimizer updates, " +
             std::to_string(hostLayers) + " layers; " + us(hostUs) +
             " us on the host stream");
    if (plan.costLayers)
      os << "    of which " << plan.costLayers
         << " by cost: the step without them, with the swaps or "
            "recomputations they replace, was predicted at "
         << us(plan.costBeforeUs) << " us\n";
    line("sent to host ops", sent,
         std::to_string(sentBytes) + " bytes offloaded for host ops; " +
             us(sentStall) + " us of stall at their waits");
    line("swapped tensors", swapped,
         std::to_string(swappedBytes) + " bytes; " + us(swapStall) +
             " us of stall at their waits");
    line("refetched copies", refetches,
         "device copies of host values dropped and prefetched again");
    line("recomputed tensors", recomputed,
         std::to_string(recomputedBytes) + " bytes; " + us(cloneUs) +
             " us of clones");
  }

  // Each tensor that is not simply on the device, and why.
  if (onDevice) {
    os << "\nTensors not simply on the device\n";
    os << "      id        bytes  where      name                             "
          "why\n";
    bool any = false;
    for (const Tensor &t : plan.tensors) {
      std::string where, why;
      bool arg = !t.role.empty();
      if (onDevice && arg && t.space == "host") {
        auto it = prefetchesOf.find(t.id);
        int64_t updatedBy = 0;
        for (const Op &op : plan.ops)
          if (op.device == "host" && isUpdate(op.op) &&
              llvm::is_contained(op.reads, t.id))
            updatedBy = op.position;
        if (it != prefetchesOf.end()) {
          where = "streamed";
          why = "lives in host memory";
          if (updatedBy)
            why += ", updated there by " + opLabel(plan, updatedBy);
          why += "; copied to the device at";
          for (int64_t p : it->second)
            why += " op " + std::to_string(p);
        } else {
          where = "host";
          std::string readers;
          for (const Op &op : plan.ops)
            if (op.device == "host" && op.kernel && !isUpdate(op.op) &&
                llvm::is_contained(op.reads, t.id))
              readers +=
                  (readers.empty() ? "" : ", ") + opLabel(plan, op.position);
          if (!readers.empty())
            why = "read only on the host, by " + readers +
                  (updatedBy ? "; updated there by " + opLabel(plan, updatedBy)
                             : std::string());
          else
            why = updatedBy ? "read only by " + opLabel(plan, updatedBy) +
                                  " on the host (ZeRO-Offload)"
                            : "read only on the host";
        }
      } else if (const Op *def = opAt(plan, t.producer);
                 onDevice && !arg && def && def->device == "host" &&
                 def->kernel && !isUpdate(def->op)) {
        // A host layer's result.
        where = "host";
        why = "computed on the host by " + opLabel(plan, t.producer);
        if (auto it = prefetchesOf.find(t.id); it != prefetchesOf.end()) {
          why += "; copied to the device at";
          for (int64_t p : it->second)
            why += " op " + std::to_string(p);
        }
      } else if (t.swaps && !t.swaps->empty() && !isSwap(t)) {
        where = "to host";
        double stall = 0;
        why = "offloaded at op";
        for (const json::Value &s : *t.swaps)
          if (const json::Object *o = s.getAsObject()) {
            why += " " + std::to_string(intOr(*o, "offload"));
            stall += waitUs(plan, o->getInteger("offload_wait"));
          }
        why += " for the host op that reads it; " + us(stall) + " us stall";
      } else if (t.swaps && !t.swaps->empty()) {
        where = "swapped";
        for (const json::Value &s : *t.swaps) {
          const json::Object *o = s.getAsObject();
          if (!o)
            continue;
          double stall = waitUs(plan, o->getInteger("offload_wait"));
          why += "offloaded at op " + std::to_string(intOr(*o, "offload")) +
                 " (freed at op " + std::to_string(intOr(*o, "offload_wait")) +
                 ")";
          if (const json::Array *back = o->getArray("prefetches"))
            for (const json::Value &p : *back)
              if (const json::Object *po = p.getAsObject()) {
                stall += waitUs(plan, po->getInteger("prefetch_wait"));
                why += ", prefetched at op " +
                       std::to_string(intOr(*po, "prefetch")) + " for op " +
                       std::to_string(intOr(*po, "prefetch_wait"));
              }
          why += "; " + us(stall) + " us stall";
        }
      } else if (t.recomputations && !t.recomputations->empty()) {
        where = "recomputed";
        double cost = 0;
        why = "dropped after its last use before the peak, recomputed at";
        for (const json::Value &r : *t.recomputations)
          if (const json::Object *o = r.getAsObject()) {
            int64_t p = intOr(*o, "position", -1);
            why += " op " + std::to_string(p);
            if (const Op *clone = opAt(plan, p))
              cost += clone->us;
          }
        why += " (" + us(cost) + " us)";
      } else {
        continue;
      }
      any = true;
      // Unnamed values go by the op that makes them.
      std::string name = t.name;
      if (StringRef(name).starts_with("%"))
        if (const Op *op = opAt(plan, t.producer))
          name = kindOf(op->op) + " " + op->name;
      os << format("  %6lld %12lld  %-10s %-32s ", (long long)t.id,
                   (long long)t.bytes, where.c_str(), name.c_str())
         << why << "\n";
    }
    if (!any)
      os << "  none: every tensor stays in device memory while live\n";
  }

  // Every op, where it runs.
  os << "\nOps in schedule order\n";
  os << "     pos  where  stream             start_us        us  op         "
        "                  name\n";
  for (const Op &op : plan.ops) {
    std::string kind = kindOf(op.op);
    if (op.recomputeOf)
      kind += " (recomputes op " + std::to_string(*op.recomputeOf) + ")";
    os << format("  %6lld  %-6s %-15s %11.1f %9.1f  %-28s %s\n",
                 (long long)op.position, op.device.c_str(), op.stream.c_str(),
                 op.startUs, op.us, kind.c_str(), op.name.c_str());
  }
  return true;
}
