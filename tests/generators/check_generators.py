#!/usr/bin/env python3
"""The generators of configs/ (tools/make_catalog.py, configs/specs/make_specs.py), run against this
build's own tables (gpubench list --json), write exactly the committed catalog and specs; and the
table check they run refuses a figure, benchmark or metric the binary does not know.
  check_generators.py GPUBENCH SOURCE_DIR WORK_DIR
"""
import filecmp
import os
import shutil
import subprocess
import sys


def same_tree(made, committed):
    problems = []
    names = sorted(f for f in os.listdir(committed) if f.endswith(".json"))
    if sorted(f for f in os.listdir(made) if f.endswith(".json")) != names:
        problems.append(f"{made}: other files than {committed}")
    for name in names:
        if not filecmp.cmp(os.path.join(made, name), os.path.join(committed, name), shallow=False):
            problems.append(f"{os.path.join(committed, name)} differs from what its generator writes")
    return problems


def main(gpubench, source, work):
    env = dict(os.environ, GPUBENCH=gpubench)
    shutil.rmtree(work, ignore_errors=True)
    hardware = os.path.join(work, "hardware")
    specs = os.path.join(work, "specs")
    for folder in (os.path.join(hardware, "gpus"), os.path.join(hardware, "systems"), specs):
        os.makedirs(folder)
    subprocess.check_call([sys.executable, "tools/make_catalog.py", "tools/reference/hardware.json",
                           hardware], cwd=source, env=env)
    subprocess.check_call([sys.executable, "configs/specs/make_specs.py", hardware, specs],
                          cwd=source, env=env)
    problems = []
    for kind in ("gpus", "systems"):
        problems += same_tree(os.path.join(hardware, kind),
                              os.path.join(source, "configs", "hardware", kind))
    problems += same_tree(specs, os.path.join(source, "configs", "specs"))

    # The check itself can fail: an unknown key, a value out of range, an unknown metric.
    sys.path.insert(0, os.path.join(source, "tools"))
    os.environ["GPUBENCH"] = gpubench
    import vocabulary
    table = vocabulary.load()
    for bad, what in [(lambda: table.check_figures({"gpu.warp_speed": {"value": 1}}, "test"),
                       "an unknown figure"),
                      (lambda: table.check_figures({"pcie.gen": {"value": 12}}, "test"),
                       "a PCIe generation out of range"),
                      (lambda: table.check_figures({"gpu.peak_tflops": {"value": 1}}, "test"),
                       "a family key without its dtype"),
                      (lambda: table.check_measurement("hbm.copy", "TFLOPs", "test"),
                       "a metric the benchmark does not declare")]:
        try:
            bad()
            problems.append(f"the table check let {what} through")
        except (KeyError, ValueError):
            pass
    table.check_figures({"gpu.peak_tflops.fp16": {"value": 989.4}}, "test")
    for p in problems:
        print(p)
    print("generators:", "ok" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
