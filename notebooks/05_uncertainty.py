# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (bbb)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 05 — Uncertainty in practice: out-of-distribution inputs and calibration
#
# Beyond the paper: does the weight uncertainty of Bayes by Backprop tell us when a classifier sees
# something it was not trained on, and are its probabilities calibrated? Following the PyTorch blog
# post that trains BBB on Fashion-MNIST and shows it MNIST digits, we train four methods on one data
# set and test them on the other, in both directions:
#
# - a **deterministic** network (one set of weights),
# - **MC dropout** (dropout 0.5 kept on at test time),
# - **BBB** (scale-mixture prior, uniform KL weights),
# - a **deep ensemble** of independently trained deterministic networks.
#
# Two further parts follow a report on Bayesian networks fit by variational inference: how the
# **choice of prior** (Normal, Laplace, Cauchy, the paper's scale mixture, flat, and priors whose scale
# is learned under a hyperprior) shapes the uncertainty of a small network on the 2-D moons and
# circles data, and a **Bayesian conv net** on MNIST with the images it is least sure about.

# %% [markdown]
# ## Parameters

# %% tags=["parameters"]
PROFILE = "default"
SEED = 0
DEVICE = None
EPOCHS = None          # deterministic, MC dropout and ensemble members
BBB_EPOCHS = None
BBB_MU_INIT = 0.1  # BBB means start uniform in (-BBB_MU_INIT, BBB_MU_INIT), or nn.Linear's bound if None

# %% [markdown]
# Setup.

# %%
import time

import matplotlib.pyplot as plt
import torch

import helpers as H
from helpers.classification import RunConfig, run
from helpers.toy import (PRIORS_2D, fit_toy, grid_probs, predictive_accuracy, sampled_weights,
                         toy_net)
from helpers.uncertainty import per_image_scores, sample_probs

cfg = H.get_profile("05_uncertainty", PROFILE, epochs=EPOCHS, bbb_epochs=BBB_EPOCHS)
device = H.get_device(DEVICE)
H.seed_everything(SEED)
H.use_style()
NB = "05_uncertainty"
t_start = time.perf_counter()
print(cfg)


# %% [markdown]
# ## 1. Training, in both directions
#
# All networks are 784-H-H-10 MLPs trained with the recipe of notebook 01 (Adam $10^{-3}$, decay
# 0.955 per epoch, pixels / 126); each run checkpoints and resumes. The deterministic network, MC
# dropout and the ensemble members (which differ only in their seed) train for `epochs` epochs: in
# notebook 01 the validation error of this recipe stops improving after about 25 epochs. BBB trains
# for `bbb_epochs`: its weight noise slows convergence. BBB uses the paper's scale mixture
# ($\pi=\frac12$, $\sigma_1=1$, $\sigma_2=e^{-6}$), the uniform KL weights $1/M$, $\rho_0=-6$ and
# posterior means initialised $\mu \sim U(-0.1, 0.1)$ (`BBB_MU_INIT`). Why that initialisation and
# 50 epochs: in runs made while writing this notebook (MNIST, seed 0), the entropy AUROC against
# Fashion-MNIST was 0.92 for notebook 01's 60-epoch uniform-weights model with `nn.Linear`'s
# initialisation, 0.945 with $U(-0.1, 0.1)$ after 30 epochs and 0.956 after 50.

# %%
def train_all(name):
    """Train (or load) the four methods on data set ``name``; return (data, models)."""
    data = H.load_images(name, device=device, n_train=cfg.n_train, n_test=cfg.n_eval)
    base = RunConfig(H=cfg.H, epochs=cfg.epochs, lr_decay=0.955, seed=SEED, data=name)
    models = {}
    models["deterministic"] = run(RunConfig.from_dict({**base.__dict__, "method": "sgd"}),
                                  data, notebook=NB, eval_samples=2)[0]
    models["mc_dropout"] = run(RunConfig.from_dict({**base.__dict__, "method": "dropout"}),
                               data, notebook=NB, eval_samples=2)[0]
    models["bbb"] = run(RunConfig.from_dict({**base.__dict__, "method": "bbb_mixture",
                                             "mu_init": BBB_MU_INIT, "epochs": cfg.bbb_epochs}),
                        data, notebook=NB, eval_samples=2)[0]
    models["ensemble"] = [models["deterministic"]] + [
        run(RunConfig.from_dict({**base.__dict__, "method": "sgd", "seed": SEED + k}), data,
            notebook=NB, eval_samples=2)[0] for k in range(1, cfg.ensemble_size)]
    return data, models


