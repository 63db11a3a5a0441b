#!/usr/bin/env bash
# nvme.seq_read (1 MiB) and nvme.rand_read (128 KiB) against fio with the same engine (io_uring),
# direct=1, block size, queue depth, job count and file size, on the same filesystem, in
# alternating rounds. Target: within 5%. gpubench reads only files it wrote itself, so fio reads
# its own file of the same size beside it. Needs fio (apt-get install fio).
# Usage: docs/validation/nvme_vs_fio.sh SCRATCH_DIR [build/gpubench]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scratch=${1:?usage: $0 SCRATCH_DIR [gpubench]}
gpubench=${2:-$here/../../build/gpubench}
size_mib=${SIZE_MIB:-1024}
rounds=${ROUNDS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work" "$scratch/fio-validation.dat"' EXIT

echo "# nvme.* vs fio (io_uring, direct=1)"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); gpubench: $("$gpubench" --version); $(fio --version)"
echo "scratch: $scratch ($(df -T "$scratch" | awk 'NR==2{print $2" on "$1}')), file ${size_mib} MiB"

fio_rate() {  # rw bs iodepth jobs -> GB/s
  fio --name=v --filename="$scratch/fio-validation.dat" --size="${size_mib}M" --ioengine=io_uring \
    --direct=1 --rw="$1" --bs="$2" --iodepth="$3" --numjobs="$4" --group_reporting --time_based \
    --runtime=5 --ramp_time=1 --fixedbufs --registerfiles --output-format=json 2>/dev/null |
    python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]["read"]; print(j["bw_bytes"]/1e9)'
}
gpubench_rate() {  # id bs iodepth threads -> GB/s (median)
  "$gpubench" run --only "$1" --scratch "$scratch" --axis "$1:block_size=$2" \
    --axis "$1:queue_depth=$3" --axis "$1:threads=$4" --axis "$1:file_bytes=${size_mib}MiB" \
    --out "$work/$1-$RANDOM" > /dev/null 2>&1
  python3 -c 'import json,sys,glob; r=json.load(open(sorted(glob.glob(sys.argv[1]), key=lambda p: __import__("os").path.getmtime(p))[-1]))["results"][0]; print(r["metrics"]["GBps"]["median"], r["info"]["engine"], r["verified"])' "$work/$1-*/results.json"
}

threads=$(nproc)
status=0
for spec in "nvme.seq_read read 1048576 32 1" "nvme.rand_read randread 131072 32 $threads"; do
  read -r id rw bs depth jobs <<< "$spec"
  ratios=()
  ours_all=()
  theirs_all=()
  for round in $(seq 1 "$rounds"); do
    # Alternate which tool goes first, so a device that drifts (burst credits, host caching)
    # favours neither.
    if (( round % 2 )); then
      read -r ours engine verified <<< "$(gpubench_rate "$id" "$bs" "$depth" "$jobs")"
      theirs=$(fio_rate "$rw" "$bs" "$depth" "$jobs")
    else
      theirs=$(fio_rate "$rw" "$bs" "$depth" "$jobs")
      read -r ours engine verified <<< "$(gpubench_rate "$id" "$bs" "$depth" "$jobs")"
    fi
    ratio=$(python3 -c "print(f'{$ours / $theirs:.3f}')")
    ratios+=("$ratio")
    ours_all+=("$ours")
    theirs_all+=("$theirs")
    echo "$id bs=$bs qd=$depth jobs=$jobs round $round: gpubench $ours GB/s ($engine, verified=$verified), fio $theirs GB/s, ratio $ratio"
  done
  python3 - "$id" "${ratios[*]}" "${ours_all[*]}" "${theirs_all[*]}" <<'PY' || status=1
import statistics, sys
ratios, ours, theirs = ([float(x) for x in a.split()] for a in sys.argv[2:5])
m = statistics.median(ratios)
# A 5% comparison needs a device steady to about 5%: when either tool's own rounds spread by
# more than 10% (max/min), the verdict is "inconclusive", not pass or fail. (A 20% bound let
# two runs on one RAM-backed loop device minutes apart both "fail", in opposite directions.)
spread = max(max(v) / min(v) for v in (ours, theirs))
if spread > 1.1:
    verdict = "INCONCLUSIVE"
else:
    verdict = "PASS" if abs(m - 1) <= 0.05 else "FAIL"
print(f"{sys.argv[1]}: median ratio {m:.3f}; gpubench {statistics.median(ours):.3f} GB/s "
      f"(spread {max(ours) / min(ours):.2f}x), fio {statistics.median(theirs):.3f} GB/s "
      f"(spread {max(theirs) / min(theirs):.2f}x) -> {verdict} (target: within 5%)")
sys.exit(0 if verdict == "PASS" else 1)
PY
done
exit $status
