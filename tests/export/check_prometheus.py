#!/usr/bin/env python3
"""gpubench export --prometheus, read back by the Prometheus project's own Python parser
(Debian's python3-prometheus-client, installed by `make test`): every measured figure of the
fixture is there under its documented name with its labels and value; a host name holding quotes,
a backslash and a line feed survives the label escaping; no metric repeats a label set; the run's
time is a value (gpubench_run_timestamp_seconds), not a label, so a later run of the same machine
keeps every series' labels; a fleet check exports its verdicts (pass, warn, fail: a number, with
every warning and failure named by rule, GPU and bus id), its outliers and each node's run time.

usage: check_prometheus.py GPUBENCH SOURCE_DIR OUT_DIR     exit 77 (skip) without the parser
"""
import calendar
import json
import os
import re
import subprocess
import sys
import time

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def name_of(text):
    return re.sub(r"[^a-z0-9]", "_", text.lower())


def unix_seconds(iso):
    return calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ"))


def patched(source, name):
    """tests/data/validate-faults/NAME.json (a JSON Patch) applied to the file its "base" names,
    as the C++ tests do (tests/cli/fixtures.hpp): replace, add and test are all it uses."""
    data = os.path.join(source, "tests", "data")
    fault = json.load(open(os.path.join(data, "validate-faults", name + ".json")))
    doc = json.load(open(os.path.join(data, fault.get("base", "validate-healthy.json"))))
    for op in fault["patch"]:
        *parents, last = [p.replace("~1", "/").replace("~0", "~") for p in op["path"][1:].split("/")]
        node = doc
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        if op["op"] == "test":
            assert node[int(last) if isinstance(node, list) else last] == op["value"], op
        elif op["op"] == "add" and last == "-":
            node.append(op["value"])
        else:
            node[int(last) if isinstance(node, list) else last] = op["value"]
    return doc


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
                   if n not in ("gpubench_results", "gpubench_info", "gpubench_run_timestamp_seconds",
                                "gpubench_run_duration_seconds", "gpubench_verdict",
                                "gpubench_rules", "gpubench_rule_verdict"))
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

    # The run's time: a number to alert on, not a label that starts new series every run.
    stamp = fams.get("gpubench_run_timestamp_seconds")
    check(stamp is not None and len(stamp.samples) == 1 and
          stamp.samples[0].value == unix_seconds(fixture["meta"]["finished"]) and
          stamp.samples[0].labels == {"host": host},
          "gpubench_run_timestamp_seconds{host} is the run's end in Unix seconds")
    took = fams.get("gpubench_run_duration_seconds")
    check(took is not None and took.samples[0].value ==
          unix_seconds(fixture["meta"]["finished"]) - unix_seconds(fixture["meta"]["started"]),
          "gpubench_run_duration_seconds is finished - started")
    check(all(set(s.labels) == {"host", "version", "suite", "driver", "cuda", "nccl"}
              for s in fams["gpubench_info"].samples), "gpubench_info carries no time label")
    # The next day's run of the same machine: other figures, another time, the same series.
    later = json.loads(json.dumps(fixture))
    later["meta"]["started"] = "2026-01-02T03:00:00Z"
    later["meta"]["finished"] = "2026-01-02T03:12:00Z"
    for r in later["results"]:
        for m in r.get("metrics", {}).values():
            m["median"] *= 1.01
    json.dump(later, open(os.path.join(out, "later.json"), "w"))
    again = families(subprocess.run([gpubench, "export", "--prometheus",
                                     os.path.join(out, "later.json")], capture_output=True,
                                    text=True, check=True).stdout)

    def series(fs):
        return {(name, tuple(sorted(s.labels.items()))) for name, f in fs.items() for s in f.samples}
    check(series(again) == series(fams), "a later run exports the same series (no label changed)")
    stamp = again.get("gpubench_run_timestamp_seconds")
    check(stamp is not None and stamp.samples[0].value == unix_seconds("2026-01-02T03:12:00Z"),
          "and its own timestamp")

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
              s.labels["figure"].startswith("hbm.copy") and abs(s.value + 0.2) < 0.01 and
              s.labels.get("pci_bus_id") == "0000:18:00.0"
              for s in outliers), "the slow GPU's outlier is exported with its deviation and bus id")
    check_results_verdict(gpubench, source, out)
    check_fleet_verdicts(gpubench, source, out)
    check_hostile_names(gpubench, source, out)
    return 1 if failures else 0


