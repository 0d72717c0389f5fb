"""Many independent mushroom-bandit runs in one process, as the rows of one batched network.

``helpers.bandit.run`` stacks the four agents of one seed; here every row is a whole run of its own
(an agent, a seed and a setting): its own learning rate, prior, initial rho, noise sigma, KL
divisor, weight samples per decision, epsilon and replay buffer, and its own random streams. The
rows share only the shape of the network (``BatchConfig``: hidden units, steps, updates per step,
minibatch) and advance in lockstep, so one update trains every row at once (batched matmuls, the
C kernels of ``helpers.native`` called once per Bayesian row and once per group of plain rows of
one learning rate).

**A row's numbers depend on its own setting and seed only**: run alone (a batch of one) or beside
any other rows, in any order, it gives the same numbers bit for bit (tests/test_bandit_batch.py).
What makes that so: every random draw of a row comes from generators seeded by the row's seed
(the mushroom stream of ``helpers.bandit.mushroom_stream``; one stream of exploration coins; one
generator for its initial weights; one for its minibatch indices and weight-noise seeds), the
weight noise of a Bayesian row is drawn by its own kernel call (the counter-based generator of
``helpers.native`` restarts at each call), and every other operation is either elementwise or a
per-row matmul / reduction whose result does not depend on the other rows (the one-output layer
is a sum of products, not a one-column matmul: MKL rounds those differently with the batch's
size). Tested at one thread (the campaign's setting). Rows of one seed share their mushroom
stream, initial weights and random streams (common random numbers): a BBB row and a greedy row
of seed 4 start from the same weights and see the same mushrooms.

Not the same numbers as ``helpers.bandit.run``: that runner draws every agent's noise, minibatch
indices and exploration coins from torch's one global generator, so an agent's numbers there
depend on which other agents share its process; here the streams are per row by design. The
update's arithmetic is StackedNets' (the same kernels and matmuls) but for that output layer's
rounding.

The first layer's input is one-hot (the mushroom's 22 attribute values, the action, a constant 1):
where the features are 0/1 with the same number of ones in every row (the mushroom data), the
forward pass of that layer sums the rows of the weights the ones select (``embedding_bag``)
instead of a matmul; the buffers hold (mushroom, action) codes, not input vectors.

Checkpoints are per row (``helpers.train.save_checkpoint``, atomic, loaded with
``weights_only=True``): a row resumes from its own file in any batch; rows found at different
steps are first brought to the same step as sub-batches (which, by the property above, changes
no number).
"""
import hashlib
import math
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch
import torch.nn.functional as F

from . import native
from .bandit import (EAT, KL_COUNTS, PASS, REWARD_EDIBLE, REWARD_POISON_BAD, _adam_torch,
                     buffer_settings, make_prior, mushroom_stream, regret_of)
from .layers import sigmoid_over_softplus
from .train import check_same_run, load_checkpoint, save_checkpoint

FORMAT = "bandit_batch v1"  # a checkpoint of another layout is refused
BETAS, ADAM_EPS = (0.9, 0.999), 1e-8
LAYERS = ("w1", "w2", "b2", "w3", "b3")


@dataclass(frozen=True)
class RowSpec:
    """One run: an agent (``bayesian``: BBB with Thompson sampling; else greedy / epsilon-greedy)
    on one ``seed`` with its own setting (the defaults are helpers.bandit.BanditConfig's)."""
    seed: int
    bayesian: bool = False
    epsilon: float = 0.0
    lr: float = 1e-3
    rho_init: float = -5.0
    prior: object = 0.05        # a Gaussian prior's sigma, or (pi, sigma1, sigma2) of a mixture
    noise_sigma: float = 1.0
    buffer: int = 4096
    kl_count: str = "capacity"  # KL / N, N as in helpers.bandit.BanditConfig
    kl_floor: int = 0
    thompson_samples: int = 2   # weight samples averaged per decision (Bayesian rows)
    name: str = ""              # a label (not part of the run's identity)

    def key(self):
        """Return what identifies the run (every field but ``name``), as text."""
        return {f.name: repr(getattr(self, f.name)) for f in fields(self) if f.name != "name"}


