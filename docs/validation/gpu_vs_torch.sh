#!/usr/bin/env bash
# gpubench's GPU figures beside PyTorch's on the same machine, in one run (issue targets: GEMM
# bf16/fp16/tf32/fp32 at 8192^3 >= 0.97x torch.matmul; hbm.copy >= 0.97x torch copy_ counted
# read+write; PCIe pinned figures beside torch's non_blocking copies).
# Usage: docs/validation/gpu_vs_torch.sh [build/gpubench] > docs/validation/gpu_vs_torch.txt
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpubench=${1:-$here/../../build/gpubench}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "# gpubench vs PyTorch on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); gpubench: $("$gpubench" --version)"
"$gpubench" run --gpus 0 --only gemm,hbm.copy,pcie.h2d,pcie.d2h,gpu.launch_latency \
  --axis gemm:shape=8192x8192x8192 --axis gemm:dtype=fp16,bf16,tf32,fp32,fp8 \
  --axis pcie.h2d:bytes=256MiB --axis pcie.d2h:bytes=256MiB --axis pcie.h2d:memory=pinned \
  --axis pcie.d2h:memory=pinned --out "$work/run" > "$work/summary.txt" 2> "$work/progress.txt" || true
cat "$work/summary.txt"
python3 "$here/torch_reference.py" > "$work/torch.json"
cat "$work/torch.json"
python3 - "$work/run/results.json" "$work/torch.json" <<'PY'
import json, sys
ours = json.load(open(sys.argv[1]))["results"]
ref = json.load(open(sys.argv[2]))
def metric(id_, **axes):
    for r in ours:
        if r["id"] == id_ and r["status"] == "ok" and all(r["axes"].get(k) == v for k, v in axes.items()):
            return r["metrics"][next(iter(r["metrics"]))]["median"]
    return None
rows = []
for dtype in ("fp16", "bf16", "tf32", "fp32"):
    rows.append((f"gemm {dtype} 8192^3 TFLOP/s", metric("gemm", dtype=dtype), ref["matmul_8192_TFLOPs"][dtype], 0.97))
rows.append(("hbm.copy 1 GiB GB/s (read+write)", metric("hbm.copy"), ref["copy_1GiB_GBps_read_plus_write"], 0.97))
rows.append(("pcie.h2d pinned 256 MiB GB/s", metric("pcie.h2d", bytes=256 << 20, memory="pinned"), ref["pcie_256MiB_GBps"]["h2d"], None))
rows.append(("pcie.d2h pinned 256 MiB GB/s", metric("pcie.d2h", bytes=256 << 20, memory="pinned"), ref["pcie_256MiB_GBps"]["d2h"], None))
failed = False
print(f"{'figure':38} {'gpubench':>10} {'torch':>10} {'ratio':>7}  target")
for name, mine, theirs, target in rows:
    ratio = mine / theirs if mine and theirs else None
    verdict = "" if target is None or ratio is None else ("PASS" if ratio >= target else "FAIL")
    failed |= verdict == "FAIL" or mine is None
    print(f"{name:38} {mine if mine else 'n/a':>10.5} {theirs:>10.5} {ratio if ratio else 0:>7.3f}  {'>= %.2f ' % target if target else ''}{verdict}")
sys.exit(1 if failed else 0)
PY
