"""Notebook 06: the Laplace rows with their prior precision chosen as laplace-torch advises
(helpers.laplace_fair; issue 52, item 7).

    python tools/laplace_fair.py plan                  # writes .../laplace_fair/plan.json
    python tools/laplace_fair.py run [--seeds 0 1]     # phase 1: validation only; resumable
    python tools/laplace_fair.py summary               # prints the phase-1 summary (JSON)
    python tools/laplace_fair.py analyse               # phase 2's analysis -> .../summary.json
    python tools/laplace_fair.py score [--seeds 0 1]   # phase 2: test sets; needs the plan
                                                       # committed and unchanged; resumable

``run`` retrains MAP's final network of each seed (checkpoint git-ignored; its fingerprint
checked against plan v3's records), on one CPU thread, and skips seeds that have a record.
``score`` scores the seeds that have a phase-1 record and no test record
(results/06_alternatives/v3/laplace_fair/test/seed<s>.json). Run both as
``OMP_NUM_THREADS=1 nice -n 5 python tools/laplace_fair.py run|score``.
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
    ap.add_argument("command", choices=["plan", "run", "summary", "score", "analyse"])
    ap.add_argument("--seeds", type=int, nargs="+", default=None)
    args = ap.parse_args(argv)
    from helpers import alternatives_plan as A
    from helpers import laplace_fair as P
    if args.command == "plan":
        print(f"wrote {P.write_plan()}")
        return
    if args.command == "analyse":
        print(f"wrote {P.write_summary()}")
        return
    if args.command == "summary":
        print(json.dumps(P.summary(), indent=1))
        return
    if args.command == "score":
        try:
            rel = P.require_committed_plan()
        except P.PlanNotCommitted as err:
            sys.exit(f"refusing to score on test data: {err}")
        print(f"{rel} is committed and unchanged: scoring on the test sets", flush=True)
    bad = sorted(set(args.seeds or []) - set(A.REPORTED_SEEDS))
    if bad:
        sys.exit(f"seeds {bad} are not plan v3's reported seeds {list(A.REPORTED_SEEDS)}")
    if not P.plan_path().exists() or json.loads(P.plan_path().read_text()) != P.plan():
        sys.exit(f"{P.plan_path()} is missing or differs from helpers.laplace_fair.plan(): "
                 "run `tools/laplace_fair.py plan` first")
    import torch

    import helpers as H
    from helpers import alternatives_final as F
    from helpers import campaign
    torch.set_num_threads(1)
    campaign.code_version()
    data = H.load_images("MNIST")
    chosen = F.choices()
    log = lambda m: print(f"{time.strftime('%H:%M:%S')} {m}", flush=True)  # noqa: E731
    if args.command == "score":
        x_ood = H.load_test_images("FashionMNIST")[0]
        for seed in args.seeds or A.REPORTED_SEEDS:
            if P.score_path(seed).exists() or not P.record_path(seed).exists():
                continue  # scored already, or phase 1 not done yet
            rec = P.score_seed(seed, data, x_ood, chosen, progress_fn=log)
            log(f"seed {seed} scored: {rec['cpu_s']:.0f} CPU s")
        return
    for seed in args.seeds or A.REPORTED_SEEDS:
        if P.record_path(seed).exists():
            continue
        rec = P.run_seed(seed, data, chosen, progress_fn=log)
        log(f"seed {seed} done: {rec['cpu_s']:.0f} CPU s")


if __name__ == "__main__":
    main()
