"""The NVRTC compile cache: runs wherever NVRTC loads (CI has it, no GPU needed)."""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import time

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


# ---------------------------------------------------------------------------
# A cache that cannot be turned against its user (issue 13): entries carry
# their full key, the folder must be the user's alone, entries must be
# regular files of the user's, and the compiler runs with limits.

SUFFIX = {"cpu": ".cpu.so", "cuda": ".cubin"}

# Each child runs kernels writing the given values and prints what they wrote.
CHILD = textwrap.dedent("""
    import sys, cudakit as ck
    dev = sys.argv[1]
    ck.asnumpy(ck.zeros(2, dtype=ck.int32, device=dev))   # cudakit's own kernels, before the user's
    out = []
    for v in sys.argv[2:]:
        src = 'extern "C" __global__ void k(int *x) { x[threadIdx.x] = %s; }' % v
        x = ck.zeros(2, dtype=ck.int32, device=dev)
        ck.RawKernel(src, "k")((1,), (2,), (x,))
        out.append(str(int(ck.asnumpy(x)[0])))
    print(" ".join(out))
""")


def _env(cache, tmp_path, **kw):
    env = dict(os.environ, CUDAKIT_CACHE_DIR=str(cache), TMPDIR=str(tmp_path), **kw)
    env.pop("XDG_RUNTIME_DIR", None)
    env.pop("CUDAKIT_DEBUG", None)
    return env


def _run(env, device, *values, timeout=120):
    p = subprocess.run([sys.executable, "-c", CHILD, device] + [str(v) for v in values], env=env,
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return p.stdout.split(), p.stderr


def _entries(folder, device):
    return {f for f in os.listdir(folder) if f.endswith(SUFFIX[device])}


_TEMPLATES = {}


def _three_entries(cache, tmp_path, device):
    """Kernels writing 1, 2 and 3, compiled in that order (once a session,
    then copied into cache): the environment and their entries."""
    if device not in _TEMPLATES:
        tdir = tempfile.mkdtemp(prefix="ck-cache-template-")
        env = _env(tdir, tmp_path)
        _run(env, device)       # the entries of cudakit's own kernels (zeros on a GPU)
        names, seen = [], _entries(tdir, device)
        for v in (1, 2, 3):
            assert _run(env, device, v)[0] == [str(v)]
            new = _entries(tdir, device) - seen
            assert len(new) == 1, new
            names.append(new.pop())
            seen = _entries(tdir, device)
        _TEMPLATES[device] = (tdir, names)
    tdir, names = _TEMPLATES[device]
    # the template's precompiled header may still be building in the
    # background (pch.c): its temporary can vanish (renamed into place)
    # between copytree's listing and its copy, so it is left out
    shutil.copytree(tdir, cache, symlinks=True, ignore=shutil.ignore_patterns("gch.tmp.*"))
    os.chmod(cache, 0o700)
    return _env(cache, tmp_path), [os.path.join(cache, n) for n in names]


@pytest.fixture(scope="module", autouse=True)
def _remove_templates():
    yield
    for tdir, _ in _TEMPLATES.values():
        shutil.rmtree(tdir, ignore_errors=True)


def test_copied_entry_is_rejected(tmp_path, device):
    """Kernel 2's valid entry copied under kernel 3's name: 3 still runs its
    own code, and its entry is rebuilt."""
    cache = tmp_path / "cache"
    env, (_, two, three) = _three_entries(cache, tmp_path, device)
    original = open(three, "rb").read()
    shutil.copyfile(two, three)
    assert _run(env, device, 3)[0] == ["3"]
    assert open(three, "rb").read() == original
    # and a kind of entry under another kind's name (a GPU image as a CPU library)
    other = os.path.join(cache, os.path.basename(three)[:32] + (".cubin" if device == "cpu" else ".cpu.so"))
    shutil.copyfile(three, other)
    assert _run(env, device, 3)[0] == ["3"]


def test_copied_cubin_is_rejected(tmp_path, monkeypatch):
    """The NVRTC cache alone (no GPU needed): a cubin copied under another
    kernel's name is a miss, then rebuilt."""
    _nvrtc_or_skip()
    monkeypatch.setenv("CUDAKIT_CACHE_DIR", str(tmp_path))
    a, from_disk, _ = ck._core._kernel_compile(SRC % 1, "k.cu", 90)
    assert not from_disk
    (entry_a,) = os.listdir(tmp_path)
    b, _, _ = ck._core._kernel_compile(SRC % 2, "k.cu", 90)
    (entry_b,) = set(os.listdir(tmp_path)) - {entry_a}
    shutil.copyfile(tmp_path / entry_b, tmp_path / entry_a)
    again, from_disk, _ = ck._core._kernel_compile(SRC % 1, "k.cu", 90)
    assert again == a and not from_disk
    again, from_disk, _ = ck._core._kernel_compile(SRC % 1, "k.cu", 90)
    assert again == a and from_disk


@pytest.mark.parametrize("mode", [0o1777, 0o777, 0o770])
def test_folder_others_can_write_is_not_used(tmp_path, mode):
    """A folder others can write: a warning naming it and why, once, and a
    private folder instead; an entry planted there is not loaded."""
    cache = tmp_path / "shared"
    env, (_, two, three) = _three_entries(cache, tmp_path, "cpu")
    shutil.copyfile(two, three)       # the plant: kernel 2's code under 3's name
    os.chmod(three, 0o600)
    before = {f: os.stat(cache / f).st_mtime_ns for f in os.listdir(cache)}
    os.chmod(cache, mode)
    out, err = _run(env, "cpu", 3, 4)
    assert out == ["3", "4"]
    assert err.count("cudakit: warning") == 1, err
    assert str(cache) in err and ("writable by everyone" in err if mode & 0o002 else "writable by its group" in err)
    private = tmp_path / f"cudakit-{os.geteuid()}"
    assert f"private folder {private}" in err
    assert oct(os.stat(private).st_mode & 0o777) == "0o700"
    assert len(_entries(private, "cpu")) == 2
    # the shared folder was not touched
    assert {f: os.stat(cache / f).st_mtime_ns for f in os.listdir(cache)} == before


def test_parent_others_can_write_is_not_used(tmp_path):
    parent = tmp_path / "open"
    parent.mkdir()
    os.chmod(parent, 0o777)
    cache = parent / "cache"
    out, err = _run(_env(cache, tmp_path), "cpu", 5)
    assert out == ["5"]
    assert f"its parent {parent} is writable by everyone" in err
    # a sticky folder of root's (as /tmp) or of the user's is fine
    os.chmod(parent, 0o1777)
    out, err = _run(_env(cache, tmp_path), "cpu", 5)
    assert out == ["5"] and "warning" not in err
    assert len(_entries(cache, "cpu")) == 1


def test_no_private_folder_means_no_disk_cache(tmp_path):
    """When the private folder is someone else's too (here: world-writable,
    as another user could have made /tmp/cudakit-<uid>), nothing is cached."""
    cache = tmp_path / "shared"
    cache.mkdir()
    os.chmod(cache, 0o777)
    squat = tmp_path / f"cudakit-{os.geteuid()}"
    squat.mkdir()
    os.chmod(squat, 0o777)
    out, err = _run(_env(cache, tmp_path), "cpu", 6)
    assert out == ["6"]
    assert "the disk cache of kernels is off" in err
    assert os.listdir(cache) == [] and os.listdir(squat) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give files to another user "
                    "(tests/c/test_kcache.c checks the same logic for any user)")
