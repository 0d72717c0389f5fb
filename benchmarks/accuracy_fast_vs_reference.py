"""No loss of accuracy from the fast path: train 2x400 on MNIST with the fast implementation and with
the plain-autograd reference, same seed, same data order, and compare test errors.

    python benchmarks/accuracy_fast_vs_reference.py [--epochs 3]

Writes results/benchmarks/accuracy.json. The two runs draw different random numbers when the C
kernels are in use (their own generator), so the comparison is statistical, not bit-for-bit.
"""
import argparse
import json
import math
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import helpers as H  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "results" / "benchmarks" / "accuracy.json"))
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    data = H.load_mnist()
    rows = {}
    for impl in ("fast", "reference"):
        H.seed_everything(args.seed)
        model = H.BayesMLP(784, (400, 400), 10, prior=H.ScaleMixturePrior(0.5, 1.0, math.exp(-6)),
                           impl=impl)
        t0 = time.perf_counter()
        hist = H.fit(model, data, epochs=args.epochs, lr=1e-3, seed=args.seed, desc=impl)
        wall = time.perf_counter() - t0
        pred = H.predict(model, data.x_test, n_samples=10)
        rows[impl] = {"test_error_posterior_mean": hist[-1]["test_error"],
                      "test_error_ensemble10": H.error_rate(pred.mean, data.y_test),
                      "wall_s": round(wall, 1), "history": hist}
        print(f"{impl:9s}: test error {hist[-1]['test_error']:.4f} (posterior mean), "
              f"{rows[impl]['test_error_ensemble10']:.4f} (10-sample ensemble), {wall:.0f} s")
    diff_pp = 100 * abs(rows["fast"]["test_error_posterior_mean"]
                        - rows["reference"]["test_error_posterior_mean"])
    print(f"difference: {diff_pp:.3f} pp (goal <= 0.15 pp); speed-up {rows['reference']['wall_s'] / rows['fast']['wall_s']:.1f}x")
    record = {"machine": H.machine_info("cpu"), "epochs": args.epochs, "seed": args.seed,
              "model": "BayesMLP 784-400-400-10, scale mixture pi=0.5 sigma1=1 sigma2=e^-6, "
                       "Adam 1e-3, batch 128, 1 sample, uniform KL weights",
              "runs": rows, "abs_difference_pp": round(diff_pp, 4)}
    H.utils.atomic_write_bytes(Path(args.out), (json.dumps(record, indent=2) + "\n").encode())
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
