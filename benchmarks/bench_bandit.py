"""Update time of the mushroom bandit (notebook 03), as ratios in one process.

All four of the paper's agents (BBB + greedy, 1 %, 5 %) stacked into one model, input 117 + 2
features (+ the constant 1), 2 x 100 ReLU, minibatch 64, Adam 1e-3. Interleaved timing rounds of:

- ``det_single``: one deterministic 2 x 100 nn.Sequential MLP, autograd + torch.optim.Adam (one agent).
- ``eager_stacked``: the four agents as one batched model in plain eager PyTorch: flat parameters
  with an agent dimension, baddbmm layers, the BBB agent's weights sampled with autograd ops
  (mu + softplus(rho) * eps, Monte-Carlo KL under the scale-mixture prior), loss.backward(),
  fused torch.optim.Adam.
- ``fused_stacked``: ``helpers.bandit.StackedNets`` (hand-written backward, one fused C pass for
  the BBB gradient + Adam; what ``helpers.bandit.run`` uses).
- one row per agent of ``helpers.bandit_agents`` (Riquelme et al. 2018: ``neural_linear``,
  ``lin_full_post``, ``bootstrap`` with 10 heads, ``dropout``, ``uniform``), ONE agent each: a
  whole step (act, store, 64 updates of 64 tuples, and for NeuralLinear the features of the
  buffer recomputed and the regression rebuilt) with a full buffer of 4,096 tuples, divided by
  64: milliseconds per update including everything the step does besides (LinFullPost and
  uniform run no minibatch updates: their step / 64, for comparison). ``step_ms`` is the step.

    python benchmarks/bench_bandit.py [--rounds 5 --updates 200 --threads 2]
    python benchmarks/bench_bandit.py --quick      # seconds, for CI (build/benchmarks/)

Writes results/benchmarks/bandit.json with median ms per update (of all four agents for the
stacked rows), ratios to ``eager_stacked`` and the projected time of the paper's run
(50,000 steps x 64 updates, updates only).
"""
import math
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import load_avg, load_note, parser, settle, write  # noqa: E402

import helpers as H  # noqa: E402
from helpers import bandit as B  # noqa: E402
from helpers import bandit_agents as BA  # noqa: E402

A, NB, D, HID, BATCH = 4, 1, 117 + 2, 100, 64
PRIOR = (0.5, 1.0, math.exp(-6))
STACKED = ["det_single", "eager_stacked", "fused_stacked"]
AGENT_ROWS = list(BA.AGENTS)  # helpers.bandit_agents, one agent each
IMPLS = STACKED + AGENT_ROWS
UPDATES_PER_STEP, BUFFER = 64, 4096


def make_batches(n, g):
    """Return n minibatches (x (A, B, D + 1) one-hot-like with a trailing 1, r (A, B))."""
    x = (torch.rand(n, A, BATCH, D, generator=g) < 23 / D).float()
    x = torch.cat([x, torch.ones(n, A, BATCH, 1)], 3)
    r = torch.randn(n, A, BATCH, generator=g) * 10
    return x, r


def build_agent(name, g):
    """Return step() for one agent of helpers.bandit_agents, its buffer full of mushroom-like
    tuples (117 binary features, 22 of them 1 on average; rewards 5, -35 or 0)."""
    n_feat = D - 2
    agent = BA.make_agent(name, n_feat, 2, seed=0, shared=dict(
        hidden=HID, batch=BATCH, buffer=BUFFER, updates_per_step=UPDATES_PER_STEP))
    ctx = (torch.rand(BUFFER + 256, n_feat, generator=g) < 22 / n_feat).float()
    act = torch.randint(0, 2, (BUFFER + 256,), generator=g)
    rew = torch.tensor([5.0, -35.0])[torch.randint(0, 2, (BUFFER + 256,), generator=g)] * (act == 0)
    agent.fill(ctx[:BUFFER], act[:BUFFER], rew[:BUFFER])
    state = {"t": BUFFER}

    def step():
        t = state["t"] = BUFFER + (state["t"] - BUFFER + 1) % 256
        a = agent.act(ctx[t])
        agent.update(ctx[t], a, float(rew[t]) if a == 0 else 0.0)
    return step


