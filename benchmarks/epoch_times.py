"""Seconds per training epoch of each Table 1 method under the paper's protocol, for estimates.

Plain SGD on the summed cost (lr 1e-3), batch 128, random start, rho0 -5, one weight sample,
validation and test error after every epoch (as a final run of the paper's protocol records
them), 1 thread: what a plan's CPU-hour estimate multiplies by its epochs (issue 49's plan v2).
The first epoch is a warm-up; the figure is the mean of the others.

    python benchmarks/epoch_times.py           # H = 400 and 1200, MNIST (about 5 min)
    python benchmarks/epoch_times.py --quick   # seconds: H = 50, 2,000 images (CI)
    python benchmarks/epoch_times.py --device cuda --methods bbb_mixture --out FILE  # on a GPU

Writes results/benchmarks/epoch_times.json (``--quick``: build/benchmarks/epoch_times_quick.json):
{"machine", "settings", "code", "rows": [{"method", "H", "s_per_epoch", "epochs_timed"}]}.
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, load_avg, load_note, parser, settle, write  # noqa: E402

METHODS = ("sgd", "dropout", "bbb_gaussian", "bbb_mixture")
FULL = dict(H=[400, 1200], epochs=3, n_train=None, threads=1)
QUICK = dict(H=[50], epochs=2, n_train=2_000, threads=1)


def main(argv=None):
    ap = parser(__doc__, "H = 50 on 2,000 images, two epochs")
    ap.add_argument("--H", type=int, nargs="+", default=None)
    ap.add_argument("--epochs", type=int, default=None, help="epochs per run, the first a warm-up (3)")
    ap.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    ap.add_argument("--device", default="cpu", help="cpu (default) or cuda (a clear error without one)")
    args = ap.parse_args(argv)
    out = settle(ap, args, "epoch_times", FULL, QUICK, at_least={"epochs": 2})
    args.n_train = (QUICK if args.quick else FULL)["n_train"]
    import torch

    import helpers as H
    from helpers.campaign import code_label
    from helpers.classification import RunConfig, build_model, fit_settings
    from helpers.utils import get_device, machine_info
    torch.set_num_threads(args.threads)
    device = get_device(args.device)
    before, t_start = load_avg(), time.perf_counter()
    data = H.load_mnist(scale="paper", n_train=args.n_train, n_test=args.n_train, device=device)
    rows = []
    for h in args.H:
        for method in args.methods:
            cfg = RunConfig(method=method, H=h, epochs=args.epochs, lr=1e-3, optimizer="sgd",
                            reduction="sum", rho_init=-5.0, mu_init=None, dropout=0.35,
                            pi=0.75, neg_log_sigma1=2.0, neg_log_sigma2=8.0,
                            prior_sigma=0.36787944117144233, seed=100)
            torch.manual_seed(cfg.seed)
            model = build_model(cfg).to(device)
            hist = H.fit(model, data, **fit_settings(cfg), eval_sets=("val", "test"),
                         desc=f"{method} {h}")
            walls = [hist[0]["wall_s"]] + [b["wall_s"] - a["wall_s"] for a, b in zip(hist, hist[1:])]
            timed = walls[1:]
            rows.append({"method": method, "H": h, "s_per_epoch": round(sum(timed) / len(timed), 3),
                         "epochs_timed": len(timed), "warmup_s": round(walls[0], 3)})
            print(f"H={h:5d} {method:13s} {rows[-1]['s_per_epoch']:8.2f} s per epoch", flush=True)
    record = {"machine": {**machine_info(), "load_avg_before": before, "load_avg_after": load_avg(),
                          "load_note": load_note(before, args.threads)},
              "settings": {"quick": args.quick, "H": args.H, "epochs": args.epochs,
                           "n_train": args.n_train, "threads": args.threads, "batch": 128,
                           "device": str(device), "methods": args.methods,
                           "optimizer": "sgd, lr 1e-3, summed cost", "eval": "val and test error "
                           "after every epoch (posterior-mean weights)"},
              "code": code_label(), "wall_s": round(time.perf_counter() - t_start, 1), "rows": rows}
    return write(out, record)


if __name__ == "__main__":
    main()
