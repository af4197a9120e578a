#!/usr/bin/env python3
"""Checks that docs/Lowering.md's pipeline table lists the steps that
`kiln-compile --print-pipeline` prints, in the same order, with the same
stage and lowest -O level.

usage: doc_table.py LOWERING_MD PRINT_PIPELINE_OUTPUT
"""
import re
import sys


def doc_steps(path):
    """(number, name, stage, from) of each row of the table under the
    "## Structure" heading."""
    rows, in_section = [], False
    row = re.compile(r"^\|\s*(\d+)\s*\|\s*`([a-z0-9-]+)`\s*\|\s*([a-z]+)\s*\|\s*(-O\d)\s*\|")
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            in_section = line.startswith("## Structure")
            continue
        m = row.match(line) if in_section else None
        if m:
            rows.append((int(m.group(1)), m.group(2), m.group(3), m.group(4)))
    return rows


def printed_steps(path):
    rows = []
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^(\d+)\s+([a-z0-9-]+)\s+([a-z]+)\s+(-O\d)\s", line)
        if m:
            rows.append((int(m.group(1)), m.group(2), m.group(3), m.group(4)))
    return rows


def main():
    doc, printed = doc_steps(sys.argv[1]), printed_steps(sys.argv[2])
    if not printed:
        print("error: no steps in the output of --print-pipeline")
        return 1
    if doc == printed:
        print("the table lists the %d steps of the pipeline" % len(doc))
        return 0
    print("error: docs/Lowering.md's table differs from --print-pipeline")
    for i in range(max(len(doc), len(printed))):
        d = doc[i] if i < len(doc) else None
        p = printed[i] if i < len(printed) else None
        if d != p:
            print("  row %d: docs %s, pipeline %s" % (i + 1, d, p))
    return 1


if __name__ == "__main__":
    sys.exit(main())