def test_other_owner_is_not_used(tmp_path):
    cache = tmp_path / "cache"
    env, (_, two, three) = _three_entries(cache, tmp_path, "cpu")
    # an entry of another user's, even with the right key, is not loaded but replaced
    shutil.copyfile(three, three + ".x")
    os.replace(three + ".x", three)
    os.chown(three, 65534, 65534)
    assert _run(env, "cpu", 3)[0] == ["3"]
    assert os.stat(three).st_uid == os.geteuid()
    # a folder of another user's is not used at all
    shutil.copyfile(two, three)
    os.chown(cache, 65534, 65534)
    out, err = _run(env, "cpu", 3)
    assert out == ["3"]
    assert f"{cache}: it is owned by uid 65534" in err
    os.chown(cache, os.geteuid(), os.getegid())


def test_entry_others_can_write_is_replaced(tmp_path):
    cache = tmp_path / "cache"
    env, (_, _, three) = _three_entries(cache, tmp_path, "cpu")
    os.chmod(three, 0o666)
    assert _run(env, "cpu", 3)[0] == ["3"]
    assert oct(os.stat(three).st_mode & 0o777) == "0o600"


def test_fifo_at_an_entry_does_not_block(tmp_path):
    """Opening a FIFO blocks until a writer comes; entries are opened with
    O_NONBLOCK and must be regular files, so this is just a miss."""
    cache = tmp_path / "cache"
    env, (_, _, three) = _three_entries(cache, tmp_path, "cpu")
    os.unlink(three)
    os.mkfifo(three, 0o600)
    assert _run(env, "cpu", 3, timeout=60)[0] == ["3"]
    assert stat.S_ISREG(os.lstat(three).st_mode)       # the store replaced it


def test_symlink_at_an_entry_is_not_followed(tmp_path):
    cache = tmp_path / "cache"
    env, (_, two, three) = _three_entries(cache, tmp_path, "cpu")
    os.unlink(three)
    os.symlink(two, three)
    assert _run(env, "cpu", 3)[0] == ["3"]
    assert stat.S_ISREG(os.lstat(three).st_mode)


def test_symlinked_folder_is_checked_where_it_leads(tmp_path):
    target = tmp_path / "open" / "cache"
    target.mkdir(parents=True)
    os.chmod(target.parent, 0o777)
    link = tmp_path / "link"
    os.symlink(target, link)
    out, err = _run(_env(link, tmp_path), "cpu", 7)
    assert out == ["7"]
    assert f"its parent {target.parent} is writable by everyone" in err