def check_hostile_names(gpubench, source, out):
    """A results file written to attack the exposition: a benchmark id and a metric name holding a
    line feed and a sample of their own, axes named host, uuid and __name__, and a case held
    twice. The output still parses, carries no injected sample, no reserved or repeated label and
    no repeated series."""
    doc = json.load(open(os.path.join(source, "tests", "data", "results-2gpu-fixture.json")))
    ok = [r for r in doc["results"] if r["status"] == "ok" and r["metrics"]]
    evil = json.loads(json.dumps(ok[0]))
    evil["id"] = 'gemm\nnode_gpu_healthy{host="db-7"} 1'
    evil["metrics"] = {'x\nnode_gpu_healthy{host="db-8"} 1': list(evil["metrics"].values())[0]}
    named = json.loads(json.dumps(ok[0]))
    named["axes"].update({"host": "fake-host", "uuid": "GPU-fake", "__name__": "up"})
    doc["results"] += [evil, named, json.loads(json.dumps(ok[1]))]
    path = os.path.join(out, "hostile.json")
    json.dump(doc, open(path, "w"))
    run = subprocess.run([gpubench, "export", "--prometheus", path], capture_output=True, text=True)
    check(run.returncode == 0, "a hostile results file exports (exit %d: %s)" % (run.returncode,
                                                                                run.stderr.strip()))
    try:
        fams = families(run.stdout)
    except Exception as e:  # the parser's own refusal is the failure this case looks for
        check(False, "the hostile file's exposition parses (%s)" % e)
        return
    check("node_gpu_healthy" not in fams and
          not any(s.name.startswith("node_gpu") for f in fams.values() for s in f.samples),
          "a line feed in a benchmark id or a metric name injects no sample")
    check(all(s.labels.get("host") == doc["system"]["host"] for f in fams.values()
              for s in f.samples if "host" in s.labels),
          "an axis named host does not replace the host label")
    check(not any(k.startswith("__") for f in fams.values() for s in f.samples for k in s.labels),
          "no label takes a reserved name")
    for f in fams.values():
        keys = [(s.name, tuple(sorted(s.labels.items()))) for s in f.samples]
        if len(keys) != len(set(keys)):
            check(False, f.name + " repeats a series in the hostile file")


def check_results_verdict(gpubench, source, out):
    """A results file exports its verdict against its GPUs' spec, as validate gives it: the
    8-GPU node whose fp8 GEMM warns is 1 (warn), the warning named by rule, GPU and bus id."""
    path = os.path.join(out, "fp8-warn.json")
    json.dump(patched(source, "fp8-warn"), open(path, "w"))
    fams = families(subprocess.run([gpubench, "export", "--prometheus", path],
                                   capture_output=True, text=True, check=True).stdout)
    verdict = fams.get("gpubench_verdict")
    check(verdict is not None and verdict.samples[0].value == 1 and
          verdict.samples[0].labels.get("spec") == "h100-sxm5-80gb",
          "a results file exports its verdict against its spec (1: warn)")
    rules = fams.get("gpubench_rules")
    counts = {s.labels["status"]: s.value for s in (rules.samples if rules else [])}
    check(counts.get("warn") == 1 and counts.get("fail") == 0 and counts.get("pass", 0) > 100,
          "and its rule counts")
    named = fams.get("gpubench_rule_verdict")
    check(named is not None and [(s.labels["rule"], s.labels["gpu"], s.labels["pci_bus_id"],
                                  s.labels["status"], s.value) for s in named.samples] ==
          [("gemm fp8", "3", "0000:5d:00.0", "warn", 1)], "and names its warning")


