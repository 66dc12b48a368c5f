"""The soak of tests/soak/soak.py, briefly, on each device: mixed ops against
NumPy, RawKernel, ElementwiseKernel and Python kernels, streams, out of
memory and recovery, kernel faults in child processes; in-use bytes must
come back to where they started.  `make soak` runs it for 10 minutes."""
import json
import os
import subprocess
import sys

SOAK = os.path.join(os.path.dirname(__file__), "soak", "soak.py")


def test_soak_briefly(device, tmp_path):
    out = tmp_path / "soak.json"
    # its own process: the soak caps the memory pool, and its faults' children
    # are its own
    # (a GPU's first minutes compile kernels: more seconds for the same mix)
    seconds = "4s" if device == "cpu" else "12s"
    r = subprocess.run([sys.executable, SOAK, "--device", device, "--duration", seconds, "--fault-every", "1.5",
                        "--seed", "13", "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    summary = json.loads(out.read_text())
    assert not summary["failures"]
    counts = summary["counts"]
    for task in ("kernels", "streams", "oom", "fault"):
        assert counts.get(task, 0) >= 1, counts
    assert sum(v for k, v in counts.items() if k.startswith("ops:")) >= 5, counts
    assert summary["pool_at_end"]["allocated_bytes"] == summary["pool_at_start"]["allocated_bytes"]
    assert summary["pool_at_end"]["num_ooms"] > summary["pool_at_start"]["num_ooms"]


def test_soak_duration_argument():
    sys.path.insert(0, os.path.dirname(SOAK))
    try:
        from soak import parse_duration
    finally:
        sys.path.pop(0)
    assert [parse_duration(t) for t in ("90", "90s", "10m", "1.5h", "0")] == [90, 90, 600, 5400, 0]
    for bad in ("ten", "-5", "5x"):
        try:
            parse_duration(bad)
        except SystemExit:
            continue
        raise AssertionError(bad)
