"""No loss of accuracy from the fast path: train 2x400 on MNIST with the fast implementation and with
the plain-autograd reference, same seed, same data order, and compare test errors.

    python benchmarks/accuracy_fast_vs_reference.py [--epochs 3]
    python benchmarks/accuracy_fast_vs_reference.py --quick   # seconds, for CI: 2x50, 2,000 images

Writes results/benchmarks/accuracy.json (``--quick``: build/benchmarks/accuracy_quick.json). The
two runs draw different random numbers when the C kernels are in use (their own generator), so
the comparison is statistical, not bit-for-bit.
"""
import math
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import load_avg, parser, settle, write  # noqa: E402

import helpers as H  # noqa: E402


def main(argv=None):
    ap = parser(__doc__, "H=50, 2,000 training and 1,000 test images, 1 epoch, one thread; "
                         "writes build/benchmarks/accuracy_quick.json")
    ap.add_argument("--epochs", type=int, default=None, help="epochs (3)")
    ap.add_argument("--H", type=int, default=None, help="hidden width (400)")
    ap.add_argument("--n-train", type=int, default=None, help="training images (all 50,000)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    out = settle(ap, args, "accuracy", full=dict(epochs=3, H=400, n_train=None, threads=2),
                 quick=dict(epochs=1, H=50, n_train=2000, threads=1),
                 at_least=dict(epochs=1, H=1, n_train=1, threads=1))
    torch.set_num_threads(args.threads)
    data = H.load_mnist(n_train=args.n_train, n_test=1000 if args.quick else None)
    rows = {}
    for impl in ("fast", "reference"):
        H.seed_everything(args.seed)
        model = H.BayesMLP(784, (args.H, args.H), 10,
                           prior=H.ScaleMixturePrior(0.5, 1.0, math.exp(-6)), impl=impl)
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
    record = {"machine": {**H.machine_info("cpu"), "load_avg": load_avg()},
              "quick": args.quick, "epochs": args.epochs, "seed": args.seed,
              "n_train": len(data.x_train), "n_test": len(data.x_test),
              "model": f"BayesMLP 784-{args.H}-{args.H}-10, scale mixture pi=0.5 sigma1=1 "
                       "sigma2=e^-6, Adam 1e-3, batch 128, 1 sample, uniform KL weights",
              "runs": rows, "abs_difference_pp": round(diff_pp, 4)}
    return write(out, record)


if __name__ == "__main__":
    main()
