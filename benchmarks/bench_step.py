"""Training-step time of Bayes by Backprop implementations, as ratios to a deterministic step.

One process, the same data and threads for every implementation, interleaved timing rounds
(20 rounds of 5 steps each: on a shared machine every implementation samples the load of the
whole run, so the ratios of one run compare even when the absolute times do not).
MLP 784-H-H-10, batch 128, Adam (lr 1e-3), one Monte-Carlo sample unless named otherwise.

    python benchmarks/bench_step.py                 # H = 400 and 1200, every implementation
    python benchmarks/bench_step.py --quick         # seconds: small H, few steps, every row (CI)
    python benchmarks/bench_step.py --H 400 --rounds 3 --no-peers

Writes results/benchmarks/step.json (``--quick``: build/benchmarks/step_quick.json):
    {"machine": {..., "load_avg_before", "load_avg_after"}, "settings": {...},
     "implementations": {impl: what it is}, "rows": [{"impl", "H", "optimizer", "median_ms",
     "p25_ms", "p75_ms", "ratio", "ratio_vs_det_fused", "peak_mb"}], "grad_variance": [...],
     "skipped": {impl: why}}
``ratio`` divides by ``det`` (nn.Linear MLP with torch's default Adam, as the peers use it);
``ratio_vs_det_fused`` by the same MLP with fused Adam (what ``helpers.fit`` uses). A helpers row
is one minibatch step of ``helpers.fit`` (``helpers_step``; a test holds the two equal), so the
benchmark follows the training loop. ``helpers_paper_default_adam`` is the paper's estimator with
the peers' optimiser (torch's default Adam): the row to hold against the peers at equal optimiser.

Peak memory is measured per implementation in a fresh subprocess (the peak resident set size
while building the model and running 5 steps, minus the resident size before; on CUDA,
torch.cuda.max_memory_allocated). Peers (bayesian-torch, blitz, torchbnn) come from the optional
``bench`` extra (``pip install -e '.[bench]'``); a missing one is skipped and the file says why.
"""
import argparse
import contextlib
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import load_avg, load_note, parser, settle, write  # noqa: E402

import helpers as H  # noqa: E402
from helpers import native  # noqa: E402

BATCH, N_DATA = 128, 128 * 16
KL_WEIGHT = 1.0 / math.ceil(50_000 / BATCH)  # the uniform 1/M weight of MNIST's training set
PAPER_PRIOR = (0.5, 1.0, math.exp(-6))       # the paper's MNIST scale mixture
IMPLS = {
    "det": "nn.Linear MLP, torch.optim.Adam with torch's defaults (as the peers use it)",
    "det_fused": "nn.Linear MLP, fused Adam (helpers.make_optimizer, what helpers.fit uses)",
    "helpers_paper": "helpers.BayesMLP, scale mixture prior, Monte-Carlo KL (the paper's "
                     "estimator), fast path (C kernels where usable), fused Adam: one minibatch "
                     "step of helpers.fit",
    "helpers_paper_torch": "as helpers_paper with the C kernels off (BBB_NATIVE=0): the "
                           "pure-torch fused path",
    "helpers_paper_reference": "as helpers_paper with impl='reference' (plain autograd)",
    "helpers_paper_default_adam": "as helpers_paper with torch's default Adam (the peers' "
                                  "optimiser)",
    "helpers_closed_form": "helpers.BayesMLP, Gaussian prior, closed-form KL, weight noise",
    "helpers_lrt": "helpers.BayesMLP, Gaussian prior, closed-form KL, local reparameterisation",
    "helpers_flipout": "helpers.BayesMLP, Gaussian prior, closed-form KL, flipout",
    "bayesian_torch_reparam": "bayesian-torch 0.5.0 dnn_to_bnn, Reparameterization layers",
    "bayesian_torch_flipout": "bayesian-torch 0.5.0 dnn_to_bnn, Flipout layers",
    "blitz": "blitz-bayesian-pytorch 0.2.8 BayesianLinear, sample_elbo",
    "torchbnn": "torchbnn 1.2 BayesLinear + BKLLoss",
}
PEER_MODULES = {"bayesian_torch_reparam": "bayesian_torch", "bayesian_torch_flipout":
                "bayesian_torch", "blitz": "blitz", "torchbnn": "torchbnn"}
FULL = dict(H=[400, 1200], rounds=20, steps=5, warmup=5, threads=2, draws=30,
            memory=list(IMPLS))
QUICK = dict(H=[32], rounds=2, steps=3, warmup=1, threads=1, draws=4,
             memory=["det", "helpers_paper"])


