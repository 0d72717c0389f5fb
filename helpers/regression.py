"""The paper's 1-D regression task (section 5.2, Figure 5) and the uncertainty methods compared on it.

y = x + 0.3 sin(2 pi (x + eps)) + 0.3 sin(4 pi (x + eps)) + eps, eps ~ N(0, noise_std^2).
The paper writes N(0, 0.02); here 0.02 is read as the **standard deviation** by default, and
``noise_std`` is a parameter so the other reading (variance 0.02, std ~ 0.141) is one argument away.
"""
import copy
import math
from dataclasses import dataclass

import torch
from torch import nn

from .elbo import elbo, gaussian_nll, sample_forward
from .layers import BayesMLP, mlp, sampling
from .train import make_optimizer
from .utils import one_thread


def curve(x, eps):
    """Return the paper's regression function evaluated at ``x`` with noise ``eps``."""
    return x + 0.3 * torch.sin(2 * math.pi * (x + eps)) + 0.3 * torch.sin(4 * math.pi * (x + eps)) + eps


def make_data(n, noise_std=0.02, low=0.0, high=0.5, generator=None):
    """Return (x, y) with x ~ U[low, high] of shape (n, 1) and y from ``curve`` (shape (n,))."""
    if not noise_std >= 0:
        raise ValueError(f"noise_std must be >= 0, got {noise_std}")
    x = low + (high - low) * torch.rand(n, 1, generator=generator)
    eps = noise_std * torch.randn(n, 1, generator=generator)
    return x, curve(x, eps).squeeze(1)


def noiseless_mean(x, noise_std=0.02, n_mc=2000, generator=None):
    """Return E[y | x] of the data-generating process by Monte Carlo over eps (for plots)."""
    eps = noise_std * torch.randn(1, n_mc, generator=generator)
    return curve(x.reshape(-1, 1), eps).mean(1)


def effective_noise_std(noise_std=0.02, low=0.0, high=0.5, n_x=500, n_mc=4000, seed=0):
    """Return sqrt(mean over x in [low, high] of Var[y | x]): the one noise std that fits best.

    eps also shifts the phase of the sines, so Var[y | x] varies with x and is larger than
    noise_std**2 where the curve is steep."""
    g = torch.Generator().manual_seed(seed)
    x = torch.linspace(low, high, n_x).unsqueeze(1)
    y = curve(x, noise_std * torch.randn(1, n_mc, generator=g))
    return y.var(1).mean().sqrt().item()


def seed_generator(seed):
    """Return the generator of a seed's data draw (training points, then test points)."""
    return torch.Generator().manual_seed(1000 + seed)


class HeteroNet(nn.Module):
    """A wrapper holding a network and a learned log observation-noise std (aleatoric)."""

    def __init__(self, net, log_sigma=math.log(0.1), learn_sigma=True):
        super().__init__()
        self.net = net
        self.log_sigma = nn.Parameter(torch.tensor(float(log_sigma)), requires_grad=learn_sigma)

    def forward(self, x):
        return self.net(x).squeeze(-1)

    @property
    def sigma(self):
        return self.log_sigma.exp()


def build(method, hidden=(100, 100), prior=None, noise_sigma=0.1, learn_sigma=False,
          rho_init=-5.0, dropout=0.1):
    """Return a regression model for ``method``: 'bbb', 'mle' (plain network), 'mc_dropout'."""
    if method == "bbb":
        net = BayesMLP(1, hidden, 1, prior=prior, rho_init=rho_init)
    elif method == "mle":
        net = mlp(1, hidden, 1)
    elif method == "mc_dropout":
        net = mlp(1, hidden, 1, dropout=dropout)
    else:
        raise ValueError(f"unknown method {method!r}; choose 'bbb', 'mle' or 'mc_dropout'")
    return HeteroNet(net, math.log(noise_sigma), learn_sigma)


