"""Notebook 06's comparison, headless: the searches, every method on the reported seeds, the
evaluations; writes results/06_alternatives/summary.json (the notebook reads it back).

    python tools/alternatives.py --profile default
    python tools/alternatives.py --profile default --train-only --seeds 1 2   # one worker's share

``--train-only`` trains (or resumes) the networks of the given seeds (MAP, the ensemble's
members; MC dropout and BBB in notebooks 05's and 01's checkpoints) on one thread and stops, so
that two processes can share the training; the run without it fits IVON and Laplace and
evaluates every method once on the test sets.
"""
import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--train-only", action="store_true")
    ap.add_argument("--seeds", nargs="+", type=int, default=None,
                    help="with --train-only: the reported seeds to train (default: all)")
    args = ap.parse_args(argv)
    import helpers as H
    from helpers import alternatives as A
    t0 = time.perf_counter()
    prof = H.get_profile("06_alternatives", args.profile)
    report = lambda m: print(m, flush=True)  # noqa: E731
    if args.train_only:
        A.train_networks(prof, args.seeds or list(prof.seeds), progress_fn=report)
        print(f"trained in {time.perf_counter() - t0:.0f} s")
        return
    summary = A.build(prof, train=True, progress_fn=report)
    for line in A.verdict(summary):
        print(line)
    print(f"done in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
