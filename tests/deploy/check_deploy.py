#!/usr/bin/env python3
"""docs/deploy/ exercised: the health-check script passes bash -n and shellcheck (where
installed); the Kubernetes manifests parse as YAML with the fields a cluster needs; and each
manifest's container command, with its own environment, is run here against fixtures (the paths
of the image mapped to this build), as is the script the Slurm way: a healthy node passes and is
left alone, a failing one exits 1 and is drained through (a stand-in) scontrol with the verdict.

usage: check_deploy.py GPUBENCH SOURCE_DIR OUT_DIR
"""
import os
import re
import shutil
import subprocess
import sys

import yaml

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def main():
    gpubench, source, out = sys.argv[1:4]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    deploy = os.path.join(source, "docs", "deploy")
    script = os.path.join(deploy, "gpubench-healthcheck.sh")
    healthy = os.path.join(source, "tests", "data", "validate-healthy.json")
    failing = os.path.join(source, "tests", "data", "results-2gpu-fixture.json")

    check(subprocess.run(["bash", "-n", script]).returncode == 0, "the script parses (bash -n)")
    if shutil.which("shellcheck"):
        r = subprocess.run(["shellcheck", script], capture_output=True, text=True)
        check(r.returncode == 0, "shellcheck finds nothing" + (": " + r.stdout if r.stdout else ""))
    settings = set(re.findall(r"^#   ([A-Z_]+) ", open(script).read(), re.M))

    # Slurm: a stand-in scontrol records what it is asked.
    scontrol = os.path.join(out, "scontrol")
    log = os.path.join(out, "scontrol.log")
    with open(scontrol, "w") as f:
        f.write('#!/bin/sh\necho "$@" >> "%s"\n' % log)
    os.chmod(scontrol, 0o755)

    def run_script(results, extra=None, command=None):
        env = dict(os.environ, GPUBENCH=gpubench, GPUBENCH_HEALTH_RESULTS=results,
                   GPUBENCH_HEALTH_DIR=os.path.join(out, "health"), SCONTROL=scontrol)
        env.update(extra or {})
        return subprocess.run(command or [script], env=env, capture_output=True, text=True,
                              timeout=120)

    r = run_script(healthy, {"SLURMD_NODENAME": "gpu-01"})
    check(r.returncode == 0 and "gpu-01: PASS" in r.stdout, "Slurm: a healthy node passes")
    check(not os.path.exists(log), "Slurm: a healthy node is not drained")
    r = run_script(failing, {"SLURMD_NODENAME": "gpu-02"})
    check(r.returncode == 1 and "gpu-02: FAIL" in r.stdout, "Slurm: a failing node exits 1")
    drained = open(log).read() if os.path.exists(log) else ""
    check(drained.startswith("update nodename=gpu-02 state=drain reason=gpubench: FAIL"),
          "Slurm: a failing node is drained with the verdict as the reason (%r)" % drained[:80])
    r = run_script(healthy, {"GPUBENCH": os.path.join(out, "absent")})
    check(r.returncode == 2, "no gpubench binary: exit 2")
    # A failing node whose Prometheus folder is missing is still drained, and exits 1.
    os.remove(log)
    r = run_script(failing, {"SLURMD_NODENAME": "gpu-03",
                             "GPUBENCH_PROMETHEUS_DIR": os.path.join(out, "no-such-folder")})
    drained = open(log).read() if os.path.exists(log) else ""
    check(r.returncode == 1 and drained.startswith("update nodename=gpu-03 state=drain"),
          "Slurm: a failing node is drained though its export failed (exit %d, %r)"
          % (r.returncode, drained[:60]))
    check("Prometheus export" in r.stderr, "the failed export is said (%r)" % r.stderr[-200:])
    r = run_script(healthy, {"GPUBENCH_PROMETHEUS_DIR": os.path.join(out, "no-such-folder")})
    check(r.returncode == 2, "a passing node whose export failed exits 2")
    # An interval that is not whole seconds would check many times a second: refused.
    for bad in ("1 day", "0", "-5", "1.5", "08", "010"):
        r = run_script(healthy, {"GPUBENCH_HEALTH_INTERVAL": bad})
        check(r.returncode == 2 and "GPUBENCH_HEALTH_INTERVAL: expected whole seconds" in r.stderr,
              "GPUBENCH_HEALTH_INTERVAL=%r: exit 2 naming it" % bad)

    # Kubernetes: the manifests, then their commands run here.
    image_paths = {"/opt/gpubench/bin/gpubench-healthcheck.sh": script,
                   "/opt/gpubench/bin/gpubench": gpubench}
    for name, kind in (("gpubench-job.yaml", "Job"), ("gpubench-daemonset.yaml", "DaemonSet")):
        docs = list(yaml.safe_load_all(open(os.path.join(deploy, "kubernetes", name))))
        check(len(docs) == 1 and docs[0]["kind"] == kind, name + " is one " + kind)
        doc = docs[0]
        check(doc["apiVersion"] == ("batch/v1" if kind == "Job" else "apps/v1"),
              name + " has the right apiVersion")
        pod = doc["spec"]["template"]["spec"]
        if kind == "Job":
            check(pod["restartPolicy"] == "Never" and doc["spec"]["backoffLimit"] == 0,
                  name + ": a failed check fails the Job, without retries")
        else:
            labels = doc["spec"]["template"]["metadata"]["labels"]
            check(doc["spec"]["selector"]["matchLabels"].items() <= labels.items(),
                  name + ": the selector matches the pod's labels")
        container = pod["containers"][0]
        env = {e["name"]: e.get("value") for e in container["env"]}
        check(set(env) - {"NODE_NAME", "NVIDIA_VISIBLE_DEVICES"} <= settings,
              name + ": every setting it gives is one the script documents")
        mounts = {m["mountPath"] for m in container["volumeMounts"]}
        check({v for k, v in env.items() if k.endswith("_DIR")} <= mounts,
              name + ": the folders it names are mounted")
        # Its command with its environment, image paths mapped here, folders in OUT_DIR, once.
        here = {k: image_paths.get(v, v) for k, v in env.items() if v is not None}
        for k in list(here):
            if k.endswith("_DIR"):
                here[k] = os.path.join(out, name, k.lower())
                os.makedirs(here[k], exist_ok=True)
        interval = here.pop("GPUBENCH_HEALTH_INTERVAL", None)
        if kind == "DaemonSet":
            check(interval is not None and interval.isdigit(), name + ": repeats at an interval")
        here["NODE_NAME"] = "k8s-node"
        command = [image_paths.get(c, c) for c in container["command"]]
        r = run_script(healthy, here, command)
        check(r.returncode == 0 and "k8s-node: PASS" in r.stdout,
              name + ": its command passes a healthy node (%s)" % (r.stdout + r.stderr).strip())
        if "GPUBENCH_PROMETHEUS_DIR" in here:
            prom = os.path.join(here["GPUBENCH_PROMETHEUS_DIR"], "gpubench.prom")
            check(os.path.exists(prom) and "# TYPE gpubench_gemm_tflops gauge" in open(prom).read(),
                  name + ": it writes gpubench.prom for node_exporter")
        r = run_script(failing, here, command)
        check(r.returncode == 1, name + ": its command fails a failing node (the pod fails)")
    # The run itself, once: the Job's way, the quick suite on this machine. Here, without a GPU,
    # the results are written and validate finds no spec for them: exit 2, not a pass.
    job = yaml.safe_load(open(os.path.join(deploy, "kubernetes", "gpubench-job.yaml")))
    env = {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]
           if "value" in e}
    # No DataLoader here (GPUBENCH_PYTHON names none): loader.dataloader_ceiling_vs_torch runs
    # it, and this check is about the script around the suite.
    env.update(GPUBENCH=gpubench, GPUBENCH_HEALTH_DIR=os.path.join(out, "run"),
               NODE_NAME="k8s-node", GPUBENCH_PYTHON=os.path.join(out, "no-python3"))
    r = subprocess.run([script], env=dict({k: v for k, v in os.environ.items()
                                            if k != "GPUBENCH_HEALTH_RESULTS"}, **env),
                       capture_output=True, text=True, timeout=600)
    written = [os.path.join(d, "results.json") for d, _, files in os.walk(env["GPUBENCH_HEALTH_DIR"])
               if "results.json" in files]
    check(len(written) == 1, "the Job's command runs the %s suite and keeps its results" %
          env["GPUBENCH_HEALTH_SUITE"])
    check(r.returncode == (0 if os.path.exists("/dev/nvidiactl") else 2),
          "with no GPU here the check does not pass (exit %d)" % r.returncode)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
