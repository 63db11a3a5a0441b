#!/usr/bin/env python3
"""gpubench export --prometheus, read back by the Prometheus project's own Python parser
(Debian's python3-prometheus-client, installed by `make test`): every measured figure of the
fixture is there under its documented name with its labels and value; a host name holding quotes,
a backslash and a line feed survives the label escaping; no metric repeats a label set; a fleet
check exports its verdicts and outliers.

usage: check_prometheus.py GPUBENCH SOURCE_DIR OUT_DIR     exit 77 (skip) without the parser
"""
import json
import os
import re
import subprocess
import sys

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def name_of(text):
    return re.sub(r"[^a-z0-9]", "_", text.lower())


def families(text):
    from prometheus_client.parser import text_string_to_metric_families
    return {f.name: f for f in text_string_to_metric_families(text)}


def main():
    gpubench, source, out = sys.argv[1:4]
    try:
        import prometheus_client.parser  # noqa: F401
    except ImportError:
        print("skipped: no prometheus_client (make test installs python3-prometheus-client)")
        return 77
    os.makedirs(out, exist_ok=True)
    fixture = json.load(open(os.path.join(source, "tests", "data", "results-2gpu-fixture.json")))
    host = 'rack-1 "a\\b"\nx'
    fixture["system"]["host"] = host
    results = os.path.join(out, "results.json")
    json.dump(fixture, open(results, "w"))
    prom = os.path.join(out, "gpubench.prom")
    subprocess.run([gpubench, "export", "--prometheus", results, "--out", prom], check=True)
    text = open(prom).read()
    fams = families(text)
    check("gpubench_gemm_tflops" in fams and "gpubench_hbm_copy_gbps" in fams,
          "figures are named gpubench_<benchmark>_<metric>")
    expected = 0
    for r in fixture["results"]:
        if r["status"] != "ok":
            continue
        for metric, m in r["metrics"].items():
            expected += 1
            fam = fams.get("gpubench_%s_%s" % (name_of(r["id"]), name_of(metric)))
            want = {name_of(k): (v if isinstance(v, str) else json.dumps(v))
                    for k, v in r["axes"].items()}
            match = [s for s in (fam.samples if fam else [])
                     if all(s.labels.get(k) == v for k, v in want.items())]
            if len(match) != 1 or abs(match[0].value - m["median"]) > 1e-6 * abs(m["median"]):
                check(False, "%s %s %s exported once with its median" % (r["id"], metric, want))
    exported = sum(len(f.samples) for n, f in fams.items()
                   if n not in ("gpubench_results", "gpubench_info"))
    check(expected > 0 and exported == expected,
          "every measured figure of the fixture is exported, nothing else (%d of %d)"
          % (exported, expected))
    hosts = {s.labels.get("host") for f in fams.values() for s in f.samples}
    check(hosts == {host}, "the host label round-trips quotes, a backslash and a line feed")
    gemm = fams["gpubench_gemm_tflops"].samples
    check(all(s.labels.get("uuid", "").startswith("GPU-") for s in gemm),
          "per-GPU figures carry the GPU's UUID")
    for f in fams.values():
        keys = [tuple(sorted(s.labels.items())) for s in f.samples]
        if len(keys) != len(set(keys)):
            check(False, f.name + " repeats a label set")
    statuses = {(s.labels["benchmark"], s.labels["status"]): s.value
                for s in fams["gpubench_results"].samples}
    check(statuses.get(("gemm", "ok"), 0) >= 1, "gpubench_results counts results by status")
    check(fams["gpubench_info"].samples[0].labels["host"] == host, "gpubench_info is there")
    check(re.search(r"^# TYPE gpubench_gemm_tflops gauge$", text, re.M) is not None,
          "each metric is a gauge with its TYPE line")

    # A fleet check: four copies, one with a slow GPU.
    fleet_dir = os.path.join(out, "fleet")
    os.makedirs(fleet_dir, exist_ok=True)
    for n in range(4):
        doc = json.loads(json.dumps(fixture))
        doc["system"]["host"] = "node-%d" % n
        for r in doc["results"]:
            if n == 1 and r["id"] == "hbm.copy" and r["axes"].get("gpu") == 0:
                for m in r["metrics"].values():
                    m["median"] *= 0.8
        json.dump(doc, open(os.path.join(fleet_dir, "node-%d.json" % n), "w"))
    fleet = subprocess.run([gpubench, "fleet", fleet_dir, "--json"], capture_output=True,
                           text=True).stdout
    open(os.path.join(out, "fleet.json"), "w").write(fleet)
    text = subprocess.run([gpubench, "export", "--prometheus", os.path.join(out, "fleet.json")],
                          capture_output=True, text=True, check=True).stdout
    fams = families(text)
    check(fams["gpubench_fleet_passed"].samples[0].value == 0, "the fleet's verdict is exported")
    check(len(fams["gpubench_fleet_node_passed"].samples) == 4, "one verdict per node")
    outliers = fams["gpubench_fleet_outlier_deviation"].samples
    check(any(s.labels["host"] == "node-1" and s.labels["gpu"] == "0" and
              s.labels["figure"].startswith("hbm.copy") and abs(s.value + 0.2) < 0.01
              for s in outliers), "the slow GPU's outlier is exported with its deviation")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
