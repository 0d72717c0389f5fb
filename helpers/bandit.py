"""The mushroom contextual bandit (section 5.3, Figure 6): Thompson sampling with BBB vs epsilon-greedy.

Each step a random mushroom is the context; the agent eats it or not. Eating an edible one gives
+5; eating a poisonous one gives -35 or +5 with probability 1/2 each; not eating gives 0. Regret is
measured against an oracle that eats exactly the edible ones, using expected rewards (regret 15 for
eating a poisonous mushroom, 5 for passing an edible one, 0 otherwise).

All agents (and all seeds) are one batched model: every parameter tensor has a leading agent
dimension and the layers are batched matmuls, so one update trains every agent at once. Agents
differ only in how they act (Thompson sampling with the average of two weight samples, or
epsilon-greedy on the mean weights) and in whether their weights are Bayesian.
"""
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from . import native
from .layers import _NativeSample, _SampleMC
from .priors import ScaleMixturePrior
from .train import load_checkpoint, save_checkpoint
from .utils import progress

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
PAPER_FIGURE6 = {  # cumulative regret read off the paper's Figure 6 (approximate)
    "bbb": {10_000: 3_900, 50_000: 5_700}, "greedy": {10_000: 4_800, 50_000: 8_200},
    "eps1": {10_000: 6_300, 50_000: 18_500}, "eps5": {10_000: 9_900, 50_000: 39_100},
}


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
    prior: tuple = (0.5, 1.0, math.exp(-6))   # pi, sigma1, sigma2 of the scale mixture
    noise_sigma: float = 1.0                  # Gaussian likelihood std of the reward
    thompson_samples: int = 2
    agents: tuple = field(default_factory=lambda: PAPER_AGENTS)
    record_every: int = 100

    def __post_init__(self):
        if self.steps < 1 or self.buffer < self.batch or self.updates_per_step < 0:
            raise ValueError("need steps >= 1, buffer >= batch and updates_per_step >= 0")


def expected_reward(eat, poisonous):
    """Return the expected reward of eating (or not) mushrooms of the given kind."""
    poison_mean = 0.5 * (REWARD_POISON_BAD + REWARD_POISON_OK)
    return torch.where(eat, torch.where(poisonous, torch.tensor(poison_mean),
                                        torch.tensor(REWARD_EDIBLE)), torch.tensor(0.0))


def regret_of(eat, poisonous):
    """Return the expected regret against the oracle (eat exactly the edible ones)."""
    oracle = torch.where(poisonous, torch.tensor(0.0), torch.tensor(REWARD_EDIBLE))
    return oracle - expected_reward(eat, poisonous)


class StackedMLP(torch.nn.Module):
    """A agents' MLPs (d -> h -> h -> 1, ReLU) in flat parameter tensors with an agent dimension.

    Agents [0, n_bayes) have Bayesian weights (mu, rho); the others use mu alone.
    """

    def __init__(self, n_agents, n_bayes, d_in, hidden, rho_init, prior):
        super().__init__()
        self.A, self.nb, self.d, self.h = n_agents, n_bayes, d_in, hidden
        self.shapes = [(d_in, hidden), (1, hidden), (hidden, hidden), (1, hidden), (hidden, 1),
                       (1, 1)]
        self.per_agent = sum(a * b for a, b in self.shapes)
        mu = torch.empty(n_agents, self.per_agent)
        off = 0
        fan_ins = [d_in, d_in, hidden, hidden, hidden, hidden]  # weight and bias of each layer
        for (a, b), fan_in in zip(self.shapes, fan_ins):  # nn.Linear-like initialisation
            bound = 1.0 / math.sqrt(fan_in)
            mu[:, off:off + a * b].uniform_(-bound, bound)
            off += a * b
        self.mu = torch.nn.Parameter(mu)
        self.rho = torch.nn.Parameter(torch.full((n_bayes, self.per_agent), float(rho_init)))
        self.prior = prior
        self.kl = None

    def weights(self, sample):
        """Return the flat (A, P) weights: sampled for Bayesian agents when ``sample``."""
        if self.nb == 0 or not sample:
            self.kl = None
            return self.mu
        mu_b = self.mu[: self.nb]
        if native.usable(mu_b):
            w_b, kl = _NativeSample.apply(mu_b, self.rho, self.prior, 1, False)
        else:
            w_b, kl = _SampleMC.apply(mu_b, self.rho, self.prior, 1)
        self.kl = kl / self.nb  # per Bayesian agent (each agent's KL is summed over its weights)
        return torch.cat([w_b, self.mu[self.nb:]])

    def forward(self, x, sample=True):
        """Return (A, B) outputs for inputs x of shape (A, B, d)."""
        w = self.weights(sample)
        # one split (a single backward node) rather than six slices
        parts = torch.split(w, [a * b for a, b in self.shapes], dim=1)
        w1, b1, w2, b2, w3, b3 = (p.view(self.A, a, b) for p, (a, b) in zip(parts, self.shapes))
        h = torch.relu(torch.baddbmm(b1, x, w1))
        h = torch.relu(torch.baddbmm(b2, h, w2))
        return torch.baddbmm(b3, h, w3).squeeze(-1)


