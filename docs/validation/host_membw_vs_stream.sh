#!/usr/bin/env bash
# host.membw triad against a reference STREAM triad (plain OpenMP loop, gcc -O3 -fopenmp), same
# thread count and array size, measured side by side in one run. Target: within 10%.
# Usage: docs/validation/host_membw_vs_stream.sh [build/gpubench]   (prints a report on stdout)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpubench=${1:-$here/../../build/gpubench}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# gpubench's own defaults on this machine: threads (one per core) and array size (>= 4x LLC).
read -r threads array_bytes < <("$gpubench" list --json | python3 -c '
import json, sys
d = {b["id"]: b for b in json.load(sys.stdin)["benchmarks"]}["host.membw"]
axes = {a["name"]: a["defaults"] for a in d["axes"]}
print(axes["threads"][0], axes["array_bytes"][0])')
elements=$((array_bytes / 8))

gcc -O3 -fopenmp -o "$work/stream_triad" "$here/stream_triad_reference.c"

echo "# host.membw triad vs reference STREAM triad"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) CPUs online"
echo "gpubench: $("$gpubench" --version)"
echo "gcc: $(gcc --version | head -1)"
echo "threads: $threads, array: $array_bytes bytes ($elements doubles) per array, 3 arrays"
echo

"$gpubench" run --only host.membw --axis host.membw:kernel=triad --out "$work/run" > /dev/null 2> "$work/run.log"
ours=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
m = r["metrics"]["GBps"]
print(m["median"], m["max"], m["n"], r["verified"])' "$work/run/results.json")
read -r median max n verified <<< "$ours"

reference=$(OMP_NUM_THREADS=$threads OMP_PROC_BIND=close OMP_PLACES=cores "$work/stream_triad" "$elements" 10)
ref_gbps=$(awk '{print $NF}' <<< "$reference")

echo "reference STREAM triad (best of 10): $ref_gbps GB/s   [$reference]"
echo "gpubench host.membw triad: median $median GB/s, max $max GB/s over $n repetitions, verified=$verified"
python3 - "$median" "$ref_gbps" <<'PY'
import sys
median, ref = float(sys.argv[1]), float(sys.argv[2])
ratio = median / ref
verdict = "PASS" if abs(ratio - 1) <= 0.10 else "FAIL"
print(f"ratio gpubench median / reference best: {ratio:.3f}  -> {verdict} (target: within 10%)")
sys.exit(0 if verdict == "PASS" else 1)
PY
