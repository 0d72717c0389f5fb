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


REGIONS = {"in": (0.0, 0.5), "out": (0.7, 1.2)}  # the training range; the range away from it
INTERVALS = (0.5, 0.9)  # central predictive intervals whose coverage is scored


def region_scores(pred, y_true):
    """Return coverage of the central ``INTERVALS`` (sampled y), Gaussian NLL per point (nats,
    the moment-matched predictive) and RMSE of the mean, for fresh draws ``y_true`` from the
    generator at the inputs of ``pred``: the bands against the truth."""
    ys = pred.y_samples()
    out = {}
    for c in INTERVALS:
        lo, hi = torch.quantile(ys, torch.tensor([(1 - c) / 2, (1 + c) / 2]), dim=0)
        out[f"coverage{round(100 * c)}"] = ((y_true >= lo) & (y_true <= hi)).float().mean().item()
    var = pred.epistemic_var + pred.aleatoric_var
    out["nll"] = (0.5 * (y_true - pred.mean) ** 2 / var
                  + 0.5 * torch.log(2 * math.pi * var)).mean().item()
    out["rmse"] = ((y_true - pred.mean) ** 2).mean().sqrt().item()
    return out


def scores(preds, ys, x_grid, pred_grid):
    """Return the scores of one fit: for each region of ``REGIONS`` (``preds[region]``, the
    predictive at fresh inputs of that region; ``ys[region]``, fresh draws of y there)
    ``region_scores`` suffixed ``_in`` / ``_out``, and the std ratio: the mean predictive std on
    the grid's points away from the data over that on its points in the training range."""
    out = {}
    for region, pred in preds.items():
        out.update({f"{k}_{region}": v for k, v in region_scores(pred, ys[region]).items()})
    g = x_grid.squeeze(-1)
    s = pred_grid.std
    (a, b), (c, d) = REGIONS["in"], REGIONS["out"]
    inside, outside = (g >= a) & (g <= b), (g >= c) & (g <= d)
    out.update(std_ratio=(s[outside].mean() / s[inside].mean()).item(),
               std_in=s[inside].mean().item(), std_out=s[outside].mean().item())
    return out


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
SCORES = ("std_ratio", "coverage50_in", "coverage90_in", "nll_in", "rmse_in",
          "coverage50_out", "coverage90_out", "nll_out", "rmse_out")
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
        tests = {r: make_data(n_test, noise_std, low=lo, high=hi, generator=g)
                 for r, (lo, hi) in REGIONS.items()}  # fresh draws in and away from the range
        for method in methods:
            if progress_fn:
                progress_fn(f"seed {s}: {method}")
            model = fit_method(method, x_tr, y_tr, steps, seed=s, ensemble_size=ensemble_size)
            torch.manual_seed(s)
            preds = {r: method_predictive(method, model, x, pred_samples)
                     for r, (x, _) in tests.items()}
            p_grid = method_predictive(method, model, x_grid, pred_samples)
            per_seed[method].append({"seed": s, **scores(preds, {r: y for r, (_, y) in
                                                                 tests.items()},
                                                         x_grid, p_grid)})
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
    if any(set(SCORES) - set(s) for s in rec["summary"].values()):
        return None  # written by an older version that scored less: train again
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
    if set(BBB + RIVALS) <= set(methods):
        the_plan = load_plan(profile)
        save_results(NB, VERDICTS, config={"plan_version": the_plan["version"],
                                           "noise_std": noise_std},
                     metrics=verdicts(per_seed, the_plan), profile=profile.profile,
                     seed=list(profile.seeds), wall_s=wall)
    return load_fits(profile, noise_std, methods)


def load_plan(profile):
    """Return the committed plan when ``profile`` is the one it was declared for (it must equal
    what ``plan`` declares: a changed plan is a new version, written and disclosed), else the
    plan ``plan(profile)`` declares (e.g. the smoke profile, whose numbers are not reported)."""
    import json

    from .utils import results_dir
    declared = plan(profile)
    path = results_dir() / NB / f"{PLAN}.json"
    if not path.exists():
        return declared
    stored = json.loads(path.read_text())
    if stored["profile"] != profile.profile:
        return declared
    if stored != json.loads(json.dumps(declared)):
        raise ValueError(f"{path} differs from helpers.regression.plan: a new plan is a new "
                         "version; write it with helpers.regression.write_plan, commit it before "
                         "any run, and disclose the change in docs/choices.md")
    return stored


def truth(x_grid, noise_std=0.02):
    """E[y | x] of the generator on ``x_grid`` (fixed Monte-Carlo draws): the curve the bands
    should follow."""
    return noiseless_mean(x_grid, noise_std, generator=torch.Generator().manual_seed(0))


def band_plot(ax, curve, x_grid, x_train, y_train, title, ylim=None, true_mean=None):
    """Median, interquartile range and 5-95 % band of a method's predictive distribution (a
    ``grid_curve``), and the generator's E[y | x] when ``true_mean`` is given. ``ylim=None`` lets
    the axis grow to show the whole band (shared axes: every panel's band)."""
    q = curve["quantiles"]
    xs = x_grid.squeeze(1)
    ax.fill_between(xs, q["0.05"], q["0.95"], color="C0", alpha=0.15, lw=0,
                    label="5–95 % (central 90 % interval)")
    ax.fill_between(xs, q["0.25"], q["0.75"], color="C0", alpha=0.35, lw=0,
                    label="interquartile range (central 50 %)")
    ax.plot(xs, q["0.5"], c="C3", lw=1.5, label="median")
    if true_mean is not None:
        ax.plot(xs, true_mean, c="k", lw=1.0, ls="--", label="truth: E[y | x]")
    ax.axvspan(0, 0.5, color="0.93", zorder=0, label="training range")
    _mark_scored(ax)
    ax.scatter(x_train, y_train, s=5, c="k", marker="x", lw=0.5, label="training data")
    ax.set(xlim=(GRID[0], GRID[1]), xlabel="x", ylabel="y", title=title)
    ax.set_xticks([round(GRID[0] + 0.2 * k, 1) for k in range(8)])
    if ylim is not None:
        ax.set_ylim(ylim)


def _mark_scored(ax):
    """Mark the range away from the data that section 6 scores (``REGIONS['out']``) with a grey
    bar along the top of the axes, so that nothing covers the bands."""
    ax.axvspan(*REGIONS["out"], ymin=0.975, ymax=1.0, color="0.45", lw=0,
               label="scored range away from the data (bar at the top)")


def plot_data(ax, n, noise_std, seed, x_grid, title):
    """The training draw of ``seed`` (as ``run_seeds`` makes it) and E[y | x], for one reading."""
    xs, ys = make_data(n, noise_std, generator=seed_generator(seed))
    ax.scatter(xs, ys, s=6, c="k", marker="x", lw=0.6, label="training data")
    mean = noiseless_mean(x_grid, noise_std, generator=torch.Generator().manual_seed(0))
    ax.plot(x_grid, mean, c="k", lw=1.0, ls="--", label="truth: E[y | x]")
    ax.axvspan(0, 0.5, color="0.9", zorder=0, label="training range")
    ax.set(title=title, xlabel="x", ylabel="y")


def band_ylim(curves, y_train, margin=0.05):
    """A y range holding every method's 5-95 % band and the training data (``curves``: method ->
    ``grid_curve``), widened by ``margin`` of its span on each side: one range for Figure 5 and
    the methods figure, so that their panels can be compared."""
    lo = min([min(c["quantiles"]["0.05"]) for c in curves.values()] + [float(min(y_train))])
    hi = max([max(c["quantiles"]["0.95"]) for c in curves.values()] + [float(max(y_train))])
    pad = margin * (hi - lo)
    return lo - pad, hi + pad


def plot_methods(curves, x_grid, x_train, y_train, true_mean=None, methods=None, ylim=None):
    """Band plots of ``methods`` (default: every method of ``curves``, method -> ``grid_curve``)
    on shared axes, ``ylim`` if given: 2 x 3 panels for more than three methods (the legend in
    the last), else one row with the legend below it."""
    import matplotlib.pyplot as plt
    methods = list(curves) if methods is None else list(methods)
    rows, cols = (2, 3) if len(methods) > 3 else (1, len(methods))
    fig, axes = plt.subplots(rows, cols, figsize=(14, 7) if rows == 2 else (12.5, 4.6),
                             sharex=True, sharey=True, squeeze=False, constrained_layout=True)
    for ax, method in zip(axes.flat, methods):
        band_plot(ax, curves[method], x_grid, x_train, y_train, LABELS[method],
                  true_mean=true_mean, ylim=ylim)
    handles = axes.flat[0].get_legend_handles_labels()
    for ax in axes.flat[len(methods):]:
        ax.legend(*handles, loc="center", fontsize=11)
        ax.set_axis_off()
    if rows == 1:
        fig.legend(*handles, loc="outside lower center", ncol=4, fontsize=9)
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
    ax.plot(xs, epistemic, c="C0", lw=4, label="epistemic Var$_q[f_w(x)]$")  # wide: the
    ax.plot(xs, aleatoric + epistemic, c="k", ls="--", lw=1.2,  # total lies on it away from
            label="total Var$[y|x]$")                           # the data
    ax.axvspan(0, 0.5, color="0.9", zorder=0, label="training range")
    _mark_scored(ax)
    ax.set(yscale="log", xlabel="x", ylabel="predictive variance, $y^2$ (log scale)", title=title,
           xlim=(GRID[0], GRID[1]))
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi * 3)  # room above the curves for the bar that marks the scored range
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)


