#!/usr/bin/env python3
"""Writes tests/data/validate-healthy.json, a SYNTHETIC results file of a two-GPU H100 SXM5
machine for the `validate` tests, tests/data/validate-8gpu.json, the same machine with eight GPUs
whose figures differ by run-to-run noise (within +-2%), as the GPUs of a healthy node do, and
tests/data/validate-faults/NAME.json, one JSON Patch (RFC 6902) per fault an acceptance test must
catch, which the tests apply to the healthy file (or to the file the patch's "base" names).
The figures are chosen to sit clearly inside or outside the floors of
configs/specs/h100-sxm5-80gb.json; they are not measurements. Start from the report fixture so
the structure stays gpubench's own:
  python3 make_validate_fixtures.py results-2gpu-fixture.json
"""
import copy
import json
import math
import os
import sys

from metric_units import add_units, declared_units

SHAPE = "8192x8192x8192"


def stats(value, cv=0.01, n=5):
    return {"median": value, "min": value * 0.99, "max": value * 1.01, "cv": cv, "n": n}


def ok(bench, axes, metrics, info=None):
    return {"id": bench, "status": "ok", "axes": axes,
            "metrics": {k: stats(v) for k, v in metrics.items()}, "verified": True,
            "info": info or {}}


def healthy(base):
    doc = copy.deepcopy(base)
    doc["meta"]["warnings"] = [
        "synthetic test fixture (tests/data/make_validate_fixtures.py): not a measurement"]
    for gpu in doc["system"]["gpus"]:
        gpu.update({"power_limit_W": 700.0, "ecc_enabled": True, "nvlink_links_up": 18,
                    "clocks": {"sm_mhz": 345, "sm_max_mhz": 1980, "memory_mhz": 2619,
                               "memory_max_mhz": 2619},
                    "pcie": {"gen": 1, "width": 16, "max_gen": 5, "max_width": 16},
                    "memory_errors": {"uncorrected_volatile": 0, "uncorrected_aggregate": 0,
                                      "remapped_rows_uncorrectable": 0,
                                      "row_remap_pending": False, "row_remap_failure": False,
                                      "retired_pages_pending": None}})
    gpu_ids = {"gemm", "hbm.copy", "pcie.h2d", "pcie.d2h", "p2p.copy", "gpu.burn"}
    results = [r for r in doc["results"] if r["id"] not in gpu_ids]
    link = {"gen": 5, "width": 16, "max_gen": 5, "max_width": 16}
    burn_gpus = []
    for g in range(2):
        for dtype, rate in {"fp16": 740, "bf16": 760, "tf32": 390, "fp32": 50, "fp8": 1150}.items():
            results.append(ok("gemm", {"gpu": g, "dtype": dtype, "shape": SHAPE}, {"TFLOPs": rate}))
        results.append(ok("hbm.copy", {"gpu": g, "array_bytes": 1073741824}, {"GBps": 2950}))
        for bench, rate in [("pcie.h2d", 54), ("pcie.d2h", 53)]:
            results.append(ok(bench, {"gpu": g, "bytes": 268435456, "memory": "pinned"},
                              {"GBps": rate}, {"pcie_link_during_copy": dict(link)}))
        samples = [{"t_s": t + 1.0, "TFLOPs": 735, "sm_mhz": 1830, "temperature_C": 60 + t // 6,
                    "power_W": 690, "throttle_reasons": ["sw_power_cap"]} for t in range(60)]
        burn_gpus.append({"gpu": g, "pci_bus_id": doc["system"]["gpus"][g]["pci_bus_id"],
                          "dtype": "bf16", "TFLOPs": 735, "first_tenth_TFLOPs": 740,
                          "last_tenth_TFLOPs": 731, "drop_pct": 1.2,
                          "throttle_reasons_seen": ["sw_power_cap"], "sm_mhz_min": 1755,
                          "sm_mhz_max": 1980, "sm_mhz_median": 1830, "sm_max_mhz": 1980, "temperature_C_max": 69,
                          "power_W_max": 699, "multiplies_per_slice": 670, "samples": samples})
    for pair in ["0>1", "1>0"]:
        results.append(ok("p2p.copy", {"pair": pair, "engine": "ce", "direction": "uni",
                                       "bytes": 268435456}, {"GBps": 372}, {"peer_access": True}))
    results.append(ok("gpu.burn", {"dtype": "auto", "shape": SHAPE, "duration_s": 60},
                      {"TFLOPs": 1470, "min_gpu_TFLOPs": 735, "drop_pct": 1.2},
                      {"m": 8192, "n": 8192, "k": 8192, "slices": 60, "gpus": burn_gpus}))
    doc["results"] = results
    return doc


