# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (bbb)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 02 — Regression: uncertainty grows away from the data (Figure 5)
#
# Section 5.2 of the paper fits a 1-D curve from data in $[0, 0.5]$ and predicts over
# $[-0.2, 1.2]$. A network fit by maximum likelihood commits to one curve everywhere; Bayes by
# Backprop averages over weights, so its predictive distribution widens where there is no data.
# This notebook reproduces the figure, compares BBB with MC dropout and a deep ensemble, and
# separates the two kinds of uncertainty.
#
# Everything heavy lives in `helpers.regression`; this notebook calls it and shows the results.

# %% [markdown]
# ## Parameters
# `PROFILE` picks `smoke` / `default` / `paper` settings from `helpers.profiles`; settings left at
# `None` take the profile's value. `NOISE_STD` is the reading of the paper's $\mathcal N(0, 0.02)$
# (see below).

# %% tags=["parameters"]
PROFILE = "default"
SEED = 0
DEVICE = "cpu"        # tiny models: the CPU is the fastest device here
NOISE_STD = 0.02      # the paper's N(0, 0.02) read as a standard deviation; sqrt(0.02) reads it as a variance
N_TRAIN = None
STEPS = None
SEEDS = None          # seeds for the robustness check of the std ratio

# %% [markdown]
# Setup: settings, seeding, plotting style.

# %%
import math
import time

import matplotlib.pyplot as plt
import torch

import helpers as H
from helpers import regression as R

cfg = H.get_profile("02_regression_uncertainty", PROFILE, n_train=N_TRAIN, steps=STEPS,
                    seeds=SEEDS)
device = H.get_device(DEVICE)
H.seed_everything(SEED)
H.use_style()
NB = "02_regression_uncertainty"
t_start = time.perf_counter()
print(cfg)

# %% [markdown]
# ## 1. The data
#
# $$y = x + 0.3\sin\big(2\pi(x+\epsilon)\big) + 0.3\sin\big(4\pi(x+\epsilon)\big) + \epsilon,
# \qquad \epsilon \sim \mathcal N(0, 0.02).$$
# The paper does not say whether 0.02 is a variance or a standard deviation. We read it as the
# **standard deviation** ($\epsilon \sim \mathcal N(0, 0.02^2)$): the training points of the
# paper's Figure 5 form a thin band, while a variance of 0.02 ($\sigma \approx 0.14$, phase noise
# of $4\pi \cdot 0.14 \approx 1.8$ rad inside the second sine) gives a cloud in which the curve is
# barely visible (right panel). `NOISE_STD` switches the reading.
# Because $\epsilon$ also enters the sines, the noise on $y$ is not Gaussian and not constant in
# $x$; every model below learns one observation-noise $\sigma$ anyway (a conditional Gaussian
# likelihood, as in the paper).

# %%
gen = torch.Generator().manual_seed(SEED)
x_train, y_train = R.make_data(cfg.n_train, NOISE_STD, generator=gen)
x_test, y_test = R.make_data(cfg.n_test, NOISE_STD, generator=gen)        # fresh, in-domain
x_grid = torch.linspace(-0.2, 1.2, 400).unsqueeze(1)
truth = R.noiseless_mean(x_grid, NOISE_STD, generator=gen)

fig, axes = plt.subplots(1, 2, figsize=(11, 3.4), sharey=True)
for ax, std, title in ((axes[0], NOISE_STD, f"noise std {NOISE_STD:g} (used here)"),
                       (axes[1], math.sqrt(0.02), "other reading: variance 0.02")):
    xs, ys = R.make_data(cfg.n_train, std, generator=torch.Generator().manual_seed(1))
    ax.scatter(xs, ys, s=6, c="k", marker="x", lw=0.6, label="training data")
    ax.plot(x_grid, R.noiseless_mean(x_grid, std), c="C3", label="E[y | x]")
    ax.axvspan(0, 0.5, color="0.9", zorder=0)
    ax.set_title(title)
    ax.set_xlabel("x")
axes[0].legend(loc="upper left")
axes[0].set_ylim(-0.6, 1.6)
H.savefig(fig, NB, "data")
plt.show()