def methods_text(cfg):
    """Return section 2's list of the five methods with the settings of profile ``cfg`` in
    numbers (the rest are fixed in ``fit_method`` and ``train``)."""
    return (f"Five methods, all 1-100-100-1 ReLU networks trained full-batch (Adam, learning "
            f"rate $10^{{-2}}$ with cosine decay to 5 % of it, {cfg.steps} steps) on each seed's own draw of "
            f"{cfg.n_train} training points, each learning its observation-noise $\\sigma$:\n\n"
            "- **BBB, Gaussian prior** $\\mathcal N(0,1)$ and **BBB, scale-mixture prior** "
            "($\\pi=\\frac12$, $\\sigma_1=1$, $\\sigma_2=e^{-6}$): the full KL (one minibatch, "
            "weight 1), 8 weight samples per step;\n"
            "- **MC dropout**: dropout rate 0.1, kept on at test time; weight decay $10^{-4}$;\n"
            f"- a **deep ensemble** of {cfg.ensemble_size} standard networks from different "
            "seeds;\n"
            "- the **standard network** (maximum likelihood).\n\n"
            f"Predictions use {cfg.pred_samples} weight draws (or dropout masks) per input; each "
            f"seed also draws {cfg.n_test} fresh test points in each scored range (section 6). "
            "The variance over the draws (in the std ratio and the NLL) divides by $n-1$: for "
            f"the deep ensemble's {cfg.ensemble_size} members that is "
            f"{cfg.ensemble_size}/{cfg.ensemble_size - 1} of the spread of the mixture whose "
            "quantiles give its bands and coverage.")


def learned_sigma(model):
    """The learned observation-noise std of a model (root mean square over an ensemble)."""
    if isinstance(model, (list, tuple)):
        return math.sqrt(sum(m.sigma.item() ** 2 for m in model) / len(model))
    return model.sigma.item()


# ---- notebook 02's analysis plan (issue 34): declared and committed before its numbers ------

PLAN = "analysis_plan"  # results/02_regression_uncertainty/analysis_plan.json
VERDICTS = "verdicts"   # results/02_regression_uncertainty/verdicts.json (governed by the plan)
BBB = ("bbb_gaussian", "bbb_mixture")
RIVALS = ("mle", "mc_dropout", "deep_ensemble")
ALPHA = 0.05
# the claims "BBB variant < rival" on each score, one family per region (Holm within a family)
FAMILY_SCORES = {"away from the data": ("nll_out", "cover_err_out"),
                 "near the data": ("nll_in", "cover_err_in")}
SCORE_WORDS = {
    "nll": "Gaussian NLL per point (nats) of the moment-matched predictive on fresh draws",
    "cover_err": "coverage error: mean of |coverage of the central 50 % interval - 0.5| and "
                 "|coverage of the central 90 % interval - 0.9| on fresh draws",
}


def derived(row):
    """Add the plan's derived scores to one per-seed score dict: ``cover_err_<region>``."""
    out = dict(row)
    for r in REGIONS:
        out[f"cover_err_{r}"] = (abs(row[f"coverage50_{r}"] - 0.5)
                                 + abs(row[f"coverage90_{r}"] - 0.9)) / 2
    return out


def claim_name(bbb, rival, score):
    return f"{bbb} < {rival} on {score}"


def plan(profile):
    """Return notebook 02's analysis plan for ``profile`` (a plain dict, written to
    ``PLAN``.json): seeds, budget, scores, the claim families, the test and the verdict words."""
    return {
        "version": 1,
        "notebook": NB,
        "question": "Do BBB's predictive bands match the data-generating process, in the "
                    "training range and away from it, better than a standard network, MC "
                    "dropout and a deep ensemble trained on the same data?",
        "profile": profile.profile,
        "seeds": list(profile.seeds),
        "pairing": "seed s: the same training draw and the same fresh test draws for every "
                   "method (helpers.regression.seed_generator)",
        "budget": {"steps": profile.steps, "n_train": profile.n_train, "n_test": profile.n_test,
                   "optimizer": "Adam 1e-2, cosine decay, full batch",
                   "note": "the same number of steps for every network; the ensemble trains "
                           f"{profile.ensemble_size} networks, BBB 8 weight samples per step; "
                           "no method is tuned (the settings are fixed in fit_method)"},
        "regions": {r: list(v) for r, v in REGIONS.items()},
        "scores": SCORE_WORDS,
        "families": {f: [claim_name(b, r, sc) for sc in scores for b in BBB for r in RIVALS]
                     for f, scores in FAMILY_SCORES.items()},
        "test": "two-sided paired t-test over the seeds (helpers.stats.ordering_family); exact "
                "sign test reported beside it",
        "correction": "Holm within each family",
        "alpha": ALPHA,
        "verdict_words": ["holds", "reversed", f"not resolved at {len(profile.seeds)} seeds"],
        "governs": [f"results/{NB}/{VERDICTS}.json"],
    }


def write_plan(profile):
    """Write ``plan(profile)`` to results/02_regression_uncertainty/analysis_plan.json."""
    import json

    from .utils import atomic_write_bytes, results_dir
    path = results_dir() / NB / f"{PLAN}.json"
    atomic_write_bytes(path, (json.dumps(plan(profile), indent=1) + "\n").encode())
    return path


def verdicts(per_seed, the_plan):
    """Return {family: {claim: helpers.stats ordering result}} of the plan's claims over the
    stored per-seed scores (paired by seed)."""
    from . import stats
    rows = {m: sorted((derived(r) for r in per_seed[m]), key=lambda r: r["seed"])
            for m in per_seed}
    out = {}
    for family, names in the_plan["families"].items():
        claims = {}
        for name in names:
            pair, score = name.split(" on ")
            a, b = pair.split(" < ")
            if [r["seed"] for r in rows[a]] != [r["seed"] for r in rows[b]]:
                raise ValueError(f"{name}: the two methods were not run on the same seeds")
            claims[name] = ([r[score] for r in rows[a]], [r[score] for r in rows[b]])
        out[family] = stats.ordering_family(claims, alpha=the_plan["alpha"])
    return out


# ---- notebook 02's tables, rendered from the stored numbers ----------------------------------

def fmt_cell(entry, digits):
    per = ", ".join(f"{v:.{digits}f}" for v in entry["per_seed"])
    sd = "" if entry["sd"] is None else f" ± {entry['sd']:.{digits}f}"
    return f"{entry['mean']:.{digits}f}{sd} ({per})"


def score_rows(summary, region):
    """Return (header, rows) of the scores in ``region`` ('in' or 'out'): mean ± sd over the
    seeds, per-seed values in brackets."""
    header = ["method", "coverage of 50 % interval (target 0.50)",
              "coverage of 90 % interval (target 0.90)", "NLL per point, nats (lower better)",
              "RMSE (lower better)"]
    rows = [[LABELS[m], fmt_cell(s[f"coverage50_{region}"], 3),
             fmt_cell(s[f"coverage90_{region}"], 3), fmt_cell(s[f"nll_{region}"], 2),
             fmt_cell(s[f"rmse_{region}"], 4)] for m, s in summary.items()]
    return header, rows


def std_ratio_rows(summary, per_seed=None):
    """Return (header, rows) of the std ratio (away / near the data) of every method: mean ± sd
    over the seeds, per-seed values in brackets; with ``per_seed`` (fits.json's per-seed
    scores), also the mean predictive std in the training range, the ratio's denominator."""
    import statistics
    header = ["method", "std ratio (away / near the data)"]
    rows = [[LABELS[m], fmt_cell(s["std_ratio"], 2)] for m, s in summary.items()]
    if per_seed:
        header.append("mean predictive std in the training range")
        for row, m in zip(rows, summary):
            v = [r["std_in"] for r in per_seed[m]]
            row.append(fmt_cell({"per_seed": v, "mean": statistics.fmean(v),
                                 "sd": statistics.stdev(v) if len(v) > 1 else None}, 3))
    return header, rows


