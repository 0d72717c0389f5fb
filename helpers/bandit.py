"""The mushroom contextual bandit (section 5.3, Figure 6): Thompson sampling with BBB vs e-greedy.

Each step a random mushroom is the context; the agent eats it or not. Eating an edible one gives
+5; eating a poisonous one gives -35 or +5 with probability 1/2 each; not eating gives 0. Regret is
measured against an oracle that eats exactly the edible ones, using expected rewards (regret 15 for
eating a poisonous mushroom, 5 for passing an edible one, 0 otherwise).

All agents (and all seeds) are one batched model: every parameter tensor has a leading agent
dimension and the layers are batched matmuls, so one update trains every agent at once. Agents
differ only in how they act (Thompson sampling with the average of two weight samples, or
epsilon-greedy) and in whether their weights are Bayesian. The update is written out by hand
(``StackedNets``): no autograd graph, no optimizer object, one fused C pass for the BBB weights.
"""
import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from . import native
from .layers import sigmoid_over_softplus
from .priors import GaussianPrior, ScaleMixturePrior
from .train import check_same_run, load_checkpoint, save_checkpoint
from .utils import one_thread, progress

EAT, PASS = 0, 1
REWARD_EDIBLE, REWARD_POISON_BAD, REWARD_POISON_OK = 5.0, -35.0, 5.0


@dataclass
class AgentSpec:
    """One kind of agent: ``name``, ``bayesian`` (BBB + Thompson) and ``epsilon`` (exploration)."""
    name: str
    bayesian: bool = False
    epsilon: float = 0.0


PAPER_AGENTS = (AgentSpec("bbb", bayesian=True), AgentSpec("greedy", epsilon=0.0),
                AgentSpec("eps1", epsilon=0.01), AgentSpec("eps5", epsilon=0.05))
# the agents of helpers.bandit_agents, which run one network each (not in this stacked model);
# named here so that this module need not import that one, which imports this one (a test keeps
# the two lists equal)
SHOWDOWN_AGENTS = ("neural_linear", "lin_full_post", "bootstrap", "dropout", "uniform")
PAPER_FIGURE6 = {  # cumulative regret read off the paper's Figure 6 (approximate)
    "bbb": {10_000: 3_900, 50_000: 5_700}, "greedy": {10_000: 4_800, 50_000: 8_200},
    "eps1": {10_000: 6_300, 50_000: 18_500}, "eps5": {10_000: 9_900, 50_000: 39_100},
}


KL_COUNTS = ("filled", "capacity", "seen", "fixed")


@dataclass
class BanditConfig:
    """Settings of one bandit run (the paper's where it gives them)."""
    steps: int = 50_000
    seeds: tuple = (0,)
    hidden: int = 100
    buffer: int = 4096
    updates_per_step: int = 64
    batch: int = 64
    lr: float = 1e-3
    rho_init: float = -5.0
    # what the paper leaves open (notebook 03, section 1b, shows why these):
    prior: object = 0.05      # a Gaussian prior's sigma, or (pi, sigma1, sigma2) of a scale mixture
    noise_sigma: float = 1.0  # Gaussian likelihood std of the reward
    # KL / N: N = buffer "capacity", tuples "filled" so far, "seen" = max(capacity, steps so far),
    # or "fixed" = kl_floor whatever the buffer holds; N is never below ``kl_floor``
    kl_count: str = "capacity"
    kl_floor: int = 0
    thompson_samples: int = 2
    agents: tuple = field(default_factory=lambda: PAPER_AGENTS)
    record_every: int = 100

    def __post_init__(self):
        if self.steps < 1 or self.buffer < self.batch or self.updates_per_step < 0:
            raise ValueError("need steps >= 1, buffer >= batch and updates_per_step >= 0")
        if not (isinstance(self.prior, (int, float)) or len(tuple(self.prior)) == 3):
            raise ValueError("prior must be (pi, sigma1, sigma2) of a scale mixture or one number, "
                             f"the sigma of a Gaussian prior; got {self.prior!r}")
        if self.kl_count not in KL_COUNTS:
            raise ValueError(f"kl_count must be one of {KL_COUNTS}, got {self.kl_count!r}")
        if int(self.kl_floor) < 0:
            raise ValueError(f"kl_floor must be >= 0, got {self.kl_floor!r}")
        if self.kl_count == "fixed" and int(self.kl_floor) < 1:
            raise ValueError("kl_count='fixed' divides the KL by kl_floor: give kl_floor >= 1")


BUFFER_RECIPES = ("paper", "keep_all", "keep_all_fixed_kl")


def buffer_settings(recipe, steps):
    """Return the ``BanditConfig`` overrides of a buffer recipe.

    'paper': the last 4,096 tuples, KL / 4,096 (the paper's buffer). 'keep_all': every tuple of the
    run (a buffer of ``steps``, as in Riquelme et al.'s code), KL / max(4,096, tuples stored): the
    agent never forgets, and its posterior narrows as the data grow. 'keep_all_fixed_kl': every
    tuple, KL / 4,096 throughout (the prior keeps the weight of 4,096 tuples)."""
    if recipe == "paper":
        return {"buffer": 4096, "kl_count": "capacity", "kl_floor": 0}
    if recipe == "keep_all":
        return {"buffer": max(int(steps), 4096), "kl_count": "filled", "kl_floor": 4096}
    if recipe == "keep_all_fixed_kl":
        return {"buffer": max(int(steps), 4096), "kl_count": "fixed", "kl_floor": 4096}
    raise ValueError(f"unknown buffer recipe {recipe!r}; choose one of {BUFFER_RECIPES}")


def make_prior(spec):
    """Return the prior of a ``BanditConfig.prior``: a number is a Gaussian's sigma, a triple a
    scale mixture's (pi, sigma1, sigma2)."""
    if isinstance(spec, (int, float)):
        return GaussianPrior(float(spec))
    return ScaleMixturePrior(*spec)


def expected_reward(eat, poisonous):
    """Return the expected reward of eating (or not) mushrooms of the given kind."""
    poison_mean = 0.5 * (REWARD_POISON_BAD + REWARD_POISON_OK)
    return torch.where(eat, torch.where(poisonous, torch.tensor(poison_mean),
                                        torch.tensor(REWARD_EDIBLE)), torch.tensor(0.0))


def regret_of(eat, poisonous):
    """Return the expected regret against the oracle (eat exactly the edible ones)."""
    oracle = torch.where(poisonous, torch.tensor(0.0), torch.tensor(REWARD_EDIBLE))
    return oracle - expected_reward(eat, poisonous)


def _adam_torch(p, g, m, v, h):
    """One Adam step on p in place (torch.optim.Adam's formula); h as in ``StackedNets._hyper``."""
    m.lerp_(g, 1.0 - h[1])
    v.mul_(h[2]).addcmul_(g, g, value=1.0 - h[2])
    p.addcdiv_(m, v.sqrt().mul_(h[4]).add_(h[3]), value=-h[0])