t0 = time.perf_counter()
trained = {name: train_all(name) for name in ("MNIST", "FashionMNIST")}
print(f"trained (or loaded) all models in {time.perf_counter() - t0:.0f} s")

# %% [markdown]
# ## 2. Scores of uncertainty
#
# From $S$ predictive samples $p_s(y\mid x)$ (weight samples, dropout masks or ensemble members):
# the **predictive entropy** $\mathbb H[\bar p]$ of their mean $\bar p$ (total uncertainty) and the
# **mutual information** $\mathbb H[\bar p] - \frac1S\sum_s \mathbb H[p_s]$ (the part due to
# disagreement between samples, i.e. model uncertainty; zero for a deterministic network). A good
# score is higher on out-of-distribution images: the AUROC of telling them from in-domain test
# images measures that (0.5 = chance, 1 = perfect). Calibration: the expected calibration error
# (ECE, 15 bins) of $\bar p$ on the in-domain test set.

# %%
other = {"MNIST": "FashionMNIST", "FashionMNIST": "MNIST"}
kinds = ("deterministic", "mc_dropout", "bbb", "ensemble")
rows, probs_in_store, ent_store = [], {}, {}
for name, (data, models) in trained.items():
    x_out = trained[other[name]][0].x_test
    for kind in kinds:
        torch.manual_seed(SEED)
        p_in = sample_probs(kind, models[kind], data.x_test, cfg.eval_samples)
        p_out = sample_probs(kind, models[kind], x_out, cfg.eval_samples)
        mean_in, mean_out = p_in.mean(0), p_out.mean(0)
        ent_in, ent_out = H.predictive_entropy(mean_in), H.predictive_entropy(mean_out)
        mi_in, mi_out = H.mutual_information(p_in), H.mutual_information(p_out)
        rows.append({"in": name, "method": kind,
                     "test_error": H.error_rate(mean_in, data.y_test),
                     "ece": H.ece(mean_in, data.y_test),
                     "auroc_entropy": H.auroc(ent_in, ent_out),
                     "auroc_mi": H.auroc(mi_in, mi_out) if kind != "deterministic" else 0.5})
        probs_in_store[(name, kind)] = (mean_in, data.y_test)
        ent_store[(name, kind)] = (ent_in, ent_out)

# %% [markdown]
# The table, per training set (the other data set is the out-of-distribution one). For the
# deterministic network the mutual information is zero everywhere, so its AUROC is 0.5 by definition.

# %%
# NBVAL_CHECK_OUTPUT
print(f"{'trained on':13s} {'method':14s} {'test err':>9s} {'ECE':>7s} {'AUROC H':>8s} "
      f"{'AUROC MI':>9s}")
for r in rows:
    print(f"{r['in']:13s} {r['method']:14s} {100 * r['test_error']:8.2f}% {r['ece']:7.4f} "
          f"{r['auroc_entropy']:8.3f} {r['auroc_mi']:9.3f}")

# %% [markdown]
# ## 3. Entropy in and out of distribution
#
# Histograms of the predictive entropy on in-domain test images (blue) and on the other data set
# (orange): the further apart, the better the method flags unfamiliar inputs.

# %%
fig, axes = plt.subplots(2, 4, figsize=(13, 5), sharey="row")
for i, name in enumerate(trained):
    for j, kind in enumerate(kinds):
        ent_in, ent_out = ent_store[(name, kind)]
        ax = axes[i, j]
        bins = torch.linspace(0, 2.31, 40).numpy()
        ax.hist(ent_in.cpu().numpy(), bins=bins, density=True, alpha=0.6, label=f"{name} (in)")
        ax.hist(ent_out.cpu().numpy(), bins=bins, density=True, alpha=0.6,
                label=f"{other[name]} (out)")
        ax.set_yscale("log")
        ax.set_title(f"{kind}, trained on {name}", fontsize=9)
        if i == 1:
            ax.set_xlabel("predictive entropy (nats)")
    axes[i, 0].legend(fontsize=7)
