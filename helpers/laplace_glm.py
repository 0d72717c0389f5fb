"""An exact fast GLM predictive with the probit link for laplace-torch 0.3's fits of our MLPs.

The library's GLM predictive of a classifier is, per input x, the logits f(x) of the MAP network
and the output covariance J P^{-1} J^T (J: the Jacobian of the logits w.r.t. the fitted weights,
P: the posterior precision); with the probit link (``link_approx="probit"``) it returns
softmax(f / sqrt(1 + pi/8 * diag(J P^{-1} J^T))): only the covariance's diagonal enters. It
builds J for every parameter (a (batch, classes, parameters) tensor: ~0.3 s per image for the
all-layer KFAC fit of a 2x400 MLP on one CPU thread).

For an ``nn.Linear`` layer with weight W (d_out x d_in), the Jacobian of logit k w.r.t. W is the
outer product g_k a^T (g_k = d f_k / d z: the gradient w.r.t. the layer's pre-activation z, a: the
layer's input), and w.r.t. its bias g_k. The library's posterior precision is block-diagonal over
the parameter tensors (``la.params``, in the network's order: weight, bias, weight, bias, ...):

- KFAC (``KronLaplace``, ``KronLLLaplace``): ``la.H`` is a ``KronDecomposed``; a weight block holds
  the eigenvectors (Q_G, Q_A) and eigenvalues (l_G, l_A) of its two factors (first the d_out x d_out
  factor G, then the d_in x d_in factor A; the weight's parameter vector is W row-major, so the
  block is G (x) A), a bias block one full d_out x d_out matrix's (Q_b, l_b).
  ``posterior_precision`` is ``H * H_factor + prior_precision``: the Hessian factor
  (1 / sigma^2 / temperature; 1 for classification) multiplies each factor's eigenvalues by its
  square root (one-factor blocks: by itself), and the prior precision delta (one value, or one per
  parameter tensor) is added to the Kronecker product's eigenvalues: a weight block's eigenvalues
  are H_factor * l_G,i l_A,j + delta (no damping: the library's default). So, per block,
      var_k = sum_ij (Q_G^T g_k)_i^2 (Q_A^T a)_j^2 / (H_factor l_G,i l_A,j + delta)
      var_k += sum_i (Q_b^T g_k)_i^2 / (H_factor l_b,i + delta)            (bias)
- diagonal (``DiagLaplace``): ``la.H`` is the flat GGN diagonal; posterior precision
  H_factor * H + delta per parameter, so var_k = sum_oi g_ko^2 a_i^2 / (H_factor H_oi + delta)
  + sum_o g_ko^2 / (H_factor H_b,o + delta).

What does not depend on delta -- the logits and, per block, Q_G^T g_k and (Q_A^T a)^2 (or g and
a^2) -- is computed once per input (``cache``); each prior precision then costs a
(batch, d_in) x (d_in, d_out) product per block (``probs``): a whole grid of prior precisions
costs about one pass. The gradients g come from the ReLU MLP's backward recursion
(g_L = identity; g_l = (g_{l+1} W_{l+1}) * 1[z_l > 0]), computed in float64 by default. The same
cache gives the whole output covariance (``covariance``: sum over a block's rows of
(Q_G^T g_k)_i (Q_G^T g_k')_i sum_j (Q_A^T a)_j^2 / (...)) and, through the library's own
``normal_samples``, its GLM samples (``samples``; the mutual information).

``tests/test_laplace_fast_glm.py`` checks the probabilities against ``la(x, pred_type="glm",
link_approx="probit")`` for every flavour, scalar and per-tensor prior precisions (within 1e-5;
~1e-7 measured: the library's float32 rounding), and the covariance and samples against the
library's.
"""
import math

import torch
from torch import nn

PRIOR_PER_TENSOR = "one value per fitted parameter tensor (weight, bias, ...)"


def _network(la):
    """The MLP the Laplace object linearises (unwrapping the last-layer feature extractor)."""
    model = la.model
    return getattr(model, "model", model) if type(model).__name__ == "FeatureExtractor" else model


