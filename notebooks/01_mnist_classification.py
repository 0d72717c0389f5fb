# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (bbb)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 — MNIST classification: Table 1, Figure 2 and Figure 3
#
# Section 5.1 of the paper trains 784-H-H-10 ReLU networks on MNIST (pixels divided by 126,
# minibatches of 128, 50,000 training images, 10,000 for validation, 10,000 for test) with four
# methods, and reports the test error (Table 1):
#
# | method | 400 | 800 | 1200 |
# |---|---|---|---|
# | SGD, no regularisation | 1.83% | 1.84% | 1.88% |
# | SGD, dropout | 1.51% | 1.33% | 1.36% |
# | BBB, Gaussian prior | 1.82% | 1.99% | 2.04% |
# | BBB, scale-mixture prior | 1.36% | 1.34% | 1.32% |
#
# The paper does not give the initialisation, the optimiser variant or the number of epochs behind
# each entry. This notebook states what it uses, chooses the prior on the validation set, and puts
# our numbers beside the paper's. The `default` profile covers the 400-unit row on a 2-core CPU;
# `paper` runs all 12 rows (hours; a GPU is recommended) with checkpoints, so an interrupted run
# resumes where it stopped.

# %% [markdown]
# ## Parameters
# Settings left at `None` take the profile's value (`helpers/profiles.py`). `HIDDEN_SIZES` picks the
# rows of Table 1, `EPOCHS` the training length of the four final runs.

# %% tags=["parameters"]
PROFILE = "default"
SEED = 0
DEVICE = None           # None: cuda > mps > cpu
EPOCHS = None
HIDDEN_SIZES = None
LR = 1e-3               # Adam, for all four methods
LR_DECAY = 0.955        # learning rate x LR_DECAY after every epoch
RHO_INIT = -6.0         # initial rho of every weight (sigma about 0.0025)
DROPOUT = 0.5

# %% [markdown]
# Setup: profile, device, seeding, data. The data live on the device as whole tensors.

# %%
import math
import time
from dataclasses import replace

import matplotlib.pyplot as plt
import torch

import helpers as H
from helpers.classification import (METHOD_LABELS, PAPER_TABLE1, RunConfig, run, run_grid,
                                    vary)

cfg = H.get_profile("01_mnist_classification", PROFILE, epochs=EPOCHS, hidden_sizes=HIDDEN_SIZES)
device = H.get_device(DEVICE)
H.seed_everything(SEED)
H.use_style()
NB = "01_mnist_classification"
t_start = time.perf_counter()
data = H.load_mnist(device=device, scale="paper", n_train=cfg.n_train, n_test=cfg.n_eval)
print(cfg)
print(f"device {device}; train {tuple(data.x_train.shape)}, val {tuple(data.x_val.shape)}, "
      f"test {tuple(data.x_test.shape)}; pixels in [0, {data.x_train.max().item():.3f}]")

