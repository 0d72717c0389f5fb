"""Flat and learned-scale priors, the 2-D toy data and networks, the Bayesian conv net."""
import math

import pytest
import torch

import helpers as H
from helpers.priors import FlatPrior, LearnedScalePrior
from helpers.toy import PRIORS_2D, fit_toy, grid_probs, predictive_accuracy, toy_net
from helpers.uncertainty import per_image_scores


def test_flat_prior_is_zero_and_cannot_be_sampled():
    w = torch.randn(50)
    p = FlatPrior()
    assert torch.equal(p.log_prob(w), torch.zeros(50))
    logp, grad = p.log_prob_and_grad(w)
    assert float(logp) == 0 and torch.equal(grad, torch.zeros(50))
    with pytest.raises(ValueError, match="improper"):
        p.sample((3,))


def test_flat_prior_kl_is_minus_entropy():
    layer = H.BayesLinear(4, 3, prior=FlatPrior(), rho_init=-2.0, impl="reference")
    torch.manual_seed(1)
    layer(torch.randn(5, 4))
    # MC estimate of E_q[log q] is exact up to the eps^2 term; average it away over many draws
    kls = []
    for _ in range(400):
        layer(torch.randn(5, 4))
        kls.append(layer.kl.item())
    sig = torch.cat([layer.weight_sigma.reshape(-1), layer.bias_sigma])
    neg_entropy = (-torch.log(sig) - 0.5 * math.log(2 * math.pi * math.e)).sum().item()
    assert sum(kls) / len(kls) == pytest.approx(neg_entropy, abs=0.3)


@pytest.mark.parametrize("kwargs,match", [(dict(family="student"), "family"),
                                          (dict(hyperprior="gamma"), "hyperprior"),
                                          (dict(hyper_scale=0.0), "hyper_scale"),
                                          (dict(init_scale=-1.0), "init_scale")])
def test_learned_scale_prior_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LearnedScalePrior(**kwargs)


def test_hyper_kl_closed_form_vs_monte_carlo():
    """Half-normal(1) hyperprior: KL[N(m, t^2) || p(log s)] has a closed form."""
    p = LearnedScalePrior("gaussian", "half_normal", init_scale=0.7, init_log_scale_rho=-1.0)
    m = p.log_scale_mu.item()
    t = torch.nn.functional.softplus(p.log_scale_rho).item()
    closed = (-0.5 * math.log(2 * math.pi * math.e * t**2) - math.log(2.0)
              + 0.5 * math.log(2 * math.pi) + 0.5 * math.exp(2 * m + 2 * t**2) - m)
    with torch.no_grad():
        mc = torch.stack([p.kl_hyper() for _ in range(20_000)]).mean().item()
    assert mc == pytest.approx(closed, abs=0.03)


@pytest.mark.parametrize("family", ["gaussian", "laplace", "cauchy"])
@pytest.mark.parametrize("hyperprior", ["half_normal", "half_cauchy", "inverse_gamma"])
def test_learned_scale_gets_gradients_and_finite_kl(family, hyperprior):
    model = torch.nn.Sequential(
        H.BayesLinear(3, 4, prior=LearnedScalePrior(family, hyperprior)), torch.nn.Tanh(),
        H.BayesLinear(4, 2, prior=LearnedScalePrior(family, hyperprior)))
    out = model(torch.randn(8, 3))
    kl = H.kl_divergence(model)
    assert torch.isfinite(kl)
    (out.sum() + kl).backward()
    for layer in H.bayes_layers(model):
        assert layer.prior.log_scale_mu.grad is not None
        assert torch.isfinite(layer.prior.log_scale_mu.grad)
        assert layer.prior.log_scale_rho.grad is not None


