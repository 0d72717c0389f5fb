"""Notebook 06's plan (results/06_alternatives/plan_v3.json; helpers.alternatives_plan): its
equal searches, run.

    python tools/alternatives_search.py search [--methods map ivon] [--max-trials N]
    python tools/alternatives_search.py status

``search`` trains the declared trials that have no record yet (helpers.alternatives_plan: 16 per
method, 60 epochs, no early stopping, validation only), one at a time on one CPU thread; start it
twice for two cores (each process claims its own trials). Records go under
results/06_alternatives/v3/search/<method>/; commit them as they land. The plan must be
committed first (a test checks the git order).
"""
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["search", "status"])
    ap.add_argument("--methods", nargs="+", default=None)
    ap.add_argument("--max-trials", type=int, default=None)
    args = ap.parse_args(argv)
    import torch

    from helpers import alternatives_plan as A
    from helpers import campaign
    plan = json.loads((ROOT / A.PLAN).read_text())
    bad = A.validate(plan)
    if bad:
        sys.exit(f"{A.PLAN} breaks the protocol:\n- " + "\n- ".join(bad))
    unknown = sorted(set(args.methods or []) - set(A.SEARCHES))
    if unknown:
        ap.error(f"unknown methods {unknown}; choose from {sorted(A.SEARCHES)}")
    if args.command == "status":
        for m in A.SEARCHES:
            left = len(A.pending([m]))
            c = A.chosen(m)
            print(f"{m:11s} trials left {left:2d}; choice: "
                  f"{c['name'] + ', ' + str(c['epochs']) + ' epochs' if c else '(search under way)'}")
        return
    torch.set_num_threads(1)
    campaign.code_version()  # the code this process loaded, named in every record
    ran = 0
    for method, config in A.pending(args.methods):
        if args.max_trials is not None and ran >= args.max_trials:
            break
        path = A.trial_path(method, config)
        claim = campaign.claim_path(path.stem, A.NB)
        if not campaign.claim(claim):
            continue
        try:
            if path.exists():
                continue
            t0 = time.perf_counter()
            print(f"{time.strftime('%H:%M:%S')} start {method} {path.stem}", flush=True)
            row = A.run_trial(method, config)
            print(f"{time.strftime('%H:%M:%S')} done  {path.stem}: val NLL {row['val']} at epoch "
                  f"{row['best_epoch']} ({time.perf_counter() - t0:.0f} s)", flush=True)
            ran += 1
        finally:
            campaign.release(claim)


if __name__ == "__main__":
    main()
