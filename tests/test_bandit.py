import math

import pytest
import torch

from helpers import bandit as B
from helpers import load_checkpoint, save_checkpoint
from helpers.priors import ScaleMixturePrior


def test_regret_and_rewards():
    eat = torch.tensor([True, True, False, False])
    poison = torch.tensor([False, True, False, True])
    assert B.expected_reward(eat, poison).tolist() == [5.0, -15.0, 0.0, 0.0]
    assert B.regret_of(eat, poison).tolist() == [0.0, 15.0, 5.0, 0.0]


def _toy():
    g = torch.Generator().manual_seed(0)
    x = torch.nn.functional.one_hot(torch.randint(0, 4, (50,), generator=g), 4).float()
    return x, x[:, 0] > 0  # category 0 is poisonous


def test_tiny_run_shapes_and_resume(tmp_path):
    x, poison = _toy()
    cfg = B.BanditConfig(steps=20, seeds=(0, 1), hidden=8, buffer=64, updates_per_step=2,
                         batch=4, record_every=5)
    full = B.run(cfg, x, poison)
    assert full.cum_regret.shape == (4, 2, 4) and full.names[0] == "bbb"
    assert torch.all(full.cum_regret[:, :, 1:] >= full.cum_regret[:, :, :-1])  # cumulative
    assert full.mean_sigma.shape == (2, 4) and torch.all(full.mean_sigma > 0)
    ck = tmp_path / "bandit.pt"
    half = B.BanditConfig(**{**cfg.__dict__, "steps": 20})
    torch.manual_seed(123)
    B.run(half, x, poison, checkpoint=ck, checkpoint_every=10)
    # a run that finds a finished checkpoint reproduces the stored curves
    again = B.run(half, x, poison, checkpoint=ck)
    assert torch.equal(again.cum_regret, B.run(half, x, poison, checkpoint=ck).cum_regret)


def test_interrupted_run_resumes_identically(tmp_path):
    x, poison = _toy()
    cfg = B.BanditConfig(steps=20, seeds=(0,), hidden=8, buffer=64, updates_per_step=2, batch=4,
                         record_every=5)
    straight = B.run(cfg, x, poison)
    ck = tmp_path / "b.pt"
    short = B.BanditConfig(**{**cfg.__dict__, "steps": 10})
    B.run(short, x, poison, checkpoint=ck, checkpoint_every=10)
    state = load_checkpoint(ck)
    assert int(state["t"]) == 10
    # only the 10 filled rows of the 64-tuple buffer are stored, the one-hot inputs as bytes
    assert state["buf_x"].shape == (4, 10, x.shape[1] + 3) and state["buf_x"].dtype == torch.uint8
    # continue the same 20-step run from the 10-step checkpoint
    resumed = B.run(cfg, x, poison, checkpoint=ck)
    assert torch.allclose(resumed.cum_regret, straight.cum_regret)
    # features that are not 0/1 are stored as they are, and resume the same way
    xs = 0.5 * x
    straight = B.run(cfg, xs, poison)
    ck2 = tmp_path / "b2.pt"
    B.run(short, xs, poison, checkpoint=ck2, checkpoint_every=10)
    assert load_checkpoint(ck2)["buf_x"].dtype == torch.float32
    assert torch.allclose(B.run(cfg, xs, poison, checkpoint=ck2).cum_regret, straight.cum_regret)
    # a checkpoint of a longer buffer than the run's says so
    small = B.BanditConfig(**{**cfg.__dict__, "buffer": 8, "batch": 4})
    with pytest.raises(ValueError, match="another buffer setting"):
        B.run(small, x, poison, checkpoint=ck)
    # so does a checkpoint of a longer run (ck is at step 20)
    with pytest.raises(ValueError, match="more than this run's 10"):
        B.run(short, x, poison, checkpoint=ck)


