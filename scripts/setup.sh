#!/usr/bin/env bash
# Installs every Debian package tidal needs (as root, idempotent), then
# configures and builds into build/ (or $TIDAL_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake ninja-build g++ git clang-format
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools zlib1g-dev libzstd-dev
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libdnnl-dev nlohmann-json3-dev libgtest-dev libglpk-dev
  libopenmpi-dev openmpi-bin
  python3-numpy python3-onnx python3-torch python3-torchvision python3-sklearn
  python3-matplotlib python3-tqdm
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages: ${missing[*]}; run this script as root" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

BUILD_DIR="${TIDAL_BUILD_DIR:-build}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++
fi
ninja -C "$BUILD_DIR"

# `import tidal` for Debian's python3 (docs/python.md): a .pth file naming
# this checkout's python/ folder; tidal finds tidalc in $BUILD_DIR/bin.
if [ "$(id -u)" -eq 0 ]; then
  site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
  mkdir -p "$site"
  echo "$(pwd)/python" > "$site/tidal.pth"
else
  echo "setup: not root: run with PYTHONPATH=$(pwd)/python to import tidal"
fi
