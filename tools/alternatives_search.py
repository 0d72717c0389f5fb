"""Notebook 06's plan (results/06_alternatives/plan_v3.json; helpers.alternatives_plan): its
equal searches, run.

    python tools/alternatives_search.py search [--methods map ivon] [--max-trials N]
    python tools/alternatives_search.py status     # searches, then final runs and their cost
    python tools/alternatives_search.py final  [--seeds 0 1] [--methods laplace_kron] [--max-trials N]
                                               [--device cuda]
    python tools/alternatives_search.py analyse

``search`` trains the declared trials that have no record yet (helpers.alternatives_plan: 16 per
method, 60 epochs, no early stopping, validation only), one at a time on one CPU thread; start it
twice for two cores (each process claims its own trials). Records go under
results/06_alternatives/v3/search/<method>/; commit them as they land. The plan must be
committed first (a test checks the git order).

``final`` trains and scores the final runs of the reported seeds, each method's once its own
search has its choice (helpers.alternatives_final: one record per method and seed under
results/06_alternatives/v3/final/<method>/; start it twice for two cores). ``--device cuda``
runs the Laplace fits on a GPU around MAP's networks, trained on a CPU and read back from their
checkpoints (the runs that train are refused there); each record names its machine. ``analyse`` writes
results/06_alternatives/v3/summary.json: the plan's claims tested on the records so far.
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
    ap.add_argument("command", choices=["search", "status", "final", "analyse"])
    ap.add_argument("--seeds", type=int, nargs="+", default=None)
    ap.add_argument("--methods", nargs="+", default=None)
    ap.add_argument("--max-trials", type=int, default=None)
    ap.add_argument("--device", default="cpu",
                    help="final: where the Laplace fits run (cpu, or cuda for the Laplace methods)")
    args = ap.parse_args(argv)
    import torch

    from helpers import alternatives_plan as A
    from helpers import campaign
    plan = json.loads((ROOT / A.PLAN).read_text())
    bad = A.validate(plan)
    if bad:
        sys.exit(f"{A.PLAN} breaks the protocol:\n- " + "\n- ".join(bad))
    from helpers import alternatives_final as F
    known = F.METHODS if args.command == "final" else A.SEARCHES
    unknown = sorted(set(args.methods or []) - set(known))
    if unknown:
        ap.error(f"unknown methods {unknown}; choose from {sorted(known)}")
    if args.device != "cpu" and (args.command != "final" or not args.methods
                                 or set(args.methods) - set(F.LAPLACE)):
        ap.error("--device other than cpu is for `final --methods` of the Laplace methods "
                 f"{sorted(F.LAPLACE)} only: every network is trained on a CPU")
    if args.command in ("final", "analyse"):
        return final(args)
    if args.command == "status":
        for m in A.SEARCHES:
            left = len(A.pending([m]))
            c = A.chosen(m)
            print(f"{m:11s} trials left {left:2d}; choice: "
                  f"{c['name'] + ', ' + str(c['epochs']) + ' epochs' if c else '(search under way)'}")
        for tw in A.v2_twins("map"):
            print(f"v2 twin of {tw['trial']}: largest |validation NLL difference| over its "
                  f"{tw['epochs']} epochs {tw['max_abs_diff']:.3g}")
        recs = F.records()
        left_min = 0.0
        for m in F.METHODS:
            done = [r for (k, _), r in recs.items() if k == m]
            mins = [r["process_wall_s"] / 60 for r in done]
            mean = sum(mins) / len(mins) if mins else None
            left = len(A.REPORTED_SEEDS) - len(done)
            left_min += left * (mean or 0)
            print(f"final {m:16s} {len(done):2d} of {len(A.REPORTED_SEEDS)} seeds"
                  + (f"; {mean:.1f} process-min per run so far" if mean else "")
                  + (f"; failed: {sum(1 for r in done if r.get('failed'))}"
                     if any(r.get("failed") for r in done) else ""))
        print(f"final runs left: {len(F.pending())}, about {left_min / 60:.1f} process-hours at "
              "the rates so far (methods with no run yet not counted)")
        return
    torch.set_num_threads(1)
    campaign.code_version()  # the code this process loaded, named in every record

    def run(job):
        method, config = job
        t0 = time.perf_counter()
        print(f"{time.strftime('%H:%M:%S')} start {method} {A.trial_path(*job).stem}", flush=True)
        row = A.run_trial(method, config)
        print(f"{time.strftime('%H:%M:%S')} done  {A.trial_path(*job).stem}: val NLL {row['val']} "
              f"at epoch {row['best_epoch']} ({time.perf_counter() - t0:.0f} s)", flush=True)

    # a trial another process holds is left to it: this process ends when none is left to take
    campaign.work(lambda: A.pending(args.methods), run, A.NB,
                  name_fn=lambda job: A.trial_path(*job).stem,
                  done_fn=lambda job: A.trial_path(*job).exists(), max_jobs=args.max_trials)


def final(args):
    import torch

    from helpers import alternatives_final as F
    from helpers import alternatives_plan as A
    from helpers import campaign
    from helpers.utils import atomic_write_bytes, results_dir
    if args.command == "analyse":
        recs = F.records()
        out = {**F.analysis(recs), "inputs": sorted(
            str(F.record_path(m, s).relative_to(results_dir().parent)) for m, s in recs)}
        path = results_dir() / A.NB / f"v{A.VERSION}" / "summary.json"
        atomic_write_bytes(path, (json.dumps(out, indent=1) + "\n").encode())
        print(f"wrote {path} ({len(recs)} records, seeds {out['seeds']})")
        # notebook 05's plan v2 reads the same records (helpers.ood_plan)
        from helpers import ood_plan as O
        out05 = {**O.summary(recs, out), "inputs": out["inputs"]}
        path = results_dir() / O.NB / f"v{O.VERSION}" / "summary.json"
        atomic_write_bytes(path, (json.dumps(out05, indent=1) + "\n").encode())
        print(f"wrote {path}")
        return
    bad = sorted(set(args.seeds or []) - set(A.REPORTED_SEEDS))
    if bad:
        sys.exit(f"seeds {bad} are not the plan's reported seeds {list(A.REPORTED_SEEDS)}")
    if not F.choices(partial=True):
        sys.exit(str(F.SearchesIncomplete("no search is complete: run "
                                          "`python tools/alternatives_search.py search` first")))
    import helpers as H
    torch.set_num_threads(1)
    campaign.code_version()  # the code this process loaded, named in every record
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("--device cuda: no GPU is visible to torch here; leave --device out")
    data = H.load_images("MNIST", device=args.device)
    x_ood = H.load_test_images("FashionMNIST", device=args.device)[0]
    methods = set(args.methods or F.METHODS)

    def run(job):
        method, seed = job
        t0 = time.perf_counter()
        rec = F.run_one(method, seed, data, x_ood, F.choices(partial=True),
                        progress_fn=lambda m: print(f"{time.strftime('%H:%M:%S')} {m}",
                                                    flush=True))
        part = rec["full"] or rec["subset"]
        print(f"{time.strftime('%H:%M:%S')} done  {method} seed {seed}: " + (
            f"FAILED ({rec['failed']})" if rec["failed"] else
            f"test NLL {part['nll']:.4f}, error {part['test_error']:.4f}") +
            f" ({time.perf_counter() - t0:.0f} s)", flush=True)

    # a method's final runs start once its own search is complete (F.pending); jobs that wait on
    # a search or on MAP's network of their seed are waited for while another process works
    campaign.work(lambda: [j for j in F.pending(args.seeds, ready_only=True) if j[0] in methods],
                  run, A.NB,
                  name_fn=lambda job: f"v{A.VERSION}_final_{job[0]}_s{job[1]}",
                  done_fn=lambda job: F.record_path(*job).exists(),
                  blocked_fn=lambda: any(j[0] in methods for j in F.pending(args.seeds)),
                  max_jobs=args.max_trials,
                  poll_s=60)


if __name__ == "__main__":
    main()
