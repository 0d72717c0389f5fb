"""Other seeds for notebook 01's validation-chosen BBB recipe (2x400, warm start from the SGD
network, scale mixture pi 1/2, 60 epochs), beside its runner-up on validation with the pi_i KL
weights, and the SGD network both start from.

    python tools/mnist_seed_check.py [--seeds 1 2 --threads 1]

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


def configs(seed):
    """Return {label: RunConfig}: the notebook's chosen recipe, the pi_i runner-up, their SGD start."""
    from dataclasses import replace

    from helpers.classification import RunConfig
    chosen = RunConfig(method="bbb_mixture", H=400, epochs=60, lr=1e-3, lr_decay=0.955,
                       rho_init=-6.0, seed=seed, pi=0.5, kl_weighting="uniform",
                       init_from="sgd", init_epochs=60)
    return {"bbb_mixture_uniform": chosen,
            "bbb_mixture_blundell": replace(chosen, kl_weighting="blundell"),
            "sgd": chosen.init_source()}


def run_seed(seed, threads):
    """Train (or load) the configurations of one seed in this process; return their metrics."""
    import torch

    import helpers as H
    from helpers.classification import run
    torch.set_num_threads(threads)
    data = H.load_mnist(scale="paper")
    out = {}
    for label, cfg in configs(seed).items():
        _, rec = run(cfg, data, notebook=NB, eval_samples=10, desc=f"seed {seed} {label}")
        out[label] = {"name": cfg.name, **{k: rec["metrics"].get(k) for k in KEYS}}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        print(json.dumps(run_seed(args.worker, args.threads)))
        return
    if args.threads < 1:
        ap.error("--threads must be >= 1")

    def child(seed):
        res = subprocess.run([sys.executable, __file__, "--worker", str(seed), "--threads",
                              str(args.threads)], capture_output=True, text=True, cwd=ROOT)
        if res.returncode != 0:
            raise SystemExit(f"seed {seed} failed:\n{res.stderr[-3000:]}")
        return json.loads(res.stdout.strip().splitlines()[-1])

    import helpers as H
    t0 = time.perf_counter()
    with ThreadPoolExecutor(len(args.seeds)) as pool:
        per_seed = dict(zip(args.seeds, pool.map(child, args.seeds)))
    wall = time.perf_counter() - t0
    path = H.save_results(NB, "seed_check", config={"seeds": args.seeds,
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
