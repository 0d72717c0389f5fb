"""The agents of Riquelme, Tucker & Snoek (2018), "Deep Bayesian Bandits Showdown", for the
mushroom bandit of notebook 03 (Blundell et al. 2015, section 5.3), beside the BBB and
epsilon-greedy agents of ``helpers.bandit``.

Agents (``AGENTS``, one name each; ``make_agent(name, context_dim, ...)`` builds one):

- ``neural_linear``: a network trained on the buffer as the greedy agent is, and an exact Bayesian
  linear regression per action on its last hidden layer (Thompson sampling).
- ``lin_full_post``: the same Bayesian linear regression on the raw context plus an intercept.
- ``bootstrap``: K networks (heads) stacked into one batched network, each trained on its own
  bootstrap weighting of the buffer; each step one head, drawn uniformly, acts greedily.
- ``dropout``: a network trained with dropout, and dropout kept on at decision time (one mask per
  decision: Thompson sampling with MC dropout).
- ``uniform``: a uniformly random action, the floor.

Interface (every agent): ``agent.act(context) -> int`` picks an action for one context (a tensor
of ``context_dim`` numbers); ``agent.update(context, action, reward)`` stores the tuple in the
agent's buffer (a ring buffer of ``buffer`` tuples, as ``helpers.bandit``'s: the oldest tuple is
overwritten) and learns from it. The networks are the project's (inputs = context, one-hot action,
constant 1; two hidden layers of ``hidden`` ReLU units; one output, the reward of that action),
trained with the project's budget: every step ``updates_per_step`` Adam updates (lr ``lr``) on
minibatches of ``batch`` tuples drawn with replacement from the buffer, Gaussian likelihood of
std ``noise_sigma`` (``BanditConfig``'s 64 x 64, 1e-3 and 1.0). Where they differ from the
Showdown's code (which retrains its networks every 50 steps for 100 RMSProp steps of 512 tuples
on a network of one 50-unit layer with one output per action), it is to give every agent of
notebook 03 the same network and the same budget.

Every random draw of an agent comes from its own ``torch.Generator`` (``agent_generator``: the
seed, checked as ``helpers.utils.seed_everything`` checks it, mixed with the agent's name), so the
same seed gives the same numbers whatever else runs. ``run_agents`` plays the mushroom bandit with
``helpers.bandit``'s mushroom sequence, rewards and regret; ``showdown_seed`` / ``save_showdown``
are what ``tools/bandit_runs.py --agents`` runs and writes.
"""
import inspect
import math
import time
import zlib
from dataclasses import dataclass, field

import torch

from . import bandit as B
from .utils import check_seed, one_thread, progress, seed_everything

# ---- random numbers ----


def agent_generator(seed, name):
    """Return a torch.Generator for agent ``name`` under ``seed`` (a non-negative integer, checked
    as ``seed_everything`` checks it): the same (seed, name) gives the same stream, other names
    other streams."""
    return torch.Generator().manual_seed(check_seed(seed) * 1_000_003 + zlib.crc32(name.encode()))


def sample_inverse_gamma(concentration, rate, generator):
    """Draw sigma^2 ~ InverseGamma(concentration, rate) (elementwise) from ``generator``.

    The distribution is ``torch.distributions.InverseGamma`` (it checks the parameters); its
    ``sample()`` takes no generator, so the draw is written out as it does it: a standard gamma
    variate (``torch._standard_gamma``, the kernel ``torch.distributions.Gamma`` calls) divided by
    the rate, then inverted. With a generator in the same state as the global one the numbers
    equal ``InverseGamma(concentration, rate).sample()`` (tests/test_bandit_agents.py)."""
    dist = torch.distributions.InverseGamma(concentration, rate, validate_args=True)
    gamma = dist.base_dist
    value = torch._standard_gamma(gamma.concentration, generator=generator) / gamma.rate
    value = value.clamp(min=torch.finfo(value.dtype).tiny)
    return dist.transforms[0](value)


# ---- Bayesian linear regression (LinFullPost, NeuralLinear) ----


