"""Bayesian layers: a diagonal Gaussian posterior q(w | mu, rho) with sigma = softplus(rho).

Conventions
- ``BayesLinear`` mirrors ``nn.Linear``. A 2-D input (batch, in) uses one weight sample; a 3-D input
  (S, batch, in) is read as S Monte-Carlo copies and gets S independent weight samples in one batched
  matmul (see ``helpers.elbo.sample_forward``).
- ``layer.sample`` switches between sampling weights (True) and using the posterior mean (False),
  independently of ``train()``/``eval()``.
- After a sampling forward pass ``layer.kl`` holds the KL estimate of that pass: the paper's Monte-Carlo
  estimate log q(w|theta) - log p(w) averaged over the S samples (``kl="mc"``, any prior) or the closed
  form (``kl="closed"``, Gaussian prior only). ``kl_divergence(model)`` sums it over layers.
- ``impl="fast"`` (default) computes the same values and gradients as ``impl="reference"`` (plain
  autograd) with hand-written gradients: because w = mu + sigma * eps, the total derivative of
  log q(w|theta) w.r.t. theta is that of -sum(log sigma), and the prior supplies d log p/dw.
"""
import contextlib
import copy
import math

import torch
from torch import nn
from torch.nn import functional as F

from . import native
from .priors import LOG_SQRT_2PI, GaussianPrior, Prior, ScaleMixturePrior

ESTIMATORS = ("reparam", "lrt", "flipout")
KL_MODES = ("mc", "closed")
IMPLS = ("fast", "reference")


def softplus(rho):
    """Return sigma = log(1 + exp(rho)); on the CPU through log1p(exp(.)) (several times faster than
    F.softplus there) whenever every rho <= 20, where it is exact to float rounding."""
    if rho.device.type == "cpu" and rho.numel() > 4096 and rho.max().item() <= 20.0:
        e = torch.exp(rho)
        return torch.log1p(e) if rho.requires_grad and torch.is_grad_enabled() else e.log1p_()
    return F.softplus(rho)


def log_softplus(rho):
    """Return log softplus(rho), finite for every rho: below -20 softplus(rho) = e^rho (1 - e^rho/2
    + ...), so its log is rho to float precision (and softplus itself may underflow to 0)."""
    return torch.where(rho < -20.0, rho, torch.log(softplus(rho)))


def sigmoid_over_softplus(rho, sigma=None):
    """Return sigmoid(rho) / softplus(rho) (= d log sigma / d rho), finite for every rho: both are
    ~e^rho below -20, where the ratio is 1 - e^rho / 2 to float precision."""
    sigma = softplus(rho) if sigma is None else sigma
    return torch.where(rho < -20.0, 1.0 - 0.5 * torch.exp(rho), torch.sigmoid(rho) / sigma)


def _noise(mu, n_samples, seed=None):
    """Return standard normal noise shaped like ``mu`` (with a leading sample dim when S > 1):
    from the C kernels' generator when a ``seed`` is given, else from torch.randn."""
    shape = mu.shape if n_samples == 1 else (n_samples, *mu.shape)
    if seed is not None:
        return native.normal(shape, seed)
    return torch.randn(shape, dtype=mu.dtype, device=mu.device)


def standard_normal(shape, like):
    """Return N(0, 1) noise of ``shape`` drawn exactly as a ``BayesLinear`` sampling a tensor like
    ``like`` would draw it next (the C kernels' generator for float32 CPU tensors, else
    ``torch.randn``), so that a hand-written layer can be compared with it number for number."""
    seed = native.draw_seed() if native.usable(like) else None
    if seed is not None:
        return native.normal(tuple(shape), seed)
    return torch.randn(tuple(shape), dtype=like.dtype, device=like.device)


