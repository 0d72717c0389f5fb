"""Other seeds for notebook 01's validation-chosen BBB recipe (read from its results file
``results/01_mnist_classification/bbb_mixture_h<H>.json``), beside the same recipe with the other KL
weighting (1/M or pi_i) and the deterministic network a warm start begins from.

    python tools/mnist_seed_check.py [--seeds 1 2 --threads 1 --hidden 400]

Each seed runs in its own process (all seeds at once, ``--threads`` torch threads each); the runs
checkpoint under checkpoints/01_mnist_classification/ like the notebook's and resume when rerun.
Writes results/01_mnist_classification/seed_check.json: per seed and configuration, the predictor
chosen on validation and the validation / test errors of both predictors, and the wall times.
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

NB = "01_mnist_classification"
KEYS = ("predictor", "val_error", "test_error", "val_error_mean_weights", "val_error_ensemble",
        "test_error_mean_weights", "test_error_ensemble", "train_wall_s")


def configs(seed, hidden=400):
    """Return {label: RunConfig} for ``seed``: notebook 01's chosen recipe, the same with the other
    KL weighting, and (for a warm start) the network its means start from."""
    from dataclasses import replace

    from helpers import load_results
    from helpers.classification import RunConfig
    chosen = replace(RunConfig.from_dict(load_results(NB, f"bbb_mixture_h{hidden}")["config"]),
                     seed=seed)
    other = {"uniform": "blundell", "blundell": "uniform"}[chosen.kl_weighting]
    out = {f"bbb_mixture_{chosen.kl_weighting}": chosen,
           f"bbb_mixture_{other}": replace(chosen, kl_weighting=other)}
    if chosen.init_from is not None:
        out[chosen.init_from] = chosen.init_source()
    return out


def run_seed(seed, threads, hidden):
    """Train (or load) the configurations of one seed in this process; return their metrics."""
    import torch

    import helpers as H
    from helpers.classification import run
    torch.set_num_threads(threads)
    data = H.load_mnist(scale="paper")
    out = {}
    for label, cfg in configs(seed, hidden).items():
        _, rec = run(cfg, data, notebook=NB, eval_samples=10, desc=f"seed {seed} {label}")
        out[label] = {"name": cfg.name, **{k: rec["metrics"].get(k) for k in KEYS}}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--hidden", type=int, default=400, help="hidden units of notebook 01's run")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        print(json.dumps(run_seed(args.worker, args.threads, args.hidden)))
        return
    if args.threads < 1:
        ap.error("--threads must be >= 1")

    def child(seed):
        res = subprocess.run([sys.executable, __file__, "--worker", str(seed), "--threads",
                              str(args.threads), "--hidden", str(args.hidden)], capture_output=True,
                             text=True, cwd=ROOT)
        if res.returncode != 0:
            raise SystemExit(f"seed {seed} failed:\n{res.stderr[-3000:]}")
        return json.loads(res.stdout.strip().splitlines()[-1])

    import helpers as H
    configs(0, args.hidden)  # fails here, with the path to create, when notebook 01 has not run
    t0 = time.perf_counter()
    with ThreadPoolExecutor(len(args.seeds)) as pool:
        per_seed = dict(zip(args.seeds, pool.map(child, args.seeds)))
    wall = time.perf_counter() - t0
    path = H.save_results(NB, "seed_check", config={"seeds": args.seeds, "H": args.hidden,
                                                    "threads_per_seed": args.threads},
                          metrics={str(s): v for s, v in per_seed.items()}, profile="default",
                          seed=args.seeds, wall_s=wall,
                          extra={"note": "train_wall_s: each run's training time (its seeds ran "
                                 "side by side, --threads each); wall_s: this invocation (runs "
                                 "already trained are loaded from their checkpoints)"})
    for seed, res in per_seed.items():
        for label, m in res.items():
            print(f"seed {seed} {label:22s} {m['predictor']:>12s} val {100 * m['val_error']:.2f}% "
                  f"test {100 * m['test_error']:.2f}%")
    print(f"wrote {path} ({wall:.0f} s)")


if __name__ == "__main__":
    main()