class BayesLinReg:
    """One Bayesian linear regression per action, y = z . beta_a + noise, with the exact
    Normal-inverse-Gamma posterior of the Showdown (``linear_full_posterior_sampling.py``):

        prior   sigma2_a ~ IG(a0, b0),  beta_a | sigma2_a ~ N(0, sigma2_a / lambda_prior I)
        post.   Lambda = Z'Z + lambda_prior I,  mu = Lambda^-1 Z'y,
                a = a0 + n / 2,  b = b0 + (y'y - mu' Lambda mu) / 2

    kept as sufficient statistics (Z'Z, Z'y, y'y, n per action, float64) that tuples are added
    to or removed from (a ring buffer overwriting its oldest tuple), or rebuilt from a buffer.
    The Showdown's defaults: a0 = b0 = 6, lambda_prior = 0.25. The posterior is solved with a
    Cholesky factor of Lambda (no inverse); ``sample`` draws sigma2 ~ IG(a, b), then
    beta ~ N(mu, sigma2 Lambda^-1) = mu + sigma L^-T eps."""

    def __init__(self, n_actions, dim, a0=6.0, b0=6.0, lambda_prior=0.25):
        for key, value in (("a0", a0), ("b0", b0), ("lambda_prior", lambda_prior)):
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{key} must be a positive number (the Showdown uses a0 = b0 = 6, "
                                 f"lambda_prior = 0.25), got {value!r}")
        self.n_actions, self.dim = int(n_actions), int(dim)
        self.a0, self.b0, self.lambda_prior = float(a0), float(b0), float(lambda_prior)
        f64 = torch.float64
        self.zz = torch.zeros(n_actions, dim, dim, dtype=f64)
        self.zy = torch.zeros(n_actions, dim, dtype=f64)
        self.yy = torch.zeros(n_actions, dtype=f64)
        self.n = torch.zeros(n_actions, dtype=f64)
        self._post = None
        self._dirty = set(range(n_actions))  # actions whose posterior is out of date

    def add(self, action, z, y, sign=1.0):
        """Add one tuple (features z, reward y) to ``action``'s statistics (sign=-1 removes it)."""
        z = z.to(torch.float64)
        self.zz[action].addr_(z, z, alpha=sign)
        self.zy[action].add_(z, alpha=sign * float(y))
        self.yy[action] += sign * float(y) ** 2
        self.n[action] += sign
        self._dirty.add(int(action))

    def rebuild(self, actions, z, y):
        """Replace the statistics by those of the tuples (actions (n,), features (n, dim), rewards
        (n,))."""
        z, y = z.to(torch.float64), y.to(torch.float64)
        onehot = torch.nn.functional.one_hot(actions, self.n_actions).to(torch.float64)  # (n, A)
        self.zz = torch.einsum("na,ni,nj->aij", onehot, z, z)
        self.zy = torch.einsum("na,ni,n->ai", onehot, z, y)
        self.yy = onehot.t() @ (y * y)
        self.n = onehot.sum(0)
        self._dirty = set(range(self.n_actions))

    def posterior(self):
        """Return (mu (A, dim), Cholesky factor L of Lambda (A, dim, dim), a (A,), b (A,)),
        recomputed for the actions whose statistics changed since the last call."""
        if self._dirty:
            if self._post is None:
                self._post = (torch.zeros_like(self.zy), torch.zeros_like(self.zz),
                              torch.zeros_like(self.n), torch.zeros_like(self.n))
            mu, chol, a, b = self._post
            rows = torch.tensor(sorted(self._dirty))
            eye = torch.eye(self.dim, dtype=torch.float64)
            L, info = torch.linalg.cholesky_ex(self.zz[rows] + self.lambda_prior * eye)
            if bool(info.any()):
                k = int(info.nonzero()[0, 0])
                raise ValueError(
                    f"the posterior precision Z'Z + lambda_prior I of action {int(rows[k])} is not "
                    f"positive definite (Cholesky failed at column {int(info[k])}): the features "
                    "or rewards hold inf/nan, or more tuples were removed than added; pass finite "
                    "contexts and rewards, and lambda_prior > 0")
            m = torch.cholesky_solve(self.zy[rows].unsqueeze(-1), L).squeeze(-1)
            chol[rows], mu[rows] = L, m
            a[rows] = self.a0 + 0.5 * self.n[rows]
            # y'y - mu' Lambda mu = |y - Z mu|^2 + lambda |mu|^2 >= 0; clamp its round-off
            b[rows] = self.b0 + 0.5 * (self.yy[rows] - (m * self.zy[rows]).sum(-1)).clamp_min(0.0)
            self._dirty = set()
        return self._post

    def sample(self, generator):
        """Draw one beta per action (A, dim) from the posterior (Thompson sampling)."""
        mu, chol, a, b = self.posterior()
        sigma2 = sample_inverse_gamma(a, b, generator)
        eps = torch.randn(mu.shape + (1,), dtype=torch.float64, generator=generator)
        dev = torch.linalg.solve_triangular(chol.transpose(-1, -2), eps, upper=True).squeeze(-1)
        return mu + sigma2.sqrt().unsqueeze(-1) * dev


# ---- K networks as one batched network ----


