"""Priors over weights: objects with ``log_prob`` whose parameters are buffers.

Every prior also offers ``log_prob_and_grad(w)`` -> (sum of log p(w), d log p / dw), the analytic
gradient that the fast Bayes-by-Backprop path uses instead of autograd.
"""
import math

import torch
from torch import nn

LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _positive(name, value):
    """Return ``value`` as float after checking it is a finite positive number."""
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0 (a scale), got {value!r}")
    return value


class Prior(nn.Module):
    """Base class: a factorised prior over every weight of a layer.

    Its constants (scales, weights) are float64 buffers whatever dtype the model is cast to, so
    a float64 model gets them exactly and a float32 one rounds them once, where they are used."""

    def _register_constant(self, name, value):
        self.register_buffer(name, torch.tensor(float(value), dtype=torch.float64))

    def _apply(self, fn, recurse=True):
        # model.to(dtype) / .float() / .half() would round the constants: keep them float64
        saved = {k: b for k, b in self._buffers.items() if b is not None and b.dtype == torch.float64}
        out = super()._apply(fn, recurse)
        for k, b in saved.items():
            moved = self._buffers[k]
            if moved.device.type != "mps":  # MPS has no float64
                self._buffers[k] = b.to(device=moved.device)
        return out

    def log_prob(self, w):
        """Return the elementwise log-density log p(w) (same shape as ``w``)."""
        raise NotImplementedError

    def log_prob_and_grad(self, w):
        """Return (sum of log p(w), d log p(w)/dw) without autograd."""
        raise NotImplementedError

    def sample(self, shape):
        """Return a tensor of ``shape`` drawn from the prior."""
        raise NotImplementedError

    def _buf(self, name):
        return getattr(self, name).item()


class GaussianPrior(Prior):
    """N(0, sigma^2) on every weight; the only prior with a closed-form KL here."""

    def __init__(self, sigma=1.0):
        super().__init__()
        self._register_constant("sigma", _positive("sigma", sigma))

    def log_prob(self, w):
        """Return elementwise log N(w; 0, sigma^2)."""
        sigma = self.sigma
        return -0.5 * (w / sigma) ** 2 - torch.log(sigma) - LOG_SQRT_2PI

    def log_prob_and_grad(self, w):
        """Return (sum log N(w; 0, sigma^2), -w / sigma^2)."""
        s = self._buf("sigma")
        w2 = torch.dot(w.reshape(-1), w.reshape(-1))
        logp = -0.5 * w2 / s**2 - w.numel() * (math.log(s) + LOG_SQRT_2PI)
        return logp, w * (-1.0 / s**2)

    def sample(self, shape):
        """Return draws from N(0, sigma^2)."""
        return torch.randn(shape, device=self.sigma.device) * self.sigma

    def extra_repr(self):
        return f"sigma={self._buf('sigma'):.4g}"


class ScaleMixturePrior(Prior):
    """The paper's prior: pi N(0, sigma1^2) + (1 - pi) N(0, sigma2^2), evaluated with logsumexp."""

    def __init__(self, pi=0.5, sigma1=1.0, sigma2=math.exp(-6)):
        super().__init__()
        pi = float(pi)
        if not 0.0 < pi < 1.0:
            raise ValueError(f"pi must lie strictly between 0 and 1 (the mixture weight), got {pi!r}")
        self._register_constant("pi", pi)
        self._register_constant("sigma1", _positive("sigma1", sigma1))
        self._register_constant("sigma2", _positive("sigma2", sigma2))

    def constants(self):
        """Return (ka, kb, ca, cb): component j has log-density c_j - k_j w^2 (weight included)."""
        pi, s1, s2 = self._buf("pi"), self._buf("sigma1"), self._buf("sigma2")
        return (0.5 / s1**2, 0.5 / s2**2, math.log(pi) - math.log(s1) - LOG_SQRT_2PI,
                math.log1p(-pi) - math.log(s2) - LOG_SQRT_2PI)

    def log_prob(self, w):
        """Return elementwise log of the mixture density (logsumexp of the two components)."""
        ka, kb, ca, cb = self.constants()
        w2 = w * w
        return torch.logsumexp(torch.stack([ca - ka * w2, cb - kb * w2]), dim=0)

    def log_prob_and_grad(self, w):
        """Return (sum log p(w), d log p/dw) without autograd (the torch path's hot spot).

        With a, b the log-densities of the wide and narrow components and d = a - b, e = exp(-|d|)
        gives both responsibilities directly, r = sigmoid(d) (wide) and q = sigmoid(-d) (narrow),
        as 1 / (1 + e) and e / (1 + e) (never one as 1 - the other). Then
        d log p/dw = -2 w (ka r + kb q), a sum of two positive terms, and
        log p = max(a, b) + log1p(e): no large terms cancel, whatever sigma2.
        """
        ka, kb, ca, cb = self.constants()
        w2 = w * w
        a = w2.mul(-ka).add_(ca)
        b = w2.mul_(-kb).add_(cb)  # reuses w2's memory
        d = a - b
        e = d.abs().neg_().exp_()
        big = e.add(1.0).reciprocal_()
        small = e * big
        wide = d >= 0
        r = torch.where(wide, big, small)
        q = torch.where(wide, small, big)
        grad = r.mul_(ka).add_(q, alpha=kb).mul_(w).mul_(-2.0)
        logp = torch.maximum(a, b).sum() + e.log1p_().sum()
        return logp, grad

    def sample(self, shape):
        """Return draws from the mixture."""
        wide = torch.rand(shape, device=self.pi.device) < self.pi
        scale = torch.where(wide, self.sigma1, self.sigma2).to(torch.get_default_dtype())
        return torch.randn(shape, device=self.pi.device) * scale

    def extra_repr(self):
        return (f"pi={self._buf('pi'):.4g}, sigma1={self._buf('sigma1'):.4g}, "
                f"sigma2={self._buf('sigma2'):.4g}")


