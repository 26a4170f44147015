// driver_train_fixtures.h - the fixtures of the training-loop tests
// (driver_train_test.cpp, driver_eval_test.cpp, driver_sim_test.cpp): the
// linear model's training run, a two-class classifier with a predict
// function, and the linear model on a SIM device.
#ifndef TIDALRT_TEST_DRIVER_TRAIN_FIXTURES_H
#define TIDALRT_TEST_DRIVER_TRAIN_FIXTURES_H

#include "driver_test_util.h"

#include "data.h"
#include "program.h"

#include <algorithm>
#include <cmath>

namespace driver_test {

class DriverTrainTest : public tidalrt_test::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    make_linear_program(program);
    use_samples(10);
  }

  void use_samples(int64_t samples) {
    linear_data(samples, &x, &y);
    write_npy(path("x.npy"), TIDALRT_ELEMENT_TYPE_F32, {samples, 2}, x.data());
    write_npy(path("y.npy"), TIDALRT_ELEMENT_TYPE_F32, {samples}, y.data());
  }

  run_result run(std::vector<std::string> more) {
    std::vector<std::string> args = {"--input", "x=" + path("x.npy"), "--input",
                                     "y=" + path("y.npy")};
    args.insert(args.end(), more.begin(), more.end());
    return run_driver(program.get(), args);
  }

  // The sample indices of each step's batch.
  std::vector<std::vector<int64_t>> batches() const {
    std::vector<std::vector<int64_t>> result;
    for (const auto &x0 : linear().x0)
      result.push_back(rows_of(x0));
    return result;
  }

  void reset_record() {
    linear_model &m = linear();
    m.steps.clear();
    m.x0.clear();
    m.losses.clear();
    m.prepare_calls = 0;
  }

  fake_program program;
  std::vector<float> x, y;
};

//===----------------------------------------------------------------------===
// Evaluation with a predict function: a two-class classifier with
// logits[b, c] = x[b, c] * w[c] and cross-entropy.
//===----------------------------------------------------------------------===

struct classifier_model {
  function_layout step;
  function_layout predict;
  int predict_calls = 0;
  std::vector<float> predict_w; // w as the last predict call saw it
};

inline classifier_model &classifier() {
  static classifier_model model;
  return model;
}

inline float cross_entropy(const float *logits, int64_t label, float *probs) {
  float m = std::max(logits[0], logits[1]);
  float e0 = std::exp(logits[0] - m), e1 = std::exp(logits[1] - m);
  float sum = e0 + e1;
  if (probs) {
    probs[0] = e0 / sum;
    probs[1] = e1 / sum;
  }
  return std::log(sum) + m - logits[label];
}

inline tidalrt_status_t classifier_step(tidalrt_context_t *ctx,
                                        uint8_t *arena) {
  if (tidalrt::preparing(ctx))
    return nullptr;
  const function_layout &f = classifier().step;
  const float *x = reinterpret_cast<const float *>(arena + f.args.at("x"));
  const int64_t *label =
      reinterpret_cast<const int64_t *>(arena + f.args.at("label"));
  const float *w = reinterpret_cast<const float *>(arena + f.args.at("w"));
  float loss = 0, grad[2] = {0, 0};
  for (int b = 0; b < 4; ++b) {
    float logits[2] = {x[2 * b] * w[0], x[2 * b + 1] * w[1]}, probs[2];
    loss += cross_entropy(logits, label[b], probs);
    for (int c = 0; c < 2; ++c)
      grad[c] += (probs[c] - (label[b] == c ? 1.0f : 0.0f)) * x[2 * b + c];
  }
  *reinterpret_cast<float *>(arena + f.results.at("loss")) = loss / 4;
  float *w_new = reinterpret_cast<float *>(arena + f.results.at("w"));
  for (int c = 0; c < 2; ++c)
    w_new[c] = w[c] - 0.5f * grad[c] / 4;
  return nullptr;
}

inline tidalrt_status_t classifier_predict(tidalrt_context_t *ctx,
                                           uint8_t *arena) {
  if (tidalrt::preparing(ctx))
    return nullptr;
  const function_layout &f = classifier().predict;
  const float *x = reinterpret_cast<const float *>(arena + f.args.at("x"));
  const int64_t *label =
      reinterpret_cast<const int64_t *>(arena + f.args.at("label"));
  const float *w = reinterpret_cast<const float *>(arena + f.args.at("w"));
  float *logits = reinterpret_cast<float *>(arena + f.results.at("logits"));
  float loss = 0;
  for (int b = 0; b < 4; ++b) {
    logits[2 * b] = x[2 * b] * w[0];
    logits[2 * b + 1] = x[2 * b + 1] * w[1];
    loss += cross_entropy(logits + 2 * b, label[b], nullptr);
  }
  *reinterpret_cast<float *>(arena + f.results.at("loss")) = loss / 4;
  ++classifier().predict_calls;
  classifier().predict_w.assign(w, w + 2);
  return nullptr;
}