H.savefig(fig, NB, "entropy-in-out")
plt.show()

# %% [markdown]
# ## 4. What BBB's samples say about single images
#
# As in the blog post: for a few test images of each kind, the class probabilities given by
# individual weight samples (dots) and their mean (bars), for the BBB network trained on
# Fashion-MNIST. On clothing the samples agree; on digits they disagree and spread.

# %%
data_f, models_f = trained["FashionMNIST"]
x_digits = trained["MNIST"][0].x_test
torch.manual_seed(SEED)
examples = [("Fashion-MNIST (in)", data_f.x_test[:3]), ("MNIST (out)", x_digits[:3])]
fig, axes = plt.subplots(2, 6, figsize=(14, 4.6))
for r, (label, xs) in enumerate(examples):
    p = sample_probs("bbb", models_f["bbb"], xs, cfg.eval_samples).cpu()
    for k in range(3):
        axes[r, 2 * k].imshow(xs[k].view(28, 28).cpu(), cmap="gray_r")
        axes[r, 2 * k].set_axis_off()
        axes[r, 2 * k].set_title(label, fontsize=8)
        ax = axes[r, 2 * k + 1]
        ax.bar(range(10), p[:, k].mean(0), color="C0", alpha=0.5)
        for s in range(p.shape[0]):
            ax.plot(range(10), p[s, k], ".", c="C3", ms=3)
        ax.set_ylim(0, 1)
        ax.set_xticks(range(10))
        ax.tick_params(labelsize=6)
H.savefig(fig, NB, "bbb-samples-per-image")
plt.show()

# %% [markdown]
# ## 5. Calibration: reliability diagrams
#
# Accuracy against confidence of $\bar p$ on the in-domain test set (15 bins; the diagonal is
# perfect calibration), for the networks trained on MNIST and on Fashion-MNIST.

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for ax, name in zip(axes, trained):
    for kind in kinds:
        mean_in, y = probs_in_store[(name, kind)]
        centres, acc, conf, count = H.reliability(mean_in.cpu(), y.cpu())
        pts = [(c, a) for c, a, n in zip(conf, acc, count) if n > 0]
        ax.plot([c for c, _ in pts], [a for _, a in pts], "o-", ms=3, label=kind)
    ax.plot([0, 1], [0, 1], "k:", lw=1)
    ax.set_xlabel("confidence")
    ax.set_ylabel("accuracy")
    ax.set_title(f"trained on {name}")
axes[0].legend(fontsize=8)
H.savefig(fig, NB, "reliability")
plt.show()

# %% [markdown]
# ## 6. The choice of prior, on 2-D data
#
# A 2-5-5-2 network with tanh units (the report's) on two noisy 2-D data sets, *moons* and
# *circles* (the scikit-learn constructions, re-implemented in `helpers.make_toy_2d`), trained by Bayes
# by Backprop with the whole training set as one minibatch (KL weight 1) under each prior:
#
# | prior | $\log p(w)$ (up to a constant) |
# |---|---|
# | Normal $\mathcal N(0, 1)$ | $-w^2/2$ |
# | Laplace$(0, 1)$ | $-\lvert w\rvert$ |
# | Cauchy$(0, 1)$ | $-\log(1 + w^2)$ |
# | scale mixture (the paper's, $\pi=\frac12$, $\sigma_1=1$, $\sigma_2=e^{-6}$) | $\log\big(\pi\mathcal N(w;0,\sigma_1^2) + (1-\pi)\mathcal N(w;0,\sigma_2^2)\big)$ |
# | flat (improper) | $0$: the KL term is just $-\mathbb H[q]$ |
#
# **Learned prior scale.** Instead of fixing the prior's scale $s$, put a *hyperprior* on it
# (half-normal, half-Cauchy or inverse-gamma, all with scale 1) and learn a variational posterior
# $q(\log s) = \mathcal N(m, \tau^2)$ per layer together with the weights. The objective gains one term:
#
# $$\mathcal F = \mathbb E_{q(w)q(s)}\big[\log q(w) - \log p(w\mid s)\big]
#   + \mathrm{KL}\big[q(\log s)\,\|\,p(\log s)\big] - \mathbb E_{q(w)}\big[\log p(\mathcal D\mid w)\big],$$
#
# with $p(\log s) = p_s(e^{\log s})\,e^{\log s}$ (change of variables); $s$ is sampled with the
# reparameterisation trick like the weights (`helpers.LearnedScalePrior`).