# %% [markdown]
# ## 2. Figure 5: Bayes by Backprop vs a standard network
#
# Both are 1-100-100-1 ReLU networks trained full-batch on the same points. BBB minimises the
# variational free energy with the full KL (one minibatch = the whole data set, so the KL weight is
# 1) and a $\mathcal N(0, 1)$ prior; the standard network minimises the negative log-likelihood.
# The predictive distribution of BBB is $p(y\mid x) = \mathbb E_{q(\mathbf w)}[\mathcal N(y; f_{\mathbf w}(x), \sigma^2)]$,
# sampled with weight draws; we plot its median, interquartile range (as the paper) and the
# 5–95 % band.

# %%
models = {}
t0 = time.perf_counter()
models["bbb_gaussian"] = R.fit_method("bbb_gaussian", x_train, y_train, cfg.steps, seed=SEED)
models["mle"] = R.fit_method("mle", x_train, y_train, cfg.steps, seed=SEED)
print(f"trained BBB and the standard network in {time.perf_counter() - t0:.1f} s")


def band_plot(ax, method, model, title):
    """Median, interquartile range and 5-95 % band of the predictive distribution."""
    pred = R.method_predictive(method, model, x_grid, cfg.pred_samples)
    q05, q25, q50, q75, q95 = pred.quantiles([0.05, 0.25, 0.5, 0.75, 0.95],
                                             generator=torch.Generator().manual_seed(0))
    xs = x_grid.squeeze(1)
    ax.fill_between(xs, q05, q95, color="C0", alpha=0.15, lw=0, label="5–95 %")
    ax.fill_between(xs, q25, q75, color="C0", alpha=0.35, lw=0, label="interquartile range")
    ax.plot(xs, q50, c="C3", lw=1.5, label="median")
    ax.scatter(x_train, y_train, s=5, c="k", marker="x", lw=0.5, label="training data")
    ax.set_ylim(-0.8, 2.0)
    ax.set_xlim(-0.2, 1.2)
    ax.set_title(title)
    ax.set_xlabel("x")
    return pred


fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), sharey=True)
band_plot(axes[0], "bbb_gaussian", models["bbb_gaussian"], "Bayes by Backprop")
band_plot(axes[1], "mle", models["mle"], "standard network (maximum likelihood)")
axes[0].legend(loc="upper left", fontsize=8)
H.savefig(fig, NB, "figure5")
plt.show()

# %% [markdown]
# ## 3. Other ways to get uncertainty, on the same data and axes
#
# - **BBB, Gaussian prior** $\mathcal N(0,1)$ (the panel above) and **BBB, scale-mixture prior**
#   ($\pi=\frac12$, $\sigma_1=1$, $\sigma_2=e^{-6}$, the MNIST prior of notebook 01);
# - **MC dropout** (dropout 0.1 kept on at test time, weight decay $10^{-4}$);
# - **deep ensemble**: `ensemble_size` standard networks from different seeds, each with its own
#   learned noise;
# - the **standard network** again, for reference.

# %%
t0 = time.perf_counter()
for method in ("bbb_mixture", "mc_dropout", "deep_ensemble"):
    models[method] = R.fit_method(method, x_train, y_train, cfg.steps, seed=SEED,
                                  ensemble_size=cfg.ensemble_size)
print(f"trained the other methods in {time.perf_counter() - t0:.1f} s")
labels = {"bbb_gaussian": "BBB, Gaussian prior", "bbb_mixture": "BBB, scale-mixture prior",
          "mc_dropout": "MC dropout", "deep_ensemble": f"deep ensemble ({cfg.ensemble_size})",
          "mle": "standard network"}
fig, axes = plt.subplots(len(labels), 1, figsize=(7, 2.4 * len(labels)), sharex=True)
for ax, (method, label) in zip(axes, labels.items()):
    band_plot(ax, method, models[method], label)
axes[0].legend(loc="upper left", fontsize=7, ncol=2)
H.savefig(fig, NB, "methods")
plt.show()

# %% [markdown]
# ## 4. Aleatoric and epistemic uncertainty
#
# Every model learns an observation-noise standard deviation $\sigma$: the **aleatoric** part, noise
# in the data that more data would not remove. The spread of the function $f_{\mathbf w}(x)$ across
# weight samples is the **epistemic** part, ignorance about the weights that more data would remove.
# By the law of total variance
# $$\mathrm{Var}[y\mid x] = \underbrace{\mathrm{Var}_{q(\mathbf w)}[f_{\mathbf w}(x)]}_{\text{epistemic}} + \underbrace{\sigma^2}_{\text{aleatoric}}.$$
# Inside the training range the aleatoric part dominates; outside, the epistemic part takes over.

