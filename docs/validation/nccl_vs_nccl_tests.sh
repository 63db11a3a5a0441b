#!/usr/bin/env bash
# nccl.* busbw beside nccl-tests on the same sizes, in one run (target: within 3%). Needs a
# machine with 2+ GPUs and nccl-tests built there (NCCL_TESTS=/path/to/nccl-tests/build).
# Usage: NCCL_TESTS=... docs/validation/nccl_vs_nccl_tests.sh [build/gpubench]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpubench=${1:-$here/../../build/gpubench}
tests=${NCCL_TESTS:?set NCCL_TESTS to nccl-tests build folder}
gpus=$(nvidia-smi -L | wc -l)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "# nccl.* vs nccl-tests on $gpus GPUs ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
"$gpubench" run --only 'nccl.*' --axis 'nccl.*:placement=out_of_place' \
  --axis 'nccl.*:bytes=1MiB,16MiB,256MiB,1GiB' --out "$work/run" > /dev/null 2>&1 || true
for op in all_reduce all_gather reduce_scatter broadcast alltoall; do
  "$tests/${op}_perf" -b 1M -e 1G -f 16 -g "$gpus" -w 5 -n 20 -c 1 > "$work/$op.txt" 2>&1 || true
  python3 - "$work/run/results.json" "$work/$op.txt" "$op" <<'PY'
import json, sys
ours = {r["axes"]["bytes"]: r["metrics"]["busbw_GBps"]["median"]
        for r in json.load(open(sys.argv[1]))["results"]
        if r["id"] == "nccl." + sys.argv[3] and r["status"] == "ok"}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) > 8 and f[0].isdigit() and int(f[0]) in ours:
        size, theirs = int(f[0]), float(f[7])  # out-of-place busbw column
        ratio = ours[size] / theirs if theirs else 0
        print(f"{sys.argv[3]:15} {size:>12} gpubench {ours[size]:8.2f} nccl-tests {theirs:8.2f} ratio {ratio:.3f} {'PASS' if abs(ratio-1) <= 0.03 else 'FAIL'}")
PY
done