def check_fleet_verdicts(gpubench, source, out):
    """Eight-GPU nodes: two healthy, one whose fp8 GEMM warns, one whose GPU 5 is 13% slower than
    its siblings. Every node's verdict is a number, a warning is counted and named, and a node
    that only warned still passes, as validate exits 0 for it."""
    fleet_dir = os.path.join(out, "fleet8")
    os.makedirs(fleet_dir, exist_ok=True)
    healthy = json.load(open(os.path.join(source, "tests", "data", "validate-8gpu.json")))
    nodes = {"ok-1": healthy, "ok-2": healthy, "warn-fp8": patched(source, "fp8-warn"),
             "fail-gpu5": patched(source, "gpu5-slow")}
    for host, doc in nodes.items():
        doc = json.loads(json.dumps(doc))
        doc["system"]["host"] = host
        json.dump(doc, open(os.path.join(fleet_dir, host + ".json"), "w"))
    fleet = subprocess.run([gpubench, "fleet", fleet_dir, "--json"], capture_output=True,
                           text=True).stdout
    open(os.path.join(out, "fleet8.json"), "w").write(fleet)
    fams = families(subprocess.run([gpubench, "export", "--prometheus",
                                    os.path.join(out, "fleet8.json")],
                                   capture_output=True, text=True, check=True).stdout)

    def per_host(name):
        return {s.labels["host"]: s.value for s in fams[name].samples} if name in fams else {}
    check(per_host("gpubench_fleet_node_verdict") ==
          {"ok-1": 0, "ok-2": 0, "warn-fp8": 1, "fail-gpu5": 2},
          "gpubench_fleet_node_verdict: 0 pass, 1 warn, 2 fail")
    check(per_host("gpubench_fleet_node_passed") ==
          {"ok-1": 1, "ok-2": 1, "warn-fp8": 1, "fail-gpu5": 0},
          "a node that only warned passes, as validate exits 0 for it")
    check(per_host("gpubench_fleet_node_warned").get("warn-fp8") == 1 and
          per_host("gpubench_fleet_node_rules_warned").get("warn-fp8") == 1,
          "the warning is counted")
    rules = fams.get("gpubench_fleet_node_rule_verdict")
    named = {(s.labels["host"], s.labels["rule"], s.labels["subject"], s.labels["gpu"],
              s.labels["pci_bus_id"], s.labels["status"]): s.value
             for s in (rules.samples if rules else [])}
    check(named.get(("warn-fp8", "gemm fp8", "GPU 3", "3", "0000:5d:00.0", "warn")) == 1,
          "the warning is named: rule, GPU, bus id")
    check(named.get(("fail-gpu5", "siblings", "GPU 5", "5", "0000:ab:00.0", "fail")) == 2,
          "the GPU slower than its siblings is named: rule, GPU, bus id")
    check(len(named) == 2, "nothing else is named (%d)" % len(named))
    nodes = fams.get("gpubench_fleet_nodes")
    counts = {s.labels["verdict"]: s.value for s in (nodes.samples if nodes else [])}
    check(counts == {"pass": 2, "warn": 1, "fail": 1}, "gpubench_fleet_nodes counts each verdict")
    verdict = fams.get("gpubench_fleet_verdict")
    check(verdict is not None and verdict.samples[0].value == 2,
          "the fleet's verdict is its worst")
    stamps = per_host("gpubench_fleet_node_run_timestamp_seconds")
    check(len(stamps) == 4 and set(stamps.values()) == {unix_seconds(healthy["meta"]["finished"])},
          "each node's run time is exported")


if __name__ == "__main__":
    sys.exit(main())
