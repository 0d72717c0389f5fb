import torch

from helpers import bandit as B


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
    state = torch.load(ck, weights_only=True)
    assert int(state["t"]) == 10
    # continue the same 20-step run from the 10-step checkpoint
    resumed = B.run(cfg, x, poison, checkpoint=ck)
    assert torch.allclose(resumed.cum_regret, straight.cum_regret)
