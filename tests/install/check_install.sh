#!/usr/bin/env bash
# A relocatable install (README, "One build, many servers"): cmake --install into one folder, move
# the folder, and the moved binary still finds its configs there, not in the source tree: a
# workload that exists only in the installed copy must be found.
# usage: check_install.sh BUILD_DIR WORK_DIR
set -euo pipefail
build=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/first" >/dev/null
mv "$work/first" "$work/moved"
configs="$work/moved/share/gpubench/configs"
test -x "$work/moved/bin/gpubench"
sed 's/"name": "resnet50"/"name": "installed-only"/' "$configs/workloads/resnet50.json" \
  >"$configs/workloads/installed-only.json"
out=$(env -u GPUBENCH_CONFIG_DIR "$work/moved/bin/gpubench" size --workload installed-only \
  --hardware catalog:dgx-h100)
echo "$out" | head -2
case "$out" in
  "installed-only on catalog:dgx-h100"*) echo "ok   the moved install reads its own configs" ;;
  *) echo "FAIL the moved install did not find its own configs"; exit 1 ;;
esac