# %%
TOY = {"moons": dict(noise=0.2), "circles": dict(noise=0.1, factor=0.5)}
LIMS = {"moons": (-2.0, 3.0, -1.5, 2.0), "circles": (-1.8, 1.8, -1.8, 1.8)}
toy_models, toy_acc, toy_data = {}, {}, {}
t0 = time.perf_counter()
for ds, kw in TOY.items():
    x_tr, y_tr = H.make_toy_2d(ds, cfg.toy_n, seed=SEED, **kw)
    x_te, y_te = H.make_toy_2d(ds, 1000, seed=SEED + 1000, **kw)
    toy_data[ds] = (x_tr, y_tr, x_te, y_te)
    for prior in PRIORS_2D:
        H.seed_everything(SEED)
        model = toy_net(prior)
        fit_toy(model, x_tr, y_tr, cfg.toy_steps, lr=0.01, seed=SEED, desc=f"{ds}, {prior}")
        toy_models[(ds, prior)] = model
        toy_acc[(ds, prior)] = predictive_accuracy(model, x_te, y_te)
print(f"trained {len(toy_models)} small networks in {time.perf_counter() - t0:.0f} s")

# %% [markdown]
# Test accuracy of the predictive distribution (100 weight samples averaged) on 1,000 fresh points
# of each data set, and the learned prior scale $e^{m}$ of each layer where it is learned.

# %%
# NBVAL_CHECK_OUTPUT
print(f"{'prior':28s} {'moons':>7s} {'circles':>8s}   learned scale per layer (moons | circles)")
for prior in PRIORS_2D:
    scales = ""
    if "~" in prior:
        scales = " | ".join(" ".join(f"{m.prior.scale():.2f}" for m in H.bayes_layers(toy_models[(ds, prior)]))
                            for ds in TOY)
    print(f"{prior:28s} {toy_acc[('moons', prior)]:7.3f} {toy_acc[('circles', prior)]:8.3f}   {scales}")

# %% [markdown]
# Maps of the class-1 probability (mean over 100 weight samples) and of its standard deviation over
# the samples (the model's uncertainty), for each prior; training points on top. Where the
# probability map is flat at 0.5 the network has collapsed onto its prior (the KL term won over the
# 500-point likelihood).

# %%
for ds in TOY:
    x_tr, y_tr, _, _ = toy_data[ds]
    fig, axes = plt.subplots(2, len(PRIORS_2D), figsize=(2.3 * len(PRIORS_2D), 4.8))
    for j, prior in enumerate(PRIORS_2D):
        torch.manual_seed(SEED)
        xx, yy, mean, std = grid_probs(toy_models[(ds, prior)], LIMS[ds])
        for i, (z, cmap, vmax) in enumerate(((mean, "RdBu_r", 1.0), (std, "viridis", 0.5))):
            ax = axes[i, j]
            ax.contourf(xx, yy, z, levels=20, cmap=cmap, vmin=0, vmax=vmax)
            ax.scatter(x_tr[:, 0], x_tr[:, 1], c=y_tr, cmap="coolwarm", s=2, alpha=0.5)
            ax.set_xticks([])
            ax.set_yticks([])
        axes[0, j].set_title(prior.replace(", ", ",\n"), fontsize=8)
    axes[0, 0].set_ylabel("P(class 1)")
    axes[1, 0].set_ylabel("std over samples")
    H.savefig(fig, NB, f"priors-{ds}")
    plt.show()

