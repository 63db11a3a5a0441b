#!/usr/bin/env python3
"""A multi-node results file of many GPUs, for timing validate and report at fleet scale.

Each node is a copy of tests/data/validate-8gpu.json (8 GPUs, every benchmark's rows), renamed
node-NNNNN; --health keeps only the rows the health rules read (gpu.burn, pcie.h2d, one GEMM
dtype). Not a measurement: the fixture's own warning says so. docs/reliability.md gives timings.

    tools/make_fleet_results.py 8000 /tmp/fleet.json && time build/gpubench validate \\
        /tmp/fleet.json --spec dgx-h100 > /dev/null
"""
import argparse
import copy
import json
import pathlib

FIXTURE = pathlib.Path(__file__).resolve().parent.parent / "tests/data/validate-8gpu.json"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gpus", type=int, help="GPUs in all (8 per node)")
    parser.add_argument("out", help="results file to write")
    parser.add_argument("--health", action="store_true", help="only the health rules' rows")
    args = parser.parse_args()
    source = json.loads(FIXTURE.read_text())
    per_node = len(source["system"]["gpus"])
    rows = source["results"]
    if args.health:
        rows = [r for r in rows if r["id"] in ("gpu.burn", "pcie.h2d")
                or (r["id"] == "gemm" and r["axes"].get("dtype") == "bf16")]
    doc = {k: v for k, v in source.items() if k != "results"}
    doc["nodes"], doc["results"] = [], []
    for n in range(max(1, args.gpus // per_node)):
        host = f"node-{n:05d}"
        system = copy.deepcopy(source["system"])
        system["host"] = host
        doc["nodes"].append({"host": host, "ranks": [n], "system": system})
        doc["results"].extend(dict(r, host=host) for r in rows)
    doc["meta"] = dict(doc["meta"], mpi_ranks=len(doc["nodes"]))
    pathlib.Path(args.out).write_text(json.dumps(doc))
    print(f"{len(doc['nodes'])} nodes, {len(doc['results'])} results: {args.out}")


if __name__ == "__main__":
    main()
