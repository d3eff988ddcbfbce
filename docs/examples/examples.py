#!/usr/bin/env python3
"""Writes (--update) or checks (--check) the example outputs in the docs.

docs/examples/README.md says how an example block is written and what its marker
options mean. --check runs the blocks not marked slow and fails, with a diff, when a
committed output differs from what dtrcheck prints now.
"""

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARKER = re.compile(r"^<!-- example((?:\s+[^\s>]+)*)\s*-->\s*$")
FENCE = re.compile(r"^```")


class Block:
    def __init__(self, path, marker_line, start, end, options, commands, body):
        self.path = path
        self.marker_line = marker_line  # 0-based index of the marker line
        self.start = start  # index of the first line inside the fence
        self.end = end  # index of the closing fence
        self.options = options
        self.commands = commands  # list of command strings (continuations joined with \n)
        self.body = body  # the lines inside the fence


def parse_options(text, where):
    options = {"slow": False, "keep": {}}
    for word in text.split():
        if word == "slow":
            options["slow"] = True
        elif m := re.fullmatch(r"keep(\d*)=(\S+)", word):
            options["keep"][int(m.group(1)) if m.group(1) else 0] = m.group(2)
        else:
            sys.exit(f"{where}: unknown example option '{word}'")
    return options


def find_blocks(path, lines):
    blocks = []
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if not m:
            i += 1
            continue
        where = f"{path}:{i + 1}"
        if i + 1 >= len(lines) or not FENCE.match(lines[i + 1]):
            sys.exit(f"{where}: an example marker must be followed by a ``` block")
        end = i + 2
        while end < len(lines) and not FENCE.match(lines[end]):
            end += 1
        if end == len(lines):
            sys.exit(f"{where}: the example's ``` block is not closed")
        body = lines[i + 2:end]
        commands = []
        in_command = False
        for line in body:
            if line.startswith("$ "):
                commands.append(line[2:])
                in_command = True
            elif line.startswith("> ") and in_command:
                commands[-1] += "\n" + line[2:]
            else:
                in_command = False
        if not commands:
            sys.exit(f"{where}: the example has no '$ ' command line")
        blocks.append(Block(path, i, i + 2, end, parse_options(m.group(1), where), commands, body))
        i = end + 1
    return blocks


def keep_lines(output, spec, where):
    if not spec:
        return output
    n = len(output)
    wanted = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        lo = n if lo == "$" else int(lo)
        hi = lo if not _ else (n if hi == "$" else int(hi))
        if lo < 1 or hi < lo:
            sys.exit(f"{where}: bad keep range '{part}'")
        wanted.update(range(lo, min(hi, n) + 1))
    kept, skipping = [], False
    for k, line in enumerate(output, 1):
        if k in wanted:
            kept.append(line)
            skipping = False
        elif not skipping:
            kept.append("...")
            skipping = True
    return kept


def run_block(block, dtrcheck, shared):
    """The block's new body: each command and its (kept) output."""
    where = f"{block.path}:{block.marker_line + 1}"
    scratch = tempfile.mkdtemp(prefix="dtrcheck-example-")
    try:
        os.symlink(os.path.abspath(shared), os.path.join(scratch, "shared"))
        work = os.path.join(scratch, "work")
        os.mkdir(work)
        bindir = os.path.join(scratch, "bin")
        os.mkdir(bindir)
        os.symlink(os.path.abspath(dtrcheck), os.path.join(bindir, "dtrcheck"))
        # No plain progress lines (one every 30 s off a terminal): at a
        # terminal the bar is erased, and when a line falls is timing.
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
                   LC_ALL="C.UTF-8", COLUMNS="100", DTRCHECK_PROGRESS_SECONDS="86400")
        body = []
        for n, command in enumerate(block.commands, 1):
            result = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT)
            text = result.stdout.decode("utf-8", errors="backslashreplace")
            output = [line.rstrip() for line in text.splitlines()]
            spec = block.options["keep"].get(n, block.options["keep"].get(0))
            output = keep_lines(output, spec, where)
            if result.returncode != 0:
                output.append(f"(exit status {result.returncode})")
            lines = command.split("\n")
            body.append("$ " + lines[0])
            body.extend("> " + line for line in lines[1:])
            body.extend(output)
        return body
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def markdown_files(root):
    files = [os.path.join(root, "README.md")]
    for folder, _, names in sorted(os.walk(os.path.join(root, "docs"))):
        files.extend(os.path.join(folder, name) for name in sorted(names) if name.endswith(".md"))
    return [f for f in files if os.path.isfile(f)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--update", action="store_true", help="rewrite the examples in place")
    mode.add_argument("--check", action="store_true", help="fail when an example is stale")
    parser.add_argument("--fast", action="store_true", help="with --update: skip slow blocks")
    parser.add_argument("--dtrcheck", required=True, help="the dtrcheck binary")
    parser.add_argument("--shared", required=True, help="the shared folder (traces/, reference/)")
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."),
                        help="the repository (default: this script's)")
    parser.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/)")
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.shared, "traces")):
        print(f"SKIP: {args.shared}/traces not found (the examples read the public traces)")
        return 77

    stale, ran = 0, 0
    for path in args.files or markdown_files(args.root):
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        blocks = find_blocks(os.path.relpath(path, args.root), lines)
        changed = False
        for block in reversed(blocks):  # from the end, so indices stay valid
            if block.options["slow"] and (args.check or args.fast):
                continue
            ran += 1
            body = run_block(block, args.dtrcheck, args.shared)
            old = [line.rstrip() for line in block.body]
            if body == old:
                continue
            if args.check:
                stale += 1
                print(f"{block.path}:{block.marker_line + 1}: the example differs from what "
                      f"dtrcheck prints now:")
                sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(
                    old, body, "committed", "dtrcheck now", lineterm=""))
            else:
                lines[block.start:block.end] = body
                changed = True
        if changed:
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
            print(f"updated {os.path.relpath(path, args.root)}")
    if args.check:
        if stale:
            print(f"{stale} of {ran} examples are stale: run docs/examples/regenerate.sh and "
                  f"review the diff")
            return 1
        print(f"{ran} examples match what dtrcheck prints")
    return 0


if __name__ == "__main__":
    sys.exit(main())
