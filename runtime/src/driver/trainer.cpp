// trainer.cpp - the training loop: batches, steps, epochs, evaluation,
// --log, --save, --trace and the summary on stdout.
#include "checkpoint.h"
#include "data.h"
#include "distributed.h"
#include "error.h"
#include "file_util.h"
#include "nonfinite_guard.h"
#include "progress.h"
#include "session.h"
#include "step_log.h"
#include "thread_adapter.h"
#include "trace.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>

namespace tidalrt_driver {

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start)
      .count();
}

// --eval-input: held-out data for the predict function.
struct evaluation {
  data_set data;
  // The predict result scored for accuracy (cross-entropy only), and the
  // class labels it is compared with.
  const tensor_slot *output = nullptr;
  const data_input *label = nullptr;
  // The slot of a `label` file that the predict function does not take.
  std::unique_ptr<tensor_slot> extra_label;
};

struct eval_result {
  double loss = NAN;
  double accuracy = NAN;
};

evaluation set_up_evaluation(const session &s) {
  const manifest &m = s.info;
  evaluation eval;
  if (!m.predict)
    fail_input("--eval-input: this program has no predict function to "
               "evaluate with");
  const function_info &predict = *m.predict;
  std::vector<const tensor_slot *> slots = predict.data_inputs();
  if (m.loss == "cross-entropy") {
    // The first output (or, if none is marked so, the first non-loss
    // result) holds the class scores.
    for (const tensor_slot &result : predict.results)
      if (result.role == "output") {
        eval.output = &result;
        break;
      }
    for (const tensor_slot &result : predict.results)
      if (!eval.output && result.role != "loss")
        eval.output = &result;
    const tensor_slot *out = eval.output;
    if (out && out->shape.size() >= 2 &&
        (out->type == TIDALRT_ELEMENT_TYPE_F32 ||
         out->type == TIDALRT_ELEMENT_TYPE_F64)) {
      // Labels are [N, d2, d3, ...] for an output [N, C, d2, d3, ...].
      std::vector<int64_t> label_shape = {m.batch_size};
      label_shape.insert(label_shape.end(), out->shape.begin() + 2,
                         out->shape.end());
      const tensor_slot *label = predict.find_arg("label");
      bool wants_label = false;
      for (const auto &binding : s.opts.eval_inputs)
        wants_label = wants_label || binding.first == "label";
      if (!label && wants_label) {
        eval.extra_label = std::make_unique<tensor_slot>();
        tensor_slot &slot = *eval.extra_label;
        slot.name = "label";
        slot.role = "input";
        slot.type = TIDALRT_ELEMENT_TYPE_I64;
        slot.shape = label_shape;
        slot.bytes = slot.element_count() * sizeof(int64_t);
        slots.push_back(&slot);
      } else if (!label || label->role != "input" ||
                 label->shape != label_shape ||
                 (label->type != TIDALRT_ELEMENT_TYPE_I64 &&
                  label->type != TIDALRT_ELEMENT_TYPE_I32)) {
        eval.output = nullptr;
      }
    } else {
      eval.output = nullptr;
    }
  }
  eval.data = load_data(slots, s.opts.eval_inputs, "--eval-input", m, nullptr,
                        m.batch_size, /*need_full_batch=*/true);
  if (eval.output)
    eval.label = eval.data.find("label");
  return eval;
}

int64_t label_at(const data_input &label, uint64_t index) {
  const void *data = tidalrt_array_const_data(label.array.get());
  if (label.slot->type == TIDALRT_ELEMENT_TYPE_I32)
    return static_cast<const int32_t *>(data)[index];
  return static_cast<const int64_t *>(data)[index];
}

