#!/usr/bin/env python3
"""Every name of what gpubench measures is written once: a benchmark id and its metrics in the
benchmark's own file, a figure key in the figure table (vocabulary/). Every other source file asks
for them through the vocabulary (a named measurement, a figure_def) and holds none of them as a
string literal. This checks the C++ sources of every layer but benchmarks/ and vocabulary/ (and
tests/, tools/, configs/, docs/) for a literal that is a registered benchmark id, a declared metric
name or a figure key, as `gpubench list --json` gives them.

  check_names.py GPUBENCH ROOT   the tree at ROOT (exit 1 and one line per literal)
  check_names.py GPUBENCH --self-test
                                 a planted id, metric and figure key are each found
"""
import json
import os
import re
import subprocess
import sys
import tempfile

# Folders where the names are defined or may be spelt out.
DEFINED = ("benchmarks", "vocabulary", "tests", "tools", "configs", "docs", "cmake")
SOURCES = (".c", ".cpp", ".hpp", ".h", ".cu", ".cuh")

# Literals that are the same word as a name, but a key of another file format: the workload's
# explicit operations ({"gemm": [M, N, K]}), the rate a workload's reference run states, the
# hardware profile's measured curves, and the sizing's components. Each is a field of a schema in
# docs/schema.md, not a reading of a benchmark's result.
SCHEMA_KEYS = {
    ("model/src/workload.cpp", "gemm"): "gpubench.workload/1 ops: {\"gemm\": [M, N, K]}",
    ("model/src/workload.cpp", "samples_per_s"): "gpubench.workload/1 reference rate",
    ("model/src/model.cpp", "samples_per_s"): "gpubench.sizing/1 component ceiling",
    ("watch/src/prediction.cpp", "samples_per_s"): "watch.json prediction's cpu_ceiling, the "
                                                   "sizing component's key",
    ("model/src/hardware.cpp", "gemm"): "gpubench.hardware/1 measured GEMM points",
    ("model/src/hardware.cpp", "TFLOPs"): "gpubench.hardware/1 GEMM point rate",
    ("model/src/hardware.cpp", "busbw_GBps"): "gpubench.hardware/1 allreduce point",
}


def names(gpubench):
    listing = json.loads(subprocess.check_output([gpubench, "list", "--json"]))
    found = {}
    for b in listing["benchmarks"]:
        found[b["id"]] = "benchmark id"
        for metric in b["metric_units"]:
            found.setdefault(metric, "metric")
    families = []
    for f in listing["figures"]:
        if f["per_dtype"]:
            families.append(f["key"] + ".")
        found[f["key"]] = "figure key"
    return found, families


def literals(text):
    """The string literals of C++ source, comments left out: (line, value)."""
    out = []
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i)
            delimiter = ")" + text[i + 2:open_paren] + '"'
            end = text.find(delimiter, open_paren)
            end = n if end < 0 else end + len(delimiter)
            line += text.count("\n", i, end)
            i = end
        elif c == "'":
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == '"':
            j, value = i + 1, []
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    value.append(text[j:j + 2])
                    j += 2
                else:
                    value.append(text[j])
                    j += 1
            out.append((line, "".join(value)))
            i = j + 1
        else:
            i += 1
    return out


def check_tree(root, found, families):
    problems = []
    used_schema_keys = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not d.startswith("build"))
        rel_folder = os.path.relpath(folder, root)
        if rel_folder.split(os.sep)[0] in DEFINED:
            continue
        for f in sorted(files):
            if not f.endswith(SOURCES):
                continue
            path = os.path.join(folder, f)
            rel = os.path.relpath(path, root)
            for line, value in literals(open(path, encoding="utf-8", errors="replace").read()):
                kind = found.get(value)
                if kind is None and any(value.startswith(fam) for fam in families):
                    kind = "figure key"
                if kind is None:
                    continue
                if (rel, value) in SCHEMA_KEYS:
                    used_schema_keys.add((rel, value))
                    continue
                problems.append(f"{rel}:{line}: \"{value}\" is a {kind}: ask the vocabulary for it")
    for stale in sorted(set(SCHEMA_KEYS) - used_schema_keys):
        if os.path.exists(os.path.join(root, stale[0])):
            problems.append(f"{stale[0]}: no \"{stale[1]}\" left; drop it from SCHEMA_KEYS")
    return problems


def self_test(gpubench):
    found, families = names(gpubench)
    root = tempfile.mkdtemp(prefix="names-")
    os.makedirs(os.path.join(root, "reports", "src"))
    with open(os.path.join(root, "reports", "src", "planted.cpp"), "w") as f:
        f.write('// "hbm.copy" in a comment is fine\n'
                'auto a = find("hbm.copy");\n'
                'auto b = metric("busbw_GBps");\n'
                'auto c = figure("gpu.peak_tflops.fp16");\n'
                'auto d = R"(raw "network.gbps" text)";\n'
                'auto e = "an \\"escaped\\" word";\n')
    problems = check_tree(root, found, families)
    for p in problems:
        print(p)
    ok = len(problems) == 3 and all(":" in p for p in problems)
    print("self-test", "passed" if ok else "FAILED")
    return 0 if ok else 1


def main():
    if len(sys.argv) == 3 and sys.argv[2] == "--self-test":
        return self_test(sys.argv[1])
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    found, families = names(sys.argv[1])
    problems = check_tree(os.path.abspath(sys.argv[2]), found, families)
    for p in problems:
        print(p)
    print(f"{len(problems)} name(s) spelt outside their definitions")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
