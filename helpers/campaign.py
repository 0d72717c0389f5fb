"""Shared long campaigns: claims that let several processes (or machines sharing a disk) split a
list of training runs without running one twice, and the code version a run record names.

Knows no experiment: a claim is a name and, optionally, files whose modification time says that
the claim's owner on another machine is still working (its run's checkpoint); and ``work``, the
loop that shares a list of jobs between processes. Used by ``helpers.paper_protocol``,
``helpers.table1_plan`` and ``tools/alternatives_search.py``.
"""
import os
import socket
import subprocess
import time
from pathlib import Path

from .utils import PROJECT_ROOT, checkpoints_dir

STALE_S = 1800  # a claim from another host whose watched files did not change for this long is abandoned


def claim_path(name, folder="01_mnist_classification"):
    """Return the lock file of the claim ``name`` (under the checkpoint folder: git-ignored)."""
    return checkpoints_dir() / folder / "claims" / f"{name}.claim"


def alive(owner, path, watch=()):
    """Return whether the process ``owner`` ('host:pid') that wrote the claim at ``path`` still
    holds it: on this host, while the process exists; on another host (a shared disk, or this
    work tree copied to a new machine), while the claim or a ``watch`` file changed recently."""
    host, _, pid = owner.partition(":")
    if host != socket.gethostname():
        times = [p.stat().st_mtime for p in (Path(path), *map(Path, watch)) if p.exists()]
        return bool(times) and time.time() - max(times) < STALE_S
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError):
        return False
    except PermissionError:
        return True
    return True


def claim(path, watch=()):
    """Take the claim at ``path`` for this process (True), or leave it to the live process that
    holds it (False). A claim whose process died is taken over."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    me = f"{socket.gethostname()}:{os.getpid()}"
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                owner = path.read_text().strip()
                age = time.time() - path.stat().st_mtime
            except FileNotFoundError:
                continue
            if (not owner and age < 60) or (owner and alive(owner, path, watch)):
                return False  # being written just now, or held by a live process
            path.unlink(missing_ok=True)  # its process died: take it over
            continue
        with os.fdopen(fd, "w") as fh:
            fh.write(me)
        return True
    return False


def release(path):
    """Give the claim at ``path`` back."""
    Path(path).unlink(missing_ok=True)


def busy(folder):
    """Return whether a live process other than this one holds a claim under ``folder``."""
    me = f"{socket.gethostname()}:{os.getpid()}"
    for path in (checkpoints_dir() / folder / "claims").glob("*.claim"):
        try:
            owner = path.read_text().strip()
        except FileNotFoundError:
            continue
        if owner and owner != me and alive(owner, path):
            return True
    return False


def work(ready_fn, run_fn, folder, *, name_fn=str, done_fn=lambda job: False,
         watch_fn=lambda job: (), blocked_fn=None, max_jobs=None, poll_s=30.0,
         sleep=time.sleep):
    """Work through a campaign's jobs beside other processes; return how many this one ran.

    Each round asks ``ready_fn()`` for the jobs that can run now, takes the first whose claim
    (``claim_path(name_fn(job), folder)``) no live process holds, runs ``run_fn(job)`` unless
    ``done_fn(job)`` says another process finished it meanwhile, and gives the claim back.
    When no ready job can be taken, it stops, unless ``blocked_fn()`` says some jobs wait on
    others' runs and another process still works under ``folder``: then it sleeps ``poll_s`` s
    and asks again. Stops after ``max_jobs`` runs."""
    ran, seen = 0, set()  # seen: jobs found done by another process (not offered again)
    while max_jobs is None or ran < max_jobs:
        took = next((j for j in ready_fn() if name_fn(j) not in seen
                     and claim(claim_path(name_fn(j), folder), watch_fn(j))), None)
        if took is None:
            if blocked_fn is not None and blocked_fn() and busy(folder):
                sleep(poll_s)
                continue
            break
        path = claim_path(name_fn(took), folder)
        try:
            if done_fn(took):
                seen.add(name_fn(took))
            else:
                run_fn(took)
                ran += 1
        finally:
            release(path)
    return ran


_LOADED = None  # the code version when this process first asked: the code it runs


def code_version():
    """Return the git commit of the code this process runs and whether helpers/ or tools/
    differed from it, read once per process (at its first call, which the campaign drivers make
    when they start): a commit made while a long run goes on names code the run never loaded."""
    global _LOADED
    if _LOADED is None:
        _LOADED = _read_code_version()
    return dict(_LOADED)


def code_label():
    """Return ``code_version()`` as a short label: 'abc1234', 'abc1234 + changes' when helpers/
    or tools/ differed from that commit, 'unknown' outside a git checkout."""
    v = code_version()
    if not v["commit"]:
        return "unknown"
    return v["commit"][:7] + (" + changes" if v["dirty"] else "")


def _read_code_version():
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, text=True,
                                capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "helpers", "tools"],
                               cwd=PROJECT_ROOT, text=True, capture_output=True,
                               check=True).stdout.strip() != ""
    except (OSError, subprocess.CalledProcessError):
        # a copy of the work tree without its git folder (a lent GPU machine): the commit it was
        # copied from, when the command that started the run names it
        return {"commit": os.environ.get("BBB_CODE_COMMIT") or None, "dirty": None}
    return {"commit": commit, "dirty": dirty}
