import math

import pytest
import torch

from helpers import (BayesMLP, ImageData, elbo, fit, gaussian_nll, kl_weights, load_checkpoint,
                     make_optimizer, mlp, save_checkpoint, sample_forward)
from helpers import metrics


@pytest.mark.parametrize("M", [1, 2, 469, 5000])
def test_blundell_weights_finite_and_sum_to_one(M):
    w = kl_weights(M, "blundell")
    assert w.shape == (M,) and torch.isfinite(w).all() and (w >= 0).all()
    assert w.sum().item() == pytest.approx(1.0, abs=1e-12)
    assert torch.all(w[:-1] >= w[1:])  # decreasing: early minibatches carry most of the KL
    if M > 1:
        assert w[0].item() == pytest.approx(2 ** (M - 1) / (2 ** M - 1) if M < 1000 else 0.5)


def test_uniform_weights_and_errors():
    assert torch.allclose(kl_weights(4, "uniform"), torch.full((4,), 0.25, dtype=torch.float64))
    with pytest.raises(ValueError, match="kl weighting"):
        kl_weights(4, "linear")
    with pytest.raises(ValueError, match="M"):
        kl_weights(0)


def test_elbo_pieces_and_scaling():
    model = BayesMLP(5, (4,), 3)
    x, y = torch.randn(8, 5), torch.randint(0, 3, (8,))
    torch.manual_seed(0)
    parts = elbo(model, x, y, kl_weight=0.25, n_samples=2)
    assert parts.output.shape == (2, 8, 3)
    assert parts.loss.item() == pytest.approx((0.25 * parts.kl.item() + parts.nll.item()) / 8,
                                              rel=1e-5)
    det = mlp(5, (4,), 3)
    assert elbo(det, x, y, kl_weight=1.0).kl.item() == 0.0


def test_elbo_nonfinite_input_message():
    model = BayesMLP(5, (4,), 3)
    x = torch.full((2, 5), float("nan"))
    with pytest.raises(FloatingPointError, match="not finite"):
        elbo(model, x, torch.zeros(2, dtype=torch.long), 1.0)


def test_gaussian_nll_matches_torch():
    pred, y = torch.randn(10), torch.randn(10)
    ref = -torch.distributions.Normal(pred, 0.3).log_prob(y).sum()
    assert gaussian_nll(pred, y, 0.3).item() == pytest.approx(ref.item(), rel=1e-5)


