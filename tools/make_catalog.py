#!/usr/bin/env python3
"""Regenerates configs/hardware/ from the sourced reference tables (tools/reference/hardware.json).

Run from the repository root: /usr/bin/python3 tools/make_catalog.py [REFERENCE.json [OUT]]
The catalog keeps every figure's sources and status; figures the reference could not pin down are
left null (or carried with `uncertain` and a note), never invented. Typical achieved efficiencies
(fractions of a datasheet peak) come from the peer-tool table in docs/sources.md. Every entry is
checked against gpubench's figure table (tools/vocabulary.py) before it is written.
"""
import json
import os
import re
import sys

import vocabulary

REF = sys.argv[1] if len(sys.argv) > 1 else os.path.join("tools", "reference", "hardware.json")
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.join("configs", "hardware")

# catalog name -> (reference name, names the CUDA driver reports, PCIe gen when the reference lacks it)
GPUS = {
    "v100-sxm2-16gb": ("V100-SXM2-16GB", ["V100-SXM2-16GB"], 3),
    "v100-sxm2-32gb": ("V100-SXM2-32GB", ["V100-SXM2-32GB"], 3),
    "v100-pcie-16gb": ("V100-PCIe-16GB", ["V100-PCIE-16GB"], None),
    "a100-sxm4-40gb": ("A100-SXM4-40GB", ["A100-SXM4-40GB"], None),
    "a100-sxm4-80gb": ("A100-SXM4-80GB", ["A100-SXM4-80GB"], None),
    "a100-pcie-40gb": ("A100-PCIe-40GB", ["A100-PCIE-40GB"], None),
    "a100-pcie-80gb": ("A100-PCIe-80GB", ["A100 80GB PCIe", "A100-PCIE-80GB"], None),
    "h100-sxm5-80gb": ("H100-SXM5-80GB", ["H100 80GB HBM3", "H100-SXM5-80GB"], None),
    "h100-pcie-80gb": ("H100-PCIe-80GB", ["H100 PCIe"], None),
    "h200-sxm-141gb": ("H200-SXM-141GB", ["H200"], None),
    "l40s": ("L40S", ["L40S"], None),
    "l4": ("L4", ["NVIDIA L4"], None),
    "a10g": ("A10G (AWS)", ["A10G"], 4),
    "rtx4090": ("RTX 4090", ["GeForce RTX 4090"], None),
    "rtx3090": ("RTX 3090", ["GeForce RTX 3090"], None),
    "t4": ("T4", ["Tesla T4"], None),
    "h100-nvl-94gb": ("H100-NVL-94GB", ["H100 NVL"], None),
    "a10": ("A10", ["NVIDIA A10"], None),
    "b200": ("B200", ["B200"], None),
    "gb200": ("GB200", ["GB200"], None),
}
# The reference's `pcie_gen` is missing for SXM2 modules and A10G: V100 SXM2 hosts are Gen3
# (DGX-1), A10G is a Gen4 part like the A10.
PCIE_GEN_NOTE = "not in the reference; Gen{} assumed for this GPU generation"

