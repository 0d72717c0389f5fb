"""Fail when the work tree holds changes other than the declared per-CPU files.

    python tools/check_tree.py                 # every changed or untracked file must match .ci/per_cpu_files
    python tools/check_tree.py --none          # no change at all is allowed
    python tools/check_tree.py --same-as FILE  # the tree's changes are exactly those recorded in FILE
    python tools/check_tree.py --record FILE   # record the tree's changes (names and contents) in FILE

`.ci/run` calls it after `make notebooks` (on a fresh clone, on whatever CPU CI has), again after a
second `make notebooks` (which must change nothing more), and after `make test`.
"""
import argparse
import fnmatch
import hashlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DECLARED = ROOT / ".ci" / "per_cpu_files"


def declared(path=DECLARED):
    """Return the globs of the per-CPU list (comments and blank lines left out)."""
    lines = Path(path).read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def changed(root=ROOT):
    """Return the paths `git status --porcelain` lists (modified, added, deleted or untracked)."""
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "-z"], cwd=root,
                         check=True, capture_output=True, text=True).stdout
    return sorted(entry[3:] for entry in out.split("\0") if entry)


def undeclared(paths, globs):
    """Return the paths that match none of ``globs``."""
    return [p for p in paths if not any(fnmatch.fnmatch(p, g) for g in globs)]


def fingerprint(paths, root=ROOT):
    """Return one line per path: its name and the SHA-256 of its content ('-' if deleted)."""
    lines = []
    for p in paths:
        f = root / p
        lines.append(f"{hashlib.sha256(f.read_bytes()).hexdigest() if f.is_file() else '-'}  {p}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--none", action="store_true", help="allow no change at all")
    ap.add_argument("--record", metavar="FILE")
    ap.add_argument("--same-as", metavar="FILE")
    args = ap.parse_args(argv)
    paths = changed()
    if args.record:
        Path(args.record).write_text(fingerprint(paths))
        return 0
    if args.same_as:
        before, now = Path(args.same_as).read_text(), fingerprint(paths)
        if before != now:
            sys.exit("a second run changed the work tree again (not idempotent):\n--- after the "
                     f"first run\n{before}--- after the second\n{now}")
        return 0
    bad = paths if args.none else undeclared(paths, declared())
    if bad:
        sys.exit("these files changed, and .ci/per_cpu_files does not declare them (git diff shows "
                 "how):\n  " + "\n  ".join(bad))
    print(f"work tree: {len(paths)} file(s) changed, all declared per-CPU"
          if paths else "work tree: clean")
    return 0


if __name__ == "__main__":
    main()
