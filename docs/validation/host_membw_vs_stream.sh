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

# Alternating rounds, so drift in the machine (shared hosts, VMs) hits both tools alike.
rounds=${ROUNDS:-5}
ratios=()
for round in $(seq 1 "$rounds"); do
  "$gpubench" run --only host.membw --axis host.membw:kernel=triad --out "$work/run$round" > /dev/null 2> "$work/run$round.log"
  read -r median max n verified < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
m = r["metrics"]["GBps"]
print(m["median"], m["max"], m["n"], r["verified"])' "$work/run$round/results.json")
  reference=$(OMP_NUM_THREADS=$threads OMP_PROC_BIND=close OMP_PLACES=cores "$work/stream_triad" "$elements" 10)
  ref_gbps=$(awk '{print $NF}' <<< "$reference")
  ratio=$(python3 -c "print(f'{$median / $ref_gbps:.3f}')")
  ratios+=("$ratio")
  printf 'round %d: reference STREAM triad best of 10 %7.2f GB/s | gpubench triad median %7.2f GB/s (max %.2f, n=%s, verified=%s) | ratio %s\n' \
    "$round" "$ref_gbps" "$median" "$max" "$n" "$verified" "$ratio"
done
python3 - "${ratios[@]}" <<'PY'
import statistics, sys
ratios = [float(r) for r in sys.argv[1:]]
m = statistics.median(ratios)
verdict = "PASS" if abs(m - 1) <= 0.10 else "FAIL"
print(f"median ratio gpubench median / reference best over {len(ratios)} rounds: {m:.3f}  -> {verdict} (target: within 10%)")
sys.exit(0 if verdict == "PASS" else 1)
PY