# Typical achieved fraction of a datasheet peak. Sources: docs/sources.md (peer-tool table).
GEMM_EFF = {
    # cuBLAS/cuBLASLt large square GEMM / datasheet dense peak
    "a100": {"fp16": 275 / 312, "bf16": 261 / 312, "tf32": 127 / 156, "fp32": 18.4 / 19.5},
    # H100: sustained 8192^3 products at the 700 W power cap, measured on an H100 SXM
    # (docs/validation/gpu-h100-2026-11-24.md: torch.matmul and gpubench agree within 3-5%).
    "h100": {"fp16": 670 / 989.4, "bf16": 699 / 989.4, "tf32": 361 / 494.7, "fp32": 51.6 / 66.9},
}
# Fractions gpubench measured where a second tool gives another figure: carried as assumed (a spec
# floor on them warns rather than fails) until the two agree. H100 fp8: gemm fp8 TN 8192^3 on the
# H100 SXM above (cuBLASLt 13.1, 1211 of 1978.9 TFLOP/s; PyTorch has no plain fp8 matmul to check
# it); Azure's cuBLASLt run on an ND H100 v5 (CUDA 12.6) gives 1290.1 at the same shape, 6.5% more,
# where the H100's other precisions agree within 3-5% across tools. The lower is kept: the H100's
# other fractions are also its sustained rates.
GEMM_EFF_UNSETTLED = {
    "h100": {"fp8": (1211 / 1978.9, "assumed from gpubench gemm fp8 TN 8192^3 on an H100 SXM, 1211 of "
                                    "1978.9 TFLOP/s (docs/validation/gpu_check-nvidia-h100-80gb-hbm3.txt), which a "
                                    "second tool puts 6.5% higher: Azure's AI-benchmarking-guide, GEMM CuBLASLt FP8 "
                                    "8192^3, 1290.1 TFLOP/s on an ND H100 v5 (github:yosoyjay/AI-benchmarking-guide, a fork of "
                                    "Azure/AI-benchmarking-guide, Azure_Results/ND_H100_v5_results.md@"
                                    "a8263ef1e16a3b8811f8e3c59fab9045f016dee8); docs/sources.md")},
}
# A GPU nobody measured is assumed no more efficient than the measured generation before it, at each
# precision (issue 41: B200 at the 0.8 default came out 2-3.5x an H100 where published runs show
# 1.35-2x). B200 also trades clocks for power at its 1000 W cap, as H100 does at 700 W; GB200, the same
# Blackwell GPU at up to 1200 W, likewise where it has no measurement of its own. A B200 is also held to
# what its 1200 W sibling measured: no better than the GB200 at a precision the GB200 has one of.
PREVIOUS_GENERATION = {"b200": ("h100", "gb200"), "gb200": ("h100",)}
# Fractions a peer tool measured on one catalog GPU itself (not its family), at 8192^3 as the H100's
# own. Azure's AI-benchmarking-guide runs cuBLASLt with random data after 10,000 warm-up iterations.
# One results file per VM type, each named once: the figures below cite it through AZURE_GUIDE.
AZURE_H200 = "github:Azure/AI-benchmarking-guide Azure_Results/ND_H200_v5_results.md@7f20e5fa3b2f9a46d8404af1f6fb14b049d6d5cc"
AZURE_GB200 = "github:Azure/AI-benchmarking-guide Azure_Results/ND_GB200_v6_results.md@fa799957e3c223546ed7726dff043cdcb62327ee"
AZURE_GUIDE = "{} ({}); docs/sources.md"
GEMM_EFF_MEASURED = {
    "h200-sxm-141gb": {"fp8": (1300.6 / 1978.9, AZURE_GUIDE.format(
        AZURE_H200, "GEMM CuBLASLt, FP8 8192^3: 1300.6 of 1978.9 TFLOP/s on an Azure ND H200 v5"))},
    "gb200": {"fp8": (2876.6 / 5000, AZURE_GUIDE.format(
        AZURE_GB200, "GEMM CuBLASLt, FP8 8192^3: 2876.6 of 5000 TFLOP/s on an Azure ND GB200 v6"))},
}
GEMM_EFF_SOURCE = ("superbench-results v0.4.0 Azure-NDmv4-A100 baseline (A100); H100: sustained torch.matmul "
                   "rate at 8192^3 measured on an H100 SXM at its power cap (docs/validation/gpu-h100-2026-11-24.md); "
                   "docs/sources.md")
# Blackwell's block-scaled types, where the GPU has them (its reference lists an FP4 tensor rate): MXFP8
# runs at the FP8 rate (NVIDIA lists one FP8/FP6 figure; torchao's roofline prices mxfp8 at the fp8
# peak), NVFP4 at the FP4 rate. Nobody measured either against the datasheet on a B200 with a second
# tool: both are assumed at this GPU's fp8 fraction. Published cuBLASLt FP4 rates bracket it: 0.58 of
# peak on a B200 (MXFP4 8192^3, deepseek-ai/DeepGEMM PR #348) and 0.76 on a GB200 (FP4 8192^3, Azure ND
# GB200 v6: AZURE_GB200).
BLOCK_SCALED = {"mxfp8": ("fp8_tensor", "MXFP8 runs at the FP8 rate: NVIDIA lists one FP8/FP6 tensor figure "
                                        "(torchao's roofline prices mxfp8 at the fp8 peak)"),
                "nvfp4": ("fp4_tensor", "NVFP4 at the FP4 tensor rate")}
