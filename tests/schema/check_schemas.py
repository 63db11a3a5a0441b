#!/usr/bin/env python3
"""The JSON Schemas in docs/schema/ against the real binary (CTest label `cli`).

- Every shipped workload, suite and results fixture, and a results.json a real `gpubench run`
  writes here, is valid under its schema.
- Workload files: for every variant below, the schema and `gpubench size` agree — both accept it
  (exit 0) or both reject it (exit 2). A field the parser learns and the schema lacks, or a range
  that drifts, fails here.

usage: check_schemas.py GPUBENCH SOURCE_DIR OUT_DIR       exit 77 (skip) without python3-jsonschema
"""
import copy
import glob
import json
import os
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    print("skipped: python3-jsonschema is not installed")
    sys.exit(77)

GPUBENCH, SOURCE, OUT = sys.argv[1:4]
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def validator(name):
    schema = json.load(open(os.path.join(SOURCE, "docs", "schema", name + ".schema.json")))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def first_error(v, doc):
    errors = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
    return f"{errors[0].json_path}: {errors[0].message[:120]}" if errors else None


def check_files(v, kind, paths):
    for path in paths:
        doc = json.load(open(path))
        if isinstance(doc, dict) and doc.get("schema") == f"gpubench.{kind}/1":
            error = first_error(v, doc)
            check(error is None, f"{os.path.relpath(path, SOURCE)} is a valid {kind} ({error})")


os.makedirs(OUT, exist_ok=True)
results_v, suite_v, workload_v = validator("results"), validator("suite"), validator("workload")

check_files(suite_v, "suite", sorted(glob.glob(os.path.join(SOURCE, "configs/suites/*.json"))))
check_files(workload_v, "workload",
            sorted(glob.glob(os.path.join(SOURCE, "configs/workloads/*.json"))))
check_files(results_v, "results",
            sorted(glob.glob(os.path.join(SOURCE, "tests/data/*.json"))) +
            sorted(glob.glob(os.path.join(SOURCE, "docs/examples/**/results.json"), recursive=True)))

# The example in docs/schema.md's workload section.
schema_md = open(os.path.join(SOURCE, "docs", "schema.md")).read()
section = schema_md[schema_md.index("## `gpubench.workload/1`"):]
example = json.loads(section[section.index("```json") + 7:section.index("```", section.index("```json") + 7)])
example_path = os.path.join(OUT, "schema-md-example.json")
json.dump(example, open(example_path, "w"))
check(first_error(workload_v, example) is None, "docs/schema.md's workload example is valid")
size = subprocess.run([GPUBENCH, "size", "--workload", example_path, "--hardware",
                       "catalog:dgx-a100-80gb"], capture_output=True, text=True)
check(size.returncode == 0, f"gpubench size accepts docs/schema.md's workload example ({size.stderr.strip()})")

# A results.json the binary writes now: a measured case, a skipped benchmark, a skipped case.
suite = {"schema": "gpubench.suite/1", "name": "schema-check",
         "defaults": {"repetitions": 2, "warmup_iterations": 0, "min_time_s": 0.01},
         "benchmarks": [{"id": "host.membw",
                         "axes": {"kernel": "copy", "threads": 1, "array_bytes": "8MiB"}},
                        {"id": "hbm.copy"}]}
suite_path = os.path.join(OUT, "suite.json")
json.dump(suite, open(suite_path, "w"))
run_dir = os.path.join(OUT, "run")
subprocess.run(["rm", "-rf", run_dir], check=True)
run = subprocess.run([GPUBENCH, "run", "--suite", suite_path, "--out", run_dir],
                     capture_output=True, text=True)
check(run.returncode == 0,
      "gpubench run exits 0" + ("" if run.returncode == 0 else f" (got {run.returncode}: {run.stderr[-300:]})"))
results_path = os.path.join(run_dir, "results.json")
if os.path.exists(results_path):
    check_files(results_v, "results", [results_path])
    check(len(json.load(open(results_path))["results"]) >= 2, "the run wrote its cases")

# Workload variants: (what, change, accepted). A change is a function of a copy of the base.
base = {"schema": "gpubench.workload/1", "name": "w", "model": {"preset": "resnet50"},
        "precision": "amp_fp16", "batch_per_gpu": 64, "optimizer": "sgd",
        "data": {"source": "storage", "pipeline": "jpeg_rrc_flip_normalize"}}


def setter(path, value):
    def change(doc):
        node = doc
        for key in path[:-1]:
            node = node.setdefault(key, {})
        if value is DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return change


