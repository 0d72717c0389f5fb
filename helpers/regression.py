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
    ax.fill_between(xs, q["0.05"], q["0.95"], color="C0", alpha=0.15, lw=0, label="5–95 %")
    ax.fill_between(xs, q["0.25"], q["0.75"], color="C0", alpha=0.35, lw=0,
                    label="interquartile range")
    ax.plot(xs, q["0.5"], c="C3", lw=1.5, label="median")
    if true_mean is not None:
        ax.plot(xs, true_mean, c="k", lw=1.0, ls="--", label="truth: E[y | x]")
    ax.axvspan(0, 0.5, color="0.93", zorder=0, label="training range")
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


def plot_methods(curves, x_grid, x_train, y_train, true_mean=None):
    """Band plots of every method (``curves``: method -> ``grid_curve``) on shared axes (2 x 3
    panels, the legend in the 6th)."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 3, figsize=(14, 7), sharex=True, sharey=True,
                             constrained_layout=True)
    methods = list(curves)
    for ax, method in zip(axes.flat, methods):
        band_plot(ax, curves[method], x_grid, x_train, y_train, LABELS[method],
                  true_mean=true_mean)
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


def _claim_label(name):
    pair, score = name.split(" on ")
    a, b = pair.split(" < ")
    what = "NLL" if score.startswith("nll") else "coverage error"
    return f"{LABELS[a]} < {LABELS[b]}", what


def verdict_rows(verdicts_rec, family):
    """Return (header, rows) of one family of the stored verdicts: the claim, the score, the
    paired mean difference (BBB - rival) with its 95 % interval, Holm's p, the sign test's p,
    and the verdict."""
    header = ["claim", "score", "seeds", "mean difference", "95 % interval (unadjusted)",
              "p (Holm)", "p (sign test)", "verdict"]
    rows = []
    for name, res in verdicts_rec["metrics"][family].items():
        claim, what = _claim_label(name)
        tt = res["t_test"]
        ci = "—" if tt["ci"] is None else f"[{tt['ci'][0]:+.3f}, {tt['ci'][1]:+.3f}]"
        rows.append([claim, what, str(tt["n"]), f"{tt['mean_diff']:+.3f}", ci,
                     "—" if res["p_holm"] is None else f"{res['p_holm']:.3f}",
                     f"{res['sign_test']['p']:.3f}", res["verdict"]])
    return header, rows


def widening_lines(per_seed):
    """Return one line per method: on how many seeds its std ratio (away / near the data) is
    above 1 - descriptive, not one of the plan's tests."""
    out = []
    for m, rows in per_seed.items():
        above = sum(r["std_ratio"] > 1.0 + 1e-6 for r in rows)
        out.append(f"{LABELS[m]:<26} std ratio above 1 on {above} of {len(rows)} seeds")
    return out


def tally(verdicts_rec):
    """Return {family: {"holds": [claims], "reversed": [claims], "claims": n}} of the stored
    verdicts: what every summary of notebook 02's tests (notebook, README) counts."""
    return {family: {"holds": [c for c, r in claims.items() if r["verdict"] == "holds"],
                     "reversed": [c for c, r in claims.items() if r["verdict"] == "reversed"],
                     "claims": len(claims)}
            for family, claims in verdicts_rec["metrics"].items()}


def _sign_floor(n):
    """The smallest two-sided p of the exact sign test at n seeds (a win on every seed)."""
    from .stats import sign_test
    return sign_test([1.0] * n, [0.0] * n)["p"]


def _seeds(n):
    """'1 seed', '5 seeds'."""
    return f"{n} seed" + ("" if n == 1 else "s")


def verdict_counts(verdicts_rec):
    """Return one sentence per family: how many of its claims hold, are reversed, are not
    resolved (the words of helpers.stats); and the smallest p the exact sign test can reach at
    this many seeds (at five it cannot go below 0.05: the verdicts rest on the t-test)."""
    n = len(verdicts_rec["seed"])
    out = []
    for family, t in tally(verdicts_rec).items():
        held, rev = len(t["holds"]), len(t["reversed"])
        out.append(f"{family}: of {t['claims']} claims 'BBB better than a rival', {held} hold, "
                   f"{rev} are reversed (the rival is better), {t['claims'] - held - rev} are "
                   f"not resolved at {_seeds(n)}")
    out.append(f"(at {_seeds(n)} the exact sign test's smallest two-sided p is "
               f"{_sign_floor(n):.4f}; the verdicts use the paired t-test, Holm-adjusted, as the "
               "plan declares)")
    return out


