import math

import pytest
import torch
from torch import nn

from helpers import (BayesConv2d, BayesLinear, BayesMLP, GaussianPrior, LaplacePrior, CauchyPrior,
                     ScaleMixturePrior, bayesify, configure, kl_divergence, sample_forward,
                     sampling, set_sampling, elbo)

PRIORS = [ScaleMixturePrior(0.5, 1.0, math.exp(-6)), GaussianPrior(1.0), LaplacePrior(0.1),
          CauchyPrior(0.1)]


def test_shapes_dtypes_and_sample_dim():
    layer = BayesLinear(7, 3)
    assert layer(torch.randn(5, 7)).shape == (5, 3)
    assert layer(torch.randn(4, 5, 7)).shape == (4, 5, 3)
    assert layer.double()(torch.randn(5, 7, dtype=torch.float64)).dtype == torch.float64
    no_bias = BayesLinear(7, 3, bias=False)
    assert no_bias(torch.randn(2, 5, 7)).shape == (2, 5, 3)


def test_bad_input_shape_message():
    with pytest.raises(ValueError, match=r"expects input \(batch, 7\)"):
        BayesLinear(7, 3)(torch.randn(5, 6))


def test_gradients_reach_mu_and_rho():
    layer = BayesLinear(6, 4)
    layer(torch.randn(8, 6)).pow(2).sum().add(layer.kl).backward()
    for p in (layer.weight_mu, layer.weight_rho, layer.bias_mu, layer.bias_rho):
        assert p.grad is not None and torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0


def test_sampling_switch_independent_of_train_eval():
    layer = BayesLinear(6, 4, rho_init=-1.0)
    x = torch.randn(3, 6)
    layer.eval()
    assert not torch.equal(layer(x), layer(x))  # eval() alone does not stop sampling
    set_sampling(layer, False)
    layer.train()
    a, b = layer(x), layer(x)
    assert torch.equal(a, b)
    assert torch.allclose(a, x @ layer.weight_mu.T + layer.bias_mu)
    with sampling(layer, True):
        assert not torch.equal(layer(x), a)
    assert layer.sample is False