DELETE = object()
gpt = {"preset": "gpt", "layers": 4, "hidden": 512, "heads": 8, "seq_len": 256, "vocab": 1000}
variants = [
    ("the base", setter(["name"], "w"), True),
    ("a transformer preset with parameters", setter(["model"], gpt), True),
    ("a transformer preset's flag", setter(["model"], {**gpt, "activation_checkpointing": True}), True),
    ("explicit ops", setter(["model"], {"ops": [{"gemm": [64, 64, 64], "count": 3, "kind": "conv"},
                                                {"elementwise_bytes": 1e6}], "params": 1e6}), True),
    ("totals", setter(["model"], {"flops_per_sample": 1e12, "params": 1e8,
                                  "activation_bytes_per_sample": 1e7, "kernels_per_step": 100}), True),
    ("every data field", setter(["data"], {"source": "synthetic", "pipeline": "none",
                                           "image": {"width": 640, "height": 480, "out": 192},
                                           "bytes_per_sample_stored": 1e5, "bytes_per_sample_h2d": 1e5,
                                           "dataset_bytes": 1e12, "loader_workers_per_gpu": 2,
                                           "loader": "native"}), True),
    ("parallel", setter(["parallel"], {"gpus": 8, "nodes": 2, "strategy": "fsdp"}), True),
    ("a reference", setter(["reference"], {"hardware": "catalog:a100-sxm4-80gb", "gpus": 8,
                                           "batch_per_gpu": 32, "gradient_accumulation": 2,
                                           "samples_per_s": 2000, "precision": "amp_bf16"}), True),
    ("gradient accumulation", setter(["gradient_accumulation"], 1024), True),
    ("a per-tensor optimizer", setter(["optimizer_impl"], "per_tensor"), True),
    ("resnet50 in NCHW", setter(["model", "channels_last"], False), True),
    ("totals with parameter tensors",
     setter(["model"], {"flops_per_sample": 1e12, "params": 1e8, "param_tensors": 300}), True),
    ("no schema", setter(["schema"], DELETE), False),
    ("another schema", setter(["schema"], "gpubench.workload/2"), False),
    ("an empty name", setter(["name"], ""), False),
    ("an unknown member", setter(["batch"], 3), False),
    ("no model", setter(["model"], DELETE), False),
    ("an empty model", setter(["model"], {}), False),
    ("an unknown preset", setter(["model", "preset"], "resnet51"), False),
    ("a transformer parameter on resnet50", setter(["model", "layers"], 12), False),
    ("resnet50 below 32 pixels", setter(["model", "image_size"], 16), False),
    ("no heads", setter(["model"], {**gpt, "heads": 0}), False),
    ("lm_head_fraction above 1", setter(["model"], {**gpt, "lm_head_fraction": 2}), False),
    ("a flag that is not a boolean", setter(["model"], {**gpt, "flash_attention": "yes"}), False),
    ("a preset parameter out of range", setter(["model"], {**gpt, "vocab": 200000000}), False),
    ("ops without params", setter(["model"], {"ops": [{"elementwise_bytes": 1}]}), False),
    ("no ops", setter(["model"], {"ops": [], "params": 1}), False),
    ("a gemm of two dimensions", setter(["model"], {"ops": [{"gemm": [1, 2]}], "params": 1}), False),
    ("a gemm of kind attention",
     setter(["model"], {"ops": [{"gemm": [1, 2, 3], "kind": "attention"}], "params": 1}), False),
    ("an op of neither kind", setter(["model"], {"ops": [{"count": 1}], "params": 1}), False),
    ("totals and ops together",
     setter(["model"], {"ops": [{"elementwise_bytes": 1}], "params": 1, "flops_per_sample": 1}), False),
    ("totals without params", setter(["model"], {"flops_per_sample": 1e9}), False),
    ("precision fp16", setter(["precision"], "fp16"), False),
    ("batch 0", setter(["batch_per_gpu"], 0), False),
    ("batch 2.5", setter(["batch_per_gpu"], 2.5), False),
    ("batch past 2^24", setter(["batch_per_gpu"], 2 ** 24 + 1), False),
    ("accumulation 0", setter(["gradient_accumulation"], 0), False),
    ("optimizer rmsprop", setter(["optimizer"], "rmsprop"), False),
    ("optimizer_impl apex", setter(["optimizer_impl"], "apex"), False),
    ("channels_last on a transformer", setter(["model"], {**gpt, "channels_last": True}), False),
    ("negative parameter tensors",
     setter(["model"], {"flops_per_sample": 1e12, "params": 1e8, "param_tensors": -1}), False),
    ("data source s3", setter(["data", "source"], "s3"), False),
    ("data pipeline audio", setter(["data", "pipeline"], "audio"), False),
    ("an image 4 pixels wide", setter(["data", "image"], {"width": 4}), False),
    ("an unknown image member", setter(["data", "image"], {"depth": 3}), False),
    ("loader dali", setter(["data", "loader"], "dali"), False),
    ("an unknown data member", setter(["data", "shards"], 3), False),
    ("dataset of 0 bytes", setter(["data", "dataset_bytes"], 0), False),
    ("0 loader workers per GPU", setter(["data", "loader_workers_per_gpu"], 0), False),
    ("strategy zero3", setter(["parallel"], {"strategy": "zero3"}), False),
    ("0 GPUs per node", setter(["parallel"], {"gpus": 0}), False),
    ("an unknown parallel member", setter(["parallel"], {"experts": 2}), False),
    ("tensor parallelism on a CNN", setter(["parallel"], {"tensor": 2}), False),
    ("pipeline stages on a CNN", setter(["parallel"], {"pipeline": 2}), False),
    ("tensor x pipeline x sequence parallel on a transformer",
     lambda doc: (setter(["model"], gpt)(doc),
                  setter(["parallel"], {"gpus": 8, "tensor": 2, "pipeline": 2,
                                          "sequence_parallel": True})(doc)),
     True),
    ("a mixture of experts split 2 ways, the DeepEP dispatcher, the all-to-all overlapped",
     lambda doc: (setter(["model"], {**gpt, "experts": {"count": 4, "top_k": 2, "ffn": 256}})(doc),
                  setter(["parallel"], {"gpus": 8, "expert": 2, "expert_dispatcher": "deepep",
                                          "expert_overlap": True})(doc)),
     True),
    ("every other layer attending within 64 tokens, the norms recomputed",
     setter(["model"], {**gpt, "causal": True, "attention_window": 64, "windowed_layers": 2,
                        "recompute_norms": True, "recompute_moe_activation": False}), True),
    ("a negative attention window", setter(["model"], {**gpt, "attention_window": -1}), False),
    ("windowed layers as a fraction",
     setter(["model"], {**gpt, "causal": True, "attention_window": 64, "windowed_layers": 0.5}),
     False),
    ("expert dispatcher nccl",
     lambda doc: (setter(["model"], {**gpt, "experts": {"count": 4, "top_k": 2, "ffn": 256}})(doc),
                  setter(["parallel"], {"gpus": 8, "expert": 2, "expert_dispatcher": "nccl"})(doc)),
     False),
    ("an expert overlap that is not a boolean",
     lambda doc: (setter(["model"], {**gpt, "experts": {"count": 4, "top_k": 2, "ffn": 256}})(doc),
                  setter(["parallel"], {"gpus": 8, "expert": 2, "expert_overlap": "yes"})(doc)),
     False),
    ("a tensor split of 0", lambda doc: (setter(["model"], gpt)(doc),
                                         setter(["parallel"], {"tensor": 0})(doc)), False),
    ("16-bit gradients on the megatron stack",
     lambda doc: (setter(["stack"], "megatron")(doc),
                  setter(["gradient_precision"], "weights")(doc)), True),
    ("gradient_precision bf16", setter(["gradient_precision"], "bf16"), False),
    ("a model kept in bf16", setter(["parameter_precision"], "weights"), True),
    ("apex amp O2's fp16 model with an fp32 master copy", setter(["parameter_precision"], "master"),
     True),
    ("parameter_precision fp16", setter(["parameter_precision"], "fp16"), False),
    ("a reference without hardware", setter(["reference"], {"samples_per_s": 10}), False),
    ("a reference without a rate", setter(["reference"], {"hardware": "catalog:a100-sxm4-80gb"}), False),
    ("a reference rate of 0",
     setter(["reference"], {"hardware": "catalog:a100-sxm4-80gb", "samples_per_s": 0}), False),
]
for index, (what, change, accepted) in enumerate(variants):
    doc = copy.deepcopy(base)
    change(doc)
    path = os.path.join(OUT, f"workload-{index}.json")
    json.dump(doc, open(path, "w"))
    schema_error = first_error(workload_v, doc)
    size = subprocess.run([GPUBENCH, "size", "--workload", path, "--hardware",
                           "catalog:h100-sxm5-80gb"], capture_output=True, text=True)
    said = size.stderr.strip().splitlines()[-1] if size.stderr.strip() else ""
    expected_exit = 0 if accepted else 2
    check((schema_error is None) == accepted,
          f"schema {'accepts' if accepted else 'rejects'} {what} ({schema_error})")
    check(size.returncode == expected_exit,
          f"gpubench size exits {expected_exit} on {what} (got {size.returncode}: {said})")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