class _NativeSample(torch.autograd.Function):
    """The fused sampler and KL (Monte-Carlo for any prior, or closed form) in the C kernels.

    Same values and gradients as ``_SampleMC`` / ``_SampleClosed``, in one pass over the weights
    forward and one backward (which reads what the forward pass kept for it: the noise, rho, and
    d log p(w)/dw for the Monte-Carlo KL; saved for backward, so an in-place change of rho
    before the backward pass is caught by autograd's version check)."""

    @staticmethod
    def forward(ctx, mu, rho, prior, n_samples, closed, keep):
        # keep: a backward pass may follow (decided by the caller: inside forward grad mode is off)
        seed = native.draw_seed()
        if closed:
            kind, consts, inv_s2 = -1, torch.zeros(6), 1.0 / prior._buf("sigma") ** 2
        else:
            (kind, consts), inv_s2 = native.prior_constants(prior), 0.0
        w, eps, sums, kept = native.forward(mu.detach(), rho.detach(), n_samples, seed, kind,
                                            consts, keep=keep)
        n = mu.numel()
        s0, s1, s2, s3, s4 = sums.tolist()  # float64, as the sums
        if closed:
            kl = (n * (0.5 * math.log(1.0 / inv_s2) - 0.5) - s0 + (s3 + s4) * (0.5 * inv_s2))
        else:
            logq = -n_samples * s0 - 0.5 * s1 - LOG_SQRT_2PI * n * n_samples
            kl = (logq - s2) / n_samples
        if keep:
            ctx.save_for_backward(mu, eps, *kept)
        ctx.args = (n_samples, kind, inv_s2)
        return w, torch.tensor(kl, dtype=mu.dtype)

    @staticmethod
    def backward(ctx, grad_w, grad_kl):
        mu, eps, *kept = ctx.saved_tensors
        n_samples, kind, inv_s2 = ctx.args
        grad_mu, grad_rho = native.backward(mu.detach(), eps, kept, grad_w, grad_kl.item(),
                                            n_samples, kind, inv_s2)
        return grad_mu, grad_rho, None, None, None, None


class _SampleMC(torch.autograd.Function):
    """Fused w = mu + sigma * eps and the paper's Monte-Carlo KL, with analytic gradients."""

    @staticmethod
    def forward(ctx, mu, rho, prior, n_samples):
        sigma = softplus(rho)
        eps = _noise(mu, n_samples)
        w = torch.addcmul(mu, sigma, eps)
        logp, grad_logp = prior.log_prob_and_grad(w)
        flat = eps.reshape(-1)
        # log q(w|theta) = sum(-log sigma - eps^2 / 2 - log sqrt(2 pi)); average over samples
        logq = (-log_softplus(rho).sum() * n_samples - 0.5 * torch.dot(flat, flat)
                - LOG_SQRT_2PI * eps.numel())
        kl = (logq - logp) / n_samples
        ctx.save_for_backward(rho, sigma, eps, grad_logp)
        ctx.n_samples = n_samples
        return w, kl

    @staticmethod
    def backward(ctx, grad_w, grad_kl):
        rho, sigma, eps, grad_logp = ctx.saved_tensors
        S = ctx.n_samples
        # out of place: the saved tensors stay valid for a second backward (retain_graph=True)
        g = grad_logp * (grad_kl / (-S))  # d(kl)/dw scaled by the incoming gradient
        if grad_w is not None:
            g = g + grad_w
        grad_sigma = eps * g
        if S > 1:
            g, grad_sigma = g.sum(0), grad_sigma.sum(0)
        # d sigma/d rho = sigmoid(rho); log q's direct term -log sigma gives -sigmoid / softplus
        grad_rho = grad_sigma * torch.sigmoid(rho) - grad_kl * sigmoid_over_softplus(rho, sigma)
        return g, grad_rho, None, None


class _SampleClosed(torch.autograd.Function):
    """Fused w = mu + sigma * eps and the closed-form KL to N(0, s^2), with analytic gradients."""

    @staticmethod
    def forward(ctx, mu, rho, prior_sigma, n_samples):
        sigma = softplus(rho)
        eps = _noise(mu, n_samples)
        w = torch.addcmul(mu, sigma, eps)
        s2 = prior_sigma**2
        fm, fs = mu.reshape(-1), sigma.reshape(-1)
        kl = (mu.numel() * (math.log(prior_sigma) - 0.5) - log_softplus(rho).sum()
              + (torch.dot(fs, fs) + torch.dot(fm, fm)) / (2 * s2))
        ctx.save_for_backward(mu, rho, sigma, eps)
        ctx.s2, ctx.n_samples = s2, n_samples
        return w, kl

    @staticmethod
    def backward(ctx, grad_w, grad_kl):
        mu, rho, sigma, eps = ctx.saved_tensors
        S, s2 = ctx.n_samples, ctx.s2
        grad_mu = mu * (grad_kl / s2)
        grad_sigma = sigma * (grad_kl / s2)  # d KL/d sigma = sigma / s^2 - 1 / sigma
        if grad_w is not None:
            gw_eps = grad_w * eps
            grad_mu = grad_mu + (grad_w.sum(0) if S > 1 else grad_w)
            grad_sigma = grad_sigma + (gw_eps.sum(0) if S > 1 else gw_eps)
        grad_rho = grad_sigma * torch.sigmoid(rho) - grad_kl * sigmoid_over_softplus(rho, sigma)
        return grad_mu, grad_rho, None, None


