#!/usr/bin/env bash
# The main job: set up and build, export the example MLP for scikit-learn's
# digits from PyTorch, compile it into a training executable with tidalc,
# train it and report held-out loss and accuracy.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD_DIR="${TIDAL_BUILD_DIR:-build}"
out="$BUILD_DIR/demo"
mkdir -p "$out"
PYTHONPATH=python /usr/bin/python3 -m tidal.export mlp "$out/mlp.onnx"
PYTHONPATH=python /usr/bin/python3 -m tidal.digits "$out"

run() {
  echo "== $*"
  "$@"
}
run "$BUILD_DIR/bin/tidalc" "$out/mlp.onnx" -o "$out/train" --batch-size 32 \
  --loss cross-entropy --optimizer sgd --lr 0.1 --momentum 0.9 --timings
run "$out/train" --input input="$out/train_input.npy" \
  --input label="$out/train_label.npy" --epochs 20 --shuffle --seed 0 \
  --eval-input input="$out/test_input.npy" \
  --eval-input label="$out/test_label.npy" \
  --save "$out/mlp_trained.onnx" --log "$out/train_log.jsonl"