class HeadsMLP:
    """K networks (heads) d_in -> hidden -> hidden -> 1 (ReLU) as one batched model: weights of
    shape (K, in, out), layers as batched matmuls, so an update of every head costs about one
    forward/backward pass. Inputs end with a constant 1 (the first layer's last row is its bias),
    as in ``helpers.bandit.StackedNets``; weights start as nn.Linear's. The backward pass is
    written out and Adam applied to one flat store (torch.optim.Adam's formula, torch's fused CPU
    kernel): no autograd graph, no optimizer object.

    Loss of head k (``update``): mean over its minibatch of w * (out - r)^2 / (2 noise_sigma^2),
    with per-tuple weights w (bootstrap; default 1) and optional dropout masks (post-ReLU
    activations multiplied by masks of 0 or 1/keep_prob)."""

    def __init__(self, heads, d_in, hidden, lr=1e-3, generator=None, betas=(0.9, 0.999),
                 adam_eps=1e-8):
        self.K, self.d_in, self.hidden = int(heads), int(d_in), int(hidden)
        self.lr, self.betas, self.adam_eps = lr, betas, adam_eps
        self.shapes = [(d_in + 1, hidden), (hidden, hidden), (1, hidden), (hidden, 1), (1, 1)]
        sizes = [self.K * a * b for a, b in self.shapes]
        self.store = torch.empty(sum(sizes))
        self.grad = torch.zeros_like(self.store)
        self.m = torch.zeros_like(self.store)
        self.v = torch.zeros_like(self.store)
        offs = [sum(sizes[:k]) for k in range(len(sizes))]
        self.w = [self.store[o:o + n].view(self.K, a, b)
                  for o, n, (a, b) in zip(offs, sizes, self.shapes)]
        self.g = [self.grad[o:o + n].view(self.K, a, b)
                  for o, n, (a, b) in zip(offs, sizes, self.shapes)]
        for w, fan_in in zip(self.w, [d_in, hidden, hidden, hidden, hidden]):  # nn.Linear's init
            bound = 1.0 / math.sqrt(fan_in)
            w.uniform_(-bound, bound, generator=generator)
        self.t = 0
        self._step = torch.zeros(())  # Adam's step count, as torch's fused Adam keeps it
        self.fused = hasattr(torch, "_fused_adam_")

    def forward(self, x, masks=None, head=None):
        """Return (outputs (K, B), (h1, h2)) for inputs x (K, B, d_in + 1); ``head`` = k runs head
        k alone (x (1, B, d_in + 1)); masks = (m1, m2), each broadcastable to (K, B, hidden)."""
        w1, w2, b2, w3, b3 = self.w if head is None else [w[head:head + 1] for w in self.w]
        h1 = torch.bmm(x, w1).relu_()
        if masks is not None:
            h1 = h1 * masks[0]
        h2 = torch.baddbmm(b2, h1, w2).relu_()
        if masks is not None:
            h2 = h2 * masks[1]
        return torch.baddbmm(b3, h2, w3).squeeze(-1), (h1, h2)

    def update(self, x, r, weight=None, masks=None, noise_sigma=1.0):
        """One Adam step of every head on its minibatch: x (K, B, d_in + 1), rewards r (K, B),
        per-tuple weights (K, B) or None, dropout masks (m1, m2) of shape (K, B, hidden) or None."""
        w1, w2, b2, w3, b3 = self.w
        g1, g2, gb2, g3, gb3 = self.g
        out, (h1, h2) = self.forward(x, masks)
        go = out.sub_(r).mul_(1.0 / (noise_sigma ** 2 * x.shape[1]))
        if weight is not None:
            go.mul_(weight)
        go = go.unsqueeze(-1)                                            # dL/d out (K, B, 1)
        torch.bmm(h2.transpose(1, 2), go, out=g3)
        torch.sum(go, 1, keepdim=True, out=gb3)
        gh = torch.bmm(go, w3.transpose(1, 2))
        if masks is not None:
            gh.mul_(masks[1])
        gh = torch.ops.aten.threshold_backward(gh, h2, 0)
        torch.bmm(h1.transpose(1, 2), gh, out=g2)
        torch.sum(gh, 1, keepdim=True, out=gb2)
        gh = torch.bmm(gh, w2.transpose(1, 2))
        if masks is not None:
            gh.mul_(masks[0])
        gh = torch.ops.aten.threshold_backward(gh, h1, 0)
        torch.bmm(x.transpose(1, 2), gh, out=g1)
        self.t += 1
        self._adam()

    def _adam(self):
        """One Adam step on the flat store: torch's fused CPU kernel (one pass; torch.optim.Adam's
        formula) where this torch has it, else ``helpers.bandit``'s torch-op version."""
        b1, b2 = self.betas
        if self.fused and self.store.device.type == "cpu":
            self._step.fill_(self.t)
            torch._fused_adam_([self.store], [self.grad], [self.m], [self.v], [], [self._step],
                               lr=self.lr, beta1=b1, beta2=b2, weight_decay=0.0,
                               eps=self.adam_eps, amsgrad=False, maximize=False)
            return
        hyper = [self.lr / (1 - b1 ** self.t), b1, b2, self.adam_eps,
                 1 / math.sqrt(1 - b2 ** self.t)]
        B._adam_torch(self.store, self.grad, self.m, self.v, hyper)


# ---- the agents ----


