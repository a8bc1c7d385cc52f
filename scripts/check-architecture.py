#!/usr/bin/env python3
"""Fails when the build and docs/architecture.rst disagree on the layers (issue 21).

The layer order is read from docs/architecture.rst itself (its definition list: each term names one or more
target folders, ``Sources/NAME``, ``Sources/px-*``...), so the page is the one definition. Targets on one
line are one layer: each may use the layers above it and the targets named before it on its own line.
Checked, for every non-test target of `swift package dump-package`:
- it is on the page (a new target is documented before it builds);
- each of its declared target dependencies sits above it;
- each `import` of one of this package's modules in its sources sits above it (a module found through a
  transitive dependency counts as well).
Exit 1 with one line per violation; 0 when the page tells the truth.

Usage: scripts/check-architecture.py [--swift SWIFT] [--dump FILE]   (from the package root; `make lint` runs it)
"""

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys

DOC = "docs/architecture.rst"


def layers_from_doc(path):
    """[(pattern, layer, position)] in page order: the ``Sources/...`` / ``Tests/...`` folders each
    definition-list term (an unindented line of ``FOLDER`` items) names."""
    order = []
    layer = 0
    with open(path, encoding="utf-8") as page:
        for line in page:
            if not line.startswith("``") or line.startswith(" "):
                continue
            folders = re.findall(r"``((?:Sources|Tests)/[^`]+)``", line)
            if not folders:
                continue
            for position, folder in enumerate(folders):
                order.append((folder.rstrip("/"), layer, position))
            layer += 1
    return order


def place(folder, order):
    """(layer, position) of a target folder on the page, or None."""
    for pattern, layer, position in order:
        if fnmatch.fnmatchcase(folder, pattern):
            return (layer, position)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--swift", default=os.environ.get("SWIFT", "swift"))
    parser.add_argument("--dump", help="a saved `swift package dump-package` output instead of running it")
    arguments = parser.parse_args()

    if arguments.dump:
        with open(arguments.dump, encoding="utf-8") as saved:
            dump = saved.read()
    else:
        dump = subprocess.run(
            [arguments.swift, "package", "dump-package"], check=True, capture_output=True, text=True
        ).stdout
    targets = json.loads(dump)["targets"]
    order = layers_from_doc(DOC)
    if not order:
        print(f"{DOC}: no ``Sources/...`` layers found", file=sys.stderr)
        return 1

    folders = {}
    for target in targets:
        if target["type"] == "test":
            continue
        default = ("Tests/" if target["type"] == "test" else "Sources/") + target["name"]
        folders[target["name"]] = (target.get("path") or default).rstrip("/")
    # The module name a target's sources import it by (a product name like px-echo is not importable).
    modules = {name.replace("-", "_"): name for name in folders}

    problems = []
    reported = set()

    def check(user, used, how):
        mine, theirs = place(folders[user], order), place(folders[used], order)
        if mine is None or theirs is None:
            return  # reported once below
        if theirs >= mine and (user, used, how.split()[0]) not in reported:
            reported.add((user, used, how.split()[0]))
            problems.append(f"{folders[user]} {how} {used}, which {DOC} puts at or below it")

    for name, folder in folders.items():
        if place(folder, order) is None:
            problems.append(f"{folder} (target {name}) is not on {DOC}: add it where it belongs")
    for target in targets:
        name = target["name"]
        if name not in folders:
            continue
        for dependency in target["dependencies"]:
            kind, value = next(iter(dependency.items()))
            used = value[0]
            if kind in ("byName", "target") and used in folders and used != name:
                check(name, used, "depends on")
        for root, _, files in os.walk(folders[name]):
            for file in files:
                if not file.endswith(".swift"):
                    continue
                path = os.path.join(root, file)
                with open(path, encoding="utf-8") as source:
                    for number, line in enumerate(source, 1):
                        match = re.match(r"\s*(?:@\w+(?:\([^)]*\))?\s+)*import\s+(?:\w+\s+)?(\w+)", line)
                        if match and match.group(1) in modules and modules[match.group(1)] != name:
                            check(name, modules[match.group(1)], f"imports (at {path}:{number})")

    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"architecture: {len(problems)} problem(s); fix the dependency or {DOC}", file=sys.stderr)
        return 1
    print(f"architecture: {len(folders)} targets follow {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