def train(model, x, y, steps, lr=1e-2, n_samples=4, kl_weight=1.0, weight_decay=0.0):
    """Full-batch training of a regression model; BBB minimises KL * kl_weight + NLL.

    Returns the list of per-step losses (per data point)."""
    opt = make_optimizer(model.parameters(), "adam", lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=lr * 0.05)
    losses = []
    model.train()

    def nll(out, target):
        return gaussian_nll(out.squeeze(-1), target, model.sigma)

    for _ in range(steps):
        parts = elbo(model.net, x, y, kl_weight, n_samples=n_samples, nll=nll)
        opt.zero_grad(set_to_none=True)
        parts.loss.backward()
        opt.step()
        sched.step()
        losses.append(parts.loss.item())
    return losses


@dataclass
class Predictive:
    """Predictive draws at inputs x: ``f`` (S, N) function samples and ``sigma`` observation std."""
    f: torch.Tensor
    sigma: float

    def y_samples(self, generator=None, min_draws=400):
        """Return draws of y = f + sigma * noise, at least ``min_draws`` per input (rows of f are
        repeated when there are fewer function samples, e.g. one curve or an ensemble)."""
        f = self.f
        if len(f) < min_draws:
            f = f.repeat(math.ceil(min_draws / len(f)), 1)
        return f + self.sigma * torch.randn(f.shape, generator=generator)

    @property
    def mean(self):
        return self.f.mean(0)

    @property
    def epistemic_var(self):
        """Variance of the function across samples (model uncertainty; 0 for a single curve)."""
        return self.f.var(0) if len(self.f) > 1 else torch.zeros_like(self.f[0])

    @property
    def aleatoric_var(self):
        """Observation-noise variance (data uncertainty)."""
        return torch.full_like(self.mean, self.sigma**2)

    @property
    def std(self):
        """Total predictive std: sqrt(epistemic + aleatoric variance)."""
        return (self.epistemic_var + self.aleatoric_var).sqrt()

    def quantiles(self, qs, generator=None):
        """Return predictive quantiles of y (len(qs), N) from sampled y."""
        y = self.y_samples(generator)
        return torch.quantile(y, torch.tensor(qs, dtype=y.dtype), dim=0)


@torch.no_grad()
def predictive(models, x, n_samples=200, method="bbb"):
    """Return a ``Predictive`` for one model or a list (deep ensemble: one draw per member).

    'bbb' samples weights, 'mc_dropout' keeps dropout on, 'mle' repeats its single curve."""
    if isinstance(models, (list, tuple)):
        for m in models:
            m.eval()
        fs = torch.stack([m(x) for m in models])
        sig = math.sqrt(sum(m.sigma.item() ** 2 for m in models) / len(models))
        return Predictive(fs, sig)
    model = models
    if method == "bbb":
        with sampling(model.net, True):
            f = sample_forward(model.net, x, n_samples).squeeze(-1)
    elif method == "mc_dropout":
        model.train()
        f = torch.stack([model(x) for _ in range(n_samples)])
        model.eval()
    else:
        model.eval()
        f = model(x).unsqueeze(0)
    return Predictive(f.reshape(-1, len(x)), model.sigma.item())


def scores(pred, x, y_true, in_low=0.0, in_high=0.5, out_low=0.7, out_high=1.2,
           x_grid=None, pred_grid=None):
    """Return the issue's metrics: std_ratio, coverage90_in, nll_in, rmse_in.

    ``pred`` is the predictive at the fresh in-domain test inputs ``x`` (targets ``y_true``);
    ``pred_grid`` at ``x_grid`` gives the std ratio (out-of-domain band / training band)."""
    ys = pred.y_samples()
    lo, hi = torch.quantile(ys, torch.tensor([0.05, 0.95]), dim=0)
    coverage = ((y_true >= lo) & (y_true <= hi)).float().mean().item()
    var = pred.epistemic_var + pred.aleatoric_var
    nll = (0.5 * (y_true - pred.mean) ** 2 / var + 0.5 * torch.log(2 * math.pi * var)).mean().item()
    rmse = ((y_true - pred.mean) ** 2).mean().sqrt().item()
    g = x_grid.squeeze(-1)
    s = pred_grid.std
    inside = (g >= in_low) & (g <= in_high)
    outside = (g >= out_low) & (g <= out_high)
    return {"std_ratio": (s[outside].mean() / s[inside].mean()).item(), "coverage90_in": coverage,
            "nll_in": nll, "rmse_in": rmse, "std_in": s[inside].mean().item(),
            "std_out": s[outside].mean().item()}