def build(impl):
    """Return update(x, r) for one implementation."""
    prior = H.ScaleMixturePrior(*PRIOR)
    if impl == "det_single":
        model = nn.Sequential(nn.Linear(D, HID), nn.ReLU(), nn.Linear(HID, HID), nn.ReLU(),
                              nn.Linear(HID, 1))
        opt = torch.optim.Adam(model.parameters(), 1e-3)

        def update(x, r):
            loss = 0.5 * ((model(x[0, :, :D]).squeeze(-1) - r[0]) ** 2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return update
    if impl == "eager_stacked":
        shapes = [(D + 1, HID), (HID, HID), (1, HID), (HID, 1), (1, 1)]
        sizes = [a * b for a, b in shapes]
        mu = nn.Parameter(torch.empty(A, sum(sizes)).uniform_(-0.1, 0.1))
        rho = nn.Parameter(torch.full((NB, sum(sizes)), -5.0))
        opt = torch.optim.Adam([mu, rho], 1e-3, fused=True)

        def update(x, r):
            sigma = torch.nn.functional.softplus(rho)
            w_b = mu[:NB] + sigma * torch.randn_like(sigma)
            kl = (torch.distributions.Normal(mu[:NB], sigma).log_prob(w_b).sum()
                  - prior.log_prob(w_b).sum())
            w = torch.cat([w_b, mu[NB:]])
            w1, w2, b2, w3, b3 = (p.view(A, a, b) for p, (a, b)
                                  in zip(torch.split(w, sizes, 1), shapes))
            h = torch.relu(torch.bmm(x, w1))
            h = torch.relu(torch.baddbmm(b2, h, w2))
            out = torch.baddbmm(b3, h, w3).squeeze(-1)
            loss = (0.5 * (out - r) ** 2).mean(1).sum() + kl / 4096
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return update
    net = B.StackedNets(A, NB, D, HID, -5.0, prior)

    def update(x, r):
        net.sample()
        net.update(x, r, 1.0, 1.0 / 4096)
    return update


def main(argv=None):
    ap = parser(__doc__, "1 round of 5 updates (agent rows: one 64-update step), one thread; "
                         "writes build/benchmarks/bandit_quick.json")
    ap.add_argument("--rounds", type=int, default=None, help="timing rounds (5)")
    ap.add_argument("--updates", type=int, default=None, help="updates per round (200)")
    args = ap.parse_args(argv)
    out = settle(ap, args, "bandit", full=dict(rounds=5, updates=200, threads=2),
                 quick=dict(rounds=1, updates=5, threads=1),
                 at_least=dict(rounds=1, updates=1, threads=1))
    load_before = load_avg()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x, r = make_batches(64, g)
    t_start = time.perf_counter()
    updates = {impl: build(impl) for impl in STACKED}
    updates.update({name: build_agent(name, g) for name in AGENT_ROWS})
    steps = max(1, round(args.updates / UPDATES_PER_STEP))  # agent steps per round
    times = {impl: [] for impl in IMPLS}
    for rnd in range(args.rounds + 1):  # round 0 warms up
        for impl in IMPLS:
            t0 = time.perf_counter()
            if impl in AGENT_ROWS:
                for _ in range(steps):
                    updates[impl]()
                n = steps * UPDATES_PER_STEP
            else:
                for i in range(args.updates):
                    updates[impl](x[i % 64], r[i % 64])
                n = args.updates
            if rnd:
                times[impl].append(1e3 * (time.perf_counter() - t0) / n)
    eager = statistics.median(times["eager_stacked"])
    rows = []
    sig = lambda v: float(f"{v:.4g}")  # noqa: E731  (uniform's step is microseconds)
    for impl, v in times.items():
        med = statistics.median(v)
        row = {"impl": impl, "median_ms": sig(med), "min_ms": sig(min(v)), "max_ms": sig(max(v)),
               "ratio_vs_eager_stacked": round(med / eager, 3)}
        if impl in AGENT_ROWS:
            per_run = med * UPDATES_PER_STEP * 50_000 / 1e3 / 60
            row.update(step_ms=sig(med * UPDATES_PER_STEP), projected_50k_min_this_agent=round(
                per_run, 1))
            what = "this agent"
        else:
            per_run = med * 64 * 50_000 / 1e3 / 60 * (A if impl == "det_single" else 1)
            row["projected_50k_min_four_agents"] = round(per_run, 1)
            what = "four agents"
        rows.append(row)
        print(f"{impl:14s} median {med:7.3f} ms/update  ratio vs eager {med / eager:5.2f}  "
              f"-> 50k steps x 64 updates, {what}: {per_run:6.1f} min", flush=True)
    record = {"machine": {**H.machine_info(torch.device("cpu")), "load_avg_before": load_before,
                          "load_avg_after": load_avg(),
                          "load_note": load_note(load_before, args.threads)},
              "settings": {"quick": args.quick, "agents": A, "bayesian": NB, "inputs": D + 1,
                           "hidden": HID,
                           "batch": BATCH, "rounds": args.rounds,
                           "updates_per_round": args.updates,
                           "agent_steps_per_round": steps, "agent_buffer": BUFFER,
                           "agent_updates_per_step": UPDATES_PER_STEP},
              "note": "det_single is one agent; its projection multiplies by four (agents run "
                      "one after another). Updates only: acting adds about 2% in the real run. "
                      "The helpers.bandit_agents rows are one agent each and a whole step "
                      "(act + store + 64 updates + what else the agent does per step) / 64, "
                      "with a full 4,096-tuple buffer; bootstrap updates its 10 heads at once.",
              "wall_s": round(time.perf_counter() - t_start, 1), "rows": rows}
    return write(out, record)


if __name__ == "__main__":
    main()
