"""The evidence behind notebook 03's BBB recipe: BBB alone (and greedy for reference) on the
mushroom bandit for a few thousand steps, under the settings the paper leaves open.

    python tools/bandit_recipe_sweep.py [--steps 6000 --workers 2]

Each setting runs in its own process on one thread (``--workers`` at a time); a setting already
in the output file with the same steps and seed is not run again (the sweep resumes). Writes
results/03_contextual_bandit/recipe_sweep.json: one row per setting with the cumulative regret
every 1,000 steps, the final mean posterior sigma, the fraction of poisonous mushrooms eaten in the
last 1,000 steps, and the wall time.
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

# (label, agent, BanditConfig overrides): every setting spelled out, whatever the defaults are
MIXTURE = [0.5, 1.0, 0.0024787521766663585]  # the paper's MNIST prior: pi 1/2, sigma1 1, sigma2 e^-6
SETTINGS = [
    ("mixture prior, KL/stored, noise 1", "bbb",
     {"prior": MIXTURE, "kl_count": "filled", "noise_sigma": 1.0}),
    ("mixture prior, KL/4096, noise 2", "bbb",
     {"prior": MIXTURE, "kl_count": "capacity", "noise_sigma": 2.0}),
    ("Gaussian prior 0.1, KL/4096, noise 1", "bbb",
     {"prior": 0.1, "kl_count": "capacity", "noise_sigma": 1.0}),
    ("Gaussian prior 0.05, KL/4096, noise 1", "bbb",
     {"prior": 0.05, "kl_count": "capacity", "noise_sigma": 1.0}),
    ("greedy (reference)", "greedy", {}),
]


def run_one(label, agent, overrides, steps, seed):
    """Run one setting in this process; return its row."""
    import torch
    import helpers as H
    from helpers import bandit as B
    torch.set_num_threads(1)
    spec = {"bbb": B.AgentSpec("bbb", bayesian=True), "greedy": B.AgentSpec("greedy")}[agent]
    kw = dict(overrides)
    if isinstance(kw.get("prior"), list):
        kw["prior"] = tuple(kw["prior"])
    cfg = B.BanditConfig(steps=steps, seeds=(seed,), record_every=1000, agents=(spec,), **kw)
    features, poisonous = H.load_mushroom()
    res = B.run(cfg, features, poisonous, desc=label)
    row = {"label": label, "agent": agent, "overrides": overrides, "steps": steps,
           "seed": seed, "cum_regret_every_1000": res.cum_regret[0, 0].tolist(),
           "poison_eaten_last_1000": res.poison_eaten[0, 0, -1].item(),
           "mean_sigma_final": res.mean_sigma[0, -1].item() if agent == "bbb" else None,
           "wall_s": round(res.wall_s, 1), "update_ms": round(res.update_ms, 4)}
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)  # child: a JSON setting
    args = ap.parse_args(argv)
    if args.one:
        label, agent, overrides, seed = json.loads(args.one)
        print(json.dumps(run_one(label, agent, overrides, args.steps, seed)))
        return
    import helpers as H
    out = H.results_dir() / "03_contextual_bandit" / "recipe_sweep.json"
    record = json.loads(out.read_text()) if out.exists() else {"rows": []}
    done = {(r["label"], r["steps"], r["seed"]) for r in record["rows"]}
    todo = [(*s, seed) for s in SETTINGS for seed in args.seeds
            if (s[0], args.steps, seed) not in done]
    t0 = time.perf_counter()

    def child(setting):
        proc = subprocess.run([sys.executable, __file__, "--steps", str(args.steps),
                               "--one", json.dumps(setting)],
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode:
            raise RuntimeError(f"{setting[0]!r} failed:\n{proc.stderr[-2000:]}")
        return json.loads(proc.stdout.strip().splitlines()[-1])

    with ThreadPoolExecutor(args.workers) as pool:
        for row in pool.map(child, todo):
            record["rows"].append(row)
            record.update({"machine": H.machine_info(), "threads_per_run": 1,
                           "workers": args.workers,
                           "note": "BBB alone (or greedy alone) on the mushroom bandit, one seed; "
                                   "the BanditConfig defaults otherwise"})
            H.utils.atomic_write_bytes(out, (json.dumps(record, indent=2) + "\n").encode())
            print(f"{row['label']:40s} seed {row['seed']} regret {row['cum_regret_every_1000']}  "
                  f"poison {row['poison_eaten_last_1000']:.3f}  sigma {row['mean_sigma_final']}",
                  flush=True)
    print(f"wrote {out} ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
