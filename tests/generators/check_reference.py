#!/usr/bin/env python3
"""Every GPU row of tools/reference/hardware.json says what the device reports as its total memory
(reported_memory_MiB: nvidia-smi memory.total, in MiB) with its source, or why no figure was found;
and the figure is a MiB count, not the datasheet's GB (docs/sources.md, "What a GPU reports").
  check_reference.py SOURCE_DIR
"""
import json
import os
import sys

FIELD = "reported_memory_MiB"
# The driver reports a little less than the nominal capacity (GiB-sized boards: 80 GB -> 81559 MiB,
# 24 GB with ECC -> 23028 MiB); anything outside this band is a unit slip or a wrong card.
LOW, HIGH = 0.90, 1.02


def problems_of(gpu):
    name = gpu.get("name", "?")
    entry = gpu.get(FIELD)
    if not isinstance(entry, dict):
        return [f"{name}: no {FIELD}"]
    out = []
    value = entry.get("value")
    if value is None:
        if entry.get("status") != "not_found" or not entry.get("note"):
            out.append(f"{name}: {FIELD} is null without status not_found and a note")
        return out
    if entry.get("status") != "device_reported":
        out.append(f"{name}: {FIELD} status is {entry.get('status')!r}, not device_reported")
    if not entry.get("source") or not all(isinstance(s, str) and s for s in entry["source"]):
        out.append(f"{name}: {FIELD} has no source")
    if not entry.get("note"):
        out.append(f"{name}: {FIELD} has no note saying which tool reported it")
    nominal_MiB = gpu["memory_GB"]["value"] * 1024
    if not isinstance(value, (int, float)) or not LOW <= value / nominal_MiB <= HIGH:
        out.append(f"{name}: {FIELD} {value} is not {LOW}-{HIGH} of the nominal {nominal_MiB:.0f} MiB")
    for key, alt in entry.get("alt", {}).items():
        if not isinstance(alt, (int, float)):
            out.append(f"{name}: {FIELD}.alt.{key} is not a number")
    return out


def main(source):
    with open(os.path.join(source, "tools", "reference", "hardware.json")) as f:
        ref = json.load(f)
    problems = []
    for gpu in ref["gpus"]:
        problems += problems_of(gpu)
    # The check itself can fail: a figure in GB, one without a source, a null without a reason.
    base = {"name": "test", "memory_GB": {"value": 80}}
    for bad, what in [({"value": 80, "source": ["x"], "status": "device_reported", "note": "n"}, "a GB figure"),
                      ({"value": 81559, "source": [], "status": "device_reported", "note": "n"}, "no source"),
                      ({"value": None, "source": [], "status": "not_found"}, "a null without a note")]:
        if not problems_of(dict(base, **{FIELD: bad})):
            problems.append(f"the check let {what} through")
    for p in problems:
        print(p)
    print("reference:", "ok" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