def std_ratio_test_text(per_seed, rival="mle"):
    """Return the exploratory check of the std ratio (section 4; chosen after seeds 0-2 were
    seen, so not one of the declared tests and given no verdict word): each BBB variant's mean
    std ratio over the seeds of ``per_seed`` (fits.json's metrics.per_seed) with its 95 %
    t-interval (unadjusted), and whether that interval excludes ``rival``'s mean ratio, which
    for the standard network is 1 by construction (one constant sigma everywhere)."""
    from . import stats
    ratio = {m: [r["std_ratio"] for r in sorted(rows, key=lambda r: r["seed"])]
             for m, rows in per_seed.items()}
    ref = sum(ratio[rival]) / len(ratio[rival])
    one = "1" if abs(ref - 1) <= TIE else f"{ref:.2f}"
    parts, out = [], []
    for b in (b for b in BBB if b in ratio):
        m = stats.mean_ci(ratio[b])
        if m["ci"] is None:  # one seed: no interval
            parts.append(f"{NAMES[b]} {m['mean']:.2f} (one seed: no interval)")
            continue
        lo, hi = m["ci"]
        parts.append(f"{NAMES[b]} {m['mean']:.2f} ({lo:.2f} to {hi:.2f})")
        out += [NAMES[b]] if not lo <= ref <= hi else []
    if len(ratio[rival]) < 2:
        return (f"*Exploratory:* mean over {_n_seeds(len(ratio[rival]))}: " + ", ".join(parts)
                + f"; the standard network's: {one}.")
    said = ("both intervals exclude" if len(out) == len(parts) == 2 else
            "every interval excludes" if len(out) == len(parts) else
            f"only {out[0]}'s interval excludes" if len(out) == 1 else
            "no interval excludes" if not out else
            f"the intervals of {_list_words(out)} exclude")
    return (f"*Exploratory:* the standard network's std ratio is "
            + ("1 by construction (one constant σ)" if one == "1" else f"{one} on average")
            + f", so BBB's is compared with {one}. Mean over the "
            + f"{_n_seeds(len(ratio[rival]))} (95 % interval): " + ", ".join(parts)
            + f"; {said} {one}.")


def _claim_parts(name):
    """(BBB variant, rival, score in words) of a claim name of the plan."""
    pair, score = name.split(" on ")
    a, b = pair.split(" < ")
    return a, b, ("NLL" if score.startswith("nll") else "coverage error")


def holm_steps(claims):
    """{claim: k} of one family of stored verdicts: Holm tests the claim against alpha / k, k
    the number of claims not yet passed when its turn comes (the family's size for the smallest
    raw t-test p, one less for the next, ...; claims without a p come last)."""
    def p(c):
        return claims[c]["t_test"].get("p")
    order = sorted(claims, key=lambda c: (p(c) is None, p(c) or 0.0))
    return {c: len(claims) - i for i, c in enumerate(order)}


def verdict_rows(verdicts_rec, family):
    """Return (header, rows) of one family of the stored verdicts: the claim, the score, the
    paired mean difference (BBB - rival: negative, BBB lower) with its 95 % interval, the
    |difference| a verdict needs at the claim's own Holm step (``holm_steps``), Holm's p, the
    sign test's p, and the verdict."""
    header = ["claim (BBB < rival: a lower score)", "score", "mean difference (BBB − rival)",
              "95 % interval (unadjusted)", "|difference| a verdict needs (its Holm step)",
              "p (Holm-adjusted)", "p (sign test)", "verdict"]
    rows = []
    claims = verdicts_rec["metrics"][family]
    steps = holm_steps(claims)
    for name, res in claims.items():
        a, b, what = _claim_parts(name)
        tt = res["t_test"]
        ci, need = "—", "—"
        if tt["ci"] is not None:
            d = 4 if any(0 < abs(v) < 0.0005 for v in tt["ci"]) else 3  # no bound prints as 0
            ci = f"[{tt['ci'][0]:+.{d}f}, {tt['ci'][1]:+.{d}f}]"
            if tt["n"] > 1:
                factor = holm_t_needed(tt["n"], steps[name], res.get("alpha", ALPHA))[1]
                need = f"{factor * (tt['ci'][1] - tt['ci'][0]) / 2:.3f}"
        rows.append([f"{LABELS[a]} < {LABELS[b]}", what, f"{tt['mean_diff']:+.3f}",
                     ci, need, "—" if res["p_holm"] is None else f"{res['p_holm']:.3f}",
                     f"{res['sign_test']['p']:.3f}", res["verdict"]])
    return header, rows


def tally(verdicts_rec):
    """Return {family: {"holds": [claims], "reversed": [claims], "claims": n}} of the stored
    verdicts: what every summary of notebook 02's tests (notebook, README) counts."""
    return {family: {"holds": [c for c, r in claims.items() if r["verdict"] == "holds"],
                     "reversed": [c for c, r in claims.items() if r["verdict"] == "reversed"],
                     "claims": len(claims)}
            for family, claims in verdicts_rec["metrics"].items()}


def holm_t_needed(n, claims, alpha=ALPHA):
    """(|t|, factor): the |t| of a paired t-test at ``n`` seeds whose two-sided p passes Holm's
    first step, alpha / ``claims``, and that |t| over the 95 % interval's t quantile: how many
    times the half-width of the unadjusted 95 % interval the mean difference must reach."""
    from scipy import stats as st
    t = float(st.t.ppf(1 - alpha / claims / 2, n - 1))
    return t, t / float(st.t.ppf(0.975, n - 1))


def _sign_floor(n):
    """The smallest two-sided p of the exact sign test at n seeds (a win on every seed)."""
    from .stats import sign_test
    return sign_test([1.0] * n, [0.0] * n)["p"]


from .report import seeds_words as _n_seeds  # noqa: E402  '1 seed', '5 seeds'


def load_verdicts():
    """Return the stored verdicts record (results/02_regression_uncertainty/verdicts.json) or
    None when it is not there."""
    import json

    from .utils import results_dir
    path = results_dir() / NB / f"{VERDICTS}.json"
    return json.loads(path.read_text()) if path.exists() else None


from .report import cap as _cap  # noqa: E402


def _held_words(names):
    """Claims that hold, in words: one clause per BBB variant, e.g. "BBB (Gaussian prior) is
    better than MC dropout on NLL, and better than the standard network and MC dropout on
    coverage error"; clauses joined by '; '."""
    by = {}
    for c in names:
        a, b, what = _claim_parts(c)
        by.setdefault(a, {}).setdefault(what, []).append(NAMES[b])
    return "; ".join(f"{NAMES[a]} is better than "
                     + ", and better than ".join(f"{_list_words(rs)} on {what}"
                                                 for what, rs in sc.items())
                     for a, sc in by.items())


def _reversed_words(names):
    """Reversed claims in words, the better method first: one clause per BBB variant and score,
    e.g. "the standard network and the deep ensemble are better than BBB (Gaussian prior) on
    coverage error"; clauses joined by '; '."""
    by = {}
    for c in names:
        a, b, what = _claim_parts(c)
        by.setdefault((a, what), []).append(NAMES[b])
    return "; ".join(f"{_list_words(rs)} {'is' if len(rs) == 1 else 'are'} better than "
                     f"{NAMES[a]} on {what}" for (a, what), rs in by.items())


def _unresolved(verdicts_rec):
    """[(family, claim name, result)] of the claims neither holding nor reversed."""
    return [(f, c, r) for f, claims in verdicts_rec["metrics"].items() for c, r in claims.items()
            if r["verdict"] not in ("holds", "reversed")]


def _favour_words(k, whom, side):
    """'4 favour BBB (interval below 0)', '1 favours the rival (interval above 0)', 'none
    favours BBB'."""
    return (f"{k if k else 'none'} {'favours' if k < 2 else 'favour'} {whom}"
            + (f" (interval {side} 0)" if k else ""))


def _one_sign(verdicts_rec):
    """[(family, score in words, priors, "higher" or "lower", claims, resolved)] of every family
    and score whose mean differences (BBB - rival) all lie on one side of 0."""
    out = []
    for family, claims in verdicts_rec["metrics"].items():
        by = {}
        for c, r in claims.items():
            a, _, what = _claim_parts(c)
            by.setdefault(what, []).append((a, r))
        for what, rs in by.items():
            d = [r["t_test"]["mean_diff"] for _, r in rs]
            if all(v > 0 for v in d) or all(v < 0 for v in d):
                out.append((family, what, sorted({a for a, _ in rs}),
                            "higher" if d[0] > 0 else "lower", len(rs),
                            sum(r["verdict"] in ("holds", "reversed") for _, r in rs)))
    return out


def _one_sign_size(verdicts_rec, family, what, priors, way):
    """How far the one-signed mean differences of ``family`` and ``what`` (NLL or coverage error)
    go, in words: 'by 0.008 to 0.060 nats; no 95 % interval reaches above +0.122 nats'."""
    d, ends = [], []
    for c, r in verdicts_rec["metrics"][family].items():
        a, _, w = _claim_parts(c)
        if w == what and a in priors:
            d.append(abs(r["t_test"]["mean_diff"]))
            if r["t_test"]["ci"] is not None:
                ends.append(r["t_test"]["ci"][1] if way == "higher" else r["t_test"]["ci"][0])
    unit = " nats" if what == "NLL" else ""
    words = f"by {min(d):.3f} to {max(d):.3f}{unit}"
    if ends:
        far = max(ends) if way == "higher" else min(ends)
        words += (f"; no 95 % interval reaches {'above' if way == 'higher' else 'below'} "
                  f"{far:+.3f}{unit}")
    return words