def _reference_net(net):
    """Leaf copies of net's mu, rho and store, and a function giving outputs from them + eps."""
    mu = net.mu.detach().clone().requires_grad_()
    rho = net.rho.detach().clone().requires_grad_()
    store = net.store.detach().clone().requires_grad_()

    def forward(x, eps):
        sigma = torch.nn.functional.softplus(rho)
        w_b = mu + sigma * eps
        layers = []
        for part, o, n, (a, b) in zip(w_b.split(net.bayes_len), net.bayes_off, net.bayes_len,
                                      net.shapes):
            plain = store[o + n: o + net.A * (a * b)].view(net.A - net.nb, a, b)
            layers.append(torch.cat([part.view(net.nb, a, b), plain]))
        w1, w2, b2, w3, b3 = layers
        h = torch.relu(torch.bmm(x, w1))
        h = torch.relu(torch.baddbmm(b2, h, w2))
        logq = torch.distributions.Normal(mu, sigma).log_prob(w_b).sum()
        return torch.baddbmm(b3, h, w3).squeeze(-1), logq - net.prior.log_prob(w_b).sum()
    return (mu, rho, store), forward


@pytest.mark.parametrize("use_native", [True, False])
def test_hand_written_update_matches_autograd_and_adam(use_native):
    """Three updates of the fused path equal autograd + torch.optim.Adam on the same noise."""
    torch.manual_seed(0)
    A, nb, d, h = 3, 2, 5, 7
    prior = ScaleMixturePrior(0.5, 1.0, math.exp(-3))
    # a large Adam eps makes each step proportional to the gradient, so gradients are checked
    net = B.StackedNets(A, nb, d, h, rho_init=-2.0, prior=prior, lr=0.05, adam_eps=0.5)
    if use_native and not net.native:
        pytest.skip("C kernels unavailable")
    net.native = use_native
    params, ref_forward = _reference_net(net)
    opt = torch.optim.Adam(params, lr=0.05, eps=0.5)
    for _ in range(3):
        x = torch.cat([torch.randn(A, 6, d), torch.ones(A, 6, 1)], 2)
        r = torch.randn(A, 6)
        net.sample()
        out, kl = ref_forward(x, net.eps.clone())
        loss = (0.5 * ((out - r) / 0.7) ** 2).mean(1).sum() + 0.3 * kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        net.update(x, r, noise_sigma=0.7, kl_scale=0.3)
    mu, rho, store = params
    assert torch.allclose(net.mu, mu.detach(), atol=1e-5)
    assert torch.allclose(net.rho, rho.detach(), atol=1e-5)
    for o, n in zip(net.plain_off, net.plain_len):
        assert torch.allclose(net.store[o:o + n], store.detach()[o:o + n], atol=1e-5)
    assert torch.allclose(net.sig, torch.nn.functional.softplus(net.rho), atol=1e-6) or not use_native


def test_kernel_noise_is_standard_normal():
    net = B.StackedNets(2, 2, 50, 100, rho_init=0.0, prior=ScaleMixturePrior(0.5, 1.0, 0.1))
    draws = []
    for _ in range(5):
        net.sample()
        draws.append(net.eps.clone())
    e = torch.cat(draws)
    assert abs(e.mean()) < 0.01 and abs(e.std() - 1) < 0.01
    assert abs((e ** 4).mean() - 3) < 0.1   # Gaussian kurtosis
    assert not torch.equal(draws[0], draws[1])


def test_config_errors_say_what_to_do():
    with pytest.raises(ValueError, match="kl_count must be one of"):
        B.BanditConfig(kl_count="buffer")
    with pytest.raises(ValueError, match="kl_count must be one of"):
        B.BanditConfig(kl_count=4096)
    with pytest.raises(ValueError, match="kl_floor must be >= 0"):
        B.BanditConfig(kl_floor=-1)
    with pytest.raises(ValueError, match="unknown buffer recipe"):
        B.buffer_settings("last", 100)
    with pytest.raises(ValueError, match="prior must be"):
        B.BanditConfig(prior=(0.5, 1.0))
    with pytest.raises(ValueError, match="buffer >= batch"):
        B.BanditConfig(buffer=32, batch=64)
    assert isinstance(B.make_prior(0.05), B.GaussianPrior)
    assert isinstance(B.make_prior((0.5, 1.0, 0.01)), ScaleMixturePrior)


def test_run_restores_subnormal_floats():
    """The bandit flushes subnormals to zero while it runs and switches that off afterwards."""
    x, poison = _toy()
    cfg = B.BanditConfig(steps=4, seeds=(0,), hidden=8, buffer=64, updates_per_step=1, batch=4,
                         record_every=2)
    B.run(cfg, x, poison)
    tiny = torch.tensor([1e-39], dtype=torch.float32)   # subnormal in float32
    assert (tiny * 1.0).item() > 0.0