# The bus ids of a DGX H100's eight GPUs, as nvidia-smi shows them.
BUS_IDS = ["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0", "0000:9a:00.0",
           "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"]


def noise(k, g):
    """A fixed factor in [0.98, 1.02] per figure and GPU: the spread of a healthy node's GPUs."""
    return 1 + 0.02 * math.sin(1.7 * k + 2.3 * g)


def eight_gpus(good):
    """The healthy machine with eight GPUs: every per-GPU figure once per GPU, moved by noise();
    peer copies around the ring (0>1, 1>2, ..., 7>0); the sustained load on all eight with a
    handful of samples each (the rules read the summaries)."""
    doc = copy.deepcopy(good)
    template = doc["system"]["gpus"][0]
    doc["system"]["gpus"] = []
    for g, bus in enumerate(BUS_IDS):
        gpu = copy.deepcopy(template)
        gpu.update({"index": g, "uuid": "GPU-fixture-%d" % g, "pci_bus_id": bus})
        doc["system"]["gpus"].append(gpu)
    results, burn = [], None
    for r in doc["results"]:
        if r["id"] == "gpu.burn":
            burn = r
        elif r["id"] == "p2p.copy" or r.get("axes", {}).get("gpu") == 1:
            continue  # GPU 1's results and the pairs are made from GPU 0's below
        elif "gpu" in r.get("axes", {}):
            for g in range(8):
                one = copy.deepcopy(r)
                one["axes"]["gpu"] = g
                for k, m in enumerate(one["metrics"].values()):
                    m.update(stats(round(m["median"] * noise(len(results) + k, g), 3)))
                results.append(one)
        else:
            results.append(r)
    pair = next(r for r in good["results"] if r["id"] == "p2p.copy")
    for g in range(8):
        one = copy.deepcopy(pair)
        one["axes"]["pair"] = "%d>%d" % (g, (g + 1) % 8)
        one["metrics"]["GBps"].update(stats(round(372 * noise(100, g), 3)))
        results.append(one)
    template = burn["info"]["gpus"][0]
    burn["info"]["gpus"] = []
    for g, bus in enumerate(BUS_IDS):
        one = copy.deepcopy(template)
        one.update({"gpu": g, "pci_bus_id": bus, "samples": template["samples"][:6]})
        burn["info"]["gpus"].append(one)
    burn["metrics"]["TFLOPs"].update(stats(735 * 8))
    results.append(burn)
    doc["results"] = results
    return doc


def gpu5_slow(doc):
    """GPU 5 is 13% slower than its seven siblings at fp16, bf16 and tf32 (and under the
    sustained load), still above the spec's floors: only a comparison with its siblings sees it."""
    for dtype in ("fp16", "bf16", "tf32"):
        rate = find(doc, "gemm", gpu=5, dtype=dtype)["metrics"]["TFLOPs"]
        rate.update(stats(round(rate["median"] * 0.87, 3)))
    burn = find(doc, "gpu.burn")
    burn["info"]["gpus"][5].update({"TFLOPs": 639, "first_tenth_TFLOPs": 644,
                                    "last_tenth_TFLOPs": 636})
    burn["metrics"]["min_gpu_TFLOPs"].update(stats(639))


def fp8_warn(doc):
    """GPU 3's fp8 GEMM under a floor that rests on an assumed catalog efficiency: a warning."""
    find(doc, "gemm", gpu=3, dtype="fp8")["metrics"]["TFLOPs"].update(stats(1060))


def find(doc, bench, **axes):
    for r in doc["results"]:
        if r["id"] == bench and all(r["axes"].get(k) == v for k, v in axes.items()):
            return r
    raise KeyError(bench)


def pcie_gen3_x8(doc):
    """GPU 1's link trained down to Gen3 x8: a quarter of its copy rate."""
    doc["system"]["gpus"][1]["pcie"] = {"gen": 3, "width": 8, "max_gen": 5, "max_width": 16}
    for bench, rate in [("pcie.h2d", 6.6), ("pcie.d2h", 6.5)]:
        r = find(doc, bench, gpu=1)
        r["metrics"]["GBps"].update(stats(rate))
        r["info"]["pcie_link_during_copy"] = {"gen": 3, "width": 8, "max_gen": 5, "max_width": 16}


