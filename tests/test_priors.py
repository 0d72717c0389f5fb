import math

import pytest
import torch

from helpers.priors import (CauchyPrior, GaussianPrior, LaplacePrior, ScaleMixturePrior,
                            make_prior)

ALL = [GaussianPrior(0.5), ScaleMixturePrior(0.25, 1.0, math.exp(-7)), LaplacePrior(0.3),
       CauchyPrior(0.2)]


def mixture_ref(w, pi, s1, s2):
    w = w.double()
    n1 = torch.distributions.Normal(0.0, torch.tensor(s1, dtype=torch.float64))
    n2 = torch.distributions.Normal(0.0, torch.tensor(s2, dtype=torch.float64))
    return torch.logsumexp(torch.stack([math.log(pi) + n1.log_prob(w),
                                        math.log(1 - pi) + n2.log_prob(w)]), 0)


def test_mixture_extremes_match_float64():
    w = torch.linspace(-10, 10, 4001)
    p = ScaleMixturePrior(0.5, 1.0, math.exp(-8))
    got = p.log_prob(w)
    assert torch.isfinite(got).all()
    ref = mixture_ref(w, 0.5, 1.0, math.exp(-8))
    assert torch.allclose(got.double(), ref, rtol=1e-5, atol=1e-3)
    logp, grad = p.log_prob_and_grad(w)
    assert math.isfinite(float(logp)) and torch.isfinite(grad).all()
    assert float(logp) == pytest.approx(ref.sum().item(), rel=1e-5)


@pytest.mark.parametrize("prior", ALL, ids=lambda p: type(p).__name__)
def test_log_prob_and_grad_matches_autograd(prior):
    w = (torch.randn(300) * 0.5).double().requires_grad_()
    prior = prior.double()
    ref = prior.log_prob(w).sum()
    (g_ref,) = torch.autograd.grad(ref, w)
    logp, grad = prior.log_prob_and_grad(w.detach())
    assert float(logp) == pytest.approx(ref.item(), rel=1e-9)
    assert torch.allclose(grad, g_ref, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("prior", ALL, ids=lambda p: type(p).__name__)
def test_density_integrates_to_one(prior):
    w = torch.linspace(-60, 60, 600_001, dtype=torch.float64)
    mass = torch.trapezoid(prior.double().log_prob(w).exp(), w).item()
    tol = 0.02 if isinstance(prior, CauchyPrior) else 1e-3  # Cauchy tails beyond +-60
    assert mass == pytest.approx(1.0, abs=tol)


def test_gaussian_matches_torch_distribution():
    w = torch.randn(50)
    ref = torch.distributions.Normal(0.0, 0.7).log_prob(w)
    assert torch.allclose(GaussianPrior(0.7).log_prob(w), ref, atol=1e-6)


@pytest.mark.parametrize("kwargs,word", [
    (dict(pi=0.0), "pi"), (dict(pi=1.0), "pi"), (dict(pi=1.5), "pi"),
    (dict(sigma1=0.0), "sigma1"), (dict(sigma2=-1.0), "sigma2"),
    (dict(sigma1=float("nan")), "sigma1")])
def test_mixture_invalid_values(kwargs, word):
    with pytest.raises(ValueError, match=word):
        ScaleMixturePrior(**kwargs)


@pytest.mark.parametrize("cls,arg", [(GaussianPrior, "sigma"), (LaplacePrior, "b"),
                                     (CauchyPrior, "gamma")])
def test_scale_invalid(cls, arg):
    with pytest.raises(ValueError, match=arg):
        cls(0.0)


def test_make_prior_unknown():
    with pytest.raises(ValueError, match="unknown prior"):
        make_prior("uniform")


def test_buffers_move_with_module():
    p = ScaleMixturePrior()
    names = {n for n, _ in p.named_buffers()}
    assert names == {"pi", "sigma1", "sigma2"}
    assert p.double().pi.dtype == torch.float64


@pytest.mark.parametrize("prior", ALL, ids=lambda p: type(p).__name__)
def test_samples_follow_prior(prior):
    torch.manual_seed(1)
    s = prior.sample((200_000,))
    # P(|w| <= q) from the samples vs the numerical integral of exp(log_prob) over [-q, q]
    for q in (0.005, 0.05, 0.4, 2.0):
        grid = torch.linspace(-q, q, 200_001, dtype=torch.float64)
        mass = torch.trapezoid(prior.double().log_prob(grid).exp(), grid).item()
        emp = (s.abs() <= q).double().mean().item()
        assert emp == pytest.approx(mass, abs=0.01)