# %% [markdown]
# ## 1. The recipe, and why
#
# All four methods share one optimiser: Adam with learning rate `LR`, multiplied by `LR_DECAY`
# after every epoch, minibatches of 128, and initial weights like `nn.Linear`
# ($\mathcal U(-1/\sqrt{\text{fan-in}}, 1/\sqrt{\text{fan-in}})$); for BBB the means $\mu$ start
# either at $\mathcal U(-0.1, 0.1)$ or at the weights of the trained SGD network (a warm start;
# chosen on validation below), with $\rho_0 = $ `RHO_INIT`. `nn.Linear`'s narrower start for
# $\mu$ was worse in the recipe table below (1.70 % against 1.59 %) and in three of four pairs of
# an earlier 12-configuration run of this sweep (10 epochs, validation error, `nn.Linear` against
# $\mathcal U(-0.1, 0.1)$: $1/M$ weights $\pi=\frac14$ 2.03 / 1.95 %, $\pi=\frac12$
# 2.01 / 1.95 %; $\pi_i$ weights $\pi=\frac14$ 2.02 / 1.99 %, $\pi=\frac12$ 2.23 / 2.35 %; seed 0);
# the `default` sweep leaves it out to stay within 30 minutes, the `paper` sweep includes it. "SGD" in the paper's table means a network trained by backpropagation
# without weight uncertainty; using the same optimiser for all four isolates the effect of the
# method. BBB uses one Monte-Carlo sample per minibatch. It predicts either with the
# posterior-mean weights $\mu$ or with the Bayesian predictive, the average of `eval_samples`
# weight samples, whichever has the lower validation error (section 2).
#
# What we measured while choosing (2×400, scale mixture $\pi=\frac12$, $\sigma_1 = 1$,
# $\sigma_2 = e^{-6}$, seed 0, on this 2-core CPU; test error of the posterior mean / of the average
# of 10 samples):
#
# | recipe (50 epochs unless said) | mean | 10 samples |
# |---|---|---|
# | Adam $10^{-3}$ constant, uniform $1/M$ | 1.74 % | 1.85 % |
# | Adam $10^{-3}$ × 0.955 per epoch, uniform $1/M$ | 1.70 % | 1.80 % |
# | same, $\mu_0 \sim U(-0.1, 0.1)$ | 1.59 % | 1.71 % |
# | same, $\mu_0 \sim U(-0.1, 0.1)$, 2 MC samples per step | 1.58 % | 1.73 % |
# | same, $\mu_0 \sim U(-0.1, 0.1)$, $\sigma_1 = e^{-1}$ | 1.61 % | 1.67 % |
# | plain SGD, learning rate 0.1, uniform $1/M$ (20 epochs) | 2.2 % | — |
# | Adam × 0.955, $\mu_0 \sim U(-0.1, 0.1)$, learning rate of $\rho$ × 0.1 | 1.63 % | 1.66 % |
# | Adam × 0.955, $\mu_0 \sim U(-0.1, 0.1)$, learning rate of $\rho$ × 0.01 ($\sigma$ stays near $e^{-6}$) | 1.61 % | 1.59 % |
# | Adam × 0.955, $\mu_0 \sim U(-0.1, 0.1)$, KL × 0.1 (a tempered posterior, not the paper's objective) | 1.56 % | 1.61 % |
# | Adam × 0.955, $\mu_0 \sim U(-0.1, 0.1)$, KL × 0.01 | 1.62 % | 1.66 % |
# | pixels / 255 instead of / 126, Adam $10^{-3}$ constant, uniform $1/M$ | 1.89 % | 1.95 % |
# | pixels / 255, Adam $10^{-3}$ × 0.955 per epoch, $\mu_0 \sim U(-0.1, 0.1)$ | 1.60 % | 1.70 % |
# | Adam × 0.955, $\mu_0 \sim U(-0.1, 0.1)$, $\rho_0 = -4$ ($\sigma_0 \approx 0.018$) | 1.63 % | 1.74 % |
# | Adam × 0.955, $\mu_0 \sim U(-0.1, 0.1)$, $\rho_0 = -3$ ($\sigma_0 \approx 0.049$) | 1.82 % | 2.07 % |
# | **warm start**: $\mu_0$ = the weights of the SGD network of section 3 (60 epochs), then Adam × 0.955, uniform $1/M$, $\pi = \frac14$ | **1.28 %** | **1.40 %** |
#
# A larger starting $\sigma$ does not help either: with $\rho_0 = -3$ the network never fits
# the training set (training NLL 0.10 per example at epoch 50, against 0.05 for $\rho_0=-4$ and
# 0.0005 for $\rho_0=-6$). None of these reaches 1.45 %: slowing $\rho$ (nearly a deterministic network under the prior's
# penalty on $\mu$), tempering the KL, or the /255 scaling all land between 1.55 % and 1.95 % at
# 50 epochs (single runs, seed 0, one CPU thread each; the $\rho$ and KL rows come from a scratch
# script that patched the optimiser's parameter groups or the KL weights, the /255 rows use
# `load_mnist(scale="unit")`).
#
# With the uniform KL weights the KL term dominates the objective (≈9 nats per example against a
# training NLL of ≈0.05) and keeps pulling the posterior towards the prior; with the
# $\pi_i = 2^{M-i}/(2^M-1)$ weights and Adam the KL acts on only the first few minibatches of each
# epoch and the network overfits (training NLL 0.0005, 1.8–2.0 %). A decaying learning rate settles
# the posterior instead of letting it wander, and a wider initialisation of the means than
# `nn.Linear`'s helps.
#
# What does help is where the means start. Starting them at the weights of the trained
# deterministic network (the "SGD" row of Table 1; the paper leaves the initialisation open) gave
# 1.28 % / 1.40 % test error after 50 epochs in the scratch run of the last table row (1/M
# weights, $\pi=\frac14$; training KL ≈ 6.2 nats and NLL ≈ 0.02 per example at epoch 50). The
# objective is unchanged (the paper's eq. 8 with the Monte-Carlo KL); only the starting point
# differs, and it costs the deterministic network's training first (≈ 80 s here, a network
# Table 1 trains anyway). The sweep below checks the prior's settings, the initialisation
# (including this warm start, `init_from="sgd"`) and the two weightings on the validation set,
# and the final runs use the best of them; the sweep table shows
# the training $-$ELBO per example at its last epoch beside the validation error.

