"""The reported runs of notebook 03: the recipe chosen on the tuning seeds (tools/bandit_tuning.py)
for each buffer, all four of the paper's agents, on seeds that were never used for a choice.

    python tools/bandit_runs.py --profile paper [--buffers paper keep_all --workers 2]

Each (buffer, seed) runs in its own process on one CPU thread (``--workers`` at a time) and
checkpoints every 1,000 steps (a killed run resumes). Writes
results/03_contextual_bandit/reported_<buffer>.json: per seed and agent the cumulative regret
every ``record_every`` steps, the poisonous mushrooms eaten, BBB's mean sigma and the wall time.
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


def run_one(buffer, seed, profile):
    """Run one reported seed of one buffer in this process; return its row."""
    import torch

    import helpers as H
    from helpers import bandit as B
    torch.set_num_threads(1)
    prof = H.get_profile(NB, profile)
    tuning = H.load_results(NB, "tuning")
    cfg = B.reported_config(buffer, tuning, prof.steps, seed, prof.updates_per_step,
                            prof.record_every)
    features, poisonous = H.load_mushroom()
    ck = H.checkpoints_dir() / NB / f"reported_{buffer}_{prof.steps}_s{seed}.pt"
    res = B.run(cfg, features, poisonous, desc=f"{buffer} seed {seed}", checkpoint=ck)
    return {"seed": seed, "names": res.names, "cum_regret": res.cum_regret[:, 0].tolist(),
            "poison_eaten": res.poison_eaten[:, 0].tolist(),
            "mean_sigma": res.mean_sigma[0].tolist(), "wall_s": round(res.wall_s, 1),
            "update_ms": round(res.update_ms, 4), "prior": cfg.prior, "recipe": [
                r for r in B.BUFFER_RECIPES if B.buffer_settings(r, prof.steps) ==
                {"buffer": cfg.buffer, "kl_count": cfg.kl_count, "kl_floor": cfg.kl_floor}][0]}


def save(buffer, rows, profile, workers, wall):
    import helpers as H
    from helpers import bandit as B
    prof = H.get_profile(NB, profile)
    tuning = H.load_results(NB, "tuning")
    rows = sorted(rows, key=lambda r: r["seed"])
    H.save_results(NB, f"reported_{buffer}",
                   config={"buffer": buffer, "label": B.BUFFER_LABELS[buffer],
                           "steps": prof.steps, "updates_per_step": prof.updates_per_step,
                           "record_every": prof.record_every, "prior": rows[0]["prior"],
                           "recipe": rows[0]["recipe"], "threads_per_run": 1,
                           "workers": workers},
                   metrics={"per_seed": rows, "summary": B.summarise_reported(rows),
                            "complete": sorted(r["seed"] for r in rows) == sorted(prof.seeds)},
                   profile=profile, seed=[r["seed"] for r in rows], wall_s=wall,
                   extra={"tuning_seeds": tuning["tuning_seeds"], "seeds": list(prof.seeds),
                          "selected_on": "tuning seeds (never reported)",
                          "tuning": f"results/{NB}/tuning.json"})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default="paper")
    ap.add_argument("--buffers", nargs="+", default=["paper", "keep_all"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--one", nargs=2, default=None, help=argparse.SUPPRESS)  # child: buffer seed
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]), args.profile)))
        return
    import helpers as H
    prof = H.get_profile(NB, args.profile)
    done = {}
    for buffer in args.buffers:
        path = H.results_dir() / NB / f"reported_{buffer}.json"
        if path.exists():
            old = json.loads(path.read_text())
            if old["profile"] == args.profile:
                done[buffer] = {r["seed"]: r for r in old["metrics"]["per_seed"]}
    todo = [(b, s) for b in args.buffers for s in prof.seeds if s not in done.get(b, {})]
    t0 = time.perf_counter()

    def child(job):
        proc = subprocess.run([sys.executable, __file__, "--profile", args.profile, "--one",
                               job[0], str(job[1])], capture_output=True, text=True, cwd=ROOT)
        if proc.returncode:
            raise RuntimeError(f"{job} failed:\n{proc.stderr[-3000:]}")
        return job, json.loads(proc.stdout.strip().splitlines()[-1])

    with ThreadPoolExecutor(args.workers) as pool:
        for (buffer, seed), row in pool.map(child, todo):
            done.setdefault(buffer, {})[seed] = row
            save(buffer, list(done[buffer].values()), args.profile, args.workers,
                 time.perf_counter() - t0)
            finals = {n: c[-1] for n, c in zip(row["names"], row["cum_regret"])}
            print(f"{buffer} seed {seed}: {finals} ({row['wall_s'] / 60:.1f} min)", flush=True)
    print(f"done in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