def test_compiler_memory_limit(tmp_path, monkeypatch):
    """#include "/dev/zero": the compiler reads until its memory runs out,
    which its limit makes quick; a CompileError that says so."""
    monkeypatch.setenv("CUDAKIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CUDAKIT_COMPILE_MEMORY", "512")
    k = ck.RawKernel('#include "/dev/zero"\nextern "C" __global__ void z(int *x) {}\n', "z")
    with pytest.raises(ck.CompileError, match=r"ran out of memory .*512 MiB .*CUDAKIT_COMPILE_MEMORY"):
        k((1,), (1,), (ck.zeros(1, dtype=ck.int32, device="cpu"),))
    # a normal kernel compiles under that limit
    _run(_env(tmp_path, tmp_path, CUDAKIT_COMPILE_MEMORY="512"), "cpu", 8)


def test_compiler_default_limits_stop_dev_zero(tmp_path):
    """The same with the default limits, in a child process that must survive."""
    code = textwrap.dedent("""
        import cudakit as ck
        k = ck.RawKernel('#include "/dev/zero"\\nextern "C" __global__ void z(int *x) {}\\n', "z")
        try:
            k((1,), (1,), (ck.zeros(1, dtype=ck.int32, device="cpu"),))
        except ck.CompileError as e:
            print("CompileError:", str(e).splitlines()[0])
    """)
    p = subprocess.run([sys.executable, "-c", code], env=_env(tmp_path, tmp_path), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    assert "ran out of memory" in p.stdout, p.stdout


def test_compiler_time_limit(tmp_path, monkeypatch):
    """An include of a FIFO nobody writes: the compiler waits forever, so the
    wall-clock limit stops it (and what it started) and says so."""
    monkeypatch.setenv("CUDAKIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CUDAKIT_COMPILE_TIMEOUT", "2")
    # the compile's folder (cudakit-cpu-*) under tmp_path too: what this
    # compile started names tmp_path in its arguments, and other compiles
    # (pytest-xdist's other workers', a precompiled header built in the
    # background) do not
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    fifo = tmp_path / "never"
    os.mkfifo(fifo)
    k = ck.RawKernel('#include "%s"\nextern "C" __global__ void z(int *x) {}\n' % fifo, "z")
    t = time.monotonic()
    with pytest.raises(ck.CompileError, match=r"ran out of time .*stopped after 2 s .*CUDAKIT_COMPILE_TIMEOUT"):
        k((1,), (1,), (ck.zeros(1, dtype=ck.int32, device="cpu"),))
    assert time.monotonic() - t < 30
    # killed, the compiler's processes end a moment later (as zombies, whose arguments ps no longer shows)
    for _ in range(50):
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        left = [line for line in ps.splitlines() if str(tmp_path) in line]
        if not left:
            break
        time.sleep(0.1)
    assert not left, left


def test_compiler_limit_values(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDAKIT_CACHE_DIR", str(tmp_path))
    k = ck.RawKernel('extern "C" __global__ void z(int *x) { x[0] = 9; }\n', "z")
    for name in ("CUDAKIT_COMPILE_TIMEOUT", "CUDAKIT_COMPILE_MEMORY"):
        monkeypatch.setenv(name, "lots")
        with pytest.raises(ValueError, match=name + " must be a whole number"):
            k((1,), (1,), (ck.zeros(1, dtype=ck.int32, device="cpu"),))
        monkeypatch.setenv(name, "off")
    x = ck.zeros(1, dtype=ck.int32, device="cpu")
    k((1,), (1,), (x,))
    assert int(ck.asnumpy(x)[0]) == 9


def test_precompiled_header_must_be_ours(tmp_path):
    """GCC reads the precompiled header by name, and it is code in every
    kernel: one others can write, or of another header, is not used."""
    _three_entries(tmp_path / "first", tmp_path, "cpu")
    template = _TEMPLATES["cpu"][0]
    deadline = time.monotonic() + 120    # it is built in the background
    while True:
        dirs = [os.path.join(template, d) for d in os.listdir(template) if d.startswith("cpu-pch-")]
        if any(os.path.exists(os.path.join(d, "cuda_compat.hpp.gch")) for d in dirs):
            break
        if not dirs or time.monotonic() > deadline:
            pytest.skip("no precompiled header (not GCC, or it was not built in time)")
        time.sleep(0.2)
    cache = tmp_path / "cache"
    env, _ = _three_entries(cache, tmp_path, "cpu")
    pch = [cache / d for d in os.listdir(cache) if d.startswith("cpu-pch-")]
    gch, hdr = pch[0] / "cuda_compat.hpp.gch", pch[0] / "cuda_compat.hpp"
    env["CUDAKIT_DEBUG"] = "kernels"
    assert "precompiled header in" in _run(env, "cpu", 11)[1]
    os.chmod(gch, 0o666)
    assert "precompiled header in" not in _run(env, "cpu", 12)[1]
    os.chmod(gch, 0o600)
    with open(hdr, "a") as f:
        f.write("// not the header of this build\n")
    assert "precompiled header in" not in _run(env, "cpu", 13)[1]