def make_data(device):
    g = torch.Generator().manual_seed(0)
    x = torch.rand(N_DATA, 784, generator=g) * 2
    y = torch.randint(0, 10, (N_DATA,), generator=g)
    return x.to(device), y.to(device)


def _det_model(Hs):
    return nn.Sequential(nn.Linear(784, Hs), nn.ReLU(), nn.Linear(Hs, Hs), nn.ReLU(),
                         nn.Linear(Hs, 10))


def helpers_step(model, opt, kl_weight=KL_WEIGHT, n_samples=1):
    """Return step(x, y): one minibatch step of ``helpers.fit`` (its inner loop, as it is)."""
    model.train()
    H.set_sampling(model, True)

    def step(x, y):
        parts = H.elbo(model, x, y, kl_weight, n_samples=n_samples)
        opt.zero_grad(set_to_none=True)
        parts.loss.backward()
        opt.step()
        return parts.loss.item()
    return step


@contextlib.contextmanager
def _native_off():
    old = os.environ.get("BBB_NATIVE")
    os.environ["BBB_NATIVE"] = "0"
    try:
        yield
    finally:
        if old is None:
            del os.environ["BBB_NATIVE"]
        else:
            os.environ["BBB_NATIVE"] = old


def helpers_model(impl, Hs):
    """Return the helpers.BayesMLP of a helpers_* row (on the CPU, untrained)."""
    kind = impl[len("helpers_"):]
    if kind.startswith("paper"):
        return H.BayesMLP(784, (Hs, Hs), 10, prior=H.ScaleMixturePrior(*PAPER_PRIOR),
                          impl="reference" if kind == "paper_reference" else "fast")
    est = {"closed_form": "reparam", "lrt": "lrt", "flipout": "flipout"}[kind]
    return H.BayesMLP(784, (Hs, Hs), 10, prior=H.GaussianPrior(1.0), kl="closed", estimator=est)


def optimizer_of(impl):
    """Return the optimiser an implementation's row uses: 'adam_fused' or 'adam' (torch default)."""
    fused = impl == "det_fused" or (impl.startswith("helpers_")
                                    and impl != "helpers_paper_default_adam")
    return "adam_fused" if fused else "adam"


