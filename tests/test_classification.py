"""Notebook 01's run configs: the warm start of the posterior means from a trained network."""
import pytest
import torch
from torch import nn

from helpers import BayesMLP, copy_means, evaluate_error, mlp, sampling
from helpers.classification import RunConfig, run
from helpers.data import ImageData


def _toy(n=256, d=6, classes=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    y = (x @ torch.randn(d, classes, generator=g)).argmax(1)
    return ImageData(x[:192], y[:192], x[192:224], y[192:224], x[224:], y[224:], name="toy")


def test_copy_means_makes_posterior_mean_equal_the_source():
    torch.manual_seed(0)
    net, bnn = mlp(6, (8, 8), 3), BayesMLP(6, (8, 8), 3)
    x = torch.randn(5, 6)
    copy_means(bnn, net)
    with sampling(bnn, False):
        assert torch.allclose(bnn(x), net(x), atol=1e-6)
    with pytest.raises(ValueError, match="architectures differ"):
        copy_means(BayesMLP(6, (9, 8), 3), net)
    with pytest.raises(ValueError, match="no biases"):
        copy_means(BayesMLP(6, (8,), 3), nn.Sequential(nn.Linear(6, 8, bias=False), nn.ReLU(),
                                                       nn.Linear(8, 3, bias=False)))


def test_init_from_config_validation_and_name():
    cfg = RunConfig(method="bbb_mixture", H=8, init_from="sgd", init_epochs=3, mu_init=0.1)
    assert "init-sgd3" in cfg.name and "mu0p1" not in cfg.name
    src = cfg.init_source()
    assert (src.method, src.H, src.epochs, src.lr, src.seed) == ("sgd", 8, 3, cfg.lr, cfg.seed)
    assert RunConfig(method="bbb_mixture").init_source() is None
    with pytest.raises(ValueError, match="init_from must be"):
        RunConfig(method="bbb_mixture", init_from="adam")
    with pytest.raises(ValueError, match="BBB methods"):
        RunConfig(method="sgd", init_from="sgd")
    with pytest.raises(ValueError, match="init_epochs"):
        RunConfig(method="bbb_gaussian", init_from="dropout", init_epochs=0)


def test_run_warm_start_trains_the_source_then_starts_from_it(tmp_path, monkeypatch):
    monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path))
    data = _toy()
    cfg = RunConfig(method="bbb_mixture", H=8, epochs=0, init_from="sgd", init_epochs=3, lr=1e-2)
    model, rec = run(cfg, data, notebook="t", eval_samples=2)
    source, src_rec = run(cfg.init_source(), data, notebook="t")  # loads the finished source
    assert src_rec["metrics"]["epochs"] == 3
    assert (tmp_path / "t" / f"{cfg.init_source().name}.pt").exists()
    for a, b in zip([m for m in source.modules() if isinstance(m, nn.Linear)],
                    [m for m in model.modules() if hasattr(m, "weight_mu")]):
        assert torch.equal(a.weight, b.weight_mu)  # 0 BBB epochs: the means are the source's
    assert evaluate_error(model, data.x_test, data.y_test) == src_rec["metrics"]["test_error"]


def test_choose_predictor_prefers_lower_validation_error_and_ties_keep_the_ensemble():
    from helpers.classification import choose_predictor
    assert choose_predictor(0.0144, 0.0154) == "mean_weights"
    assert choose_predictor(0.0160, 0.0152) == "ensemble"
    assert choose_predictor(0.0150, 0.0150) == "ensemble"
    assert choose_predictor(None, 0.02) == "ensemble"


def test_run_reports_the_validation_chosen_predictor(tmp_path, monkeypatch):
    monkeypatch.setenv("BBB_CHECKPOINT_DIR", str(tmp_path))
    data = _toy()
    _, rec = run(RunConfig(method="bbb_mixture", H=8, epochs=2, lr=1e-2), data, notebook="t",
                 eval_samples=3)
    m = rec["metrics"]
    kind = m["predictor"]
    assert kind in ("mean_weights", "ensemble")
    assert m["val_error"] == m[f"val_error_{kind}"] == min(m["val_error_mean_weights"],
                                                           m["val_error_ensemble"])
    assert m["test_error"] == m[f"test_error_{kind}"]
    assert m["val_error_mean_weights"] == rec["history"][-1]["val_error"]
    _, rec = run(RunConfig(method="sgd", H=8, epochs=1, lr=1e-2), data, notebook="t")
    assert rec["metrics"]["predictor"] == "network"