def _prior_words(priors):
    return "with either prior" if len(priors) > 1 else f"for {NAMES[priors[0]]}"


def _one_sign_words(verdicts_rec, n):
    """Bullets: each family and score whose mean differences all point one way, said plainly,
    with how many of those claims the tests resolve."""
    out = []
    for family, what, priors, way, k, resolved in _one_sign(verdicts_rec):
        res = (f"none of these {k} {what} claims is resolved at {_n_seeds(n)}." if not resolved
               else f"{resolved} of these {k} {what} claims {'is' if resolved == 1 else 'are'} "
               "resolved.")
        side = "above" if way == "higher" else "below"
        out.append(f"- {_cap(family)}, BBB's mean {what}, {_prior_words(priors)}, is {way} than "
                   f"every rival's: all {k} mean differences lie {side} 0, "
                   f"{_one_sign_size(verdicts_rec, family, what, priors, way)}. {_cap(res)}")
    return out


def what_it_shows(verdicts_rec):
    """Return Markdown bullets of the declared tests' outcome, read from the verdicts record: per
    family which claims hold (BBB better), which are reversed (the rival better) and how many are
    not resolved; each family and score whose mean differences all point one way; how many
    unresolved claims have an unadjusted interval that excludes 0, and per family how many of
    those favour BBB (below 0) or the rival (above 0); and the smallest p the sign test can reach
    at this many seeds."""
    n = len(verdicts_rec["seed"])
    out = []
    for family, t in tally(verdicts_rec).items():
        held, rev = t["holds"], t["reversed"]
        rest = t["claims"] - len(held) - len(rev)
        if not held and not rev:
            out.append(f"- **{_cap(family)}:** none of the {t['claims']} claims is resolved at "
                       f"{_n_seeds(n)}.")
            continue
        words = [(_cap(_held_words(held)) if held else "No claim that BBB is better holds") + ".",
                 (_cap(_reversed_words(rev)) if rev else "No claim is reversed") + "."]
        if rest:
            words.append(f"The other {rest} of the {t['claims']} claims are not resolved at "
                         f"{_n_seeds(n)}.")
        out.append(f"- **{_cap(family)}:** " + " ".join(words))
    out += _one_sign_words(verdicts_rec, n)
    open_ = [u for u in _unresolved(verdicts_rec) if u[2]["t_test"]["ci"] is not None]
    if open_:  # (at one seed there is no interval)
        side = {}  # family: [intervals below 0 (BBB lower), above 0 (the rival lower)]
        for family, _, r in open_:
            lo, hi = r["t_test"]["ci"]
            if lo > 0 or hi < 0:
                side.setdefault(family, [0, 0])[lo > 0] += 1
        excl = sum(map(sum, side.values()))
        out.append(f"- {excl if excl else 'None'} of the {len(open_)} unresolved claims "
                   f"{'has' if excl == 1 else 'have'} an unadjusted 95 % interval that excludes 0"
                   + (":" if excl else "."))
        for family, (below, above) in side.items():
            out.append(f"  - {family}: {_favour_words(below, 'BBB', 'below')} and "
                       f"{_favour_words(above, 'the rival', 'above')};")
        if excl:
            out[-1] = out[-1][:-1] + "."
    floor, alpha = _sign_floor(n), next(iter(next(iter(
        verdicts_rec["metrics"].values())).values()))["alpha"]
    if n > 1:
        t_need, factor = holm_t_needed(n, max(t["claims"] for t in tally(verdicts_rec).values()),
                                       alpha)
        out.append(f"- What a verdict needs here (the column *|difference| a verdict needs*): "
                   f"with {n} seeds, the claim with the smallest p passes Holm only with |t| > "
                   f"{t_need:.1f} (df {n - 1}), a mean difference at least {factor:.1f} times "
                   f"the half-width of its unadjusted 95 % interval; each later step needs a "
                   f"little less, down to {holm_t_needed(n, 1, alpha)[1]:.1f} times at the last "
                   f"(α/1). The column gives each claim its own step's threshold; a claim passes "
                   f"only once every claim before it has.")
    out.append(f"- The exact sign test cannot go below p = {floor:.4f} at {_n_seeds(n)}"
               + (f", so alone it could never reach α = {alpha:g}" if floor > alpha else "")
               + "; the verdicts rest on the t-test, as declared.")
    return "\n".join(out)


# ---- notebook 02's readings of its figures and tables, rendered from the stored numbers -----
# Each returns Markdown whose wording follows the numbers it is given (no expected outcome is
# written down here). Thresholds below are reading conventions, not results.

TIE = 1e-6           # a std ratio within this of 1 is "the same width"
WIDTH_NEAR = 1.25    # a band "about as wide as" the data's scatter: within this factor of it
COVERAGE_NEAR = 0.05  # a coverage "near its target": within this of it (and a seed off by more)
# the methods' names in sentences (the tables use ``LABELS``)
NAMES = {"bbb_gaussian": "BBB (Gaussian prior)", "bbb_mixture": "BBB (scale-mixture prior)",
         "mc_dropout": "MC dropout", "deep_ensemble": "the deep ensemble",
         "mle": "the standard network"}
REGION_WORDS = {"in": "in the training range", "out": "away from the data"}


def _ratio(r):
    """A std ratio to 2 decimals, or to 4 where 2 would round a ratio other than 1 to 1.00."""
    return f"{r:.4f}" if TIE < abs(r - 1) < 0.005 else f"{r:.2f}"


def _every_seed(n):
    return "its one seed" if n == 1 else f"every one of the {n} seeds"


def _seed_row(per_seed, method, seed):
    """The per-seed score dict of ``method`` on ``seed``."""
    return next(r for r in per_seed[method] if r["seed"] == seed)


def _x_range(region):
    lo, hi = REGIONS[region]
    return f"$x\\in[{lo:g}, {hi:g}]$"


from .report import and_list as _list_words  # noqa: E402  'a, b and c'


def figure5_text(per_seed, seed, scatter, bbb="bbb_gaussian", rival="mle"):
    """Return section 3's reading of Figure 5 on ``seed`` (Markdown bullets): inside the training
    range, how wide each band is against the data's root-mean-square ``scatter`` and how close
    its mean is to fresh draws (RMSE); away from the data, whether BBB's band opens up and
    whether the standard network's keeps its width. ``per_seed``: fits.json's metrics.per_seed."""
    b, s = _seed_row(per_seed, bbb, seed), _seed_row(per_seed, rival, seed)

    def width(r):
        w = r["std_in"] / scatter
        return ("about as wide as" if 1 / WIDTH_NEAR <= w <= WIDTH_NEAR else
                f"{w:.1f} times as wide as" if w > 1 else f"only {w:.2f} times as wide as")

    def follows(r):
        return r["rmse_in"] <= WIDTH_NEAR * scatter
    sc = f"the data's root-mean-square scatter of {scatter:.3f} (section 1)"
    if width(b) == width(s):
        inside = (f"both bands are {width(b)} {sc}: mean predictive std {b['std_in']:.3f} for "
                  f"{NAMES[bbb]} and {s['std_in']:.3f} for {NAMES[rival]}.")
    else:
        inside = (f"the band of {NAMES[bbb]} is {width(b)} {sc} (mean predictive std "
                  f"{b['std_in']:.3f}); that of {NAMES[rival]} is {width(s)} it (mean "
                  f"predictive std {s['std_in']:.3f}).")
    rmse = (f"RMSE, the root-mean-square error of the mean on fresh draws: {b['rmse_in']:.4f} "
            f"and {s['rmse_in']:.4f}")
    if follows(b) == follows(s):
        inside += (f" Both predictive means {'follow' if follows(b) else 'stray from'} the data "
                   f"({rmse}).")
    else:
        word = {True: "follows the data", False: "strays from the data"}
        inside += (f" The predictive mean of {NAMES[bbb]} {word[follows(b)]}, that of "
                   f"{NAMES[rival]} {word[follows(s)]} ({rmse}).")
    out = [f"- **In the training range** ({_x_range('in')}) {inside}"]
    away = f"- **Away from the data** ({_x_range('out')}) the band of {NAMES[bbb]} "
    if b["std_ratio"] > 1 + TIE:
        out.append(away + f"opens up: its mean predictive std is {b['std_out']:.3f}, "
                   f"{_ratio(b['std_ratio'])} times that inside. Its weight samples disagree "
                   "where no data pin them down.")
    else:
        out.append(away + f"does not open up on this seed: its mean predictive std is "
                   f"{b['std_out']:.3f}, {_ratio(b['std_ratio'])} times that inside.")
    if abs(s["std_ratio"] - 1) <= TIE:
        out.append(f"- The band of {NAMES[rival]} keeps the same width everywhere (mean std "
                   f"{s['std_in']:.3f}): its only spread is the constant noise $\\sigma$. It "
                   "extrapolates its single curve with the confidence it has inside the data.")
    else:
        out.append(f"- The band of {NAMES[rival]} changes width away from the data: its mean "
                   f"std is {_ratio(s['std_ratio'])} times that inside.")
    return f"On seed {seed} (the figure above):\n\n" + "\n".join(out)


