#!/usr/bin/env python3
"""check_self_contained.py [ROOT] - fail when a file of the repository points
at something its readers cannot follow (docs/Design.md §11).

Every file git knows below ROOT (tracked, or untracked and not ignored; outside
a git work tree: every file but build*/ and .git/) is read as text, and three
kinds of reference are checked:

  pages   a Markdown page named in the text (a word ending in ".md") must be
          a page of the repository: a path from ROOT or from the file's own
          folder, or the file name of one of its pages;
  climbs  a relative path that starts with "../" must stay inside ROOT and
          name something that exists there;
  roots   an absolute path must start in one of the folders every Unix
          system has (/usr, /tmp, /dev, ...): any other top folder is some
          machine's own.

Prints FILE:LINE:TEXT for each offender and exits 1, or one "ok" line and
exits 0. test/Repo/ itself is left out: its test writes offenders on purpose.
"""

import os
import re
import subprocess
import sys

# The top-level folders of the Filesystem Hierarchy Standard.
SYSTEM_ROOTS = {
    "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32",
    "media", "mnt", "opt", "proc", "root", "run", "sbin", "srv", "sys",
    "tmp", "usr", "var",
}

# A page name, but not one made at run time (after $VAR, ${...}, <name>).
PAGE = re.compile(r"(?<![$%{}<>A-Za-z0-9_./-])[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b")
CLIMB = re.compile(r"(?<![A-Za-z0-9_.%$}/-])((?:\.\./)+[A-Za-z0-9_][A-Za-z0-9_./-]*)")
# A path that stands alone (after a space, a backquote or a parenthesis):
# in code, "/name/" inside quotes is usually a fragment being joined.
ABSOLUTE = re.compile(r"(?:^|(?<=[\s`(]))/([A-Za-z0-9_][A-Za-z0-9_.-]*)/")


def repository_files(root):
    """The files to check, as paths relative to root."""
    try:
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=True).stdout
        if os.path.realpath(top.strip()) == root:
            out = subprocess.run(
                ["git", "-C", root, "ls-files", "--cached", "--others",
                 "--exclude-standard", "-z"],
                capture_output=True, check=True).stdout
            return [p for p in out.decode().split("\0")
                    if p and os.path.isfile(os.path.join(root, p))]
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git" and not d.startswith("build")
                   and d != "__pycache__"]
        for n in names:
            files.append(os.path.relpath(os.path.join(folder, n), root))
    return files


def offences(root, rel, text, pages, page_names):
    """Yield (line number, line) for each reference of rel that cannot be
    followed."""
    folder = os.path.dirname(rel)
    for number, line in enumerate(text.splitlines(), 1):
        bad = False
        for m in PAGE.finditer(line):
            page = m.group(0).lstrip("./") if not m.group(0).startswith("../") \
                else m.group(0)
            if "/" not in page:
                bad |= page not in page_names
            else:
                inside = os.path.normpath(os.path.join(folder, page))
                bad |= page not in pages and inside not in pages
        for m in CLIMB.finditer(line):
            target = os.path.normpath(os.path.join(root, folder, m.group(1)))
            bad |= (os.path.commonpath([root, target]) != root
                    or not os.path.exists(target.rstrip(".")))
        for m in ABSOLUTE.finditer(line):
            bad |= m.group(1) not in SYSTEM_ROOTS
        if bad:
            yield number, line


def main():
    root = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else
                            os.path.join(os.path.dirname(__file__), "..", ".."))
    if not os.path.isdir(root):
        print(f"check_self_contained: error: no folder '{root}'", file=sys.stderr)
        return 2
    files = [f for f in repository_files(root)
             if not f.startswith("test/Repo/")]
    pages = {f for f in repository_files(root) if f.endswith(".md")}
    page_names = {os.path.basename(p) for p in pages}
    hits = []
    for rel in sorted(files):
        try:
            with open(os.path.join(root, rel), "rb") as f:
                data = f.read()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue  # binary
        text = data.decode("utf-8", errors="replace")
        hits += [f"{rel}:{n}:{line}"
                 for n, line in offences(root, rel, text, pages, page_names)]
    if hits:
        print("check_self_contained: error: files point at what the repository "
              "does not hold (cite its own docs instead: docs/Design.md §11):")
        print("\n".join(hits))
        return 1
    print(f"check_self_contained: ok: every reference of {root} can be followed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