@pytest.mark.parametrize("prior", PRIORS, ids=lambda p: type(p).__name__)
@pytest.mark.parametrize("S", [1, 3])
def test_fast_path_equals_reference(prior, S):
    """Same seed -> same loss and gradients (float64, rtol 1e-9) as the plain autograd version."""
    torch.manual_seed(3)
    fast = BayesMLP(10, (8,), 3, prior=prior, rho_init=-3.0).double()
    ref = BayesMLP(10, (8,), 3, prior=prior, rho_init=-3.0).double()
    ref.load_state_dict(fast.state_dict())
    configure(ref, impl="reference")
    x, y = torch.randn(16, 10, dtype=torch.float64), torch.randint(0, 3, (16,))
    grads, losses = [], []
    for model in (fast, ref):
        torch.manual_seed(11)
        parts = elbo(model, x, y, kl_weight=0.1, n_samples=S)
        model.zero_grad()
        parts.loss.backward()
        losses.append(parts.loss.item())
        grads.append([p.grad.clone() for p in model.parameters()])
    assert losses[0] == pytest.approx(losses[1], rel=1e-9)
    for g1, g2 in zip(*grads):
        assert torch.allclose(g1, g2, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("S", [1, 4])
def test_closed_form_fast_equals_reference(S):
    torch.manual_seed(3)
    fast = BayesMLP(10, (8,), 3, prior=GaussianPrior(0.3), kl="closed").double()
    ref = BayesMLP(10, (8,), 3, prior=GaussianPrior(0.3), kl="closed", impl="reference").double()
    ref.load_state_dict(fast.state_dict())
    x, y = torch.randn(16, 10, dtype=torch.float64), torch.randint(0, 3, (16,))
    out = []
    for model in (fast, ref):
        torch.manual_seed(5)
        parts = elbo(model, x, y, kl_weight=0.5, n_samples=S)
        model.zero_grad()
        parts.loss.backward()
        out.append((parts.loss.item(), [p.grad.clone() for p in model.parameters()]))
    assert out[0][0] == pytest.approx(out[1][0], rel=1e-9)
    for g1, g2 in zip(out[0][1], out[1][1]):
        assert torch.allclose(g1, g2, rtol=1e-7, atol=1e-10)


def test_mc_kl_converges_to_closed_form():
    torch.manual_seed(0)
    layer = BayesLinear(20, 10, prior=GaussianPrior(0.5), rho_init=-2.0)
    with torch.no_grad():
        layer.weight_mu.normal_(0, 0.3)
    exact = layer.kl_closed().item()
    x = torch.zeros(2000, 1, 20)  # 2000 weight samples at once
    errs = []
    for S in (10, 2000):
        layer(x[:S])
        errs.append(abs(layer.kl.item() - exact))
    # standard error of the MC mean shrinks like 1/sqrt(S): within 4 s.e. at S = 2000
    samples = []
    for _ in range(200):
        layer(x[:1])
        samples.append(layer.kl.item())
    se = torch.tensor(samples).std().item() / math.sqrt(2000)
    assert errs[1] < 4 * se
    assert errs[1] < errs[0] or errs[0] < 4 * se * math.sqrt(200)


def test_lrt_and_flipout_need_closed_kl():
    with pytest.raises(ValueError, match="kl='closed'"):
        BayesLinear(3, 2, estimator="lrt")
    with pytest.raises(ValueError, match="GaussianPrior"):
        BayesLinear(3, 2, kl="closed")
    with pytest.raises(ValueError, match="estimator must be one of"):
        BayesLinear(3, 2, estimator="magic")


@pytest.mark.parametrize("estimator", ["lrt", "flipout"])
def test_activation_noise_estimators_match_moments(estimator):
    """LRT and Flipout give each example the output mean and variance of weight sampling.

    (No bias here: Flipout shares one bias sample across the minibatch.)"""
    torch.manual_seed(0)
    kw = dict(prior=GaussianPrior(1.0), kl="closed", rho_init=-1.0, bias=False)
    layer = BayesLinear(5, 2, estimator=estimator, **kw)
    x = torch.randn(1, 5).expand(200, 5)
    with torch.no_grad():  # 100 passes: Flipout shares one weight perturbation within a pass
        out = torch.cat([layer(x) for _ in range(100)])
        mean = x[:1] @ layer.weight_mu.T
        var = (x[:1] ** 2) @ (layer.weight_sigma ** 2).T
    assert torch.allclose(out.mean(0), mean[0], atol=4 * var.sqrt().max().item() / math.sqrt(2e4))
    assert torch.allclose(out.var(0), var[0], rtol=0.05)
    assert torch.isfinite(layer.kl)


def test_kl_divergence_sums_layers_and_needs_forward():
    model = BayesMLP(6, (5,), 2)
    with pytest.raises(RuntimeError, match="forward pass"):
        kl_divergence(model)
    model(torch.randn(3, 6))
    layers = [m for m in model if isinstance(m, BayesLinear)]
    assert torch.allclose(kl_divergence(model), layers[0].kl + layers[1].kl)
    assert kl_divergence(nn.Linear(2, 2)).item() == 0.0


def test_bayesify_equivalent_in_mean_mode():
    det = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Dropout(0.0), nn.Linear(5, 2))
    twin = bayesify(det, prior=GaussianPrior(1.0))
    assert sum(isinstance(m, BayesLinear) for m in twin) == 2
    x = torch.randn(4, 6)
    with sampling(twin, False):
        assert torch.allclose(twin(x), det(x))
    assert not torch.allclose(twin(x), det(x))  # sampling on by default
    with pytest.raises(ValueError, match="nn.Sequential"):
        bayesify(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="BatchNorm1d"):
        bayesify(nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)))


def test_sample_forward_batches_samples():
    model = BayesMLP(6, (5,), 2, rho_init=0.0)
    out = sample_forward(model, torch.randn(3, 6), n_samples=4)
    assert out.shape == (4, 3, 2)
    assert not torch.allclose(out[0], out[1])
    with pytest.raises(ValueError, match="n_samples"):
        sample_forward(model, torch.randn(3, 6), n_samples=0)


def test_conv_layer_shapes_and_kl():
    conv = BayesConv2d(1, 4, 5, padding=2)
    out = conv(torch.randn(2, 1, 12, 12))
    assert out.shape == (2, 4, 12, 12)
    assert kl_divergence(conv).requires_grad
    model = nn.Sequential(conv, nn.Flatten(), BayesLinear(4 * 144, 3))
    out = sample_forward(model, torch.randn(2, 1, 12, 12), n_samples=3)
    assert out.shape == (3, 2, 3)
    set_sampling(model, False)
    assert torch.equal(model(torch.ones(1, 1, 12, 12)), model(torch.ones(1, 1, 12, 12)))