# %% [markdown]
# What each prior does to the weights: the density of last-layer weights drawn from the posterior
# $q$ (1,000 draws of each weight). The report found Laplace priors pile the weights up at zero
# (sparsity) and Cauchy priors let them sit far from zero; compare the curves, and note that a prior
# whose network collapsed (flat map above) shows all its weights at zero.

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 3.8))
for ax, ds in zip(axes, TOY):
    torch.manual_seed(SEED)
    for prior in ("Normal", "Laplace", "Cauchy", "scale mixture", "flat"):
        w = sampled_weights(H.bayes_layers(toy_models[(ds, prior)])[-1]).numpy()
        ax.hist(w, bins=120, range=(-6, 6), density=True, histtype="step", lw=1.3, label=prior)
    ax.set_yscale("log")
    ax.set_xlabel("last-layer weight")
    ax.set_title(ds)
axes[0].legend(fontsize=8)
H.savefig(fig, NB, "priors-last-layer-weights")
plt.show()

# %% [markdown]
# ## 7. A Bayesian conv net on MNIST
#
# Two $5\times5$ convolutions with 32 filters (each followed by tanh and $2\times2$ max-pooling), a
# 64-unit dense layer (tanh) and the softmax layer, every weight with a Gaussian posterior and the
# paper's scale-mixture prior (`helpers.bayes_conv_net`, layers `BayesConv2d` / `BayesLinear`),
# trained with uniform KL weights and Adam ($10^{-3}$, decay 0.955 per epoch).
#
# For each test image, from $S$ weight samples: the **expected error rate**
# $\frac1S\sum_s \mathbf 1[\arg\max_c p_s(c\mid x) \ne y]$ (how many posterior networks get it
# wrong) and the **standard deviation** over samples of the probability of the predicted class.

# %%
data_img = H.load_images("MNIST", device=device, flatten=False, n_train=cfg.conv_n_train,
                         n_test=cfg.n_eval)
H.seed_everything(SEED)
conv = H.bayes_conv_net().to(device)
ckpt = H.checkpoints_dir() / NB / f"bbb_conv_net_e{cfg.conv_epochs}_s{SEED}.pt"
t0 = time.perf_counter()
conv_hist = H.fit(conv, data_img, epochs=cfg.conv_epochs, lr=1e-3, lr_decay=0.955,
                  checkpoint=ckpt, eval_sets=("val", "test"), desc="conv net")
conv_wall = conv_hist[-1]["wall_s"] if conv_hist else 0.0
torch.manual_seed(SEED)
p_conv = sample_probs("bbb", conv, data_img.x_test, cfg.eval_samples)
scores = per_image_scores(p_conv, data_img.y_test)
conv_metrics = {"test_error": H.error_rate(p_conv.mean(0), data_img.y_test),
                "test_error_mean_weights": conv_hist[-1]["test_error"],
                "val_error": conv_hist[-1]["val_error"],
                "ece": H.ece(p_conv.mean(0), data_img.y_test),
                "epochs": cfg.conv_epochs, "train_wall_s": conv_wall}
print(f"conv net: {cfg.conv_epochs} epochs, training {conv_wall:.0f} s "
      f"(this call {time.perf_counter() - t0:.0f} s, checkpoint resumed if present)")

# %%
# NBVAL_CHECK_OUTPUT
print(f"test error {100 * conv_metrics['test_error']:.2f}% (average of {cfg.eval_samples} samples), "
      f"{100 * conv_metrics['test_error_mean_weights']:.2f}% (posterior mean); "
      f"ECE {conv_metrics['ece']:.4f}")

# %% [markdown]
# Expected error rate against the standard deviation over samples: images on which the posterior
# networks disagree (large std) are the ones they get wrong; where they agree, they are almost
# always right.