# %% [markdown]
# ## 2. Validation sweep over part of the paper's grid
#
# The paper's grid: $\pi \in \{\frac14, \frac12, \frac34\}$, $-\log\sigma_1 \in \{0,1,2\}$,
# $-\log\sigma_2 \in \{6,7,8\}$, MC samples $\in \{1,2,5,10\}$, learning rate
# $\in\{10^{-3},10^{-4},10^{-5}\}$, KL weights $1/M$ or $\pi_i$. The profile runs the part it can
# afford (`paper` runs the prior, sample and weighting dimensions in full), each configuration for
# `sweep_epochs` epochs — a warm-started one for `sweep_warm_epochs` (the final runs' length in
# `default`: its deterministic start already trains that long, and a warm start with the $1/M$
# weights needs the time for the KL term to move the posterior) — and picks the lowest
# validation error.
#
# The predictor is chosen on validation too, per configuration: the posterior-mean weights
# (one deterministic pass) or the average of `eval_samples` samples,
# $\frac1S\sum_s P(y\mid x, \mathbf w^{(s)})$ (a tie keeps the average;
# `helpers.classification.choose_predictor`). Which one generalises better depends on how wide the
# posterior came out: with the $1/M$ weights some $\sigma$ grow to 0.1–0.3 and single samples
# get noisy, with the $\pi_i$ weights most $\sigma$ stay tiny and the two predictors agree.
# *Disclosure:* this rule was added after an earlier run of this notebook had shown both
# predictors' test errors (the posterior mean tested better for the $1/M$ networks); the
# validation set alone makes every choice, and the test error of every configuration is printed
# in the last column for the record only. `run_grid` stores every finished
# configuration in `results/01_mnist_classification/sweep/` and each unfinished one resumes from
# its checkpoint, so an interrupted sweep continues where it stopped.

# %%
base = RunConfig(method="bbb_mixture", H=cfg.sweep_H, epochs=cfg.sweep_epochs, lr=LR,
                 lr_decay=LR_DECAY, rho_init=RHO_INIT, dropout=DROPOUT, seed=SEED,
                 init_epochs=cfg.epochs)
grid = [replace(c, epochs=cfg.sweep_warm_epochs) if c.init_from else c
        for c in vary(base, **cfg.sweep)]
t0 = time.perf_counter()
sweep = run_grid(grid, data, notebook=NB, eval_samples=cfg.eval_samples)
sweep_wall = time.perf_counter() - t0
sweep.sort(key=lambda r: r["metrics"]["val_error"])
print(f"{len(sweep)} configurations, {sweep_wall:.0f} s (0 s when read back from an earlier run)")


def mu0_label(c):
    """How the means of a sweep configuration started."""
    if c.get("init_from"):
        return f"{c['init_from']} net"
    return "nn.Linear" if c.get("mu_init") is None else f"U(±{c['mu_init']:g})"


def chosen_settings(c):
    """The settings of a sweep configuration that the final runs take over."""
    out = {k: c.get(k) for k in ("pi", "neg_log_sigma1", "neg_log_sigma2", "samples",
                                 "kl_weighting", "mu_init", "init_from")}
    out["init_epochs"] = c.get("init_epochs") or cfg.epochs
    return out


print(f"{'pi':>5s} {'-log s1':>7s} {'-log s2':>7s} {'samples':>7s} {'KL weights':>10s} "
      f"{'mu start':>9s} {'epochs':>6s} {'-ELBO/ex':>9s} {'val: mean':>9s} {'average':>8s} "
      f"{'predictor':>12s} {'(test)':>7s}")
for r in sweep:
    c, m, last = r["config"], r["metrics"], r["history"][-1]
    print(f"{c['pi']:5.2f} {c['neg_log_sigma1']:7.0f} {c['neg_log_sigma2']:7.0f} "
          f"{c['samples']:7d} {c['kl_weighting']:>10s} {mu0_label(c):>9s} "
          f"{c['epochs']:6d} {last['nll'] + last['kl']:9.2f} "
          f"{100 * m['val_error_mean_weights']:8.2f}% {100 * m['val_error_ensemble']:7.2f}% "
          f"{m['predictor']:>12s} {100 * m['test_error']:6.2f}%")
