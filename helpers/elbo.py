"""The minibatch variational free energy (negative ELBO) of the paper, eq. (8)-(9).

F_i(D_i, theta) = w_i KL[q(w|theta) || P(w)] - E_q[log P(D_i | w)], estimated with ``n_samples``
Monte-Carlo weight samples; the KL weights w_i are ``uniform`` (1/M, eq. 8) or ``blundell``
(pi_i = 2^(M-i) / (2^M - 1), eq. 9).
"""
import math
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from .layers import bayes_layers, kl_divergence

KL_WEIGHTINGS = ("uniform", "blundell", "none")


def kl_weights(M, scheme="uniform"):
    """Return a float64 tensor of the M minibatch KL weights (they sum to 1; 'none' gives zeros).

    ``blundell``: pi_i = 2^(M-i) / (2^M - 1), i = 1..M, computed in log space so that it stays finite
    for any M: log pi_i = (M - i) log 2 - log(2^M - 1), log(2^M - 1) = M log 2 + log1p(-2^-M).
    """
    M = int(M)
    if M < 1:
        raise ValueError(f"M (the number of minibatches) must be >= 1, got {M}")
    if scheme == "uniform":
        return torch.full((M,), 1.0 / M, dtype=torch.float64)
    if scheme == "blundell":
        i = torch.arange(1, M + 1, dtype=torch.float64)
        log2 = math.log(2.0)
        log_norm = M * log2 + math.log1p(-math.exp(-M * log2))
        return torch.exp((M - i) * log2 - log_norm)
    if scheme == "none":
        return torch.zeros(M, dtype=torch.float64)
    raise ValueError(f"unknown kl weighting {scheme!r}; choose one of {KL_WEIGHTINGS}")


def sample_forward(model, x, n_samples=1):
    """Return the model's outputs for ``n_samples`` weight samples: (S, batch, ...) for S > 1.

    Layers see a 3-D input (S, batch, features) and draw S weight samples in one batched matmul.
    For S == 1 the output has no sample dimension.
    """
    n_samples = int(n_samples)
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    if n_samples == 1:
        return model(x)
    if x.dim() != 2:
        # layers that need a fixed input rank (convolutions): loop over samples, average the KL
        layers = bayes_layers(model)
        outs, kls = [], []
        for _ in range(n_samples):
            outs.append(model(x))
            kls.append([layer.kl for layer in layers])
        for j, layer in enumerate(layers):
            if layer.sample and kls[0][j] is not None:
                layer.kl = sum(k[j] for k in kls) / n_samples
        return torch.stack(outs)
    return model(x.unsqueeze(0).expand(n_samples, *x.shape))


def categorical_nll(logits, y):
    """Return the summed negative log-likelihood of labels ``y`` under softmax(logits), mean over samples."""
    if logits.dim() == 3:
        S = logits.shape[0]
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.repeat(S),
                               reduction="sum") / S
    return F.cross_entropy(logits, y, reduction="sum")


def gaussian_nll(pred, y, sigma):
    """Return the summed Gaussian negative log-likelihood of ``y`` with mean ``pred`` and std ``sigma``.

    ``pred`` may carry a leading sample dimension (then the mean over samples is returned).
    """
    sigma = torch.as_tensor(sigma, dtype=pred.dtype, device=pred.device)
    nll = 0.5 * ((y - pred) / sigma) ** 2 + torch.log(sigma) + 0.5 * math.log(2 * math.pi)
    if pred.dim() > y.dim():
        return nll.sum() / pred.shape[0]
    return nll.sum()


@dataclass
class ELBO:
    """The pieces of one minibatch objective: ``loss`` (to minimise, per example), ``nll`` and ``kl``."""
    loss: torch.Tensor
    nll: torch.Tensor
    kl: torch.Tensor
    output: torch.Tensor


REDUCTIONS = ("mean", "sum")


def elbo(model, x, y, kl_weight, n_samples=1, nll=categorical_nll, reduction="mean"):
    """Return ``ELBO(loss, nll, kl, output)`` for one minibatch.

    ``reduction='mean'``: loss = (kl_weight * KL + NLL_sum) / batch_size, the paper's F_i divided by
    the batch size (learning rates on the scale of Adam's usual ones). ``reduction='sum'``: loss =
    kl_weight * KL + NLL_sum, the paper's F_i itself (eq. 8), so that the paper's learning rates
    (10^-3 .. 10^-5 with plain SGD) take the steps the paper took. NLL is summed over the
    minibatch and averaged over the ``n_samples`` weight samples.
    """
    if reduction not in REDUCTIONS:
        raise ValueError(f"unknown reduction {reduction!r}; choose one of {REDUCTIONS}")
    out = sample_forward(model, x, n_samples)
    nll_sum = nll(out, y)
    if not torch.isfinite(nll_sum):
        raise FloatingPointError("the negative log-likelihood is not finite (NaN or inf): lower the "
                                 "learning rate or check the inputs for NaN")
    if bayes_layers(model):
        kl = kl_divergence(model)
        loss = kl_weight * kl + nll_sum
    else:
        kl = torch.zeros((), device=out.device)
        loss = nll_sum
    if reduction == "mean":
        loss = loss / x.shape[0]
    return ELBO(loss=loss, nll=nll_sum.detach(), kl=kl.detach(), output=out)
