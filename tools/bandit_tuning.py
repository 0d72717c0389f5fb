"""Choose notebook 03's BBB recipe on tuning seeds that are never reported.

    python tools/bandit_tuning.py [--profile default --workers 1]

The grid (``helpers/profiles.py``, notebook 03's ``tuning``): the prior (Gaussian sigma_p, or the
paper's MNIST scale mixture) x the buffer recipe (the paper's last 4,096 tuples, or every tuple
with the KL divided by the tuples stored or by 4,096 throughout). Each setting runs the BBB agent
alone on the tuning seeds (stacked in one process, one CPU thread, ``--workers`` settings at a
time), checkpointing every 1,000 steps (a killed run resumes). The rule: the lowest cumulative
regret at the last step, averaged over the tuning seeds; chosen separately for each buffer
(notebook 03 reports both) and overall. Settings already in the results file are not run again.

Writes results/03_contextual_bandit/tuning.json (metrics.trials: one row per setting; metrics.chosen).
"""
import argparse
import json
import time

from bandit_jobs import NB, child, parser, run_jobs


def main(argv=None):
    ap = parser(__doc__)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)  # child: a JSON setting
    args = ap.parse_args(argv)
    import helpers as H
    from helpers import bandit as B
    tuning = H.get_profile(NB, args.profile).tuning
    if args.one:
        setting = json.loads(args.one)
        child(lambda features, poisonous: B.tune_setting(setting, tuning, args.profile, features,
                                                         poisonous))
        return
    if args.workers < 1:
        ap.error("--workers must be >= 1")
    out = H.results_dir() / NB / "tuning.json"
    rows = {}
    if out.exists():
        old = json.loads(out.read_text())
        if old.get("profile") == args.profile:
            rows = {r["key"]: r for r in old["metrics"]["trials"] if r["steps"] == tuning["steps"]}
    todo = [(json.dumps(s),) for s in B.tuning_settings(tuning) if s["key"] not in rows]
    t0 = time.perf_counter()
    for _, row in run_jobs(__file__, args.profile, todo, args.workers,
                           label=lambda job: json.loads(job[0])["key"]):
        rows[row["key"]] = row
        B.save_tuning(list(rows.values()), tuning, args.profile, args.workers,
                      time.perf_counter() - t0)
        print(f"{row['key']:40s} regret {row['regret_final_per_seed']} "
              f"mean {row['regret_final_mean']:.0f} ({row['wall_s']:.0f} s)", flush=True)
    if not todo and rows:
        B.save_tuning(list(rows.values()), tuning, args.profile, args.workers)
    print(f"wrote {out} ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