def widening_text(summary):
    """Return section 4's reading of the std ratio table (Markdown bullets): on how many seeds
    each method that averages over networks widens its band away from the data (std ratio above
    1), and whether the standard network's band keeps a constant width (the means are in the
    table). ``summary``: {method: {score: {per_seed, mean, sd}}}."""
    ratio = {m: s["std_ratio"] for m, s in summary.items()}
    n = len(next(iter(ratio.values()))["per_seed"])
    wide = {m: sum(v > 1 + TIE for v in e["per_seed"]) for m, e in ratio.items()}
    averaging = sorted((m for m in ratio if m != "mle"), key=lambda m: -ratio[m]["mean"])
    out = []
    if averaging and all(wide[m] == n for m in averaging):
        out.append(f"- Every method that averages over networks widens its band away from the "
                   f"data, on {_every_seed(n)} (std ratio above 1).")
    elif averaging and not any(wide.values()):
        out.append("- No method that averages over networks widens its band away from the data, "
                   f"on any of the {_n_seeds(n)}.")
    elif averaging:
        groups = {}
        for m in averaging:
            groups.setdefault(wide[m], []).append(NAMES[m])
        out.append("- The std ratio is above 1 (a wider band away from the data) on "
                   + "; on ".join(f"{k} of {n} seeds for {_list_words(ms)}"
                                  for k, ms in sorted(groups.items(), reverse=True)) + ".")
    if "mle" in ratio:
        if all(abs(v - 1) <= TIE for v in ratio["mle"]["per_seed"]):
            out.append("- The band of the standard network keeps the same width on every seed "
                       "(std ratio 1.00).")
        else:
            out.append("- The band of the standard network changes width (mean std ratio "
                       f"{_ratio(ratio['mle']['mean'])}).")
    return "\n".join(out)


def _variance_shares(curve, x_grid, region):
    """Epistemic variance on the grid points of ``region`` of a ``grid_curve``: (epistemic
    values, aleatoric sigma^2, epistemic share of the total at each point)."""
    g = torch.as_tensor(x_grid).reshape(-1)
    lo, hi = REGIONS[region]
    e = torch.tensor(curve["epistemic_var"])[(g >= lo) & (g <= hi)]
    s2 = curve["sigma"] ** 2
    return e, s2, e / (e + s2)


def _share_words(share):
    return ("almost all of" if share >= 0.9 else "most of" if share > 0.5 else
            "less than half of" if share >= 0.25 else "a small part of")


def _times(r):
    return f"{r:.0f}" if r >= 10 else f"{r:.2f}"


def variance_split_text(curves, x_grid, seed, method="bbb_gaussian"):
    """Return section 5's reading of the variance split of ``method`` (its ``grid_curve`` in
    ``curves``, on the first seed ``seed``; Markdown bullets): in the training range and away
    from the data (``REGIONS``), on how many grid points the epistemic variance lies below the
    aleatoric sigma^2, by how much, and what share of the total variance it makes up."""
    out = []
    for region in ("in", "out"):
        e, s2, share = _variance_shares(curves[method], x_grid, region)
        below, n = int((e < s2).sum()), len(e)
        sigma2 = f"$\\sigma^2 = {s2:.5f}$" if not out else "$\\sigma^2$"
        if below == n:
            how = (f"below the aleatoric {sigma2} at every grid point (at most "
                   f"{_times(e.max().item() / s2)} times it)")
        elif below == 0:
            how = (f"above the aleatoric {sigma2} at every grid point (on average "
                   f"{_times(e.mean().item() / s2)} times it)")
        else:
            how = (f"below the aleatoric {sigma2} at {below} of {n} grid points, above it at the "
                   f"others (on average {_times(e.mean().item() / s2)} times it)")
        share_mean = share.mean().item()
        text = (f"- **{_cap(REGION_WORDS[region])}** ({_x_range(region)}) the epistemic variance "
                f"lies {how}. It makes up {_share_words(share_mean)} the total: "
                f"{100 * share_mean:.0f} % on average, {100 * share.min().item():.0f}–"
                f"{100 * share.max().item():.0f} % over the points")
        text += ("; the total is close to the learned noise alone." if share_mean <= 0.2
                 else ".")
        out.append(text)
    out.append(f"- Only seed {seed}'s curves are shown (the other seeds keep their scores and "
               "std ratios, not their curves).")
    return f"On seed {seed}, for {NAMES[method]}:\n\n" + "\n".join(out)


def coverage_in_text(summary):
    """Return section 6's reading of the central 50 % interval in the training range (Markdown
    bullets): which methods cover more than 50 % with it, on average and on how many seeds;
    what their central 90 % interval covers; and, where the 50 % interval covers too much, a
    possible reason (not tested)."""
    c50 = {m: s["coverage50_in"] for m, s in summary.items()}
    c90 = [s["coverage90_in"]["mean"] for s in summary.values()]
    n = len(next(iter(c50.values()))["per_seed"])
    over = [m for m in c50 if c50[m]["mean"] > 0.5]
    low = {m: sum(v <= 0.5 for v in c50[m]["per_seed"]) for m in c50}
    means = [e["mean"] for e in c50.values()]
    lowest = min(c50, key=lambda m: min(c50[m]["per_seed"]))
    spread = (f"means {min(means):.3f} to {max(means):.3f}; lowest seed "
              f"{min(c50[lowest]['per_seed']):.3f}, {NAMES[lowest]}'s")
    if len(over) == len(c50) and not any(low.values()):
        out = [f"- **In the training range** every method's central 50 % interval covers more "
               f"than 50 % of the fresh draws, on {_every_seed(n)} ({spread}): these intervals "
               "are too wide."]
    else:
        rest = [m for m in c50 if m not in over]
        text = ("- **In the training range** the central 50 % interval covers more than 50 % on "
                f"average for {_list_words(NAMES[m] for m in over) if over else 'no method'}"
                + (f", at most 50 % for {_list_words(NAMES[m] for m in rest)}" if rest else "")
                + f" ({spread}).")
        if any(low.values()):
            text += (" Per seed, it covers at most 50 % for "
                     + _list_words(f"{NAMES[m]} on {k} of {n}" for m, k in low.items() if k)
                     + ".")
        out = [text]
    near = all(abs(v - 0.9) <= COVERAGE_NEAR for v in c90)
    out.append(f"- The central 90 % intervals cover {min(c90):.3f} to {max(c90):.3f} on average"
               + (f", all within {COVERAGE_NEAR:.2f} of the target 0.90." if near
                  else " (target 0.90)."))
    if over:
        out.append("- A possible reason, not tested here: the noise on $y$ is not Gaussian and "
                   "varies with $x$ (section 1), while every model learns one Gaussian "
                   "$\\sigma$.")
    return "\n".join(out)


def _seed_split(per_seed, level):
    """(within, too wide, too narrow): how many per-seed coverages lie within ``COVERAGE_NEAR``
    of ``level``, above it by more, below it by more."""
    wide = sum(v > level + COVERAGE_NEAR for v in per_seed)
    narrow = sum(v < level - COVERAGE_NEAR for v in per_seed)
    return len(per_seed) - wide - narrow, wide, narrow


def _cov_span(per_seed):
    """'0.74–1.00', or one value when every seed's coverage prints the same."""
    lo, hi = f"{min(per_seed):.2f}", f"{max(per_seed):.2f}"
    return lo if lo == hi else f"{lo}–{hi}"


def _seeds_within(per_seed, level, say_within=True):
    """How many seeds' coverages lie within ``COVERAGE_NEAR`` of ``level``: 'none of its 5 seeds
    is within 0.05 (4 too wide, 1 too narrow)', 'only 1 of its 5 seeds is ...', 'all 5 of its
    seeds are within 0.05'; ``say_within=False`` leaves out ' within 0.05' (said before)."""
    within, wide, narrow = _seed_split(per_seed, level)
    n = len(per_seed)
    w = f" within {COVERAGE_NEAR:.2f}" if say_within else ""
    if within == n:
        return (f"its one seed is{w}" if n == 1 else f"both its seeds are{w}" if n == 2 else
                f"all {n} of its seeds are{w}")
    off = ", ".join(x for k, x in ((wide, f"{wide} too wide"), (narrow, f"{narrow} too narrow"))
                    if k)
    who = (f"none of its {n} seeds is" if not within else
           f"only {within} of its {n} seeds {'is' if within == 1 else 'are'}")
    return f"{who}{w} ({off})"


