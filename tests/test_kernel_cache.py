"""The NVRTC compile cache: runs wherever NVRTC loads (CI has it, no GPU needed)."""
import os
import subprocess
import sys
import textwrap

import pytest

import cudakit as ck

SRC = 'extern "C" __global__ void k(float *x) { x[threadIdx.x] += %d.0f; }\n'


def _nvrtc_or_skip():
    try:
        ck._core._kernel_compile(SRC % 0, "probe.cu", 90)
    except RuntimeError as e:
        pytest.skip(f"NVRTC unavailable: {e}")


def test_compile_error_shows_the_source(tmp_path, monkeypatch):
    _nvrtc_or_skip()
    monkeypatch.setenv("CUDAKIT_CACHE_DIR", str(tmp_path))
    bad = 'extern "C" __global__ void k(float *x) {\n    x[0] = undefined_name;\n}\n'
    with pytest.raises(ck.CompileError) as info:
        ck._core._kernel_compile(bad, "bad.cu", 90)
    assert "undefined_name" in str(info.value)
    assert isinstance(info.value, RuntimeError)


def test_disk_cache_shared_by_processes(tmp_path):
    _nvrtc_or_skip()
    env = dict(os.environ, CUDAKIT_CACHE_DIR=str(tmp_path), CUDAKIT_DEVICE="cpu")
    code = textwrap.dedent("""
        import sys, cudakit as ck
        img, from_disk, ms = ck._core._kernel_compile(%r, "k.cu", 90)
        sys.stdout.write("%%d %%d\\n" %% (len(img), from_disk))
    """) % (SRC % 7)
    # four processes compile the same kernel at once: all succeed, one entry
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(4)]
    outs = [p.communicate(timeout=120)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len({o[0] for o in outs}) == 1            # the same image everywhere
    entries = [f for f in os.listdir(tmp_path) if not f.startswith(".")]
    assert len(entries) == 1, entries
    assert oct(os.stat(tmp_path).st_mode & 0o777) in ("0o700", "0o755", "0o775")   # tmp_path is made by pytest
    # a new process now reads it from disk
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[1] == "1"
    # a truncated entry is detected and rebuilt
    path = os.path.join(tmp_path, entries[0])
    with open(path, "r+b") as f:
        f.truncate(10)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[1] == "0"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[1] == "1"


def test_cache_folder_is_private(tmp_path):
    _nvrtc_or_skip()
    target = tmp_path / "made" / "by" / "cudakit"
    env = dict(os.environ, CUDAKIT_CACHE_DIR=str(target), CUDAKIT_DEVICE="cpu")
    code = "import cudakit as ck; ck._core._kernel_compile(%r, 'k.cu', 90)" % (SRC % 3)
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    assert oct(os.stat(target).st_mode & 0o777) == "0o700"