// Counts the rows of `count` samples (starting at sample `first`) whose
// argmax over axis 1 of the output equals the label.
uint64_t count_correct(const evaluation &eval, const uint8_t *output,
                       uint64_t first, uint64_t count) {
  const tensor_slot &out = *eval.output;
  uint64_t classes = static_cast<uint64_t>(out.shape[1]);
  uint64_t inner = 1;
  for (size_t i = 2; i < out.shape.size(); ++i)
    inner *= static_cast<uint64_t>(out.shape[i]);
  bool f64 = out.type == TIDALRT_ELEMENT_TYPE_F64;
  auto value = [&](uint64_t index) {
    return f64 ? reinterpret_cast<const double *>(output)[index]
               : static_cast<double>(
                     reinterpret_cast<const float *>(output)[index]);
  };
  uint64_t correct = 0;
  for (uint64_t b = 0; b < count; ++b)
    for (uint64_t r = 0; r < inner; ++r) {
      uint64_t base = b * classes * inner + r;
      uint64_t best = 0;
      double best_value = value(base);
      for (uint64_t c = 1; c < classes; ++c) {
        double v = value(base + c * inner);
        if (v > best_value || (std::isnan(v) && !std::isnan(best_value))) {
          best = c;
          best_value = v;
        }
      }
      if (label_at(*eval.label, (first + b) * inner + r) ==
          static_cast<int64_t>(best))
        ++correct;
    }
  return correct;
}

eval_result evaluate(const evaluation &eval, program_runner &runner,
                     uint64_t step) {
  const manifest &m = runner.info();
  const function_info &predict = *m.predict;
  runner.sync_predict_from_step();
  function_memory &memory = runner.predict_memory();
  const tensor_slot *loss = predict.loss_result();
  uint64_t batch = static_cast<uint64_t>(m.batch_size);
  uint64_t samples = eval.data.samples;
  double loss_sum = 0;
  uint64_t full_batches = 0, correct = 0;
  std::vector<uint64_t> rows(batch);
  for (uint64_t first = 0; first < samples; first += batch) {
    uint64_t count = std::min(batch, samples - first);
    for (uint64_t i = 0; i < count; ++i)
      rows[i] = first + i;
    for (const data_input &input : eval.data.inputs)
      if (input.slot != eval.extra_label.get())
        memory.write_rows(input, rows.data(), count, m.batch_size);
    runner.run_predict(step);
    // A padded batch's loss would count the padding; only full batches
    // enter the mean loss.
    if (loss && count == batch) {
      float value;
      memory.read(*loss, 0, &value, sizeof(value));
      loss_sum += value;
      ++full_batches;
    }
    if (eval.output && eval.label)
      correct += count_correct(eval, memory.view(*eval.output), first, count);
  }
  eval_result result;
  if (full_batches)
    result.loss = loss_sum / static_cast<double>(full_batches);
  if (eval.output && eval.label && samples) {
    uint64_t inner = eval.label->slot->element_count() / batch;
    result.accuracy =
        static_cast<double>(correct) / static_cast<double>(samples * inner);
  }
  return result;
}

// Throws (exit 1) rather than write a non-finite value to `what`.
void refuse_nonfinite(const slot_values &values, const std::string &what) {
  nonfinite_value bad = find_nonfinite(values);
  if (bad.slot)
    fail_input("not writing " + what + ": '" + bad.slot->name + "' (" +
               bad.slot->role + ") holds " + bad.value + " at element " +
               std::to_string(bad.index) +
               " (--check-finite state stops a run at the step that makes "
               "it so)");
}

std::string describe_eval(const eval_result &result) {
  std::string text;
  if (!std::isnan(result.loss))
    text += " eval_loss " + text_number(result.loss);
  if (!std::isnan(result.accuracy))
    text += " eval_accuracy " + text_number(result.accuracy);
  return text;
}

} // namespace