def toy_data(n=256, d=6, classes=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    w = torch.randn(d, classes, generator=g)
    y = (x @ w).argmax(1)
    return ImageData(x[:192], y[:192], x[192:224], y[192:224], x[224:], y[224:], name="toy")


def test_fit_learns_and_records_history():
    data = toy_data()
    model = BayesMLP(6, (16,), 3, rho_init=-5.0)
    hist = fit(model, data, epochs=15, lr=1e-2, batch_size=32)
    assert len(hist) == 15 and {"nll", "kl", "val_error", "test_error", "wall_s"} <= set(hist[0])
    assert hist[-1]["nll"] < hist[0]["nll"]
    assert hist[-1]["val_error"] < 0.5  # chance is 2/3


def test_checkpoint_resume_gives_identical_run(tmp_path):
    data = toy_data()
    torch.manual_seed(1)
    a = BayesMLP(6, (8,), 3)
    init = {k: v.clone() for k, v in a.state_dict().items()}
    torch.manual_seed(2)
    full = fit(a, data, epochs=4, batch_size=32, seed=5)
    b = BayesMLP(6, (8,), 3)
    b.load_state_dict(init)
    ck = tmp_path / "run.pt"
    torch.manual_seed(2)
    fit(b, data, epochs=2, batch_size=32, seed=5, checkpoint=ck, checkpoint_every=1)
    torch.manual_seed(999)  # a resumed run restores the RNG state from the checkpoint
    b2 = BayesMLP(6, (8,), 3)
    resumed = fit(b2, data, epochs=4, batch_size=32, seed=5, checkpoint=ck)
    for r1, r2 in zip(full, resumed):
        assert r1["loss"] == pytest.approx(r2["loss"], rel=1e-6)
        assert r1["val_error"] == r2["val_error"]
    for (k, v1), v2 in zip(a.state_dict().items(), b2.state_dict().values()):
        assert torch.allclose(v1, v2), k
    assert not list(tmp_path.glob("*.tmp"))  # atomic writes leave no temporaries


def test_checkpoint_round_trip_same_samples(tmp_path):
    model = BayesMLP(6, (8,), 3, rho_init=-2.0)
    save_checkpoint(tmp_path / "m.pt", model=model.state_dict(), note="x", epoch=3)
    state = load_checkpoint(tmp_path / "m.pt")
    twin = BayesMLP(6, (8,), 3)
    twin.load_state_dict(state["model"])
    x = torch.randn(4, 6)
    torch.manual_seed(7)
    o1 = sample_forward(model, x, 3)
    torch.manual_seed(7)
    o2 = sample_forward(twin, x, 3)
    assert torch.equal(o1, o2) and state["epoch"] == 3
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        load_checkpoint(tmp_path / "missing.pt")


def test_fit_stops_on_divergence():
    data = toy_data()
    model = BayesMLP(6, (8,), 3)
    with pytest.raises(FloatingPointError, match="diverged|not finite"):
        fit(model, data, epochs=3, lr=1e20, batch_size=32)


def test_fit_bad_arguments():
    data = toy_data()
    with pytest.raises(ValueError, match="kl_weighting"):
        fit(BayesMLP(6, (8,), 3), data, epochs=1, kl_weighting="cosine")
    with pytest.raises(ValueError, match="lr"):
        fit(BayesMLP(6, (8,), 3), data, epochs=1, lr=-1)
    with pytest.raises(ValueError, match="optimizer"):
        make_optimizer(BayesMLP(6, (8,), 3).parameters(), "rmsprop")


def test_predict_and_metrics():
    data = toy_data()
    model = BayesMLP(6, (16,), 3, rho_init=-3.0)
    fit(model, data, epochs=10, lr=1e-2, batch_size=32)
    pred = metrics.predict(model, data.x_test, n_samples=5, batch_size=10)
    assert pred.samples.shape == (5, 32, 3) and pred.mean.shape == (32, 3)
    assert torch.allclose(pred.mean.sum(-1), torch.ones(32), atol=1e-5)
    assert torch.allclose(pred.mean, pred.samples.mean(0), atol=1e-6)
    assert all(m.sample for m in model.modules() if hasattr(m, "sample"))  # switch restored
    err = metrics.error_rate(pred.mean, data.y_test)
    assert 0 <= err <= 1
    mi = metrics.mutual_information(pred.samples)
    assert (mi > -1e-6).all()
    assert metrics.ece(pred.mean, data.y_test) <= 1


def test_ece_of_perfect_and_overconfident():
    y = torch.tensor([0, 1, 0, 1])
    perfect = torch.nn.functional.one_hot(y, 2).float()
    assert metrics.ece(perfect, y) == pytest.approx(0.0)
    wrong = torch.nn.functional.one_hot(1 - y, 2).float()
    assert metrics.ece(wrong, y) == pytest.approx(1.0)
    uniform = torch.full((4, 2), 0.5)
    assert metrics.predictive_entropy(uniform)[0].item() == pytest.approx(math.log(2))


def test_auroc():
    a, b = torch.tensor([0.1, 0.2, 0.3]), torch.tensor([0.4, 0.5])
    assert metrics.auroc(a, b) == 1.0 and metrics.auroc(b, a) == 0.0
    assert metrics.auroc(torch.ones(4), torch.ones(3)) == 0.5
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(2000, generator=g), torch.randn(2000, generator=g) + 1.0
    assert metrics.auroc(x, y) == pytest.approx(0.760, abs=0.02)  # Phi(1/sqrt(2))
