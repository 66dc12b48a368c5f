"""The layer check (tools/check_layers.py): the tree passes it, and it fails
on a planted include that points up, sideways, out of the Python layer into
the core's internals, or from a public header into src/."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tools", "check_layers.py")


def run(root):
    return subprocess.run([sys.executable, SCRIPT, "--root", str(root)], capture_output=True, text=True, timeout=60)


def test_the_tree_passes():
    out = run(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "every include points down" in out.stdout


@pytest.fixture
def tree(tmp_path):
    for d in ("src", "include", "examples", "docs"):
        shutil.copytree(os.path.join(ROOT, d), tmp_path / d)
    return tmp_path


def plant(tree, rel, line):
    p = tree / rel
    text = p.read_text()
    p.write_text(line + "\n" + text)


@pytest.mark.parametrize("rel, include, says", [
    ("src/array/dtype.c", '#include "../ops/ops_internal.h"', "points up"),
    ("src/base/error.c", '#include "../runtime/parallel.h"', "points up"),
    ("src/backend/cpu/cpu_backend.c", '#include "../cuda/cuda_internal.h"', "points sideways"),
    ("src/python/module.c", '#include "../backend/backend.h"', "may include only include/"),
    ("include/cudakit.h", '#include "../src/array/layout.h"', "may include only the public headers"),
    ("src/ops/copy.c", '#include "no_such_header.h"', "names no file"),
])
def test_a_planted_include_fails(tree, rel, include, says):
    assert run(tree).returncode == 0
    plant(tree, rel, include)
    out = run(tree)
    assert out.returncode == 1
    assert rel in out.stdout and says in out.stdout, out.stdout
    assert len(out.stdout.strip().splitlines()) == 1


def test_downward_and_public_includes_pass(tree):
    plant(tree, "src/ops/copy.c", '#include "../array/layout.h"\n#include "cudakit_device.h"')
    plant(tree, "src/backend/cpu/cpu_loops.c", '#include "../backend.h"')
    assert run(tree).returncode == 0


def test_an_include_in_a_string_is_not_an_include(tree):
    plant(tree, "src/array/dtype.c", 'static const char s_[] = "#include \\"../ops/ops_internal.h\\"";')
    assert run(tree).returncode == 0
