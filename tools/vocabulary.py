"""What gpubench itself says its figures, benchmarks and metrics are (`gpubench list --json`), for
the generators of configs/: a figure key, a benchmark id or a metric they write that the binary
does not know, or a value outside its figure's range, stops the generation instead of reaching a
catalog entry or a spec. The binary is $GPUBENCH, else build/gpubench under the repository.
"""
import json
import os
import subprocess

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


class Vocabulary:
    def __init__(self, listing):
        self.figures = {f["key"]: f for f in listing["figures"]}
        self.metrics = {b["id"]: b["metric_units"] for b in listing["benchmarks"]}

    def figure(self, key):
        """The table row of a full key ("gpu.hbm_GBps", "gpu.peak_tflops.fp16")."""
        if key in self.figures and not self.figures[key]["per_dtype"]:
            return self.figures[key]
        family, _, dtype = key.rpartition(".")
        row = self.figures.get(family)
        if row is None or not row["per_dtype"] or not dtype:
            raise KeyError(f"{key}: not a figure of gpubench's table (gpubench list --json)")
        return row

    def check_figures(self, figures, where):
        """Every key known, every stated value inside its figure's range."""
        for key, entry in figures.items():
            row = self.figure(key)
            value = entry.get("value") if isinstance(entry, dict) else entry
            if value is not None and not row["min"] <= value <= row["max"]:
                raise ValueError(f"{where}: {key} = {value} is outside [{row['min']}, {row['max']}] "
                                 f"{row['unit']}")
        return figures

    def check_measurement(self, benchmark, metric, where):
        """A benchmark the registry has, and a metric it declares."""
        if benchmark not in self.metrics:
            raise KeyError(f"{where}: no benchmark '{benchmark}' (gpubench list --json)")
        if metric not in self.metrics[benchmark]:
            raise KeyError(f"{where}: {benchmark} declares no metric '{metric}'")


def load():
    gpubench = os.environ.get("GPUBENCH") or os.path.join(ROOT, "build", "gpubench")
    return Vocabulary(json.loads(subprocess.check_output([gpubench, "list", "--json"])))
