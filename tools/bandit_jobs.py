"""What the bandit tools share (tools/bandit_tuning.py, bandit_runs.py, bandit_window_census.py):
their command line, and jobs that each run in a process of their own on one CPU thread.

A job is the tool itself run again with ``--one JOB...``: there ``child`` computes its row and
prints it as JSON; ``run_jobs`` runs ``workers`` jobs at a time and yields (job, row) in order.
"""
import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

NB = "03_contextual_bandit"


def parser(doc):
    """Return the argument parser of a bandit tool (its docstring as help, ``--profile``)."""
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default")
    return ap


def child(compute):
    """In a job's process: one CPU thread, the mushroom data; print the JSON of
    ``compute(features, poisonous)`` (the row ``run_jobs`` reads back)."""
    import torch

    import helpers as H
    torch.set_num_threads(1)
    features, poisonous = H.load_mushroom()
    print(json.dumps(compute(features, poisonous)))


def run_jobs(script, profile, jobs, workers, label=" ".join):
    """Run every job (a list of ``--one`` arguments) as ``script --profile PROFILE --one JOB...``
    in a process of its own, ``workers`` at a time; return an iterator of (job, row) in the order
    of ``jobs``. A job that fails raises RuntimeError with ``label(job)`` and its stderr's end."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")

    def one(job):
        proc = subprocess.run([sys.executable, str(script), "--profile", profile, "--one", *job],
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode:
            raise RuntimeError(f"{label(job)} failed:\n{proc.stderr[-3000:]}")
        return job, json.loads(proc.stdout.strip().splitlines()[-1])

    def results():
        with ThreadPoolExecutor(workers) as pool:
            yield from pool.map(one, jobs)
    return results()
