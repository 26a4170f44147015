#!/usr/bin/env bash
# The main job: set up and build, export the example MLP for scikit-learn's
# digits from PyTorch, import it with tidalc and print its IR and statistics.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD_DIR="${TIDAL_BUILD_DIR:-build}"
out="$BUILD_DIR/demo"
mkdir -p "$out"
PYTHONPATH=python /usr/bin/python3 -m tidal.export mlp "$out/mlp.onnx"
echo "== tidalc $out/mlp.onnx --emit mlir --batch-size 32 --loss cross-entropy --optimizer sgd --momentum 0.9 -v"
"$BUILD_DIR/bin/tidalc" "$out/mlp.onnx" --emit mlir --batch-size 32 \
  --loss cross-entropy --optimizer sgd --momentum 0.9 -v
