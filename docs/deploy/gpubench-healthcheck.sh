#!/usr/bin/env bash
# gpubench as a node health check: run a suite, validate the results against the node's spec,
# export them for Prometheus, and on failure drain the node in Slurm. For Slurm's
# HealthCheckProgram or a prolog, for the Kubernetes Job and DaemonSet beside this file, or cron.
# Exit 0 when the node passes, 1 when it fails, 2 when gpubench could not run.
#
# Settings (environment):
#   GPUBENCH                 the binary                  (default: gpubench on the PATH)
#   GPUBENCH_HEALTH_SUITE    suite to run                (default: quick)
#   GPUBENCH_HEALTH_DIR      where results go            (default: /var/lib/gpubench/health)
#   GPUBENCH_HEALTH_RESULTS  validate this results file instead of running a suite (results
#                            from an earlier run, or a test)
#   GPUBENCH_SPEC            spec for validate and export (default: the GPUs' own)
#   GPUBENCH_PROMETHEUS_DIR  node_exporter textfile folder: gpubench.prom is written there
#   GPUBENCH_DRAIN           1: drain this node in Slurm when it fails (default: 1 under Slurm)
#   SCONTROL                 the scontrol to call        (default: scontrol)
#   GPUBENCH_HEALTH_INTERVAL whole seconds, 1 or more: repeat forever, this far apart (a
#                            DaemonSet); unset: once
set -uo pipefail

gpubench=${GPUBENCH:-gpubench}
suite=${GPUBENCH_HEALTH_SUITE:-quick}
root=${GPUBENCH_HEALTH_DIR:-/var/lib/gpubench/health}
node=${SLURMD_NODENAME:-${NODE_NAME:-$(hostname -s)}}
drain=${GPUBENCH_DRAIN:-$([ -n "${SLURMD_NODENAME:-}" ] && echo 1 || echo 0)}

interval=${GPUBENCH_HEALTH_INTERVAL:-}
if [ -n "$interval" ] && ! [[ "$interval" =~ ^[1-9][0-9]*$ ]]; then
  # "1 day" or "0" would check (and drain) many times a second; no leading zero, which bash's
  # arithmetic would read as octal ("08" an error, "010" eight seconds).
  echo "gpubench health: GPUBENCH_HEALTH_INTERVAL: expected whole seconds, 1 or more, got '$interval'" >&2
  exit 2
fi

if ! command -v "$gpubench" >/dev/null 2>&1; then
  echo "gpubench health: $node: no gpubench at '$gpubench' (set GPUBENCH)" >&2
  exit 2
fi

check_once() {
  local out results verdict rc
  out="$root/$(date -u +%Y%m%dT%H%M%SZ)"
  mkdir -p "$out" || return 2
  if [ -n "${GPUBENCH_HEALTH_RESULTS:-}" ]; then
    results=$GPUBENCH_HEALTH_RESULTS
  else
    # gpubench run wants a folder of its own; the logs sit beside it. A run that exits 1 (a GPU
    # benchmark failed) still wrote its results: validate says why.
    results="$out/run/results.json"
    "$gpubench" run --suite "$suite" --out "$out/run" >"$out/run.log" 2>&1
    [ -s "$results" ] || { echo "gpubench health: $node: no results (see $out/run.log)"; return 2; }
  fi
  "$gpubench" validate "$results" ${GPUBENCH_SPEC:+--spec "$GPUBENCH_SPEC"} >"$out/validate.txt" 2>&1
  rc=$?
  verdict=$(tail -n 1 "$out/validate.txt")
  exported=0
  if [ -n "${GPUBENCH_PROMETHEUS_DIR:-}" ]; then
    "$gpubench" export --prometheus "$results" ${GPUBENCH_SPEC:+--spec "$GPUBENCH_SPEC"} \
      --out "$GPUBENCH_PROMETHEUS_DIR/gpubench.prom" || exported=2
  fi
  echo "gpubench health: $node: $verdict"
  # The drain rests on the verdict alone: a node that fails is drained even where the export
  # (a missing textfile folder) did not work.
  if [ "$rc" -eq 1 ] && [ "$drain" = 1 ]; then
    "${SCONTROL:-scontrol}" update nodename="$node" state=drain reason="gpubench: ${verdict:0:200}"
  fi
  if [ "$exported" -ne 0 ]; then
    echo "gpubench health: $node: the Prometheus export to $GPUBENCH_PROMETHEUS_DIR failed" >&2
    [ "$rc" -eq 0 ] && rc=2
  fi
  return "$rc"
}

if [ -z "$interval" ]; then
  check_once
  exit $?
fi
while true; do
  check_once
  sleep "$interval"
done