def clone(model):
    """Return a deep copy of a model (ensemble members start from different seeds instead)."""
    return copy.deepcopy(model)


METHODS = ("bbb_gaussian", "bbb_mixture", "mle", "mc_dropout", "deep_ensemble")


def fit_method(method, x, y, steps, seed=0, hidden=(100, 100), ensemble_size=5, lr=1e-2,
               n_samples=8, dropout=0.1, prior_sigma=1.0, mixture=(0.5, 1.0, math.exp(-6))):
    """Train one method of ``METHODS`` on (x, y); return the model (a list for the ensemble).

    Every model learns its observation-noise std (aleatoric uncertainty). BBB uses the full KL
    (weight 1, one full batch per step); MC dropout uses dropout ``dropout`` and weight decay 1e-4.
    """
    from .priors import GaussianPrior, ScaleMixturePrior
    from .utils import seed_everything
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {METHODS}")
    seed_everything(seed)
    if method == "deep_ensemble":
        members = []
        for k in range(ensemble_size):
            seed_everything(seed * 1000 + k)
            m = build("mle", hidden, learn_sigma=True)
            train(m, x, y, steps, lr=lr)
            members.append(m)
        return members
    if method.startswith("bbb"):
        prior = (GaussianPrior(prior_sigma) if method == "bbb_gaussian"
                 else ScaleMixturePrior(*mixture))
        m = build("bbb", hidden, prior=prior, learn_sigma=True)
        train(m, x, y, steps, lr=lr, n_samples=n_samples)
        return m
    m = build(method, hidden, learn_sigma=True, dropout=dropout)
    train(m, x, y, steps, lr=lr, weight_decay=1e-4 if method == "mc_dropout" else 0.0)
    return m


def method_predictive(method, model, x, n_samples=200):
    """Return the ``Predictive`` of a model trained by ``fit_method``."""
    kind = {"bbb_gaussian": "bbb", "bbb_mixture": "bbb", "mle": "mle",
            "mc_dropout": "mc_dropout"}.get(method)
    return predictive(model, x, n_samples, method=kind or "ensemble")


LABELS = {"bbb_gaussian": "BBB, Gaussian prior", "bbb_mixture": "BBB, scale-mixture prior",
          "mc_dropout": "MC dropout", "deep_ensemble": "deep ensemble", "mle": "standard network"}
SCORES = ("std_ratio", "coverage90_in", "nll_in", "rmse_in")
ORDER = tuple(LABELS)  # the notebook's order of the methods (tables, panels)


QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)  # the bands of the figures: 5-95 %, IQR, median


def grid_curve(pred):
    """Return what the figures draw of a method on the plotting grid, as plain numbers: the
    predictive quantiles ``QUANTILES`` of y (drawn with a fixed generator), the epistemic variance
    and the learned noise std ``sigma`` (its aleatoric part); curves to five significant digits."""
    def digits(t):  # five significant digits: far below what a figure can show
        return [float(f"{v:.5g}") for v in t.tolist()]
    qs = pred.quantiles(list(QUANTILES), generator=torch.Generator().manual_seed(0))
    return {"quantiles": {f"{q:g}": digits(row) for q, row in zip(QUANTILES, qs)},
            "epistemic_var": digits(pred.epistemic_var), "sigma": pred.sigma}


def run_seeds(methods, seeds, n_train, n_test, steps, pred_samples, noise_std, x_grid,
              ensemble_size=5, progress_fn=None):
    """Train every method on each seed's own data draw and score it on fresh in-domain test
    points; return ({method: [per-seed score dicts]}, {method: ``grid_curve`` of the first seed},
    (x_train, y_train) of the first seed)."""
    per_seed, first = {m: [] for m in methods}, {}
    with one_thread():  # tiny networks: extra threads only add synchronisation
        _run_seeds(methods, seeds, n_train, n_test, steps, pred_samples, noise_std, x_grid,
                   ensemble_size, progress_fn, per_seed, first)
    data0 = make_data(n_train, noise_std, generator=seed_generator(seeds[0]))
    return per_seed, first, data0