class LaplacePrior(Prior):
    """Laplace(0, b): log p(w) = -|w| / b - log(2 b)."""

    def __init__(self, b=1.0):
        super().__init__()
        self._register_constant("b", _positive("b", b))

    def log_prob(self, w):
        """Return elementwise log Laplace(w; 0, b)."""
        return -w.abs() / self.b - torch.log(2 * self.b)

    def log_prob_and_grad(self, w):
        """Return (sum log p(w), -sign(w) / b)."""
        b = self._buf("b")
        logp = -w.abs().sum() / b - w.numel() * math.log(2 * b)
        return logp, torch.sign(w) * (-1.0 / b)

    def sample(self, shape):
        """Return draws from Laplace(0, b)."""
        return torch.distributions.Laplace(0.0, self.b.item()).sample(shape)

    def extra_repr(self):
        return f"b={self._buf('b'):.4g}"


class CauchyPrior(Prior):
    """Cauchy(0, gamma): log p(w) = -log(pi gamma) - log1p((w / gamma)^2)."""

    def __init__(self, gamma=1.0):
        super().__init__()
        self._register_constant("gamma", _positive("gamma", gamma))

    def log_prob(self, w):
        """Return elementwise log Cauchy(w; 0, gamma)."""
        return -torch.log1p((w / self.gamma) ** 2) - torch.log(math.pi * self.gamma)

    def log_prob_and_grad(self, w):
        """Return (sum log p(w), -2 w / (gamma^2 + w^2))."""
        g = self._buf("gamma")
        w2 = w * w
        logp = -torch.log1p(w2 / g**2).sum() - w.numel() * math.log(math.pi * g)
        return logp, -2.0 * w / (w2 + g**2)

    def sample(self, shape):
        """Return draws from Cauchy(0, gamma)."""
        return torch.distributions.Cauchy(0.0, self.gamma.item()).sample(shape)

    def extra_repr(self):
        return f"gamma={self._buf('gamma'):.4g}"


class FlatPrior(Prior):
    """The improper flat prior p(w) = const (taken as log p = 0): the KL reduces to -entropy of q."""

    def log_prob(self, w):
        """Return zeros like ``w`` (log of the constant density, up to a constant)."""
        return torch.zeros_like(w)

    def log_prob_and_grad(self, w):
        """Return (0, zeros)."""
        return w.new_zeros(()), torch.zeros_like(w)

    def sample(self, shape):
        raise ValueError("a flat prior is improper and cannot be sampled; use a wide GaussianPrior")


FAMILIES = ("gaussian", "laplace", "cauchy")
HYPERPRIORS = ("half_normal", "half_cauchy", "inverse_gamma")


