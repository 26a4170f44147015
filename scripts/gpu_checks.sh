#!/usr/bin/env bash
# The GPU checks of docs/cuda.md, on a lent GPU machine without tidalc,
# from what scripts/gpu_pack.sh recorded here (.gpu-pack/pack.tar.xz):
#   bash scripts/gpu_checks.sh [cuda-tests] [e2e] [bench] [debug] [compare]
# (default: the first three; debug runs training cases under
# compute-sanitizer, compare compares them op by op with the CPU kernels,
# scripts/gpu_debug.py)
# Writes logs under $OUT (or /tmp/gpu-out): cuda-tests.log, e2e.log,
# bench.md, bench.json, env.txt. Each step has its own time limit
# (GPU_CHECK_LIMIT_S, default 200 s per step).
set -uo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
out="${OUT:-/tmp/gpu-out}"
mkdir -p "$out"
limit="${GPU_CHECK_LIMIT_S:-200}"
steps="${*:-cuda-tests e2e bench}"
w="$root/.gpu"
if [ ! -d "$w/replay" ]; then
  tar -C "$root" -xJf "$root/.gpu-pack/pack.tar.xz" || { echo "no .gpu-pack/pack.tar.xz" >&2; exit 1; }
fi

# The CUDA libraries the executables link: the toolkit's, else the pip
# wheels next to PyTorch. Symlinked into .gpu/lib, which also holds
# oneDNN, protobuf and onnx_proto from the build machine.
search="/usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib"
search="$search $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, d, "lib") for p in nvidia.__path__ for d in os.listdir(p)))' 2>/dev/null)"
search="$search /usr/lib/x86_64-linux-gnu"
ldpath="$w/lib"
for n in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9 libnccl.so.2; do
  found=""
  for d in $search; do
    if [ -e "$d/$n" ]; then found="$d/$n"; break; fi
  done
  if [ -z "$found" ]; then echo "gpu_checks.sh: $n not found in $search" | tee -a "$out/env.txt"; continue; fi
  ln -sf "$found" "$w/lib/$n"
  ln -sf "$found" "$w/lib/${n%.*}"
  case ":$ldpath:" in *":$(dirname "$found"):"*) ;; *) ldpath="$ldpath:$(dirname "$found")" ;; esac
done
export LD_LIBRARY_PATH="$ldpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TIDAL_REPLAY=replay TIDAL_REPLAY_DIR="$w/replay" TIDAL_REPLAY_RUNTIME_DIR="$w/runtime"
export TIDAL_REPLAY_LIB_DIR="$w/lib" TIDAL_EXPORT_CACHE="$w/onnx" PYTHONUNBUFFERED=1
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  nproc; python3 -c 'import torch, onnx, numpy; print("torch", torch.__version__, "cuda", torch.version.cuda,
    "cudnn", torch.backends.cudnn.version(), "onnx", onnx.__version__, "numpy", numpy.__version__)'
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"; command -v c++ g++; ls -la "$w/lib"
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

rc=0
for step in $steps; do
  echo "== $step"
  case "$step" in
  cuda-tests)
    timeout "$limit" "$w/bin/tidalrt-cuda-tests" >"$out/cuda-tests.log" 2>&1 || rc=1
    grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|tests ran" "$out/cuda-tests.log" | tail -40 ;;
  e2e)
    (cd python/test && TIDAL_BUILD_DIR="$w/build" PYTHONPATH="$root/python:." \
      timeout "$limit" python3 -m unittest -v test_cuda_e2e) >"$out/e2e.log" 2>&1 || rc=1
    grep -E "ok$|FAIL|ERROR|skipped|^Ran|^OK|^FAILED|^  [a-z]" "$out/e2e.log" | tail -40 ;;
  bench)
    # shellcheck disable=SC2046
    timeout "$limit" python3 bench/gpu_bench.py $(cat "$w/bench_args") ${GPU_BENCH_EXTRA:-} --markdown --tidalc "$w/build/bin/tidalc" \
      --onnx-dir "$w/onnx" --json "$out/bench.json" --time-limit $((limit - 20)) >"$out/bench.md" 2>"$out/bench.err" || rc=1
    cat "$out/bench.md"; tail -3 "$out/bench.err" ;;
  debug)
    # GPU_DEBUG_CASES (default mlp_digits_sgd) under compute-sanitizer.
    timeout "$limit" python3 scripts/gpu_debug.py "$out" ${GPU_DEBUG_CASES:-mlp_digits_sgd} \
      --timeout $((limit / 2)) || rc=1 ;;
  compare)
    # GPU_DEBUG_CASES (default mobilenet_mini14_momentum): every op's output
    # on the GPU against the same plan on the CPU kernels.
    timeout "$limit" python3 scripts/gpu_debug.py "$out" ${GPU_DEBUG_CASES:-mobilenet_mini14_momentum} \
      --compare --timeout $((limit / 3)) || rc=1 ;;
  *) echo "unknown step $step" ;;
  esac
done
exit $rc
