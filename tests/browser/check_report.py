#!/usr/bin/env python3
"""Browser tier (CTest label `browser`): gpubench's HTML reports in headless Chromium.

Renders report.html (from the fixture, sizing two workloads whose names are HTML/JS payloads)
and a compare report, then checks in the DOM Chromium built: the summary, every chart, every
table; that the payloads show as text and no script ran; that the page made no network request;
and that a screenshot is not blank. Also renders the committed real report example and writes
its screenshot (README's docs/report-screenshot.png is that file), and the watch.html of a real
`gpubench watch` run (GPU counters from the stand-in NVML in FAKE_NVML_DIR) whose command line
carries a payload, and the fleet.html of four nodes, one named by a payload.

usage: check_report.py GPUBENCH SOURCE_DIR OUT_DIR [FAKE_NVML_DIR]
       exit 77 (skip) without Chromium
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

XSS_ALERT = "<img src=x onerror=alert(1)>"
# If this one ran, the body would carry data-pwned: the DOM shows whether any script executed.
XSS_MARK = "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browser(exe, out_dir, url, *extra):
    # No network: a proxy that does not exist, and every background service off.
    args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-default-apps", "--disable-extensions", "--proxy-server=127.0.0.1:9",
            "--user-data-dir=" + os.path.join(out_dir, "chromium-profile"), *extra, url]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def png_is_blank(path):
    """True when the PNG has (almost) one colour. Decodes the image data with zlib only: the
    filtered scanlines of a one-colour image hold at most a handful of distinct byte values."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return True
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    return len(set(raw)) < 16


def page_request_hosts(netlog):
    """Hosts of the network requests a document made, from Chromium's NetLog. Chromium's own
    services (updates, clock, accounts) call home at moments of their choosing; their requests
    start with the initiator "not an origin", a page's with the page's origin ("null" for a
    file:// page). None where the log is missing."""
    if not os.path.exists(netlog):
        return None
    text = open(netlog).read().rstrip()
    try:
        log = json.loads(text)
    except ValueError:  # a log cut off at exit lacks its closing brackets
        log = json.loads(text.rstrip(",") + "]}")
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    hosts = set()
    for event in log.get("events", []):
        params = event.get("params", {})
        if event.get("type") != start_job or params.get("initiator") == "not an origin":
            continue
        match = re.match(r'(?:https?|wss?|ftp)://([^/:?#]+)', params.get("url", ""))
        if match:
            hosts.add(match.group(1))
    return hosts


def load_with_netlog(exe, out, page, name):
    """Loads `page` with a NetLog: its DOM and the hosts it requested (page_request_hosts)."""
    netlog = os.path.join(out, "netlog-%s.json" % name.replace(" ", "-"))
    dom = browser(exe, out, "file://" + page, "--dump-dom", "--log-net-log=" + netlog).stdout
    return dom, page_request_hosts(netlog)


def check_no_page_requests(exe, out, page, what):
    """Loads `page` and checks that it made no network request; returns its DOM."""
    dom, hosts = load_with_netlog(exe, out, page, what)
    check(hosts is not None and not hosts,
          "the %s made no network request (hosts: %s)" % (what, sorted(hosts or [])))
    return dom


def check_request_detector(exe, out):
    """The detector itself: a page that fetches an image from a host is caught."""
    page = os.path.join(out, "fetches.html")
    with open(page, "w") as f:
        f.write('<!doctype html><img src="http://gpubench-fetch.invalid/x.png">')
    _, hosts = load_with_netlog(exe, out, page, "fetches")
    check(hosts is not None and "gpubench-fetch.invalid" in hosts,
          "a page that fetches an image is seen fetching (hosts: %s)" % sorted(hosts or []))


def write_workload(path, name, preset):
    json.dump({"schema": "gpubench.workload/1", "name": name, "model": {"preset": preset},
               "precision": "amp_bf16", "batch_per_gpu": 8, "optimizer": "adamw",
               "data": {"source": "synthetic"}}, open(path, "w"))


