"""What the bench scripts share: wall-clock timing and writing results (a
Markdown table and a JSON file side by side)."""
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time


def median_time(fn, repeats=15):
    """Median wall-clock seconds of fn() over repeats, after one warm-up call."""
    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def per_call(fn, calls=20000, repeats=7):
    """Best seconds a call of fn() over repeats of a loop of calls, after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def import_seconds(module, runs=15, env=None):
    """Median seconds of a new interpreter running `import module`."""
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True, env=env)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def write_results(path_md, title, machine, command, columns, rows):
    """rows: (figure, unit, {library: value}, higher_is_better).  Writes
    path_md (a Markdown table, one column per library) and the same data as
    JSON next to it (path_md with .json)."""
    os.makedirs(os.path.dirname(path_md) or ".", exist_ok=True)
    date = datetime.date.today().isoformat()
    lines = [f"# {title}, {date}", "", f"Machine: {machine}.", f"Command: `{command}`.", "",
             "| figure | unit | " + " | ".join(columns) + " | better |",
             "| --- | --- | " + " | ".join("---" for _ in columns) + " | --- |"]
    for name, unit, values, hib in rows:
        cells = [f"{values[c]:.3f}" if c in values else "-" for c in columns]
        lines.append(f"| {name} | {unit} | " + " | ".join(cells) + f" | {'higher' if hib else 'lower'} |")
    with open(path_md, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.splitext(path_md)[0] + ".json", "w") as f:
        json.dump({"title": title, "date": date, "machine": machine, "command": command,
                   "rows": [{"figure": n, "unit": u, "values": v, "higher_is_better": h} for n, u, v, h in rows]},
                  f, indent=1)


def cpu_machine(np, ck):
    """This machine's CPU, cores and the versions that matter, for a results file."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()}, NumPy {np.__version__}, "
            f"cudakit {ck.__version__}")