def coverage_spread_text(summary):
    """Return the reading of the per-seed coverages (Markdown bullets, one per method and region,
    one sub-bullet per interval): where a mean coverage lies within ``COVERAGE_NEAR`` of its
    target while seeds miss it by more than that on both sides (too wide and too narrow), or
    that no mean does."""
    found, said = [], False
    for m, s in summary.items():
        for region in ("in", "out"):
            items = []
            for level in INTERVALS:
                e = s[f"coverage{round(100 * level)}_{region}"]
                _, wide, narrow = _seed_split(e["per_seed"], level)
                if abs(e["mean"] - level) <= COVERAGE_NEAR and wide and narrow:
                    items.append(
                        f"  - the central {round(100 * level)} % interval covers {e['mean']:.3f} "
                        f"on average (target {level:.2f}), but {min(e['per_seed']):.3f} to "
                        f"{max(e['per_seed']):.3f} per seed: {wide} seed{'s' if wide != 1 else ''}"
                        f" too wide and {narrow} too narrow"
                        + ("" if said else f" by more than {COVERAGE_NEAR:.2f}") + ";")
                    said = True
            if items:
                items[-1] = items[-1][:-1] + "."
                found.append(f"- **{_cap(NAMES[m])}, {REGION_WORDS[region]}:**\n"
                             + "\n".join(items))
    n = len(next(iter(summary.values()))["std_ratio"]["per_seed"])
    if not found:
        return (f"- In these tables ({_n_seeds(n)}) no mean coverage within "
                f"{COVERAGE_NEAR:.2f} of its target hides seeds that miss it by more than that "
                "on both sides.")
    return "\n".join(found)


def opposite_errors_text(summary, curves, x_grid, true_mean, seed, method="bbb_gaussian"):
    """Return one Markdown bullet on why ``method``'s two central intervals away from the data
    err in opposite directions (its mean coverage of the 50 % interval below 0.50, of the 90 %
    interval above 0.90, and the same on ``seed``, the seed of the stored ``curves``): how far
    its median lies from the truth there on average, against the half-widths of the two
    intervals; or '' when they do not err so."""
    c50, c90 = summary[method]["coverage50_out"], summary[method]["coverage90_out"]
    s50, s90 = c50["per_seed"][0], c90["per_seed"][0]  # the first seed: the curves' seed
    if method not in curves or not (c50["mean"] < 0.5 and c90["mean"] > 0.9 and s50 < 0.5
                                    and s90 > 0.9):
        return ""
    q = {k: torch.tensor(v) for k, v in curves[method]["quantiles"].items()}
    xs = x_grid.squeeze(1)
    lo, hi = REGIONS["out"]
    out = (xs >= lo) & (xs <= hi)
    t = torch.as_tensor(true_mean).reshape(-1)
    off = (q["0.5"] - t)[out]
    h50 = ((q["0.75"] - q["0.25"]) / 2)[out].mean().item()
    h90 = ((q["0.95"] - q["0.05"]) / 2)[out].mean().item()
    j = int(torch.argmin(t[out]))
    side = "above" if off[j] > 0 else "below"
    return (f"- **Why the two intervals of {NAMES[method]} err in opposite directions** (seed "
            f"{seed}, Figure 5): "
            f"away from the data its median lies on average {off.abs().mean().item():.2f} from "
            f"the truth ({side} it by {abs(off[j]):.2f} at the truth's dip, "
            f"$x = {xs[out][j].item():.2f}$); its 50 % interval reaches {h50:.2f} either side of "
            f"the median, its 90 % interval {h90:.2f}. Centred off the truth, the narrow one "
            f"misses many fresh draws (coverage {s50:.3f}), the wide one almost none "
            f"({s90:.3f}).")


def _tests_words(verdicts_rec):
    """One bullet with sub-bullets: what the declared tests found, per family (each claim that
    holds or is reversed as BBB's difference from the rival with its 95 % interval,
    ``_effects``), and how many claims (and whose) are not resolved."""
    n = len(verdicts_rec["seed"])
    t = tally(verdicts_rec)
    total = sum(f["claims"] for f in t.values())
    resolved = [c for f in t.values() for c in f["holds"] + f["reversed"]]
    head = f"- **What the declared tests found** (section 6, {_n_seeds(n)}, {total} claims)"
    one_sign = {}  # the scores whose differences all point one way: section 6's reading
    lines = [] if resolved else [f"  - none of the {total} claims is resolved;"]
    eff = {v: _effects(verdicts_rec, v) for v in ("holds", "reversed")}
    for family, f in t.items():
        bits = [f"{NAMES[a]} has " + ", and ".join(f"{way} {what} than {_list_words(ph)}"
                                                   for what, ph in by.items())
                for verdict, way in (("holds", "a lower"), ("reversed", "a higher"))
                for (a, fam), by in eff[verdict].items() if fam == family]
        said = one_sign.get(family, [])
        if bits:
            lines.append(f"  - {family}, " + "; ".join(bits)
                         + "".join(f". {_cap(w)}" for w in said) + ";")
        else:
            lines += [f"  - {family}, {w};" for w in said]
    quiet = [b for b in BBB if not any(_claim_parts(c)[0] == b for c in resolved)]
    n_quiet = sum(_claim_parts(c)[0] in quiet for claims in verdicts_rec["metrics"].values()
                  for c in claims)
    rest = total - len(resolved)
    if rest and resolved:
        lines.append(f"  - the other {rest} claims are not resolved"
                     + (f", among them all {n_quiet} about {_list_words(NAMES[b] for b in quiet)}"
                        if quiet else "") + ";")
    lines[-1] = lines[-1][:-1] + "."
    return head + ":\n" + "\n".join(lines)


def _reversed_in_words(summary, curves, verdicts_rec, seed, per_seed=None):
    """One bullet on why BBB's coverage error near the data is higher than the rivals' whose
    claims are reversed there, or None when no coverage-error claim near the data is reversed:
    both methods' mean coverages of the central intervals in the training range and their mean
    predictive std there (``per_seed``, when given); ``curves`` and ``seed`` are not used."""
    family = "near the data"
    rev = {}
    for c, r in verdicts_rec["metrics"].get(family, {}).items():
        a, b, what = _claim_parts(c)
        if r["verdict"] == "reversed" and what == "coverage error":
            rev.setdefault(a, []).append(b)
    if not rev:
        return None
    a, rivals = next(iter(rev.items()))
    ms = [a] + rivals

    def cov(m):
        return " and ".join(f"{summary[m][f'coverage{round(100 * c)}_in']['mean']:.3f}"
                            for c in INTERVALS)
    over = all(summary[m][f"coverage{round(100 * c)}_in"]["mean"] > c for m in ms
               for c in INTERVALS)
    text = (f"- **Why {NAMES[a]} loses on coverage error near the data** (the reversed verdicts): "
            f"in the training range its central 50 % and 90 % intervals cover {cov(a)} on average, "
            + _list_words(f"{NAMES[b]}'s {cov(b)}" for b in rivals)
            + " (targets 0.50 and 0.90)"
            + (f": all of them cover more than their targets, {NAMES[a]}'s the most." if over
               else "."))
    if per_seed:
        sd = {m: sum(r["std_in"] for r in per_seed[m]) / len(per_seed[m]) for m in ms}
        text += (f" Its band there is wider: mean predictive std {sd[a]:.3f} against "
                 + _list_words(f"{sd[b]:.3f}" for b in rivals) + " (mean over the seeds).")
    return text


def _bbb_folds_words(per_seed):
    """': on average BBB (Gaussian prior)'s 11.5-fold (95 % interval 8.4 to 14.7) and BBB
    (scale-mixture prior)'s 1.6-fold (1.3 to 1.9; exploratory intervals)': each BBB variant's
    mean std ratio over the seeds of ``per_seed`` with its unadjusted t-interval (section 4's
    exploratory check)."""
    from . import stats
    parts = []
    for b in (b for b in BBB if b in per_seed):
        m = stats.mean_ci([r["std_ratio"] for r in per_seed[b]])
        ci = None if m["ci"] is None else " to ".join(_fold(v) for v in m["ci"])
        parts.append((f"{NAMES[b]}'s {_fold(m['mean'])}-fold", ci))
    if not parts or any(ci is None for _, ci in parts):
        return "" if not parts else ": on average " + _list_words(p for p, _ in parts)
    words = [f"{p} ({'95 % interval ' if k == 0 else ''}{ci}" + (")" if k < len(parts) - 1 else
                                                                 "; exploratory intervals)")
             for k, (p, ci) in enumerate(parts)]
    return ": on average " + _list_words(words)


