"""Predictions and scores: error rate, paired McNemar test, NLL, entropy, mutual information, ECE."""
import math
from dataclasses import dataclass
from fractions import Fraction

import torch
from torch.nn import functional as F

from .data import check_labels
from .elbo import sample_forward
from .layers import sampling


@dataclass
class Prediction:
    """Class probabilities: ``mean`` over weight samples (B, C), per ``samples`` (S, B, C), and
    ``posterior_mean`` from the mean weights (B, C)."""
    mean: torch.Tensor
    samples: torch.Tensor
    posterior_mean: torch.Tensor


def check_finite(name, t):
    """Raise ValueError when tensor ``t`` holds NaN or inf (``name`` says which input)."""
    if torch.is_tensor(t) and t.is_floating_point() and not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} holds NaN or inf values: a metric of them would be meaningless. "
                         "Check the inputs, or whether the model diverged (NaN weights).")
    return t


def _check_labels(probs, y):
    if y.shape != probs.shape[:-1]:
        raise ValueError(f"labels of shape {tuple(y.shape)} do not match probabilities of shape "
                         f"{tuple(probs.shape)}")
    check_labels(y, probs.shape[-1])


@torch.no_grad()
def predict(model, x, n_samples=10, batch_size=2000):
    """Return a ``Prediction`` for inputs ``x``: averaged over ``n_samples`` weight samples, per
    sample, and with the posterior-mean weights. The model's sampling switch is restored.
    NaN or inf inputs, or a model that outputs them, raise ValueError."""
    check_finite("the inputs x", x)
    was_training = model.training
    model.eval()
    means, samples, pm = [], [], []
    try:
        for start in range(0, len(x), batch_size):
            xb = x[start:start + batch_size]
            with sampling(model, True):
                out = sample_forward(model, xb, n_samples)
                if n_samples == 1:
                    out = out.unsqueeze(0)
                p = F.softmax(out, dim=-1)
            with sampling(model, False):
                pm.append(F.softmax(model(xb), dim=-1))
            samples.append(p)
            means.append(p.mean(0))
    finally:
        model.train(was_training)
    out = Prediction(torch.cat(means), torch.cat(samples, dim=1), torch.cat(pm))
    check_finite("the model's predicted probabilities", out.samples)
    check_finite("the model's posterior-mean probabilities", out.posterior_mean)
    return out


def error_rate(probs, y):
    """Return the fraction of examples whose arg-max class differs from ``y`` (a float in [0, 1])."""
    check_finite("probs", probs)
    _check_labels(probs, y)
    return (probs.argmax(-1) != y).float().mean().item()


def mcnemar(wrong_a, wrong_b):
    """Return (only_a, only_b, p): how many examples only model A / only model B gets wrong (bool
    masks over the same examples) and the exact two-sided McNemar p-value of "A and B err equally
    often" (binomial test on the discordant pairs; 1.0 when there are none)."""
    wrong_a = torch.as_tensor(wrong_a, dtype=torch.bool)
    wrong_b = torch.as_tensor(wrong_b, dtype=torch.bool)
    if wrong_a.shape != wrong_b.shape:
        raise ValueError(f"the two masks must cover the same examples, got shapes "
                         f"{tuple(wrong_a.shape)} and {tuple(wrong_b.shape)}")
    only_a = int((wrong_a & ~wrong_b).sum())
    only_b = int((wrong_b & ~wrong_a).sum())
    n, k = only_a + only_b, min(only_a, only_b)
    if n == 0:
        return only_a, only_b, 1.0
    tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n)  # exact, no underflow
    return only_a, only_b, float(min(Fraction(1), 2 * tail))


def nll(probs, y, eps=1e-12):
    """Return the mean negative log-likelihood of labels ``y`` under ``probs``."""
    check_finite("probs", probs)
    _check_labels(probs, y)
    return -torch.log(probs.gather(-1, y.unsqueeze(-1)).clamp_min(eps)).mean().item()


def brier(probs, y):
    """Return the Brier score: the mean over examples of sum_c (p_c - 1[y = c])^2 (in [0, 2])."""
    check_finite("probs", probs)
    _check_labels(probs, y)
    onehot = F.one_hot(y, probs.shape[-1]).to(probs.dtype)
    return ((probs - onehot) ** 2).sum(-1).mean().item()


def predictive_entropy(probs, eps=1e-12):
    """Return the entropy H[p] of each row of ``probs`` (nats)."""
    check_finite("probs", probs)
    return -(probs * torch.log(probs.clamp_min(eps))).sum(-1)


def mutual_information(sample_probs, eps=1e-12):
    """Return the epistemic part of the entropy: H[E p] - E H[p] for (S, B, C) sample probabilities."""
    check_finite("sample_probs", sample_probs)
    return (predictive_entropy(sample_probs.mean(0), eps)
            - predictive_entropy(sample_probs, eps).mean(0))


def ece(probs, y, n_bins=15):
    """Return the expected calibration error (fraction in [0, 1]) with equal-width confidence bins."""
    check_finite("probs", probs)
    _check_labels(probs, y)
    conf, pred = probs.max(-1)
    correct = (pred == y).float()
    bins = torch.clamp((conf * n_bins).long(), max=n_bins - 1)
    total = torch.zeros((), dtype=torch.float64)
    for b in range(n_bins):
        mask = bins == b
        if mask.any():
            gap = (conf[mask].mean() - correct[mask].mean()).abs().double()
            total += gap * mask.float().mean().double().cpu()
    return total.item()


def reliability(probs, y, n_bins=15):
    """Return (bin centres, accuracy per bin, confidence per bin, count per bin) for a reliability plot."""
    check_finite("probs", probs)
    _check_labels(probs, y)
    conf, pred = probs.max(-1)
    correct = (pred == y).float()
    bins = torch.clamp((conf * n_bins).long(), max=n_bins - 1)
    centres, acc, cf, count = [], [], [], []
    for b in range(n_bins):
        mask = bins == b
        centres.append((b + 0.5) / n_bins)
        count.append(int(mask.sum()))
        acc.append(correct[mask].mean().item() if mask.any() else float("nan"))
        cf.append(conf[mask].mean().item() if mask.any() else float("nan"))
    return centres, acc, cf, count


def auroc(score_in, score_out):
    """Return the area under the ROC curve for telling ``score_out`` (positives, should score higher)
    from ``score_in``: the probability that a random out-of-domain score exceeds an in-domain one
    (ties count one half)."""
    check_finite("score_in", score_in)
    check_finite("score_out", score_out)
    if score_in.numel() == 0 or score_out.numel() == 0:
        raise ValueError("auroc needs at least one in-domain and one out-of-domain score")
    s = torch.cat([score_in.flatten(), score_out.flatten()]).double()
    labels = torch.cat([torch.zeros(score_in.numel()), torch.ones(score_out.numel())])
    order = torch.argsort(s, stable=True)
    ranks = torch.empty_like(s)
    ranks[order] = torch.arange(1, len(s) + 1, dtype=torch.float64)
    # average ranks over ties
    uniq, inverse = torch.unique(s, return_inverse=True)
    sums = torch.zeros(len(uniq), dtype=torch.float64).index_add_(0, inverse, ranks)
    counts = torch.zeros(len(uniq), dtype=torch.float64).index_add_(0, inverse, torch.ones_like(s))
    ranks = (sums / counts)[inverse]
    n_pos, n_neg = score_out.numel(), score_in.numel()
    return ((ranks[labels == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).item()