class DriverEvalTest : public tidalrt_test::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    classifier_model &m = classifier();
    m = classifier_model();
    std::vector<slot_spec> inputs = {{"x", "input", "float32", {4, 2}},
                                     {"label", "input", "int64", {4}},
                                     {"w", "param", "float32", {2}}};
    m.step = layout_function(inputs, {{"loss", "loss", "float32", {}},
                                      {"w", "param", "float32", {2}}});
    m.predict =
        layout_function(inputs, {{"logits", "output", "float32", {4, 2}},
                                 {"loss", "loss", "float32", {}}});
    program.manifest = base_manifest("train", 4);
    program.manifest["model"] = "classifier.onnx";
    program.manifest["loss"] = "cross-entropy";
    onnx::ModelProto model;
    model.set_ir_version(8);
    onnx::TensorProto *w = add_initializer(model.mutable_graph(), "w",
                                           onnx::TensorProto::FLOAT, {2});
    w->add_float_data(1.0f);
    w->add_float_data(-1.0f);
    program.set_model(model);
    program.manifest["functions"] = {{"step", m.step.description},
                                     {"predict", m.predict.description}};
    program.program.step = classifier_step;
    program.program.predict = classifier_predict;

    // Training data: 8 samples; held-out data: 10 samples.
    for (int i = 0; i < 10; ++i) {
      float a = static_cast<float>(i % 3) - 1.0f;
      float b = static_cast<float>(i % 4) / 2 - 0.5f;
      eval_x.push_back(a);
      eval_x.push_back(b);
      eval_label.push_back(i % 2);
    }
    write_npy(path("x.npy"), TIDALRT_ELEMENT_TYPE_F32, {8, 2}, eval_x.data());
    write_npy(path("label.npy"), TIDALRT_ELEMENT_TYPE_I64, {8},
              eval_label.data());
    write_npy(path("ex.npy"), TIDALRT_ELEMENT_TYPE_F32, {10, 2}, eval_x.data());
    write_npy(path("elabel.npy"), TIDALRT_ELEMENT_TYPE_I64, {10},
              eval_label.data());
  }

  run_result run(std::vector<std::string> more) {
    std::vector<std::string> args = {
        "--input",      "x=" + path("x.npy"),
        "--input",      "label=" + path("label.npy"),
        "--eval-input", "x=" + path("ex.npy"),
        "--eval-input", "label=" + path("elabel.npy")};
    args.insert(args.end(), more.begin(), more.end());
    return run_driver(program.get(), args);
  }

  // The expected loss (full batches) and accuracy (every sample) for w.
  void expected_eval(const std::vector<float> &w, double *loss,
                     double *accuracy) const {
    double loss_sum = 0;
    int correct = 0;
    for (int batch = 0; batch < 2; ++batch) {
      float batch_loss = 0;
      for (int b = 0; b < 4; ++b) {
        int i = batch * 4 + b;
        float logits[2] = {eval_x[2 * i] * w[0], eval_x[2 * i + 1] * w[1]};
        batch_loss += cross_entropy(logits, eval_label[i], nullptr);
      }
      loss_sum += batch_loss / 4;
    }
    for (int i = 0; i < 10; ++i) {
      float l0 = eval_x[2 * i] * w[0], l1 = eval_x[2 * i + 1] * w[1];
      correct += (l1 > l0 ? 1 : 0) == eval_label[i];
    }
    *loss = loss_sum / 2;
    *accuracy = correct / 10.0;
  }

  fake_program program;
  std::vector<float> eval_x;
  std::vector<int64_t> eval_label;
};

class DriverSimDeviceTest : public DriverTrainTest {
protected:
  void SetUp() override {
    DriverTrainTest::SetUp();
    make_sim_program(program);
  }

  static void make_sim_program(fake_program &p) {
    make_linear_device_program(p, "sim");
  }
};

} // namespace driver_test

#endif // TIDALRT_TEST_DRIVER_TRAIN_FIXTURES_H