def _reference_sample(mu, rho, prior, n_samples, kl_mode):
    """Plain-autograd reference: the textbook formulas, used to test the fast path."""
    sigma = F.softplus(rho)
    eps = _noise(mu, n_samples, native.draw_seed() if native.usable(mu) else None)
    w = mu + sigma * eps
    if kl_mode == "closed":
        s = prior.sigma
        kl = (torch.log(s) - torch.log(sigma) + (sigma**2 + mu**2) / (2 * s**2) - 0.5).sum()
        return w, kl
    log_q = (-torch.log(sigma) - (w - mu) ** 2 / (2 * sigma**2) - LOG_SQRT_2PI).sum()
    log_p = prior.log_prob(w).sum()
    return w, (log_q - log_p) / n_samples


def closed_form_kl(mu, sigma, prior_sigma):
    """Return sum KL(N(mu, sigma^2) || N(0, prior_sigma^2)) over all entries."""
    s = torch.as_tensor(prior_sigma, dtype=mu.dtype, device=mu.device)
    return (torch.log(s) - torch.log(sigma) + (sigma**2 + mu**2) / (2 * s**2) - 0.5).sum()


class BayesLinear(nn.Module):
    """Linear layer with a factorised Gaussian posterior over weights and biases (Bayes by Backprop).

    Mirrors ``nn.Linear(in_features, out_features, bias=True)``; extra keywords:
    ``prior`` (a ``helpers.priors.Prior``, default the paper's scale mixture pi=1/2, sigma1=1,
    sigma2=e^-6), ``rho_init`` (initial rho, sigma = softplus(rho)), ``kl`` ('mc' or 'closed'),
    ``estimator`` ('reparam', or 'lrt'/'flipout' with the closed-form KL) and ``impl``.
    """

    def __init__(self, in_features, out_features, bias=True, prior=None, rho_init=-6.0,
                 mu_init_scale=None, kl="mc", estimator="reparam", impl="fast",
                 device=None, dtype=None):
        super().__init__()
        if int(in_features) <= 0 or int(out_features) <= 0:
            raise ValueError(f"in_features and out_features must be positive, got "
                             f"{in_features} and {out_features}")
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.prior = prior if prior is not None else ScaleMixturePrior()
        if not isinstance(self.prior, Prior):
            raise ValueError(f"prior must be a helpers.priors.Prior, got {type(self.prior).__name__}")
        self.rho_init = float(rho_init)
        if not math.isfinite(self.rho_init):
            raise ValueError(f"rho_init must be finite, got {rho_init!r}")
        self.mu_init_scale = mu_init_scale
        self.configure(kl=kl, estimator=estimator, impl=impl)
        kw = {"device": device, "dtype": dtype}
        self.weight_mu = nn.Parameter(torch.empty(out_features, in_features, **kw))
        self.weight_rho = nn.Parameter(torch.empty(out_features, in_features, **kw))
        if bias:
            self.bias_mu = nn.Parameter(torch.empty(out_features, **kw))
            self.bias_rho = nn.Parameter(torch.empty(out_features, **kw))
        else:
            self.register_parameter("bias_mu", None)
            self.register_parameter("bias_rho", None)
        self.sample = True
        self.kl = None
        # a prior with trainable parameters (a learned scale) needs autograd through log p(w)
        self._learned_prior = any(True for _ in self.prior.parameters())
        self.reset_parameters()

    def configure(self, kl=None, estimator=None, impl=None):
        """Set the KL mode, gradient estimator and implementation; return self."""
        kl = kl or getattr(self, "kl_mode", "mc")
        estimator = estimator or getattr(self, "estimator", "reparam")
        impl = impl or getattr(self, "impl", "fast")
        for name, value, options in (("kl", kl, KL_MODES), ("estimator", estimator, ESTIMATORS),
                                     ("impl", impl, IMPLS)):
            if value not in options:
                raise ValueError(f"{name} must be one of {options}, got {value!r}")
        if kl == "closed" and not isinstance(self.prior, GaussianPrior):
            raise ValueError("kl='closed' needs a GaussianPrior; use kl='mc' (the paper's "
                             f"estimator) for {type(self.prior).__name__}")
        if estimator != "reparam" and kl != "closed":
            raise ValueError(f"estimator={estimator!r} samples activations, not weights, so it needs "
                             "kl='closed' (and a GaussianPrior)")
        self.kl_mode, self.estimator, self.impl = kl, estimator, impl
        return self

    def reset_parameters(self):
        """Initialise mu like nn.Linear (U(-1/sqrt(in), 1/sqrt(in))) and rho to ``rho_init``."""
        bound = self.mu_init_scale or 1.0 / math.sqrt(self.in_features)
        with torch.no_grad():
            self.weight_mu.uniform_(-bound, bound)
            self.weight_rho.fill_(self.rho_init)
            if self.bias_mu is not None:
                self.bias_mu.uniform_(-bound, bound)
                self.bias_rho.fill_(self.rho_init)

    @property
    def weight_sigma(self):
        """Return the posterior standard deviation of the weights, softplus(rho)."""
        return softplus(self.weight_rho)

    @property
    def bias_sigma(self):
        """Return the posterior standard deviation of the biases (None without bias)."""
        return None if self.bias_rho is None else softplus(self.bias_rho)

    def _sample(self, mu, rho, n_samples):
        if self.impl == "reference" or self._learned_prior:
            return _reference_sample(mu, rho, self.prior, n_samples, self.kl_mode)
        if native.usable(mu) and (self.kl_mode == "closed"
                                  or type(self.prior).__name__ in native.KINDS):
            keep = torch.is_grad_enabled() and (mu.requires_grad or rho.requires_grad)
            return _NativeSample.apply(mu, rho, self.prior, n_samples, self.kl_mode == "closed",
                                       keep)
        if self.kl_mode == "closed":
            return _SampleClosed.apply(mu, rho, self.prior._buf("sigma"), n_samples)
        return _SampleMC.apply(mu, rho, self.prior, n_samples)

    def kl_closed(self):
        """Return the closed-form KL(q || p) of this layer (Gaussian prior only)."""
        if not isinstance(self.prior, GaussianPrior):
            raise ValueError("closed-form KL needs a GaussianPrior")
        kl = closed_form_kl(self.weight_mu, self.weight_sigma, self.prior.sigma)
        if self.bias_mu is not None:
            kl = kl + closed_form_kl(self.bias_mu, self.bias_sigma, self.prior.sigma)
        return kl

    def forward(self, x):
        if x.dim() not in (2, 3) or x.shape[-1] != self.in_features:
            raise ValueError(f"BayesLinear expects input (batch, {self.in_features}) or "
                             f"(samples, batch, {self.in_features}), got {tuple(x.shape)}")
        if not self.sample:
            return F.linear(x, self.weight_mu, self.bias_mu)
        if self.estimator != "reparam":
            return self._forward_activation_noise(x)
        S = x.shape[0] if x.dim() == 3 else 1
        w, kl = self._sample(self.weight_mu, self.weight_rho, S)
        b = None
        if self.bias_mu is not None:
            b, kl_b = self._sample(self.bias_mu, self.bias_rho, S)
            kl = kl + kl_b
        self.kl = kl
        if S == 1:
            return F.linear(x, w, b)
        if b is None:
            return torch.bmm(x, w.transpose(1, 2))
        return torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))

    def _forward_activation_noise(self, x):
        """Local reparameterisation (LRT) or Flipout: noise on activations, closed-form KL."""
        w_sigma = self.weight_sigma
        b_sigma = self.bias_sigma
        mean = F.linear(x, self.weight_mu, self.bias_mu)
        if self.estimator == "lrt":
            var = F.linear(x * x, w_sigma * w_sigma,
                           None if b_sigma is None else b_sigma * b_sigma)
            out = mean + var.clamp_min(1e-16).sqrt() * torch.randn_like(mean)
        else:  # flipout: shared weight noise, decorrelated per example by random signs
            delta_w = w_sigma * torch.randn_like(w_sigma)
            sign_in = torch.empty_like(x).bernoulli_(0.5).mul_(2).sub_(1)
            sign_out = torch.empty_like(mean).bernoulli_(0.5).mul_(2).sub_(1)
            out = mean + F.linear(x * sign_in, delta_w) * sign_out
            if b_sigma is not None:
                out = out + b_sigma * torch.randn_like(b_sigma)
        self.kl = self.kl_closed()
        return out

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias_mu is not None}, kl={self.kl_mode!r}, "
                f"estimator={self.estimator!r}, impl={self.impl!r}")