def test_hyper_kl_counted_once_per_prior():
    shared = LearnedScalePrior("gaussian", "half_cauchy", init_log_scale_rho=-1.0)
    model = torch.nn.Sequential(H.BayesLinear(3, 4, prior=shared), H.BayesLinear(4, 2, prior=shared))
    model(torch.randn(8, 3))
    layer_kl = sum(layer.kl for layer in H.bayes_layers(model))
    with torch.no_grad():
        torch.manual_seed(5)
        total = H.kl_divergence(model)
        torch.manual_seed(5)
        once = layer_kl + shared.kl_hyper()  # the same draw of s
    assert total.item() == pytest.approx(once.item(), rel=1e-6)


@pytest.mark.parametrize("name", ["moons", "circles"])
def test_toy_data_shapes_balance_and_seed(name):
    x, y = H.make_toy_2d(name, 101, noise=0.1, seed=3)
    assert x.shape == (101, 2) and x.dtype == torch.float32 and y.shape == (101,)
    assert y.sum().item() == 51  # n - n // 2 in class 1
    x2, y2 = H.make_toy_2d(name, 101, noise=0.1, seed=3)
    assert torch.equal(x, x2) and torch.equal(y, y2)
    assert not torch.equal(x, H.make_toy_2d(name, 101, noise=0.1, seed=4)[0])


def test_toy_data_geometry_without_noise():
    x, y = H.make_toy_2d("circles", 200, noise=0.0, factor=0.5)
    r = x.norm(dim=1)
    assert torch.allclose(r[y == 0], torch.ones(100), atol=1e-5)
    assert torch.allclose(r[y == 1], torch.full((100,), 0.5), atol=1e-5)
    x, y = H.make_toy_2d("moons", 200, noise=0.0)
    assert torch.allclose(x[y == 0].norm(dim=1), torch.ones(100), atol=1e-5)
    with pytest.raises(ValueError, match="unknown toy"):
        H.make_toy_2d("spirals")
    with pytest.raises(ValueError, match="factor"):
        H.make_toy_2d("circles", factor=1.5)


def test_toy_net_learns_moons_and_restores_threads():
    x, y = H.make_toy_2d("moons", 300, noise=0.1, seed=0)
    model = toy_net("Normal")
    threads = torch.get_num_threads()
    fit_toy(model, x, y, steps=400, lr=0.03)
    assert torch.get_num_threads() == threads
    assert predictive_accuracy(model, x, y, n_samples=20) > 0.8
    xx, yy, mean, std = grid_probs(model, n=10, n_samples=5)
    assert mean.shape == std.shape == (10, 10) and ((mean >= 0) & (mean <= 1)).all()
    with pytest.raises(ValueError, match="unknown prior"):
        toy_net("Student-t")
    assert set(PRIORS_2D) >= {"Normal", "Laplace", "Cauchy", "flat", "scale mixture"}


def test_bayes_conv_net_shapes_kl_and_gradients():
    net = H.bayes_conv_net()
    x = torch.randn(3, 1, 28, 28)
    out = net(x)
    assert out.shape == (3, 10)
    kl = H.kl_divergence(net)
    assert torch.isfinite(kl) and kl.item() > 0
    (out.sum() + kl).backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in net.parameters())
    # the four layers own separate prior objects
    assert len({id(layer.prior) if hasattr(layer, "prior") else id(layer._lin.prior)
                for layer in H.bayes_layers(net)}) == 4


def test_per_image_scores():
    y = torch.tensor([0, 1])
    p = torch.tensor([[[0.9, 0.1], [0.6, 0.4]],
                      [[0.8, 0.2], [0.2, 0.8]]])  # (S=2, B=2, C=2)
    s = per_image_scores(p, y)
    assert s["expected_error"].tolist() == [0.0, 0.5]
    assert s["pred"].tolist() == [0, 1]
    assert s["confidence"][0].item() == pytest.approx(0.85)
    assert s["std"][1].item() == pytest.approx(torch.tensor([0.4, 0.8]).std().item())
    with pytest.raises(ValueError, match="shape"):
        per_image_scores(p[0], y)