def check_fleet_page(exe, gpubench, source, out):
    """fleet.html of four nodes made from the fixture, one named by a payload, one with a slow
    GPU: the summary, the nodes, the outliers and their chart, the payload as text."""
    fleet_dir = os.path.join(out, "fleet")
    shutil.rmtree(fleet_dir, ignore_errors=True)
    os.makedirs(fleet_dir)
    base = json.load(open(os.path.join(source, "tests", "data", "results-2gpu-fixture.json")))
    for n in range(4):
        doc = json.loads(json.dumps(base))
        doc["system"]["host"] = XSS_MARK if n == 3 else "node-%d" % n
        for r in doc["results"]:
            slow = n == 2 and r["id"] == "gemm" and r["axes"].get("gpu") == 1
            for m in r.get("metrics", {}).values():
                m["median"] *= 0.85 if slow else 1.0
        json.dump(doc, open(os.path.join(fleet_dir, "node-%d.json" % n), "w"))
    page = os.path.join(out, "fleet.html")
    subprocess.run([gpubench, "fleet", fleet_dir, "--html", page], stdout=subprocess.DEVNULL)
    dom = check_no_page_requests(exe, out, page, "fleet page")
    for element in ["summary", "nodes", "failures", "outliers", "chart-outliers", "method"]:
        check(re.search(r'id="%s"' % re.escape(element), dom) is not None,
              "fleet page has #" + element)
    check("node-2 GPU 1" in dom, "the fleet page names the slow GPU")
    check("&lt;img src=x onerror=" in dom and "<img" not in dom,
          "a payload host name shows as text on the fleet page")
    check("data-pwned" not in dom.replace("data-pwned','1')", ""), "no script ran on the fleet page")
    shot = os.path.join(out, "fleet.png")
    browser(exe, out, "file://" + page, "--screenshot=" + shot, "--window-size=1200,1400")
    check(os.path.exists(shot) and not png_is_blank(shot), "the fleet screenshot is not blank")


def check_watch_page(exe, gpubench, fake_nvml_dir, out):
    """A real watch of a 2-second job on the stand-in NVML (busy GPU 0 with NVLink traffic): the
    page's verdict, every timeline (the job's processes' CPU among them), the payload in the
    command shown as text, nothing fetched."""
    watch_dir = os.path.join(out, "watch")
    shutil.rmtree(watch_dir, ignore_errors=True)
    env = dict(os.environ, LD_LIBRARY_PATH=fake_nvml_dir, FAKE_NVML_UTILIZATION="95",
               FAKE_NVML_PCIE_RX_MBPS="2000", FAKE_NVML_NVLINK_GBPS="100",
               FAKE_NVML_NAME="NVIDIA H100 80GB HBM3")
    subprocess.run([gpubench, "watch", "--interval", "0.3", "--out", watch_dir, "--", "sh", "-c",
                    "sleep 2", XSS_MARK], check=True, env=env, stderr=subprocess.DEVNULL)
    page = os.path.join(watch_dir, "watch.html")
    dom = check_no_page_requests(exe, out, page, "watch page")
    for element in ["watched", "evidence", "advice", "chart-cpu", "chart-processes", "chart-gpu",
                    "chart-pcie", "chart-nvlink", "chart-disk", "chart-network"]:
        check(re.search(r'id="%s"' % re.escape(element), dom) is not None,
              "watch page has #" + element)
    charts = re.findall(r'<figure class="chart" id="(chart-[a-z0-9-]+)"><figcaption>[^<]*'
                        r'</figcaption><svg', dom)
    check(len(charts) == 7, "watch page draws 7 SVG timelines, got %d" % len(charts))
    check("Verdict: gpu_compute" in dom, "the watch page gives the verdict (gpu_compute)")
    check("&lt;img src=x onerror=" in dom and "<img" not in dom,
          "the payload in the watched command shows as text")
    check("data-pwned" not in dom.replace("data-pwned','1')", ""), "no script ran on the watch page")
    check("default-src 'none'" in open(page).read(), "the watch page's CSP forbids fetching")
    shot = os.path.join(out, "watch.png")
    browser(exe, out, "file://" + page, "--screenshot=" + shot, "--window-size=1000,1400")
    check(os.path.exists(shot) and not png_is_blank(shot), "the watch screenshot is not blank")