def load_verdicts():
    """Return the stored verdicts record (results/02_regression_uncertainty/verdicts.json) or
    None when it is not there."""
    import json

    from .utils import results_dir
    path = results_dir() / NB / f"{VERDICTS}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _claim_words(names, swap=False):
    """The claims ``names`` in words; ``swap``: reversed claims, the rival named first."""
    out = []
    for c in names:
        claim, what = _claim_label(c)
        if swap:
            claim = " < ".join(reversed(claim.split(" < ")))
        out.append(f"{claim} ({what})")
    return "; ".join(out) or "none"


def what_it_shows(verdicts_rec):
    """Return markdown bullets of the declared tests' outcome, read from the verdicts record:
    per family the claims that hold, those reversed, how many are not resolved, and why a claim
    whose unadjusted interval excludes 0 can still be "not resolved"."""
    n = len(verdicts_rec["seed"])
    out = []
    for family, t in tally(verdicts_rec).items():
        rest = t["claims"] - len(t["holds"]) - len(t["reversed"])
        out.append(f"- **{family.capitalize()}**, BBB better (holds): "
                   f"{_claim_words(t['holds'])}. The rival better (reversed): "
                   f"{_claim_words(t['reversed'], swap=True)}. Not resolved at {_seeds(n)}: "
                   f"{rest} of {t['claims']}.")
    fam = max(t["claims"] for t in tally(verdicts_rec).values())
    alpha = next(iter(next(iter(verdicts_rec["metrics"].values())).values()))["alpha"]
    out.append(f"- Why an interval that excludes 0 can still read \"not resolved\": the verdict "
               f"uses Holm's adjustment over the {fam} claims of a family, so the smallest raw p "
               f"must be below {alpha / fam:.4f}; and with {n} seeds even a win on every seed "
               f"gives the exact sign test p = {_sign_floor(n):.4f}.")
    return "\n".join(out)


# ---- notebook 02's readings of its figures and tables, rendered from the stored numbers -----
# Each returns Markdown whose wording follows the numbers it is given (no expected outcome is
# written down here). Thresholds below are reading conventions, not results.

TIE = 1e-6           # a std ratio within this of 1 is "the same width" (as ``widening_lines``)
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


def _seeds(n):
    return "its one seed" if n == 1 else f"every one of the {n} seeds"


def _seed_row(per_seed, method, seed):
    """The per-seed score dict of ``method`` on ``seed``."""
    return next(r for r in per_seed[method] if r["seed"] == seed)


def _x_range(region):
    lo, hi = REGIONS[region]
    return f"$x\\in[{lo:g}, {hi:g}]$"


def _list_words(items):
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def figure5_text(per_seed, seed, scatter, bbb="bbb_gaussian", rival="mle"):
    """Return section 3's reading of Figure 5 on ``seed`` (Markdown): inside the training range,
    how wide each band is against the data's root-mean-square ``scatter`` and how close its mean
    is to fresh draws (RMSE); away from the data, whether BBB's band opens up (its std ratio) and
    whether the standard network's keeps its width. ``per_seed``: fits.json's metrics.per_seed."""
    def inside(m):
        r = _seed_row(per_seed, m, seed)
        w = r["std_in"] / scatter
        width = ("about as wide as that scatter" if 1 / WIDTH_NEAR <= w <= WIDTH_NEAR else
                 f"{w:.1f} times as wide as that scatter" if w > 1 else
                 f"narrower than that scatter ({w:.2f} times it)")
        follows = ("follows the data" if r["rmse_in"] <= WIDTH_NEAR * scatter else
                   "strays from the data")
        return (f"{NAMES[m]} {follows} with a band {width} (mean predictive std "
                f"{r['std_in']:.3f}, RMSE on fresh draws {r['rmse_in']:.4f})")
    b, s = _seed_row(per_seed, bbb, seed), _seed_row(per_seed, rival, seed)
    out = [f"On seed {seed}, inside the training range ({_x_range('in')}), against the data's "
           f"root-mean-square scatter of {scatter:.3f} (section 1): {inside(bbb)}; "
           f"{inside(rival)}."]
    if b["std_ratio"] > 1 + TIE:
        out.append(f"Beyond it, the band of {NAMES[bbb]} opens up: its mean predictive std away "
                   f"from the data ({_x_range('out')}) is {b['std_out']:.3f}, "
                   f"{_ratio(b['std_ratio'])} times that inside; the weight samples disagree "
                   "where no data pin them down.")
    else:
        out.append(f"Beyond it, the band of {NAMES[bbb]} does not open up on this seed: its mean "
                   f"predictive std away from the data ({_x_range('out')}) is "
                   f"{b['std_out']:.3f}, {_ratio(b['std_ratio'])} times that inside.")
    if abs(s["std_ratio"] - 1) <= TIE:
        out.append(f"The band of {NAMES[rival]} keeps the same width everywhere (mean std "
                   f"{s['std_in']:.3f} on both ranges), since its only spread is the constant "
                   "noise $\\sigma$: it extrapolates its single curve with the confidence it has "
                   "inside the data.")
    else:
        out.append(f"The band of {NAMES[rival]} changes width away from the data (std ratio "
                   f"{_ratio(s['std_ratio'])}).")
    return " ".join(out)


