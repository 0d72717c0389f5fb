"""Run the validation searches a profile declares (``helpers/profiles.py``) on Ray Tune.

    python tools/run_sweeps.py --profile default [--only 01] [--names bbb_mixture_h400]
    python tools/run_sweeps.py --profile paper --dry-run     # sizes only: trials, epochs
    python tools/run_sweeps.py --splice-history   # after a restore: resumed trials made whole
    RAY_ADDRESS=auto python tools/run_sweeps.py   # on the cluster of `ray start --head`

Locally by default (on the executor each profile declares: Ray, or 'local' for the seconds-long
smoke profile); with RAY_ADDRESS set every sweep runs on that Ray cluster, the smoke profile's
too; --executor (or $BBB_SWEEP_EXECUTOR) forces one. The results file records the executor, why,
and the cluster (address, nodes, CPUs). An interrupted sweep resumes where it stopped when rerun
(finished trials are kept). Each sweep writes results/<notebook>/sweep/<name>.json; no test
number is computed.
"""
import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NOTEBOOKS = ("01_mnist_classification", "05_uncertainty", "06_alternatives")


def measured_epoch_seconds(notebook, name):
    """Mean seconds per epoch of the default profile's trials of this sweep (None if not run)."""
    import json

    import helpers as H
    path = H.results_dir() / notebook / "sweep" / f"{name}.json"
    if not path.exists():
        return None
    trials = json.loads(path.read_text())["metrics"]["trials"]
    rates = [t["wall_s"] / t["epochs_run"] for t in trials if t.get("wall_s") and t["epochs_run"]]
    return sum(rates) / len(rates) if rates else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--only", nargs="*", default=None, help="notebook prefixes, e.g. 01")
    ap.add_argument("--names", nargs="*", default=None, help="sweep names (default: all)")
    ap.add_argument("--dry-run", action="store_true", help="print the sizes and stop")
    ap.add_argument("--splice-history", action="store_true",
                    help="give trials resumed after a restore their early epochs back (from "
                         "their checkpoints), choose again and rewrite the results; no training")
    ap.add_argument("--threads-per-trial", type=int, default=1)
    ap.add_argument("--cpus", type=int, default=None,
                    help="CPUs the local Ray cluster may use (default: all); with other jobs on "
                         "the machine, fewer trials at once run faster than many starved ones")
    ap.add_argument("--executor", choices=("ray", "local"), default=None,
                    help="run every sweep on this executor, whatever the profile declares "
                         "(sets $BBB_SWEEP_EXECUTOR)")
    args = ap.parse_args(argv)
    import os

    import helpers as H
    from helpers import sweep as S
    if args.executor:
        os.environ[S.EXECUTOR_ENV] = args.executor
    notebooks = [nb for nb in NOTEBOOKS if not args.only or any(nb.startswith(p) for p in args.only)]
    if not notebooks:
        ap.error(f"no notebook with sweeps matched {args.only}; notebooks with sweeps: {NOTEBOOKS}")
    sizes = {}
    for nb in notebooks:
        prof = H.get_profile(nb, args.profile)
        sw = prof.sweep
        names = args.names or list(prof.sweeps)
        unknown = sorted(set(names) - set(prof.sweeps))
        if unknown:
            ap.error(f"unknown sweeps {unknown}; {nb} declares {sorted(prof.sweeps)}")
        for name in names:
            if args.splice_history:
                if (H.results_dir() / nb / "sweep" / f"{name}.json").exists():
                    changed = S.splice_resumed_trials(name, nb, trial=prof.sweeps[name]["trial"])
                    print(f"{nb} {name}: spliced {changed or 'nothing'}")
                continue
            n, epochs = S.trial_epochs(prof.sweeps[name], sw["max_epochs"], sw["grace"],
                                       sw["reduction"])
            speed = measured_epoch_seconds(nb, name)
            hours = None if speed is None else epochs * speed / 3600
            sizes.setdefault(nb, {})[name] = {"trials": n, "max_epochs": sw["max_epochs"],
                                              "trial_epochs_asha": epochs,
                                              "seconds_per_trial_epoch": speed,
                                              "cpu_hours": hours}
            cost = "" if hours is None else f", about {hours:,.0f} CPU-hours at {speed:.1f} s per epoch"
            print(f"[{args.profile}] {nb} {name}: {n} trials, at most {sw['max_epochs']} epochs "
                  f"each, about {epochs} trial-epochs under ASHA{cost}", flush=True)
            if args.dry_run:
                continue
            t0 = time.perf_counter()
            rec = S.run_sweep(name, prof.sweeps[name], notebook=nb, profile=args.profile,
                              max_epochs=sw["max_epochs"], grace=sw["grace"],
                              reduction=sw["reduction"], epoch_step=sw["epoch_step"],
                              seed=sw["seed"], n_train=prof.n_train, n_eval=prof.n_eval,
                              eval_samples=sw.get("eval_samples", prof.eval_samples),
                              metric=sw.get("metric", "val_error"),
                              executor=sw.get("executor", "ray"),
                              threads_per_trial=args.threads_per_trial, cpus=args.cpus)
            m = rec["metrics"]
            chosen = m["chosen"]
            where = rec["config"]["executor"] + (f" ({rec['ray_cluster']['nodes']} node(s) at "
                                                 f"{rec['ray_cluster']['address']})"
                                                 if rec.get("ray_cluster") else "")
            state = ("complete" if m["complete"] else "INCOMPLETE (rerun to resume)") + f" on {where}"
            print(f"  {state} in {time.perf_counter() - t0:.0f} s; chosen on validation: "
                  f"{chosen['name']} at {chosen['epochs']} epochs, {chosen['metric']} "
                  f"{chosen['val']:.4f}" if chosen else "  no trial finished", flush=True)
            if not m["complete"]:
                sys.exit(1)
    if args.dry_run:
        from helpers.utils import atomic_write_bytes
        import json
        path = H.results_dir() / "sweep_sizes.json"
        data = json.loads(path.read_text()) if path.exists() else {}
        data[args.profile] = {"sweeps": sizes, "machine": H.machine_info(),
                              "note": "trial-epochs: the most ASHA can spend (every rung keeps "
                                      "1/reduction of the trials); seconds per trial-epoch: the "
                                      "mean of the default profile's trials of the same sweep "
                                      "(one thread each), at 2x400 units"}
        atomic_write_bytes(path, (json.dumps(data, indent=1) + "\n").encode())
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