# %%
pred = R.method_predictive("bbb_gaussian", models["bbb_gaussian"], x_grid, cfg.pred_samples)
xs = x_grid.squeeze(1)
fig, ax = plt.subplots(figsize=(7, 3.2))
ax.stackplot(xs, pred.aleatoric_var, pred.epistemic_var, labels=["aleatoric $\\sigma^2$",
                                                                  "epistemic Var$_q[f_w(x)]$"],
             colors=["C1", "C0"], alpha=0.7)
ax.axvspan(0, 0.5, color="0.9", zorder=0, label="training range")
ax.set_yscale("log")
ax.set_xlabel("x")
ax.set_ylabel("predictive variance")
ax.legend(loc="upper left", fontsize=8)
H.savefig(fig, NB, "variance-decomposition")
plt.show()
print(f"learned observation noise sigma (BBB): {models['bbb_gaussian'].sigma.item():.4f}")

# %% [markdown]
# ## 5. Numbers
#
# For each method, on fresh in-domain test points ($x \in [0, 0.5]$):
# `std_ratio` = mean predictive std on $x \in [0.7, 1.2]$ / mean predictive std on $x \in [0, 0.5]$
# (how much uncertainty grows away from the data), `coverage90_in` = fraction of test points inside
# the central 90 % predictive interval (0.90 is calibrated), `nll_in` = Gaussian negative
# log-likelihood (moment-matched predictive), `rmse_in`.

# %%
# NBVAL_CHECK_OUTPUT
metrics = {}
for method in labels:
    torch.manual_seed(SEED)
    p_in = R.method_predictive(method, models[method], x_test, cfg.pred_samples)
    p_grid = R.method_predictive(method, models[method], x_grid, cfg.pred_samples)
    metrics[method] = R.scores(p_in, x_test, y_test, x_grid=x_grid, pred_grid=p_grid)
print(f"{'method':28s} {'std_ratio':>9s} {'cover90':>8s} {'nll':>8s} {'rmse':>7s}")
for method, m in metrics.items():
    print(f"{labels[method]:28s} {m['std_ratio']:9.2f} {m['coverage90_in']:8.3f} "
          f"{m['nll_in']:8.3f} {m['rmse_in']:7.4f}")

# %% [markdown]
# ## 6. Does it hold for other seeds?
#
# The headline number, BBB's `std_ratio`, retrained from `len(seeds)` seeds (new data draw, new
# initialisation, new noise) — mean and spread.

# %%
ratios = []
t0 = time.perf_counter()
for s in cfg.seeds:
    g = torch.Generator().manual_seed(1000 + s)
    xs_, ys_ = R.make_data(cfg.n_train, NOISE_STD, generator=g)
    m = R.fit_method("bbb_gaussian", xs_, ys_, cfg.steps, seed=s)
    torch.manual_seed(s)
    p_g = R.method_predictive("bbb_gaussian", m, x_grid, cfg.pred_samples)
    xt_, yt_ = R.make_data(cfg.n_test, NOISE_STD, generator=g)
    p_t = R.method_predictive("bbb_gaussian", m, xt_, cfg.pred_samples)
    ratios.append(R.scores(p_t, xt_, yt_, x_grid=x_grid, pred_grid=p_g)["std_ratio"])
ratios_t = torch.tensor(ratios)
spread = ratios_t.std().item() if len(ratios) > 1 else 0.0
print(f"BBB std_ratio over seeds {list(cfg.seeds)}: " + ", ".join(f"{r:.2f}" for r in ratios)
      + f"  -> mean {ratios_t.mean().item():.2f} ± {spread:.2f} (sd)"
      + f"  [{time.perf_counter() - t0:.0f} s]")

# %% [markdown]
# ## 7. Results files
#
# One JSON per method in `results/02_regression_uncertainty/`, with the profile, seed, machine
# and wall time.

# %%
wall = time.perf_counter() - t_start
for method, m in metrics.items():
    extra = {}
    if method == "bbb_gaussian":
        extra = {"std_ratio_seeds": ratios, "std_ratio_seed_mean": ratios_t.mean().item(),
                 "std_ratio_seed_sd": spread}
    H.save_results(NB, method,
                   config={"method": method, "noise_std": NOISE_STD, "n_train": cfg.n_train,
                           "steps": cfg.steps, "hidden": [100, 100],
                           "pred_samples": cfg.pred_samples},
                   metrics={**m, **extra}, profile=PROFILE, seed=SEED, device=device, wall_s=wall)
print(f"notebook wall time {wall:.0f} s")