def test_checkpoint_of_another_layout_gives_a_clear_error(tmp_path):
    x, poison = _toy()
    cfg = B.BanditConfig(steps=4, seeds=(0,), hidden=8, buffer=64, updates_per_step=1, batch=4,
                         record_every=2)
    ck = tmp_path / "old.pt"
    save_checkpoint(ck, model={"mu": torch.zeros(3)}, optimizer={})
    with pytest.raises(ValueError, match="delete it"):
        B.run(cfg, x, poison, checkpoint=ck)


def test_buffer_recipes_and_kl_floor():
    assert B.buffer_settings("paper", 50_000) == {"buffer": 4096, "kl_count": "capacity",
                                                  "kl_floor": 0}
    keep = B.buffer_settings("keep_all", 50_000)
    assert keep["buffer"] == 50_000 and keep["kl_count"] == "filled" and keep["kl_floor"] == 4096
    x, poison = _toy()
    base = dict(steps=20, seeds=(0,), hidden=8, buffer=64, updates_per_step=2, batch=4,
                record_every=5)
    runs = {}
    for key, kw in {"capacity": dict(kl_count="capacity"),
                    "floored": dict(kl_count="filled", kl_floor=64),
                    "filled": dict(kl_count="filled")}.items():
        torch.manual_seed(0)
        runs[key] = B.run(B.BanditConfig(**base, **kw), x, poison).mean_sigma
    # KL / max(floor, stored) with floor = capacity is KL / capacity while the buffer fills
    assert torch.equal(runs["floored"], runs["capacity"])
    # without the floor the first steps divide by the few tuples stored: a different posterior
    assert not torch.allclose(runs["filled"], runs["capacity"])


def test_reported_runs_use_the_choice_of_the_tuning_seeds():
    tuning = {"metrics": {"chosen": {
        "paper": {"prior": 0.05, "recipe": "paper"},
        "keep_all": {"prior": [0.5, 1.0, 0.0025], "recipe": "keep_all_fixed_kl"}}}}
    cfg = B.reported_config("keep_all", tuning, steps=5000, seed=3)
    assert cfg.seeds == (3,) and cfg.prior == (0.5, 1.0, 0.0025)
    assert (cfg.buffer, cfg.kl_count, cfg.kl_floor) == (5000, "fixed", 4096)
    assert B.reported_config("paper", tuning, 5000, 0).buffer == 4096
    with pytest.raises(ValueError, match="no choice for buffer"):
        B.reported_config("other", tuning, 5000, 0)
    rows = [{"names": ["bbb", "greedy"], "cum_regret": [[1.0, 4.0], [2.0, 10.0]]},
            {"names": ["bbb", "greedy"], "cum_regret": [[3.0, 6.0], [2.0, 2.0]]},
            {"names": ["bbb", "greedy"], "cum_regret": [[1.0, 8.0], [2.0, 30.0]]}]
    s = B.summarise_reported(rows)
    assert s["bbb"]["final_per_seed"] == [4.0, 6.0, 8.0] and s["bbb"]["mean"] == 6.0
    assert s["bbb"]["sd"] == 2.0 and s["greedy"]["median"] == 10.0
    assert s["bbb"]["curve_mean"] == [5 / 3, 6.0]


def test_window_census_counts_the_regret_of_the_last_steps(tmp_path):
    x, poison = _toy()
    for buffer in (16, 64):  # a ring buffer that wrapped, and one that kept every tuple
        cfg = B.BanditConfig(steps=30, seeds=(0, 1), hidden=8, buffer=buffer, updates_per_step=2,
                             batch=4, record_every=5)
        ck = tmp_path / f"census{buffer}.pt"
        B.run(cfg, x, poison, checkpoint=ck)
        state = load_checkpoint(ck)
        rows = B.window_census(state, x, poison, seeds=(0, 1), last=10)
        assert [(r["agent"], r["seed"]) for r in rows[:3]] == [("bbb", 0), ("bbb", 1),
                                                              ("greedy", 0)]
        rec = state["regret_rec"]  # cumulative regret every 5 steps, one row per agent and seed
        for a, row in enumerate(rows):
            assert row["regret_last"] == pytest.approx(float(rec[a, -1] - rec[a, -3]))
            assert row["stored"] == min(30, buffer)
            assert row["eaten_poisonous_stored"] >= row["eaten_poisonous"]
            assert row["distinct_poisonous"] <= row["eaten_poisonous"]
        if buffer == 64:  # every step is stored: the whole run's regret
            whole = B.window_census(state, x, poison, seeds=(0, 1), last=30)
            assert [r["regret_last"] for r in whole] == pytest.approx(rec[:, -1].tolist())
    with pytest.raises(ValueError, match="pass the run's agents and seeds"):
        B.window_census(state, x, poison, seeds=(0,))
    with pytest.raises(ValueError, match="between 1 and the 30 tuples"):
        B.window_census(state, x, poison, seeds=(0, 1), last=31)
    with pytest.raises(ValueError, match="another data set"):
        B.window_census(state, torch.cat([x, x], 1), poison, seeds=(0, 1), last=10)


