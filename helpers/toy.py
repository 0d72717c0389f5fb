"""Priors on 2-D toy data (moons, circles): the report's small tanh network and its uncertainty maps.

Used by notebook 05 (section 6). Each prior is built by name from ``PRIORS_2D``; every layer gets its own prior
object (so a learned prior scale is learned per layer).
"""
import math

import torch
from torch import nn
from torch.nn import functional as F

from .elbo import sample_forward
from .layers import BayesLinear, sampling
from .priors import (CauchyPrior, FlatPrior, GaussianPrior, LaplacePrior, LearnedScalePrior,
                     ScaleMixturePrior)
from .utils import one_thread

PRIORS_2D = {
    "Normal": lambda: GaussianPrior(1.0),
    "Laplace": lambda: LaplacePrior(1.0),
    "Cauchy": lambda: CauchyPrior(1.0),
    "scale mixture": lambda: ScaleMixturePrior(0.5, 1.0, math.exp(-6)),
    "flat": FlatPrior,
    "Normal, s ~ half-normal": lambda: LearnedScalePrior("gaussian", "half_normal"),
    "Normal, s ~ half-Cauchy": lambda: LearnedScalePrior("gaussian", "half_cauchy"),
    "Normal, s ~ inverse-gamma": lambda: LearnedScalePrior("gaussian", "inverse_gamma"),
    "Laplace, s ~ half-Cauchy": lambda: LearnedScalePrior("laplace", "half_cauchy"),
    "Cauchy, s ~ half-Cauchy": lambda: LearnedScalePrior("cauchy", "half_cauchy"),
}


def toy_net(prior="Normal", hidden=(5, 5), in_features=2, out_features=2, rho_init=-4.0):
    """Return the report's 2-5-5-2 tanh network with a Bayesian layer per linear map."""
    if prior not in PRIORS_2D:
        raise ValueError(f"unknown prior {prior!r}; choose one of {list(PRIORS_2D)}")
    sizes = (in_features, *hidden, out_features)
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(BayesLinear(a, b, prior=PRIORS_2D[prior](), rho_init=rho_init,
                                  mu_init_scale=1.0 / math.sqrt(a)))
        if i < len(sizes) - 2:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers)


@torch.no_grad()
def grid_probs(model, lim=(-2.5, 3.5, -2.0, 2.5), n=80, n_samples=100):
    """Return (xx, yy, mean, std): class-1 probability over an n x n grid, mean and std over samples."""
    x0, x1, y0, y1 = lim
    xx, yy = torch.meshgrid(torch.linspace(x0, x1, n), torch.linspace(y0, y1, n), indexing="xy")
    pts = torch.stack([xx.reshape(-1), yy.reshape(-1)], 1)
    with sampling(model, True):
        p1 = F.softmax(sample_forward(model, pts, n_samples), -1)[..., 1]
    return xx, yy, p1.mean(0).reshape(n, n), p1.std(0).reshape(n, n)


@torch.no_grad()
def predictive_accuracy(model, x, y, n_samples=100):
    """Return the accuracy of the sample-averaged predictive distribution on (x, y)."""
    with sampling(model, True):
        p = F.softmax(sample_forward(model, x, n_samples), -1).mean(0)
    return (p.argmax(-1) == y).float().mean().item()


@torch.no_grad()
def sampled_weights(layer, n_samples=1000):
    """Return ``n_samples`` draws of the layer's weights from q, flattened (for histograms)."""
    eps = torch.randn(n_samples, *layer.weight_mu.shape)
    return (layer.weight_mu + layer.weight_sigma * eps).reshape(-1)


def fit_toy(model, x, y, steps, lr=0.01, seed=0, desc="toy"):
    """Train ``model`` full-batch (KL weight 1) with ``helpers.fit``; return its history.

    Runs on one CPU thread: the networks are tiny, and extra threads only add synchronisation
    (several times slower on a busy 2-core machine).
    """
    from .data import ImageData
    from .train import fit
    data = ImageData(x, y, x[:0], y[:0], x[:0], y[:0], name="toy")
    with one_thread():
        return fit(model, data, epochs=steps, lr=lr, batch_size=len(x), eval_sets=(), seed=seed,
                   desc=desc)


TOY = {"moons": dict(noise=0.2), "circles": dict(noise=0.1, factor=0.5)}
LIMS = {"moons": (-2.0, 3.0, -1.5, 2.0), "circles": (-1.8, 1.8, -1.8, 1.8)}


def fit_toy_models(n_train, steps, seed=0, priors=PRIORS_2D):
    """Fit one network per data set of ``TOY`` and prior; return (models, test accuracy, data),
    keyed by (data set, prior) and data set; tested on 1,000 fresh points."""
    from .data import make_toy_2d
    from .utils import seed_everything
    models, acc, data = {}, {}, {}
    for ds, kw in TOY.items():
        x_tr, y_tr = make_toy_2d(ds, n_train, seed=seed, **kw)
        x_te, y_te = make_toy_2d(ds, 1000, seed=seed + 1000, **kw)
        data[ds] = (x_tr, y_tr)
        for prior in priors:
            seed_everything(seed)
            models[(ds, prior)] = model = toy_net(prior)
            fit_toy(model, x_tr, y_tr, steps, lr=0.01, seed=seed, desc=f"{ds}, {prior}")
            acc[(ds, prior)] = predictive_accuracy(model, x_te, y_te)
    return models, acc, data