chosen = chosen_settings(sweep[0]["config"])
# the best configuration that starts from random means (for the networks of other sizes below)
chosen_cold = chosen_settings(next(r["config"] for r in sweep if not r["config"].get("init_from")))
print("chosen on validation:", chosen)

# %% [markdown]
# The validation error of every configuration with its chosen predictor (lower is better); the
# chosen configuration is at the top.

# %%
fig, ax = plt.subplots(figsize=(7, 0.3 * len(sweep) + 1.2))
names = [f"π={r['config']['pi']:g}, -logσ1={r['config']['neg_log_sigma1']:g}, "
         f"-logσ2={r['config']['neg_log_sigma2']:g}, S={r['config']['samples']}, "
         f"{r['config']['kl_weighting']}, μ0 {mu0_label(r['config'])}, "
         f"{r['metrics']['predictor'].replace('_', ' ')}"
         for r in sweep]
ax.barh(range(len(sweep)), [100 * r["metrics"]["val_error"] for r in sweep], color="C0")
ax.set_yticks(range(len(sweep)), names, fontsize=7)
ax.invert_yaxis()
ax.set_xlabel("validation error (%)")
ax.set_xlim(left=min(100 * r["metrics"]["val_error"] for r in sweep) * 0.9)
H.savefig(fig, NB, "sweep")
plt.show()

# %% [markdown]
# ## 3. The four methods, side by side
#
# For every hidden size of the profile: SGD (no regularisation), dropout (`DROPOUT` on the hidden
# layers), BBB with a Gaussian prior $\mathcal N(0, 1)$ and BBB with the scale-mixture prior chosen
# above. Each run checkpoints every 5 epochs and resumes from its checkpoint; the trained models
# stay in `checkpoints/01_mnist_classification/` (outside git) for notebooks 04 and 05.

# %%
final = {}
t0 = time.perf_counter()
for Hs in cfg.hidden_sizes:
    for method in ("sgd", "dropout", "bbb_gaussian", "bbb_mixture"):
        rc = RunConfig(method=method, H=Hs, epochs=cfg.epochs, lr=LR, lr_decay=LR_DECAY,
                       rho_init=RHO_INIT, dropout=DROPOUT, seed=SEED)
        if method == "bbb_mixture":
            rc = replace(rc, **chosen)
        elif method == "bbb_gaussian":  # the same initialisation as the chosen mixture run
            rc = replace(rc, mu_init=chosen["mu_init"], init_from=chosen["init_from"],
                         init_epochs=chosen["init_epochs"])
        model, rec = run(rc, data, notebook=NB, eval_samples=cfg.eval_samples,
                         desc=f"{method} {Hs}")
        final[(method, Hs)] = (model, rec)
        m = rec["metrics"]
        warm = (f" + {final[(rc.init_from, Hs)][1]['metrics']['train_wall_s']:.0f} s of the "
                f"{rc.init_from} network it starts from" if rc.bayesian and rc.init_from else "")
        print(f"{method:13s} H={Hs:5d}: test error {100 * m['test_error']:.2f}% "
              f"(val {100 * m['val_error']:.2f}%, {m['predictor'].replace('_', ' ')}), "
              f"{m['epochs']} epochs, "
              f"{m['train_wall_s']:.0f} s of training{warm}")
print(f"all runs: {time.perf_counter() - t0:.0f} s (less when resumed from checkpoints)")

# %% [markdown]
# ### The scale-mixture network at other sizes
#
# The profile's `mixture_extra_H` trains BBB with the scale-mixture prior at more hidden sizes
# (the `default` profile: 2×1200, the network of the paper's Figure 2 and Table 2, which notebook
# 04 prunes). It uses the prior, initialisation and samples of the best configuration above that
# starts from random means (a warm start would first need a deterministic network of that size,
# minutes more on a CPU) and always the uniform $1/M$ KL weights: with the $\pi_i$ weights the
# KL term hardly acts, most $\sigma$ stay small and the signal-to-noise ratio ranks the weights
# poorly (notebook 04, section 6, measures it on warm-started 2×400 networks: the
# $\pi_i$-weighted one loses 2.1 percentage points at 95 % pruned and 17 at 98 %, the
# $1/M$-weighted one 0.0 and 0.3).

