"""Where the time of one BBB training step goes (issue 31 item 5: profile before optimising).

One step of ``helpers.fit`` with the paper's estimator (the ``helpers_paper`` row of
bench_step.py: scale-mixture prior, Monte-Carlo KL, C kernels, fused Adam) is split into
  - ``kernel_forward``: the fused C pass that draws the noise, sigma = softplus(rho),
    w = mu + sigma * eps and the prior's log-density (helpers.native.forward);
  - ``kernel_backward``: the fused C pass for d/dmu and d/drho (helpers.native.backward);
  - ``optimizer``: fused Adam on mu and rho (twice the parameters of a deterministic net);
  - ``rest``: everything else (the matrix products forward and backward, the likelihood,
    autograd and Python overhead),
by wrapping those calls with a wall-clock timer. The deterministic step with fused Adam (the
``det_fused`` row) is split into ``optimizer`` and ``rest`` the same way, in the same process,
interleaved. Shares of the step are what to read on a shared machine; absolute times are not.

``kernel_parts`` then times the kernels alone on one flat array as long as the network's
parameters (scale-mixture prior, one sample), interleaved, median of the rounds: the noise alone
(``helpers.native.normal``); the forward pass of an evaluation (nothing kept, fresh memory);
the forward pass of training (keeping what the backward pass needs, in reused buffers) and the
same in fresh memory; and the backward pass. ``forward_fresh - forward_nokeep`` is the price of
keeping, ``forward_fresh - forward`` that of fresh memory (page faults).

    python benchmarks/profile_step.py            # H = 1200 and 400, 20 rounds of 5 steps
    python benchmarks/profile_step.py --quick    # seconds (CI): H = 64, 3 rounds

Writes results/benchmarks/step_profile.json (``--quick``: build/benchmarks/step_profile_quick.json).
"""
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import load_avg, load_note, parser, settle, write  # noqa: E402
from bench_step import build, make_data  # noqa: E402

from helpers import native  # noqa: E402
from helpers.utils import machine_info  # noqa: E402

PARTS = ("kernel_forward", "kernel_backward", "optimizer", "rest")
PART_TEXT = {"kernel_forward": "helpers.native.forward: noise, softplus, w, the prior's log-density",
             "kernel_backward": "helpers.native.backward: d/dmu and d/drho",
             "optimizer": "optimizer.step (fused Adam)",
             "rest": "the step's time outside those: matrix products, likelihood, autograd"}


class Clock:
    """Accumulates the wall time spent inside wrapped callables, per part."""

    def __init__(self):
        self.t = {p: 0.0 for p in PARTS}

    def wrap(self, part, fn):
        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                self.t[part] += time.perf_counter() - t0
        return timed


def _patch_optimizer_step(step, clock):
    """Return step with every torch.optim.Optimizer.step inside it timed as 'optimizer'."""
    opt_cls = [torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD]
    saved = {c: c.step for c in opt_cls}

    def run(x, y):
        for c in opt_cls:
            c.step = clock.wrap("optimizer", saved[c])
        try:
            return step(x, y)
        finally:
            for c in opt_cls:
                c.step = saved[c]
    return run


