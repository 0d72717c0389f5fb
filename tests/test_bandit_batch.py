"""helpers.bandit_batch: a row's numbers are its own (bit for bit the same alone or beside any other
rows), resume after an interrupt changes nothing, and bad input is refused clearly."""
import importlib.util
import json
from pathlib import Path

import pytest
import torch

from helpers import bandit_batch as BB
from helpers import load_checkpoint
from helpers.train import CheckpointError

CFG = BB.BatchConfig(steps=20, hidden=8, updates_per_step=2, batch=4, record_every=5)
BBB = BB.RowSpec(seed=0, bayesian=True, buffer=8, name="bbb")
BBB_MIX = BB.RowSpec(seed=1, bayesian=True, prior=(0.5, 1.0, 0.0025), rho_init=-4.0, lr=3e-3,
                     noise_sigma=2.0, buffer=12, kl_count="filled", kl_floor=8,
                     thompson_samples=1, name="bbb one draw")
GREEDY = BB.RowSpec(seed=0, buffer=8, name="greedy")
EPS = BB.RowSpec(seed=1, epsilon=0.3, lr=2e-3, buffer=10, kl_count="seen", name="eps")


def _toy(scale=1.0):
    g = torch.Generator().manual_seed(0)
    x = torch.nn.functional.one_hot(torch.randint(0, 4, (50,), generator=g), 4).float()
    return scale * x, x[:, 0] > 0  # category 0 is poisonous


def _mushroom_like():
    """Synthetic data of the mushroom's shape: 22 one-hot attributes, 117 columns."""
    g = torch.Generator().manual_seed(1)
    sizes = torch.tensor([6] * 7 + [5] * 15)
    cats = (torch.rand(300, 22, generator=g) * sizes).long() + torch.cumsum(sizes, 0) - sizes
    x = torch.zeros(300, 117).scatter_(1, cats, 1.0)
    return x, x[:, 0] + x[:, 6] > 0


def _states(rows, cfg=CFG, x=None, until=None):
    x, p = _toy() if x is None else x
    engine = BB.BatchedRuns(rows, cfg, x, p)
    engine.advance(cfg.steps if until is None else until)
    return [engine.row_state(r) for r in range(len(rows))], engine


def _bits(t):
    return t.view(torch.int32) if t.dtype == torch.float32 else t


def _assert_same(a, b):
    """Every tensor of two row states equal bit for bit (NaN records included)."""
    assert set(a) == set(b)
    for k in a:
        if isinstance(a[k], torch.Tensor):
            assert a[k].dtype == b[k].dtype and torch.equal(_bits(a[k]), _bits(b[k])), k
        elif k != "cpu_s":
            assert a[k] == b[k], k


@pytest.mark.parametrize("kernels", ["native", "torch"])
@pytest.mark.parametrize("scale", [1.0, 0.5])  # one-hot inputs (embedding_bag) and dense ones
def test_a_row_in_a_batch_is_the_row_run_alone(kernels, scale, monkeypatch):
    if kernels == "torch":
        monkeypatch.setenv("BBB_NATIVE", "0")
    rows = [BBB, GREEDY, BBB_MIX, EPS]
    batch, engine = _states(rows, x=_toy(scale))
    assert engine.native == (kernels == "native" and BB.native.library() is not None)
    assert engine.sparse == (scale == 1.0)
    for row, state in zip(rows, batch):
        alone, _ = _states([row], x=_toy(scale))
        _assert_same(state, alone[0])
    # the rows learnt, and did not all learn alike
    assert all(not torch.equal(s["weights"], batch[0]["weights"]) for s in batch[1:])
    assert batch[0]["rho"].ne(BBB.rho_init).any() and batch[0]["adam"].abs().sum() > 0


def test_rows_of_the_papers_size_in_a_batch_are_the_rows_alone():
    """At 2 x 100 units and minibatches of 64 the matmuls go to MKL (small ones are torch's own
    loop), whose one-column products rounded with the batch's size: a row alone is still the row
    in any batch, bit for bit."""
    cfg = BB.BatchConfig(steps=3, hidden=100, updates_per_step=2, batch=64, record_every=1)
    rows = [BB.RowSpec(seed=4, bayesian=True, buffer=64),
            BB.RowSpec(seed=4, bayesian=True, prior=(0.5, 1.0, 0.0025), thompson_samples=1,
                       buffer=64),
            BB.RowSpec(seed=5, epsilon=0.05, lr=3e-3, buffer=64), BB.RowSpec(seed=6, buffer=64)]
    data = _mushroom_like()
    batch, engine = _states(rows, cfg, x=data)
    assert engine.sparse
    for r in (0, 2):
        alone, _ = _states([rows[r]], cfg, x=data)
        _assert_same(batch[r], alone[0])
    pair, _ = _states([rows[3], rows[1]], cfg, x=data)
    _assert_same(batch[1], pair[1])


