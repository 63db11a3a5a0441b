#!/usr/bin/env python3
"""Writes each metric's "unit" and "better" into results files, as the benchmarks declare them
(`gpubench list --json`, metric_units): the test fixtures are synthetic, and a results file must
say its units. The fixture generators call add_units(); run alone it upgrades files in place:
  python3 metric_units.py GPUBENCH FILE...
"""
import json
import subprocess
import sys


def declared_units(gpubench):
    """{benchmark id: {metric: {"unit": .., "better": ..}}} from the binary's registry."""
    listing = json.loads(subprocess.check_output([gpubench, "list", "--json"]))
    return {b["id"]: b["metric_units"] for b in listing["benchmarks"]}


def add_units(doc, units):
    for result in doc.get("results", []):
        for name, metric in result.get("metrics", {}).items():
            declared = units[result["id"]][name]
            metric.setdefault("unit", declared["unit"])
            metric.setdefault("better", declared["better"])
    return doc


def main(gpubench, paths):
    units = declared_units(gpubench)
    for path in paths:
        doc = json.load(open(path))
        with open(path, "w") as f:
            json.dump(add_units(doc, units), f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