def _run_seeds(methods, seeds, n_train, n_test, steps, pred_samples, noise_std, x_grid,
               ensemble_size, progress_fn, per_seed, first):
    for s in seeds:
        g = seed_generator(s)
        x_tr, y_tr = make_data(n_train, noise_std, generator=g)
        x_te, y_te = make_data(n_test, noise_std, generator=g)
        for method in methods:
            if progress_fn:
                progress_fn(f"seed {s}: {method}")
            model = fit_method(method, x_tr, y_tr, steps, seed=s, ensemble_size=ensemble_size)
            torch.manual_seed(s)
            p_te = method_predictive(method, model, x_te, pred_samples)
            p_grid = method_predictive(method, model, x_grid, pred_samples)
            per_seed[method].append({"seed": s, **scores(p_te, x_te, y_te, x_grid=x_grid,
                                                          pred_grid=p_grid)})
            if s == seeds[0]:
                first[method] = grid_curve(p_grid)


def summarise_seeds(per_seed):
    """Return {method: {score: {per_seed, mean, sd}}} of ``run_seeds``' per-seed scores."""
    import statistics
    out = {}
    for method, rows in per_seed.items():
        out[method] = {}
        for k in SCORES:
            vals = [r[k] for r in rows]
            out[method][k] = {"per_seed": vals, "mean": statistics.fmean(vals),
                              "sd": statistics.stdev(vals) if len(vals) > 1 else None}
    return out


# ---- notebook 02: train once, store the numbers the figures and the table need ----

NB = "02_regression_uncertainty"
GRID = (-0.2, 1.2, 400)  # the plotting grid: from, to, points
FITS = "fits"            # results/02_regression_uncertainty/fits.json: the grid curves


def plot_grid():
    """Return the plotting grid, shape (GRID[2], 1)."""
    return torch.linspace(*GRID).unsqueeze(1)


def fits_config(profile, noise_std, methods=ORDER):
    """Return the settings a stored fit must match to be read back (the notebook's run)."""
    return {"noise_std": noise_std, "n_train": profile.n_train, "n_test": profile.n_test,
            "steps": profile.steps, "pred_samples": profile.pred_samples,
            "seeds": list(profile.seeds), "ensemble_size": profile.ensemble_size,
            "hidden": [100, 100], "methods": list(methods), "grid": list(GRID),
            "quantiles": list(QUANTILES)}


def load_fits(profile, noise_std, methods=ORDER):
    """Return the stored record of ``build_fits`` when it matches these settings (and every method's
    results file is there), else None."""
    import json

    from .utils import results_dir
    path = results_dir() / NB / f"{FITS}.json"
    if not path.exists():
        return None
    rec = json.loads(path.read_text())
    files = [results_dir() / NB / f"{m}.json" for m in methods]
    if (rec.get("profile") != profile.profile or not all(f.exists() for f in files)
            or rec["config"] != json.loads(json.dumps(fits_config(profile, noise_std, methods)))):
        return None
    rec["summary"] = {m: json.loads(f.read_text())["metrics"] for m, f in zip(methods, files)}
    return rec


def build_fits(profile, noise_std, train=False, methods=ORDER, progress_fn=None):
    """Return notebook 02's record: {config, metrics: {curves, per_seed}, summary, wall_s}.

    Read back from results/02_regression_uncertainty/ (``FITS``.json and one file per method)
    when they hold a run with these settings; otherwise, with ``train``, train every method on
    every seed (minutes), write them and return them; None when they are missing and ``train``
    is off."""
    import time

    from .utils import save_results
    rec = load_fits(profile, noise_std, methods)
    if rec is not None or not train:
        return rec
    t0 = time.perf_counter()
    per_seed, curves, _ = run_seeds(methods, profile.seeds, profile.n_train, profile.n_test,
                                    profile.steps, profile.pred_samples, noise_std, plot_grid(),
                                    ensemble_size=profile.ensemble_size, progress_fn=progress_fn)
    wall = time.perf_counter() - t0
    for method, s in summarise_seeds(per_seed).items():
        save_results(NB, method,
                     config={"method": method, "noise_std": noise_std, "n_train": profile.n_train,
                             "steps": profile.steps, "hidden": [100, 100],
                             "pred_samples": profile.pred_samples, "seeds": list(profile.seeds)},
                     metrics=s, profile=profile.profile, seed=list(profile.seeds), wall_s=wall)
    save_results(NB, FITS, config=fits_config(profile, noise_std, methods),
                 metrics={"curves": curves, "per_seed": per_seed}, profile=profile.profile,
                 seed=list(profile.seeds), wall_s=wall,
                 extra={"note": "curves: the first seed's predictive on the plotting grid "
                                "(quantiles of y, epistemic variance, learned sigma)"})
    return load_fits(profile, noise_std, methods)