def kl_divergence(model):
    """Return the sum of the layers' KL terms from the last sampling forward pass (0 if none).

    Priors with a learned scale (``LearnedScalePrior``) add their hyperprior KL once each."""
    total = None
    for layer in bayes_layers(model):
        if layer.kl is None:
            if layer.kl_mode != "closed":
                raise RuntimeError("no KL yet: run a forward pass with sampling on before "
                                   "kl_divergence(model)")
            layer.kl = layer.kl_closed()
        total = layer.kl if total is None else total + layer.kl
    if total is None:
        p = next(model.parameters(), None)
        return torch.zeros((), device=None if p is None else p.device)
    for prior in {id(m): m for m in model.modules() if hasattr(m, "kl_hyper")}.values():
        total = total + prior.kl_hyper()  # a learned prior scale's own KL term, once per prior
    return total


def set_sampling(model, sample=True):
    """Switch every Bayesian layer to sampled weights (True) or posterior means (False); return model."""
    for layer in bayes_layers(model):
        layer.sample = bool(sample)
    return model


@contextlib.contextmanager
def sampling(model, sample=True):
    """Context manager: temporarily set the sampling switch of every Bayesian layer."""
    before = [layer.sample for layer in bayes_layers(model)]
    set_sampling(model, sample)
    try:
        yield model
    finally:
        for layer, flag in zip(bayes_layers(model), before):
            layer.sample = flag