BLOCK_SCALED_EFF_SOURCE = ("assumed at this GPU's fp8 fraction: no NVFP4/MXFP8 GEMM measured on it; published cuBLASLt "
                           "FP4 rates bracket it (0.58 of peak on a B200, MXFP4 8192^3, deepseek-ai/DeepGEMM PR #348; "
                           "0.76 on a GB200, Azure ND GB200 v6, " + AZURE_GB200 + "); docs/sources.md")
DEFAULT_GEMM_EFF = 0.80
HBM_EFF = 0.80
HBM_EFF_SOURCE = ("assumed typical: H100 ~2,540 of 3,350 GB/s (dcgmproftester, 0.76) and BabelStream-class copy "
                  "kernels at 0.8-0.9 of datasheet; docs/sources.md")
# Device-to-device copy rates measured on the card itself (read + write bytes over time), where a
# measurement exists; a training step's memory-bound kernels stream like a copy.
GPUINSPECTOR = ("github:pc2/GPUInspector.jl docs/src/devices/{} (memory_bandwidth(): {} GB/s device copy, "
                "CUDA.jl, cuBLAS {})")
HBM_MEASURED = {
    "v100-sxm2-16gb": (795 / 900, GPUINSPECTOR.format("v100_sxm2.md", "794.6 (740.02 GiB/s, 1.4 GiB buffers) on a "
                                                      "V100-SXM2-32GB; same HBM2 stack and clocks as the 16 GB part",
                                                      "11.8")),
    "v100-sxm2-32gb": (795 / 900, GPUINSPECTOR.format("v100_sxm2.md", "794.6 (740.02 GiB/s, 1.4 GiB buffers)", "11.8")),
    "a100-sxm4-40gb": (1311 / 1555, GPUINSPECTOR.format("a100_sxm2.md", "1310.7 (1220.7 GiB/s) on a DGX A100",
                                                        "11.7")),
    "a100-sxm4-80gb": (1709.4 / 2039, "github:aturner-epcc/uknss-benchmark-babelstream "
                                      "README.md@464294ed30571f5743051f4b0b32e29eb52e54a6 ('Example performance data', "
                                      "Tursa): BabelStream 5.0 CUDA Copy 1709.4 GB/s (Triad 1724.8) on an NVIDIA "
                                      "A100-SXM4-80GB, 2^25 doubles per array; RRZE-HPC/gpu-benches gpu-stream "
                                      "a100_80.txt@1038c5d0 gives 1737 GB/s for its copy-like scale kernel"),
    "h200-sxm-141gb": (4010 / 4800, AZURE_H200 + " ('HBM Bandwidth'): Copy 4.01 TB/s (Triad 4.15) on an Azure "
                                    "ND H200 v5"),
    "h100-sxm5-80gb": (2958 / 3350, "gpubench hbm.copy 2953-2962 GB/s on an H100 SXM 80GB HBM3 (torch copy_ "
                                    "2994-2999); docs/validation/gpu-h100-2026-11-24.md"),
}
# Pinned copy-engine H2D per GPU by PCIe generation (x16), GB/s: superbench 25.9 (Gen4), nvbandwidth ~55 (Gen5);
# Gen3 x16 is half of Gen4.
PCIE_H2D = {3: 12.5, 4: 25.9, 5: 55.0, 6: 110.0}
# A GPU whose host link is not PCIe (GB200: NVLink-C2C to its Grace CPU) carries its measured pinned
# host-to-device rate instead of a PCIe generation's.
HOST_LINK_MEASURED = {
    "gb200": (201.0, "nvbandwidth Host to Device 201 GB/s per GPU (Device to Host 193) on Azure ND GB200 v6: "
                     + AZURE_GB200 + "; docs/sources.md"),
}
PCIE_SOURCE = ("superbench-results (A100, Gen4 x16: 25.9 GB/s), NVIDIA/nvbandwidth#24 (Gen5 x16: ~55 GB/s); "
               "Gen3 = half of Gen4, Gen6 = twice Gen5 (no measurement in the reference)")
# NCCL allreduce busbw for 8 GPUs over NVSwitch/NVLink, as a fraction of the per-GPU unidirectional NVLink rate:
# A100 231-236 of 300, H100 ~370 (ring) of 450.
NVLINK_BUSBW_EFF = 0.8
NVLINK_SOURCE = "superbench-results (A100 8 GPUs: 231-236 GB/s), NVIDIA/nccl-tests#212 (H100: ~370 ring)"


