#!/usr/bin/env python3
"""Writes tests/data/results-2gpu-fixture.json: a SYNTHETIC results file for the report tests.

Its figures are round numbers chosen to exercise every chart and table (GEMM sweep, NCCL sweep,
host and peer copies, HBM, launch latency, a skipped and a failed benchmark); they are not
measurements and no report made from this file is shown as one. Start from a real run's file so
the structure stays the one gpubench writes: python3 make_report_fixture.py REAL_RESULTS.json
(each metric's unit and direction come from the registry of $GPUBENCH, ../../build/gpubench).
"""
import json
import os
import sys

from metric_units import add_units, declared_units


def stats(value, cv=0.01, n=5):
    return {"median": value, "min": value * 0.99, "max": value * 1.01, "cv": cv, "n": n}


def main(real_path, out_path):
    doc = json.load(open(real_path))
    doc["meta"].update({"git": "fixture", "argv": ["gpubench", "run"], "suite": "fixture",
                        "started": "2026-01-01T00:00:00Z", "finished": "2026-01-01T00:10:00Z",
                        "driver": "580.00", "warnings": [
                            "synthetic test fixture (tests/data/make_report_fixture.py): not a measurement"]})
    system = doc["system"]
    system["host"] = "fixture-host"
    system["gpu_status"].update({"nvml": "ok", "cuda": "ok", "driver_version": "580.00", "reason": ""})
    system["gpus"] = [{"index": i, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-fixture-%d" % i,
                       "pci_bus_id": "0000:%02x:00.0" % (0x18 + i), "memory_bytes": 85520809984,
                       "sm_count": 132, "compute_capability": "9.0", "l2_bytes": 52428800,
                       "numa_node": 0, "clocks": {}, "pcie": {"gen": 5, "width": 16, "max_gen": 5,
                                                              "max_width": 16},
                       "throttle_reasons": [], "nvlink_links_up": 18} for i in range(2)]
    results = [r for r in doc["results"] if r["status"] == "ok"]
    for gpu in range(2):
        for dtype, rates in {"bf16": [300, 620, 700], "fp16": [310, 640, 720]}.items():
            for shape, rate in zip(["1024", "4096", "8192"], rates):
                results.append({"id": "gemm", "status": "ok",
                                "axes": {"gpu": gpu, "dtype": dtype, "shape": shape},
                                "metrics": {"TFLOPs": stats(rate)}, "verified": True, "info": {}})
        results.append({"id": "hbm.copy", "status": "ok",
                        "axes": {"gpu": gpu, "array_bytes": 1073741824},
                        "metrics": {"GBps": stats(2900)}, "verified": True, "info": {}})
        for bench, rate in [("pcie.h2d", 55), ("pcie.d2h", 53)]:
            results.append({"id": bench, "status": "ok",
                            "axes": {"gpu": gpu, "bytes": 268435456, "memory": "pinned"},
                            "metrics": {"GBps": stats(rate)}, "verified": True, "info": {}})
        results.append({"id": "gpu.launch_latency", "status": "ok",
                        "axes": {"gpu": gpu, "mode": "stream", "batch": 1000},
                        "metrics": {"us": stats(2.0)}, "verified": True, "info": {}})
    for pair, rate in [("0>1", 380), ("1>0", 370)]:
        results.append({"id": "p2p.copy", "status": "ok",
                        "axes": {"pair": pair, "engine": "ce", "direction": "uni",
                                 "bytes": 268435456},
                        "metrics": {"GBps": stats(rate)}, "verified": True, "info": {}})
    for size, busbw in [(1 << 20, 40), (16 << 20, 180), (256 << 20, 330)]:
        results.append({"id": "nccl.all_reduce", "status": "ok",
                        "axes": {"bytes": size, "placement": "out_of_place"},
                        "metrics": {"us": stats(size / busbw / 1e3), "algbw_GBps": stats(busbw),
                                    "busbw_GBps": stats(busbw)},
                        "verified": True, "info": {"ranks": 2}})
    results.append({"id": "pcie.bidir", "status": "skipped",
                    "reason": "fixture: skipped to show a reason"})
    results.append({"id": "nccl.alltoall", "status": "failed",
                    "axes": {"bytes": 1048576}, "error": "fixture: a failure with <b>markup</b>"})
    doc["results"] = results
    add_units(doc, declared_units(os.environ.get("GPUBENCH", "../../build/gpubench")))
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "results-2gpu-fixture.json")