def row_for_recipe(seed, recipe, steps, **setting):
    """Return a RowSpec on a buffer recipe of helpers.bandit.buffer_settings ('paper', ...)."""
    return RowSpec(seed=seed, **buffer_settings(recipe, steps), **setting)


@dataclass(frozen=True)
class BatchConfig:
    """What every row of a batch shares: the network, the schedule and the records."""
    steps: int = 50_000
    hidden: int = 100
    updates_per_step: int = 64
    batch: int = 64
    record_every: int = 100


def check_rows(rows, cfg):
    """Raise ValueError, naming the row and the field, for any setting that cannot run."""
    if cfg.steps < 1 or cfg.hidden < 1 or cfg.batch < 1 or cfg.updates_per_step < 0:
        raise ValueError(f"need steps, hidden, batch >= 1 and updates_per_step >= 0; got {cfg}")
    if cfg.record_every < 1 or cfg.steps % cfg.record_every:
        raise ValueError(f"record_every ({cfg.record_every}) must divide steps ({cfg.steps})")
    if not rows:
        raise ValueError("no rows to run")
    for i, r in enumerate(rows):
        if not isinstance(r, RowSpec):
            raise ValueError(f"row {i} is a {type(r).__name__}, not a RowSpec")
        bad = []
        if not isinstance(r.seed, int) or isinstance(r.seed, bool) or r.seed < 0:
            bad.append(f"seed must be an int >= 0 (got {r.seed!r})")
        if not 0.0 <= r.epsilon <= 1.0:
            bad.append(f"epsilon must lie in [0, 1] (got {r.epsilon!r})")
        if not (r.lr > 0 and math.isfinite(r.lr)):
            bad.append(f"lr must be > 0 (got {r.lr!r})")
        if not (r.noise_sigma > 0 and math.isfinite(r.noise_sigma)):
            bad.append(f"noise_sigma must be > 0 (got {r.noise_sigma!r})")
        if not math.isfinite(r.rho_init):
            bad.append(f"rho_init must be finite (got {r.rho_init!r})")
        if r.buffer < cfg.batch:
            bad.append(f"buffer ({r.buffer}) must hold at least one minibatch ({cfg.batch})")
        if r.kl_count not in KL_COUNTS:
            bad.append(f"kl_count must be one of {KL_COUNTS} (got {r.kl_count!r})")
        if int(r.kl_floor) < 0 or (r.kl_count == "fixed" and int(r.kl_floor) < 1):
            bad.append(f"kl_floor must be >= 0, and >= 1 with kl_count='fixed' "
                       f"(got {r.kl_floor!r})")
        if int(r.thompson_samples) < 1:
            bad.append(f"thompson_samples must be >= 1 (got {r.thompson_samples!r})")
        p = r.prior
        ok = (isinstance(p, (int, float)) and p > 0) or (
            isinstance(p, (tuple, list)) and len(p) == 3 and 0 <= p[0] <= 1 and p[1] > 0
            and p[2] > 0)
        if not ok:
            bad.append(f"prior must be a sigma > 0 or (pi, sigma1, sigma2) (got {p!r})")
        if bad:
            raise ValueError(f"row {i} ({r.name or r}): " + "; ".join(bad))


def data_hash(features, poisonous):
    """Return a short identity of the data set (shape and SHA-256 of the tensors)."""
    h = hashlib.sha256(features.detach().cpu().contiguous().numpy().tobytes())
    h.update(poisonous.detach().cpu().contiguous().numpy().tobytes())
    return f"{tuple(features.shape)} sha256:{h.hexdigest()[:16]}"


def row_fingerprint(row, cfg, data_id):
    """Return what a row's checkpoint must match: its setting but the buffer size (checked apart),
    the shared shape of the network but the number of steps, the data and the format."""
    out = {k: v for k, v in row.key().items() if k != "buffer"}
    out.update({k: repr(getattr(cfg, k)) for k in ("hidden", "updates_per_step", "batch",
                                                   "record_every")})
    out.update(data=data_id, format=FORMAT)
    return out