def fig(entry, scale=1.0):
    """A reference field object as a catalog figure."""
    out = {"value": None if entry.get("value") is None else entry["value"] * scale,
           "source": entry.get("source", []), "status": entry.get("status", "")}
    for key in ("note", "uncertain", "alt"):
        if key in entry:
            out[key] = entry[key]
    return out


def derived(value, source, note=None, status="derived"):
    out = {"value": value, "source": [source] if isinstance(source, str) else source, "status": status}
    if note:
        out["note"] = note
    return out


def family(name):
    return "h100" if name.startswith(("h100", "h200")) else "a100" if name.startswith("a100") else None


def measured_bound(name, dtype):
    """(fraction, basis, whose) measured at `dtype` on a GPU family ("h100") or one catalog GPU
    ("gb200"); the 0.8 default where neither has a measurement."""
    if dtype in GEMM_EFF_MEASURED.get(name, {}):
        value, basis = GEMM_EFF_MEASURED[name][dtype]
    elif dtype in GEMM_EFF.get(name, {}):
        value, basis = GEMM_EFF[name][dtype], GEMM_EFF_SOURCE
    else:
        value, basis = GEMM_EFF_UNSETTLED.get(name, {}).get(dtype, (DEFAULT_GEMM_EFF, "the 0.8 default"))
    return value, basis, name.upper()


def gpu_memory(ref):
    """GPU memory as the GPU reports it (nvidia-smi's total, MiB), in GiB; else the datasheet's
    size, which is GiB of HBM/GDDR, a little above what the GPU reports (ECC and the driver's
    reserve are taken off first)."""
    reported = ref.get("reported_memory_MiB", {})
    if reported.get("value") is not None:
        out = fig(reported, 1 / 1024)
        out["value"] = round(out["value"], 3)
        out["note"] = (f"{reported['value']} MiB reported" + (f"; {reported['note']}" if reported.get("note") else ""))
        return out
    out = fig(ref["memory_GB"])
    out["status"] = "datasheet_nominal"
    out["note"] = ("the datasheet's size, in GiB: no reported total found; the GPU reports a little less "
                   + (f"({ref['memory_GB']['note']})" if ref["memory_GB"].get("note") else "")).strip()
    return out


