"""Predictive samples of the classification methods, for out-of-distribution and calibration tests."""
import torch
from torch.nn import functional as F

from .elbo import sample_forward
from .layers import sampling
from .metrics import predictive_entropy


@torch.no_grad()
def sample_probs(kind, model, x, n_samples=20, batch_size=2000):
    """Return class probabilities of shape (S, B, C) for one method.

    ``kind``: 'deterministic' (S = 1), 'mc_dropout' (dropout kept on, S passes), 'bbb' (S weight
    samples) or 'ensemble' (``model`` is a list; one sample per member)."""
    outs = []
    for s in range(0, len(x), batch_size):
        xb = x[s:s + batch_size]
        if kind == "ensemble":
            for m in model:
                m.eval()
            p = torch.stack([F.softmax(m(xb), -1) for m in model])
        elif kind == "mc_dropout":
            model.train()
            p = torch.stack([F.softmax(model(xb), -1) for _ in range(n_samples)])
            model.eval()
        elif kind == "bbb":
            model.eval()
            with sampling(model, True):
                out = sample_forward(model, xb, n_samples)
            p = F.softmax(out if n_samples > 1 else out.unsqueeze(0), -1)
        elif kind == "deterministic":
            model.eval()
            p = F.softmax(model(xb), -1).unsqueeze(0)
        else:
            raise ValueError(f"unknown kind {kind!r}; choose deterministic, mc_dropout, bbb or "
                             "ensemble")
        outs.append(p)
    return torch.cat(outs, dim=1)


@torch.no_grad()
def per_image_scores(p, y):
    """Return per-image scores from sampled probabilities ``p`` (S, B, C) and labels ``y`` (B,).

    A dict of (B,) tensors: ``expected_error`` (fraction of weight samples whose top class is
    wrong), ``std`` (std over samples of the probability of the mean prediction's class),
    ``confidence`` (mean probability of that class), ``entropy`` (of the mean prediction) and
    ``pred`` (the mean prediction's class).
    """
    if p.dim() != 3 or p.shape[1] != len(y):
        raise ValueError(f"p must have shape (samples, batch, classes) with batch = len(y); got "
                         f"{tuple(p.shape)} and {len(y)} labels")
    mean = p.mean(0)
    pred = mean.argmax(-1)
    p_pred = p.gather(2, pred.view(1, -1, 1).expand(p.shape[0], -1, 1)).squeeze(2)
    return {"expected_error": (p.argmax(-1) != y).float().mean(0),
            "std": p_pred.std(0) if p.shape[0] > 1 else torch.zeros_like(p_pred[0]),
            "confidence": p_pred.mean(0), "entropy": predictive_entropy(mean),
            "pred": pred}