def band_plot(ax, curve, x_grid, x_train, y_train, title, ylim=None):
    """Median, interquartile range and 5-95 % band of a method's predictive distribution (a
    ``grid_curve``). ``ylim=None`` lets the axis grow to show the whole band (shared axes: every
    panel's band)."""
    q = curve["quantiles"]
    xs = x_grid.squeeze(1)
    ax.fill_between(xs, q["0.05"], q["0.95"], color="C0", alpha=0.15, lw=0, label="5–95 %")
    ax.fill_between(xs, q["0.25"], q["0.75"], color="C0", alpha=0.35, lw=0,
                    label="interquartile range")
    ax.plot(xs, q["0.5"], c="C3", lw=1.5, label="median")
    ax.scatter(x_train, y_train, s=5, c="k", marker="x", lw=0.5, label="training data")
    ax.set(xlim=(-0.2, 1.2), xlabel="x", ylabel="y", title=title)
    if ylim is not None:
        ax.set_ylim(ylim)


def plot_data(ax, n, noise_std, seed, x_grid, title):
    """The training draw of ``seed`` (as ``run_seeds`` makes it) and E[y | x], for one reading."""
    xs, ys = make_data(n, noise_std, generator=seed_generator(seed))
    ax.scatter(xs, ys, s=6, c="k", marker="x", lw=0.6, label="training data")
    mean = noiseless_mean(x_grid, noise_std, generator=torch.Generator().manual_seed(0))
    ax.plot(x_grid, mean, c="C3", label="E[y | x]")
    ax.axvspan(0, 0.5, color="0.9", zorder=0, label="training range")
    ax.set(title=title, xlabel="x", ylabel="y")


def plot_methods(curves, x_grid, x_train, y_train):
    """Band plots of every method (``curves``: method -> ``grid_curve``) on shared axes (2 x 3
    panels, the legend in the 6th)."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 3, figsize=(14, 7), sharex=True, sharey=True,
                             constrained_layout=True)
    methods = list(curves)
    for ax, method in zip(axes.flat, methods):
        band_plot(ax, curves[method], x_grid, x_train, y_train, LABELS[method])
    for ax in axes.flat[len(methods):]:
        ax.legend(*axes.flat[0].get_legend_handles_labels(), loc="center", fontsize=11)
        ax.set_axis_off()
    for ax in axes.flat[:len(methods)]:  # x ticks wherever no panel lies below
        ax.tick_params(labelbottom=True)
        ax.set_ylabel("y" if ax in axes[:, 0] else "")
    return fig


def plot_variance_split(ax, curve, x_grid, title):
    """Aleatoric, epistemic and total predictive variance (a ``grid_curve``) against x, on a log
    axis."""
    xs = x_grid.squeeze(1)
    epistemic = torch.tensor(curve["epistemic_var"])
    aleatoric = torch.full_like(epistemic, curve["sigma"] ** 2)
    ax.plot(xs, aleatoric, c="C1", lw=2, label="aleatoric $\\sigma^2$")
    ax.plot(xs, epistemic, c="C0", lw=2, label="epistemic Var$_q[f_w(x)]$")
    ax.plot(xs, aleatoric + epistemic, c="k", ls="--", lw=1.5, label="total Var$[y|x]$")
    ax.axvspan(0, 0.5, color="0.9", zorder=0, label="training range")
    ax.set(yscale="log", xlabel="x", ylabel="predictive variance (log scale)", title=title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)


def learned_sigma(model):
    """The learned observation-noise std of a model (root mean square over an ensemble)."""
    if isinstance(model, (list, tuple)):
        return math.sqrt(sum(m.sigma.item() ** 2 for m in model) / len(model))
    return model.sigma.item()