def gpu_entry(cat_name, ref, device_names, pcie_fallback):
    t = ref["tflops"]
    figures = {}
    dtype_keys = {"fp16": "fp16_tensor", "bf16": "bf16_tensor", "tf32": "tf32_tensor", "fp32": "fp32",
                  "fp8": "fp8_tensor"}
    for dtype, key in dtype_keys.items():
        entry = t.get(key, {})
        f = fig(entry)
        if f["value"] is None and entry.get("alt"):
            # Only an upper bound is known (A10G): carried, marked uncertain.
            alt_name, alt_value = next(iter(entry["alt"].items()))
            f["value"] = alt_value
            f["uncertain"] = True
            f["note"] = (entry.get("note", "") + f" [catalog: taken from alt '{alt_name}' as an upper bound]").strip()
        if f["value"] is None:
            continue  # not supported or not known: the model refuses that precision on this GPU
        figures[f"gpu.peak_tflops.{dtype}"] = f
        fam = family(cat_name)
        if dtype in GEMM_EFF_MEASURED.get(cat_name, {}):
            value, source = GEMM_EFF_MEASURED[cat_name][dtype]
            figures[f"gpu.gemm_efficiency.{dtype}"] = derived(round(value, 3), source, status="peer_tool")
        elif fam and dtype in GEMM_EFF[fam]:
            figures[f"gpu.gemm_efficiency.{dtype}"] = derived(round(GEMM_EFF[fam][dtype], 3), GEMM_EFF_SOURCE,
                                                               status="peer_tool")
        elif fam and dtype in GEMM_EFF_UNSETTLED.get(fam, {}):
            value, source = GEMM_EFF_UNSETTLED[fam][dtype]
            figures[f"gpu.gemm_efficiency.{dtype}"] = derived(round(value, 3), source, status="assumed")
        elif (before := PREVIOUS_GENERATION.get(cat_name)) is not None:
            # No better than the generation before (its measured fractions), nor than a
            # sibling's measurement; the lowest of them binds.
            value, basis, whose = min(bound for other in before if (bound := measured_bound(other, dtype)))
            figures[f"gpu.gemm_efficiency.{dtype}"] = derived(
                round(min(DEFAULT_GEMM_EFF, value), 3),
                f"assumed no better than the {whose}'s fraction at {dtype}: {basis}",
                note="not measured on this GPU", status="assumed")
        else:
            figures[f"gpu.gemm_efficiency.{dtype}"] = derived(
                DEFAULT_GEMM_EFF, "assumed: typical cuBLAS large-GEMM fraction of peak (A100/H100 range 0.77-0.94)",
                status="assumed")
    fp4 = t.get("fp4_tensor", {})
    if fp4.get("value") is not None and "gpu.gemm_efficiency.fp8" in figures:
        for dtype, (key, why) in BLOCK_SCALED.items():
            peak = fig(t[key])
            peak["note"] = (peak.get("note", "") + "; " + why).lstrip("; ")
            figures[f"gpu.peak_tflops.{dtype}"] = peak
            figures[f"gpu.gemm_efficiency.{dtype}"] = derived(
                figures["gpu.gemm_efficiency.fp8"]["value"], BLOCK_SCALED_EFF_SOURCE,
                note="not measured on this GPU", status="assumed")
    figures["gpu.hbm_peak_GBps"] = fig(ref["memory_bandwidth_GBps"])
    if cat_name in HBM_MEASURED:
        eff, source = HBM_MEASURED[cat_name]
        figures["gpu.hbm_efficiency"] = derived(round(eff, 3), source, status="peer_tool")
    else:
        figures["gpu.hbm_efficiency"] = derived(HBM_EFF, HBM_EFF_SOURCE, status="assumed")
    figures["gpu.memory_GiB"] = gpu_memory(ref)
    if ref["sm_count"].get("value") is not None:
        figures["gpu.sm_count"] = fig(ref["sm_count"])
    else:
        figures["gpu.sm_count"] = derived(None, [], ref["sm_count"].get("note"), status="not_found")
    gen = ref["pcie_gen"].get("value")
    if cat_name in HOST_LINK_MEASURED:
        rate, source = HOST_LINK_MEASURED[cat_name]
        figures["pcie.gen"] = fig(ref["pcie_gen"])  # null, with the reason: the host link is not PCIe
        figures["pcie.h2d_GBps"] = derived(rate, source, "NVLink-C2C, not PCIe: measured pinned copy rate",
                                           status="peer_tool")
    elif gen is None:
        gen = pcie_fallback
        figures["pcie.gen"] = derived(gen, [], PCIE_GEN_NOTE.format(gen), status="assumed")
    else:
        figures["pcie.gen"] = fig(ref["pcie_gen"])
    if cat_name not in HOST_LINK_MEASURED:
        figures["pcie.h2d_GBps"] = derived(PCIE_H2D[int(gen)], PCIE_SOURCE,
                                           f"typical pinned copy-engine rate for PCIe Gen{int(gen)} x16",
                                           status="peer_tool")
    nvl = ref.get("nvlink_bandwidth_GBps_bidir_total", {})
    if nvl.get("value"):
        figures["nvlink.bidir_GBps"] = fig(nvl)
    figures["gpu.tdp_W"] = fig(ref["tdp_W"])
    return {
        "schema": "gpubench.hardware/1",
        "name": cat_name,
        "kind": "gpu",
        "description": ref["name"],
        "device_names": device_names,
        "gpu_model": cat_name,
        "gpus_per_node": 1,
        "figures": figures,
    }


