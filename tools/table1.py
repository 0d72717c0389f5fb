"""Train (or read back) every run of notebook 01's Table 1 and write table1.json.

    python tools/table1.py --profile default [--widths 800 1200] [--no-train]

Recipes and their number of epochs come from the validation sweeps (`make sweep` first); test
errors are computed once per run, after the choice. Each run checkpoints under checkpoints/ and
resumes when rerun; a finished run is read back from results/01_mnist_classification/runs/.
The verdicts (two-sided tests of helpers.stats) are printed and written into table1.json, which
records its input files and their hashes, not the machine that wrote it: rewritten with
--no-train from the same runs it is the same bytes.
"""
import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NB = "01_mnist_classification"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--widths", type=int, nargs="*", default=None,
                    help="train only these widths (the table is written with every width done)")
    ap.add_argument("--no-train", action="store_true", help="read back only; fail if missing")
    ap.add_argument("--methods", nargs="*", default=None,
                    help="train only these methods' runs (no table is written)")
    ap.add_argument("--keys", nargs="*", default=None,
                    help="train only these rows, e.g. bbb_mixture sgd_equal_compute (no table)")
    ap.add_argument("--seeds", type=int, nargs="*", default=None,
                    help="train only these seeds (no table is written)")
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args(argv)
    import torch

    from helpers.utils import use_profile_outputs
    use_profile_outputs(args.profile)  # only `default` writes the committed results

    import helpers as H
    from helpers import table1 as T
    if args.threads:
        torch.set_num_threads(args.threads)
    prof = H.get_profile(NB, args.profile)
    widths = tuple(args.widths or prof.table["widths"])
    seeds = {w: tuple(prof.table["seeds"][w]) for w in widths}
    data = None if args.no_train else H.load_mnist(scale="paper", n_train=prof.n_train,
                                                   n_test=prof.n_eval)
    t0 = time.perf_counter()
    rec = T.build(widths, seeds, prof.sweeps, data=data, profile=args.profile,
                  eval_samples=prof.eval_samples, train=not args.no_train,
                  progress_fn=lambda m: print(m, flush=True), base_H=prof.H,
                  methods=tuple(args.methods or T.METHODS), keys=args.keys,
                  only_seeds=args.seeds)
    if rec is None:
        print(f"trained a part of the table; no table written ({time.perf_counter() - t0:.0f} s)")
        return
    for r in rec["metrics"]["rows"]:
        per = ", ".join(f"{100 * t:.2f}" for t in r["test_error"])
        paper = "" if r["paper"] is None else f"  paper {100 * r['paper']:.2f}%"
        mean = "pending" if r["mean"] is None else f"{100 * r['mean']:.2f}%"
        print(f"{r['label']:46s} {r['H']:5d}  {mean} ({per}){paper}")
    for line in T.orderings(rec):
        print(line)
    print(f"wrote table1.json ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