def takeaways_text(summary, curves, x_grid, seed, verdicts_rec=None, method="bbb_gaussian",
                   true_mean=None, per_seed=None):
    """Return the measured takeaways of notebook 02 (Markdown bullets): whether the methods'
    bands widen away from the data over the seeds (std ratio); left of the data, on ``seed``
    (``true_mean``: the generator's E[y | x] on ``x_grid``, when given), how wide ``method``'s
    band is and whether it holds the truth; what their central 90 % interval covers away from
    the data; what the declared tests found (``verdicts_rec``, when given) and why a
    coverage-error claim near the data is reversed (``per_seed``: fits.json's per-seed scores,
    optional); and which part of one method's predictive variance (``method``'s ``grid_curve``
    in ``curves``, on ``seed``) dominates in the training range and away from it."""
    ratio = {m: s["std_ratio"]["per_seed"] for m, s in summary.items()}
    n = len(next(iter(ratio.values())))
    wide = {m: sum(v > 1 + TIE for v in vs) for m, vs in ratio.items()}
    averaging = [m for m in summary if m != "mle"]
    if all(wide[m] == n for m in averaging):
        how = f"every method that averages over networks widens its band on {_every_seed(n)}"
    else:
        groups = {}
        for m in averaging:
            groups.setdefault(wide[m], []).append(NAMES[m])
        how = "the methods that average over networks widen their bands " + ", ".join(
            f"on {k} of {n} seeds for {_list_words(ms)}"
            for k, ms in sorted(groups.items(), reverse=True))
    first = f"- Away from the data {how} (std ratio above 1, section 4)"
    if per_seed:
        first += _bbb_folds_words(per_seed)
    if "mle" in ratio:
        first += ("; the standard network's band cannot widen"
                  if all(abs(v - 1) <= TIE for v in ratio["mle"]) else
                  f"; the standard network's changes width too (mean std ratio "
                  f"{_ratio(sum(ratio['mle']) / n)})")
    out = [first + "."]
    if true_mean is not None and method in curves:
        d = left_strip_detail(curves, x_grid, true_mean, method)
        ratio_l, k, n_l, gap = d["ratio"], d["outside"], d["points"], d["gap_ratio"]
        g_lo, g_hi = _near_gap()
        out.append(f"- Left of the data ($x\\in[{GRID[0]:g}, 0)$) the band of {NAMES[method]} "
                   f"widens {_as_much_words(ratio_l, gap)} at the same distance on the right "
                   f"($x\\in({g_lo:g}, {g_hi:g})$) on seed {seed}: {_ratio(ratio_l)} times its "
                   f"width in the training range against {_ratio(gap)}, and the truth lies "
                   + (f"outside its 5–95 % band at {k} of {n_l} grid points there" if k else
                      f"inside its 5–95 % band at all {n_l} grid points there")
                   + " (section 3; one seed's curves, not tested).")
    if verdicts_rec:
        out.append(_tests_words(verdicts_rec))
        why = _reversed_in_words(summary, curves, verdicts_rec, seed, per_seed)
        if why:
            out.append(why)
    share = {r: _variance_shares(curves[method], x_grid, r)[2].mean().item()
             for r in ("in", "out")}
    inside = ("the learned noise $\\sigma$ (aleatoric) dominates" if share["in"] < 0.5 else
              "the spread over weights (epistemic) dominates already")
    outside = ("the spread over weights (epistemic) takes over" if share["out"] > 0.5 else
               "the learned noise (aleatoric) still dominates")
    out.append(f"- For {NAMES[method]} on seed {seed} (section 5), {inside} inside the training range (epistemic share of the total "
               f"variance {100 * share['in']:.0f} % on average) and {outside} away from the data "
               f"({100 * share['out']:.0f} %).")
    return "\n".join(out)


# ---- notebook 02's answer, on its first screen -----------------------------------------------

def _effects(verdicts_rec, verdict):
    """{(BBB variant, family): {score: ["MC dropout (by 1.914, 95 % interval 0.996 to 2.832)",
    ...]}} of the claims with ``verdict``, each as the size of BBB's difference from the rival
    and its interval (a positive size: BBB lower for 'holds', higher for 'reversed')."""
    out = {}
    for family, claims in verdicts_rec["metrics"].items():
        for name, r in claims.items():
            if r["verdict"] != verdict:
                continue
            a, b, what = _claim_parts(name)
            tt, sign = r["t_test"], -1 if verdict == "holds" else 1
            ci = ("" if tt["ci"] is None else ", 95 % interval "
                  + " to ".join(f"{v:.3f}" for v in sorted(sign * x for x in tt["ci"])))
            out.setdefault((a, family), {}).setdefault(what, []).append(
                f"{NAMES[b]} (by {sign * tt['mean_diff']:.3f}{ci})")
    return out


PAPER_PRIOR = {"bbb_mixture": (" (a point of the paper's MNIST grid, $\\pi=\\frac12$, "
                               "$\\sigma_1=1$, $\\sigma_2=e^{-6}$; the paper names no prior "
                               "for Figure 5)")}  # said once, in the answer
FAR_LESS = 0.5  # the answer says "far less" for a BBB whose std ratio is below this share of the other's


def _other_bbb_words(summary, best, other):
    """(sentence, rivals named) of the answer on the BBB variant whose band widens less: its std
    ratio (and on how many seeds it is above 1 when not on all), the rivals whose ratio is
    higher, with theirs, and its coverage."""
    r, c = summary[other]["std_ratio"], summary[other]["coverage90_out"]
    n, wide = len(r["per_seed"]), sum(v > 1 + TIE for v in r["per_seed"])
    higher = [m for m in summary if m not in BBB + ("mle",)
              and summary[m]["std_ratio"]["mean"] > r["mean"]]
    words = f"{_cap(NAMES[other])}'s std ratio is {_fold(r['mean'])}"
    if wide < n:
        words += f" (above 1 on {wide} of {n} seeds)"
    if higher:
        words += ", below " + _list_words(
            f"{NAMES[m]}'s ({_fold(summary[m]['std_ratio']['mean'])})" for m in higher)
    return words + f"; its central 90 % interval covers {c['mean']:.3f} there", higher


def _fold(r):
    """A std ratio in the answer, to 1 decimal (its seeds spread far more), or as ``_ratio``
    where 1 decimal would round a ratio other than 1 to 1.0."""
    return _ratio(r) if TIE < abs(r - 1) < 0.05 else f"{r:.1f}"


def answer_text(summary, verdicts_rec=None, off_centre=False, seed=0):
    """Return notebook 02's answer (Markdown: a bold headline, then bullets), from the stored
    summary and verdicts, question (a) in the headline and (b) in the last bullet: the BBB
    variant whose band widens most away from the data, its mean
    std ratio with the per-seed range, the standard network's and the other BBB variant's; the
    coverage of its central 90 % interval there (mean, per-seed range, how many seeds lie near
    the target; ``off_centre``: on the curves' ``seed`` its band there is wide but its median
    lies off the truth, said with a pointer to section 6); the other BBB variant's std ratio beside the rivals' and the
    methods' coverage; then the declared tests' count and the claims that hold or are reversed
    (their differences and intervals: the takeaways). The wording follows the numbers."""
    ratio = {m: s["std_ratio"] for m, s in summary.items()}
    cov = {m: s["coverage90_out"] for m, s in summary.items()}
    best = max((b for b in BBB if b in summary), key=lambda b: ratio[b]["mean"])
    other = next((b for b in BBB if b in summary and b != best), None)
    per, c = ratio[best]["per_seed"], cov[best]
    n, wide = len(per), sum(v > 1 + TIE for v in per)
    lead = "Yes" if wide == n else f"On {wide} of {n} seeds" if wide else "No"
    spread = f"{_fold(min(per))} to {_fold(max(per))} per seed"
    head = (f"{lead}: away from the data the band of {NAMES[best]} "
            + (f"widens {_fold(ratio[best]['mean'])}-fold ({spread})" if wide else
               f"does not widen ({_fold(ratio[best]['mean'])}-fold; {spread})"))
    flat = "mle" in summary and abs(ratio["mle"]["mean"] - 1) <= TIE
    if "mle" in summary:
        head += ("; a standard network's keeps one width" if flat else
                 f"; a standard network's {_fold(ratio['mle']['mean'])}-fold")
    if other and ratio[other]["mean"] < ratio[best]["mean"] and wide:
        far = ratio[other]["mean"] < FAR_LESS * ratio[best]["mean"]
        head += (f"; with the {'scale-mixture' if other == 'bbb_mixture' else 'Gaussian'} "
                 f"prior{PAPER_PRIOR.get(other, '')}, BBB's widens "
                 f"{'only ' if far else ''}{_fold(ratio[other]['mean'])}-fold")
    first = (f"**(a) {head}.**\n\n"
             f"- **Coverage there:** the central 90 % interval of {NAMES[best]} covers "
             f"{c['mean']:.3f} of fresh draws on average (target 0.90), "
             f"but {min(c['per_seed']):.3f} to {max(c['per_seed']):.3f} per seed: "
             f"{_seeds_within(c['per_seed'], 0.9)}"
             + (f"; on seed {seed} the band is wide but its median lies off the truth "
                "(section 6)" if off_centre else ""))
    named, rest = [], ""
    if other:
        words, named = _other_bbb_words(summary, best, other)
        rest += ". " + words
    if "mle" in summary:
        rest += f". The standard network's covers {cov['mle']['mean']:.3f}"
    others = [m for m in summary if m not in BBB + ("mle",)]
    if others:
        less = all(ratio[m]["mean"] < ratio[best]["mean"] for m in others)
        rest += (f". {_cap(_list_words(NAMES[m] for m in others))} "
                  + ("" if set(others) <= set(named) else
                     ("has a std ratio of " if len(others) == 1 else "have std ratios ")
                     + ", ".join(_fold(ratio[m]["mean"]) for m in others)
                     + (f", {'all ' if len(others) > 1 else ''}lower than {NAMES[best]}'s,"
                        if less else "") + " and ")
                  + f"cover{'s' if len(others) == 1 else ''} "
                  + _list_words(f"{cov[m]['mean']:.3f}" for m in others))
    out = [first + "."] + ([f"- **The other methods there:** {rest[2:]}."] if rest else [])
    if verdicts_rec:
        t = tally(verdicts_rec)
        total = sum(f["claims"] for f in t.values())
        k = {v: sum(len(f[v]) for f in t.values()) for v in ("holds", "reversed")}
        h, r = k["holds"], k["reversed"]
        lead = "No: " if not h else "Yes: " if h == total else ""  # the counts say the rest
        line = (f"- **(b) {lead}BBB is better in {h or 'none'} of {total} declared claims; "
                f"{r or 'none'} {'is' if r == 1 else 'are'} reversed (the rival better) and "
                f"{total - h - r} {'is' if total - h - r == 1 else 'are'} not resolved at "
                f"{_n_seeds(len(verdicts_rec['seed']))}** (section 6).")
        said = []
        for family, f in t.items():
            bits = ([_held_words(f["holds"])] if f["holds"] else []) + (
                [_reversed_words(f["reversed"])] if f["reversed"] else [])
            if bits:
                said.append(f"{family}, " + "; ".join(bits))
        if said:
            line += (" " + _cap("; ".join(said))
                     + " (the differences with their 95 % intervals: the takeaways).")
        out.append(line)
    return "\n".join(out)