def _kl_n(row, t):
    """Return the KL divisor N of ``row`` after storing the tuple of step t (0-based)."""
    filled = min(t + 1, row.buffer)
    n = {"filled": filled, "capacity": row.buffer, "fixed": 0,
         "seen": max(row.buffer, t + 1)}[row.kl_count]
    return max(int(row.kl_floor), n)


def _hyper(lr, t):
    b1, b2 = BETAS
    return [lr / (1 - b1 ** t), b1, b2, ADAM_EPS, 1 / math.sqrt(1 - b2 ** t)]


def _gen(seed, role):
    """Return the generator of one random stream of a row (role: 1 init, 2 updates, 3 explore)."""
    return torch.Generator().manual_seed(1_000_003 * role + 7919 * int(seed) + 17)


class BatchedRuns:
    """The state of a batch of rows at one shared step ``t``: weights, Adam moments, buffers,
    counters, records and generators of every row. ``advance`` trains them; ``row_state`` and
    ``load_row`` move one row's state out and in (what a checkpoint holds)."""

    def __init__(self, rows, cfg, features, poisonous):
        check_rows(rows, cfg)
        if features.dim() != 2 or poisonous.shape != features.shape[:1]:
            raise ValueError(f"features must be (n, d) and poisonous (n,); got "
                             f"{tuple(features.shape)} and {tuple(poisonous.shape)}")
        self.rows, self.cfg = list(rows), cfg
        R, H = len(rows), cfg.hidden
        X = features.detach().float().cpu()
        self.pois = poisonous.detach().bool().cpu()
        self.data_id = data_hash(features, poisonous)
        n_mush, d = X.shape
        self.d_in = d + 3  # features, one-hot action, constant 1 (the first layer's bias row)
        # every (mushroom, action) input, indexed by code = 2 * mushroom + action
        tail = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
        self.xtab = torch.cat([X.unsqueeze(1).expand(n_mush, 2, d), tail.expand(n_mush, 2, 3)],
                              2).reshape(2 * n_mush, self.d_in).contiguous()
        ones = self.xtab.sum(1)
        self.sparse = bool(((self.xtab == 0) | (self.xtab == 1)).all()) and bool(
            (ones == ones[0]).all())
        if self.sparse:  # the positions of the ones of every input, in increasing order
            k = int(ones[0])
            self.bagtab = self.xtab.nonzero()[:, 1].view(2 * n_mush, k).contiguous()
        self.shapes = [(self.d_in, H), (H, H), (1, H), (H, 1), (1, 1)]
        self.sizes = [a * b for a, b in self.shapes]
        self.n = sum(self.sizes)
        offs = [R * sum(self.sizes[:k]) for k in range(5)]
        self.store = torch.zeros(R * self.n)
        self.grad = torch.zeros_like(self.store)
        self.m, self.v = torch.zeros_like(self.store), torch.zeros_like(self.store)
        layout = list(zip(offs, self.sizes, self.shapes))
        self.w = [self.store[o:o + R * s].view(R, a, b) for o, s, (a, b) in layout]
        self.g = [self.grad[o:o + R * s].view(R, a, b) for o, s, (a, b) in layout]
        self.row_off = [[o + r * s for o, s in zip(offs, self.sizes)] for r in range(R)]
        self.bayes = [r for r, row in enumerate(rows) if row.bayesian]
        self.plain = [r for r, row in enumerate(rows) if not row.bayesian]
        nb = len(self.bayes)
        self.mu = torch.zeros(nb, self.n)
        self.rho = torch.zeros(nb, self.n)
        self.sig = torch.zeros(nb, self.n)
        self.eps = torch.zeros(nb, 2 * ((self.n + 1) // 2))  # the kernel draws pairs
        self.adam = torch.zeros(nb, 4, self.n)  # m, v of mu and of rho
        self.priors = [make_prior(rows[r].prior) for r in self.bayes]
        self.native = native.usable(self.store) and all(
            native.prior_constants(p) is not None for p in self.priors)
        i64 = lambda xs: torch.tensor(xs, dtype=torch.int64)  # noqa: E731
        self.seg_len = i64(self.sizes)
        self.seg_off = [i64(self.row_off[r]) for r in range(R)]
        self.consts = [native.prior_constants(p) if self.native else None for p in self.priors]
        # plain rows of one learning rate take one Adam kernel call
        self.lr_groups = {}
        for r in self.plain:
            self.lr_groups.setdefault(float(rows[r].lr), []).append(r)
        self.group_seg = {lr: (i64(self.sizes * len(rs)), i64([o for r in rs
                                                               for o in self.row_off[r]]))
                          for lr, rs in self.lr_groups.items()}
        # per-row constants of the update
        self.inv_scale = torch.tensor([1.0 / (row.noise_sigma ** 2 * cfg.batch) for row in rows]
                                      ).view(R, 1, 1)
        self.samples = [int(row.thompson_samples) if row.bayesian else 1 for row in rows]
        self.eps_row = [float(row.epsilon) for row in rows]
        self.t, self._loaded = 0, set()
        # the per-seed streams: mushrooms, reward coins, exploration coins (prefixes of longer runs)
        self.streams = {}
        for s in sorted({row.seed for row in rows}):
            ctx, coin = mushroom_stream(n_mush, cfg.steps, s)
            self.streams[s] = (ctx, coin, torch.rand(cfg.steps, 2, generator=_gen(s, 3)))
        self.gens = [_gen(row.seed, 2) for row in rows]
        cap = max(row.buffer for row in rows)
        self.buf_code = torch.zeros(R, cap, dtype=torch.int64)
        self.buf_r = torch.zeros(R, cap)
        n_rec = cfg.steps // cfg.record_every
        self.cum = torch.zeros(R, dtype=torch.float64)
        self.poison_eaten = torch.zeros(R, dtype=torch.int64)
        self.poison_seen = torch.zeros(R, dtype=torch.int64)
        self.rec = {"cum_regret": torch.zeros(R, n_rec), "poison_rate": torch.zeros(R, n_rec),
                    "sigma_layers": torch.full((R, n_rec, 5), float("nan"))}
        self.cpu_s = [0.0] * R  # CPU seconds spent on each row (batch time / rows)
        for r, row in enumerate(rows):
            self._init_row(r, row)

    # ---- initial state ----

    def _init_row(self, r, row):
        g = _gen(row.seed, 1)
        fan_in = [self.d_in - 1] + [self.cfg.hidden] * 4  # nn.Linear's init
        for w, f in zip(self.w, fan_in):
            w[r].uniform_(-1.0 / math.sqrt(f), 1.0 / math.sqrt(f), generator=g)
        if row.bayesian:
            b = self.bayes.index(r)
            self.mu[b] = self._row_flat(r)
            self.rho[b].fill_(float(row.rho_init))
            self.sig[b] = F.softplus(self.rho[b])

    def _row_flat(self, r):
        return torch.cat([w[r].reshape(-1) for w in self.w])

    # ---- one row's state in and out (what a checkpoint holds) ----

    def row_state(self, r):
        """Return row ``r``'s whole state as a dict of tensors and numbers."""
        row, n_kept = self.rows[r], min(self.t, self.rows[r].buffer)
        st = {"t": self.t, "buffer": row.buffer, "weights": self._row_flat(r).clone(),
              "buf_code": self.buf_code[r, :n_kept].to(torch.int32).clone(),
              "buf_r": self.buf_r[r, :n_kept].clone(), "cum": float(self.cum[r]),
              "poison_eaten": int(self.poison_eaten[r]), "poison_seen": int(self.poison_seen[r]),
              "gen": self.gens[r].get_state(), "cpu_s": self.cpu_s[r],
              **{k: v[r].clone() for k, v in self.rec.items()}}
        if row.bayesian:
            b = self.bayes.index(r)
            # sigma too: the kernels' softplus may round otherwise than torch's
            st.update(mu=self.mu[b].clone(), rho=self.rho[b].clone(), sig=self.sig[b].clone(),
                      adam=self.adam[b].clone())
        else:
            st.update(m=torch.cat([self.m[o:o + s] for o, s in zip(self.row_off[r], self.sizes)]),
                      v=torch.cat([self.v[o:o + s] for o, s in zip(self.row_off[r], self.sizes)]))
        return st

    def load_row(self, r, st):
        """Put a state of ``row_state`` into row ``r`` (every row must be at the same step)."""
        row, t = self.rows[r], int(st["t"])
        if self._loaded and t != self.t:
            raise ValueError(f"row {r} ({row.name or row}) is at step {t}, the rows loaded before "
                             f"at step {self.t}: rows at different steps cannot share a batch")
        if t > self.cfg.steps:
            raise ValueError(f"row {r} ({row.name or row}) is {t} steps in, more than this "
                             f"batch's {self.cfg.steps}")
        cap_old, cap = int(st["buffer"]), row.buffer
        if cap_old != cap and not (row.kl_count in ("filled", "fixed")
                                   and t <= min(cap_old, cap)):
            raise ValueError(f"row {r} ({row.name or row}) was run with a buffer of {cap_old}, "
                             f"not {cap}: only an unwrapped buffer with kl_count 'filled' or "
                             "'fixed' may grow")
        self.t = t
        self._loaded.add(r)
        flat = st["weights"]
        for (o, s), w in zip(zip(self.row_off[r], self.sizes), self.w):
            self.store[o:o + s].copy_(flat[:s])
            flat = flat[s:]
        n_kept = st["buf_code"].shape[0]
        self.buf_code[r, :n_kept] = st["buf_code"].to(torch.int64)
        self.buf_r[r, :n_kept] = st["buf_r"]
        self.cum[r], self.poison_eaten[r] = st["cum"], st["poison_eaten"]
        self.poison_seen[r] = st["poison_seen"]
        self.gens[r].set_state(st["gen"])
        self.cpu_s[r] = float(st["cpu_s"])
        for k, v in self.rec.items():  # a shorter run's records are a prefix
            n = min(v.shape[1], st[k].shape[0])
            v[r, :n] = st[k][:n]
        if row.bayesian:
            b = self.bayes.index(r)
            self.mu[b], self.rho[b], self.adam[b] = st["mu"], st["rho"], st["adam"]
            self.sig[b] = st["sig"]
        else:
            m, v = st["m"], st["v"]
            for o, s in zip(self.row_off[r], self.sizes):
                self.m[o:o + s], self.v[o:o + s] = m[:s], v[:s]
                m, v = m[s:], v[s:]

    # ---- the network ----

    def _sample(self, b, seed):
        """Draw Bayesian row ``self.bayes[b]``'s weights w = mu + sigma * eps into the store."""
        r = self.bayes[b]
        if self.native:
            native.library().bbb_sample_seg(
                5, self.seg_len.data_ptr(), self.seg_off[r].data_ptr(), self.store.data_ptr(),
                self.mu[b].data_ptr(), self.sig[b].data_ptr(), self.eps[b].data_ptr(), seed, 1)
            return
        e = self.eps[b, :self.n]
        e.normal_(generator=torch.Generator().manual_seed(seed))
        w = torch.addcmul(self.mu[b], self.sig[b], e)
        for (o, s), piece in zip(zip(self.row_off[r], self.sizes), w.split(self.sizes)):
            self.store[o:o + s].copy_(piece)

    def _layer1(self, codes):
        """Return the first layer's pre-activation (R, B, H) of inputs given as codes (R, B)."""
        R, B = codes.shape
        if self.sparse:
            bags = self.bagtab[codes] + (torch.arange(R) * self.d_in).view(R, 1, 1)
            return F.embedding_bag(bags.view(R * B, -1), self.w[0].view(R * self.d_in, -1),
                                   mode="sum").view(R, B, -1)
        return torch.bmm(self.xtab[codes], self.w[0])

    def forward(self, codes):
        """Return (outputs (R, B), (h1, h2)) of every row on its inputs (codes (R, B))."""
        _, w2, b2, w3, b3 = self.w
        h1 = self._layer1(codes).relu_()
        h2 = torch.baddbmm(b2, h1, w2).relu_()
        # the one output as a sum of products: MKL's matrix-vector product (a bmm with one
        # column) rounds differently with the number of rows in the batch
        out = torch.mul(h2, w3.transpose(1, 2)).sum(-1).add_(b3.view(-1, 1))
        return out, (h1, h2)

    def _update(self, codes, rewards, seeds, step):
        """One Adam step (Adam's ``step``-th) of every row on its minibatch (codes, rewards
        (R, B)); ``seeds[b]``: the weight-noise seed of Bayesian row b for this update."""
        for b in range(len(self.bayes)):
            self._sample(b, seeds[b])
        w1, w2, b2, w3, b3 = self.w
        g1, g2, gb2, g3, gb3 = self.g
        out, (h1, h2) = self.forward(codes)
        go = out.sub_(rewards).unsqueeze(-1).mul_(self.inv_scale)  # d loss / d out
        g3.copy_(torch.mul(h2, go).sum(1).unsqueeze(-1))  # (no one-column bmm: see forward)
        torch.sum(go, 1, keepdim=True, out=gb3)
        gh = torch.ops.aten.threshold_backward(torch.mul(go, w3.transpose(1, 2)), h2, 0)
        torch.bmm(h1.transpose(1, 2), gh, out=g2)
        torch.sum(gh, 1, keepdim=True, out=gb2)
        gh = torch.ops.aten.threshold_backward(torch.bmm(gh, w2.transpose(1, 2)), h1, 0)
        torch.bmm(self.xtab[codes].transpose(1, 2), gh, out=g1)
        for lr, rs in self.lr_groups.items():
            h = _hyper(lr, step)
            if self.native:
                hyper = torch.tensor(h, dtype=torch.float32)
                ln, off = self.group_seg[lr]
                native.library().bbb_adam_seg(
                    len(ln), ln.data_ptr(), off.data_ptr(), self.store.data_ptr(),
                    self.grad.data_ptr(), self.m.data_ptr(), self.v.data_ptr(), hyper.data_ptr(),
                    1)
                continue
            for r in rs:
                for o, s in zip(self.row_off[r], self.sizes):
                    sl = slice(o, o + s)
                    _adam_torch(self.store[sl], self.grad[sl], self.m[sl], self.v[sl], h)
        for b, r in enumerate(self.bayes):
            h = _hyper(self.rows[r].lr, step)
            kl = self.kl_scale[b]
            if self.native:
                kind, consts = self.consts[b]
                hyper = torch.tensor(h, dtype=torch.float32)
                native.library().bbb_backward_adam_seg(
                    5, self.seg_len.data_ptr(), self.seg_off[r].data_ptr(), self.grad.data_ptr(),
                    self.mu[b].data_ptr(), self.rho[b].data_ptr(), self.sig[b].data_ptr(),
                    self.eps[b].data_ptr(), kl, kind, consts.data_ptr(), self.adam[b].data_ptr(),
                    self.n, hyper.data_ptr(), 1)
                continue
            g = torch.cat([self.grad[o:o + s] for o, s in zip(self.row_off[r], self.sizes)])
            e, sigma, rho = self.eps[b, :self.n], self.sig[b], self.rho[b]
            _, dlogp = self.priors[b].log_prob_and_grad(torch.addcmul(self.mu[b], sigma, e))
            g_mu = g.sub_(dlogp, alpha=kl)
            g_rho = g_mu * e * torch.sigmoid(rho) - kl * sigmoid_over_softplus(rho, sigma)
            st = self.adam[b]
            _adam_torch(self.mu[b], g_mu, st[0], st[1], h)
            _adam_torch(rho, g_rho, st[2], st[3], h)
            self.sig[b] = F.softplus(rho)

    # ---- the bandit ----

    def advance(self, until, on_step=None):
        """Run every row from step ``self.t`` to step ``until``; ``on_step(t_done)`` is called after
        each step (checkpointing)."""
        cfg, R = self.cfg, len(self.rows)
        U, B = cfg.updates_per_step, cfg.batch
        if self._loaded and len(self._loaded) < R:
            raise ValueError(f"rows {sorted(set(range(R)) - self._loaded)} were not loaded, the "
                             f"others are at step {self.t}: load every row or none")
        if until > cfg.steps:
            raise ValueError(f"until ({until}) is past the batch's {cfg.steps} steps")
        arange = torch.arange(R)
        ctx_all = torch.stack([self.streams[row.seed][0] for row in self.rows])   # (R, steps)
        coin_all = torch.stack([self.streams[row.seed][1] for row in self.rows])
        expl_all = torch.stack([self.streams[row.seed][2] for row in self.rows])  # (R, steps, 2)
        eps = torch.tensor(self.eps_row)
        max_s = max(self.samples)
        samples = torch.tensor(self.samples)
        caps = [row.buffer for row in self.rows]
        for t in range(self.t, until):
            c0 = time.process_time()
            # every random draw of the step, row by row from the row's own generator
            filled = [min(t + 1, c) for c in caps]
            idx = [torch.randint(0, f, (U, B), generator=g) for f, g in zip(filled, self.gens)]
            seeds = [torch.randint(0, 2 ** 62, (self.samples[r] + U,), generator=self.gens[r]
                                   ).tolist() for r in self.bayes]
            # act: Thompson sampling (the average of a row's weight samples) or epsilon-greedy
            ctx = ctx_all[:, t]
            codes = torch.stack([2 * ctx + EAT, 2 * ctx + PASS], 1)
            value = torch.zeros(R, 2)
            for s in range(max_s):
                for b, r in enumerate(self.bayes):
                    if s < self.samples[r]:
                        self._sample(b, seeds[b][s])
                out = self.forward(codes)[0]
                value = torch.where((s < samples).view(R, 1), value + out, value)
            eat = value[:, EAT] > value[:, PASS]
            explore = expl_all[:, t, 0] < eps
            eat = torch.where(explore, expl_all[:, t, 1] < 0.5, eat)
            is_poison = self.pois[ctx]
            bad = coin_all[:, t] < 0.5
            reward = torch.where(eat, torch.where(is_poison & bad, REWARD_POISON_BAD,
                                                  REWARD_EDIBLE), 0.0)
            self.cum += regret_of(eat, is_poison).double()
            self.poison_eaten += (eat & is_poison).long()
            self.poison_seen += is_poison.long()
            slot = torch.tensor([t % c for c in caps])
            self.buf_code[arange, slot] = 2 * ctx + torch.where(eat, EAT, PASS)
            self.buf_r[arange, slot] = reward
            # learn: U minibatches of B tuples from each row's buffer
            self.kl_scale = [1.0 / _kl_n(self.rows[r], t) for r in self.bayes]
            if U:
                ib = torch.stack(idx, 1)                                   # (U, R, B)
                codes_b = self.buf_code[arange.view(1, R, 1), ib]
                rew_b = self.buf_r[arange.view(1, R, 1), ib]
                for u in range(U):
                    self._update(codes_b[u], rew_b[u], [sd[self.samples[r] + u] for sd, r
                                                       in zip(seeds, self.bayes)], t * U + u + 1)
            self.t = t + 1
            if self.t % cfg.record_every == 0:
                self._record(self.t // cfg.record_every - 1)
            dt = (time.process_time() - c0) / R
            self.cpu_s = [c + dt for c in self.cpu_s]
            if on_step is not None:
                on_step(self.t)

    def _record(self, i):
        self.rec["cum_regret"][:, i] = self.cum.float()
        self.rec["poison_rate"][:, i] = (self.poison_eaten / self.poison_seen.clamp_min(1)).float()
        self.poison_eaten.zero_()
        self.poison_seen.zero_()
        for b, r in enumerate(self.bayes):
            for k, part in enumerate(self.sig[b].split(self.sizes)):
                self.rec["sigma_layers"][r, i, k] = part.mean()

    def _finite(self, r):
        """True when row ``r``'s weights (and a Bayesian row's mu and rho) are all finite."""
        parts = [self._row_flat(r)]
        if self.rows[r].bayesian:
            b = self.bayes.index(r)
            parts += [self.mu[b], self.rho[b]]
        return all(bool(torch.isfinite(t).all()) for t in parts)

    def results(self):
        """Return one dict per row: its spec, the records (lists), CPU seconds, step and whether
        its weights ended finite."""
        out = []
        for r, row in enumerate(self.rows):
            sl = self.rec["sigma_layers"][r]
            mean_sigma = (sl * torch.tensor(self.sizes, dtype=torch.float32)).sum(1) / self.n
            out.append({"row": asdict(row), "steps": self.t,
                        "record_every": self.cfg.record_every,
                        "cum_regret": self.rec["cum_regret"][r].tolist(),
                        "poison_rate": self.rec["poison_rate"][r].tolist(),
                        "mean_sigma": mean_sigma.tolist() if row.bayesian else None,
                        "sigma_layers": sl.tolist() if row.bayesian else None,
                        "cpu_s": self.cpu_s[r], "native": self.native,
                        "finite": self._finite(r),
                        "sparse_first_layer": self.sparse})
        return out


def row_checkpoint_name(row, cfg):
    """Return a file name for a row's checkpoint, unique to its setting and network."""
    shared = {k: v for k, v in asdict(cfg).items() if k != "steps"}
    key = repr(sorted(row.key().items())) + repr(sorted(shared.items()))
    return f"row_s{row.seed}_{hashlib.sha256(key.encode()).hexdigest()[:12]}.pt"


def run_rows(rows, cfg, features, poisonous, checkpoint_dir=None, checkpoint_every=1000,
             engine_class=None):
    """Run every row of ``rows`` (RowSpecs) for ``cfg.steps`` steps as one batch; return one
    result dict per row (``BatchedRuns.results``), in the order of ``rows``.

    With ``checkpoint_dir`` each row's state is saved to its own file there
    (``row_checkpoint_name``) every ``checkpoint_every`` steps and at the end, and a row resumes
    from its file. Rows found at different steps are brought to the same step first (the rows
    behind run as a batch of their own), which changes no number. ``engine_class``: a subclass of
    BatchedRuns to run them with (one that records more, e.g.); BatchedRuns by default."""
    check_rows(rows, cfg)
    if len({row_checkpoint_name(r, cfg) for r in rows}) < len(rows):
        raise ValueError("two rows have the same setting and seed: they would be the same run")
    data_id = data_hash(features, poisonous)
    states, paths = [None] * len(rows), [None] * len(rows)
    if checkpoint_dir is not None:
        Path(checkpoint_dir).mkdir(parents=True, exist_ok=True)
        for i, row in enumerate(rows):
            paths[i] = Path(checkpoint_dir) / row_checkpoint_name(row, cfg)
            if paths[i].exists():
                st = load_checkpoint(paths[i])
                check_same_run(paths[i], st.get("run"), row_fingerprint(row, cfg, data_id))
                if int(st["t"]) > cfg.steps:
                    raise ValueError(f"{paths[i]} is {int(st['t'])} steps into its run, more than "
                                     f"this batch's {cfg.steps}: delete it or use another "
                                     "checkpoint directory")
                states[i] = st
    t_of = [0 if s is None else int(s["t"]) for s in states]
    while len(set(t_of)) > 1:  # bring the rows behind up to the next step some row is at
        low, nxt = min(t_of), sorted(set(t_of))[1]
        group = [i for i, t in enumerate(t_of) if t == low]
        sub = _batch(rows, group, cfg, features, poisonous, states, engine_class)
        sub.advance(nxt)
        for j, i in enumerate(group):
            states[i] = sub.row_state(j)
            if paths[i] is not None:
                _save(paths[i], states[i], rows[i], cfg, data_id)
            t_of[i] = nxt
    engine = _batch(rows, range(len(rows)), cfg, features, poisonous, states, engine_class)

    def on_step(t):
        if paths[0] is not None and (t % checkpoint_every == 0 or t == cfg.steps):
            for r, path in enumerate(paths):
                _save(path, engine.row_state(r), rows[r], cfg, data_id)
    engine.advance(cfg.steps, on_step)
    return engine.results()


def _batch(rows, which, cfg, features, poisonous, states, engine_class=None):
    which = list(which)
    engine = (engine_class or BatchedRuns)([rows[i] for i in which], cfg, features, poisonous)
    for j, i in enumerate(which):
        if states[i] is not None:
            engine.load_row(j, states[i])
    return engine


def _save(path, state, row, cfg, data_id):
    save_checkpoint(path, run=row_fingerprint(row, cfg, data_id), **state)