@dataclass
class BanditResult:
    """Per-agent cumulative regret curves (recorded every ``record_every`` steps) and diagnostics."""
    names: list
    seeds: tuple
    steps: int
    record_every: int
    cum_regret: torch.Tensor      # (n_agent_kinds, n_seeds, n_records)
    poison_eaten: torch.Tensor    # fraction of poisonous mushrooms eaten per record window
    mean_sigma: torch.Tensor      # mean posterior sigma of the BBB agent(s) per record (n_seeds, n)
    wall_s: float
    update_ms: float


def run(cfg, features, poisonous, device="cpu", desc="bandit", checkpoint=None,
        checkpoint_every=1000):
    """Run every agent of ``cfg`` for every seed at once; return a ``BanditResult``.

    With ``checkpoint`` (a path) the whole state (model, optimiser, buffers, counters, RNG) is saved
    atomically every ``checkpoint_every`` steps, and a run finds and resumes from it."""
    device = torch.device(device)
    kinds = list(cfg.agents)
    order = sorted(range(len(kinds)), key=lambda i: not kinds[i].bayesian)  # Bayesian first
    n_seeds = len(cfg.seeds)
    agent_kind = [order[k // n_seeds] for k in range(len(kinds) * n_seeds)]
    agent_seed = [k % n_seeds for k in range(len(kinds) * n_seeds)]
    A = len(agent_kind)
    n_bayes = sum(kinds[i].bayesian for i in agent_kind)
    eps = torch.tensor([kinds[i].epsilon for i in agent_kind], device=device)
    bayes = torch.tensor([kinds[i].bayesian for i in agent_kind], device=device)

    torch.manual_seed(int(cfg.seeds[0]) * 7919 + 17)
    X = features.to(device)
    pois = poisonous.to(device)
    d = X.shape[1] + 2
    model = StackedMLP(A, n_bayes, d, cfg.hidden, cfg.rho_init,
                       ScaleMixturePrior(*cfg.prior)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr,
                           fused=device.type in ("cpu", "cuda"))
    # the same mushroom sequence for every agent of a seed (common random numbers)
    seq_gen = [torch.Generator().manual_seed(1000 + int(s)) for s in cfg.seeds]
    contexts = torch.stack([torch.randint(0, len(X), (cfg.steps,), generator=g)
                            for g in seq_gen]).to(device)           # (n_seeds, steps)
    coin = torch.stack([torch.rand(cfg.steps, generator=g) for g in seq_gen]).to(device)
    buf_x = torch.zeros(A, cfg.buffer, d, device=device)
    buf_r = torch.zeros(A, cfg.buffer, device=device)
    seed_idx = torch.tensor(agent_seed, device=device)
    arange_a = torch.arange(A, device=device)
    eat_onehot = torch.tensor([1.0, 0.0], device=device)
    pass_onehot = torch.tensor([0.0, 1.0], device=device)

    n_rec = cfg.steps // cfg.record_every
    regret_rec = torch.zeros(A, n_rec)
    poison_rec = torch.zeros(A, n_rec)
    sigma_rec = torch.zeros(max(n_bayes, 1), n_rec)
    cum = torch.zeros(A, device=device)
    poison_eaten = torch.zeros(A, device=device)
    poison_seen = torch.zeros(A, device=device)
    t_start = time.perf_counter()
    t_updates, n_updates, start, wall_before = 0.0, 0, 0, 0.0
    if checkpoint is not None and Path(checkpoint).exists():
        st = load_checkpoint(checkpoint, map_location=device)
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["optimizer"])
        for name, tensor in (("buf_x", buf_x), ("buf_r", buf_r), ("cum", cum),
                             ("poison_eaten", poison_eaten), ("poison_seen", poison_seen),
                             ("regret_rec", regret_rec), ("poison_rec", poison_rec),
                             ("sigma_rec", sigma_rec)):
            saved = st[name]
            tensor[..., :saved.shape[-1]].copy_(saved)  # a shorter run's records are a prefix
        start, wall_before = int(st["t"]), float(st["wall_s"])
        t_updates, n_updates = float(st["t_updates"]), int(st["n_updates"])
        torch.set_rng_state(st["rng"])

    def save(t_next):
        save_checkpoint(checkpoint, model=model.state_dict(), optimizer=opt.state_dict(),
                        buf_x=buf_x, buf_r=buf_r, cum=cum, poison_eaten=poison_eaten,
                        poison_seen=poison_seen, regret_rec=regret_rec, poison_rec=poison_rec,
                        sigma_rec=sigma_rec, t=t_next, rng=torch.get_rng_state(),
                        wall_s=wall_before + time.perf_counter() - t_start,
                        t_updates=t_updates, n_updates=n_updates)

    for t in progress(range(start, cfg.steps), desc=desc, total=cfg.steps, initial=start,
                      mininterval=2.0):
        ctx = contexts[seed_idx, t]                                   # (A,)
        x = X[ctx]                                                    # (A, d - 2)
        inputs = torch.stack([torch.cat([x, eat_onehot.expand(A, 2)], 1),
                              torch.cat([x, pass_onehot.expand(A, 2)], 1)], 1)  # (A, 2, d)
        with torch.no_grad():
            if n_bayes:
                value = sum(model(inputs, sample=True) for _ in range(cfg.thompson_samples))
                value = value / cfg.thompson_samples
            else:
                value = model(inputs, sample=False)
            greedy_mean = model(inputs, sample=False)
            value = torch.where(bayes.unsqueeze(1), value, greedy_mean)
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
        t0 = time.perf_counter()
        for _ in range(cfg.updates_per_step):
            idx = torch.randint(0, filled, (A, cfg.batch), device=device)
            xb = buf_x[arange_a.unsqueeze(1), idx]
            rb = buf_r[arange_a.unsqueeze(1), idx]
            out = model(xb, sample=True)
            nll = 0.5 * ((out - rb) / cfg.noise_sigma) ** 2
            loss = nll.mean(1).sum()
            if model.kl is not None:  # KL / N for each Bayesian agent, N = buffer size
                loss = loss + model.kl * n_bayes / filled
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        t_updates += time.perf_counter() - t0
        n_updates += cfg.updates_per_step
        if (t + 1) % cfg.record_every == 0:
            r = (t + 1) // cfg.record_every - 1
            regret_rec[:, r] = cum.cpu()
            poison_rec[:, r] = (poison_eaten / poison_seen.clamp_min(1)).cpu()
            poison_eaten.zero_()
            poison_seen.zero_()
            if n_bayes:
                sigma_rec[:, r] = torch.nn.functional.softplus(model.rho.detach()).mean(1).cpu()
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
