#!/usr/bin/env bash
# Prepares the GPU checks of docs/cuda.md for a lent GPU machine that has
# CUDA, PyTorch and a C++ compiler but no LLVM/MLIR 19, so no tidalc
# (docs/cuda.md, "Running the GPU checks"):
#   scripts/gpu_pack.sh            (here, after the build)
#   then, on the GPU machine, in the repository root, carrying .gpu-pack:
#   bash scripts/gpu_checks.sh
#
# Here it runs python/test/test_cuda_e2e.py with TIDAL_CUDA_PREBUILD=1 and
# bench/gpu_bench.py, each with scripts/tidalc_replay.py recording every
# tidalc call (plans, errors, object files and link commands), exports the
# models once (TIDAL_EXPORT_CACHE, so both machines compile the same
# bytes), and packs the recordings, the runtime's static libraries, the
# shared libraries the executables need beyond CUDA (oneDNN, protobuf,
# onnx_proto, libgomp) and the CUDA unit tests into .gpu-pack/pack.tar.xz.
# GPU_BENCH_ARGS must match on both sides (default: the documented run).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
build="${TIDAL_BUILD:-$root/build}"
py=/usr/bin/python3
w="$root/.gpu"
bench_args="${GPU_BENCH_ARGS:---points 3 --steps 20 --warmup 3}"

[ -x "$build/bin/tidalc" ] || { echo "gpu_pack.sh: build first (no $build/bin/tidalc)" >&2; exit 1; }
[ -x "$build/runtime/test/tidalrt-cuda-tests" ] ||
  { echo "gpu_pack.sh: no CUDA build ($build/runtime/test/tidalrt-cuda-tests; needs nvcc)" >&2; exit 1; }
ninja -C "$build" >/dev/null

rm -rf "$w" "$root/.gpu-pack"
mkdir -p "$w/replay" "$w/onnx" "$w/lib" "$w/runtime" "$w/bin" "$w/build/bin" "$root/.gpu-pack"
cat >"$w/build/bin/tidalc" <<'EOS'
#!/bin/sh
# tidalc for the GPU checks: scripts/tidalc_replay.py (record or replay).
exec python3 "$(dirname "$0")/../../../scripts/tidalc_replay.py" "$@"
EOS
chmod +x "$w/build/bin/tidalc"

export TIDAL_REPLAY=record TIDAL_REPLAY_DIR="$w/replay" TIDAL_REAL_TIDALC="$build/bin/tidalc"
export TIDAL_EXPORT_CACHE="$w/onnx"
echo "== recording test_cuda_e2e (compile only)"
(cd python/test && TIDAL_CUDA_PREBUILD=1 TIDAL_BUILD_DIR="$w/build" PYTHONPATH="$root/python:." \
  $py -m unittest test_cuda_e2e 2>&1 | tail -3)
echo "== recording bench/gpu_bench.py $bench_args"
for m in resnet20 vgg_bn transformer_block lenet; do
  PYTHONPATH="$root/python" $py -m tidal.export "$m" "$w/onnx/$m.onnx"
done
PYTHONPATH="$root/python" $py bench/gpu_bench.py $bench_args --tidalc "$w/build/bin/tidalc" \
  --onnx-dir "$w/onnx" --time-limit 3000 >"$w/record-bench.log" 2>&1 || true
unset TIDAL_REPLAY TIDAL_REPLAY_DIR TIDAL_REAL_TIDALC TIDAL_EXPORT_CACHE
echo "$bench_args" >"$w/bench_args"
links=$(grep -l '"output": "link"' "$w"/replay/*/meta.json | wc -l)
echo "== $(ls "$w/replay" | wc -l) tidalc calls recorded, $links executables"

cp "$build"/lib/libtidalrt*.a "$w/runtime/"
cp "$build/runtime/test/tidalrt-cuda-tests" "$w/bin/"
for l in dnnl onnx_proto protobuf; do
  so=$(readlink -f "/usr/lib/x86_64-linux-gnu/lib$l.so")
  soname=$(objdump -p "$so" | awk '/SONAME/ {print $2}')
  cp "$so" "$w/lib/$soname"
  ln -sf "$soname" "$w/lib/lib$l.so"
done
for so in libOpenCL.so.1 libgomp.so.1; do cp -L "/usr/lib/x86_64-linux-gnu/$so" "$w/lib/"; done
tar -C "$root" -cf - .gpu | xz -6 -T0 >"$root/.gpu-pack/pack.tar.xz"
ls -la "$root/.gpu-pack/pack.tar.xz"
