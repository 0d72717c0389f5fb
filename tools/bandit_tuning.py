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
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NB = "03_contextual_bandit"
BUFFER_OF = {"paper": "paper", "keep_all": "keep_all", "keep_all_fixed_kl": "keep_all"}


def prior_label(prior):
    """Return a readable name of a bandit prior spec."""
    if isinstance(prior, (int, float)):
        return f"Gaussian sigma_p={prior:g}"
    pi, s1, s2 = prior
    return f"scale mixture pi={pi:g}, sigma1={s1:g}, sigma2={s2:.4g}"


def settings(tuning):
    """Return the grid as a list of {key, prior, recipe} (prior as JSON-friendly value)."""
    out = []
    for prior in tuning["priors"]:
        for recipe in tuning["recipes"]:
            p = list(prior) if isinstance(prior, (list, tuple)) else prior
            key = f"{recipe}_prior{'-'.join(f'{v:.4g}' for v in p) if isinstance(p, list) else p}"
            out.append({"key": key, "prior": p, "recipe": recipe})
    return out


def run_one(setting, tuning, profile):
    """Run one setting (BBB alone, tuning seeds stacked) in this process; return its row."""
    import torch

    import helpers as H
    from helpers import bandit as B
    torch.set_num_threads(1)
    prior = tuple(setting["prior"]) if isinstance(setting["prior"], list) else setting["prior"]
    steps = tuning["steps"]
    cfg = B.BanditConfig(steps=steps, seeds=tuple(tuning["seeds"]), prior=prior,
                         updates_per_step=tuning["updates_per_step"],
                         record_every=tuning["record_every"],
                         agents=(B.AgentSpec("bbb", bayesian=True),),
                         **B.buffer_settings(setting["recipe"], steps))
    features, poisonous = H.load_mushroom()
    ck = H.checkpoints_dir() / NB / "tuning" / f"{profile}_{steps}_{setting['key']}.pt"
    res = B.run(cfg, features, poisonous, desc=setting["key"], checkpoint=ck)
    every = max(1, 1000 // res.record_every)
    curves = res.cum_regret[0]  # (seeds, records)
    finals = curves[:, -1].tolist()
    return {**setting, "prior_label": prior_label(prior), "buffer": BUFFER_OF[setting["recipe"]],
            "steps": steps, "tuning_seeds": list(tuning["seeds"]),
            "regret_final_per_seed": finals, "regret_final_mean": sum(finals) / len(finals),
            "cum_regret_every_1000": [c[every - 1::every].tolist() for c in curves],
            "poison_eaten_last_record": res.poison_eaten[0, :, -1].tolist(),
            "mean_sigma_final": res.mean_sigma[:, -1].tolist(),
            "wall_s": round(res.wall_s, 1), "update_ms": round(res.update_ms, 4)}


def choose(rows):
    """Return the chosen settings: the lowest mean final regret per buffer and overall."""
    best = {}
    for row in rows:
        for group in (row["buffer"], "overall"):
            if group not in best or row["regret_final_mean"] < best[group]["regret_final_mean"]:
                best[group] = row
    return {g: {k: r[k] for k in ("key", "prior", "recipe", "regret_final_mean")}
            for g, r in best.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)  # child: a JSON setting
    args = ap.parse_args(argv)
    import helpers as H
    tuning = H.get_profile(NB, args.profile).tuning
    if args.one:
        print(json.dumps(run_one(json.loads(args.one), tuning, args.profile)))
        return
    if args.workers < 1:
        ap.error("--workers must be >= 1")
    out = H.results_dir() / NB / "tuning.json"
    done = {}
    if out.exists():
        old = json.loads(out.read_text())
        if old.get("profile") == args.profile:
            done = {r["key"]: r for r in old["metrics"]["trials"] if r["steps"] == tuning["steps"]}
    todo = [s for s in settings(tuning) if s["key"] not in done]
    t0 = time.perf_counter()
    rows = dict(done)

    def child(setting):
        proc = subprocess.run([sys.executable, __file__, "--profile", args.profile,
                               "--one", json.dumps(setting)], capture_output=True, text=True,
                              cwd=ROOT)
        if proc.returncode:
            raise RuntimeError(f"{setting['key']} failed:\n{proc.stderr[-3000:]}")
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def save():
        trials = [rows[s["key"]] for s in settings(tuning) if s["key"] in rows]
        H.save_results(NB, "tuning", config={"grid": {"priors": tuning["priors"],
                                                      "recipes": tuning["recipes"]},
                                             "steps": tuning["steps"],
                                             "updates_per_step": tuning["updates_per_step"],
                                             "agents": ["bbb"], "threads_per_run": 1,
                                             "workers": args.workers},
                       metrics={"trials": trials, "chosen": choose(trials),
                                "complete": len(trials) == len(settings(tuning))},
                       profile=args.profile, seed=list(tuning["seeds"]),
                       wall_s=time.perf_counter() - t0,
                       extra={"tuning_seeds": list(tuning["seeds"]),
                              "selected_on": "tuning seeds (never reported)",
                              "rule": "lowest cumulative regret of the BBB agent at the last "
                                      "step, mean over the tuning seeds; per buffer and overall"})

    with ThreadPoolExecutor(args.workers) as pool:
        for row in pool.map(child, todo):
            rows[row["key"]] = row
            save()
            print(f"{row['key']:40s} regret {row['regret_final_per_seed']} "
                  f"mean {row['regret_final_mean']:.0f} ({row['wall_s']:.0f} s)", flush=True)
    if not todo:
        save()
    print(f"wrote {out} ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