class ReplayBuffer:
    """The last ``capacity`` tuples (context, action, reward) and each tuple's network input row
    (context, one-hot action, 1); step t goes to slot t % capacity, as in ``helpers.bandit``."""

    def __init__(self, capacity, context_dim, n_actions):
        self.capacity, self.n_actions = int(capacity), int(n_actions)
        self.ctx = torch.zeros(capacity, context_dim)
        self.act = torch.zeros(capacity, dtype=torch.long)
        self.rew = torch.zeros(capacity)
        self.inputs = torch.zeros(capacity, context_dim + n_actions + 1)
        self.t = 0

    @property
    def filled(self):
        return min(self.t, self.capacity)

    def add(self, context, action, reward):
        """Store a tuple; return (its slot, the (context, action, reward) it overwrote or None)."""
        slot = self.t % self.capacity
        old = None
        if self.t >= self.capacity:
            old = (self.ctx[slot].clone(), int(self.act[slot]), float(self.rew[slot]))
        self.ctx[slot] = context
        self.act[slot] = action
        self.rew[slot] = reward
        row = self.inputs[slot]
        row.zero_()
        row[:context.shape[0]] = context
        row[context.shape[0] + action] = 1.0
        row[-1] = 1.0
        self.t += 1
        return slot, old


class Agent:
    """What every agent shares: the checks of its inputs, its generator, its buffer, the Showdown's
    round robin over the actions for the first ``initial_pulls`` rounds, and the time it spends
    learning (``update_s``, ``n_updates`` minibatch updates)."""
    name = "agent"

    def __init__(self, context_dim, n_actions=2, *, seed=0, buffer=4096, initial_pulls=0):
        for key, value, low in (("context_dim", context_dim, 1), ("n_actions", n_actions, 2),
                                ("buffer", buffer, 1), ("initial_pulls", initial_pulls, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{key} must be a whole number >= {low}, got {value!r}")
        self.context_dim, self.n_actions = context_dim, n_actions
        self.initial_pulls = initial_pulls
        self.gen = agent_generator(seed, self.name)
        self.buffer = ReplayBuffer(buffer, context_dim, n_actions)
        self.t = 0
        self.update_s, self.n_updates = 0.0, 0

    def _context(self, context):
        x = torch.as_tensor(context, dtype=torch.float32)
        if x.shape != (self.context_dim,):
            raise ValueError(f"context has shape {tuple(x.shape)}; this {self.name} agent was "
                             f"built for context_dim={self.context_dim}: pass a 1-D tensor of "
                             f"{self.context_dim} numbers (one context, not a batch)")
        if not bool(torch.isfinite(x).all()):
            raise ValueError("context holds inf or nan: pass finite numbers")
        return x

    def act(self, context):
        """Return the action (an int in [0, n_actions)) for one context."""
        x = self._context(context)
        if self.t < self.n_actions * self.initial_pulls:
            return self.t % self.n_actions
        return self._act(x)

    def update(self, context, action, reward):
        """Store (context, action, reward) and learn from the buffer."""
        x = self._context(context)
        if isinstance(action, bool) or not isinstance(action, int) or not \
                0 <= action < self.n_actions:
            raise ValueError(f"action must be an int in [0, {self.n_actions}), got {action!r}")
        reward = float(reward)
        if not math.isfinite(reward):
            raise ValueError(f"reward must be a finite number, got {reward!r}")
        slot, old = self.buffer.add(x, action, reward)
        self.t += 1
        t0 = time.perf_counter()
        self._learn(slot, old)
        self.update_s += time.perf_counter() - t0

    def fill(self, contexts, actions, rewards):
        """Store tuples (contexts (n, context_dim), actions (n,), rewards (n,)) without a learning
        step for each (a warm buffer, e.g. to time a step with a full buffer); what the agent
        derives from its buffer (regression statistics, bootstrap weights) is rebuilt."""
        slots = []
        for x, a, r in zip(contexts, actions, rewards):
            x, a, r = self._context(x), int(a), float(r)
            if not 0 <= a < self.n_actions or not math.isfinite(r):
                raise ValueError(f"actions must be in [0, {self.n_actions}) and rewards finite")
            slots.append(self.buffer.add(x, a, r)[0])
            self.t += 1
        self._filled(slots)

    def _act(self, x):
        raise NotImplementedError

    def _learn(self, slot, old):
        pass

    def _filled(self, slots):
        pass


class UniformRandom(Agent):
    """A uniformly random action every step (the Showdown's ``UniformSampling``): the floor."""
    name = "uniform"

    def _act(self, x):
        return int(torch.randint(self.n_actions, (1,), generator=self.gen))


class LinFullPost(Agent):
    """Thompson sampling with one Bayesian linear regression per action on the raw context plus
    an intercept (the Showdown's ``LinearFullPosteriorSampling``), exact posterior
    (``BayesLinReg``).

    Showdown defaults followed: a0 = b0 = 6, lambda_prior = 0.25 (also on the intercept),
    initial_pulls = 2 (round robin over the actions first), the posterior updated after every
    tuple. The buffer (``buffer`` tuples, a ring) bounds what the regression sees, as it bounds the
    networks' data: with a buffer as long as the run it keeps every tuple, as the Showdown does."""
    name = "lin_full_post"

    def __init__(self, context_dim, n_actions=2, *, seed=0, buffer=4096, initial_pulls=2, a0=6.0,
                 b0=6.0, lambda_prior=0.25):
        super().__init__(context_dim, n_actions, seed=seed, buffer=buffer,
                         initial_pulls=initial_pulls)
        self.blr = BayesLinReg(n_actions, context_dim + 1, a0, b0, lambda_prior)

    @staticmethod
    def _z(x):
        return torch.cat([x, x.new_ones(1)])

    def _act(self, x):
        beta = self.blr.sample(self.gen)                     # (A, d + 1), intercept last
        return int(torch.argmax(beta @ self._z(x).to(torch.float64)))

    def refresh(self):
        """Rebuild the regression from the buffer (the tuples' own statistics, as updated)."""
        b, n = self.buffer, self.buffer.filled
        self.blr.rebuild(b.act[:n], torch.cat([b.ctx[:n], torch.ones(n, 1)], 1), b.rew[:n])

    def _filled(self, slots):
        self.refresh()

    def _learn(self, slot, old):
        if old is not None:
            self.blr.add(old[1], self._z(old[0]), old[2], sign=-1.0)
        b = self.buffer
        self.blr.add(int(b.act[slot]), self._z(b.ctx[slot]), float(b.rew[slot]))


class _NetAgent(Agent):
    """An agent with ``heads`` networks trained on its buffer with the project's budget: each
    step ``updates_per_step`` Adam updates on minibatches of ``batch`` tuples drawn uniformly with
    replacement from the filled buffer (all minibatches of a step drawn at once, as in
    ``helpers.bandit.run``)."""

    def __init__(self, context_dim, n_actions=2, *, seed=0, buffer=4096, initial_pulls=2,
                 hidden=100, updates_per_step=64, batch=64, lr=1e-3, noise_sigma=1.0, heads=1):
        super().__init__(context_dim, n_actions, seed=seed, buffer=buffer,
                         initial_pulls=initial_pulls)
        for key, value, low in (("hidden", hidden, 1), ("updates_per_step", updates_per_step, 0),
                                ("batch", batch, 1), ("heads", heads, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{key} must be a whole number >= {low}, got {value!r}")
        if not (lr > 0 and noise_sigma > 0):
            raise ValueError(f"lr and noise_sigma must be > 0, got lr={lr!r}, "
                             f"noise_sigma={noise_sigma!r}")
        self.updates_per_step, self.batch, self.noise_sigma = updates_per_step, batch, noise_sigma
        self.net = HeadsMLP(heads, context_dim + n_actions, hidden, lr=lr, generator=self.gen)
        self._tail = torch.cat([torch.eye(n_actions), torch.ones(n_actions, 1)], 1)

    def inputs(self, x):
        """Return the network input rows of context x for every action (A, d + A + 1)."""
        return torch.cat([x.expand(self.n_actions, -1), self._tail], 1)

    def _weights(self, idx):
        return None

    def _masks(self, K, n):
        return None

    def train(self):
        """One step's training: ``updates_per_step`` updates of every head."""
        if not self.updates_per_step:
            return
        b, K = self.buffer, self.net.K
        idx = torch.randint(0, b.filled, (self.updates_per_step, K, self.batch), generator=self.gen)
        for u in range(self.updates_per_step):
            self.net.update(b.inputs[idx[u]], b.rew[idx[u]], self._weights(idx[u]),
                            self._masks(K, self.batch), self.noise_sigma)
        self.n_updates += self.updates_per_step

    def _learn(self, slot, old):
        self.train()


class NeuralLinear(_NetAgent):
    """Thompson sampling with a Bayesian linear regression per action on the last hidden layer of
    a network (the Showdown's ``NeuralLinearPosteriorSampling``).

    The network is trained on the buffer as the greedy agent is (the project's budget, see the
    module's docstring); its last hidden layer phi(x, a) (``hidden`` ReLU units; the network sees
    the action, so the features are those of the input (x, a)) feeds ``BayesLinReg``, no
    intercept (the Showdown's ``intercept=False``). Showdown defaults followed: a0 = b0 = 6,
    lambda_prior = 0.25, initial_pulls = 2, the regression updated every step (its
    ``training_freq=1``) and the features of every stored tuple recomputed after each network
    training phase (it retrains every 50 steps; here the network trains every step, so with
    ``refresh_every=1`` the features are recomputed every step). With ``refresh_every=n > 1`` a
    new tuple's features are those of the network of its step and every tuple's are recomputed
    each n steps (cheaper for a long buffer; the Showdown's own schedule in between phases).

    Acting: sigma2_a ~ IG(a_a, b_a), beta_a ~ N(mu_a, sigma2_a Sigma_a) per action, then the
    action maximising phi(x, a) . beta_a."""
    name = "neural_linear"

    def __init__(self, context_dim, n_actions=2, *, seed=0, buffer=4096, initial_pulls=2,
                 hidden=100, updates_per_step=64, batch=64, lr=1e-3, noise_sigma=1.0, a0=6.0,
                 b0=6.0, lambda_prior=0.25, refresh_every=1):
        super().__init__(context_dim, n_actions, seed=seed, buffer=buffer,
                         initial_pulls=initial_pulls, hidden=hidden,
                         updates_per_step=updates_per_step, batch=batch, lr=lr,
                         noise_sigma=noise_sigma)
        if isinstance(refresh_every, bool) or not isinstance(refresh_every, int) or \
                refresh_every < 1:
            raise ValueError(f"refresh_every must be a whole number >= 1 (1: recompute every "
                             f"stored tuple's features every step), got {refresh_every!r}")
        self.refresh_every = refresh_every
        self.blr = BayesLinReg(n_actions, hidden, a0, b0, lambda_prior)
        self.z = torch.zeros(buffer, hidden, dtype=torch.float64)  # features of stored tuples

    def features(self, rows):
        """Return the last hidden layer's activations (n, hidden) for input rows (n, d + A + 1)."""
        return self.net.forward(rows.unsqueeze(0))[1][1][0]

    def refresh(self):
        """Recompute every stored tuple's features and rebuild the regression from them."""
        b = self.buffer
        n = b.filled
        self.z[:n] = self.features(b.inputs[:n]).to(torch.float64)
        self.blr.rebuild(b.act[:n], self.z[:n], b.rew[:n])

    def _filled(self, slots):
        self.refresh()

    def _learn(self, slot, old):
        b = self.buffer
        if old is not None:  # the overwritten tuple leaves the regression (its stored features)
            self.blr.add(old[1], self.z[slot], old[2], sign=-1.0)
        self.train()
        if self.t % self.refresh_every == 0:
            self.refresh()
        else:
            self.z[slot] = self.features(b.inputs[slot:slot + 1])[0].to(torch.float64)
            self.blr.add(int(b.act[slot]), self.z[slot], float(b.rew[slot]))

    def _act(self, x):
        beta = self.blr.sample(self.gen)                                  # (A, hidden)
        phi = self.features(self.inputs(x)).to(torch.float64)            # (A, hidden)
        return int(torch.argmax((phi * beta).sum(1)))


RESAMPLES = ("poisson", "bernoulli")


class Bootstrapped(_NetAgent):
    """Thompson sampling with bootstrapped networks (the Showdown's ``BootstrappedBNNSampling``):
    ``heads`` networks, each trained on its own bootstrap weighting of the buffer, stacked into one
    batched network (``HeadsMLP``); each step one head, drawn uniformly, acts greedily.

    Each tuple gets one weight per head when it enters the buffer: Poisson(1) (``resample=
    'poisson'``, the online bootstrap: a tuple appears 0, 1, 2, ... times in a head's resample) or
    Bernoulli(p) (``resample='bernoulli'``: the Showdown adds each tuple to each model's data with
    probability p = 0.95); a head's loss weighs each tuple of its minibatch by its weight. Each
    head draws its own minibatches. Departures from the Showdown's defaults (q = 3 models,
    p = 0.95): 10 heads and Poisson(1) weights by default (both settable); the first tuple is not
    forced into every head. Showdown default followed: initial_pulls = 2."""
    name = "bootstrap"

    def __init__(self, context_dim, n_actions=2, *, seed=0, buffer=4096, initial_pulls=2,
                 hidden=100, updates_per_step=64, batch=64, lr=1e-3, noise_sigma=1.0, heads=10,
                 resample="poisson", p=0.95):
        if isinstance(heads, bool) or not isinstance(heads, int) or heads < 1:
            raise ValueError(f"heads must be a whole number >= 1 (the number of bootstrapped "
                             f"networks, e.g. 10), got {heads!r}")
        if resample not in RESAMPLES:
            raise ValueError(f"resample must be one of {RESAMPLES}, got {resample!r}")
        if not 0 < p <= 1:
            raise ValueError(f"p (the Bernoulli inclusion probability) must be in (0, 1], "
                             f"got {p!r}")
        super().__init__(context_dim, n_actions, seed=seed, buffer=buffer,
                         initial_pulls=initial_pulls, hidden=hidden,
                         updates_per_step=updates_per_step, batch=batch, lr=lr,
                         noise_sigma=noise_sigma, heads=heads)
        self.resample, self.p = resample, float(p)
        self.w = torch.zeros(heads, buffer)  # each head's weight of each stored tuple

    def _weights(self, idx):
        return self.w.gather(1, idx)

    def _filled(self, slots):
        """Draw every head's weight of the tuples in ``slots``."""
        shape = (self.net.K, len(slots))
        if self.resample == "poisson":
            w = torch.poisson(torch.ones(shape), generator=self.gen)
        else:
            w = torch.bernoulli(torch.full(shape, self.p), generator=self.gen)
        self.w[:, slots] = w

    def _learn(self, slot, old):
        self._filled([slot])
        self.train()

    def values(self, x, head):
        """Return head ``head``'s predicted reward of every action for context x."""
        return self.net.forward(self.inputs(self._context(x)).unsqueeze(0), head=head)[0][0]

    def _act(self, x):
        head = int(torch.randint(self.net.K, (1,), generator=self.gen))
        return int(torch.argmax(self.values(x, head)))


class DropoutThompson(_NetAgent):
    """Thompson sampling with dropout (the Showdown's ``PosteriorBNNSampling`` with
    ``use_dropout=True``): a network trained with dropout after each hidden layer, and dropout kept
    on at decision time, one mask per decision (the same mask for every action's input, so each
    decision evaluates one sampled network). Showdown defaults followed: keep_prob = 0.8 on every
    hidden layer, initial_pulls = 2."""
    name = "dropout"

    def __init__(self, context_dim, n_actions=2, *, seed=0, buffer=4096, initial_pulls=2,
                 hidden=100, updates_per_step=64, batch=64, lr=1e-3, noise_sigma=1.0,
                 keep_prob=0.8):
        if not 0 < keep_prob <= 1:
            raise ValueError(f"keep_prob must be in (0, 1] (the Showdown uses 0.8), got "
                             f"{keep_prob!r}")
        super().__init__(context_dim, n_actions, seed=seed, buffer=buffer,
                         initial_pulls=initial_pulls, hidden=hidden,
                         updates_per_step=updates_per_step, batch=batch, lr=lr,
                         noise_sigma=noise_sigma)
        self.keep_prob = float(keep_prob)

    def _mask(self, shape):
        keep = torch.full(shape, self.keep_prob)
        return torch.bernoulli(keep, generator=self.gen).div_(self.keep_prob)

    def _masks(self, K, n):
        h = self.net.hidden
        return self._mask((K, n, h)), self._mask((K, n, h))

    def values(self, x):
        """Return one dropout sample of the predicted reward of every action for context x."""
        h = self.net.hidden
        masks = (self._mask((1, 1, h)), self._mask((1, 1, h)))  # one mask for the decision
        return self.net.forward(self.inputs(self._context(x)).unsqueeze(0), masks)[0][0]

    def _act(self, x):
        return int(torch.argmax(self.values(x)))


AGENTS = {cls.name: cls for cls in (NeuralLinear, LinFullPost, Bootstrapped, DropoutThompson,
                                    UniformRandom)}
AGENT_LABELS = {"neural_linear": "NeuralLinear", "lin_full_post": "LinFullPost",
                "bootstrap": "bootstrapped networks", "dropout": "dropout Thompson",
                "uniform": "uniform random"}


def make_agent(name, context_dim, n_actions=2, *, shared=None, **settings):
    """Build agent ``name`` (one of ``AGENTS``). ``settings`` go to its constructor (an unknown
    one is an error); ``shared`` settings (e.g. a ``BanditConfig``'s hidden, buffer, batch ...)
    go to it where it takes them, so one dict can serve every agent."""
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; choose one of {sorted(AGENTS)}")
    cls = AGENTS[name]
    params = inspect.signature(cls.__init__).parameters
    unknown = sorted(set(settings) - set(params))
    if unknown:
        raise ValueError(f"agent {name!r} takes no setting {unknown}; its settings: "
                         f"{[p for p in params if p not in ('self', 'context_dim', 'n_actions')]}")
    kwargs = {k: v for k, v in (shared or {}).items() if k in params}
    kwargs.update(settings)
    return cls(context_dim, n_actions, **kwargs)


def config_settings(cfg):
    """Return the agent settings a ``BanditConfig`` fixes (network, budget, buffer)."""
    return {"hidden": cfg.hidden, "buffer": cfg.buffer, "updates_per_step": cfg.updates_per_step,
            "batch": cfg.batch, "lr": cfg.lr, "noise_sigma": cfg.noise_sigma}


# ---- the mushroom bandit with these agents ----


@dataclass
class AgentRunResult(B.BanditResult):
    """``helpers.bandit.BanditResult`` (mean_sigma empty) plus, per agent, the time of a whole
    step (act + update, ms, mean over seeds) and its learning time (everything ``update`` does:
    training, feature refresh, regression) per minibatch update (None for agents that train no
    network); ``update_ms`` is the latter over all agents."""
    step_ms: dict = field(default_factory=dict)
    agent_update_ms: dict = field(default_factory=dict)


def run_agents(names, cfg, features, poisonous, agent_settings=None, desc="showdown"):
    """Play the mushroom bandit of ``helpers.bandit`` with agents ``names`` (of ``AGENTS``) for
    every seed of ``cfg`` (a ``BanditConfig``; its agents are ignored, its network, budget and
    buffer settings used); return an ``AgentRunResult``.

    Each agent sees the same mushrooms and reward coins as ``helpers.bandit.run``'s agents of the
    same seed (``mushroom_stream``), eats (action 0, ``EAT``) or passes (1, ``PASS``); rewards
    and regret are ``helpers.bandit``'s. ``agent_settings``: {name: {setting: value}} on top of
    the config's. One thread (small networks)."""
    names = list(names)
    for name in names:
        if name not in AGENTS:
            raise ValueError(f"unknown agent {name!r}; choose one of {sorted(AGENTS)}")
    agent_settings = agent_settings or {}
    X = features.to(torch.float32)
    pois = poisonous.to(torch.bool)
    n_rec = cfg.steps // cfg.record_every
    K, S = len(names), len(cfg.seeds)
    cr = torch.zeros(K, S, n_rec)
    pr = torch.zeros(K, S, n_rec)
    step_ms = {n: 0.0 for n in names}
    upd = {n: [0.0, 0] for n in names}
    regret = {e: {q: float(B.regret_of(torch.tensor(e), torch.tensor(q))) for q in (False, True)}
              for e in (False, True)}  # helpers.bandit's expected regret of (eat, poisonous)
    t_start = time.perf_counter()
    with one_thread():
        for si, seed in enumerate(cfg.seeds):
            seed_everything(int(seed))
            contexts, coin = B.mushroom_stream(len(X), cfg.steps, seed)
            for ki, name in enumerate(names):
                agent = make_agent(name, X.shape[1], 2, shared=config_settings(cfg),
                                   seed=int(seed), **agent_settings.get(name, {}))
                cum = eaten = seen = step_s = 0.0
                for t in progress(range(cfg.steps), desc=f"{desc} {name} seed {seed}",
                                  mininterval=2.0):
                    i = int(contexts[t])
                    x, is_poison = X[i], bool(pois[i])
                    t0 = time.perf_counter()
                    eat = agent.act(x) == B.EAT
                    if eat:
                        reward = (B.REWARD_POISON_BAD if is_poison and float(coin[t]) < 0.5
                                  else B.REWARD_EDIBLE)
                    else:
                        reward = 0.0
                    cum += regret[eat][is_poison]
                    eaten += eat and is_poison
                    seen += is_poison
                    agent.update(x, B.EAT if eat else B.PASS, reward)
                    step_s += time.perf_counter() - t0
                    if (t + 1) % cfg.record_every == 0:
                        r = (t + 1) // cfg.record_every - 1
                        cr[ki, si, r] = cum
                        pr[ki, si, r] = eaten / max(seen, 1.0)
                        eaten = seen = 0.0
                step_ms[name] += 1e3 * step_s / cfg.steps / S
                upd[name][0] += agent.update_s
                upd[name][1] += agent.n_updates
    wall = time.perf_counter() - t_start
    per_update = {n: (1e3 * s / c if c else None) for n, (s, c) in upd.items()}
    total_s, total_n = sum(s for s, _ in upd.values()), sum(c for _, c in upd.values())
    return AgentRunResult(names, tuple(cfg.seeds), cfg.steps, cfg.record_every, cr, pr,
                          torch.zeros(0, n_rec), wall, 1e3 * total_s / max(total_n, 1),
                          step_ms=step_ms, agent_update_ms=per_update)


SHOWDOWN_BUFFERS = ("paper", "keep_all")


def showdown_config(buffer, steps, seed, updates_per_step=64, record_every=100):
    """Return the BanditConfig of one seed of these agents under ``buffer`` ('paper': the last
    4,096 tuples; 'keep_all': every tuple, as the Showdown keeps them)."""
    if buffer not in SHOWDOWN_BUFFERS:
        raise ValueError(f"buffer must be one of {SHOWDOWN_BUFFERS}, got {buffer!r}")
    size = B.buffer_settings(buffer, steps)["buffer"]
    return B.BanditConfig(steps=steps, seeds=(seed,), updates_per_step=updates_per_step,
                          record_every=record_every, buffer=size)


def showdown_seed(buffer, seed, profile, names, features, poisonous):
    """Run one seed of agents ``names`` with the step count and budget of notebook 03's
    ``profile``; return its row for showdown_<buffer>.json."""
    from .profiles import get_profile
    prof = get_profile(B.NB, profile)
    cfg = showdown_config(buffer, prof.steps, seed, prof.updates_per_step, prof.record_every)
    res = run_agents(names, cfg, features, poisonous, desc=f"{buffer}")
    return {"seed": seed, "names": res.names, "cum_regret": res.cum_regret[:, 0].tolist(),
            "poison_eaten": res.poison_eaten[:, 0].tolist(), "wall_s": round(res.wall_s, 1),
            "step_ms": {k: round(v, 4) for k, v in res.step_ms.items()},
            "update_ms": {k: None if v is None else round(v, 4)
                          for k, v in res.agent_update_ms.items()},
            "buffer_size": cfg.buffer}


def save_showdown(buffer, rows, profile, workers=1, wall=None):
    """Write results/03_contextual_bandit/showdown_<buffer>.json from the seeds done so far."""
    from .profiles import get_profile
    from .utils import save_results
    prof = get_profile(B.NB, profile)
    rows = sorted(rows, key=lambda r: r["seed"])
    return save_results(
        B.NB, f"showdown_{buffer}",
        config={"buffer": buffer, "steps": prof.steps, "updates_per_step": prof.updates_per_step,
                "record_every": prof.record_every, "agents": rows[0]["names"],
                "threads_per_run": 1, "workers": workers},
        metrics={"per_seed": rows, "summary": B.summarise_reported(rows),
                 "complete": sorted(r["seed"] for r in rows) == sorted(prof.seeds)},
        profile=profile, seed=[r["seed"] for r in rows], wall_s=wall,
        extra={"agents_of": "Riquelme, Tucker & Snoek (2018), Deep Bayesian Bandits Showdown "
                            "(helpers/bandit_agents.py)"})
