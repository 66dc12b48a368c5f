#!/usr/bin/env python3
"""The layer check: an import linter for the C core.

Reads every quoted #include of the C sources (src/, include/, examples/) and
fails on one that points up or sideways against the layer order written in
docs/layout.md (the fenced block after "<!-- layers -->").  The rules:

- a file of a layer may include files of the layers below it, of its own
  folder and of the folders above its own inside the layer (src/backend/cpu/
  may include src/backend/backend.h, never src/backend/cuda/); everyone may
  include the public headers in include/;
- a layer marked [public] in that block (src/python), the public headers
  (include/) and the C examples include only include/ and their own folder;
- the pairs in ALLOWED below, each with its reason, are the exceptions.

    python3 tools/check_layers.py [--root DIR]      # exit 1 and one line a violation
"""
import argparse
import os
import re
import sys

# (including file, included file, why) - keep it short.
ALLOWED = [
]

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
SOURCES = (".c", ".h", ".cuh", ".hpp", ".cu")


def read_layers(root):
    """The layer folders from docs/layout.md, top first, and those marked [public]."""
    text = open(os.path.join(root, "docs", "layout.md"), encoding="utf-8").read()
    m = re.search(r"<!-- layers -->\s*```[^\n]*\n(.*?)```", text, re.S)
    if not m:
        sys.exit("check_layers: docs/layout.md has no '<!-- layers -->' block")
    layers, public = [], set()
    for line in m.group(1).splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            layers.append(words[0].rstrip("/"))
            if "[public]" in words[1:]:
                public.add(words[0].rstrip("/"))
    return layers, public


def layer_of(path, layers):
    for i, layer in enumerate(layers):
        if path == layer or path.startswith(layer + "/"):
            return i
    return None


def resolve(root, src_rel, inc):
    """The repository path an include names: next to the including file, else in include/."""
    here = os.path.dirname(src_rel)
    for base in (here, "include"):
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(root, cand)):
            return cand.replace(os.sep, "/")
    return None


def check(root):
    layers, public = read_layers(root)
    allowed = {(a, b) for a, b, _ in ALLOWED}
    problems = []
    files = []
    for top in ("src", "include", "examples"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if n.endswith(SOURCES):
                    files.append(os.path.relpath(os.path.join(dirpath, n), root).replace(os.sep, "/"))
    for rel in sorted(files):
        text = open(os.path.join(root, rel), encoding="utf-8", errors="replace").read()
        for lineno, inc in ((text.count("\n", 0, m.start()) + 1, m.group(1)) for m in INCLUDE.finditer(text)):
            target = resolve(root, rel, inc)
            where = f"{rel}:{lineno}: #include \"{inc}\""
            if target is None:
                problems.append(f"{where} names no file of the tree")
                continue
            if (rel, target) in allowed or target.startswith("include/"):
                continue
            if rel.startswith(("include/", "examples/")):
                problems.append(f"{where}: {rel.split('/')[0]}/ may include only the public headers in include/")
                continue
            li, lt = layer_of(rel, layers), layer_of(target, layers)
            if li is None:
                problems.append(f"{where}: {os.path.dirname(rel)} is not a layer of docs/layout.md")
                continue
            if lt is None:
                problems.append(f"{where}: {target} is in no layer of docs/layout.md")
                continue
            if layers[li] in public and lt != li:
                problems.append(f"{where}: {layers[li]} may include only include/ and its own headers")
            elif lt < li:
                problems.append(f"{where} points up: {layers[li]} is below {layers[lt]}")
            elif lt == li:
                inc_dir, src_dir = os.path.dirname(target), os.path.dirname(rel)
                if not (src_dir == inc_dir or src_dir.startswith(inc_dir + "/")):
                    problems.append(f"{where} points sideways: {src_dir} may include only its own folder and "
                                    f"those above it in {layers[li]}, not {inc_dir}")
    return problems, len(files)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = ap.parse_args()
    problems, n = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} include(s) against the layer order of docs/layout.md", file=sys.stderr)
        return 1
    print(f"check_layers: {n} files, every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
