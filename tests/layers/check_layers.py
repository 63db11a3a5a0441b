#!/usr/bin/env python3
"""The folders of gpubench are layers: each may include only itself and the layers below it.

Every #include of every C, C++ and CUDA file in a layer's folder is checked:
- `gpubench/<layer>/...` names the layer it includes, which must be the file's own or one the
  graph below lets it use;
- any other quoted include must be a file of the same layer (its own folder, or the layer's
  private src/), never one reached by climbing out of the layer with "../";
- a `gpubench/...` include with no layer in it is refused (every layer has its own prefix).
CMake files may not make the project's root a target's include folder.

  check_layers.py ROOT          check the tree at ROOT (exit 1 and one line per violation)
  check_layers.py --self-test   check that a tree with an upward include fails, and a clean one
                                passes (the check can fail)
"""
import os
import re
import sys
import tempfile

# The layer graph, written once: what each layer may include besides itself. tests/ may include
# anything and is not checked.
ALLOWED = {
    "core": [],
    "vocabulary": ["core"],
    "harness": ["core", "vocabulary"],
    "kernels": ["core", "vocabulary", "harness"],
    "benchmarks": ["core", "vocabulary", "harness", "kernels"],
    "model": ["core", "vocabulary"],
    "acceptance": ["core", "vocabulary", "model"],
    "reports": ["core", "vocabulary", "model", "acceptance"],
    "watch": ["core", "vocabulary", "harness", "model", "reports"],
    "app": ["core", "vocabulary", "harness", "kernels", "benchmarks", "model", "acceptance",
            "reports", "watch"],
    "tools": ["core", "vocabulary", "benchmarks"],
}
SOURCES = (".c", ".cc", ".cpp", ".h", ".hpp", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
ROOT_INCLUDE = re.compile(
    r'target_include_directories\([^)]*"?\$\{(PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR)\}"?[\s)]')


def check_file(root, layer, path, problems):
    text = open(path, encoding="utf-8", errors="replace").read()
    here = os.path.dirname(path)
    layer_dir = os.path.join(root, layer)
    rel = os.path.relpath(path, root)
    for bracket, name in INCLUDE.findall(text):
        parts = name.split("/")
        if parts[0] == "gpubench":
            if len(parts) < 3 or parts[1] not in ALLOWED:
                problems.append(f"{rel}: #include \"{name}\" has no layer prefix "
                                f"(gpubench/<layer>/...)")
            elif parts[1] != layer and parts[1] not in ALLOWED[layer]:
                problems.append(f"{rel}: #include \"{name}\": {layer} may not include "
                                f"{parts[1]} (it may include {', '.join(ALLOWED[layer]) or 'only itself'})")
            continue
        if bracket == "<":
            continue  # a system or third-party header
        candidates = [os.path.normpath(os.path.join(here, name)),
                      os.path.normpath(os.path.join(layer_dir, "src", name))]
        found = [c for c in candidates if os.path.isfile(c)]
        if not found:
            problems.append(f"{rel}: #include \"{name}\" is no file of layer {layer}")
        elif not os.path.commonpath([found[0], layer_dir]) == layer_dir:
            problems.append(f"{rel}: #include \"{name}\" reaches out of layer {layer}")


def check_tree(root):
    problems = []
    for layer in ALLOWED:
        top = os.path.join(root, layer)
        for folder, _, files in os.walk(top):
            for f in sorted(files):
                if f.endswith(SOURCES):
                    check_file(root, layer, os.path.join(folder, f), problems)
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build")]
        if "CMakeLists.txt" in files:
            path = os.path.join(folder, "CMakeLists.txt")
            if ROOT_INCLUDE.search(open(path).read()):
                problems.append(f"{os.path.relpath(path, root)}: a target includes the project "
                                f"root; include a layer's own include/ folder")
    return problems


def self_test():
    def tree(files):
        root = tempfile.mkdtemp(prefix="layers-")
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            open(os.path.join(root, path), "w").write(text)
        return root

    clean = tree({"core/include/gpubench/core/a.hpp": "#include <string>\n",
                  "model/src/m.cpp": '#include "gpubench/core/a.hpp"\n#include "p.hpp"\n',
                  "model/src/p.hpp": "\n"})
    upward = tree({"core/src/a.cpp": '#include "gpubench/model/model.hpp"\n'})
    climbing = tree({"model/src/m.cpp": '#include "../../reports/src/r.hpp"\n',
                     "reports/src/r.hpp": "\n"})
    unprefixed = tree({"harness/src/h.cpp": '#include "gpubench/results.hpp"\n'})
    root_folder = tree({"model/CMakeLists.txt":
                        'target_include_directories(m PUBLIC "${PROJECT_SOURCE_DIR}")\n'})
    ok = check_tree(clean) == []
    for name, bad in [("upward", upward), ("climbing", climbing), ("unprefixed", unprefixed),
                      ("root include folder", root_folder)]:
        found = check_tree(bad)
        print(f"{name}: {found}")
        ok = ok and len(found) == 1
    print("self-test", "passed" if ok else "FAILED")
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check_tree(os.path.abspath(sys.argv[1]))
    for p in problems:
        print(p)
    print(f"{len(problems)} include(s) against the layer graph")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
