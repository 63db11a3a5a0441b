#!/usr/bin/env python3
"""Writes configs/specs/*.json, one acceptance spec per catalog GPU and system (docs/validate.md).

Expected figures come from the catalog (configs/hardware/) by reference, so a corrected catalog
figure corrects its spec; only figures that peer tools publish for a GPU and the catalog lacks
are written here as numbers, each with its source (docs/sources.md). Run it after
changing the catalog or these rules:  python3 configs/specs/make_specs.py [CATALOG [OUT]]
Every rule's benchmark, metric and catalog figures are checked against gpubench's own tables
(tools/vocabulary.py) before a spec is written.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import vocabulary  # noqa: E402

CATALOG = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "hardware")
OUT = sys.argv[2] if len(sys.argv) > 2 else HERE

# NVIDIA's nvmlClocksThrottleReasons that mean the GPU slowed itself down for a fault or for heat.
# sw_power_cap is left out: holding the power limit under a full GEMM is the GPU working as designed.
THROTTLE_FAIL = ["hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                 "hw_power_brake_slowdown"]

# Each GPU held to its siblings, the node's other GPUs, with the statistic and thresholds of
# `gpubench fleet` (docs/validate.md, "Fleets"): one figure more than max(5%, 4 robust standard
# deviations) from the median of the node's GPUs, on the worse side, fails the GPU.
SIBLINGS = {"min_deviation": 0.05, "mad_multiple": 4, "min_gpus": 3, "worse": "fail"}

# NVLink links per SXM GPU: the datasheet's NVLink total over the per-link rate of its generation
# (NVLink 2, 3 and 4: 50 GB/s per link both ways; NVLink 5: 100 GB/s).
NVLINK_LINKS = {"v100-sxm2-16gb": 6, "v100-sxm2-32gb": 6, "a100-sxm4-40gb": 12,
                "a100-sxm4-80gb": 12, "h100-sxm5-80gb": 18, "h200-sxm-141gb": 18, "b200": 18,
                "gb200": 18}
HBM_GPUS = ("v100", "a100", "h100", "h200", "b200", "gb200")
# A system the catalog sizes as one NVLink domain but whose hosts each see a part of it: the spec
# checks one host (GB200 NVL72: 18 compute trays of 4 GPUs, each with its own OS and 4 ConnectX-7).
HOSTS_PER_NODE = {"gb200-nvl72": 18}

# Device-memory copy (read + write counted) that peer tools measured on known-good units.
HBM_MEASURED = {
    "h100-sxm5-80gb": (2540.0, 0.75, "dcgmproftester on H100 SXM5 (~2,540 GB/s); floor 0.75 as DCGM "
                       "nvvs/diag-skus.yaml.in (1,905 GB/s), via docs/sources.md"),
    "a100-sxm4-80gb": (1371.0, 0.855, "superbench-results v0.4.0 Azure-NDmv4-A100 bandwidthTest D2D "
                       "(1,371 GB/s); floor at DCGM's 1,173 GB/s (nvvs/diag-skus.yaml.in)"),
}
# GPU-to-GPU copy-engine copies over NVLink that peer tools measured.
P2P_MEASURED = {
    "h100-sxm5-80gb": ("uni", 371.0, "NVIDIA/nccl-tests#149, NVIDIA/nccl#1264: 371-377 GB/s one way"),
    "a100-sxm4-80gb": ("bidir", 430.0, "p2pBandwidthLatencyTest 430-520 GB/s both ways (nccl-tests#149)"),
    "a100-sxm4-40gb": ("bidir", 430.0, "p2pBandwidthLatencyTest 430-520 GB/s both ways (nccl-tests#149)"),
}
# 8-GPU allreduce bus bandwidth at large messages.
ALLREDUCE_MEASURED = {
    "h100-sxm5-80gb": (370.0, "NVIDIA/nccl-tests#212: ~370 GB/s with rings, ~480 with NVLS"),
    "a100-sxm4-80gb": (231.0, "superbench-results v0.4.0 Azure-NDmv4-A100: 231-236 GB/s"),
    "a100-sxm4-40gb": (231.0, "superbench-results v0.4.0 Azure-NDmv4-A100 (80 GB): 231-236 GB/s; "
                       "the same NVSwitch fabric"),
}


def load(kind, name):
    with open(os.path.join(CATALOG, kind, name + ".json")) as f:
        return json.load(f)


def known(figures, key):
    return key in figures and figures[key].get("value") is not None


def gpu_spec(name):
    entry = load("gpus", name)
    fig = entry["figures"]
    figures = []
    # Every GEMM dtype the catalog gives this GPU a peak for, in the catalog's order.
    for peak in [key for key in fig if key.startswith("gpu.peak_tflops.")]:
        dtype = peak.removeprefix("gpu.peak_tflops.")
        eff = "gpu.gemm_efficiency." + dtype
        if known(fig, peak) and known(fig, eff):
            figures.append({"name": "gemm " + dtype, "benchmark": "gemm", "axes": {"dtype": dtype},
                            "metric": "TFLOPs", "per": "gpu", "expected": {"catalog": [peak, eff]},
                            "floor": 0.9})
    if name in HBM_MEASURED:
        value, floor, source = HBM_MEASURED[name]
        figures.append({"name": "hbm copy", "benchmark": "hbm.copy", "metric": "GBps", "per": "gpu",
                        "expected": value, "source": source, "floor": floor})
    elif known(fig, "gpu.hbm_peak_GBps") and known(fig, "gpu.hbm_efficiency"):
        figures.append({"name": "hbm copy", "benchmark": "hbm.copy", "metric": "GBps", "per": "gpu",
                        "expected": {"catalog": ["gpu.hbm_peak_GBps", "gpu.hbm_efficiency"]},
                        "floor": 0.75})
    if known(fig, "pcie.h2d_GBps"):
        for bench in ["pcie.h2d", "pcie.d2h"]:
            figures.append({"name": bench.replace(".", " "), "benchmark": bench,
                            "axes": {"memory": "pinned"}, "metric": "GBps", "per": "gpu",
                            "expected": {"catalog": ["pcie.h2d_GBps"]}, "floor": 0.8})
    if name in P2P_MEASURED:
        direction, value, source = P2P_MEASURED[name]
        figures.append({"name": "p2p copy " + direction, "benchmark": "p2p.copy",
                        "axes": {"engine": "ce", "direction": direction}, "metric": "GBps",
                        "per": "pair", "expected": value, "source": source, "floor": 0.85,
                        "min_gpus": 2})
    health = {"gpu_model": name}
    if known(fig, "pcie.gen"):
        health["pcie"] = {"gen": int(fig["pcie.gen"]["value"]), "width": 16}
    if name.startswith(HBM_GPUS):
        health["ecc"] = True
    if name in NVLINK_LINKS:
        health["nvlink_links"] = NVLINK_LINKS[name]
        health["peer_access"] = "nvlink"
    if known(fig, "gpu.tdp_W"):
        health["power_limit_W"] = {"expected": {"catalog": ["gpu.tdp_W"]}, "floor": 0.95}
    health["throttle_reasons_fail"] = THROTTLE_FAIL
    health["burn"] = {"max_drop_pct": 5, "sustain_fraction": 0.9, "sm_clock_fraction": 0.75}
    health["siblings"] = dict(SIBLINGS)
    return {"schema": "gpubench.spec/1", "name": name,
            "description": "%s: per-GPU floors and health rules" % entry["description"],
            "catalog": name, "figures": figures, "health": health}


def system_spec(name):
    entry = load("systems", name)
    fig = entry["figures"]
    hosts = HOSTS_PER_NODE.get(name, 1)
    gpus = entry["gpus_per_node"] // hosts
    health = {"gpus": gpus}
    if gpus == 1:
        # One GPU of a board: its NVLink links and peers may be absent by design.
        health["nvlink_links"] = 0
        health["peer_access"] = "none"
    # The catalog's cores and memory are the whole node's: a host of a larger domain holds part.
    if known(fig, "cpu.cores") and hosts == 1:
        health["cpu_cores"] = {"expected": {"catalog": ["cpu.cores"]}}
    if known(fig, "memory.GB") and hosts == 1:
        health["memory_GB"] = {"expected": {"catalog": ["memory.GB"]}, "floor": 0.9}
    network = entry.get("network", {})
    # InfiniBand adapters show their ports under /sys/class/infiniband; cloud Ethernet (ENA, EFA,
    # VPC) is not checked this way.
    if (network.get("fabric") or "").startswith("InfiniBand") and network.get("nics") and \
            network.get("nic_gbps"):
        health["network_ports"] = {"count": network["nics"] // hosts, "rate_Gbps": network["nic_gbps"],
                                   "source": "; ".join(network.get("source", []))}
    figures = []
    gpu = entry["gpu_model"]
    if gpus == 8 and gpu in ALLREDUCE_MEASURED:
        value, source = ALLREDUCE_MEASURED[gpu]
        figures.append({"name": "allreduce busbw", "benchmark": "nccl.all_reduce",
                        "axes": {"placement": "out_of_place"}, "metric": "busbw_GBps",
                        "per": "machine", "expected": value, "source": source, "floor": 0.85,
                        "min_gpus": 8, "ranks": 8})
    description = "%s: the GPU spec plus the system's own rules" % entry["description"]
    if hosts > 1:
        description += " (each of its %d hosts: %d GPUs)" % (hosts, gpus)
    return {"schema": "gpubench.spec/1", "name": name,
            "description": description,
            "catalog": name, "extends": gpu, "figures": figures, "health": health}


def check(spec, table):
    for rule in spec["figures"]:
        where = spec["name"] + ": " + rule["name"]
        table.check_measurement(rule["benchmark"], rule["metric"], where)
        if isinstance(rule["expected"], dict):
            for key in rule["expected"]["catalog"]:
                table.figure(key)
    for rule in spec["health"].values():
        if isinstance(rule, dict) and isinstance(rule.get("expected"), dict):
            for key in rule["expected"]["catalog"]:
                table.figure(key)
    return spec


def main():
    table = vocabulary.load()
    for kind, make in [("gpus", gpu_spec), ("systems", system_spec)]:
        for file in sorted(os.listdir(os.path.join(CATALOG, kind))):
            name = file[:-len(".json")]
            with open(os.path.join(OUT, name + ".json"), "w") as f:
                json.dump(check(make(name), table), f, indent=1)
                f.write("\n")


if __name__ == "__main__":
    main()