STD_RANGE = (1e-3, 0.5)  # the std maps' log colour scale: 0.5 is the largest std of a probability


def prior_maps(models, lim, x_train, y_train, n_samples=100):
    """Figure: for every prior (``models``: name -> trained net) the class-1 probability map
    (mean over weight samples) and its standard deviation over samples, two rows of five each;
    the std on a log colour scale over ``STD_RANGE`` (values below its floor in its lowest
    colour, the colour bar's triangle), so that small stds far from the boundary stay
    distinguishable."""
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import LogNorm
    names = list(models)
    cols = 5
    rows = 2 * math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(13, 2.6 * rows), constrained_layout=True)
    half = rows // 2
    for k, name in enumerate(names):
        xx, yy, mean, std = grid_probs(models[name], lim, n_samples=n_samples)
        for block, z, cmap in ((0, mean, "RdBu_r"), (half, std, "viridis")):
            ax = axes[block + k // cols, k % cols]
            if block:
                ax.contourf(xx, yy, z, levels=np.geomspace(*STD_RANGE, 22), cmap=cmap,
                            norm=LogNorm(*STD_RANGE), extend="min")
            else:
                ax.contourf(xx, yy, z, levels=20, cmap=cmap, vmin=0, vmax=1.0)
            ax.scatter(x_train[:, 0], x_train[:, 1], c=y_train, cmap="coolwarm", s=2, alpha=0.4)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(name, fontsize=9)
    fig.colorbar(plt.cm.ScalarMappable(cmap="RdBu_r", norm=plt.Normalize(0, 1)),
                 ax=axes[:half].ravel().tolist(), label="P(class 1)", shrink=0.8)
    fig.colorbar(plt.cm.ScalarMappable(cmap="viridis", norm=LogNorm(*STD_RANGE)),
                 ax=axes[half:].ravel().tolist(), label="std over weight samples (log scale)",
                 shrink=0.8, extend="min")
    cm = plt.get_cmap("coolwarm")
    fig.legend([plt.Line2D([], [], ls="", marker="o", ms=4, c=cm(v)) for v in (0.0, 1.0)],
               ["training point, class 0", "training point, class 1"], loc="outside lower center",
               ncol=2, fontsize=8)
    return fig


# ---- notebook 05, section 7: fit once, store the fitted posteriors (a few numbers each) ----

NB = "05_uncertainty"
TOY_RESULTS = "priors_2d"  # results/05_uncertainty/priors_2d.json


def toy_config(n_train, steps, seed=0, priors=PRIORS_2D):
    """Return the settings a stored fit must match to be read back."""
    return {"network": "2-5-5-2 tanh", "n_train": n_train, "n_test": 1000, "steps": steps,
            "lr": 0.01, "data": TOY, "priors": list(priors), "seed": seed}


def _toy_data(n_train, seed):
    from .data import make_toy_2d
    return {ds: make_toy_2d(ds, n_train, seed=seed, **kw) for ds, kw in TOY.items()}


def load_toy(profile, n_train, steps, seed=0, priors=PRIORS_2D):
    """Return (models, accuracy, data) rebuilt from results/05_uncertainty/priors_2d.json when it
    holds the fitted posteriors of these settings, else None. The parameters are stored exactly
    (float32 values), so the networks are the ones trained."""
    import json

    from .utils import results_dir
    path = results_dir() / NB / f"{TOY_RESULTS}.json"
    if not path.exists():
        return None
    rec = json.loads(path.read_text())
    want = json.loads(json.dumps(toy_config(n_train, steps, seed, priors)))
    if rec.get("profile") != profile or rec["config"] != want or "posteriors" not in rec:
        return None
    models, acc = {}, {}
    for ds in TOY:
        for prior in priors:
            models[(ds, prior)] = model = toy_net(prior)
            state = {k: torch.tensor(v, dtype=torch.float32)
                     for k, v in rec["posteriors"][ds][prior].items()}
            model.load_state_dict(state)
            acc[(ds, prior)] = rec["metrics"]["accuracy"][ds][prior]
    return models, acc, _toy_data(n_train, seed)


def build_toy(profile, n_train, steps, seed=0, train=False, priors=PRIORS_2D):
    """Return (models, accuracy, data) of section 7: read back by ``load_toy``, or, with
    ``train``, fitted by ``fit_toy_models`` (a few minutes) and written to
    results/05_uncertainty/priors_2d.json with every network's parameters; None when missing and
    ``train`` is off."""
    import time

    from .utils import save_results
    out = load_toy(profile, n_train, steps, seed, priors)
    if out is not None or not train:
        return out
    t0 = time.perf_counter()
    models, acc, data = fit_toy_models(n_train, steps, seed=seed, priors=priors)
    save_results(NB, TOY_RESULTS, config=toy_config(n_train, steps, seed, priors),
                 metrics={"accuracy": {ds: {p: acc[(ds, p)] for p in priors} for ds in TOY}},
                 profile=profile, seed=seed, wall_s=time.perf_counter() - t0,
                 extra={"posteriors": {ds: {p: {k: v.tolist() for k, v in
                                                models[(ds, p)].state_dict().items()}
                                            for p in priors} for ds in TOY}})
    return load_toy(profile, n_train, steps, seed, priors)