def build(impl, Hs, device):
    """Return step(x, y) for one implementation, or raise ImportError for a missing peer."""
    if impl not in IMPLS:
        raise ValueError(f"unknown implementation {impl!r}; choose from {list(IMPLS)}")
    if impl in ("det", "det_fused"):
        model = _det_model(Hs).to(device)
        opt = (H.make_optimizer(model.parameters(), "adam", 1e-3) if impl == "det_fused"
               else torch.optim.Adam(model.parameters(), 1e-3))

        def step(x, y):
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()
            opt.step()
        return step
    if impl.startswith("helpers_"):
        model = helpers_model(impl, Hs).to(device)
        opt = (torch.optim.Adam(model.parameters(), 1e-3) if optimizer_of(impl) == "adam"
               else H.make_optimizer(model.parameters(), "adam", 1e-3))
        inner = helpers_step(model, opt)
        if impl != "helpers_paper_torch":
            return inner

        def step(x, y):
            with _native_off():
                return inner(x, y)
        return step
    if impl.startswith("bayesian_torch_"):
        from bayesian_torch.models.dnn_to_bnn import dnn_to_bnn, get_kl_loss
        model = _det_model(Hs)
        params = {"prior_mu": 0.0, "prior_sigma": 1.0, "posterior_mu_init": 0.0,
                  "posterior_rho_init": -3.0, "moped_enable": False, "moped_delta": 0.5,
                  "type": "Flipout" if impl.endswith("flipout") else "Reparameterization"}
        dnn_to_bnn(model, params)
        model.to(device)
        opt = torch.optim.Adam(model.parameters(), 1e-3)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y) + get_kl_loss(model) * KL_WEIGHT / BATCH
            loss.backward()
            opt.step()
        return step
    if impl == "blitz":
        from blitz.modules import BayesianLinear
        from blitz.utils import variational_estimator

        @variational_estimator
        class BlitzMLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.l1, self.l2 = BayesianLinear(784, Hs), BayesianLinear(Hs, Hs)
                self.l3 = BayesianLinear(Hs, 10)

            def forward(self, x):
                return self.l3(F.relu(self.l2(F.relu(self.l1(x)))))

        model = BlitzMLP().to(device)
        opt = torch.optim.Adam(model.parameters(), 1e-3)
        crit = nn.CrossEntropyLoss()

        def step(x, y):
            opt.zero_grad()
            loss = model.sample_elbo(inputs=x, labels=y, criterion=crit, sample_nbr=1,
                                     complexity_cost_weight=KL_WEIGHT / BATCH)
            loss.backward()
            opt.step()
        return step
    # torchbnn
    import torchbnn as bnn
    model = nn.Sequential(bnn.BayesLinear(0, 0.1, 784, Hs), nn.ReLU(),
                          bnn.BayesLinear(0, 0.1, Hs, Hs), nn.ReLU(),
                          bnn.BayesLinear(0, 0.1, Hs, 10)).to(device)
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    kl_loss = bnn.BKLLoss(reduction="mean", last_layer_only=False)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y) + 0.01 * kl_loss(model)
        loss.backward()
        opt.step()
    return step


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def time_all(impls, Hs, device, rounds, steps, warmup):
    """Interleaved rounds: every implementation runs ``steps`` steps per round; per-step times
    (ms) and {impl: why} for the peers that are not installed."""
    x, y = make_data(device)
    built, skipped = {}, {}
    for impl in impls:
        try:
            torch.manual_seed(0)
            built[impl] = build(impl, Hs, device)
        except ImportError as err:
            skipped[impl] = (f"not installed (no module {err.name!r}); "
                             "pip install -e '.[bench]' adds the peers")
    times = {impl: [] for impl in built}
    for impl, step in built.items():
        for i in range(warmup):
            b = i % (N_DATA // BATCH)
            step(x[b * BATCH:(b + 1) * BATCH], y[b * BATCH:(b + 1) * BATCH])
    for _ in range(rounds):
        for impl, step in built.items():
            for i in range(steps):
                b = i % (N_DATA // BATCH)
                xb, yb = x[b * BATCH:(b + 1) * BATCH], y[b * BATCH:(b + 1) * BATCH]
                sync(device)
                t0 = time.perf_counter()
                step(xb, yb)
                sync(device)
                times[impl].append((time.perf_counter() - t0) * 1e3)
    return times, skipped


def quantile(v, q):
    v = sorted(v)
    pos = q * (len(v) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def peak_memory_mb(impl, Hs, device):
    """Peak memory of a few steps of ``impl``, measured in a fresh subprocess (MB), or None with
    the child's error printed when the child fails."""
    cmd = [sys.executable, __file__, "--memory-of", impl, "--H", str(Hs), "--device", str(device),
           "--threads", str(torch.get_num_threads())]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    try:
        return float(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print(f"peak memory of {impl} at H={Hs} failed: {out.stderr.strip()[-500:]}", flush=True)
        return None


def _rss_mb():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _memory_child(impl, Hs, device):
    """Print the peak memory (MB) that building ``impl`` and running 5 steps adds."""
    import threading
    x, y = make_data(device)
    warm = build(impl, 16, device)  # load the libraries and kernels first: they are not memory
    warm(x[:BATCH], y[:BATCH])      # that the implementation needs per parameter
    del warm
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.max_memory_allocated()
    else:  # sample the resident set size while the steps run (Linux)
        base, peak, stop = _rss_mb(), [0.0], threading.Event()

        def watch():
            while not stop.is_set():
                peak[0] = max(peak[0], _rss_mb())
                time.sleep(0.0005)
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
    step = build(impl, Hs, device)
    for i in range(5):
        step(x[i * BATCH:(i + 1) * BATCH], y[i * BATCH:(i + 1) * BATCH])
    sync(device)
    if device.type == "cuda":
        print((torch.cuda.max_memory_allocated() - base) / 2**20)
    else:
        stop.set()
        watcher.join()
        print(round(max(peak[0], _rss_mb()) - base, 1))


def gradient_variance(Hs, device, draws=30):
    """Per-weight variance of the minibatch gradient w.r.t. the first layer's mu and rho over noise
    draws (same data, same parameters), averaged over weights, for each helpers estimator."""
    x, y = make_data(device)
    xb, yb = x[:BATCH], y[:BATCH]
    rows = []
    torch.manual_seed(0)
    ref = H.BayesMLP(784, (Hs, Hs), 10, prior=H.GaussianPrior(1.0), kl="closed",
                     rho_init=-4.0).to(device)
    for est in ("reparam", "lrt", "flipout"):
        model = H.BayesMLP(784, (Hs, Hs), 10, prior=H.GaussianPrior(1.0), kl="closed",
                           estimator=est, rho_init=-4.0).to(device)
        model.load_state_dict(ref.state_dict())
        g_mu, g_rho = [], []
        for _ in range(draws):
            model.zero_grad()
            H.elbo(model, xb, yb, kl_weight=KL_WEIGHT).loss.backward()
            g_mu.append(model[0].weight_mu.grad.flatten().clone())
            g_rho.append(model[0].weight_rho.grad.flatten().clone())
        rows.append({"estimator": est, "H": Hs, "draws": draws,
                     "mean_var_grad_mu": torch.stack(g_mu).var(0).mean().item(),
                     "mean_var_grad_rho": torch.stack(g_rho).var(0).mean().item()})
    return rows


def main(argv=None):
    ap = parser(__doc__, f"H={QUICK['H']}, {QUICK['rounds']} rounds of {QUICK['steps']} steps, "
                         f"{QUICK['threads']} thread, peak memory of {QUICK['memory']} only; "
                         "writes build/benchmarks/step_quick.json")
    ap.add_argument("--H", type=int, nargs="+", default=None, help="hidden widths (400 1200)")
    ap.add_argument("--impls", nargs="+", default=list(IMPLS), choices=list(IMPLS))
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--rounds", type=int, default=None, help="timing rounds (20)")
    ap.add_argument("--steps", type=int, default=None, help="steps per round (5)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up steps (5)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--memory-of", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    preset = QUICK if args.quick else FULL
    out = settle(ap, args, "step", full=FULL, quick=QUICK,
                 at_least=dict(H=1, rounds=1, steps=1, warmup=0, threads=1))
    torch.set_num_threads(args.threads)
    device = H.get_device(args.device)
    if args.memory_of:
        if args.memory_of == "helpers_paper_torch":
            os.environ["BBB_NATIVE"] = "0"
        _memory_child(args.memory_of, args.H[0], device)
        return
    impls = [i for i in args.impls if not (args.no_peers and i in PEER_MODULES)]
    if "det" not in impls or "det_fused" not in impls:
        ap.error("the ratios need both 'det' and 'det_fused' among --impls")
    memory = set() if args.no_memory else set(preset["memory"])
    load_before = load_avg()
    t_start = time.perf_counter()
    rows, grad_var, skipped_all = [], [], {}
    for Hs in args.H:
        times, skipped = time_all(impls, Hs, device, args.rounds, args.steps, args.warmup)
        skipped_all.update(skipped)
        det, det_f = statistics.median(times["det"]), statistics.median(times["det_fused"])
        for impl, v in times.items():
            med = statistics.median(v)
            row = {"impl": impl, "H": Hs, "optimizer": optimizer_of(impl),
                   "median_ms": round(med, 3), "p25_ms": round(quantile(v, 0.25), 3),
                   "p75_ms": round(quantile(v, 0.75), 3), "ratio": round(med / det, 3),
                   "ratio_vs_det_fused": round(med / det_f, 3),
                   "peak_mb": peak_memory_mb(impl, Hs, device) if impl in memory else None}
            rows.append(row)
            print(f"H={Hs:5d} {impl:27s} median {med:8.2f} ms  [p25 {row['p25_ms']:8.2f}, "
                  f"p75 {row['p75_ms']:8.2f}]  ratio {row['ratio']}  vs fused det "
                  f"{row['ratio_vs_det_fused']}  peak {row['peak_mb']} MB", flush=True)
        grad_var += gradient_variance(Hs, device, draws=preset["draws"])
    for impl, why in skipped_all.items():
        print(f"skipped {impl}: {why}")
    record = {"machine": {**H.machine_info(device), "load_avg_before": load_before,
                          "load_avg_after": load_avg(),
                          "load_note": load_note(load_before, args.threads),
                          "native_kernels": native.library() is not None},
              "settings": {"quick": args.quick, "batch": BATCH, "H": args.H,
                           "rounds": args.rounds, "steps_per_round": args.steps,
                           "warmup": args.warmup, "threads": args.threads, "lr": 1e-3,
                           "kl_weight": KL_WEIGHT, "peak_memory_of": sorted(memory & set(impls)),
                           "optimizers": {"adam": "torch.optim.Adam, torch's defaults",
                                          "adam_fused": "torch.optim.Adam(fused=True) "
                                                        "(helpers.make_optimizer)"}},
              "implementations": {i: IMPLS[i] for i in impls},
              "wall_s": round(time.perf_counter() - t_start, 1),
              "rows": rows, "grad_variance": grad_var, "skipped": skipped_all}
    return write(out, record)


if __name__ == "__main__":
    main()
