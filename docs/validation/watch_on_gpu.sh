#!/usr/bin/env bash
# `gpubench watch` on real PyTorch jobs (docs/validation/watch_jobs.py) on a machine with a GPU:
# a GPU-bound one, then a DataLoader-bound one with 2 workers and with one per core. Prints each
# verdict; with $OUT set, copies each watch.json there. Uses the bundle (make gpu-bundle), else
# build/. Usage: docs/validation/watch_on_gpu.sh [SECONDS]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
seconds=${1:-25}
if [ -x "$repo/.carry/gpubench-bundle/bin/gpubench" ]; then
  gpubench=$repo/.carry/gpubench-bundle/bin/gpubench
  export LD_LIBRARY_PATH=$repo/.carry/gpubench-bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  gpubench=$repo/build/gpubench
fi
cores=$(nproc)
work=$(mktemp -d)
for job in "gpu $seconds" "loader $seconds 2" "loader $seconds $((cores - 1))"; do
  name=$(echo "$job" | tr ' ' '-')
  echo "== watch: $job"
  # shellcheck disable=SC2086  # the job's words
  "$gpubench" watch --interval 0.5 --out "$work/$name" -- \
    python3 "$here/watch_jobs.py" $job 2>&1 | tail -3
  python3 - "$work/$name/watch.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
s, v = w["summary"], w["verdict"]
print(f"   limit: {v['limiting_component']}; gpu busy {s['gpu_busy']}, cores {s['cpu_cores_used']:.2f}"
      f" of {s['cpu_cores_allowed']}, states {s['process_states']}")
for line in v["evidence"] + v["advice"]:
    print("   - " + line)
PY
  [ -n "${OUT:-}" ] && cp "$work/$name/watch.json" "$OUT/watch-$name.json"
done
