"""Train (or read back) notebook 05's four methods on the reported seeds and evaluate them once on
the test sets (in-domain error, NLL, Brier, ECE; out-of-distribution AUROC).

    python tools/ood_table.py --profile default [--no-train]
    python tools/ood_table.py --train-only --lane MNIST:0 FashionMNIST:0   # one worker's share

Settings and training lengths come from notebook 05's validation sweeps (`make sweep ONLY=05`).
``--train-only`` trains (or resumes) the networks of the given training sets and seeds and stops,
so that two processes can share the training; the run without it then reads them back and
evaluates every method once on the test sets. Writes results/05_uncertainty/ood.json and one
results file per method and training set.
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
    ap.add_argument("--no-train", action="store_true")
    ap.add_argument("--train-only", action="store_true",
                    help="train the networks of --lane and stop (no test evaluation)")
    ap.add_argument("--lane", nargs="+", default=None, metavar="DATA:SEED",
                    help="with --train-only: the training sets and seeds to train, e.g. MNIST:1")
    ap.add_argument("--kinds", nargs="+", default=None,
                    help="with --train-only: only these methods (default: all)")
    args = ap.parse_args(argv)
    import helpers as H
    from helpers import uncertainty as U
    t0 = time.perf_counter()
    prof = H.get_profile("05_uncertainty", args.profile)
    if args.train_only:
        lane = [(d, int(s)) for d, s in (item.split(":") for item in (args.lane or []))] or None
        U.train_ood_networks(prof, lane, kinds=args.kinds,
                             progress_fn=lambda m: print(m, flush=True))
        print(f"trained in {time.perf_counter() - t0:.0f} s")
        return
    rec = U.build_ood(prof, train=not args.no_train, progress_fn=lambda m: print(m, flush=True))
    for (data, kind), s in U.summarise(rec["metrics"]["rows"]).items():
        print(f"{data:13s} {kind:14s} error {100 * s['test_error']['mean']:.2f}%  "
              f"AUROC(H) {s['auroc_entropy']['mean']:.3f}  ECE {s['ece']['mean']:.4f}  "
              f"seeds {s['seeds']}")
    print(f"done in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