# %%
t0 = time.perf_counter()
for Hs in cfg.mixture_extra_H:
    rc = replace(RunConfig(method="bbb_mixture", H=Hs, epochs=cfg.epochs, lr=LR, lr_decay=LR_DECAY,
                           rho_init=RHO_INIT, seed=SEED), **chosen_cold)
    rc = replace(rc, kl_weighting="uniform")
    model, rec = run(rc, data, notebook=NB, eval_samples=cfg.eval_samples,
                     desc=f"bbb_mixture {Hs}")
    final[("bbb_mixture", Hs)] = (model, rec)
    m = rec["metrics"]
    print(f"bbb_mixture   H={Hs:5d} (1/M KL weights): test error {100 * m['test_error']:.2f}% "
          f"(val {100 * m['val_error']:.2f}%, {m['predictor'].replace('_', ' ')}; posterior mean "
          f"{100 * m['test_error_mean_weights']:.2f}%, average of {m['eval_samples']} samples "
          f"{100 * m['test_error_ensemble']:.2f}%), {m['epochs']} epochs, "
          f"{m['train_wall_s']:.0f} s of training")
print(f"extra runs: {time.perf_counter() - t0:.0f} s (less when resumed from checkpoints)")

# %% [markdown]
# ## 4. Table 1: the paper's numbers and ours
#
# "ours" is the test error after the last epoch (no early stopping): for BBB with the predictor
# chosen on validation (posterior mean or the average of `eval_samples` samples, in the last
# column; section 7 shows both), for SGD and dropout the network itself. Only the rows this profile trained are filled; nothing is copied from
# the paper into the "ours" column.
#
# **Other seeds** (not run here: `tools/mnist_seed_check.py` trained seeds 1 and 2 of the chosen
# recipe, of its runner-up with the $\pi_i$ weights and of the SGD network they start from, one CPU
# thread each; `results/01_mnist_classification/seed_check.json`): validation picks the $1/M$
# recipe on both seeds (1.44 % / 1.52 % against 1.55 % / 1.56 %), and its test error is 1.44 % and
# 1.50 % (posterior mean) against SGD's 1.55 % and 1.54 %. With seed 0's 1.35 % the three-seed
# mean is 1.43 %; seed 0 is the best of the three, and seed 2 alone misses 1.45 %.

# %%
# NBVAL_CHECK_OUTPUT
print(f"{'method':26s} {'H':>5s} {'paper':>7s} {'ours':>7s} {'ours - paper':>13s}  predictor")
for (method, Hs), (_, rec) in final.items():
    ours, predictor = rec["metrics"]["test_error"], rec["metrics"]["predictor"].replace("_", " ")
    paper = PAPER_TABLE1[method].get(Hs)
    if paper is None:  # a hidden size the paper did not report
        print(f"{METHOD_LABELS[method]:26s} {Hs:5d} {'—':>7s} {100 * ours:6.2f}% {'—':>13s}  "
              f"{predictor}")
    else:
        print(f"{METHOD_LABELS[method]:26s} {Hs:5d} {100 * paper:6.2f}% {100 * ours:6.2f}% "
              f"{100 * (ours - paper):+11.2f} pp  {predictor}")

# %% [markdown]
# ## 5. Figure 2: test error during training
#
# The paper's Figure 2 shows the 2×1200 networks over 600 epochs on a log scale. Here: the largest
# hidden size this profile trained for all four methods, test error of the posterior-mean weights
# after every epoch; dashed, the scale-mixture networks of `mixture_extra_H`.

# %%
H_fig = max(cfg.hidden_sizes)
fig, ax = plt.subplots(figsize=(7, 3.6))
for method, style in (("sgd", "C2"), ("dropout", "C1"), ("bbb_gaussian", "C4"),
                      ("bbb_mixture", "C0")):
    hist = final[(method, H_fig)][1]["history"]
    ax.plot([h["epoch"] for h in hist], [100 * h["test_error"] for h in hist], c=style,
            label=METHOD_LABELS[method])
for Hs in cfg.mixture_extra_H:
    hist = final[("bbb_mixture", Hs)][1]["history"]
    ax.plot([h["epoch"] for h in hist], [100 * h["test_error"] for h in hist], c="C0", ls="--",
            label=f"{METHOD_LABELS['bbb_mixture']}, {Hs} units, 1/M KL")
