"""helpers/bandit_agents.py: the agents of Riquelme et al. (2018) learn a toy bandit whose optimal
arm is known, their Bayesian linear regression is the exact posterior, the batched bootstrap heads
train as separate networks do, the same seed gives the same actions, and bad inputs say what to
pass."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from helpers import bandit as B
from helpers import bandit_agents as BA
from helpers.utils import one_thread

ROOT = Path(__file__).resolve().parent.parent
SMALL = dict(hidden=32, updates_per_step=8, batch=32)  # the toy needs no 2 x 100 network
LEARNERS = {"lin_full_post": {}, "neural_linear": SMALL, "bootstrap": dict(SMALL, heads=5),
            "dropout": SMALL}
NOISE = 0.1


@pytest.fixture(autouse=True)
def _one_thread():
    """Small networks: one thread (a second one only waits, and on a busy machine much longer)."""
    with one_thread():
        yield


def play_toy(agent, steps, seed=0):
    """Two arms, context x ~ N(0, 1): arm 0 pays x + N(0, NOISE^2), arm 1 pays -x + N(0, NOISE^2),
    so arm 0 is optimal exactly when x > 0. Return (actions, whether each was optimal)."""
    g = torch.Generator().manual_seed(123 + seed)
    xs = torch.randn(steps, 1, generator=g)
    noise = NOISE * torch.randn(steps, 2, generator=g)
    actions, optimal = [], []
    for t in range(steps):
        a = agent.act(xs[t])
        agent.update(xs[t], a, float((1 - 2 * a) * xs[t, 0] + noise[t, a]))
        actions.append(a)
        optimal.append(a == (0 if xs[t, 0] > 0 else 1))
    return actions, optimal


# ---- they learn ----

@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_learning_agents_pick_the_optimal_arm(name):
    """The arms' gap at x is 2|x|: an agent whose sampled value difference is off by delta picks
    wrong only where |x| < delta / 2, which N(0, 1) gives probability ~0.4 delta. 90% right on
    the last 100 steps allows delta ~0.25. LinFullPost's posterior after ~200 tuples per arm
    (noise 0.1, the IG(6, 6) prior's sigma^2 pulled to ~0.06) puts its sampled boundary within
    ~0.02 of 0 (about 1% wrong); the networks fit x and -x closely after 3,200 updates.
    An agent that ignored the context would sit near 50%."""
    agent = BA.make_agent(name, 1, 2, seed=0, **LEARNERS[name])
    _, optimal = play_toy(agent, 400)
    assert sum(optimal[-100:]) >= 90, (name, sum(optimal[-100:]))


def test_uniform_random_does_not_learn():
    """Uniform random is right with probability 1/2 at every step: of 100 steps, >= 90 right has
    probability ~1e-17 and outside [30, 70] ~8e-5."""
    _, optimal = play_toy(BA.make_agent("uniform", 1, 2, seed=0), 400)
    assert 30 <= sum(optimal[-100:]) <= 70


# ---- the Bayesian linear regression ----

def _regression(n, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, dtype=torch.float64, generator=g)
    beta = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64)[:d]
    y = x @ beta + 0.3 * torch.randn(n, dtype=torch.float64, generator=g)
    return x, y, beta


def test_posterior_is_ridge_regression_and_tends_to_least_squares():
    x, y, beta = _regression(4000)
    lam = 0.25
    blr = BA.BayesLinReg(2, 4, a0=6.0, b0=6.0, lambda_prior=lam)
    blr.rebuild(torch.zeros(4000, dtype=torch.long), x, y)  # every tuple is action 0's
    mu, chol, a, b = blr.posterior()
    # the posterior mean is exactly ridge regression = least squares on [X; sqrt(lam) I]
    aug_x = torch.cat([x, math.sqrt(lam) * torch.eye(4, dtype=torch.float64)])
    aug_y = torch.cat([y, torch.zeros(4, dtype=torch.float64)])
    assert torch.allclose(mu[0], torch.linalg.lstsq(aug_x, aug_y.unsqueeze(1)).solution[:, 0],
                          atol=1e-10)
    # with 4,000 points the prior's pull (lam / n) is negligible: ordinary least squares
    ols = torch.linalg.lstsq(x, y.unsqueeze(1)).solution[:, 0]
    assert torch.allclose(mu[0], ols, atol=1e-3)
    assert torch.allclose(mu[0], beta, atol=0.05)
    # a = a0 + n / 2, b = b0 + (|y - X mu|^2 + lam |mu|^2) / 2, and Lambda = L L'
    assert a[0] == 6.0 + 2000
    resid = ((y - x @ mu[0]) ** 2).sum() + lam * (mu[0] ** 2).sum()
    assert torch.isclose(b[0], 6.0 + 0.5 * resid, rtol=1e-9)
    assert torch.allclose(chol[0] @ chol[0].T, x.T @ x + lam * torch.eye(4, dtype=torch.float64))
    # action 1 saw nothing: its posterior is the prior
    assert torch.equal(mu[1], torch.zeros(4, dtype=torch.float64)) and (a[1], b[1]) == (6.0, 6.0)


def test_posterior_samples_have_the_student_t_spread_and_shrink_with_data():
    """beta's marginal posterior is a Student t with 2a degrees of freedom: mean mu, covariance
    b / (a - 1) Lambda^-1. Its spread falls as 1 / sqrt(n): 100 times the data, a tenth."""
    spread = {}
    for n in (50, 5000):
        x, y, _ = _regression(n, seed=n)
        blr = BA.BayesLinReg(1 + 1, 4)
        blr.rebuild(torch.zeros(n, dtype=torch.long), x, y)
        mu, _, a, b = blr.posterior()
        g = torch.Generator().manual_seed(1)
        draws = torch.stack([blr.sample(g)[0] for _ in range(2000)])
        cov = b[0] / (a[0] - 1) * torch.linalg.inv(x.T @ x + 0.25 * torch.eye(4, dtype=x.dtype))
        sd = cov.diagonal().sqrt()
        assert torch.all((draws.mean(0) - mu[0]).abs() < 5 * sd / math.sqrt(2000))
        assert torch.allclose(draws.std(0), sd, rtol=0.1)  # 2,000 draws: sd within ~2%
        spread[n] = draws.std(0)
    assert torch.all(spread[5000] < spread[50] / 4)


def test_inverse_gamma_draws_are_those_of_torch_distributions():
    a = torch.tensor([6.0, 80.0, 2.5], dtype=torch.float64)
    b = torch.tensor([6.0, 20.0, 0.1], dtype=torch.float64)
    g = torch.Generator().manual_seed(7)
    torch.manual_seed(7)
    ours = BA.sample_inverse_gamma(a, b, g)
    assert torch.equal(ours, torch.distributions.InverseGamma(a, b).sample())
    with pytest.raises(ValueError):
        BA.sample_inverse_gamma(torch.tensor([-1.0]), torch.tensor([1.0]), g)


def test_statistics_kept_up_to_date_equal_a_rebuild_from_the_buffer():
    """A ring buffer of 16 tuples after 50 steps: each overwritten tuple left the statistics."""
    lin = BA.make_agent("lin_full_post", 1, 2, seed=0, buffer=16)
    play_toy(lin, 50)
    kept = [t.clone() for t in (lin.blr.zz, lin.blr.zy, lin.blr.yy, lin.blr.n)]
    lin.refresh()
    for old, new in zip(kept, (lin.blr.zz, lin.blr.zy, lin.blr.yy, lin.blr.n)):
        assert torch.allclose(old, new, atol=1e-9)
    assert lin.blr.n.sum() == 16
    # an agent filled with the stored tuples (no learning steps) holds the same statistics
    filled = BA.make_agent("lin_full_post", 1, 2, seed=0, buffer=16)
    filled.fill(lin.buffer.ctx, lin.buffer.act, lin.buffer.rew)
    assert torch.allclose(filled.blr.zz, lin.blr.zz) and torch.equal(filled.blr.n, lin.blr.n)
    boot = BA.make_agent("bootstrap", 1, 2, seed=0, buffer=16, heads=3, **SMALL)
    boot.fill(lin.buffer.ctx, lin.buffer.act, lin.buffer.rew)
    assert boot.t == 16 and boot.w.sum() > 0  # every head's weights of the filled tuples drawn
    # NeuralLinear between refreshes (a fixed network: the stored features stay exact)
    nl = BA.make_agent("neural_linear", 1, 2, seed=0, buffer=16, refresh_every=1000,
                       **{**SMALL, "updates_per_step": 0})
    play_toy(nl, 50)
    kept = [t.clone() for t in (nl.blr.zz, nl.blr.zy, nl.blr.yy, nl.blr.n)]
    nl.refresh()
    for old, new in zip(kept, (nl.blr.zz, nl.blr.zy, nl.blr.yy, nl.blr.n)):
        assert torch.allclose(old, new, atol=1e-6)


def test_neural_linear_regresses_on_its_network_features():
    """After each step's training the features of every stored tuple are recomputed: the
    posterior mean of each action is ridge regression on the current network's features."""
    agent = BA.make_agent("neural_linear", 1, 2, seed=0, **SMALL)
    play_toy(agent, 60)
    b = agent.buffer
    z = agent.features(b.inputs[:b.filled]).to(torch.float64)
    mu = agent.blr.posterior()[0]
    lam = agent.blr.lambda_prior
    for a in range(2):
        za, ya = z[b.act[:b.filled] == a], b.rew[:b.filled][b.act[:b.filled] == a].double()
        ridge = torch.linalg.solve(za.T @ za + lam * torch.eye(za.shape[1], dtype=za.dtype),
                                   za.T @ ya)
        assert torch.allclose(mu[a], ridge, atol=1e-6, rtol=1e-5)


# ---- the batched bootstrap heads ----

def _separate_nets(net):
    """K nn.Sequential networks holding the batched network's weights."""
    nets = []
    for k in range(net.K):
        w1, w2, b2, w3, b3 = (w[k].detach().clone() for w in net.w)
        m = torch.nn.Sequential(torch.nn.Linear(net.d_in, net.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(net.hidden, net.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(net.hidden, 1))
        with torch.no_grad():
            m[0].weight.copy_(w1[:-1].T)
            m[0].bias.copy_(w1[-1])
            m[2].weight.copy_(w2.T)
            m[2].bias.copy_(b2[0])
            m[4].weight.copy_(w3.T)
            m[4].bias.copy_(b3[0])
        nets.append(m)
    return nets


@pytest.mark.parametrize("weighted,dropout", [(False, False), (True, False), (True, True)])
def test_batched_heads_train_as_separate_networks(weighted, dropout):
    """Five Adam steps of the batched K-head network (hand-written backward) equal five steps of K
    separate nn.Sequential networks under autograd and torch.optim.Adam, each head on its own
    minibatch, bootstrap weights and dropout masks."""
    K, d, h, n, sigma = 3, 5, 7, 6, 0.7
    g = torch.Generator().manual_seed(0)
    net = BA.HeadsMLP(K, d, h, lr=0.01, generator=g)
    refs = _separate_nets(net)
    opts = [torch.optim.Adam(m.parameters(), lr=0.01) for m in refs]
    for _ in range(5):
        x = torch.cat([torch.randn(K, n, d, generator=g), torch.ones(K, n, 1)], 2)
        r = torch.randn(K, n, generator=g)
        w = torch.poisson(torch.ones(K, n), generator=g) if weighted else None
        masks = tuple(torch.bernoulli(torch.full((K, n, h), 0.8), generator=g) / 0.8
                      for _ in range(2)) if dropout else None
        for k, (m, opt) in enumerate(zip(refs, opts)):
            hid = torch.relu(m[0](x[k, :, :d]))
            hid = hid * masks[0][k] if dropout else hid
            hid = torch.relu(m[2](hid))
            hid = hid * masks[1][k] if dropout else hid
            sq = 0.5 * ((m[4](hid).squeeze(-1) - r[k]) / sigma) ** 2
            loss = (sq * (w[k] if weighted else 1.0)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.update(x, r, w, masks, noise_sigma=sigma)
    for k, m in enumerate(refs):
        got = _separate_nets(net)[k]
        for p_ref, p_got in zip(m.parameters(), got.parameters()):
            assert torch.allclose(p_ref, p_got, atol=1e-5), (k, (p_ref - p_got).abs().max())
    # the heads started apart and stayed apart
    assert not torch.allclose(net.w[0][0], net.w[0][1])


def test_bootstrap_heads_differ_and_weights_follow_the_resample():
    agent = BA.make_agent("bootstrap", 1, 2, seed=0, heads=4, **SMALL)
    play_toy(agent, 40)
    x = torch.tensor([0.3])
    values = torch.stack([agent.values(x, k) for k in range(4)])
    assert values.std(0).min() > 0  # four heads, four different functions
    w = agent.w[:, :40]
    assert set(w.unique().tolist()) <= set(range(10)) and w.max() >= 2  # Poisson counts
    bern = BA.make_agent("bootstrap", 1, 2, seed=0, heads=4, resample="bernoulli", p=0.5,
                         **SMALL)
    play_toy(bern, 40)
    assert set(bern.w[:, :40].unique().tolist()) == {0.0, 1.0}


def test_dropout_samples_one_network_per_decision():
    agent = BA.make_agent("dropout", 1, 2, seed=0, **SMALL)
    play_toy(agent, 30)
    x = torch.tensor([0.3])
    draws = torch.stack([agent.values(x) for _ in range(20)])
    assert draws[:, 0].std() > 0  # dropout stays on at decision time
    plain = BA.make_agent("dropout", 1, 2, seed=0, keep_prob=1.0, **SMALL)
    play_toy(plain, 30)
    rows = plain.inputs(x).unsqueeze(0)
    assert torch.equal(plain.values(x), plain.net.forward(rows)[0][0])  # keep 1: no dropout


# ---- determinism, the mushroom bandit, the tools ----

@pytest.mark.parametrize("name", sorted(BA.AGENTS))
def test_the_same_seed_gives_the_same_actions(name):
    settings = SMALL if name not in ("uniform", "lin_full_post") else {}
    runs = [play_toy(BA.make_agent(name, 1, 2, seed=s, **settings), 60)[0] for s in (3, 3, 4)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def _mushrooms():
    g = torch.Generator().manual_seed(0)
    x = torch.nn.functional.one_hot(torch.randint(0, 4, (50,), generator=g), 4).float()
    return x, x[:, 0] > 0  # category 0 is poisonous


def test_run_agents_plays_the_mushroom_bandit():
    x, poison = _mushrooms()
    cfg = B.BanditConfig(steps=40, seeds=(0, 1), hidden=8, buffer=64, updates_per_step=2,
                         batch=4, record_every=10)
    names = sorted(BA.AGENTS)
    res = BA.run_agents(names, cfg, x, poison)
    assert res.cum_regret.shape == (len(names), 2, 4) and res.names == names
    assert torch.all(res.cum_regret[:, :, 1:] >= res.cum_regret[:, :, :-1])
    assert torch.all((res.poison_eaten >= 0) & (res.poison_eaten <= 1))
    assert res.agent_update_ms["uniform"] is None and res.agent_update_ms["dropout"] > 0
    again = BA.run_agents(names, cfg, x, poison)
    assert torch.equal(res.cum_regret, again.cum_regret)
    # regret is helpers.bandit's: uniform eats half the poisonous ones (15 each) and passes half
    # the edible ones (5 each); its mushroom sequence is helpers.bandit's for the seed
    ctx, coin = B.mushroom_stream(len(x), 40, 0)
    assert torch.equal(ctx, B.mushroom_stream(len(x), 80, 0)[0][:40])
    uniform = BA.make_agent("uniform", 4, 2, seed=0, buffer=64)
    regret = 0.0
    for t in range(40):
        eat = uniform.act(x[ctx[t]]) == B.EAT
        uniform.update(x[ctx[t]], B.EAT if eat else B.PASS, 0.0)
        regret += float(B.regret_of(torch.tensor(eat), poison[ctx[t]]))
    assert res.cum_regret[names.index("uniform"), 0, -1] == regret


def test_bad_inputs_say_what_to_pass():
    agent = BA.make_agent("neural_linear", 3, 2, seed=0, **SMALL)
    with pytest.raises(ValueError, match="context_dim=3: pass a 1-D tensor of 3 numbers"):
        agent.act(torch.zeros(4))
    with pytest.raises(ValueError, match="one context, not a batch"):
        agent.act(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="inf or nan"):
        agent.update(torch.tensor([0.0, float("nan"), 1.0]), 0, 1.0)
    with pytest.raises(ValueError, match=r"action must be an int in \[0, 2\)"):
        agent.update(torch.zeros(3), 2, 1.0)
    with pytest.raises(ValueError, match="reward must be a finite number"):
        agent.update(torch.zeros(3), 0, float("inf"))
    with pytest.raises(ValueError, match="heads must be a whole number >= 1"):
        BA.make_agent("bootstrap", 3, heads=0)
    with pytest.raises(ValueError, match="resample must be one of"):
        BA.make_agent("bootstrap", 3, resample="jackknife")
    with pytest.raises(ValueError, match=r"keep_prob must be in \(0, 1\]"):
        BA.make_agent("dropout", 3, keep_prob=0.0)
    with pytest.raises(ValueError, match="lambda_prior must be a positive number"):
        BA.make_agent("lin_full_post", 3, lambda_prior=0.0)
    with pytest.raises(ValueError, match="context_dim must be a whole number >= 1"):
        BA.make_agent("uniform", 0)
    with pytest.raises(ValueError, match="n_actions must be a whole number >= 2"):
        BA.make_agent("uniform", 3, 1)
    with pytest.raises(ValueError, match="refresh_every must be"):
        BA.make_agent("neural_linear", 3, refresh_every=0)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        BA.make_agent("uniform", 3, seed=-1)
    with pytest.raises(ValueError, match=r"unknown agent 'neural'; choose one of \["):
        BA.make_agent("neural", 3)
    with pytest.raises(ValueError, match="takes no setting \\['hidden'\\]; its settings"):
        BA.make_agent("lin_full_post", 3, hidden=10)
    blr = BA.BayesLinReg(2, 3)
    blr.add(0, torch.tensor([1.0, 0.0, 0.0]), 1.0, sign=-1.0)  # removed, never added
    with pytest.raises(ValueError, match="action 0 is not positive definite"):
        blr.posterior()
    x, poison = _mushrooms()
    cfg = B.BanditConfig(steps=4, seeds=(0,), hidden=8, buffer=64, updates_per_step=1, batch=4,
                         record_every=2, agents=(B.AgentSpec("neural_linear"),))
    with pytest.raises(ValueError, match="helpers.bandit_agents.run_agents"):
        B.run(cfg, x, poison)
    with pytest.raises(ValueError, match="unknown agent"):
        BA.run_agents(["bbb"], cfg, x, poison)


def test_bandit_runs_tool_runs_the_agents(shared_data, tmp_path, monkeypatch, capsys):
    """tools/bandit_runs.py --agents on the smoke profile (60 mushrooms, 8 updates a step; two
    cheap agents: run_agents above plays every one)."""
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))
    names = ["lin_full_post", "uniform"]
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "bandit_runs.py"), "--profile",
                           "smoke", "--buffers", "paper", "--workers", "1", "--agents", *names],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    rec = json.loads((tmp_path / "results" / B.NB / "showdown_paper.json").read_text())
    assert rec["metrics"]["complete"] and rec["config"]["agents"] == names
    row = rec["metrics"]["per_seed"][0]
    assert row["names"] == names and len(row["cum_regret"]) == len(names)
    assert set(rec["metrics"]["summary"]) == set(names)
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import bandit_runs
    finally:
        sys.path.remove(str(ROOT / "tools"))
    with pytest.raises(SystemExit) as exit_info:
        bandit_runs.main(["--agents", "bbb"])
    assert exit_info.value.code == 2 and "unknown agents ['bbb']" in capsys.readouterr().err


def test_the_stacked_bandit_knows_every_showdown_agent_by_name():
    """helpers.bandit refuses the Showdown's agents by name without importing their module
    (which imports it): its list must be the registry's."""
    from helpers import bandit as B
    from helpers import bandit_agents as BA
    assert set(B.SHOWDOWN_AGENTS) == set(BA.AGENTS)
    cfg = B.BanditConfig(agents=(B.AgentSpec("neural_linear"),))
    with pytest.raises(ValueError, match="run_agents"):
        B.run(cfg, None, None)