# catalog name -> reference system name
SYSTEMS = {
    "dgx1-v100": "NVIDIA DGX-1 (V100)",
    "dgx-a100-40gb": "NVIDIA DGX A100 (40GB)",
    "dgx-a100-80gb": "NVIDIA DGX A100 (80GB)",
    "dgx-h100": "NVIDIA DGX H100",
    "dgx-h200": "NVIDIA DGX H200",
    "dgx-b200": "NVIDIA DGX B200",
    "gb200-nvl72": "NVIDIA GB200 NVL72",
    "aws-p3.16xlarge": "p3.16xlarge",
    "aws-p3dn.24xlarge": "p3dn.24xlarge",
    "aws-p4d.24xlarge": "p4d.24xlarge",
    "aws-p4de.24xlarge": "p4de.24xlarge",
    "aws-p5.48xlarge": "p5.48xlarge",
    "aws-p5e.48xlarge": "p5e.48xlarge",
    "aws-p5en.48xlarge": "p5en.48xlarge",
    "aws-p6-b200.48xlarge": "p6-b200.48xlarge",
    "aws-g5.xlarge": "g5.xlarge",
    "aws-g5.12xlarge": "g5.12xlarge",
    "aws-g5.48xlarge": "g5.48xlarge",
    "aws-g6e.xlarge": "g6e.xlarge",
    "aws-g4dn.xlarge": "g4dn.xlarge",
    "gcp-a2-highgpu-8g": "a2-highgpu-8g",
    "gcp-a2-ultragpu-8g": "a2-ultragpu-8g",
    "gcp-a3-highgpu-8g": "a3-highgpu-8g",
    "gcp-a3-ultragpu-8g": "a3-ultragpu-8g",
    "gcp-a4-highgpu-8g": "a4-highgpu-8g",
    "gcp-g2-standard-4": "g2-standard-4",
    "azure-nd96asr-v4": "Standard_ND96asr_v4 (NDv4, A100 40GB)",
    "azure-nd96amsr-a100-v4": "Standard_ND96amsr_A100_v4 (NDm A100 v4, 80GB)",
    "azure-nd96isr-h100-v5": "Standard_ND96isr_H100_v5 (ND H100 v5)",
    "azure-nd96isr-h200-v5": "Standard_ND96isr_H200_v5 (ND H200 v5)",
    "lambda-8x-h100-sxm": "Lambda 8x H100 SXM",
    "lambda-8x-a100-sxm-80gb": "Lambda 8x A100 SXM 80GB",
    "lambda-8x-a100-sxm-40gb": "Lambda 8x A100 SXM 40GB",
    "lambda-1x-a100-sxm-40gb": "Lambda 1x A100 SXM 40GB (gpu_1x_a100_sxm4)",
    "lambda-1x-h100-sxm": "Lambda 1x H100 SXM",
}
# How each system's nodes reach one another: the compute fabric, its NICs and their rate (storage
# and management ports left out). Sources are the ones the reference cites for network_Gbps unless a
# row names its own; `gbps` fills a per-node rate the reference left null. Lambda's instance page
# gives no network figure at all, so those rows say so instead of guessing.
DGX1_WP = ("NVIDIA DGX-1 with Tesla V100 System Architecture white paper (WP-08437-002): 'four 100 Gb "
           "InfiniBand network interface cards' (quoted at https://leslivresblancs.fr/livre/"
           "informatique-et-logiciels/intelligence-artificielle/nvidia-dgx-1-tesla-v100-system)")