class LearnedScalePrior(Prior):
    """A prior whose scale s is learned: w | s ~ family(0, s), s ~ hyperprior, q(log s) = N(m, v).

    ``family``: 'gaussian' (s = sigma), 'laplace' (s = b) or 'cauchy' (s = gamma). ``hyperprior``:
    'half_normal' or 'half_cauchy' with scale ``hyper_scale``, or 'inverse_gamma' with shape ``alpha``
    and rate ``hyper_scale``. The variational posterior of log s is a Gaussian with mean
    ``log_scale_mu`` and std softplus(``log_scale_rho``) (a log-normal on s), learned with the
    weights. Every ``log_prob`` call draws its own s (reparameterised); the hyperprior's own KL
    term KL[q(log s) || p(log s)] is added once per forward pass by ``kl_divergence(model)``
    through ``kl_hyper()``. Gradients reach s only through autograd, so layers with this prior use
    the reference (autograd) path.
    """

    def __init__(self, family="gaussian", hyperprior="half_cauchy", hyper_scale=1.0, alpha=1.0,
                 init_scale=1.0, init_log_scale_rho=-4.0):
        super().__init__()
        if family not in FAMILIES:
            raise ValueError(f"unknown family {family!r}; choose one of {FAMILIES}")
        if hyperprior not in HYPERPRIORS:
            raise ValueError(f"unknown hyperprior {hyperprior!r}; choose one of {HYPERPRIORS}")
        self.family, self.hyperprior = family, hyperprior
        self._register_constant("hyper_scale", _positive("hyper_scale", hyper_scale))
        self._register_constant("alpha", _positive("alpha", alpha))
        init_scale = _positive("init_scale", init_scale)
        self.log_scale_mu = nn.Parameter(torch.tensor(math.log(init_scale)))
        self.log_scale_rho = nn.Parameter(torch.tensor(float(init_log_scale_rho)))

    def _q(self):
        return torch.distributions.Normal(self.log_scale_mu,
                                          torch.nn.functional.softplus(self.log_scale_rho))

    def _draw_log_scale(self):
        return self._q().rsample()

    def scale(self):
        """Return the posterior median of the prior scale, exp(m) (a float)."""
        return math.exp(self.log_scale_mu.item())

    def _family(self, s):
        """Return the torch distribution of w given the scale s."""
        dist = {"gaussian": torch.distributions.Normal, "laplace": torch.distributions.Laplace,
                "cauchy": torch.distributions.Cauchy}[self.family]
        return dist(torch.zeros_like(s), s)

    def log_prob(self, w):
        """Return elementwise log p(w | s) for one reparameterised draw of s from q."""
        return self._family(self._draw_log_scale().exp()).log_prob(w)

    def log_prob_and_grad(self, w):
        raise NotImplementedError("LearnedScalePrior is differentiated by autograd (impl "
                                  "'reference'); BayesLinear picks that path by itself")

    def hyper_log_prob(self, log_s):
        """Return log p(log s): the hyperprior density of s times the Jacobian e^{log s}."""
        s = log_s.exp()
        scale, alpha = self.hyper_scale.to(log_s.dtype), self.alpha.to(log_s.dtype)
        if self.hyperprior == "half_normal":
            d = torch.distributions.HalfNormal(scale)
        elif self.hyperprior == "half_cauchy":
            d = torch.distributions.HalfCauchy(scale)
        else:
            d = torch.distributions.InverseGamma(alpha, scale)
        return d.log_prob(s) + log_s

    def kl_hyper(self):
        """Return a one-sample estimate of KL[q(log s) || p(log s)] (reparameterised)."""
        log_s = self._draw_log_scale()
        return self._q().log_prob(log_s) - self.hyper_log_prob(log_s)

    def sample(self, shape):
        """Return draws of w: s from q, then w | s from the family."""
        with torch.no_grad():
            return self._family(self._draw_log_scale().exp()).sample(shape)

    def extra_repr(self):
        return (f"family={self.family!r}, hyperprior={self.hyperprior!r}, "
                f"hyper_scale={self._buf('hyper_scale'):.4g}, scale~{self.scale():.4g}")


def make_prior(kind="mixture", **kwargs):
    """Return a prior by name: 'gaussian', 'mixture', 'laplace', 'cauchy', 'flat' or 'learned'."""
    table = {"gaussian": GaussianPrior, "mixture": ScaleMixturePrior,
             "laplace": LaplacePrior, "cauchy": CauchyPrior, "flat": FlatPrior,
             "learned": LearnedScalePrior}
    if kind not in table:
        raise ValueError(f"unknown prior {kind!r}; choose one of {sorted(table)}")
    return table[kind](**kwargs)
