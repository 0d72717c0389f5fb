import math

import pytest
import torch

from helpers import BayesMLP, pruning
from helpers import regression as R


def _model():
    torch.manual_seed(0)
    m = BayesMLP(20, (16,), 3, rho_init=-3.0)
    with torch.no_grad():
        m[0].weight_rho[:, :10] = -8.0  # half the first layer: high SNR
    return m


def test_prune_fractions_and_counts():
    m = _model()
    total = sum(layer.weight_mu.numel() for layer in pruning.weight_layers(m))
    for frac in (0.0, 0.5, 0.95, 1.0):
        pruned, kept = pruning.prune(m, frac)
        nz = sum(int((layer.weight_mu != 0).sum()) for layer in pruning.weight_layers(pruned))
        assert kept == total - round(frac * total) and nz == kept
    assert m[0].weight_mu.ne(0).all()  # the original is untouched
    with pytest.raises(ValueError, match="fraction"):
        pruning.prune(m, 1.5)
    with pytest.raises(ValueError, match="unknown score"):
        pruning.scores(m, "entropy")


def test_snr_keeps_high_snr_weights():
    m = _model()
    pruned, _ = pruning.prune(m, 0.5, "snr")
    first = pruned[0].weight_mu
    # the low-sigma half survives far more often than the high-sigma half
    assert first[:, :10].ne(0).float().mean() > first[:, 10:].ne(0).float().mean() + 0.3
    db = pruning.snr_db(m)
    assert torch.isfinite(db).all() and db.numel() == 20 * 16 + 16 * 3


def test_sparse_model_matches_dense_and_is_smaller():
    torch.manual_seed(0)
    m = BayesMLP(20, (300,), 3, rho_init=-3.0)
    pruned, _ = pruning.prune(m, 0.9)
    x = torch.randn(7, 20)
    sparse = pruning.to_sparse(pruned)
    with torch.no_grad():
        dense_out = pruned(x)
    assert torch.allclose(pruning.sparse_forward(sparse, x), dense_out, atol=1e-5)
    dense_state = [(layer.weight_mu.detach(), layer.bias_mu.detach())
                   for layer in pruning.weight_layers(pruned)]
    assert pruning.storage_bytes(sparse) < pruning.storage_bytes(dense_state)


def test_regression_data_and_predictive():
    g = torch.Generator().manual_seed(0)
    x, y = R.make_data(200, 0.02, generator=g)
    assert x.shape == (200, 1) and y.shape == (200,) and 0 <= x.min() and x.max() <= 0.5
    with pytest.raises(ValueError, match="noise_std"):
        R.make_data(3, -1.0)
    model = R.fit_method("bbb_gaussian", x, y, steps=30, seed=0)
    grid = torch.linspace(-0.2, 1.2, 50).unsqueeze(1)
    pred = R.method_predictive("bbb_gaussian", model, grid, n_samples=20)
    assert pred.f.shape == (20, 50) and (pred.std > 0).all()
    s = R.scores({"in": pred, "out": pred}, {"in": pred.mean, "out": pred.mean + 10.0},
                 x_grid=grid, pred_grid=pred)
    assert set(R.SCORES) <= set(s) and s["std_ratio"] > 0
    assert s["coverage90_in"] > 0.9 and s["coverage90_out"] == 0.0  # far-off truth: no cover
    assert s["nll_out"] > s["nll_in"] and s["rmse_out"] > s["rmse_in"]
    mle = R.fit_method("mle", x, y, steps=30, seed=0)
    p_mle = R.method_predictive("mle", mle, grid)
    assert torch.all(p_mle.epistemic_var == 0)  # one curve: no epistemic spread
    with pytest.raises(ValueError, match="unknown method"):
        R.fit_method("gp", x, y, steps=1)


def test_uncertainty_sample_probs():
    from helpers import mlp
    from helpers.uncertainty import sample_probs
    x = torch.randn(5, 20)
    bbb = BayesMLP(20, (8,), 3, rho_init=-2.0)
    assert sample_probs("bbb", bbb, x, 4).shape == (4, 5, 3)
    drop = mlp(20, (8,), 3, dropout=0.5)
    p = sample_probs("mc_dropout", drop, x, 6)
    assert p.shape == (6, 5, 3) and not torch.allclose(p[0], p[1])
    det = mlp(20, (8,), 3)
    assert sample_probs("deterministic", det, x).shape == (1, 5, 3)
    assert sample_probs("ensemble", [det, mlp(20, (8,), 3)], x).shape == (2, 5, 3)
    assert torch.allclose(p.sum(-1), torch.ones(6, 5))
    with pytest.raises(ValueError, match="unknown kind"):
        sample_probs("laplace", det, x)


def test_mcnemar_counts_and_exact_p():
    from helpers import mcnemar
    a = torch.tensor([True, True, False, False, True])
    b = torch.tensor([True, False, False, True, False])
    assert mcnemar(a, b)[:2] == (2, 1)
    assert mcnemar(a, a) == (0, 0, 1.0)
    # 0 vs 10 discordant pairs: two-sided exact p = 2 / 2^10
    zero, ten = torch.zeros(10, dtype=torch.bool), torch.ones(10, dtype=torch.bool)
    assert mcnemar(zero, ten) == (0, 10, pytest.approx(2 / 1024))
    # balanced discordance is no evidence of a difference; symmetric in A and B
    assert mcnemar(a, b)[2] == pytest.approx(1.0) and mcnemar(b, a)[2] == mcnemar(a, b)[2]
    # many discordant pairs: stays finite (no float underflow of 0.5^n)
    big_a = torch.arange(3000) < 1400
    big_b = ~big_a
    p = mcnemar(big_a, big_b)[2]
    assert 0.0 < p < 0.01
    with pytest.raises(ValueError, match="same examples"):
        mcnemar(a, b[:3])


def test_misclassified_matches_evaluate_error():
    from helpers import evaluate_error, misclassified
    m = _model()
    x, y = torch.randn(50, 20), torch.randint(0, 3, (50,))
    wrong = misclassified(m, x, y, batch_size=7)
    assert wrong.dtype == torch.bool and wrong.shape == (50,)
    assert evaluate_error(m, x, y) == pytest.approx(wrong.float().mean().item())


def test_region_scores_against_a_known_gaussian():
    """Coverage, NLL and RMSE of a predictive N(0, 1) (many function samples of spread 1, no
    noise) scored on draws from N(0, 1): coverage 0.5 / 0.9, NLL 0.5 log(2 pi e), RMSE 1; the
    same draws against a predictive three times too narrow are under-covered."""
    torch.manual_seed(0)
    n = 4000
    y = torch.randn(n)
    right = R.Predictive(torch.randn(2000, n), 1e-6)
    s = R.region_scores(right, y)
    assert abs(s["coverage50"] - 0.5) < 0.03 and abs(s["coverage90"] - 0.9) < 0.02
    assert abs(s["nll"] - 0.5 * math.log(2 * math.pi * math.e)) < 0.05
    assert abs(s["rmse"] - 1.0) < 0.05
    narrow = R.region_scores(R.Predictive(torch.randn(2000, n) / 3, 1e-6), y)
    assert narrow["coverage90"] < 0.45 and narrow["nll"] > s["nll"] + 1.0