def answer(profile_name="default", noise_std=0.02):
    """Return notebook 02's answer (``answer_text``) from the stored runs of ``profile_name``,
    or a line naming the command that trains them when results/ does not hold them. It only
    reads (never trains), so the notebook can show it before its parameters cell."""
    from .profiles import get_profile
    rec = load_fits(get_profile(NB, profile_name), noise_std)
    if rec is None:
        return (f"*The answer is rendered here from the trained models of profile "
                f"`{profile_name}`, which this run's results folder does not hold (a run in "
                "another profile writes its own; the committed notebook shows the answer). "
                f"`make notebooks ONLY=02 PROFILE={profile_name} TRAIN=1` trains them.*")
    x, curves = plot_grid(), rec["metrics"]["curves"]
    true_mean = truth(x, noise_std)
    off = bool(opposite_errors_text(rec["summary"], curves, x, true_mean, rec["seed"][0]))
    return answer_text(rec["summary"], load_verdicts(), off_centre=off, seed=rec["seed"][0])



def left_strip(curves, x_grid, true_mean, method="bbb_gaussian"):
    """(std ratio, points outside, points): on the strip left of the data, x in [GRID[0], 0),
    which the declared scores leave out, the mean predictive std of ``method`` (its stored
    curves) over that in the training range, and at how many of the strip's grid points the
    truth lies outside the 5-95 % band."""
    d = left_strip_detail(curves, x_grid, true_mean, method)
    return d["ratio"], d["outside"], d["points"]


def _near_gap():
    """(from, to) of the gap right of the training range as far from the data as the left
    strip: (0.5, 0.7) for a strip [-0.2, 0)."""
    lo, hi = REGIONS["in"]
    return hi, hi + (lo - GRID[0])


def left_strip_detail(curves, x_grid, true_mean, method="bbb_gaussian"):
    """``left_strip``'s numbers and more, on ``method``'s stored curves: "ratio" (the strip's
    mean predictive std over the training range's), "gap_ratio" (the same on the right at the
    same distance from the data, ``_near_gap``), "outside" and "points" (grid points of the
    strip where the truth lies outside the 5-95 % band; all of them), and the strip's ranges of
    the band's median ("median": (min, max)) and of the truth ("truth": (min, max))."""
    c = curves[method]
    xs = x_grid.squeeze(1)
    sd = (torch.tensor(c["epistemic_var"]) + c["sigma"] ** 2).sqrt()
    left, inside = xs < REGIONS["in"][0], (xs >= REGIONS["in"][0]) & (xs <= REGIONS["in"][1])
    g_lo, g_hi = _near_gap()
    gap = (xs > g_lo) & (xs < g_hi)
    lo, hi = torch.tensor(c["quantiles"]["0.05"]), torch.tensor(c["quantiles"]["0.95"])
    t = torch.as_tensor(true_mean).reshape(-1)
    med = c["quantiles"].get("0.5")
    med = None if med is None else torch.tensor(med)[left]
    return {"ratio": (sd[left].mean() / sd[inside].mean()).item(),
            "gap_ratio": (sd[gap].mean() / sd[inside].mean()).item(),
            "outside": int(((t < lo) | (t > hi))[left].sum()), "points": int(left.sum()),
            "median": None if med is None else (med.min().item(), med.max().item()),
            "truth": (t[left].min().item(), t[left].max().item())}


def _as_much_words(ratio, other):
    """'more than', 'as much as' (equal to 2 decimals), 'less than' or 'far less than'
    (``FAR_LESS``): a std ratio against another."""
    return ("as much as" if round(ratio, 2) == round(other, 2) else
            "more than" if ratio > other else
            "less than" if ratio >= FAR_LESS * other else "far less than")


def _flat_median_words(d):
    """', but its median stays between -0.01 and 0.05 while the truth runs from -0.68 to
    -0.02' (the strip's ranges of ``left_strip_detail``), or '' when no median is stored or
    the median's range overlaps half of the truth's (it follows the truth)."""
    if d["median"] is None:
        return ""
    (m_lo, m_hi), (t_lo, t_hi) = d["median"], d["truth"]
    if (m_hi - m_lo) > 0.5 * (t_hi - t_lo):
        return ""
    return (f", but its median stays between {m_lo:.2f} and {m_hi:.2f} while the truth runs "
            f"from {t_hi:.2f} down to {t_lo:.2f}" if t_hi - t_lo > 0 else "")


def left_strip_text(curves, x_grid, true_mean, seed, method="bbb_gaussian"):
    """Return one Markdown bullet on the strip left of the data (``left_strip_detail``) for
    ``method`` on ``seed``: its widening against the gap right of the data at the same distance
    (``_near_gap``), where its median runs against the truth, and at how many of the strip's
    grid points the truth lies outside the 5-95 % band (section 3; one seed, not tested, so
    not in the answer)."""
    d = left_strip_detail(curves, x_grid, true_mean, method)
    ratio, k, n = d["ratio"], d["outside"], d["points"]
    strip = f"$x\\in[{GRID[0]:g}, 0)$"
    g_lo, g_hi = _near_gap()
    how = (f"the band of {NAMES[method]} widens {_as_much_words(ratio, d['gap_ratio'])} at the "
           f"same distance right of the data, $x\\in({g_lo:g}, {g_hi:g})$: {_ratio(ratio)} against "
           f"{_ratio(d['gap_ratio'])} times its width in the training range")
    flat = _flat_median_words(d)
    where = (f"the truth lies outside its 5–95 % band at {k} of the strip's {n} evenly spaced "
             "points" if k else
             f"the truth stays inside its 5–95 % band at all {n} of the strip's evenly spaced "
             "points")
    join = ", so " if flat and k else ", and "
    centred = (" The band widens enough there; it is centred on a flat line the truth leaves."
               if flat and k and ratio >= d["gap_ratio"] else "")
    return (f"- **Left of the data** ({strip}, not scored in section 6), on seed {seed}, {how} "
            f"(mean predictive std){flat}{join}{where}.{centred} One seed's picture, not a "
            "tested result.")


def training_time(rec):
    """How long the stored fits took to train, in words ('42 min', '35 s'): their ``wall_s``,
    with the CPU threads they ran on when recorded (' on 2 CPU threads')."""
    wall = rec.get("wall_s")
    if wall is None:
        return "an unrecorded time"
    m = rec.get("machine") or {}
    where = (f" on {m['threads']} CPU thread{'s' if m['threads'] != 1 else ''}"
             if m.get("device") == "cpu" and m.get("threads") else "")
    return (f"{wall:.0f} s" if wall < 90 else f"{wall / 60:.0f} min") + where