def _layers(net):
    """The network's modules in order; only Linear, ReLU, Dropout (in eval mode) and Identity."""
    mods = list(net.children()) if isinstance(net, nn.Sequential) else [net]
    for m in mods:
        if isinstance(m, nn.Dropout):
            if m.training:
                raise ValueError("the fast GLM predictive needs the network in eval mode")
        elif not isinstance(m, (nn.Linear, nn.ReLU, nn.Identity)):
            raise ValueError(f"the fast GLM predictive handles ReLU MLPs only, not {type(m)}")
    return mods


class FastGLM:
    """The GLM probit predictive of a fitted laplace-torch object ``la`` (all-layer or
    last-layer, KFAC or diagonal), exact up to rounding, for any prior precision.

    ``cache(x)`` holds what does not depend on the prior precision; ``probs(cache, delta)``
    gives the (B, C) predictive for the prior precision ``delta`` (a float, or a tensor of one
    value per parameter tensor as ``la.prior_precision``; default: ``la.prior_precision``)."""

    def __init__(self, la, dtype=torch.float64):
        self.la, self.dtype = la, dtype
        name = type(la).__name__
        if name in ("KronLaplace", "KronLLLaplace"):
            self.structure = "kron"
        elif name in ("DiagLaplace", "DiagLLLaplace"):
            self.structure = "diag"
        else:
            raise ValueError(f"no fast GLM predictive for {name}")
        if getattr(la, "damping", False):
            raise ValueError("damped KFAC is not handled")
        self.last_layer = "LL" in name
        self.net = _network(la)
        self.mods = _layers(self.net)
        linears = [m for m in self.mods if isinstance(m, nn.Linear)]
        fitted = [linears[-1]] if self.last_layer else linears
        # the blocks in la.params' order: (linear index in ``linears``, 'weight' | 'bias')
        self.blocks = []
        for lin in fitted:
            i = linears.index(lin)
            self.blocks.append((i, "weight"))
            if lin.bias is not None:
                self.blocks.append((i, "bias"))
        params = [getattr(linears[i], kind) for i, kind in self.blocks]
        # the fitted parameter tensors, in the order of the library's blocks
        theirs = list(la.model.last_layer.parameters()) if self.last_layer else la.params
        if len(params) != len(theirs) or any(p is not q for p, q in zip(params, theirs)):
            raise ValueError("the fitted parameters are not the network's Linear weights and "
                             "biases in order")
        self.n_linear = len(linears)
        h = float(la._H_factor)
        d = dict(device=la._device, dtype=dtype)
        self.factors = []  # per block: what the eigenvalue denominators need
        if self.structure == "kron":
            H = la.H
            for (i, kind), Qs, ls in zip(self.blocks, H.eigenvectors, H.eigenvalues):
                if kind == "weight":
                    if len(ls) != 2:
                        raise ValueError("a weight block without two Kronecker factors")
                    lam = torch.outer(ls[0].to(**d), ls[1].to(**d)) * h
                    self.factors.append({"QG": Qs[0].to(**d), "QA": Qs[1].to(**d), "lam": lam})
                else:
                    self.factors.append({"QG": Qs[0].to(**d), "lam": ls[0].to(**d) * h})
        else:
            flat, start = la.H.to(**d), 0
            for p in params:
                self.factors.append({"lam": flat[start:start + p.numel()].reshape(p.shape) * h})
                start += p.numel()

    @torch.no_grad()
    def cache(self, x):
        """Return what the predictive of inputs ``x`` needs for any prior precision: the logits
        and, per block, the squared projections of g and a (``dtype``)."""
        x = x.to(self.la._device)
        acts, masks, linears = [], [], []
        h = x
        for m in self.mods:
            if isinstance(m, nn.Linear):
                acts.append(h)
                linears.append(m)
                h = m(h)
            elif isinstance(m, nn.ReLU):
                masks.append((len(linears) - 1, h > 0))
                h = m(h)
        f = h
        dt = self.dtype
        mask_of = dict(masks)
        # g_l: (B, K, d_out of linear l), from the last layer down
        K = f.shape[1]
        g = [None] * len(linears)
        g[-1] = torch.eye(K, device=f.device, dtype=dt).expand(len(x), K, K)
        lowest = min(i for i, _ in self.blocks)
        for li in range(len(linears) - 2, lowest - 1, -1):
            back = g[li + 1] @ linears[li + 1].weight.to(dt)
            if li in mask_of:
                back = back * mask_of[li].to(dt)[:, None, :]
            g[li] = back
        out = []  # per block: g projected (B, K, d_out), and the squared projected input
        for (i, kind), fac in zip(self.blocks, self.factors):
            if self.structure == "kron":
                U = g[i] @ fac["QG"]
                V = (acts[i].to(dt) @ fac["QA"]).square() if kind == "weight" else None
            else:
                U = g[i]
                V = acts[i].to(dt).square() if kind == "weight" else None
            out.append((U, V))
        return {"f": f.to(dt), "blocks": out}

    def _deltas(self, delta):
        if delta is None:
            delta = self.la.prior_precision
        d = torch.as_tensor(delta, dtype=self.dtype, device=self.la._device).reshape(-1)
        if len(d) == 1:
            return d.expand(len(self.blocks))
        if len(d) != len(self.blocks):
            raise ValueError(f"prior precision: one value or {len(self.blocks)} "
                             f"({PRIOR_PER_TENSOR})")
        return d

    def _weights(self, cache, delta):
        """Per block (B, d_out) (or (d_out,) for a bias): sum_i V[b,i] / (lam[o,i] + delta)."""
        for (U, V), fac, d in zip(cache["blocks"], self.factors, self._deltas(delta)):
            inv = 1.0 / (fac["lam"] + d)
            yield U, (inv if V is None else V @ inv.T)

    def variance(self, cache, delta=None):
        """(B, K): the diagonal of the GLM output covariance under prior precision ``delta``."""
        var = torch.zeros_like(cache["f"])
        for U, T in self._weights(cache, delta):
            var += (U.square() * (T if T.ndim == 1 else T[:, None, :])).sum(-1)
        return var

    def covariance(self, cache, delta=None):
        """(B, K, K): the whole GLM output covariance (for the library's GLM samples)."""
        B, K = cache["f"].shape
        cov = cache["f"].new_zeros(B, K, K)
        for U, T in self._weights(cache, delta):
            cov += (U * (T if T.ndim == 1 else T[:, None, :])) @ U.transpose(1, 2)
        return cov

    def probs(self, cache, delta=None):
        """(B, K): the probit predictive, softmax(f / sqrt(1 + pi/8 var)), as the library's."""
        kappa = 1.0 / torch.sqrt(1.0 + math.pi / 8 * self.variance(cache, delta))
        return torch.softmax(kappa * cache["f"], dim=-1)

    def __call__(self, x, delta=None, batch_size=1000):
        """(B, K): the predictive of ``x`` under ``delta`` (batched; nothing kept)."""
        return torch.cat([self.probs(self.cache(x[i:i + batch_size]), delta)
                          for i in range(0, len(x), batch_size)])