def test_a_row_is_unchanged_when_the_other_rows_change():
    base, _ = _states([BBB, GREEDY])
    other = BB.RowSpec(seed=7, bayesian=True, lr=1e-2, prior=0.3, noise_sigma=0.5, buffer=16,
                       thompson_samples=3)
    swapped, _ = _states([EPS, other, GREEDY, BBB, BB.RowSpec(seed=3, epsilon=1.0, buffer=8)])
    _assert_same(base[0], swapped[3])
    _assert_same(base[1], swapped[2])
    # and a row's own setting does change its numbers
    changed, _ = _states([BB.RowSpec(**{**BBB.__dict__, "lr": 2e-3})])
    assert not torch.equal(changed[0]["weights"], base[0]["weights"])


def test_results_follow_the_rows():
    x, p = _toy()
    res = BB.run_rows([BBB, GREEDY], CFG, x, p)
    assert [r["row"]["name"] for r in res] == ["bbb", "greedy"]
    assert len(res[0]["cum_regret"]) == CFG.steps // CFG.record_every
    assert res[0]["mean_sigma"] is not None and res[1]["mean_sigma"] is None
    assert len(res[0]["sigma_layers"][0]) == len(BB.LAYERS)
    curve = res[1]["cum_regret"]
    assert all(b >= a for a, b in zip(curve, curve[1:]))
    json.dumps(res)  # plain numbers, ready for a results file


def test_interrupted_batch_resumes_identically(tmp_path, monkeypatch):
    x, p = _toy()
    rows = [BBB, GREEDY, BBB_MIX]
    straight = BB.run_rows(rows, CFG, x, p)
    straight_states, _ = _states(rows)
    ck = tmp_path / "ck"
    real = BB.BatchedRuns._record

    def crash(self, i):
        if i == 2:  # step 15: after the checkpoint of step 10
            raise KeyboardInterrupt
        real(self, i)
    monkeypatch.setattr(BB.BatchedRuns, "_record", crash)
    with pytest.raises(KeyboardInterrupt):
        BB.run_rows(rows, CFG, x, p, checkpoint_dir=ck, checkpoint_every=10)
    monkeypatch.setattr(BB.BatchedRuns, "_record", real)
    files = sorted(ck.iterdir())
    assert len(files) == 3 and all(int(load_checkpoint(f)["t"]) == 10 for f in files)
    resumed = BB.run_rows(rows, CFG, x, p, checkpoint_dir=ck, checkpoint_every=10)
    for a, b in zip(straight, resumed):
        assert a["cum_regret"] == b["cum_regret"] and a["sigma_layers"] == b["sigma_layers"]
    for row, st in zip(rows, straight_states):
        saved = load_checkpoint(ck / BB.row_checkpoint_name(row, CFG))
        _assert_same(st, {k: saved[k] for k in st})
    # a finished run found again gives its numbers without training
    again = BB.run_rows(rows, CFG, x, p, checkpoint_dir=ck)
    assert [r["cum_regret"] for r in again] == [r["cum_regret"] for r in straight]


def test_rows_at_different_steps_catch_up(tmp_path):
    """A row checkpointed by a shorter run and a fresh row run together give the numbers of a
    straight run (the row behind runs alone up to the other's step first)."""
    x, p = _toy()
    ck = tmp_path / "ck"
    short = BB.BatchConfig(**{**CFG.__dict__, "steps": 10})
    BB.run_rows([BBB], short, x, p, checkpoint_dir=ck)  # BBB at step 10, a shorter run
    res = BB.run_rows([GREEDY, BBB], CFG, x, p, checkpoint_dir=ck)
    straight = BB.run_rows([BBB, GREEDY], CFG, x, p)
    assert res[1]["cum_regret"] == straight[0]["cum_regret"]
    assert res[0]["cum_regret"] == straight[1]["cum_regret"]
    # a keep-all buffer may grow with the run while it has not wrapped
    grow = BB.RowSpec(seed=2, bayesian=True, buffer=10, kl_count="filled", kl_floor=8)
    BB.run_rows([grow], short, x, p, checkpoint_dir=ck)
    bigger = BB.RowSpec(**{**grow.__dict__, "buffer": 20})
    res = BB.run_rows([bigger], CFG, x, p, checkpoint_dir=ck)
    assert res[0]["cum_regret"] == BB.run_rows([bigger], CFG, x, p)[0]["cum_regret"]


@pytest.mark.parametrize("change, message", [
    (dict(buffer=2), "must hold at least one minibatch"),
    (dict(kl_count="all"), "kl_count must be one of"),
    (dict(kl_count="fixed", kl_floor=0), "kl_floor"),
    (dict(prior=(0.5, 1.0)), "prior must be"),
    (dict(prior=-1.0), "prior must be"),
    (dict(epsilon=1.5), "epsilon must lie"),
    (dict(lr=0.0), "lr must be"),
    (dict(noise_sigma=0.0), "noise_sigma must be"),
    (dict(thompson_samples=0), "thompson_samples"),
    (dict(seed=-1), "seed must be"),
])
def test_bad_rows_are_refused(change, message):
    x, p = _toy()
    with pytest.raises(ValueError, match=message):
        BB.run_rows([GREEDY, BB.RowSpec(**{**BBB.__dict__, **change})], CFG, x, p)