def profile(impls, Hs, rounds, steps, warmup):
    x, y = make_data("cpu")
    out = {}
    built = {(i, h): build(i, h, "cpu") for h in Hs for i in impls}
    clocks = {k: Clock() for k in built}
    totals = {k: [] for k in built}
    fwd, bwd = native.forward, native.backward
    for k, step in built.items():  # warm-up (also compiles the kernels)
        for _ in range(warmup):
            step(x[:128], y[:128])
    try:
        for r in range(rounds):
            for k, step in built.items():
                clock = clocks[k]
                native.forward = clock.wrap("kernel_forward", fwd)
                native.backward = clock.wrap("kernel_backward", bwd)
                run = _patch_optimizer_step(step, clock)
                for s in range(steps):
                    i = (r * steps + s) % (len(x) // 128)
                    t0 = time.perf_counter()
                    run(x[i * 128:(i + 1) * 128], y[i * 128:(i + 1) * 128])
                    totals[k].append(time.perf_counter() - t0)
    finally:
        native.forward, native.backward = fwd, bwd
    for (impl, h), clock in clocks.items():
        n = len(totals[(impl, h)])
        total = sum(totals[(impl, h)])
        parts = dict(clock.t)
        parts["rest"] = total - sum(v for p, v in parts.items() if p != "rest")
        out[f"{impl}_h{h}"] = {
            "impl": impl, "H": h, "steps": n,
            "median_step_ms": 1000 * statistics.median(totals[(impl, h)]),
            "mean_ms": {p: 1000 * v / n for p, v in parts.items()},
            "share": {p: v / total for p, v in parts.items()}}
    for h in Hs:
        bbb, det = out.get(f"helpers_paper_h{h}"), out.get(f"det_fused_h{h}")
        if bbb and det:
            extra = {p: bbb["mean_ms"][p] - (det["mean_ms"][p] if p in ("optimizer", "rest")
                                             else 0.0) for p in PARTS}
            over = sum(bbb["mean_ms"].values()) - sum(det["mean_ms"].values())
            out[f"overhead_h{h}"] = {
                "overhead_ms": over, "ratio": sum(bbb["mean_ms"].values())
                / sum(det["mean_ms"].values()),
                "share_of_overhead": {p: extra[p] / over for p in PARTS} if over > 0 else None}
    return out


KERNEL_PARTS = {
    "noise": "helpers.native.normal: the counter-based N(0, 1) noise alone",
    "forward_nokeep": "helpers.native.forward, keep=False (an evaluation pass): noise, sigma, w, "
                      "log p(w), the sums, in fresh memory",
    "forward": "helpers.native.forward, keep=True (training): also stores d log p/dw for the "
               "backward pass, in reused buffers",
    "forward_fresh": "as forward, every array in fresh memory",
    "backward": "helpers.native.backward: d/dmu and d/drho from what forward kept (and sigma, "
                "sigmoid(rho) recomputed from rho)"}


def kernel_parts(Hs, rounds, reps=3):
    """Median milliseconds (and nanoseconds per parameter) of each kernel part at each H."""
    import math
    from helpers import ScaleMixturePrior
    out = {}
    kind, consts = native.prior_constants(ScaleMixturePrior(0.5, 1.0, math.exp(-6)))
    for h in Hs:
        n = 784 * h + h + h * h + h + h * 10 + 10
        gen = torch.Generator().manual_seed(10)
        mu = torch.randn(n, generator=gen) * 0.05
        rho = torch.empty(n).uniform_(-7.0, -3.0, generator=gen)
        grad_w = torch.randn(n, generator=gen) * 1e-3
        kept = native.forward(mu, rho, 1, 1, kind, consts)[3]
        eps = native.forward(mu, rho, 1, 1, kind, consts)[1]

        def fresh():
            saved = native.REUSE
            native.REUSE = False
            try:
                return native.forward(mu, rho, 1, 3, kind, consts)
            finally:
                native.REUSE = saved
        parts = {"noise": lambda: native.normal((n,), 2),
                 "forward_nokeep": lambda: native.forward(mu, rho, 1, 3, kind, consts, keep=False),
                 "forward": lambda: native.forward(mu, rho, 1, 3, kind, consts),
                 "forward_fresh": fresh,
                 "backward": lambda: native.backward(mu, eps, kept, grad_w, 1e-3, 1, kind)}
        times = {k: [] for k in parts}
        for _ in range(2):  # warm-up
            for f in parts.values():
                f()
        for _ in range(rounds):
            for k, f in parts.items():
                t0 = time.perf_counter()
                for _ in range(reps):
                    f()
                times[k].append((time.perf_counter() - t0) / reps)
        out[str(h)] = {"parameters": n, "ms": {k: 1000 * statistics.median(v)
                                               for k, v in times.items()},
                       "ns_per_parameter": {k: 1e9 * statistics.median(v) / n
                                            for k, v in times.items()}}
    return out


def main(argv=None):
    ap = parser(__doc__, "H=64, 3 rounds of 3 steps")
    ap.add_argument("--H", type=int, nargs="*", default=None)
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--steps", type=int, default=None)
    args = ap.parse_args(argv)
    out = settle(ap, args, "step_profile",
                 {"H": [1200, 400], "rounds": 20, "steps": 5, "threads": 1, "warmup": 5},
                 {"H": [64], "rounds": 3, "steps": 3, "threads": 1, "warmup": 2},
                 at_least={"rounds": 1, "steps": 1, "threads": 1})
    warmup = 2 if args.quick else 5
    torch.set_num_threads(args.threads)
    before = load_avg()
    t0 = time.perf_counter()
    rows = profile(("det_fused", "helpers_paper"), args.H, args.rounds, args.steps, warmup)
    parts = kernel_parts(args.H, args.rounds) if native.usable(torch.zeros(8)) else None
    rec = {"machine": {**machine_info(), "native_kernels": native.usable(torch.zeros(8192)),
                       "load_avg_before": before, "load_avg_after": load_avg(),
                       "load_note": load_note(before, args.threads)},
           "settings": {"H": args.H, "rounds": args.rounds, "steps": args.steps,
                        "threads": args.threads, "batch": 128},
           "parts": PART_TEXT,
           "rows": rows, "kernel_parts_text": KERNEL_PARTS, "kernel_parts": parts,
           "wall_s": round(time.perf_counter() - t0, 1)}
    write(out, rec)
    for k, v in rows.items():
        if k.startswith("overhead"):
            share = v["share_of_overhead"] or {}
            print(f"{k}: BBB step {v['ratio']:.2f}x det_fused; overhead by part: "
                  + ", ".join(f"{p} {100 * s:.0f}%" for p, s in share.items()))
    return rec


if __name__ == "__main__":
    main()