def samples(fast, x, n_samples, delta=None, generator=None, batch_size=1000):
    """(S, B, K): softmax of logits drawn from the GLM Gaussian, as the library's
    ``la.predictive_samples(x, pred_type="glm", n_samples, generator=...)`` draws them (its own
    ``normal_samples``, in the library's dtype). The library draws one (K, S) block of normal
    numbers per call, shared by that call's inputs: batches of ``batch_size`` give its samples
    when it was called on the same batches with the same generator."""
    from laplace.utils.utils import normal_samples
    dt = fast.la._dtype
    out = []
    for i in range(0, len(x), batch_size):
        c = fast.cache(x[i:i + batch_size])
        f, cov = c["f"].to(dt), fast.covariance(c, delta).to(dt)
        out.append(torch.softmax(normal_samples(f, cov, n_samples, generator), dim=-1))
    return torch.cat(out, dim=1)


def library_probs(la, x, delta=None, batch_size=32):
    """The library's own GLM probit predictive of ``x`` under prior precision ``delta`` (the
    object's own when None; restored afterwards)."""
    import warnings
    before = la.prior_precision.detach().clone()
    try:
        if delta is not None:
            la.prior_precision = delta
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.cat([la(x[i:i + batch_size], pred_type="glm", link_approx="probit")
                              .detach() for i in range(0, len(x), batch_size)])
    finally:
        la.prior_precision = before


def max_abs_difference(la, x, delta=None):
    """max |fast - library| over the probabilities of ``x`` (the exactness check)."""
    fast = FastGLM(la)(x, delta)
    return float((fast - library_probs(la, x, delta).to(fast)).abs().max())