LAMBDA_NONE = {
    "fabric": None, "nics": None, "nic_gbps": None,
    "note": "Lambda's instance page lists GPUs, vCPUs, RAM and SSD only; Lambda sells "
            "multi-node InfiniBand as 1-Click Clusters, a separate product",
    "source": ["github:api-evangelist/lambda-labs plans/lambda-labs-plans-pricing.yml (transcribed from "
               "lambda.ai/instances, read 2026-09-20)", "https://docs.lambda.ai/public-cloud/billing"],
}
NETWORK = {
    "dgx1-v100": {"fabric": "InfiniBand EDR", "nics": 4, "nic_gbps": 100, "gbps": 400, "source": [DGX1_WP]},
    "dgx-a100-40gb": {"fabric": "InfiniBand HDR (ConnectX-6)", "nics": 8, "nic_gbps": 200},
    "dgx-a100-80gb": {"fabric": "InfiniBand HDR", "nics": 8, "nic_gbps": 200},
    "dgx-h100": {"fabric": "InfiniBand NDR (ConnectX-7)", "nics": 8, "nic_gbps": 400},
    "dgx-h200": {"fabric": "InfiniBand NDR (ConnectX-7)", "nics": 8, "nic_gbps": 400},
    "dgx-b200": {"fabric": "InfiniBand NDR (ConnectX-7)", "nics": 8, "nic_gbps": 400},
    # One 72-GPU NVLink domain as one node: 18 compute trays x 4 ConnectX-7, one per GPU.
    "gb200-nvl72": {"fabric": "InfiniBand NDR (ConnectX-7)", "nics": 72, "nic_gbps": 400},
    "aws-p3.16xlarge": {"fabric": "Ethernet (ENA)", "nics": 1, "nic_gbps": 25},
    "aws-p3dn.24xlarge": {"fabric": "Ethernet (ENA)", "nics": 1, "nic_gbps": 100},
    "aws-p4d.24xlarge": {"fabric": "Ethernet (ENA) with EFA", "nics": 4, "nic_gbps": 100},
    "aws-p4de.24xlarge": {"fabric": "Ethernet (ENA) with EFA", "nics": 4, "nic_gbps": 100},
    "aws-p5.48xlarge": {"fabric": "Ethernet (ENA) with EFA", "nics": 32, "nic_gbps": 100},
    # 3200 Gb/s over 32, 16 and 8 EFA network cards (EFAv2, v3, v4): the per-card rate is the quotient.
    "aws-p5e.48xlarge": {"fabric": "Ethernet (ENA) with EFA", "nics": 32, "nic_gbps": 100},
    "aws-p5en.48xlarge": {"fabric": "Ethernet (ENA) with EFAv3", "nics": 16, "nic_gbps": 200},
    "aws-p6-b200.48xlarge": {"fabric": "Ethernet (ENA) with EFAv4", "nics": 8, "nic_gbps": 400},
    "aws-g5.xlarge": {"fabric": "Ethernet (ENA), burst rate", "nics": 1, "nic_gbps": 10},
    "aws-g5.12xlarge": {"fabric": "Ethernet (ENA)", "nics": 1, "nic_gbps": 40},
    "aws-g5.48xlarge": {"fabric": "Ethernet (ENA)", "nics": 1, "nic_gbps": 100},
    "aws-g6e.xlarge": {"fabric": "Ethernet (ENA), burst rate", "nics": 1, "nic_gbps": 20},
    "aws-g4dn.xlarge": {"fabric": "Ethernet (ENA), burst rate", "nics": 1, "nic_gbps": 25},
    "gcp-a2-highgpu-8g": {"fabric": "Ethernet (VPC), egress cap", "nics": None, "nic_gbps": None},
    "gcp-a2-ultragpu-8g": {"fabric": "Ethernet (VPC), egress cap", "nics": None, "nic_gbps": None},
    "gcp-a3-highgpu-8g": {"fabric": "Ethernet (VPC)", "nics": 5, "nic_gbps": None},
    # One ConnectX-7 per GPU for RDMA; the two gVNICs (400 Gb/s more) carry general traffic and are left out.
    "gcp-a3-ultragpu-8g": {"fabric": "RoCE (ConnectX-7)", "nics": 8, "nic_gbps": 400},
    "gcp-a4-highgpu-8g": {"fabric": "RoCE (ConnectX-7)", "nics": 8, "nic_gbps": 400},
    "gcp-g2-standard-4": {"fabric": "Ethernet (VPC), egress cap", "nics": None, "nic_gbps": None},
    "azure-nd96asr-v4": {"fabric": "InfiniBand HDR", "nics": 8, "nic_gbps": 200},
    "azure-nd96amsr-a100-v4": {"fabric": "InfiniBand HDR", "nics": 8, "nic_gbps": 200},
    "azure-nd96isr-h100-v5": {"fabric": "InfiniBand NDR (ConnectX-7)", "nics": 8, "nic_gbps": 400},
    "azure-nd96isr-h200-v5": {"fabric": "InfiniBand NDR (ConnectX-7)", "nics": 8, "nic_gbps": 400},
    "lambda-8x-h100-sxm": LAMBDA_NONE,
    "lambda-8x-a100-sxm-80gb": LAMBDA_NONE,
    "lambda-8x-a100-sxm-40gb": LAMBDA_NONE,
    "lambda-1x-a100-sxm-40gb": LAMBDA_NONE,
    "lambda-1x-h100-sxm": LAMBDA_NONE,
}
# Typical 128 KiB random-read rate of one data-centre NVMe drive at queue depth 32 (an assumption:
# Gen4 drives list 5-7 GB/s sequential and 1M+ 4K IOPS; cloud local drives are often slower).
NVME_DRIVE_GBPS = 2.0
SATA_DRIVE_GBPS = 0.5  # the SATA III link (6 Gb/s) caps one drive near 0.55 GB/s
STORAGE_SOURCE = ("assumed: 2.0 GB/s per NVMe drive, 0.5 GB/s per SATA SSD, for 128 KiB random reads "
                  "(measure with gpubench nvme.rand_read)")