def configure(model, **kwargs):
    """Apply ``BayesLinear.configure(kl=..., estimator=..., impl=...)`` to every layer; return model."""
    for layer in bayes_layers(model):
        layer.configure(**kwargs)
    return model


class BayesConv2d(nn.Module):
    """2-D convolution with a factorised Gaussian posterior (one weight sample per forward pass).

    Mirrors ``nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias)``; uses the
    same fused sampler and KL as ``BayesLinear``. Several Monte-Carlo samples are taken by calling
    the model several times.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True,
                 prior=None, rho_init=-6.0, kl="mc", impl="fast"):
        super().__init__()
        k = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
        self.stride, self.padding = stride, padding
        fan_in = in_channels * k[0] * k[1]
        self._lin = BayesLinear(fan_in, out_channels, bias=bias, prior=prior, rho_init=rho_init,
                                kl=kl, impl=impl)
        self.weight_shape = (out_channels, in_channels, *k)

    @property
    def sample(self):
        return self._lin.sample

    @sample.setter
    def sample(self, value):
        self._lin.sample = value

    @property
    def kl(self):
        return self._lin.kl

    @kl.setter
    def kl(self, value):
        self._lin.kl = value

    @property
    def kl_mode(self):
        return self._lin.kl_mode

    def kl_closed(self):
        """Return the closed-form KL of this layer."""
        return self._lin.kl_closed()

    def configure(self, **kwargs):
        """Set kl/impl like BayesLinear.configure; return self."""
        self._lin.configure(**kwargs)
        return self

    def forward(self, x):
        lin = self._lin
        if lin.sample:
            w, kl = lin._sample(lin.weight_mu, lin.weight_rho, 1)
            b = None
            if lin.bias_mu is not None:
                b, kl_b = lin._sample(lin.bias_mu, lin.bias_rho, 1)
                kl = kl + kl_b
            lin.kl = kl
        else:
            w, b = lin.weight_mu, lin.bias_mu
        return F.conv2d(x, w.view(self.weight_shape), b, self.stride, self.padding)


def bayes_layers(model):
    """Return the Bayesian layers of ``model`` (BayesLinear and BayesConv2d, each counted once)."""
    inner = {id(m._lin) for m in model.modules() if isinstance(m, BayesConv2d)}
    return [m for m in model.modules()
            if isinstance(m, (BayesLinear, BayesConv2d)) and id(m) not in inner]


class BayesMLP(nn.Sequential):
    """The paper's MLP: in -> hidden... -> out with ReLU, every linear layer a BayesLinear."""

    def __init__(self, in_features=784, hidden=(400, 400), out_features=10, prior=None,
                 activation=nn.ReLU, **layer_kwargs):
        sizes = [in_features, *hidden, out_features]
        mods = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            mods.append(BayesLinear(a, b, prior=prior, **layer_kwargs))
            if i < len(sizes) - 2:
                mods.append(activation())
        super().__init__(*mods)