def test_bad_batches_are_refused(tmp_path):
    x, p = _toy()
    with pytest.raises(ValueError, match="same setting and seed"):
        BB.run_rows([BBB, BB.RowSpec(**{**BBB.__dict__, "name": "again"})], CFG, x, p)
    with pytest.raises(ValueError, match="record_every"):
        BB.run_rows([BBB], BB.BatchConfig(steps=12, record_every=5), x, p)
    with pytest.raises(ValueError, match="no rows"):
        BB.run_rows([], CFG, x, p)
    with pytest.raises(ValueError, match="not a RowSpec"):
        BB.run_rows([dict(seed=0)], CFG, x, p)
    with pytest.raises(ValueError, match="poisonous"):
        BB.BatchedRuns([BBB], CFG, x, p[:10])
    # a checkpoint of another network or data set is refused
    ck = tmp_path / "ck"
    BB.run_rows([BBB], CFG, x, p, checkpoint_dir=ck)
    with pytest.raises(CheckpointError, match="another run"):
        BB.run_rows([BBB], CFG, 0.5 * x, p, checkpoint_dir=ck)
    longer = BB.BatchConfig(**{**CFG.__dict__, "steps": 10})
    with pytest.raises(ValueError, match="more than"):
        BB.run_rows([BBB], longer, x, p, checkpoint_dir=ck)
    # a wrapped buffer cannot change size
    st, _ = _states([BBB])
    engine = BB.BatchedRuns([BB.RowSpec(**{**BBB.__dict__, "buffer": 16})], CFG, x, p)
    with pytest.raises(ValueError, match="buffer of 8"):
        engine.load_row(0, st[0])
    # rows at different steps cannot share an engine
    engine = BB.BatchedRuns([BBB, GREEDY], CFG, x, p)
    half, _ = _states([GREEDY], until=5)
    engine.load_row(0, st[0])
    with pytest.raises(ValueError, match="different steps"):
        engine.load_row(1, half[0])


def test_batch_benchmark_quick_mode(tmp_path):
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_bandit_batch.py"
    spec = importlib.util.spec_from_file_location("bench_bandit_batch", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "bb.json"
    rec = bench.main(["--quick", "--out", str(out)])
    assert json.loads(out.read_text()) == rec
    assert [r["impl"] for r in rec["rows"]] == ["stacked4", "batched"]
    assert rec["rows"][1]["network_runs"] == 4 * rec["settings"]["seeds"]
    assert all(r["network_runs_per_cpu_hour_50k"] > 0 for r in rec["rows"])
    assert rec["ratio_batched_vs_stacked4"] > 0 and "load average" in rec["machine"]["load_note"]


@pytest.mark.parametrize("row", [BBB_MIX, EPS], ids=["bbb", "greedy"])
def test_the_update_is_the_arithmetic_of_stacked_nets(row, monkeypatch):
    """From the same weights, minibatch and weight noise, two updates of a row are two updates
    of helpers.bandit.StackedNets (the runner of helpers.bandit.run) but for rounding: the
    output layer's sum of products is summed elementwise here, by a one-column matmul there.
    Runs differ from that runner's otherwise only by their random streams (per row here,
    torch's global generator there)."""
    from helpers import bandit as B
    x, p = _toy()
    engine = BB.BatchedRuns([row], CFG, x, p)
    net = B.StackedNets(1, int(row.bayesian), x.shape[1] + 2, CFG.hidden, row.rho_init,
                        B.make_prior(row.prior), lr=row.lr)
    net.store.copy_(engine.store)
    start = engine.store.clone()
    if row.bayesian:
        net.mu.copy_(engine.mu[0])
        net.sig.copy_(engine.sig[0])
    g = torch.Generator().manual_seed(5)
    codes = torch.randint(0, 2 * len(x), (1, CFG.batch), generator=g)
    rewards = torch.randn(1, CFG.batch, generator=g) * 10
    monkeypatch.setattr(BB.native, "draw_seed", lambda: 12345)
    if not row.bayesian:  # StackedNets without a Bayesian agent runs Adam on torch ops
        engine.native = False
    kl = 1.0 / 8
    for step in (1, 2):
        net.sample()
        net.update(engine.xtab[codes], rewards.clone(), row.noise_sigma, kl)
        engine.kl_scale = [kl]
        engine._update(codes, rewards.clone(), [12345], step)
    if row.bayesian:
        if not engine.native:
            pytest.skip("the torch paths draw their noise from different generators")
        for a, b in ((net.mu, engine.mu[0]), (net.rho, engine.rho[0]),
                     (net.bayes_adam, engine.adam[0])):
            assert torch.allclose(a, b, rtol=1e-4, atol=1e-7)
    else:
        for a, b in ((net.store, engine.store), (net.m, engine.m), (net.v, engine.v)):
            assert torch.allclose(a, b, rtol=1e-4, atol=1e-7)
    assert not torch.equal(engine.store, start)  # the updates moved the weights