int run_training(const session &s) {
  const manifest &m = s.info;
  const options &o = s.opts;
  data_set data = load_data(m.step.data_inputs(), o.inputs, "--input", m,
                            &s.program, m.global_batch_size(),
                            /*need_full_batch=*/true);
  std::unique_ptr<evaluation> eval;
  if (!o.eval_inputs.empty())
    eval = std::make_unique<evaluation>(set_up_evaluation(s));
  // A data-parallel rank other than 0 writes no file; it takes part in the
  // gathers of every save and checkpoint.
  const bool writes = !o.follower;
  if (!o.save.empty() && writes)
    check_output_path("--save", o.save);
  if (!o.trace.empty())
    check_output_path("--trace", o.trace);
  if (!o.log.empty())
    check_output_path("--log", o.log);
  trace_recorder trace(!o.trace.empty());
  // A data-parallel rank's trace: its process, and the all-reduces of its
  // communication thread on a track of their own.
  const bool trace_comm =
      trace.enabled() && s.comm && tidalrt_comm_size(s.comm) > 1;
  if (trace_comm) {
    trace.set_rank(tidalrt_comm_rank(s.comm));
    tidalrt_comm_record_events(s.comm, 1);
  }
  auto trace_collectives = [&] {
    tidalrt_comm_event_t events[64];
    while (uint64_t n = tidalrt_comm_take_events(s.comm, events, 64))
      for (uint64_t k = 0; k < n; ++k)
        trace.collective("all-reduce " + std::to_string(events[k].bytes) + " B",
                         events[k].start_seconds, events[k].end_seconds,
                         events[k].bytes);
  };

  loaded_program loaded = load_program(s, trace, !s.opts.eval_inputs.empty());
  program_runner &runner = *loaded.runner;

  // A data-parallel run goes through global batches (every rank the same
  // order, --shuffle included); rank r takes rows [r * batch, (r + 1) *
  // batch) of each.
  uint64_t batch = static_cast<uint64_t>(m.global_batch_size());
  const uint64_t rank_batch = static_cast<uint64_t>(m.batch_size);
  const uint64_t first_row =
      s.comm ? static_cast<uint64_t>(tidalrt_comm_rank(s.comm)) * rank_batch
             : 0;
  // A program without data inputs sees one (empty) batch per epoch.
  uint64_t samples = data.inputs.empty() ? batch : data.samples;
  batch_order order(samples, batch, o.shuffle, o.seed);
  uint64_t per_epoch = order.batches_per_epoch();
  uint64_t total = per_epoch;
  if (o.steps)
    total = *o.steps;
  else if (o.epochs) {
    if (*o.epochs > UINT64_MAX / per_epoch)
      fail_input("--epochs " + std::to_string(*o.epochs) + " is too many");
    total = *o.epochs * per_epoch;
  }
  // --steps and --epochs count from the step the run began at, so that a
  // resumed run ends where the uninterrupted one would.
  uint64_t first_step = loaded.steps_done;
  if (total > UINT64_MAX - loaded.run_first_step)
    fail_input("--steps " + std::to_string(total) + " is too many");
  uint64_t run_end = loaded.run_first_step + total;
  total = run_end > first_step ? run_end - first_step : 0;
  if (!loaded.resumed_from.empty() && !o.follower) {
    std::fprintf(s.err, "%s: resuming from %s (step %llu of %llu)\n",
                 s.program_name.c_str(), loaded.resumed_from.c_str(),
                 static_cast<unsigned long long>(first_step),
                 static_cast<unsigned long long>(run_end));
    std::fflush(s.err);
  }
  const bool checkpointing = !o.checkpoint_dir.empty();
  std::unique_ptr<checkpoint_writer> checkpoints;
  if (checkpointing && writes)
    checkpoints = std::make_unique<checkpoint_writer>(
        s, o.checkpoint_dir, o.checkpoint_keep, loaded.run_first_step);

  const tensor_slot &loss_slot = *m.step.loss_result();
  function_memory &memory = runner.step_memory();
  uint64_t host_bytes = runner.host_bytes();
  // A resumed run keeps the log of the steps up to its checkpoint and
  // drops those that the killed run did after it.
  step_log log(o.log, loaded.resumed_from.empty()
                          ? std::optional<uint64_t>()
                          : std::optional<uint64_t>(first_step));
  progress_bar progress(s.err, !o.quiet, total, "steps");
  progress.set_samples_per_unit(batch);

  double step_ms_sum = 0;
  std::deque<double> recent; // the last 10 losses
  double epoch_sum = 0, last_epoch_mean = NAN;
  // Steps of the epoch so far, and those of them that stand (not skipped).
  uint64_t epoch_done = 0, epoch_steps = 0;
  eval_result last_eval;
  bool eval_done_for_last_step = false;
  uint64_t step = first_step;

  auto end_epoch = [&](uint64_t epoch) {
    last_epoch_mean = epoch_sum / static_cast<double>(epoch_steps);
    std::string line = "epoch " + std::to_string(epoch + 1) + " mean_loss " +
                       text_number(last_epoch_mean);
    if (eval) {
      double start = trace.now_us();
      last_eval = evaluate(*eval, runner, step + 1);
      trace.complete("eval", "eval", start, trace.now_us() - start);
      line += describe_eval(last_eval);
    }
    progress.clear();
    std::fprintf(s.out, "%s\n", line.c_str());
    std::fflush(s.out);
    epoch_sum = 0;
    epoch_steps = 0;
    epoch_done = 0;
  };

  nonfinite_guard guard(s, memory);
  uint64_t last_checkpoint = UINT64_MAX;
  // Values are checked before they replace a checkpoint: a run never
  // writes non-finite weights over good ones.
  // The values to write: a sharded optimizer's state gathered from every
  // rank.
  std::deque<std::vector<uint8_t>> copies;
  std::deque<tensor_slot> whole;
  auto values_to_write = [&]() {
    copies.clear();
    whole.clear();
    return s.comm ? gathered_values(s.comm, m, memory, copies, whole)
                  : persistent_values(m, memory, copies);
  };
  auto write_checkpoint = [&](uint64_t steps_done) {
    double start = trace.now_us();
    slot_values values = values_to_write();
    refuse_nonfinite(values,
                     "the checkpoint of step " + std::to_string(steps_done));
    if (checkpoints)
      checkpoints->write(*loaded.model, values, steps_done);
    last_checkpoint = steps_done;
    trace.complete("checkpoint", "save", start, trace.now_us() - start);
  };

  // --threads auto: the count follows the load (thread_adapter.h).
  std::optional<thread_adapter> governor;
  if (s.adaptive_threads)
    governor.emplace(s.threads);
  int threads = s.threads;
  double thread_steps = 0; // the sum of every step's thread count
  trace.threads(trace.now_us(), threads);
  auto adapt_threads = [&] {
    double start = trace.now_us();
    if (!governor->after_step(runner))
      return;
    threads = governor->threads();
    trace.complete("threads " + std::to_string(threads), "threads", start,
                   trace.now_us() - start);
    trace.threads(trace.now_us(), threads);
  };

  auto loop_start = clock_type::now();
  try {
    for (uint64_t i = 0; i < total; ++i) {
      step = first_step + i;
      double trace_start = trace.now_us();
      trace.host_bytes(trace_start, host_bytes);
      auto start = clock_type::now();
      const std::vector<uint64_t> &rows = order.rows(step);
      for (const data_input &input : data.inputs)
        memory.write_rows(input, rows.data() + first_row, rank_batch,
                          m.batch_size);
      guard.before_step();
      runner.run_step(step);
      float loss;
      memory.read(loss_slot, 0, &loss, sizeof(loss));
      double ms = ms_since(start);
      // The span from the trace's own clock, read at both ends: it starts
      // before the host_bytes counter and ends after the step, so every
      // event of the step (its all-reduces) lies inside it.
      trace.complete("step " + std::to_string(step + 1), "step", trace_start,
                     trace.now_us() - trace_start,
                     "\"loss\": " + json_number(loss));
      if (trace_comm)
        trace_collectives();
      step_ms_sum += ms;
      const device_figures &figures = runner.step_device_figures();
      log.write(step + 1, loss, ms, host_bytes, figures.peak_bytes,
                figures.bytes_to_host, figures.bytes_to_device,
                figures.copy_seconds, figures.copy_stall_seconds, threads);
      thread_steps += threads;
      if (governor)
        adapt_threads();
      if (!guard.after_step(step, loss))
        progress.clear();
      else {
        recent.push_back(loss);
        if (recent.size() > 10)
          recent.pop_front();
        epoch_sum += loss;
        ++epoch_steps;
      }
      ++epoch_done;
      eval_done_for_last_step = false;
      bool epoch_ends = o.epochs && (step + 1) % per_epoch == 0;
      if (epoch_ends) {
        end_epoch(step / per_epoch);
        eval_done_for_last_step = true;
      }
      if (checkpointing &&
          ((o.checkpoint_every && (step + 1) % *o.checkpoint_every == 0) ||
           (!o.checkpoint_every && epoch_ends)))
        write_checkpoint(step + 1);
      if (o.epochs)
        progress.set_label("epoch " +
                           std::to_string((step + 1) / per_epoch +
                                          ((step + 1) % per_epoch ? 1 : 0)) +
                           "/" + std::to_string(run_end / per_epoch));
      progress.update(i + 1, loss);
    }
    // A resumed run that started mid-epoch ends mid-epoch too.
    if (o.epochs && epoch_done) {
      end_epoch(step / per_epoch);
      eval_done_for_last_step = true;
    }
    if (eval && !eval_done_for_last_step) {
      double start = trace.now_us();
      last_eval = evaluate(*eval, runner, first_step + total);
      trace.complete("eval", "eval", start, trace.now_us() - start);
    }
  } catch (const driver_error &e) {
    // The timeline up to a runtime fault helps to find it.
    if (e.exit_status() == EXIT_RUNTIME_FAULT && trace.enabled()) {
      progress.clear();
      try {
        trace.write(o.trace, s.program_name);
      } catch (const driver_error &) {
      }
    }
    throw;
  }
  double loop_seconds = ms_since(loop_start) / 1000;
  progress.clear();
  log.close();

  uint64_t steps_done = first_step + total;
  if (checkpointing && last_checkpoint != steps_done)
    write_checkpoint(steps_done);
  if (!o.save.empty()) {
    double start = trace.now_us();
    slot_values values = values_to_write();
    refuse_nonfinite(values, "--save " + o.save);
    if (writes)
      loaded.model->save(values, steps_done, o.save, o.save_external_data);
    trace.complete("save", "save", start, trace.now_us() - start);
  }
  if (trace.enabled())
    trace.write(o.trace, s.program_name);

  double final_loss = NAN;
  if (o.epochs && total) {
    final_loss = last_epoch_mean;
  } else if (!recent.empty()) {
    double sum = 0;
    for (double loss : recent)
      sum += loss;
    final_loss = sum / static_cast<double>(recent.size());
  }
  std::fprintf(s.out, "steps %llu\n", static_cast<unsigned long long>(total));
  std::fprintf(s.out, "steps_done %llu\n",
               static_cast<unsigned long long>(steps_done));
  std::fprintf(s.out, "final_loss %s\n", text_number(final_loss).c_str());
  if (guard.skipping())
    std::fprintf(s.out, "skipped_steps %llu\n",
                 static_cast<unsigned long long>(guard.skipped()));
  if (checkpoints)
    std::fprintf(s.out, "checkpoints %llu\n",
                 static_cast<unsigned long long>(checkpoints->written()));
  std::fprintf(
      s.out, "mean_step_ms %s\n",
      text_number(total ? step_ms_sum / static_cast<double>(total) : NAN)
          .c_str());
  std::fprintf(
      s.out, "samples_per_s %s\n",
      text_number(loop_seconds > 0
                      ? static_cast<double>(total * batch) / loop_seconds
                      : NAN)
          .c_str());
  if (governor && total) {
    // --threads auto: the mean team size over the steps, and how often it
    // changed.
    std::fprintf(s.out, "threads_mean %s\nthread_changes %llu\n",
                 text_number(thread_steps / static_cast<double>(total)).c_str(),
                 static_cast<unsigned long long>(governor->changes()));
  }
  if (s.comm && tidalrt_comm_size(s.comm) > 1 && total) {
    // The gradient all-reduce: its time per step on this rank's
    // communication thread, the part the step waited for, and the share
    // the backward pass hid.
    tidalrt_comm_stats_t comm;
    tidalrt_comm_stats(s.comm, &comm);
    double steps = static_cast<double>(total);
    std::fprintf(s.out, "comm_ms_per_step %s\n",
                 text_number(comm.busy_seconds * 1000 / steps).c_str());
    std::fprintf(s.out, "comm_wait_ms_per_step %s\n",
                 text_number(comm.wait_seconds * 1000 / steps).c_str());
    std::fprintf(s.out, "comm_hidden %s\n",
                 text_number(comm.busy_seconds > 0
                                 ? std::max(0.0, 1 - comm.wait_seconds /
                                                         comm.busy_seconds)
                                 : NAN)
                     .c_str());
  }
  if (eval) {
    if (!std::isnan(last_eval.loss))
      std::fprintf(s.out, "eval_loss %s\n",
                   text_number(last_eval.loss).c_str());
    if (!std::isnan(last_eval.accuracy))
      std::fprintf(s.out, "eval_accuracy %s\n",
                   text_number(last_eval.accuracy).c_str());
  }
  std::fflush(s.out);
  return EXIT_OK;
}

} // namespace tidalrt_driver