# %%
ee, sd = scores["expected_error"].cpu(), scores["std"].cpu()
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
axes[0].scatter(sd, ee, s=4, alpha=0.3)
axes[0].set_xlabel("std over samples of p(predicted class)")
axes[0].set_ylabel("expected error rate")
edges = torch.linspace(0, float(sd.max()) + 1e-6, 11)
idx = torch.bucketize(sd, edges[1:-1])
centres = [(edges[k] + edges[k + 1]).item() / 2 for k in range(10) if (idx == k).any()]
means = [ee[idx == k].mean().item() for k in range(10) if (idx == k).any()]
axes[0].plot(centres, means, "o-", c="C3", label="mean per bin")
axes[0].legend()
axes[1].hist(sd[ee == 0], bins=40, density=True, alpha=0.6, label="no sample wrong")
axes[1].hist(sd[ee > 0], bins=40, density=True, alpha=0.6, label="some samples wrong")
axes[1].set_xlabel("std over samples of p(predicted class)")
axes[1].set_yscale("log")
axes[1].legend()
H.savefig(fig, NB, "conv-net-expected-error")
plt.show()

# %% [markdown]
# The eight test images the conv net is least sure about (highest predictive entropy), and the eight
# it gets wrong most confidently; titles give the true label, the prediction and its mean probability.

# %%
y_img = data_img.y_test.cpu()
wrong = (scores["pred"].cpu() != y_img).nonzero().squeeze(1)
unsure = scores["entropy"].cpu().argsort(descending=True)[:8]
confident_wrong = wrong[scores["confidence"].cpu()[wrong].argsort(descending=True)][:8]
fig, axes = plt.subplots(2, 8, figsize=(13, 4))
for r, (label, ids) in enumerate((("least sure", unsure), ("confidently wrong", confident_wrong))):
    for k in range(8):
        ax = axes[r, k]
        ax.set_axis_off()
        if k >= len(ids):
            continue
        i = int(ids[k])
        ax.imshow(data_img.x_test[i, 0].cpu(), cmap="gray_r")
        ax.set_title(f"y={int(y_img[i])} pred={int(scores['pred'][i])}\n"
                     f"p={scores['confidence'][i]:.2f}", fontsize=8)
    axes[r, 0].text(-0.3, 0.5, label, transform=axes[r, 0].transAxes, ha="right", va="center")
H.savefig(fig, NB, "conv-net-hardest-images")
plt.show()

# %% [markdown]
# ## 8. Results files
#
# `results/05_uncertainty/<method>_<training set>.json` with `auroc_entropy`, `auroc_mi`, `ece`
# and `test_error`; `priors_2d.json` with `accuracy` per data set and prior; `bbb_conv_net.json`.

# %%
wall = time.perf_counter() - t_start
for r in rows:
    H.save_results(NB, f"{r['method']}_{r['in'].lower()}",
                   config={"method": r["method"], "trained_on": r["in"],
                           "out_of_distribution": other[r["in"]], "H": cfg.H,
                           "epochs": cfg.bbb_epochs if r["method"] == "bbb" else cfg.epochs,
                           "eval_samples": cfg.eval_samples,
                           "bbb_mu_init": BBB_MU_INIT if r["method"] == "bbb" else None,
                           "ensemble_size": cfg.ensemble_size},
                   metrics={k: r[k] for k in ("test_error", "ece", "auroc_entropy", "auroc_mi")},
                   profile=PROFILE, seed=SEED, device=device, wall_s=wall)
H.save_results(NB, "priors_2d",
               config={"network": "2-5-5-2 tanh", "n_train": cfg.toy_n, "n_test": 1000,
                       "steps": cfg.toy_steps, "lr": 0.01, "data": TOY},
               metrics={"accuracy": {ds: {prior: toy_acc[(ds, prior)] for prior in PRIORS_2D}
                                     for ds in TOY}},
               profile=PROFILE, seed=SEED, device=device, wall_s=wall)
H.save_results(NB, "bbb_conv_net",
               config={"network": "conv5x5(32)-pool-conv5x5(32)-pool-64-10, tanh",
                       "prior": "scale mixture 1/2, 1, e^-6", "kl_weighting": "uniform",
                       "lr": 1e-3, "lr_decay": 0.955, "epochs": cfg.conv_epochs,
                       "n_train": len(data_img.x_train), "eval_samples": cfg.eval_samples},
               metrics=conv_metrics, profile=PROFILE, seed=SEED, device=device, wall_s=wall)
print(f"notebook wall time {wall / 60:.1f} min")
