"""helpers.posterior_checks: per-layer readings that tell a learning posterior from a frozen one."""
import math

import pytest
import torch

from helpers import BayesMLP, GaussianPrior, ImageData, ScaleMixturePrior, fit
from helpers.layers import softplus
from helpers.posterior_checks import PosteriorTrace, narrow_share, posterior_state, rho_snapshot


def toy_data(n=256, d=20, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    return ImageData(x[:192], y[:192], x[192:224], y[192:224], x[224:], y[224:], name="toy")


def test_a_fresh_network_reads_its_initial_sigma_and_no_drift():
    model = BayesMLP(20, (16,), 3, rho_init=-5.0)
    state = posterior_state(model, rho_snapshot(model))
    assert list(state) == ["0", "2"]
    for row in state.values():
        assert row["sigma_q"] == pytest.approx([float(softplus(torch.tensor(-5.0)))] * 3, rel=1e-6)
        assert row["rho_drift_q"] == [0.0, 0.0]


def test_narrow_share_follows_the_responsibility():
    prior = ScaleMixturePrior(0.5, 1.0, math.exp(-6))
    # the two components' densities cross near |w| = 0.0105 for these constants
    mu = torch.tensor([0.0, 0.001, 0.005, 0.05, 0.5, -0.5])
    assert narrow_share(mu, prior) == pytest.approx(3 / 6)
    assert narrow_share(mu, GaussianPrior(1.0)) is None


def test_the_trace_tells_a_learning_posterior_from_a_frozen_one():
    """Adam moves sigma within an epoch; plain SGD on the summed cost at lr 1e-3 barely does
    (its step on rho carries a factor sigmoid(rho), about e^rho): the reading issue 49 asks for."""
    data = toy_data()
    moved = {}
    for name, kwargs in {"adam": dict(optimizer="adam", lr=1e-2),
                         "sgd": dict(optimizer="sgd", lr=1e-3, reduction="sum")}.items():
        torch.manual_seed(0)
        model = BayesMLP(20, (16,), 3, rho_init=-5.0)
        trace = PosteriorTrace(model)
        fit(model, data, epochs=3, batch_size=32, eval_sets=("val",), on_epoch=trace, **kwargs)
        assert [r["epoch"] for r in trace.rows] == [0, 1, 2, 3]
        assert all(r["layers"]["0"]["rho_drift_q"][1] >= 0 for r in trace.rows)
        moved[name] = trace.moved(rel=0.05)
    assert all(moved["adam"].values()) and not any(moved["sgd"].values())


def test_the_diagnostics_driver_records_a_trace_per_source_run(shared_data, monkeypatch, tmp_path):
    """tools/posterior_diagnostics.py in its smoke profile: one entry per source run, each with a
    trace from epoch 0, validation errors only, and the committed record it reran."""
    import json
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "tools"))
    import posterior_diagnostics as tool
    from helpers import posterior_diagnostics as D
    monkeypatch.setenv("BBB_DATA_DIR", str(shared_data))
    monkeypatch.setenv("BBB_OUTPUT_DIR", str(tmp_path))
    monkeypatch.delenv("BBB_RESULTS_DIR")
    tool.main(["--profile", "smoke"])
    out = json.loads((tmp_path / "results" / D.NB / "posterior_diagnostics.json").read_text())
    assert list(out["runs"]) == list(D.SOURCES)
    for label, run in out["runs"].items():
        assert (root / run["source"]).exists()
        assert [r["epoch"] for r in run["trace"]] == [0, 1]
        assert len(run["val_error"]) == 1 and "test_error" not in json.dumps(run)
    text = D.words(out)
    rows = [line for line in text.split("\n") if line.startswith("| ")][1:]  # below the header
    assert len(rows) == len(D.SOURCES) and "share of μ in the narrow prior component" in text
    committed = json.loads((root / out["runs"][list(D.SOURCES)[0]]["source"]).read_text())
    assert out["runs"][list(D.SOURCES)[0]]["config"]["optimizer"] == committed["config"]["optimizer"]


def test_the_trace_figure_draws_every_layer_of_every_run():
    import matplotlib
    matplotlib.use("Agg")
    from helpers.posterior_checks import plot_traces
    runs = {}
    for label, opt in (("a", "adam"), ("b", "sgd")):
        torch.manual_seed(0)
        model = BayesMLP(20, (16,), 3, rho_init=-5.0)
        trace = PosteriorTrace(model)
        fit(model, toy_data(), epochs=2, batch_size=64, eval_sets=("val",), on_epoch=trace,
            optimizer=opt, lr=1e-2)
        runs[label] = {"trace": trace.rows}
    fig = plot_traces(runs)
    assert len(fig.axes[0].lines) == 4 and len(fig.axes[1].lines) == 2
    assert len(fig.legends[0].get_texts()) == 4  # two runs, two layers


def test_rho_learning_rate_of_its_own_moves_sigma_under_plain_sgd():
    """fit(rho_lr_scale=...): rho in a parameter group of its own; plain SGD at the same lr for
    mu then moves sigma (issue 49's first search dimension). Scale 1 keeps one group (and the
    numbers of every earlier run)."""
    from helpers.train import parameter_groups
    data = toy_data()
    moved = {}
    for scale in (1.0, 300.0):
        torch.manual_seed(0)
        model = BayesMLP(20, (16,), 3, rho_init=-5.0)
        groups = parameter_groups(model, 1e-3, scale)
        assert (len(groups) == 2) == (scale != 1.0)
        trace = PosteriorTrace(model)
        fit(model, data, epochs=3, batch_size=32, eval_sets=("val",), on_epoch=trace,
            optimizer="sgd", lr=1e-3, reduction="sum", rho_lr_scale=scale)
        moved[scale] = trace.moved(rel=0.05)
    assert not any(moved[1.0].values()) and all(moved[300.0].values())
    with pytest.raises(ValueError, match="no rho"):
        parameter_groups(torch.nn.Linear(2, 2), 1e-3, 2.0)


def test_step_schedule_multiplies_the_rate_after_its_milestones():
    from helpers.train import make_schedule
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([{"params": [p], "lr": 1.0}], lr=1.0)
    sched = make_schedule(opt, lr_milestones=(2, 4), lr_gamma=0.1)
    lrs = []
    for _ in range(5):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs == pytest.approx([1.0, 0.1, 0.1, 0.01, 0.01])
    assert make_schedule(opt) is None
    with pytest.raises(ValueError, match="not both"):
        make_schedule(opt, lr_decay=0.9, lr_milestones=(2,))


def test_run_config_names_the_new_settings_only_when_set():
    from helpers.classification import RunConfig
    base = RunConfig(method="bbb_mixture", optimizer="sgd", reduction="sum", rho_init=-5.0)
    assert "rholr" not in base.name and "steps" not in base.name
    cfg = RunConfig.from_dict({**base.__dict__, "rho_lr_scale": 30.0, "lr_milestones": [300]})
    assert cfg.lr_milestones == (300,) and "rholr30" in cfg.name
    assert "steps300g0p1" in cfg.name
    with pytest.raises(ValueError, match="not both"):
        RunConfig(lr_decay=0.9, lr_milestones=(3,))
    with pytest.raises(ValueError, match="BBB"):
        RunConfig(method="sgd", rho_lr_scale=2.0)