def _fake_reported():
    names = ["bbb", "greedy", "eps1", "eps5"]
    finals = {"bbb": [10.0, 30.0], "greedy": [20.0, 5.0], "eps1": [40.0, 50.0], "eps5": [60.0, 70.0]}
    summary = {n: {"mean": sum(v) / 2, "sd": 1.0, "median": sum(v) / 2, "final_per_seed": v}
               for n, v in finals.items()}
    per_seed = [{"seed": s, "names": names,
                 "poison_eaten": [[0.0] * 8 + [0.5, 0.1 * (s + 1)]] * 4} for s in range(2)]
    return {"paper": {"config": {"record_every": 500},
                      "metrics": {"summary": summary, "per_seed": per_seed}}}


def test_headline_rows_count_the_seeds_each_agent_won_and_name_the_protocol():
    header, rows = B.headline_rows(_fake_reported())
    won = {r[1]: r[header.index("lowest on")] for r in rows}
    assert won[B.AGENT_LABELS["bbb"]] == "1 of 2 seeds"
    assert won[B.AGENT_LABELS["greedy"]] == "1 of 2 seeds"
    assert won[B.AGENT_LABELS["eps1"]] == "0 of 2 seeds"
    protocol = {r[1]: r[header.index("protocol")] for r in rows}
    assert "tuned on seeds" in protocol[B.AGENT_LABELS["bbb"]]
    assert "tuned" not in protocol[B.AGENT_LABELS["greedy"]]


def test_exploration_rows_average_the_last_windows_per_seed():
    header, rows = B.exploration_rows(_fake_reported(), last=1000)
    assert rows[0][2] == "30.0%, 35.0%" and rows[0][3] == "32.5%"


def test_notebook_03s_readings_are_rendered_from_the_records():
    from helpers import bandit as Bd

    def rec(finals, seeds=(0, 1, 2)):
        return {"seeds": list(seeds), "config": {"record_every": 100},
                "metrics": {"summary": {a: {"final_per_seed": v, "mean": sum(v) / len(v)}
                                        for a, v in finals.items()},
                            "per_seed": [{"names": list(finals),
                                          "poison_eaten": [[0.02] * 20 if a == "bbb" else [0.0] * 20
                                                           for a in finals]} for _ in seeds]}}
    paper = rec({"bbb": [5000, 6000, 7000], "greedy": [4000, 9000, 90000],
                 "eps1": [20000, 15000, 16000], "eps5": [30000, 31000, 32000]})
    keep = rec({"bbb": [2000, 2500, 6000], "greedy": [4000, 9000, 90000],
                "eps1": [10000, 11000, 12000], "eps5": [30000, 31000, 32000]})
    text = Bd.figure6_text({"paper": paper, "keep_all": keep})
    assert "mean 6,000 against about 5,700" in text and "below* BBB on seed 0" in text
    assert "because of seed 2, whose regret, 90,000" not in text  # seed 1 is greedy's loss too
    assert "more than half on 2 of 3 seeds" in text and "lowest agent on 3 of 3" in text
    assert "ε-greedy (1 %) on seed 0 with the paper's buffer" in text
    tuning = {"tuning_seeds": [100, 101], "config": {"steps": 20000},
              "metrics": {"trials": [{"recipe": "paper", "regret_final_mean": 7000.0},
                                     {"recipe": "paper", "regret_final_mean": 6500.0}]}}
    text = Bd.exploration_text({"paper": paper, "keep_all": keep}, tuning)
    assert "2.0% over the last 1,000 steps" in text and "(the paper's): 6,500;" in text