ax.set_yscale("log")
ax.set_xlabel("epoch")
ax.set_ylabel("test error (%)")
ax.set_title(f"784-{H_fig}-{H_fig}-10" + (" (dashed: other sizes)" if cfg.mixture_extra_H else ""))
ax.legend()
H.savefig(fig, NB, "figure2")
plt.show()


# %% [markdown]
# ## 6. Figure 3: the weights
#
# Density of the weight values of all layers in $[-0.2, 0.2]$: the trained weights of SGD and
# dropout, and one sample $\mathbf w \sim q(\mathbf w\mid\theta)$ of BBB. BBB's weights spread
# wider than SGD's (the paper's observation), and the scale-mixture prior puts a spike at zero.

# %%
def all_weights(model, sample):
    """Concatenate the weight matrices of a model (one BBB sample if ``sample``)."""
    ws = []
    for layer in model.modules():
        if isinstance(layer, H.BayesLinear):
            w = layer.weight_mu
            if sample:
                w = w + layer.weight_sigma * torch.randn_like(w)
            ws.append(w.detach().flatten())
        elif isinstance(layer, torch.nn.Linear):
            ws.append(layer.weight.detach().flatten())
    return torch.cat(ws).cpu()


torch.manual_seed(SEED)
fig, ax = plt.subplots(figsize=(7, 3.6))
bins = torch.linspace(-0.2, 0.2, 201)
for method, style in (("sgd", "C2"), ("dropout", "C1"), ("bbb_mixture", "C0")):
    w = all_weights(final[(method, H_fig)][0], sample=method.startswith("bbb"))
    w = w[(w >= -0.2) & (w <= 0.2)]
    ax.hist(w.numpy(), bins=bins.numpy(), density=True, histtype="step", lw=1.5, color=style,
            label=METHOD_LABELS[method])
ax.set_xlabel("weight")
ax.set_ylabel("density")
ax.legend()
H.savefig(fig, NB, "figure3")
plt.show()

# %% [markdown]
# ## 7. Posterior mean, single samples and their average
#
# Three ways to predict with a BBB network: the posterior-mean weights $\mu$; one weight sample;
# the average of the predictive distributions of `eval_samples` samples (the Bayesian predictive).
# The seed blog post finds that the average beats every single sample; the second line of each
# model says whether that holds here (and whether it also beats the posterior mean), the third
# which predictor validation chose for Table 1.

# %%
# NBVAL_CHECK_OUTPUT
for method in ("bbb_gaussian", "bbb_mixture"):
    m = final[(method, H_fig)][1]["metrics"]
    singles = m["test_error_single_samples"]
    print(f"{METHOD_LABELS[method]} (H={H_fig}): posterior mean {100 * m['test_error_mean_weights']:.2f}%, "
          f"single samples {100 * min(singles):.2f}%–{100 * max(singles):.2f}% "
          f"(mean {100 * sum(singles) / len(singles):.2f}%), "
          f"average of {m['eval_samples']} samples {100 * m['test_error_ensemble']:.2f}%")
    print(f"  average beats every single sample: {m['test_error_ensemble'] < min(singles)}; "
          f"beats the posterior mean: {m['test_error_ensemble'] < m['test_error_mean_weights']}")
    print(f"  validation: posterior mean {100 * m['val_error_mean_weights']:.2f}%, average "
          f"{100 * m['val_error_ensemble']:.2f}% -> Table 1 uses the "
          f"{m['predictor'].replace('_', ' ')}")

# %% [markdown]
# ## 8. Results files
#
# One JSON per trained model in `results/01_mnist_classification/` with the config (method, H,
# prior, lr, samples, KL weighting, ...), the metrics (test_error and val_error of the chosen
# `predictor`, test_error_ensemble, test_error_mean_weights, val_error_ensemble,
# val_error_mean_weights, epochs, train_wall_s, ...) and the per-epoch history.

# %%
wall = time.perf_counter() - t_start
for (method, Hs), (_, rec) in final.items():
    H.save_results(NB, f"{method}_h{Hs}", config=rec["config"], metrics=rec["metrics"],
                   profile=PROFILE, seed=SEED, device=device, wall_s=rec["metrics"]["train_wall_s"],
                   extra={"history": rec["history"], "notebook_wall_s": wall})
print(f"notebook wall time {wall / 60:.1f} min on {H.machine_info(device)}")