class StackedNets:
    """Every agent's MLP (d -> h -> h -> 1, ReLU) in one flat store, with hand-written gradients.

    Agents [0, n_bayes) are Bayesian: q(w) = N(mu, softplus(rho)^2) under ``prior``, trained with
    the paper's Monte-Carlo KL; the others are plain networks. The layers are batched matmuls over the
    agent dimension; the first layer's input ends with a constant 1, so that layer's last row is its
    bias. One ``update`` is a forward pass, the backward pass written out (five bmm), and one fused
    pass over the weights (KL gradient, reparameterisation, Adam): the C kernels on CPU, torch ops
    elsewhere. No autograd graph and no optimizer object: this is what makes the bandit fast.
    """

    def __init__(self, n_agents, n_bayes, d_in, hidden, rho_init, prior, lr=1e-3,
                 betas=(0.9, 0.999), adam_eps=1e-8, device="cpu"):
        A, nb = n_agents, n_bayes
        self.A, self.nb, self.prior = A, nb, prior
        self.lr, self.betas, self.adam_eps = lr, betas, adam_eps
        self.shapes = [(d_in + 1, hidden), (hidden, hidden), (1, hidden), (hidden, 1), (1, 1)]
        sizes = [a * b for a, b in self.shapes]
        offs = [A * sum(sizes[:k]) for k in range(len(sizes))]
        self.store = torch.empty(A * sum(sizes), device=device)  # the weights forward() uses
        self.grad = torch.zeros_like(self.store)                 # d data loss / d weights
        self.m = torch.zeros_like(self.store)  # Adam moments of the plain agents
        self.v = torch.zeros_like(self.store)
        layout = list(zip(offs, sizes, self.shapes))
        self.w = [self.store[o:o + A * n].view(A, a, b) for o, n, (a, b) in layout]
        self.g = [self.grad[o:o + A * n].view(A, a, b) for o, n, (a, b) in layout]
        for w, fan_in in zip(self.w, [d_in, hidden, hidden, hidden, hidden]):  # nn.Linear's init
            w.uniform_(-1.0 / math.sqrt(fan_in), 1.0 / math.sqrt(fan_in))
        # the Bayesian rows [0, nb) and the plain rows of every tensor, as pieces of the store
        self.bayes_len = [nb * n for n in sizes]
        self.plain_len = [(A - nb) * n for n in sizes]
        self.bayes_off, self.plain_off = offs, [o + nb * n for o, n in zip(offs, sizes)]
        self.mu = torch.cat([w[:nb].reshape(-1) for w in self.w])
        self.rho = torch.full_like(self.mu, float(rho_init))
        n = self.mu.numel()
        self.eps_all = torch.zeros(2 * ((n + 1) // 2), device=device)  # the kernel draws pairs
        self.eps = self.eps_all[:n]
        self.sig = self.sigma()  # softplus(rho), kept up to date by the kernels
        self.bayes_adam = torch.zeros(4, self.mu.numel(), device=device)  # m, v of mu and of rho
        self.t = 0
        self.native = (nb > 0 and native.usable(self.store)
                       and native.prior_constants(prior) is not None)
        if self.native:
            as_i64 = lambda xs: torch.tensor(xs, dtype=torch.int64)  # noqa: E731
            self._seg = [as_i64(x) for x in (self.bayes_len, self.bayes_off, self.plain_len,
                                             self.plain_off)]
            self._kind, self._consts = native.prior_constants(prior)
            self._threads = torch.get_num_threads() if self.store.numel() >= 16_384 else 1

    def _hyper(self):
        b1, b2 = self.betas
        return [self.lr / (1 - b1 ** self.t), b1, b2, self.adam_eps,
                1 / math.sqrt(1 - b2 ** self.t)]

    def sigma(self):
        """Return softplus(rho) of the Bayesian agents' weights (flat)."""
        return torch.nn.functional.softplus(self.rho)

    def mean_sigma(self):
        """Return the mean posterior sigma of each Bayesian agent, shape (n_bayes,)."""
        parts = self.sigma().split(self.bayes_len)
        return sum(p.view(self.nb, -1).sum(1) for p in parts) / (self.mu.numel() / max(self.nb, 1))

    def sample(self):
        """Draw the Bayesian agents' weights w = mu + sigma * eps (fresh eps) into the store."""
        if not self.nb:
            return
        if self.native:
            n_seg = len(self.bayes_len)
            native.library().bbb_sample_seg(
                n_seg, self._seg[0].data_ptr(), self._seg[1].data_ptr(), self.store.data_ptr(),
                self.mu.data_ptr(), self.sig.data_ptr(), self.eps_all.data_ptr(),
                native.draw_seed(), self._threads)
            return
        self.eps.normal_()
        w = torch.addcmul(self.mu, self.sigma(), self.eps)
        for dst, src in zip(self.w, w.split(self.bayes_len)):
            dst[: self.nb].view(-1).copy_(src)

    def forward(self, x):
        """Return (outputs (A, B), hidden activations) for inputs x (A, B, d + 1) ending in 1."""
        w1, w2, b2, w3, b3 = self.w
        h1 = torch.bmm(x, w1).relu_()
        h2 = torch.baddbmm(b2, h1, w2).relu_()
        return torch.baddbmm(b3, h2, w3).squeeze(-1), (h1, h2)

    def update(self, x, r, noise_sigma, kl_scale):
        """One Adam step of every agent on its minibatch (x (A, B, d + 1), rewards r (A, B)).

        Loss per agent: mean Gaussian NLL of r (std ``noise_sigma``), plus for Bayesian agents
        ``kl_scale`` times the Monte-Carlo KL log q(w) - log p(w) at the weights last sampled."""
        w1, w2, b2, w3, b3 = self.w
        g1, g2, gb2, g3, gb3 = self.g
        out, (h1, h2) = self.forward(x)
        go = out.sub_(r).mul_(1.0 / (noise_sigma ** 2 * x.shape[1])).unsqueeze(-1)  # dL/d out
        torch.bmm(h2.transpose(1, 2), go, out=g3)
        torch.sum(go, 1, keepdim=True, out=gb3)
        gh = torch.ops.aten.threshold_backward(torch.bmm(go, w3.transpose(1, 2)), h2, 0)
        torch.bmm(h1.transpose(1, 2), gh, out=g2)
        torch.sum(gh, 1, keepdim=True, out=gb2)
        gh = torch.ops.aten.threshold_backward(torch.bmm(gh, w2.transpose(1, 2)), h1, 0)
        torch.bmm(x.transpose(1, 2), gh, out=g1)
        self.t += 1
        h = self._hyper()
        if self.native:
            lib, seg = native.library(), self._seg
            hyper = torch.tensor(h, dtype=torch.float32)
            lib.bbb_backward_adam_seg(
                len(self.bayes_len), seg[0].data_ptr(), seg[1].data_ptr(), self.grad.data_ptr(),
                self.mu.data_ptr(), self.rho.data_ptr(), self.sig.data_ptr(), self.eps.data_ptr(),
                float(kl_scale),
                self._kind, self._consts.data_ptr(), self.bayes_adam.data_ptr(), self.mu.numel(),
                hyper.data_ptr(), self._threads)
            lib.bbb_adam_seg(len(self.plain_len), seg[2].data_ptr(), seg[3].data_ptr(),
                             self.store.data_ptr(), self.grad.data_ptr(), self.m.data_ptr(),
                             self.v.data_ptr(), hyper.data_ptr(), self._threads)
            return
        if self.nb:
            g = torch.cat([gv[: self.nb].reshape(-1) for gv in self.g])
            sigma = self.sigma()
            _, dlogp = self.prior.log_prob_and_grad(torch.addcmul(self.mu, sigma, self.eps))
            g_mu = g.sub_(dlogp, alpha=kl_scale)
            g_rho = (g_mu * self.eps * torch.sigmoid(self.rho)
                     - kl_scale * sigmoid_over_softplus(self.rho, sigma))
            st = self.bayes_adam
            _adam_torch(self.mu, g_mu, st[0], st[1], h)
            _adam_torch(self.rho, g_rho, st[2], st[3], h)
        for o, n in zip(self.plain_off, self.plain_len):
            sl = slice(o, o + n)
            _adam_torch(self.store[sl], self.grad[sl], self.m[sl], self.v[sl], h)

    def state_dict(self):
        """Return every tensor needed to resume training (and the step count)."""
        return {"store": self.store, "m": self.m, "v": self.v, "mu": self.mu, "rho": self.rho,
                "bayes_adam": self.bayes_adam, "t": self.t}

    def load_state_dict(self, state):
        """Copy the tensors of ``state_dict()`` back in place."""
        for name, value in state.items():
            if name == "t":
                self.t = int(value)
            else:
                getattr(self, name).copy_(value)
        self.sig.copy_(self.sigma())


@dataclass
class BanditResult:
    """Per-agent cumulative regret curves (every ``record_every`` steps) and diagnostics."""
    names: list
    seeds: tuple
    steps: int
    record_every: int
    cum_regret: torch.Tensor      # (n_agent_kinds, n_seeds, n_records)
    poison_eaten: torch.Tensor    # fraction of poisonous mushrooms eaten per record window
    mean_sigma: torch.Tensor      # mean posterior sigma of the BBB agent(s) per record (n_seeds, n)
    wall_s: float
    update_ms: float


def agent_layout(agents, n_seeds):
    """Return (agent kind index, seed index) of every row of the stacked model: Bayesian kinds
    first, the seeds of a kind next to each other."""
    order = sorted(range(len(agents)), key=lambda i: not agents[i].bayesian)
    return [(order[k // n_seeds], k % n_seeds) for k in range(len(agents) * n_seeds)]


def window_census(state, features, poisonous, agents=PAPER_AGENTS, seeds=(0,), last=4096):
    """Return one dict per agent and seed of a run's checkpoint ``state``: of the tuples it
    stored for the last ``last`` steps, the poisonous mushrooms eaten (and how many distinct),
    the edible ones passed and the regret those steps cost (``regret_of``); and the poisonous
    mushrooms eaten among every tuple stored (the whole run for a keep-all buffer)."""
    buf_x = state["buf_x"]
    t, n_kept = int(state["t"]), buf_x.shape[1]
    layout = agent_layout(list(agents), len(seeds))
    if buf_x.shape[0] != len(layout):
        raise ValueError(f"the checkpoint holds {buf_x.shape[0]} agents, but {len(agents)} agent "
                         f"kinds x {len(seeds)} seeds were given: pass the run's agents and seeds")
    if not 1 <= last <= n_kept:
        raise ValueError(f"last must be between 1 and the {n_kept} tuples stored, got {last}")
    n_feat = features.shape[1]
    if buf_x.shape[2] != n_feat + 3:
        raise ValueError(f"the checkpoint's inputs have {buf_x.shape[2]} columns; these features "
                         f"give {n_feat + 3}: it belongs to another data set")
    # which mushroom (poisonous or not) each stored input is: look its features up
    kind_of = {row.tobytes(): bool(p) for row, p in
               zip(np.packbits(features.to(torch.uint8).numpy(), axis=1), poisonous.tolist())}
    slots = torch.arange(t - last, t) % n_kept  # ring buffer: step s sits in slot s % capacity
    in_window = torch.zeros(n_kept, dtype=torch.bool)
    in_window[slots] = True
    rows = []
    for a, (kind, seed) in enumerate(layout):
        x = buf_x[a].to(torch.uint8)
        keys = np.packbits(x[:, :n_feat].numpy(), axis=1)
        try:
            pois = torch.tensor([kind_of[k.tobytes()] for k in keys])
        except KeyError:
            raise ValueError("a stored input matches no mushroom of these features: the checkpoint "
                             "belongs to another data set") from None
        eat = x[:, n_feat] == 1
        eaten_pois = eat & pois & in_window
        passed_edible = ~eat & ~pois & in_window
        rows.append({"agent": agents[kind].name, "seed": int(seeds[seed]), "steps": t,
                     "last": last, "eaten_poisonous": int(eaten_pois.sum()),
                     "distinct_poisonous": len({keys[i].tobytes() for i in
                                                eaten_pois.nonzero().flatten().tolist()}),
                     "passed_edible": int(passed_edible.sum()),
                     "regret_last": int(regret_of(eat[in_window], pois[in_window]).sum()),
                     "stored": n_kept, "eaten_poisonous_stored": int((eat & pois).sum())})
    return rows


def run_fingerprint(cfg, features, poisonous):
    """Return what a checkpoint must match to resume this run: every setting of ``cfg`` but the
    number of steps and the buffer size (a longer run, or a keep-all buffer grown with it,
    continues a shorter one), and a hash of the data."""
    out = {k: repr(getattr(cfg, k)) for k in cfg.__dataclass_fields__ if k not in ("steps", "buffer")}
    h = hashlib.sha256(features.detach().cpu().contiguous().numpy().tobytes())
    h.update(poisonous.detach().cpu().contiguous().numpy().tobytes())
    out["data"] = f"{tuple(features.shape)} sha256:{h.hexdigest()[:16]}"
    return out


def mushroom_stream(n_mushrooms, steps, seed):
    """Return (index of the mushroom shown at each step (steps,), reward coin of each step
    (steps,)) of one seed: the same sequence for every agent of that seed (common random numbers),
    from generators of its own, so that a shorter run's sequence is a prefix of a longer one's."""
    gen = lambda base: torch.Generator().manual_seed(base + int(seed))  # noqa: E731
    return (torch.randint(0, n_mushrooms, (steps,), generator=gen(1000)),
            torch.rand(steps, generator=gen(5000)))


def run(cfg, features, poisonous, device="cpu", desc="bandit", checkpoint=None,
        checkpoint_every=1000):
    """Run every agent of ``cfg`` for every seed at once; return a ``BanditResult``.

    With ``checkpoint`` (a path) the whole state (weights, Adam moments, buffers, counters, RNG) is
    saved atomically every ``checkpoint_every`` steps, and a run finds and resumes from it."""
    other = [k.name for k in cfg.agents if k.name in SHOWDOWN_AGENTS]
    if other:
        raise ValueError(f"{other} are agents of helpers.bandit_agents (Riquelme et al. 2018), not "
                         "of this stacked model: run them with helpers.bandit_agents.run_agents "
                         "or tools/bandit_runs.py --agents")
    device = torch.device(device)
    kinds = list(cfg.agents)
    n_seeds = len(cfg.seeds)
    agent_kind, agent_seed = map(list, zip(*agent_layout(kinds, n_seeds)))
    A = len(agent_kind)
    n_bayes = sum(kinds[i].bayesian for i in agent_kind)
    eps = torch.tensor([kinds[i].epsilon for i in agent_kind], device=device)

    torch.manual_seed(int(cfg.seeds[0]) * 7919 + 17)
    X = features.to(device)
    pois = poisonous.to(device)
    d = X.shape[1] + 2
    model = StackedNets(A, n_bayes, d, cfg.hidden, cfg.rho_init, make_prior(cfg.prior),
                        lr=cfg.lr, device=device)
    streams = [mushroom_stream(len(X), cfg.steps, s) for s in cfg.seeds]
    contexts = torch.stack([c for c, _ in streams]).to(device)       # (n_seeds, steps)
    coin = torch.stack([k for _, k in streams]).to(device)
    buf_x = torch.zeros(A, cfg.buffer, d + 1, device=device)  # inputs end with a constant 1
    buf_r = torch.zeros(A, cfg.buffer, device=device)
    seed_idx = torch.tensor(agent_seed, device=device)
    arange_a = torch.arange(A, device=device)
    tail = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]], device=device)  # eat, pass (+ the 1)
    samples = cfg.thompson_samples if n_bayes else 1

    n_rec = cfg.steps // cfg.record_every
    regret_rec = torch.zeros(A, n_rec)
    poison_rec = torch.zeros(A, n_rec)
    sigma_rec = torch.zeros(max(n_bayes, 1), n_rec)
    cum = torch.zeros(A, device=device)
    poison_eaten = torch.zeros(A, device=device)
    poison_seen = torch.zeros(A, device=device)
    t_start = time.perf_counter()
    t_updates, n_updates, start, wall_before = 0.0, 0, 0, 0.0
    run_id = run_fingerprint(cfg, features, poisonous)
    if checkpoint is not None and Path(checkpoint).exists():
        st = load_checkpoint(checkpoint, map_location=device)
        if set(st.get("model", {})) != set(model.state_dict()):
            raise ValueError(f"{checkpoint} was written by another version of helpers.bandit "
                             "(different model layout): delete it to start the run afresh")
        check_same_run(checkpoint, st.get("run"), run_id)
        model.load_state_dict(st["model"])
        n_kept = st["buf_x"].shape[1]  # only the filled part is stored (one-hot inputs as bytes)
        if int(st["t"]) > cfg.steps:
            raise ValueError(f"{checkpoint} is {int(st['t'])} steps into a run, more than this "
                             f"run's {cfg.steps}: delete it or use another checkpoint path")
        if n_kept > cfg.buffer:
            raise ValueError(f"{checkpoint} holds {n_kept} buffered tuples, more than this run's "
                             f"buffer ({cfg.buffer}): it belongs to another buffer setting; "
                             "delete it or use another checkpoint path")
        buf_x[:, :n_kept].copy_(st["buf_x"])
        buf_r[:, :n_kept].copy_(st["buf_r"])
        for name, tensor in (("cum", cum),
                             ("poison_eaten", poison_eaten), ("poison_seen", poison_seen),
                             ("regret_rec", regret_rec), ("poison_rec", poison_rec),
                             ("sigma_rec", sigma_rec)):
            saved = st[name]
            tensor[..., :saved.shape[-1]].copy_(saved)  # a shorter run's records are a prefix
        start, wall_before = int(st["t"]), float(st["wall_s"])
        t_updates, n_updates = float(st["t_updates"]), int(st["n_updates"])
        torch.set_rng_state(st["rng"])

    # the buffer's inputs are one-hot features + one-hot action + 1: store them as bytes
    binary_inputs = bool(((X == 0) | (X == 1)).all())

    def save(t_next):
        n = min(t_next, cfg.buffer)  # a checkpoint holds only the filled part of the buffer
        kept_x = buf_x[:, :n].to(torch.uint8) if binary_inputs else buf_x[:, :n]
        save_checkpoint(checkpoint, model=model.state_dict(), buf_x=kept_x, buf_r=buf_r[:, :n],
                        cum=cum,
                        poison_eaten=poison_eaten, poison_seen=poison_seen,
                        regret_rec=regret_rec, poison_rec=poison_rec, sigma_rec=sigma_rec,
                        t=t_next, rng=torch.get_rng_state(), run=run_id,
                        wall_s=wall_before + time.perf_counter() - t_start,
                        t_updates=t_updates, n_updates=n_updates)

    # (the C kernels flush subnormal Adam moments to zero inside their own loops only)
    for t in progress(range(start, cfg.steps), desc=desc, total=cfg.steps, initial=start,
                      mininterval=2.0):
        ctx = contexts[seed_idx, t]                                   # (A,)
        x = X[ctx]                                                    # (A, d - 2)
        inputs = torch.cat([x.unsqueeze(1).expand(A, 2, d - 2), tail.expand(A, 2, 3)], 2)
        value = 0.0
        for _ in range(samples):  # Thompson: average of weight samples (plain agents: same net)
            model.sample()
            value = value + model.forward(inputs)[0]
        eat = value[:, EAT] > value[:, PASS]
        explore = torch.rand(A, device=device) < eps
        eat = torch.where(explore, torch.rand(A, device=device) < 0.5, eat)
        is_poison = pois[ctx]
        bad = coin[seed_idx, t] < 0.5
        reward = torch.where(eat, torch.where(is_poison & bad, torch.tensor(REWARD_POISON_BAD,
                                                                           device=device),
                                              torch.tensor(REWARD_EDIBLE, device=device)),
                             torch.tensor(0.0, device=device))
        cum += regret_of(eat.cpu(), is_poison.cpu()).to(device)
        poison_eaten += (eat & is_poison).float()
        poison_seen += is_poison.float()
        slot = t % cfg.buffer
        buf_x[:, slot] = torch.where(eat.unsqueeze(1), inputs[:, EAT], inputs[:, PASS])
        buf_r[:, slot] = reward
        filled = min(t + 1, cfg.buffer)
        kl_n = max(cfg.kl_floor, {"filled": filled, "capacity": cfg.buffer, "fixed": 0,
                                  "seen": max(cfg.buffer, t + 1)}[cfg.kl_count])
        t0 = time.perf_counter()
        if cfg.updates_per_step:  # every minibatch of this step in one gather
            idx = torch.randint(0, filled, (cfg.updates_per_step, A, cfg.batch), device=device)
            xb, rb = buf_x[arange_a.view(1, A, 1), idx], buf_r[arange_a.view(1, A, 1), idx]
            for u in range(cfg.updates_per_step):  # KL / N for each Bayesian agent, N = buffer
                model.sample()
                model.update(xb[u], rb[u], cfg.noise_sigma, 1.0 / kl_n)
        t_updates += time.perf_counter() - t0
        n_updates += cfg.updates_per_step
        if (t + 1) % cfg.record_every == 0:
            r = (t + 1) // cfg.record_every - 1
            regret_rec[:, r] = cum.cpu()
            poison_rec[:, r] = (poison_eaten / poison_seen.clamp_min(1)).cpu()
            poison_eaten.zero_()
            poison_seen.zero_()
            if n_bayes:
                sigma_rec[:, r] = model.mean_sigma().cpu()
        if checkpoint is not None and ((t + 1) % checkpoint_every == 0 or t + 1 == cfg.steps):
            save(t + 1)
    wall = wall_before + time.perf_counter() - t_start
    names = [k.name for k in kinds]
    K = len(kinds)
    cr = torch.zeros(K, n_seeds, n_rec)
    pr = torch.zeros(K, n_seeds, n_rec)
    for a in range(A):
        cr[agent_kind[a], agent_seed[a]] = regret_rec[a]
        pr[agent_kind[a], agent_seed[a]] = poison_rec[a]
    return BanditResult(names, tuple(cfg.seeds), cfg.steps, cfg.record_every, cr, pr,
                        sigma_rec[:n_bayes], wall, 1e3 * t_updates / max(n_updates, 1))


# ---- the reported runs: chosen on tuning seeds, run on other seeds ----

BUFFER_LABELS = {"paper": "the paper's buffer (last 4,096 tuples)",
                 "keep_all": "every tuple kept; KL / max(4,096, n)"}
RECIPE_LABELS = {"paper": "last 4,096 tuples, KL / 4,096 (the paper's)",
                 "keep_all": "every tuple, KL / max(4,096, tuples stored)",
                 "keep_all_fixed_kl": "every tuple, KL / 4,096"}
PROTOCOL_NOTES = {"paper": "paper's buffer",
                  "keep_all": "departure: every tuple kept, added after seed 0's regret was seen"}
# docs/choices.md, entries 6 and 7: the prior and KL scaling were first picked on reported seeds
TUNED_NOTE = ("; prior and KL scaling (not in the paper) tuned on seeds 100–101, first picked on "
              "reported seeds (section 2)")


def chosen_recipe(buffer, tuning):
    """Return (prior, recipe) chosen for ``buffer`` ('paper' or 'keep_all') in a tuning record
    (tools/bandit_tuning.py's results file)."""
    chosen = tuning["metrics"]["chosen"].get(buffer)
    if chosen is None:
        raise ValueError(f"the tuning results hold no choice for buffer {buffer!r}: run "
                         "tools/bandit_tuning.py")
    prior = tuple(chosen["prior"]) if isinstance(chosen["prior"], list) else chosen["prior"]
    return prior, chosen["recipe"]


def reported_config(buffer, tuning, steps, seed, updates_per_step=64, record_every=100):
    """Return the BanditConfig of one reported seed: the recipe chosen for ``buffer`` on the
    tuning seeds, all four of the paper's agents."""
    prior, recipe = chosen_recipe(buffer, tuning)
    return BanditConfig(steps=steps, seeds=(seed,), prior=prior, updates_per_step=updates_per_step,
                        record_every=record_every, **buffer_settings(recipe, steps))


def summarise_reported(per_seed):
    """Return {agent: {final per seed, mean, sd, median}} and the mean curves from per-seed rows
    (each: seed, names, cum_regret per agent, poison_eaten per agent, mean_sigma, wall_s)."""
    import statistics
    names = per_seed[0]["names"]
    out = {}
    for a, name in enumerate(names):
        finals = [r["cum_regret"][a][-1] for r in per_seed]
        curves = [r["cum_regret"][a] for r in per_seed]
        out[name] = {"final_per_seed": finals, "mean": statistics.fmean(finals),
                     "sd": statistics.stdev(finals) if len(finals) > 1 else None,
                     "median": statistics.median(finals),
                     "curve_mean": [statistics.fmean(c[i] for c in curves)
                                    for i in range(len(curves[0]))]}
    return out


# ---- notebook 03's tables and figures, drawn from the results files ----

AGENT_LABELS = {"bbb": "BBB (Thompson)", "greedy": "greedy", "eps1": "ε-greedy (1 %)",
                "eps5": "ε-greedy (5 %)"}
# Okabe & Ito's colour-blind-safe palette: blue, bluish green, orange, vermillion
AGENT_COLORS = {"bbb": "#0072B2", "greedy": "#009E73", "eps1": "#E69F00", "eps5": "#D55E00"}
BUFFER_COLORS = {"paper": "#0072B2", "keep_all": "#D55E00"}  # the exploration figure's buffers


def tuning_rows(tuning):
    """Return (header, rows) of the tuning table: one row per setting, regret per tuning seed
    (the choices are marked once the tuning is complete)."""
    chosen = {c["key"] for c in tuning["metrics"]["chosen"].values()
              } if tuning["metrics"]["complete"] else set()
    seeds = tuning["tuning_seeds"]
    header = ["buffer recipe", "prior"] + [f"regret, seed {s}" for s in seeds] + ["mean", "chosen"]
    rows = []
    for t in sorted(tuning["metrics"]["trials"], key=lambda t: (t["recipe"], t["regret_final_mean"])):
        rows.append([RECIPE_LABELS[t["recipe"]], prior_label(t["prior"] if not isinstance(t["prior"], list)
                                              else tuple(t["prior"]))]
                    + [f"{v:,.0f}" for v in t["regret_final_per_seed"]]
                    + [f"{t['regret_final_mean']:,.0f}", "✓" if t["key"] in chosen else ""])
    return header, rows


def headline_rows(reported):
    """Return (header, rows): per buffer and agent, the final regret mean ± sd, median, per seed,
    on how many seeds the agent had the lowest regret, the paper's value read off its Figure 6 and
    the protocol (``reported``: buffer -> results record)."""
    header = ["buffer", "agent", "mean ± sd", "median", "per seed", "lowest on",
              "paper (Figure 6)", "protocol"]
    rows = []
    for buffer, rec in reported.items():
        summary = rec["metrics"]["summary"]
        finals = {name: s["final_per_seed"] for name, s in summary.items()}
        n = len(next(iter(finals.values())))
        best = [min(finals, key=lambda name: finals[name][k]) for k in range(n)]
        for name, s in summary.items():
            sd = "" if s["sd"] is None else f" ± {s['sd']:,.0f}"
            rows.append([BUFFER_LABELS[buffer], AGENT_LABELS[name], f"{s['mean']:,.0f}{sd}",
                         f"{s['median']:,.0f}", ", ".join(f"{v:,.0f}" for v in s["final_per_seed"]),
                         f"{best.count(name)} of {n} seeds", f"~{PAPER_FIGURE6[name][50_000]:,d}",
                         PROTOCOL_NOTES[buffer] + (TUNED_NOTE if name == "bbb" else "")])
    return header, rows


def figure6(reported):
    """The paper's Figure 6 from the reported runs: cumulative regret against steps, one panel
    per buffer; thick lines are the median over seeds (one failed run cannot move it, as it
    moves a mean), thin lines each seed, crosses the paper's values (read off its curves, which
    are not medians over these seeds: the notebook's departures box says so)."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(reported), figsize=(6.2 * len(reported), 4.2), sharey=True,
                             squeeze=False, constrained_layout=True)
    for ax, (buffer, rec) in zip(axes[0], reported.items()):
        every = rec["config"]["record_every"]
        rows = rec["metrics"]["per_seed"]
        for a, name in enumerate(rows[0]["names"]):
            curves = torch.tensor([r["cum_regret"][a] for r in rows])
            steps = [every * (k + 1) for k in range(curves.shape[1])]
            ax.plot(steps, curves.double().quantile(0.5, dim=0), c=AGENT_COLORS[name], lw=2,
                    label=AGENT_LABELS[name])
            for curve in curves:
                ax.plot(steps, curve, c=AGENT_COLORS[name], lw=0.7, alpha=0.45)
            for step, value in PAPER_FIGURE6[name].items():
                ax.plot(step, value, "x", c=AGENT_COLORS[name], ms=9, mew=2)
        ax.set_yscale("log")
        ax.set_xlabel("step (mushrooms shown)")
        seeds = [r["seed"] for r in rows]
        which = (f"{seeds[0]}–{seeds[-1]}" if len(seeds) > 2
                 and seeds == list(range(seeds[0], seeds[-1] + 1)) else ", ".join(map(str, seeds)))
        kl = KL_LABELS[_recipe_of(rec, buffer)]
        kl = "" if "KL" in BUFFER_LABELS[buffer] else f"{kl}; "
        ax.set_title(f"{BUFFER_LABELS[buffer]}\n{kl}reported seeds {which}", fontsize=10)
    axes[0, 0].set_ylabel("cumulative regret")
    axes[0, 0].plot([], [], "k", lw=0.7, alpha=0.45, label="one seed (thick: the median)")
    axes[0, 0].plot([], [], "kx", label="paper (read off its Figure 6)")
    axes[0, 0].legend(fontsize=8)
    return fig


def exploration_rows(reported, last=1000, window=50):
    """Return (header, rows): per buffer and agent, the share of the poisonous mushrooms shown
    that the agent ate over the last ``last`` steps (mean of the recorded windows), per seed. The
    header names the exploration figure's longer moving average (``window`` records), so that a
    share the figure shows near its end is not read as this one."""
    every = next(iter(reported.values()))["config"]["record_every"]
    header = ["buffer", "agent", f"poisonous eaten, last {last:,} steps (the figure: "
              f"{window * every:,}-step average): per seed", "mean"]
    rows = []
    for buffer, rec in reported.items():
        for name, shares in poison_shares(rec, last).items():
            rows.append([BUFFER_LABELS[buffer], AGENT_LABELS[name],
                         ", ".join(f"{v:.1%}" for v in shares), f"{sum(shares) / len(shares):.1%}"])
    return header, rows


# ---- tuning on seeds never reported, then the reported runs (tools/bandit_*.py use these) ----

NB = "03_contextual_bandit"
BUFFER_OF_TUNING_RECIPE = {"paper": "paper", "keep_all": "keep_all", "keep_all_fixed_kl": "keep_all"}
TUNING_RULE = ("lowest cumulative regret of the BBB agent at the last step, mean over the tuning "
               "seeds; per buffer and overall")


def prior_label(prior):
    """Return a readable name of a bandit prior spec."""
    if isinstance(prior, (int, float)):
        return f"Gaussian σp={prior:g}"
    pi, s1, s2 = prior
    return f"scale mixture π={pi:g}, σ1={s1:g}, σ2={s2:.4g}"


def tuning_settings(tuning):
    """Return the tuning grid as a list of {key, prior, recipe} (prior JSON-friendly)."""
    out = []
    for prior in tuning["priors"]:
        for recipe in tuning["recipes"]:
            p = list(prior) if isinstance(prior, (list, tuple)) else prior
            tag = "-".join(f"{v:.4g}" for v in p) if isinstance(p, list) else f"{p:g}"
            out.append({"key": f"{recipe}_prior{tag}", "prior": p, "recipe": recipe})
    return out


def tune_setting(setting, tuning, profile, features, poisonous):
    """Run one tuning setting (the BBB agent alone, the tuning seeds stacked); return its row."""
    from .utils import checkpoints_dir
    prior = tuple(setting["prior"]) if isinstance(setting["prior"], list) else setting["prior"]
    steps = tuning["steps"]
    cfg = BanditConfig(steps=steps, seeds=tuple(tuning["seeds"]), prior=prior,
                       updates_per_step=tuning["updates_per_step"],
                       record_every=tuning["record_every"],
                       agents=(AgentSpec("bbb", bayesian=True),),
                       **buffer_settings(setting["recipe"], steps))
    ck = checkpoints_dir() / NB / "tuning" / f"{profile}_{steps}_{setting['key']}.pt"
    res = run(cfg, features, poisonous, desc=setting["key"], checkpoint=ck)
    every = max(1, 1000 // res.record_every)
    finals = res.cum_regret[0, :, -1].tolist()
    return {**setting, "prior_label": prior_label(prior),
            "buffer": BUFFER_OF_TUNING_RECIPE[setting["recipe"]], "steps": steps,
            "tuning_seeds": list(tuning["seeds"]), "regret_final_per_seed": finals,
            "regret_final_mean": sum(finals) / len(finals),
            "cum_regret_every_1000": [c[every - 1::every].tolist() for c in res.cum_regret[0]],
            "poison_eaten_last_record": res.poison_eaten[0, :, -1].tolist(),
            "mean_sigma_final": res.mean_sigma[:, -1].tolist(),
            "wall_s": round(res.wall_s, 1), "update_ms": round(res.update_ms, 4)}


def choose_tuned(rows):
    """Return the chosen settings: the lowest mean final regret per buffer and overall."""
    best = {}
    for row in rows:
        for group in (row["buffer"], "overall"):
            if group not in best or row["regret_final_mean"] < best[group]["regret_final_mean"]:
                best[group] = row
    return {g: {k: r[k] for k in ("key", "prior", "recipe", "regret_final_mean")}
            for g, r in best.items()}


def save_tuning(rows, tuning, profile, workers=1, wall=None):
    """Write results/03_contextual_bandit/tuning.json from the rows done so far."""
    from .utils import save_results
    order = [s["key"] for s in tuning_settings(tuning)]
    trials = sorted(rows, key=lambda r: order.index(r["key"]))
    save_results(NB, "tuning", config={"grid": {"priors": tuning["priors"],
                                                "recipes": tuning["recipes"]},
                                       "steps": tuning["steps"],
                                       "updates_per_step": tuning["updates_per_step"],
                                       "agents": ["bbb"], "threads_per_run": 1, "workers": workers},
                 metrics={"trials": trials, "chosen": choose_tuned(trials),
                          "complete": len(trials) == len(order)},
                 profile=profile, seed=list(tuning["seeds"]), wall_s=wall,
                 extra={"tuning_seeds": list(tuning["seeds"]),
                        "selected_on": "tuning seeds (never reported)", "rule": TUNING_RULE})


def reported_seed(buffer, seed, profile, tuning_rec, features, poisonous):
    """Run one reported seed (all four agents) with the recipe chosen for ``buffer``; return its
    row for reported_<buffer>.json."""
    from .profiles import get_profile
    from .utils import checkpoints_dir
    prof = get_profile(NB, profile)
    cfg = reported_config(buffer, tuning_rec, prof.steps, seed, prof.updates_per_step,
                          prof.record_every)
    ck = checkpoints_dir() / NB / f"reported_{buffer}_{prof.steps}_s{seed}.pt"
    res = run(cfg, features, poisonous, desc=f"{buffer} seed {seed}", checkpoint=ck)
    return {"seed": seed, "names": res.names, "cum_regret": res.cum_regret[:, 0].tolist(),
            "poison_eaten": res.poison_eaten[:, 0].tolist(),
            "mean_sigma": res.mean_sigma[0].tolist(), "wall_s": round(res.wall_s, 1),
            "update_ms": round(res.update_ms, 4), "prior": cfg.prior,
            "recipe": chosen_recipe(buffer, tuning_rec)[1]}


def save_reported(buffer, rows, profile, tuning_rec, workers=1, wall=None):
    """Write results/03_contextual_bandit/reported_<buffer>.json from the seeds done so far."""
    from .profiles import get_profile
    from .utils import save_results
    prof = get_profile(NB, profile)
    rows = sorted(rows, key=lambda r: r["seed"])
    save_results(NB, f"reported_{buffer}",
                 config={"buffer": buffer, "label": BUFFER_LABELS[buffer], "steps": prof.steps,
                         "updates_per_step": prof.updates_per_step,
                         "record_every": prof.record_every, "prior": rows[0]["prior"],
                         "recipe": rows[0]["recipe"], "threads_per_run": 1, "workers": workers},
                 metrics={"per_seed": rows, "summary": summarise_reported(rows),
                          "complete": sorted(r["seed"] for r in rows) == sorted(prof.seeds)},
                 profile=profile, seed=[r["seed"] for r in rows], wall_s=wall,
                 extra={"tuning_seeds": tuning_rec["tuning_seeds"], "seeds": list(prof.seeds),
                        "selected_on": "tuning seeds (never reported)",
                        "tuning": f"results/{NB}/tuning.json"})


def ensure(profile, buffers=("paper", "keep_all"), train=True, progress_fn=None):
    """Return (tuning record, {buffer: reported record}): read back from results/, or run what
    is missing here, one setting or seed after the other (hours; the tools run them in
    parallel). Without ``train``: what is complete (the tuning may be partial or None)."""

    with one_thread():  # small batched matmuls: a second thread mostly waits
        return _ensure(profile, buffers, train, progress_fn)


def _ensure(profile, buffers, train, progress_fn):

    from .data import load_mushroom
    from .profiles import get_profile
    from .utils import load_results, results_dir
    prof = get_profile(NB, profile)
    path = results_dir() / NB / "tuning.json"
    features = poisonous = None
    rec = json.loads(path.read_text()) if path.exists() else None
    if rec is None or not rec["metrics"]["complete"]:
        if not train:  # what is there, and no reported run before the tuning is complete
            return rec, {}
        features, poisonous = load_mushroom()
        rows = {r["key"]: r for r in (rec["metrics"]["trials"] if rec else [])}
        for setting in tuning_settings(prof.tuning):
            if setting["key"] not in rows:
                if progress_fn:
                    progress_fn(f"tuning {setting['key']}")
                rows[setting["key"]] = tune_setting(setting, prof.tuning, profile, features,
                                                    poisonous)
                save_tuning(list(rows.values()), prof.tuning, profile)
        rec = load_results(NB, "tuning")
    reported = {}
    for buffer in buffers:
        p = results_dir() / NB / f"reported_{buffer}.json"
        old = json.loads(p.read_text()) if p.exists() else None
        rows = {r["seed"]: r for r in (old["metrics"]["per_seed"] if old else [])}
        missing = [s for s in prof.seeds if s not in rows]
        if missing and not train:
            continue
        for seed in missing:
            if features is None:
                features, poisonous = load_mushroom()
            if progress_fn:
                progress_fn(f"{buffer} seed {seed}")
            rows[seed] = reported_seed(buffer, seed, profile, rec, features, poisonous)
            save_reported(buffer, list(rows.values()), profile, rec)
        reported[buffer] = load_results(NB, f"reported_{buffer}")
    return rec, reported


# ---- notebook 03's readings, rendered from the results files ----

def _seeds_text(seeds):
    seeds = list(seeds)
    if not seeds:
        return "no seed"
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"seeds {seeds[0]}–{seeds[-1]}"
    return ("seed " if len(seeds) == 1 else "seeds ") + ", ".join(map(str, seeds[:-1])) + \
        (" and " if len(seeds) > 1 else "") + str(seeds[-1])


# ---- notebook 03's readings that were typed before: sections 2-4 and the takeaways ----

SHORT_BUFFER = {"paper": "the paper's buffer", "keep_all": "every tuple kept"}


def _on_seeds(k, n):
    """'on each of the 4 seeds', 'on 3 of 4 seeds', 'on its one seed'."""
    if n == 1:
        return "on its one seed" if k == 1 else "on 0 of 1 seed"
    return f"on each of the {n} seeds" if k == n else f"on {k} of {n} seeds"


def _duration(seconds, cpu=False):
    """'3.3 CPU-hours' (``cpu``) or '3.3 hours', '12 minutes', '4 s'."""
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} {'CPU-hours' if cpu else 'hours'}"
    return f"{seconds / 60:.0f} minutes" if seconds >= 60 else f"{seconds:.0f} s"


def _minutes_range(lo, hi):
    """'44–95 minutes', or seconds when even the longest took under a minute."""
    if hi < 60:
        return f"{_span(lo, hi)} s"
    return f"{_span(lo / 60, hi / 60)} minutes"


def _span(lo, hi):
    """'1,085–5,170', or one number when both ends are the same."""
    return f"{lo:,.0f}" if f"{lo:,.0f}" == f"{hi:,.0f}" else f"{lo:,.0f}–{hi:,.0f}"


def _is_gaussian(prior):
    return isinstance(prior, (int, float))


def poison_shares(rec, last=1000):
    """Return {agent: [share of the poisonous mushrooms shown that it ate over the last ``last``
    steps, per seed]} of one reported record (the exploration table's numbers)."""
    per_seed = rec["metrics"]["per_seed"]
    k = min(max(1, last // rec["config"]["record_every"]), len(per_seed[0]["poison_eaten"][0]))
    return {name: [sum(r["poison_eaten"][a][-k:]) / k for r in per_seed]
            for a, name in enumerate(per_seed[0]["names"])}


def bbb_orderings(rec, alpha=0.05):
    """The claims "BBB's final regret < each other agent's" of one reported record, paired by
    seed, as one family: two-sided paired t-tests, Holm over the family
    (``helpers.stats.ordering_family``, the verdicts of the README's table). Returns
    {agent: result} with the seed count ``lower_on`` (BBB strictly lower) added."""
    from . import stats
    s = rec["metrics"]["summary"]
    bbb = s["bbb"]["final_per_seed"]
    out = stats.ordering_family({a: (bbb, v["final_per_seed"]) for a, v in s.items()
                                 if a != "bbb"}, alpha=alpha)
    for a, res in out.items():
        res["lower_on"] = sum(x < y for x, y in zip(bbb, s[a]["final_per_seed"]))
        res["n"] = len(bbb)
    return out


def runtime_text(tuning, reported):
    """Return what the cold runs took here (Markdown), from the results files' ``wall_s``."""
    trials = tuning["metrics"]["trials"]
    cpu = _duration(sum(t["wall_s"] for t in trials), cpu=True)
    cfg = tuning["config"]
    out = [f"**What it cost.** Cold, the tuning took {cpu} ({len(trials)} settings × "
           f"{cfg['steps']:,} steps, one thread each, {cfg.get('workers', 1)} at a time)"]
    runs = [r["wall_s"] for rec in reported.values() for r in rec["metrics"]["per_seed"]]
    if runs:
        workers = sorted({rec["config"].get("workers", 1) for rec in reported.values()})
        n_seeds = sorted({len(rec["seeds"]) for rec in reported.values()})
        steps = next(iter(reported.values()))["config"]["steps"]
        out.append(f"; each of the {len(runs)} reported runs ({len(reported)} buffer"
                   f"{'s' if len(reported) > 1 else ''} × {'–'.join(map(str, n_seeds))} "
                   f"seed{'s' if max(n_seeds) > 1 else ''} × "
                   f"{steps:,} steps, all four agents) took {_minutes_range(min(runs), max(runs))}"
                   f" on one thread, {'–'.join(map(str, workers))} at a time (`wall_s` in the "
                   "results files)")
    return "".join(out) + "."


# ---- the readings of sections 2-4 and the takeaways, one place each ----

# how each buffer recipe divides the KL (the second thing a recipe changes besides the buffer)
KL_LABELS = {"paper": "KL / 4,096", "keep_all": "KL / max(4,096, tuples stored)",
             "keep_all_fixed_kl": "KL / 4,096"}


from .report import cap as _cap  # noqa: E402


def _p(p):
    """A p-value as the readings print it: two significant digits."""
    return f"{p:.2g}"


def _recipe_of(rec, buffer):
    """The buffer recipe a reported record ran (its config's 'recipe'; else the buffer's own)."""
    return rec.get("config", {}).get("recipe") or buffer


def _failed_runs(reported, last=1000):
    """Return the runs that alone set an agent's mean: per buffer and agent (3 seeds or more), the
    seed whose final regret exceeds the sum of the other seeds'. Each is a dict: buffer, agent,
    seed, value, rest (the other seeds' finals), ``no_poison`` (it ate no poisonous mushroom over
    the last ``last`` steps; None when the record lacks the shares), ``not_recovered`` (its regret
    grows no slower over those steps than over the whole run; None without curves) and
    ``flips_bbb`` (its mean is above BBB's, but over the other seeds its regret is below BBB's)."""
    out = []
    for buffer, rec in reported.items():
        s = rec["metrics"]["summary"]
        per_seed = rec["metrics"].get("per_seed") or []
        shares = (poison_shares(rec, last)
                  if per_seed and all("poison_eaten" in r for r in per_seed) else {})
        bbb = s.get("bbb", {}).get("final_per_seed")
        for a, v in s.items():
            f = v["final_per_seed"]
            if len(f) < 3:
                continue
            i = max(range(len(f)), key=f.__getitem__)
            rest = f[:i] + f[i + 1:]
            if f[i] <= sum(rest):
                continue
            not_recovered = None
            row = per_seed[i] if i < len(per_seed) else {}
            if "cum_regret" in row:
                curve = row["cum_regret"][row["names"].index(a)]
                k = min(max(1, last // rec["config"]["record_every"]), len(curve) - 1)
                if k >= 1:
                    not_recovered = (curve[-1] - curve[-1 - k]) / k >= curve[-1] / len(curve)
            flips = (a != "bbb" and bbb is not None and v["mean"] > s["bbb"]["mean"]
                     and sum(rest) < sum(bbb[:i] + bbb[i + 1:]))
            out.append({"buffer": buffer, "agent": a, "seed": rec["seeds"][i], "value": f[i],
                        "rest": rest, "no_poison": shares[a][i] == 0 if a in shares else None,
                        "not_recovered": not_recovered, "flips_bbb": flips})
    return out


def _where(buffers, reported):
    """'under both buffers' when ``buffers`` are all of ``reported``'s two, else 'with X and Y'."""
    if len(buffers) == len(reported) == 2:
        return "under both buffers"
    return "with " + " and ".join(SHORT_BUFFER[b] for b in buffers)


def tuning_text(tuning):
    """Return notebook 03's reading of the tuning table (Markdown bullets) from a complete tuning
    record: the best prior per buffer recipe, the scale mixture against the best Gaussian seed by
    seed, the gap between the tuning seeds, and what follows for the choice (a rule, not a test).
    The recipes are compared in ``exploration_text``, where the question arises."""
    from .profiles import MNIST_MIXTURE
    seeds, steps = tuning["tuning_seeds"], tuning["config"]["steps"]
    by_recipe = {}
    for t in tuning["metrics"]["trials"]:
        by_recipe.setdefault(t["recipe"], []).append(t)
    best = {r: min(ts, key=lambda t: t["regret_final_mean"]) for r, ts in by_recipe.items()}
    labels = {prior_label(best[r]["prior"]) for r in best}
    out = [f"**What it shows** (BBB alone, {steps:,} steps, tuning {_seeds_text(seeds)}):\n"]
    if len(labels) == 1:
        others = [t for r, ts in by_recipe.items() for t in ts if t is not best[r]]
        worse = all(t["regret_final_mean"] > best[t["recipe"]]["regret_final_mean"]
                    for t in others)
        where = f"each of the {len(best)} recipes" if len(best) > 1 else "the one recipe"
        out.append(f"- *Prior.* The {labels.pop()} prior has the lowest mean regret under {where}"
                   + (f"; every other prior has a {'higher' if worse else 'no lower'} mean."
                      if others else "."))
    else:
        out.append("- *Prior.* The prior with the lowest mean differs between the recipes: "
                   + "; ".join(f"{prior_label(best[r]['prior'])} for {RECIPE_LABELS[r]} "
                               f"({best[r]['regret_final_mean']:,.0f})" for r in best) + ".")
    diffs, gaps, mix = [], [], None
    for r, ts in by_recipe.items():
        gauss = [t for t in ts if _is_gaussian(t["prior"])]
        for m in (t for t in ts if not _is_gaussian(t["prior"])):
            if gauss:
                g = min(gauss, key=lambda t: t["regret_final_mean"])
                mix = m["prior"]
                diffs += [x - y for x, y in zip(m["regret_final_per_seed"],
                                                g["regret_final_per_seed"])]
                gaps.append(max(g["regret_final_per_seed"]) - min(g["regret_final_per_seed"]))
    below = None
    if diffs:
        k, n = sum(d > 0 for d in diffs), len(diffs)
        name = "The scale mixture" + (" (notebook 01's prior)" if all(
            math.isclose(a, b) for a, b in zip(mix, MNIST_MIXTURE)) else "")
        pairs = (f"each of the {n} pairs of recipe and tuning seed" if n > 1
                 else "the one pair of recipe and tuning seed")
        span = _span(min(abs(d) for d in diffs), max(abs(d) for d in diffs))
        if k in (0, n):
            out.append(f"- *Scale mixture.* {name} is {'better' if k == 0 else 'worse'} than the "
                       f"best Gaussian prior of the same recipe on {pairs}, by {span}.")
        else:
            out.append(f"- *Scale mixture.* {name} is worse than the best Gaussian prior of the "
                       f"same recipe on {k} of {n} pairs of recipe and tuning seed (differences "
                       f"of {span} either way).")
        if len(seeds) > 1:
            below = max(abs(d) for d in diffs) < min(gaps)
            out.append(f"- *Seed noise.* The best Gaussian prior's regret differs between the "
                       f"tuning seeds by {_span(min(gaps), max(gaps))} (per recipe): "
                       + ("more than any of those differences." if below
                          else "less than some of those differences."))
    rule = (f"the lowest mean over {len(seeds)} tuning seeds" if len(seeds) > 1
            else "the lowest regret on 1 tuning seed")
    if len(seeds) < 2:
        follows = ": 1 tuning seed gives no measure of how noisy it is."
    elif below:
        follows = (". The margin between the best Gaussian prior and the scale mixture is smaller "
                   "than the gap between the tuning seeds, so that part of the choice is noisy: "
                   "other tuning seeds could choose otherwise.")
    else:
        follows = f": {len(seeds)} tuning seeds cannot say how often other seeds would agree."
    out.append(f"- *What follows.* The prior is chosen by a rule ({rule}), not by a test"
               + follows)
    return "\n".join(out)


def figure6_text(reported, last=1000):
    """Return notebook 03's reading of Figure 6 and the final-regret table against the paper
    (Markdown bullets): per buffer, BBB's mean with its t-interval and how many seeds end below
    the paper's value (a description: no test of it), BBB's rank seed by seed,
    a run that alone sets an agent's mean (read once, here), the two recipes seed by seed (both
    of their changes named), and the epsilon-greedy agents against the paper's values."""
    from . import stats
    paper = {k: v[50_000] for k, v in PAPER_FIGURE6.items()}
    out = ["**What it shows: against the paper's Figure 6.**\n"]
    defined = False
    for buffer, rec in reported.items():
        s, seeds = rec["metrics"]["summary"], rec["seeds"]
        bbb = s["bbb"]["final_per_seed"]
        n = len(bbb)
        m = stats.mean_ci(bbb)
        ci = ""
        if m["ci"] is not None:
            what = ("95 % t-interval of the mean, the usual confidence interval for a mean of "
                    "few seeds" if not defined else "95 % t-interval")
            defined = True
            ci = f" ({what}: {m['ci'][0]:,.0f}–{m['ci'][1]:,.0f})"
        below = sum(x < paper["bbb"] for x in bbb)
        finals = {a: v["final_per_seed"] for a, v in s.items()}
        lowest = sum(min(finals, key=lambda a: finals[a][k]) == "bbb" for k in range(n))
        g_below = [sd for sd, g, b in zip(seeds, finals.get("greedy", []), bbb) if g < b]
        text = (f"- *{_cap(SHORT_BUFFER[buffer])} ({KL_LABELS[_recipe_of(rec, buffer)]}).* "
                f"BBB's final regret: mean {m['mean']:,.0f} against about {paper['bbb']:,} in "
                f"the paper{ci}. It ends below the paper's value {_on_seeds(below, n)}. BBB is "
                "the lowest agent "
                + (f"on {lowest} of {n} seeds" if n > 1 else _on_seeds(lowest, n)))
        if g_below:
            text += f"; plain greedy ends *below* BBB on {_seeds_text(g_below)}"
        out.append(text + ".")
    by_agent = {}
    for f in _failed_runs(reported, last):
        by_agent.setdefault(f["agent"], []).append(f)
    for a, fs in by_agent.items():
        label = _cap(AGENT_LABELS[a])
        if len({(f["seed"], f"{f['value']:,.0f}") for f in fs}) == 1:
            text = (f"{label}'s seed {fs[0]['seed']} ends at {fs[0]['value']:,.0f} "
                    f"{_where([f['buffer'] for f in fs], reported)}")
        else:
            text = f"{label} ends at " + " and ".join(
                f"{f['value']:,.0f} on seed {f['seed']} with {SHORT_BUFFER[f['buffer']]}"
                for f in fs)
        if all(f["no_poison"] for f in fs):
            per = (f" (5 each: about {fs[0]['value'] / 5:,.0f} of them)" if len(fs) == 1
                   or len({f"{f['value']:,.0f}" for f in fs}) == 1 else " (5 each)")
            text += f": the regret of an agent that passes on every edible mushroom{per}."
        else:
            text += ", far above its other seeds (" + "; ".join(
                f"{_span(min(f['rest']), max(f['rest']))} with {SHORT_BUFFER[f['buffer']]}"
                for f in fs) + ")."
        stuck = [f for f in fs if f["not_recovered"]]
        if stuck:
            who = ("It has" if len(stuck) == len(fs) else " and ".join(
                f"Seed {f['seed']} with {SHORT_BUFFER[f['buffer']]}" for f in stuck) + " has")
            text += (f" {who} not recovered by the end: its regret grows no slower over the last "
                     f"{last:,} steps than over the whole run.")
        flips = [f["buffer"] for f in fs if f["flips_bbb"]]
        if flips:
            text += (f" This one run puts {AGENT_LABELS[a]}'s mean above BBB's "
                     f"{_where(flips, reported)}.")
        out.append(f"- *One run sets {AGENT_LABELS[a]}'s mean.* {text}")
    if "keep_all" in reported and "paper" in reported:
        old = dict(zip(reported["paper"]["seeds"],
                       reported["paper"]["metrics"]["summary"]["bbb"]["final_per_seed"]))
        new = dict(zip(reported["keep_all"]["seeds"],
                       reported["keep_all"]["metrics"]["summary"]["bbb"]["final_per_seed"]))
        pairs = [(old[sd], new[sd]) for sd in old if sd in new]
        d = [y - x for x, y in pairs]
        k, n = sum(x < 0 for x in d), len(d)
        halved = sum(y < x / 2 for x, y in pairs)
        span = _span(min(abs(x) for x in d), max(abs(x) for x in d))
        if k == n:
            how = f"lower {_on_seeds(n, n)} (by {span})"
        elif all(x > 0 for x in d):
            how = f"higher {_on_seeds(n, n)} (by {span})"
        elif all(x == 0 for x in d):
            how = f"the same {_on_seeds(n, n)}"
        else:
            how = f"lower {_on_seeds(k, n)} (changes " + ", ".join(f"{x:+,.0f}" for x in d) + ")"
        if halved:
            how += f", and by more than half on {halved} of {n} seeds"
        kl_old = KL_LABELS[_recipe_of(reported["paper"], "paper")]
        kl_new = KL_LABELS[_recipe_of(reported["keep_all"], "keep_all")]
        change = ("every tuple kept" if kl_new == kl_old
                  else f"every tuple kept and the KL divided by {kl_new.split(' / ', 1)[1]}")
        out.append(f"- *The two recipes, seed by seed.* Against the paper's buffer, BBB's regret "
                   f"with {change} is {how}. This is a count, not a verdict: no test compares the "
                   "recipes.")
    sides, above = [], []
    for agent in ("eps1", "eps5"):
        for buffer, rec in reported.items():
            s = rec["metrics"]["summary"][agent]
            sides.append(s["mean"] < paper[agent])
            seeds = [sd for sd, v in zip(rec["seeds"], s["final_per_seed"]) if v > paper[agent]]
            if seeds:
                above.append(f"{AGENT_LABELS[agent]} on {_seeds_text(seeds)} with "
                             f"{SHORT_BUFFER[buffer]}")
    word = "below" if all(sides) else "above" if not any(sides) else "on both sides of"
    where = _where(list(reported), reported)
    out.append(f"- *The ε-greedy agents.* The mean final regrets of {AGENT_LABELS['eps1']} and "
               f"{AGENT_LABELS['eps5']} are {word} the paper's values {where}."
               + (f" Above them: {'; '.join(above)}." if above else ""))
    return "\n".join(out)


def headline_text(reported):
    """Return notebook 03's reading of the paper's orderings (Markdown): the test
    (``bbb_orderings``; chosen after the runs had been seen, which the text says), its Holm
    p-values per buffer and agent with BBB's mean difference, its 95 % interval and the paper's
    difference (``_difference_words``), why BBB lower on every seed can still be 'not resolved',
    and the medians (which one extreme run cannot move)."""
    verdicts = {b: bbb_orderings(rec) for b, rec in reported.items()}
    any_res = next(iter(next(iter(verdicts.values())).values()))
    failed = _failed_runs(reported)
    whys = []
    out = ["**What it shows: the paper's orderings, tested.** The paper finds BBB's regret below "
           "each other agent's. Each such claim is tested as below; the test was chosen after "
           "the runs had been seen, so read its verdicts as post hoc:\n",
           "- a two-sided *paired* t-test over the seeds: it compares BBB's and the other "
           "agent's final regret on the same seed;",
           f"- Holm's correction: it raises the p-values to allow for BBB's "
           f"{any_res['family_size']} comparisons within a buffer;",
           f"- α = {any_res['alpha']:g}. A claim *holds* when Holm's p is below α and BBB is "
           "lower in the mean, is *reversed* when p is below α and BBB is higher, and is *not "
           "resolved* when p is not below α.\n",
           "The verdicts, per buffer:\n"]
    for buffer, res in verdicts.items():
        s = reported[buffer]["metrics"]["summary"]
        seeds = reported[buffer]["seeds"]
        parts, why = [], []
        for a, r in res.items():
            n = r["n"]
            p = (f"Holm p = {_p(r['p_holm'])}" if r["p_holm"] is not None
                 else f"no test at {n} seed{'s' if n > 1 else ''}")
            bad = [f for f in failed if f["buffer"] == buffer and f["agent"] in (a, "bbb")]
            sign = r.get("sign_test") or {}
            if r["verdict"].startswith("not resolved") and bad and sign.get("p") is not None:
                f = bad[0]
                who = "BBB" if f["agent"] == "bbb" else _agent_name(a)
                parts.append(
                    f"  - below {AGENT_LABELS[a]}: {r['verdict']}. BBB lower "
                    f"{_on_seeds(r['lower_on'], n)} (exact sign test, which counts only directions: "
                    f"p = {sign['p']:.3g}); BBB's median {s['bbb']['median']:,.0f} against "
                    f"{AGENT_LABELS[a]}'s {s[a]['median']:,.0f}. The t-test "
                    f"is uninformative here: one failed run of {who} (seed {f['seed']}) sets the "
                    f"differences ({p}{_difference_words(r, a, '; ')})")
                continue
            count = (f"; BBB lower {_on_seeds(r['lower_on'], n)}"
                     if r["verdict"].startswith("not resolved") else "")
            count += _difference_words(r, a, "; ")
            parts.append(f"  - below {AGENT_LABELS[a]}: {r['verdict']} ({p}{count})")
            if r["verdict"].startswith("not resolved") and n > 1 and r["lower_on"] == n:
                d = [x - y for x, y in zip(s["bbb"]["final_per_seed"], s[a]["final_per_seed"])]
                i = max(range(n), key=lambda j: abs(d[j]))
                rest = d[:i] + d[i + 1:]
                gap = [abs(x) for x in rest]
                if abs(d[i]) > sum(gap):
                    size = (f"the gap on seed {seeds[i]} ({abs(d[i]):,.0f}) dwarfs those on the "
                            f"others ({_span(min(gap), max(gap))})")
                else:
                    size = (f"the gaps ({_span(min(map(abs, d)), max(map(abs, d)))}) vary too "
                            f"much for {n} seeds")
                sign = r["sign_test"]["p"] if r.get("sign_test") else None
                why.append(f"- *Lower on every seed, yet not resolved.* With "
                           f"{SHORT_BUFFER[buffer]}, BBB is lower than {AGENT_LABELS[a]} "
                           f"{_on_seeds(n, n)}. The t-test weighs the sizes of the differences, "
                           f"and {size}."
                           + (f" The exact sign test counts only directions; it gives p = "
                              f"{sign:.3g} for {n} of {n} seeds, not below α either."
                              if sign is not None and sign >= any_res["alpha"] else ""))
        out.append(f"- *{_cap(SHORT_BUFFER[buffer])}.*\n" + ";\n".join(parts) + ".")
        whys.extend(why)
    out.append("\nBeside the verdicts:\n")
    out.extend(whys)
    failed = {(f["buffer"], f["agent"]) for f in failed}
    meds = []
    for buffer, rec in reported.items():
        s = rec["metrics"]["summary"]
        lm = min(s, key=lambda a: s[a]["median"])
        lmean = min(s, key=lambda a: s[a]["mean"])
        if lm == "bbb":
            t = (f"With {SHORT_BUFFER[buffer]}, BBB's median is the lowest "
                 f"({s['bbb']['median']:,.0f})")
        else:
            t = (f"With {SHORT_BUFFER[buffer]}, {AGENT_LABELS[lm]}'s median is the lowest "
                 f"({s[lm]['median']:,.0f}, against BBB's {s['bbb']['median']:,.0f})")
        if lmean != lm:
            who = "BBB" if lmean == "bbb" else AGENT_LABELS[lmean]
            t += (f": {who} has the lowest mean only because one run sets "
                  f"{AGENT_LABELS[lm]}'s (see the previous list)" if (buffer, lm) in failed
                  else f", but the lowest mean is {who}'s ({s[lmean]['mean']:,.0f})")
        meds.append(t + ".")
    out.append("- *Medians*, which one extreme run cannot move. " + " ".join(meds))
    return "\n".join(out)


def exploration_text(reported, tuning, last=1000):
    """Return notebook 03's reading of the exploration figure's left panel for BBB (Markdown
    bullets), its numbers from ``reported``, and of what the tuning says about the two changes a
    recipe makes (the buffer, the KL scaling): each recipe's best mean regret (``tuning``), listed
    here once, and per tuning seed whether each change lowered it."""
    shares = {}
    for buffer, rec in reported.items():
        for name, v in poison_shares(rec, last).items():
            shares[buffer, name] = v
    out = ["**What it shows.**\n"]
    if ("keep_all", "bbb") in shares and ("paper", "bbb") in shares:
        ka, pa = shares["keep_all", "bbb"], shares["paper", "bbb"]
        greedy = shares.get(("paper", "greedy"), [])
        k_mean = sum(ka) / len(ka)
        text = (f"- *BBB, left panel.* With every tuple kept, BBB "
                f"{'almost stops eating' if k_mean < 0.005 else 'still eats'} poisonous "
                f"mushrooms ({k_mean:.1%} over the last {last:,} steps, mean of the seeds). With "
                f"the paper's buffer it eats {_span_pct(pa)} of them over the same steps"
                + (" (range over the seeds)" if "–" in _span_pct(pa) else ""))
        if greedy:
            if max(greedy) == 0:
                text += (", while plain greedy eats none: each one costs BBB 15 regret that "
                         "greedy does not pay")
            else:
                text += f", and plain greedy {sum(greedy) / len(greedy):.1%}"
        out.append(text + ".")
    if tuning and tuning["metrics"].get("trials"):
        best = {}
        for t in tuning["metrics"]["trials"]:
            r = t["recipe"]
            if r not in best or t["regret_final_mean"] < best[r]["regret_final_mean"]:
                best[r] = t
        seeds, steps = tuning["tuning_seeds"], tuning["config"]["steps"]
        chosen = _recipe_of(reported["keep_all"], "keep_all") if "keep_all" in reported else None
        two = chosen is not None and KL_LABELS[chosen] != KL_LABELS["paper"]
        head = ("- *Buffer or KL scaling?* The two recipes differ in both (section 3)." if two
                else "- *The recipes in the tuning.*")
        order = ("paper", "keep_all_fixed_kl", "keep_all")
        full = (all(r in best for r in order)
                and all("regret_final_per_seed" in best[r] and "prior" in best[r] for r in order))
        if full:
            per = {r: best[r]["regret_final_per_seed"] for r in order}
            n = len(seeds)
            kb = sum(y < x for x, y in zip(per["paper"], per["keep_all_fixed_kl"]))
            kk = sum(y < x for x, y in zip(per["keep_all_fixed_kl"], per["keep_all"]))
            priors = {prior_label(best[r]["prior"]) for r in order}
            prior = (f"the {priors.pop()} prior in each" if len(priors) == 1
                     else "the best prior of each")
            mean = {r: f"{best[r]['regret_final_mean']:,.0f}" for r in order}
            tseeds = f"{n} tuning seed{'s' if n > 1 else ''}"
            out.append(f"{head} The tuning also ran the recipe between them (every tuple, "
                       f"{KL_LABELS['keep_all_fixed_kl']}). BBB's mean regret per recipe "
                       f"({steps:,} steps, {tseeds}, {prior}; tuning table):\n"
                       f"  - {RECIPE_LABELS['paper']}: {mean['paper']};\n"
                       f"  - {RECIPE_LABELS['keep_all_fixed_kl']}: {mean['keep_all_fixed_kl']}, "
                       f"lower than the line above on {kb} of {n} tuning seeds;\n"
                       f"  - {RECIPE_LABELS['keep_all']}: {mean['keep_all']}, lower than the line "
                       f"above on {kk} of {n} tuning seeds.\n"
                       f"- *Which change matters is open.* With {tseeds}, this is no test of "
                       "which change matters more.")
        else:
            parts = "; ".join(f"{RECIPE_LABELS[r]}: {best[r]['regret_final_mean']:,.0f}"
                              for r in RECIPE_LABELS if r in best)
            out.append(f"{head} The tuning cannot tell which matters more (best mean regret per "
                       f"recipe: {parts}; {len(seeds)} tuning seed{'s' if len(seeds) > 1 else ''}, "
                       f"{steps:,} steps).")
    return "\n".join(out)


def _span_pct(values):
    lo, hi = f"{min(values):.1%}", f"{max(values):.1%}"
    return lo if lo == hi else f"{lo}–{hi}"


def epsilon_greedy_text(reported, last=1000):
    """Return the reading of the epsilon-greedy agents' poisonous share (a Markdown bullet): over
    the last ``last`` steps, per seed, against epsilon / 2 (what random actions alone eat)."""
    eps = {a.name: a.epsilon for a in PAPER_AGENTS if not a.bayesian and a.epsilon > 0}
    floors = ", ".join(f"{e / 2:.1%} for {AGENT_LABELS[a]}" for a, e in eps.items())
    k, n = 0, 0
    for buffer, rec in reported.items():
        shares = poison_shares(rec, last)
        for a, e in eps.items():
            k += sum(v > e / 2 for v in shares.get(a, []))
            n += len(shares.get(a, []))
    names = " and ".join(AGENT_LABELS[a] for a in eps)
    text = (f"- *The ε-greedy agents, left panel.* A random action eats with probability ½, so "
            f"random actions alone eat ε/2 of the poisonous mushrooms shown: {floors}. Over the "
            f"last {last:,} steps, ")
    where = _where(list(reported), reported)
    if k == n:
        return text + (f"{names} ate more than that on every seed {where} (exploration table), "
                       "so their networks eat some too.")
    if k == 0:
        return text + (f"{names} ate no more than that on any seed (exploration table): their "
                       "networks pass the poisonous ones.")
    return text + (f"{names} ate more than that on {k} of {n} runs (agent, buffer, seed; "
                   "exploration table): their networks eat some on those.")


def posterior_sigma_text(reported, near=0.05):
    """Return the reading of BBB's mean posterior sigma (a Markdown bullet): its range and last
    value per buffer (mean curve of the seeds) against a Gaussian prior's sigma, the distance
    computed from the values as printed (4 decimals); it 'barely moves' only when it ends within
    ``near`` (relative) of the prior's."""
    prior = next(iter(reported.values()))["config"]["prior"]
    parts, lo, hi, ends = [], [], [], []
    for buffer, rec in reported.items():
        rows = rec["metrics"]["per_seed"]
        curve = [sum(c) / len(c) for c in zip(*(r["mean_sigma"] for r in rows))]
        lo.append(round(min(curve), 4))
        hi.append(round(max(curve), 4))
        ends.append(round(curve[-1], 4))
        parts.append(f"  - {SHORT_BUFFER[buffer]}: between {min(curve):.4f} and {max(curve):.4f}, "
                     f"{curve[-1]:.4f} at the end")
    where = ("under both buffers" if len(reported) == 2
             else f"with {SHORT_BUFFER[next(iter(reported))]}")
    numbers = ":\n" + ";\n".join(parts) + "."
    head = ("- *BBB's posterior, right panel.* The mean posterior σ over all weights ("
            + (f"mean of the {len(rows)} seeds)" if len(rows) > 1 else "its one seed)"))
    if not _is_gaussian(prior):
        return (f"{head} cannot be compared with the prior's: the prior is a scale mixture, "
                f"with no single σ{numbers}")
    side = ("stays below" if max(hi) < prior else "stays above" if min(lo) > prior
            else "crosses")
    off = max(abs(e - prior) / prior for e in ends)
    text = f"{head} {side} the prior's σp = {prior:g} {where}"
    if off <= near:
        return (text + f" and ends within {off:.1%} (relative) of it{numbers}\n- *What that "
                "means.* An average over all weights that barely moves says little about how "
                "sure the network is of a given mushroom; the left panel shows the exploration "
                "itself.")
    return text + f" and ends {off:.1%} (relative) away from it{numbers}"


def takeaways_text(reported, last=1000):
    """Return the takeaways that assert a measured outcome (Markdown bullets): the orderings'
    verdicts across the buffers (agents with the same verdicts together; seed counts where not
    resolved), BBB against the paper's value described (not tested), the two recipes (both
    changes named), the lesson of a run that alone sets a mean, and, where BBB's mean posterior
    sigma ends near a Gaussian prior's, that caveat (``_sigma_caveat``). A verdict in BBB's
    favour carries the caveat that only BBB was tuned (its tuning seeds from the records)."""
    out = []
    verdicts = {b: bbb_orderings(rec) for b, rec in reported.items()}
    tuned = sorted({sd for rec in reported.values() for sd in rec.get("tuning_seeds") or []})
    caveat = (" The agents were not tuned alike: BBB on "
              + (f"tuning {_seeds_text(tuned)}" if tuned else "its tuning seeds")
              + ", the greedy agents not at all.")
    groups = {}
    for a in next(iter(verdicts.values())):
        pattern = tuple((b, v[a]["verdict"]) for b, v in verdicts.items() if a in v)
        unresolved = any(w.startswith("not resolved") for _, w in pattern)
        groups.setdefault((pattern, a if unresolved else None), []).append(a)
    for (pattern, _), agents in groups.items():
        words = {w for _, w in pattern}
        if len(words) == 1:
            head = f"{words.pop()} {_where([b for b, _ in pattern], reported)}"
        else:
            head = "; ".join(f"{w} with {SHORT_BUFFER[b]}" for b, w in pattern)
        tail = (", as in the paper" if all(w == "holds" for _, w in pattern) else
                ", the reverse of the paper" if all(w == "reversed" for _, w in pattern) else "")
        if any(w.startswith("not resolved") for _, w in pattern):
            a = agents[0]
            tail += " (BBB lower " + ", ".join(
                f"{_on_seeds(verdicts[b][a]['lower_on'], verdicts[b][a]['n'])} with "
                f"{SHORT_BUFFER[b]}" for b, _ in pattern) + ")"
        labels = [AGENT_LABELS[a] for a in agents]
        names = "below " + (labels[0] if len(labels) == 1
                            else ", ".join(labels[:-1]) + " and " + labels[-1])
        out.append(f"- BBB {names}: {head}{tail}."
                   + (caveat if any(w == "holds" for _, w in pattern) else ""))
    ref = PAPER_FIGURE6["bbb"][50_000]
    cmp = []
    for b, rec in reported.items():
        f = rec["metrics"]["summary"]["bbb"]["final_per_seed"]
        below = sum(x < ref for x in f)
        cmp.append(f"{sum(f) / len(f):,.0f} with {SHORT_BUFFER[b]} (below {ref:,} "
                   f"{_on_seeds(below, len(f))})")
    out.append(f"- BBB's final regret against the paper's ~{ref:,} is described, not tested. "
               f"Its mean is {' and '.join(cmp)}.")
    if "paper" in reported and "keep_all" in reported:
        old = reported["paper"]["metrics"]["summary"]["bbb"]["final_per_seed"]
        new = reported["keep_all"]["metrics"]["summary"]["bbb"]["final_per_seed"]
        n = len(new)
        k = sum(y < x for x, y in zip(old, new))
        pa = poison_shares(reported["paper"], last)["bbb"]
        ka = poison_shares(reported["keep_all"], last)["bbb"]
        fewer = sum(x < y for x, y in zip(ka, pa))
        kl_new = KL_LABELS[_recipe_of(reported["keep_all"], "keep_all")]
        two = kl_new != KL_LABELS[_recipe_of(reported["paper"], "paper")]
        change = ("Keeping every tuple" if not two else
                  f"Keeping every tuple and dividing the KL by {kl_new.split(' / ', 1)[1]}")
        regret = (f"lowered BBB's regret {_on_seeds(k, n)}" if k else
                  "lowered BBB's regret on no seed")
        eaten = (f"With it, BBB also ate fewer poisonous mushrooms over the last {last:,} steps "
                 f"{_on_seeds(fewer, n)}" if fewer else
                 f"With it, BBB ate no fewer poisonous mushrooms over the last {last:,} steps on "
                 "any seed")
        out.append(f"- {change} {regret}. {eaten}. These are counts, not verdicts "
                   "(no test compares the recipes)"
                   + ("; and the two changes came together, so which one matters is open."
                      if two else "."))
    by_agent = {}
    for f in _failed_runs(reported, last):
        by_agent.setdefault(f["agent"], []).append(f)
    for a, fs in by_agent.items():
        if len({f["seed"] for f in fs}) == 1:
            which = (f"seed {fs[0]['seed']} sets {AGENT_LABELS[a]}'s mean "
                     f"{_where([f['buffer'] for f in fs], reported)}")
        else:
            which = f"{AGENT_LABELS[a]}'s mean is set by " + " and by ".join(
                f"seed {f['seed']} with {SHORT_BUFFER[f['buffer']]}" for f in fs)
        out.append(f"- One run can set a mean: {which}. Read the median and every seed beside "
                   "the mean.")
    caveat = _sigma_caveat(reported)
    if caveat:
        out.append(f"- {caveat}")
    return "\n".join(out)


def recipes_text(reported):
    """Return the setting each buffer's reported runs used (Markdown bullets, from their records:
    the recipe and prior chosen in the tuning), and what differs between them: the buffer and,
    when the chosen recipes divide the KL differently, the KL scaling too."""
    out = ["**The settings compared** (chosen in section 2):\n"]
    for buffer, rec in reported.items():
        recipe = _recipe_of(rec, buffer)
        prior = rec["config"]["prior"]
        prior = tuple(prior) if isinstance(prior, list) else prior
        note = " (a departure from the paper)" if buffer != "paper" else ""
        out.append(f"- *{_cap(SHORT_BUFFER[buffer])}*{note}: {RECIPE_LABELS[recipe]}, "
                   f"{prior_label(prior)} prior.")
    if len(reported) == 2:
        recipes = [_recipe_of(rec, b) for b, rec in reported.items()]
        priors = {prior_label(tuple(p) if isinstance(p, list) else p)
                  for p in (rec["config"]["prior"] for rec in reported.values())}
        differ = ["the buffer"] + (["the KL scaling"] if len({KL_LABELS[r] for r in recipes}) > 1
                                   else []) + (["the prior"] if len(priors) > 1 else [])
        if len(differ) > 1:
            count, alone = (("two", "either") if len(differ) == 2 else ("three", "any one"))
            out.append(f"\nThey differ in {count} things at once, {', '.join(differ[:-1])} and "
                       f"{differ[-1]}: a difference between them cannot be credited to {alone} "
                       "alone. The ε-greedy agents have no KL and no prior: for them only the "
                       "buffer changes.")
        else:
            out.append("\nThey differ only in the buffer.")
    return "\n".join(out)


# ---- effects beside the verdicts, the answer on notebook 03's first screen, caveats ----

def _difference_words(res, agent, sep="; ", short=False):
    """'; BBB − greedy: -28,134, 95 % interval -124,916 to +68,649, which includes the paper's
    about -2,500' for one claim of ``bbb_orderings`` (empty when it has no interval). The
    paper's difference is read off its Figure 6 at 50,000 steps (``PAPER_FIGURE6``)."""
    tt = res.get("t_test") or {}
    if tt.get("ci") is None:
        return ""
    lo, hi = tt["ci"]
    paper = PAPER_FIGURE6["bbb"][50_000] - PAPER_FIGURE6[agent][50_000]
    if short:
        return (f"{sep}{tt['mean_diff']:+,.0f}, 95 % interval {lo:+,.0f} to {hi:+,.0f}; the "
                f"paper's about {paper:+,}, {'inside' if lo <= paper <= hi else 'outside'} it")
    return (f"{sep}BBB − {AGENT_LABELS[agent]}: {tt['mean_diff']:+,.0f}, 95 % interval "
            f"{lo:+,.0f} to {hi:+,.0f}, which {'includes' if lo <= paper <= hi else 'excludes'} "
            f"the paper's about {paper:+,}")


def _sigma_ends(reported):
    """{buffer: BBB's mean posterior sigma at the last record (mean curve over the seeds)}."""
    out = {}
    for buffer, rec in reported.items():
        rows = rec["metrics"]["per_seed"]
        if all(r.get("mean_sigma") for r in rows):
            out[buffer] = sum(r["mean_sigma"][-1] for r in rows) / len(rows)
    return out


def _sigma_caveat(reported, near=0.05):
    """A caveat sentence when BBB's mean posterior sigma ends within ``near`` (relative) of a
    Gaussian prior's sigma under some buffer (section 4's right panel); None otherwise."""
    prior = next(iter(reported.values()))["config"]["prior"]
    if not _is_gaussian(prior):
        return None
    # the distance from the values as printed (4 decimals), as posterior_sigma_text computes it
    ends = {b: round(e, 4) for b, e in _sigma_ends(reported).items()}
    ends = {b: e for b, e in ends.items() if abs(e - prior) / prior <= near}
    if not ends:
        return None
    where = " and ".join(f"{e:.4f} with {SHORT_BUFFER[b]} ({abs(e - prior) / prior:.1%} from it)"
                         for b, e in ends.items())
    return (f"BBB's posterior ends as wide as its prior: the mean posterior σ over all weights "
            f"ends at {where}, against the prior's σp = {prior:g} (section 4). Averaged over the "
            "weights, the data narrowed the posterior little; what the agent explores shows in "
            "the share of poisonous mushrooms it eats, not in this average.")


def _agent_name(a):
    """An agent's name inside a sentence: 'plain greedy' for the greedy agent (so that it is not
    read as the ε-greedy ones), else its label."""
    return "plain greedy" if a == "greedy" else AGENT_LABELS[a]


def _lead_sentence(buffer, rec, failed):
    """One plain sentence on ``buffer``'s final regrets, seed by seed: which agent ends below BBB
    on most seeds (with both medians) and, when one failed run of that agent alone puts its mean
    above BBB's, that run; else on how many seeds BBB ends the lowest of the agents."""
    s = rec["metrics"]["summary"]
    bbb = s["bbb"]["final_per_seed"]
    n = len(bbb)
    where = f"With {SHORT_BUFFER[buffer]}" + ("" if buffer == "paper"
                                              else " (a departure from the paper)")
    beats = {a: sum(x < y for x, y in zip(v["final_per_seed"], bbb))
             for a, v in s.items() if a != "bbb"}
    a = max(beats, key=beats.get)
    if 2 * beats[a] > n:
        text = (f"{where}, {_agent_name(a)} ends with lower regret than BBB {_on_seeds(beats[a], n)}"
                f" (median {s[a]['median']:,.0f} against BBB's {s['bbb']['median']:,.0f})")
        flip = [f for f in failed if f["buffer"] == buffer and f["agent"] == a and f["flips_bbb"]]
        if flip:
            f = flip[0]
            why = (", the regret of passing on every edible mushroom" if f["no_poison"] else "")
            text += (f"; BBB's lower mean ({s['bbb']['mean']:,.0f} against {s[a]['mean']:,.0f}) "
                     f"comes from one failed run of {_agent_name(a)} (seed {f['seed']}: "
                     f"{f['value']:,.0f}{why})")
        return text + "."
    lowest = sum(min(s, key=lambda b: s[b]["final_per_seed"][k]) == "bbb" for k in range(n))
    return (f"{where}, BBB ends with the lowest regret of the {len(s)} agents "
            f"{_on_seeds(lowest, n)} (median {s['bbb']['median']:,.0f}).")


def answer_text(reported):
    """Return notebook 03's answer (Markdown) from the reported records: first, per buffer, one
    plain sentence on the seeds (``_lead_sentence``: which agent ends below BBB on most seeds,
    the medians, a failed run that alone sets a mean) and the orderings that hold under every
    buffer. The verdicts with BBB's mean difference, its 95 % interval and the
    paper's difference live in section 3 (``headline_text``); here follows one line of headline
    numbers: each agent's median final regret per buffer beside the paper's values. The wording
    follows the numbers."""
    verdicts = {b: bbb_orderings(rec) for b, rec in reported.items()}
    failed = _failed_runs(reported)
    steps = next(iter(reported.values()))["config"]["steps"]
    lead = [_lead_sentence(b, rec, failed) for b, rec in reported.items()]
    agents = list(next(iter(verdicts.values())))
    for word in ("holds", "reversed"):
        alike = [a for a in agents if all(v.get(a, {}).get("verdict") == word
                                          for v in verdicts.values())]
        if alike:
            labels = [AGENT_LABELS[a] for a in alike]
            names = (labels[0] if len(labels) == 1
                     else ", ".join(labels[:-1]) + " and " + labels[-1])
            side = "below" if word == "holds" else "above"
            lead.append(f"BBB's regret ends {side} that of {names} "
                        f"{_where(list(reported), reported)} (the paired test of section 3: "
                        f"{word}).")
    seeds = _seeds_text(next(iter(reported.values()))["seeds"])
    medians = "; ".join(
        f"{SHORT_BUFFER[b]} — " + ", ".join(
            f"{'BBB' if a == 'bbb' else AGENT_LABELS[a]} {v['median']:,.0f}"
            for a, v in rec["metrics"]["summary"].items())
        for b, rec in reported.items())
    paper = ", ".join(f"{'BBB' if a == 'bbb' else AGENT_LABELS[a]} {v[50_000]:,}"
                      for a, v in PAPER_FIGURE6.items())
    out = ["**" + lead[0] + "** " + " ".join(lead[1:]) + "\n",
           f"*Headline numbers* (median cumulative regret after {steps:,} steps, {seeds}): "
           f"{medians}; the paper's Figure 6, read off: about {paper}."]
    return "\n".join(out)


def exploration_figure(reported, window=50):
    """Small multiples of exploration: one panel per agent, the share of the poisonous mushrooms
    shown that it ate (a moving average over ``window`` records, mean over the seeds, the band
    spanning the seeds' own moving averages), one colour per buffer; the epsilon-greedy panels
    mark epsilon / 2, what random actions alone eat. A last panel: BBB's mean posterior sigma per
    buffer, with the prior's sigma."""
    import matplotlib.pyplot as plt
    names = next(iter(reported.values()))["metrics"]["per_seed"][0]["names"]
    eps = {a.name: a.epsilon for a in PAPER_AGENTS}
    fig = plt.figure(figsize=(13, 6.4), constrained_layout=True)
    grid = fig.add_gridspec(2, 3)
    panels = [fig.add_subplot(grid[i // 2, i % 2]) for i in range(len(names))]
    for ax in panels[1:]:
        ax.sharex(panels[0])
        ax.sharey(panels[0])
    for ax, a, name in zip(panels, range(len(names)), names):
        for buffer, rec in reported.items():
            every = rec["config"]["record_every"]
            eaten = torch.tensor([r["poison_eaten"][a] for r in rec["metrics"]["per_seed"]],
                                 dtype=torch.float64)
            smooth = _trailing_mean(eaten, window)
            steps = [every * (i + 1) for i in range(smooth.shape[1])]
            c = BUFFER_COLORS[buffer]
            ax.fill_between(steps, smooth.min(0).values, smooth.max(0).values, color=c, alpha=0.2,
                            lw=0)
            ax.plot(steps, smooth.mean(0), color=c, lw=1.6, ls="-" if buffer == "keep_all" else "--",
                    label=f"{BUFFER_LABELS[buffer]}: mean of the seeds")
        if eps.get(name):
            ax.axhline(eps[name] / 2, color="k", ls=":", lw=1,
                       label="ε/2: what random actions alone eat")
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.set(ylim=(0, 1), title=AGENT_LABELS[name])
    for ax in panels[len(panels) - 2:]:
        ax.set_xlabel("step")
    every = next(iter(reported.values()))["config"]["record_every"]
    for ax in panels[::2]:
        ax.set_ylabel(f"poisonous eaten (share;\n{window * every:,}-step moving average)",
                      fontsize=9)
    sig_ax = fig.add_subplot(grid[:, 2])
    for buffer, rec in reported.items():
        rows = rec["metrics"]["per_seed"]
        sig = torch.tensor([r["mean_sigma"] for r in rows]).mean(0)
        sig_ax.plot([rec["config"]["record_every"] * (k + 1) for k in range(len(sig))], sig,
                    color=BUFFER_COLORS[buffer], ls="-" if buffer == "keep_all" else "--",
                    label=BUFFER_LABELS[buffer])
    sigma_p = next(iter(reported.values()))["config"]["prior"]
    if isinstance(sigma_p, (int, float)):
        sig_ax.axhline(sigma_p, c="k", lw=1, ls=":", label=f"prior σp = {sigma_p:g}")
    sig_ax.set(xlabel="step", ylabel="mean posterior σ over all weights",
               title="BBB's posterior σ (mean of the seeds)")
    sig_ax.legend(fontsize=7, loc="lower right")
    handles, labels = panels[0].get_legend_handles_labels()
    labels = [lb + " (band: range over the seeds)" for lb in labels]
    for h, lb in zip(*panels[-1].get_legend_handles_labels()):
        if lb not in labels and lb.startswith("ε"):
            handles, labels = handles + [h], labels + [lb + " (ε-greedy panels)"]
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=8)
    return fig


def _trailing_mean(x, window):
    """Row-wise mean of ``x`` (seeds × records) over the last ``window`` records up to each one
    (fewer at the start, so that the first records are shown too)."""
    c = torch.cumsum(x, 1)
    lagged = torch.cat([torch.zeros(x.shape[0], window, dtype=x.dtype), c], 1)[:, :x.shape[1]]
    counts = torch.clamp(torch.arange(1, x.shape[1] + 1, dtype=x.dtype), max=window)
    return (c - lagged) / counts


def answer(profile="default"):
    """Return notebook 03's answer (``answer_text``) from the reported runs of ``profile`` in
    results/, or a line naming the command that runs them. It only reads (never trains), so the
    notebook can show it before its parameters cell."""
    _, reported = ensure(profile, train=False)
    if set(reported) != {"paper", "keep_all"}:
        return (f"*The answer is rendered here from the reported runs of profile `{profile}`, "
                "which this run's results folder does not hold (a run in another profile writes "
                "its own; the committed notebook shows the answer). `python "
                f"tools/bandit_runs.py --profile {profile}` runs them.*")
    return answer_text(reported)
