#!/usr/bin/env bash
# `gpubench watch` on a real PyTorch DataLoader whose one worker shares its core with other
# processes (docs/validation/watch_jobs.py cpu-loader; no GPU needed; python3-torch from apt does):
# a spinning process per core outside the job, the job's loop waiting on its worker. Prints the
# verdict. Usage: docs/validation/watch_loader_shared.sh GPUBENCH [SECONDS]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpubench=$1
seconds=${2:-40}
python=${PYTHON:-python3}
work=$(mktemp -d)
spinners=()
for _ in $(seq "$(nproc)"); do
  timeout $((seconds + 30)) sh -c 'while :; do :; done' &
  spinners+=($!)
done
"$gpubench" watch --interval 0.5 --out "$work/w" -- "$python" "$here/watch_jobs.py" cpu-loader \
  "$seconds" 1 2>&1 | tail -2
kill "${spinners[@]}" 2>/dev/null
wait
"$python" - "$work/w/watch.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
s, v = w["summary"], w["verdict"]
print(f"   limit: {v['limiting_component']}; loader {s.get('loader', 'not in this version')}")
for line in v["evidence"] + v["advice"]:
    print("   - " + line)
PY