def bands_text(per_seed, seed):
    """Return section 4's reading of the bands of every method on ``seed`` (Markdown): which
    methods' bands open up beyond the data and by how much (the std ratio, away / near the data,
    largest first), and whether the standard network's keeps a constant width."""
    ratio = {m: _seed_row(per_seed, m, seed)["std_ratio"] for m in per_seed}
    averaging = sorted((m for m in ratio if m != "mle"), key=lambda m: -ratio[m])
    opens = [m for m in averaging if ratio[m] > 1 + TIE]
    shut = [m for m in averaging if m not in opens]

    def listed(ms):
        return _list_words([f"{_ratio(ratio[m])} for {NAMES[m]}" for m in ms])
    distinct = len({_ratio(ratio[m]) for m in opens}) > 1
    if not shut:
        head = (f"On seed {seed} the bands of every method that averages over networks open up "
                f"beyond the data{' by different amounts' if distinct else ''}")
    elif not opens:
        head = f"On seed {seed} none of the methods that average over networks opens up its band"
    else:
        head = (f"On seed {seed} the bands of {_list_words(NAMES[m] for m in opens)} open up "
                f"beyond the data, those of {_list_words(NAMES[m] for m in shut)} do not")
    text = (head + " — std ratio, the mean predictive std away from the data over that in the "
            f"training range: {listed(averaging)}")
    if "mle" in ratio:
        same = abs(ratio["mle"] - 1) <= TIE
        text += (f"; that of the standard network {'keeps a constant' if same else 'changes'} "
                 f"width ({_ratio(ratio['mle'])})")
    return text + "."


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
    ``curves``, on the first seed ``seed``; Markdown): in the training range and away from the
    data (``REGIONS``), on how many grid points the epistemic variance lies below the aleatoric
    sigma^2, by how much, and what share of the total variance it makes up."""
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
        text = (f"{REGION_WORDS[region]} ({_x_range(region)}) the epistemic variance lies {how} "
                f"and makes up {_share_words(share_mean)} the total ({100 * share_mean:.0f} % on "
                f"average, {100 * share.min().item():.0f}–{100 * share.max().item():.0f} % over "
                "the points)")
        if share_mean <= 0.2:
            text += ", so the total is close to the learned noise alone"
        out.append(text)
    return (f"On seed {seed}, for {NAMES[method]}: {out[0]}. {out[1][0].upper()}{out[1][1:]}. "
            "One seed: the curves of the other seeds are not stored.")


def coverage_in_text(summary):
    """Return section 6's reading of the central 50 % interval in the training range
    (Markdown): which methods cover more than 50 % with it, on average and on how many seeds,
    beside what their central 90 % interval covers."""
    c50 = {m: s["coverage50_in"] for m, s in summary.items()}
    c90 = [s["coverage90_in"]["mean"] for s in summary.values()]
    n = len(next(iter(c50.values()))["per_seed"])
    over = [m for m in c50 if c50[m]["mean"] > 0.5]
    low = {m: sum(v <= 0.5 for v in c50[m]["per_seed"]) for m in c50}
    means = [e["mean"] for e in c50.values()]
    lowest = min(c50, key=lambda m: min(c50[m]["per_seed"]))
    if len(over) == len(c50) and not any(low.values()):
        text = ("Inside the training range every method covers more than 50 % with its central "
                f"50 % interval, on {_seeds(n)}")
    else:
        rest = [m for m in c50 if m not in over]
        text = ("Inside the training range the central 50 % interval covers more than 50 % on "
                f"average for {_list_words(NAMES[m] for m in over) if over else 'no method'}"
                + (f", at most 50 % for {_list_words(NAMES[m] for m in rest)}" if rest else "")
                + "; per seed, at most 50 % for "
                + _list_words(f"{NAMES[m]} on {k} of {n}" for m, k in low.items() if k))
    text += (f" (means {min(means):.3f}–{max(means):.3f}; the lowest seed, "
             f"{min(c50[lowest]['per_seed']):.3f}, is {NAMES[lowest]}'s), while the central 90 % "
             f"interval covers {min(c90):.3f}–{max(c90):.3f} on average")
    if over:
        text += (": the noise on $y$ is not Gaussian and varies with $x$ (section 1), while every "
                 "model learns one Gaussian $\\sigma$")
    return text + "."


def coverage_spread_text(summary):
    """Return the reading of the per-seed coverages (Markdown): where a mean coverage lies
    within ``COVERAGE_NEAR`` of its target while seeds miss it by more than that on both sides
    (too wide and too narrow), or that no mean in the tables does."""
    found = []
    for m, s in summary.items():
        for region in ("in", "out"):
            for level in INTERVALS:
                key, target = f"coverage{round(100 * level)}_{region}", level
                e = s[key]
                wide = sum(v > target + COVERAGE_NEAR for v in e["per_seed"])
                narrow = sum(v < target - COVERAGE_NEAR for v in e["per_seed"])
                if abs(e["mean"] - target) <= COVERAGE_NEAR and wide and narrow:
                    found.append(
                        f"{NAMES[m]} {REGION_WORDS[region]}: the central "
                        f"{round(100 * level)} % interval covers {e['mean']:.3f} on average "
                        f"(target {target:.2f}), yet per seed "
                        + ", ".join(f"{v:.3f}" for v in e["per_seed"])
                        + f": {wide} seed{'s' if wide != 1 else ''} too wide, {narrow} too "
                        "narrow")
    n = len(next(iter(summary.values()))["std_ratio"]["per_seed"])
    if not found:
        return (f"In these tables ({n} seed{'s' if n != 1 else ''}) no mean coverage within "
                f"{COVERAGE_NEAR:.2f} of its target hides seeds that miss it by more than that "
                "on both sides.")
    return (f"Where a mean coverage within {COVERAGE_NEAR:.2f} of its target hides seeds that "
            f"miss it by more than that on both sides ({n} seeds): " + "; ".join(found) + ".")


def takeaways_text(per_seed, curves, x_grid, seed, method="bbb_gaussian"):
    """Return the measured takeaways of notebook 02 (Markdown bullets): how far each method's
    band widens away from the data over the seeds (std ratio), and which part of one method's
    predictive variance (``method``'s ``grid_curve`` in ``curves``, on ``seed``) dominates in
    the training range and away from it."""
    n = len(next(iter(per_seed.values())))
    mean = {m: sum(r["std_ratio"] for r in rows) / len(rows) for m, rows in per_seed.items()}
    wide = {m: sum(r["std_ratio"] > 1 + TIE for r in rows) for m, rows in per_seed.items()}
    averaging = sorted((m for m in per_seed if m != "mle"), key=lambda m: -mean[m])
    if all(wide[m] == n for m in averaging):
        how = f"every method that averages over networks widens its band on {_seeds(n)}"
    else:
        groups = {}
        for m in averaging:
            groups.setdefault(wide[m], []).append(NAMES[m])
        how = "the methods that average over networks widen their bands " + ", ".join(
            f"on {k} of {n} seeds for {_list_words(ms)}"
            for k, ms in sorted(groups.items(), reverse=True))
    far = ("how far depends on the method and the prior"
           if len({_ratio(mean[m]) for m in averaging}) > 1 else "all by about as much")
    first = (f"- Away from the data {how} (std ratio above 1); {far}: mean std ratio "
             + _list_words(f"{_ratio(mean[m])} for {NAMES[m]}" for m in averaging))
    if "mle" in mean:
        first += f"; the standard network's band cannot widen (std ratio {_ratio(mean['mle'])})"
    share = {r: _variance_shares(curves[method], x_grid, r)[2].mean().item()
             for r in ("in", "out")}
    inside = ("the learned noise $\\sigma$ (aleatoric) dominates" if share["in"] < 0.5 else
              "the spread over weights (epistemic) dominates already")
    outside = ("the spread over weights (epistemic) takes over" if share["out"] > 0.5 else
               "the learned noise (aleatoric) still dominates")
    second = (f"- For {NAMES[method]} on seed {seed} (section 5; the one seed whose curves are "
              f"stored), {inside} inside the training range (epistemic share of the total variance "
              f"{100 * share['in']:.0f} % on average) and {outside} away from the data "
              f"({100 * share['out']:.0f} %).")
    return first + ".\n" + second