def thermal_throttle(doc):
    """GPU 1 overheats under the sustained load: thermal slowdown, the rate sags over the run."""
    burn = find(doc, "gpu.burn")
    g = burn["info"]["gpus"][1]
    g.update({"TFLOPs": 610, "first_tenth_TFLOPs": 735, "last_tenth_TFLOPs": 560, "drop_pct": 23.8,
              "throttle_reasons_seen": ["hw_thermal_slowdown", "sw_power_cap",
                                        "sw_thermal_slowdown"],
              "sm_mhz_min": 1095, "sm_mhz_median": 1305, "temperature_C_max": 91})
    burn["metrics"]["drop_pct"].update(stats(23.8))
    burn["metrics"]["min_gpu_TFLOPs"].update(stats(610))


def hbm_low(doc):
    """GPU 0's memory copies at half the rate of a healthy unit (below DCGM's 1,905 GB/s floor)."""
    find(doc, "hbm.copy", gpu=0)["metrics"]["GBps"].update(stats(1480))


def nvlink_missing(doc):
    """Six of GPU 1's eighteen NVLink links are down: peer copies at two thirds of the rate."""
    doc["system"]["gpus"][1]["nvlink_links_up"] = 12
    for pair in ["0>1", "1>0"]:
        find(doc, "p2p.copy", pair=pair)["metrics"]["GBps"].update(stats(250))


def pointer(path):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def diff(before, after, path=()):
    """The JSON Patch from before to after: the smallest subtrees that changed, replaced (lists
    of one length compared element by element), and additions to lists appended."""
    if isinstance(before, dict) and isinstance(after, dict) and before.keys() == after.keys():
        return [op for k in before for op in diff(before[k], after[k], path + (k,))]
    if isinstance(before, list) and isinstance(after, list) and len(after) >= len(before):
        ops = [op for i in range(len(before)) for op in diff(before[i], after[i], path + (i,))]
        return ops + [{"op": "add", "path": pointer(path + ("-",)), "value": v}
                      for v in after[len(before):]]
    return [] if before == after else [{"op": "replace", "path": pointer(path), "value": after}]


def guarded(patch, doc):
    """Each op on a result first tests that result's id: a changed healthy file fails loudly
    instead of patching the wrong result."""
    out, tested = [], set()
    for op in patch:
        parts = op["path"].split("/")
        if len(parts) > 2 and parts[1] == "results" and parts[2] not in tested:
            tested.add(parts[2])
            out.append({"op": "test", "path": "/results/%s/id" % parts[2],
                        "value": doc["results"][int(parts[2])]["id"]})
        out.append(op)
    return out


def main(base_path):
    base = json.load(open(base_path))
    good = add_units(healthy(base),
                     declared_units(os.environ.get("GPUBENCH", "../../build/gpubench")))
    with open("validate-healthy.json", "w") as f:
        json.dump(good, f, indent=1)
        f.write("\n")
    eight = eight_gpus(good)
    with open("validate-8gpu.json", "w") as f:
        json.dump(eight, f, indent=1)
        f.write("\n")
    faults = {"pcie-gen3-x8": (pcie_gen3_x8, None), "thermal-throttle": (thermal_throttle, None),
              "hbm-low": (hbm_low, None), "nvlink-missing": (nvlink_missing, None),
              "gpu5-slow": (gpu5_slow, "validate-8gpu.json"),
              "fp8-warn": (fp8_warn, "validate-8gpu.json")}
    os.makedirs("validate-faults", exist_ok=True)
    for name, (fault, base) in faults.items():
        before = eight if base else good
        doc = copy.deepcopy(before)
        fault(doc)
        description = fault.__doc__.strip()
        doc["meta"]["warnings"].append("fault: " + " ".join(description.split()))
        patch = {"fault": " ".join(description.split())}
        if base:
            patch["base"] = base
        patch["patch"] = guarded(diff(before, doc), before)
        with open(os.path.join("validate-faults", name + ".json"), "w") as f:
            json.dump(patch, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results-2gpu-fixture.json")