def mlp(in_features=784, hidden=(400, 400), out_features=10, dropout=0.0, activation=nn.ReLU):
    """Return a deterministic ``nn.Sequential`` MLP (optionally with dropout before each hidden layer's output)."""
    sizes = [in_features, *hidden, out_features]
    mods = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        mods.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            mods.append(activation())
            if dropout > 0:
                mods.append(nn.Dropout(dropout))
    return nn.Sequential(*mods)


def copy_means(bayes_model, model):
    """Set the posterior means of ``bayes_model``'s Bayesian layers to the weights and biases of
    ``model``'s ``nn.Linear`` layers (in order; a warm start from a trained network); return
    ``bayes_model``."""
    src = [m for m in model.modules() if isinstance(m, nn.Linear)]
    dst = bayes_layers(bayes_model)
    shapes = ([tuple(m.weight.shape) for m in src], [tuple(m.weight_mu.shape) for m in dst])
    if shapes[0] != shapes[1]:
        raise ValueError(f"cannot copy the weights of a network with linear layers {shapes[0]} into "
                         f"Bayesian layers {shapes[1]}: the architectures differ")
    with torch.no_grad():
        for a, b in zip(src, dst):
            b.weight_mu.copy_(a.weight)
            if b.bias_mu is not None:
                if a.bias is None:
                    raise ValueError("the source network has no biases; the Bayesian one has")
                b.bias_mu.copy_(a.bias)
    return bayes_model


def bayesify(model, prior=None, copy_weights=True, **layer_kwargs):
    """Return a BBB twin of ``model``: every ``nn.Linear`` replaced by a ``BayesLinear``.

    With ``copy_weights`` the posterior means start at the original weights, so the twin in
    posterior-mean mode computes exactly what ``model`` computes. The original is not modified.
    """
    def convert(module):
        if isinstance(module, nn.Linear):
            p = module.weight
            return BayesLinear(module.in_features, module.out_features, bias=module.bias is not None,
                               prior=prior, device=p.device, dtype=p.dtype, **layer_kwargs)
        if isinstance(module, nn.Sequential):
            return nn.Sequential(*[convert(m) for m in module])
        if list(module.children()):
            raise ValueError(f"bayesify converts nn.Sequential models of nn.Linear and parameter-free "
                             f"layers; found container {type(module).__name__}")
        if any(True for _ in module.parameters()):
            raise ValueError(f"bayesify cannot convert {type(module).__name__}: only nn.Linear layers "
                             "carry parameters it knows how to make Bayesian")
        return copy.deepcopy(module)

    if not isinstance(model, nn.Sequential):
        raise ValueError(f"bayesify expects an nn.Sequential, got {type(model).__name__}")
    twin = convert(model)
    return copy_means(twin, model) if copy_weights else twin


def bayes_conv_net(prior=None, channels=32, kernel_size=5, hidden=64, n_classes=10,
                   activation=nn.Tanh, **layer_kwargs):
    """Return the report's Bayesian conv net for 1x28x28 images (every layer Bayesian).

    conv 5x5 (32) -> tanh -> max-pool 2 -> conv 5x5 (32) -> tanh -> max-pool 2 -> dense 64 -> tanh
    -> dense 10. Each layer gets its own copy of ``prior`` (default: the paper's scale mixture).
    """
    def p():
        return copy.deepcopy(prior) if prior is not None else None
    side = ((28 - kernel_size + 1) // 2 - kernel_size + 1) // 2
    return nn.Sequential(
        BayesConv2d(1, channels, kernel_size, prior=p(), **layer_kwargs), activation(),
        nn.MaxPool2d(2),
        BayesConv2d(channels, channels, kernel_size, prior=p(), **layer_kwargs), activation(),
        nn.MaxPool2d(2), nn.Flatten(),
        BayesLinear(channels * side * side, hidden, prior=p(), **layer_kwargs), activation(),
        BayesLinear(hidden, n_classes, prior=p(), **layer_kwargs))