def physical_cores(sys_ref):
    vcpus = sys_ref["vcpus"].get("value")
    if vcpus:
        return vcpus // 2, f"{vcpus} vCPUs = {vcpus // 2} physical cores (2 hardware threads per core)"
    model = sys_ref["cpu_model"].get("value") or ""
    m = re.match(r"(\d+)x .*\((\d+) cores each\)", model)
    if m:
        return int(m.group(1)) * int(m.group(2)), f"{model}"
    return None, "core count not in the reference"


def local_drives(text):
    """(drive count, GB/s per drive, kind) from the reference's local-storage text, or None."""
    if not text:
        return None
    if "data" in text and "NVMe" in text:
        return 4, NVME_DRIVE_GBPS, "NVMe"  # DGX data RAID: 4 or more U.2 drives; 4 is the conservative count
    m = re.match(r"(\d+) x [\d.,]+ [GT]B SATA SSD", text)
    if m:
        return int(m.group(1)), SATA_DRIVE_GBPS, "SATA"
    m = re.match(r"(\d+) x [\d.,]+ [GT]B NVMe", text) or re.search(r"(\d+) NVMe disks", text)
    if m:
        return int(m.group(1)), NVME_DRIVE_GBPS, "NVMe"
    return None


def system_entry(cat_name, s, gpu_names):
    gpu_ref = s["gpu"]["value"]
    gpu_model = next(k for k, v in GPUS.items() if v[0] == gpu_ref)
    figures = {}
    cores, core_note = physical_cores(s)
    figures["cpu.cores"] = derived(cores, s["vcpus"].get("source") or s["cpu_model"].get("source", []), core_note,
                                   status="provider_doc" if cores else "not_found")
    figures["memory.GB"] = fig(s["ram_GB"])
    drives = local_drives(s["local_nvme"].get("value"))
    if drives:
        count, per_drive, kind = drives
        figures["storage.read_GBps"] = derived(count * per_drive, STORAGE_SOURCE,
                                               f"{count} {kind} drive(s): {s['local_nvme']['value']}",
                                               status="assumed")
    else:
        figures["storage.read_GBps"] = derived(None, s["local_nvme"].get("source", []),
                                               f"no local NVMe figure: {s['local_nvme'].get('value')}",
                                               status="not_found")
    net = NETWORK[cat_name]
    if s["network_Gbps"].get("value") is None and net.get("gbps"):
        figures["network.gbps"] = derived(net["gbps"], net["source"],
                                          f"{net['nics']} x {net['nic_gbps']} Gb/s {net['fabric']} (derived sum)",
                                          status="datasheet_derived")
    elif s["network_Gbps"].get("value") is None and net.get("note"):
        figures["network.gbps"] = derived(None, net["source"], net["note"],
                                          status="not_found")
    else:
        figures["network.gbps"] = fig(s["network_Gbps"])
    figures["price.usd_per_hour"] = fig(s["on_demand_usd_per_hour"])
    return {
        "schema": "gpubench.hardware/1",
        "name": cat_name,
        "kind": "system",
        "description": f"{s['name']} ({s['provider']}): {s['gpu_count']['value']}x {gpu_ref}, "
                       f"{s['gpu_interconnect'].get('value')}",
        "provider": s["provider"],
        "gpu_model": gpu_model,
        "gpus_per_node": s["gpu_count"]["value"],
        "interconnect": s["gpu_interconnect"].get("value"),
        "network": {"fabric": net["fabric"], "nics": net["nics"], "nic_gbps": net["nic_gbps"],
                    "source": net.get("source") or figures["network.gbps"]["source"]},
        "figures": figures,
    }


def main():
    table = vocabulary.load()
    with open(REF) as f:
        ref = json.load(f)
    by_name = {g["name"]: g for g in ref["gpus"]}
    for cat_name, (ref_name, device_names, pcie_fallback) in GPUS.items():
        entry = gpu_entry(cat_name, by_name[ref_name], device_names, pcie_fallback)
        table.check_figures(entry["figures"], cat_name)
        write(os.path.join(OUT, "gpus", cat_name + ".json"), entry)
    systems = {s["name"]: s for s in ref["systems"]}
    for cat_name, ref_name in SYSTEMS.items():
        entry = system_entry(cat_name, systems[ref_name], GPUS)
        table.check_figures(entry["figures"], cat_name)
        write(os.path.join(OUT, "systems", cat_name + ".json"), entry)


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