def main():
    gpubench, source, out = sys.argv[1], sys.argv[2], sys.argv[3]
    exe = chromium()
    if exe is None:
        print("skipped: no Chromium (make test installs Debian's chromium)")
        return 77
    os.makedirs(out, exist_ok=True)
    fixture = os.path.join(source, "tests", "data", "results-2gpu-fixture.json")
    alert_workload = os.path.join(out, "alert.json")
    mark_workload = os.path.join(out, "mark.json")
    write_workload(alert_workload, XSS_ALERT, "gpt2-small")
    write_workload(mark_workload, XSS_MARK, "bert-large")

    report = os.path.join(out, "report.html")
    subprocess.run([gpubench, "report", fixture, "--html", report, "--workload",
                    "resnet50", "--workload", alert_workload, "--workload", mark_workload],
                   check=True)
    check_request_detector(exe, out)
    dom = check_no_page_requests(exe, out, report, "page")
    for element in ["summary", "sizing", "charts", "chart-ceilings-0", "chart-ceilings-1",
                    "chart-ceilings-2", "chart-memory-0", "chart-memory-1", "chart-memory-2",
                    "chart-gemm", "chart-nccl", "chart-links",
                    "chart-roofline", "acceptance", "acceptance-table", "measured",
                    "assumed", "not-run-table", "environment-table"]:
        check(re.search(r'id="%s"' % re.escape(element), dom) is not None,
              "report has #" + element)
    charts = re.findall(r'<figure class="chart" id="(chart-[a-z0-9-]+)"><figcaption>[^<]*'
                        r'</figcaption><svg', dom)
    check(len(charts) == 10, "report draws 10 SVG charts (3 ceilings, 3 GPU memory, GEMM, NCCL, "
                             "links, roofline), got %d" % len(charts))
    check("&lt;img src=x onerror=alert(1)&gt;" in dom, "the alert payload shows as text")
    check("<img" not in dom, "no <img> element was created from a payload")
    check("data-pwned" not in dom.replace("data-pwned','1')", ""), "no script ran")
    check("&lt;b&gt;markup&lt;/b&gt;" in dom, "a failure message with markup is escaped")
    check(re.search(r'Verdict: FAIL: \d+ failed', dom) is not None,
          "the summary gives the acceptance verdict of the GPUs' spec")
    check(0 <= dom.find('id="verdict"') < dom.find('id="not-passed"') < dom.find('id="will-do"')
          < dom.find('id="passed-rules"'),
          "the verdict, then every rule that did not pass, then what the machine will do, then "
          "the passing rules")
    check(re.search(r'<details id="passed-rules"><summary>\d+ rules passed', dom) is not None,
          "the passing rules are folded under a count")
    html = open(report).read()
    # Every tag, its quoted attribute values blanked (an escaped payload may sit in a label).
    tags = [re.sub(r'"[^"]*"', '""', t) for t in re.findall(r'<[a-zA-Z][^>]*>', html)]
    check(not any(re.search(r'\s(src|href|action|data|xlink:href)\s*=', t) for t in tags) and
          re.search(r'url\(|@import|<script|<link|<iframe|<object', html) is None,
          "the HTML references no resource (no src/href/url()/@import/script/link)")
    check("default-src 'none'" in html, "the page's Content-Security-Policy forbids fetching")

    shot = os.path.join(out, "report.png")
    browser(exe, out, "file://" + report, "--screenshot=" + shot, "--window-size=1100,1400")
    check(os.path.exists(shot) and not png_is_blank(shot), "the report screenshot is not blank")

    compare = os.path.join(out, "compare.html")
    subprocess.run([gpubench, "compare", fixture, "catalog:dgx-h100", "catalog:aws-p4d.24xlarge",
                    "--workload", "resnet50", "--workload", alert_workload, "--html", compare],
                   check=True, stdout=subprocess.DEVNULL)
    dom = check_no_page_requests(exe, out, compare, "compare page")
    for element in ["summary", "machines", "charts", "chart-rate-0", "chart-cost-0",
                    "chart-rate-1", "figures-table"]:
        check(re.search(r'id="%s"' % re.escape(element), dom) is not None,
              "compare has #" + element)
    check("&lt;img src=x onerror=alert(1)&gt;" in dom and "<img" not in dom,
          "compare shows the payload as text")
    shot = os.path.join(out, "compare.png")
    browser(exe, out, "file://" + compare, "--screenshot=" + shot, "--window-size=1100,1400")
    check(os.path.exists(shot) and not png_is_blank(shot), "the compare screenshot is not blank")

    # The committed real example: this project's CI VM, GPU sized from the catalog.
    example = os.path.join(source, "docs", "examples", "results-ci-vm.json")
    real = os.path.join(out, "report-ci-vm.html")
    subprocess.run([gpubench, "report", example, "--set", "gpu.model=h100-sxm5-80gb", "--html",
                    real], check=True, stdout=subprocess.DEVNULL)
    shot = os.path.join(out, "report-screenshot.png")
    browser(exe, out, "file://" + real, "--screenshot=" + shot, "--window-size=1000,1500")
    check(os.path.exists(shot) and not png_is_blank(shot), "the example screenshot is not blank")

    check_fleet_page(exe, gpubench, source, out)
    if len(sys.argv) > 4:
        check_watch_page(exe, gpubench, sys.argv[4], out)
    print("screenshots in " + out)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
