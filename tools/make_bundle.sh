#!/usr/bin/env bash
# Packs a CUDA build of gpubench for a GPU machine that has a driver but not this machine's Debian
# packages (the device machines of docs/validation/gpu_check.py): the gpubench binary and the GPU
# test tier, every shared library they link but the C library's own (the target's is newer), and
# configs/. cuBLASLt and NCCL are not packed: gpubench loads them at run time, from the system or
# from torch's nvidia-* wheels. Usage: tools/make_bundle.sh BUILD_DIR DEST
set -euo pipefail
build=$1
dest=$2
repo=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib"
cp "$build/gpubench" "$build/tests/gpubench_gpu_tests" "$dest/bin/"
ldd "$dest/bin/gpubench" "$dest/bin/gpubench_gpu_tests" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
  sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libutil.so.* | ld-linux*) ;;
      *) cp -L "$lib" "$dest/lib/" ;;
    esac
  done
cp -r "$repo/configs" "$dest/configs"
echo "bundle: $dest ($(du -sh "$dest" | cut -f1)): $(ls "$dest/lib" | tr '\n' ' ')"
