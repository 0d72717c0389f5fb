"""Weight pruning by signal-to-noise ratio (section 5.1, Table 2 and Figure 4 of the paper).

The SNR of a weight is |mu| / sigma (in dB: 10 log10(|mu| / sigma)). Pruning removes (sets to zero)
the given fraction of weights with the lowest score, ranked over all layers together, and predicts
with the posterior means of the rest. Biases are kept.
"""
import copy
import io
import time

import torch

from .layers import BayesLinear
from .train import evaluate_error


def weight_layers(model):
    """Return the BayesLinear layers of ``model`` in order."""
    return [m for m in model.modules() if isinstance(m, BayesLinear)]


def scores(model, kind="snr", generator=None):
    """Return one flat tensor of per-weight scores over all layers: 'snr' (|mu|/sigma),
    'magnitude' (|mu|) or 'random'."""
    parts = []
    for layer in weight_layers(model):
        mu, sigma = layer.weight_mu.detach(), layer.weight_sigma.detach()
        if kind == "snr":
            parts.append((mu.abs() / sigma).flatten())
        elif kind == "magnitude":
            parts.append(mu.abs().flatten())
        elif kind == "random":
            parts.append(torch.rand(mu.numel(), generator=generator).to(mu.device))
        else:
            raise ValueError(f"unknown score {kind!r}; choose 'snr', 'magnitude' or 'random'")
    return torch.cat(parts)


def snr_db(model):
    """Return the SNR of every weight in decibels, 10 log10(|mu| / sigma)."""
    return 10 * torch.log10(scores(model, "snr").clamp_min(1e-30))


def prune(model, fraction, kind="snr", generator=None):
    """Return a copy of ``model`` whose lowest-scoring ``fraction`` of weights is set to zero
    (posterior-mean mode: sampling off), and the number of weights kept."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be in [0, 1], got {fraction}")
    s = scores(model, kind, generator)
    n_remove = int(round(fraction * s.numel()))
    keep = torch.ones_like(s, dtype=torch.bool)
    if n_remove > 0:
        keep[torch.argsort(s, stable=True)[:n_remove]] = False
    pruned = copy.deepcopy(model)
    offset = 0
    with torch.no_grad():
        for layer in weight_layers(pruned):
            n = layer.weight_mu.numel()
            layer.weight_mu.mul_(keep[offset:offset + n].view_as(layer.weight_mu))
            offset += n
    for layer in weight_layers(pruned):
        layer.sample = False
    return pruned, int(keep.sum())


# the error rate (fraction) of the posterior-mean weights: the one training already uses
test_error = evaluate_error


def to_sparse(model):
    """Return a list of (CSR weight with int32 indices, bias) pairs: the pruned posterior means."""
    import warnings
    out = []
    with warnings.catch_warnings():  # "sparse CSR support is in beta"
        warnings.simplefilter("ignore")
        for layer in weight_layers(model):
            csr = layer.weight_mu.detach().to_sparse_csr()
            csr = torch.sparse_csr_tensor(csr.crow_indices().int(), csr.col_indices().int(),
                                          csr.values(), csr.shape)
            out.append((csr, layer.bias_mu.detach().clone()))
    return out


def sparse_forward(layers, x):
    """Forward pass of the ReLU MLP stored by ``to_sparse`` (sparse matrix times dense input)."""
    h = x.T
    for i, (w, b) in enumerate(layers):
        h = torch.sparse.mm(w, h) + b.unsqueeze(1)
        if i < len(layers) - 1:
            h = torch.relu(h)
    return h.T


def storage_bytes(obj):
    """Return the size in bytes of ``obj`` saved with torch.save."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getbuffer().nbytes


def time_call(fn, repeats=5):
    """Return the median wall time of ``fn()`` in seconds."""
    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return sorted(ts)[len(ts) // 2]
