# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (bbb)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 04 — Pruning weights by their signal-to-noise ratio (Table 2, Figure 4)
#
# A BBB network knows how sure it is of every weight. Section 5.1 of the paper ranks weights by the
# signal-to-noise ratio $|\mu_i| / \sigma_i$, sets the least certain ones to zero and predicts with
# the posterior means of the rest: 95 % of the weights of a 2×1200 network can go for +0.05
# percentage points of test error (Table 2). This notebook repeats it on the scale-mixture model of
# notebook 01 (in the `default` and `paper` profiles the 2×1200 network, as in the paper) and
# compares the SNR ranking with ranking by $|\mu|$ alone and with a random ranking.

# %% [markdown]
# ## Parameters
# `H` picks the hidden size of the notebook-01 model to load (profile default when `None`). If its
# checkpoint is missing, the notebook trains one with notebook 01's settings for this profile, so it
# also runs on its own.

# %% tags=["parameters"]
PROFILE = "default"
SEED = 0
DEVICE = None
H_UNITS = None

# %% [markdown]
# Setup and data (the same split and preprocessing as notebook 01).

# %%
import json
import math
import time

import matplotlib.pyplot as plt
import torch

import helpers as H
from helpers import pruning
from helpers.classification import RunConfig, load_model, run

cfg = H.get_profile("04_pruning", PROFILE, H=H_UNITS)
device = H.get_device(DEVICE)
H.seed_everything(SEED)
H.use_style()
NB = "04_pruning"
t_start = time.perf_counter()
data = H.load_mnist(device=device, n_train=cfg.n_train, n_test=cfg.n_eval)
print(cfg)

# %% [markdown]
# ## 1. The model
#
# Notebook 01 stored the configuration of its BBB scale-mixture run in
# `results/01_mnist_classification/bbb_mixture_h<H>.json` and the weights under `checkpoints/`.

# %%
record_path = H.results_dir() / "01_mnist_classification" / f"bbb_mixture_h{cfg.H}.json"
if record_path.exists():
    run_cfg = RunConfig.from_dict(json.loads(record_path.read_text())["config"])
else:  # notebook 01 has not run in this profile: its default recipe
    run_cfg = RunConfig(method="bbb_mixture", H=cfg.H, epochs=cfg.fallback_epochs,
                        lr_decay=0.955, seed=SEED)
try:
    model = load_model(run_cfg, device=device)
    print(f"loaded {run_cfg.name}")
except FileNotFoundError as err:
    print(f"{err}\n-> training it here (resumable)")
    model, _ = run(run_cfg, data, eval_samples=2)
model.eval()
n_weights = sum(layer.weight_mu.numel() for layer in pruning.weight_layers(model))
print(f"{n_weights:,} weights (biases are not pruned)")

# %% [markdown]
# ## 2. Figure 4: the distribution of the signal-to-noise ratio
#
# $\mathrm{SNR}_{\text{dB}} = 10\log_{10}(|\mu|/\sigma)$ over all weights: density (left) and
# cumulative distribution (right), with the cut-offs that remove 50 %, 75 %, 95 % and 98 %.
# The paper finds two modes, with the 75 % cut-off between them.

# %%
db = pruning.snr_db(model).cpu()
cuts = {f: torch.quantile(db[torch.randperm(len(db))[:1_000_000]], f).item()
        for f in (0.5, 0.75, 0.95, 0.98)}
fig, axes = plt.subplots(1, 2, figsize=(11, 3.5))
lo = torch.quantile(db[torch.randperm(len(db))[:1_000_000]], 0.001).item()
axes[0].hist(db.numpy(), bins=200, range=(lo, db.max().item()), density=True, color="C0",
             histtype="stepfilled")
axes[0].set_xlabel("signal-to-noise ratio (dB)")
axes[0].set_ylabel("density")
sorted_db = torch.sort(db).values
axes[1].plot(sorted_db.numpy(), torch.linspace(0, 1, len(db)).numpy())
axes[1].set_xlabel("signal-to-noise ratio (dB)")
axes[1].set_ylabel("CDF")
axes[1].set_xlim(left=lo)
for f, c in cuts.items():
    for ax in axes:
        ax.axvline(c, color="C3", ls=":", lw=1)
    axes[1].text(c, 0.02 + 0.2 * list(cuts).index(f), f" {int(100 * f)}%", color="C3", fontsize=8)
H.savefig(fig, NB, "figure4")
plt.show()

# %% [markdown]
# ## 3. Table 2: test error after pruning
#
# For each fraction, the weights with the lowest score are set to zero and the posterior means of
# the rest predict (no retraining). Three rankings: SNR (the paper's), $|\mu|$ alone, and random.

# %%
PAPER_TABLE2 = {0: 0.0124, 50: 0.0124, 75: 0.0124, 95: 0.0129, 98: 0.0139}  # 2x1200 network
fractions = [0, 50, 75, 95, 98, 99, 100]
curves, kept, wrong = {}, {}, {}
gen = torch.Generator().manual_seed(SEED)
for kind in ("snr", "magnitude", "random"):
    curves[kind], wrong[kind] = {}, {}
    for f in fractions:
        pruned, kept[f] = pruning.prune(model, f / 100, kind, generator=gen)
        wrong[kind][f] = H.misclassified(pruned, data.x_test, data.y_test).cpu()
        curves[kind][f] = wrong[kind][f].float().mean().item()

# %% [markdown]
# The table (paper: 2×1200 network at 1.24 % before pruning; ours: the model loaded above).

# %%
# NBVAL_CHECK_OUTPUT
print(f"{'removed':>8s} {'# weights':>10s} {'paper':>7s} {'ours (SNR)':>11s} {'diff':>8s} "
      f"{'|mu|':>7s} {'random':>7s}")
for f in fractions:
    paper = PAPER_TABLE2.get(f)
    ours = curves["snr"][f]
    p_txt = f"{100 * paper:6.2f}%" if paper is not None else "      —"
    d_txt = f"{100 * (ours - paper):+7.2f}" if paper is not None else "      —"
    print(f"{f:7d}% {kept[f]:10,d} {p_txt} {100 * ours:10.2f}% {d_txt} "
          f"{100 * curves['magnitude'][f]:6.2f}% {100 * curves['random'][f]:6.2f}%")
delta95 = 100 * (curves["snr"][95] - curves["snr"][0])
delta98 = 100 * (curves["snr"][98] - curves["snr"][0])
print(f"SNR ranking: {delta95:+.2f} pp at 95 % removed (paper +0.05), {delta98:+.2f} pp at 98 % "
      f"(paper +0.15)")
print("SNR no worse than |mu| at every fraction:",
      all(curves["snr"][f] <= curves["magnitude"][f] for f in fractions))

# %% [markdown]
# Both rankings are scored on the same 10,000 test images, so a difference of a few images can be
# chance. The paired (McNemar) view: at each fraction, the images only the SNR-pruned network gets
# wrong, those only the $|\mu|$-pruned one gets wrong, and the exact two-sided p-value of "both
# rankings err equally often".

# %%
# NBVAL_CHECK_OUTPUT
paired = {f: H.mcnemar(wrong["snr"][f], wrong["magnitude"][f]) for f in fractions}
print(f"{'removed':>8s} {'only SNR wrong':>15s} {'only |mu| wrong':>16s} {'p':>7s}")
for f, (only_snr, only_mag, p) in paired.items():
    print(f"{f:7d}% {only_snr:15d} {only_mag:16d} {p:7.3f}")
worse = [f for f, (a, b, p) in paired.items() if a > b and p < 0.05]
print("fractions where SNR is worse than |mu| at p < 0.05:", worse or "none")

# %% [markdown]
# ## 4. The pruning curves
#
# Test error against the fraction removed, for the three rankings (log scale).

# %%
fig, ax = plt.subplots(figsize=(7, 3.6))
for kind, c in (("snr", "C0"), ("magnitude", "C1"), ("random", "C7")):
    ax.plot(fractions[:-1], [100 * curves[kind][f] for f in fractions[:-1]], "o-", c=c,
            label={"snr": "SNR |μ|/σ", "magnitude": "|μ|", "random": "random"}[kind])
ax.set_yscale("log")
ax.set_xlabel("weights removed (%)")
ax.set_ylabel("test error (%)")
ax.legend()
H.savefig(fig, NB, "pruning-curves")
plt.show()

# %% [markdown]
# ## 5. What pruning buys: storage and CPU prediction time
#
# The pruned posterior means stored as sparse CSR matrices (int32 indices) against dense matrices:
# bytes of `torch.save`, and the time to predict the whole test set on the CPU (median of
# `timing_repeats`).

# %%
x_cpu = data.x_test.cpu()
dense_model = pruning.prune(model, 0.0)[0].cpu()
rows = []
for f in (0, 95, 98):
    pruned = pruning.prune(model, f / 100, "snr")[0].cpu()
    dense = [(layer.weight_mu.detach(), layer.bias_mu.detach())
             for layer in pruning.weight_layers(pruned)]
    sparse = pruning.to_sparse(pruned)
    with torch.no_grad():
        t_dense = pruning.time_call(lambda: pruned(x_cpu), cfg.timing_repeats)
        t_sparse = pruning.time_call(lambda: pruning.sparse_forward(sparse, x_cpu),
                                     cfg.timing_repeats)
    rows.append({"removed": f, "dense_bytes": pruning.storage_bytes(dense),
                 "sparse_bytes": pruning.storage_bytes(sparse), "dense_s": t_dense,
                 "sparse_s": t_sparse})
print(f"{'removed':>8s} {'dense MB':>9s} {'sparse MB':>10s} {'dense ms':>9s} {'sparse ms':>10s}")
for r in rows:
    print(f"{r['removed']:7d}% {r['dense_bytes'] / 2**20:9.2f} {r['sparse_bytes'] / 2**20:10.2f} "
          f"{1e3 * r['dense_s']:9.1f} {1e3 * r['sparse_s']:10.1f}")

# %% [markdown]
# ## 6. The KL weighting decides how prunable the network is
#
# With the $\pi_i = 2^{M-i}/(2^M-1)$ weights and Adam, the KL term acts on only the first few
# minibatches of every epoch, so it barely pulls weights into the prior's spike at zero; with the
# uniform $1/M$ weights it acts on every minibatch. Below, notebook 01's scale-mixture network of
# `compare_H` units (its recipe chosen on validation) is trained (or loaded) with both weightings,
# and both are pruned by SNR beside the network above. The SNR densities show where the
# bimodality of the paper's Figure 4 comes from.

# %%
cmp_path = H.results_dir() / "01_mnist_classification" / f"bbb_mixture_h{cfg.compare_H}.json"
if cmp_path.exists():
    cmp_base = RunConfig.from_dict(json.loads(cmp_path.read_text())["config"])
else:  # notebook 01 has not run in this profile: its default recipe
    cmp_base = RunConfig(method="bbb_mixture", H=cfg.compare_H, epochs=cfg.compare_epochs,
                         lr_decay=0.955, seed=SEED)
alt = {}
for weighting in ("blundell", "uniform"):
    alt_cfg = RunConfig.from_dict({**cmp_base.__dict__, "kl_weighting": weighting,
                                   "epochs": cfg.compare_epochs})
    alt_model, alt_rec = run(alt_cfg, data, notebook="01_mnist_classification", eval_samples=2,
                             desc=f"{weighting} weighting")
    alt[weighting] = {"cfg": alt_cfg, "db": pruning.snr_db(alt_model).cpu(),
                      "wall": alt_rec["metrics"]["train_wall_s"],
                      "curve": {f: pruning.test_error(pruning.prune(alt_model, f / 100, "snr")[0],
                                                      data.x_test, data.y_test)
                                for f in fractions}}
fig, ax = plt.subplots(figsize=(7, 3.4))
ax.hist(db.numpy(), bins=200, density=True, histtype="step", lw=1.5, color="C0",
        label=f"{cfg.H} units, {run_cfg.kl_weighting} KL weights (the network above)")
for (weighting, a), c in zip(alt.items(), ("C3", "C2")):
    ax.hist(a["db"].numpy(), bins=200, density=True, alpha=0.5, color=c,
            label=f"{cfg.compare_H} units, {weighting} KL weights")
ax.set_xlabel("signal-to-noise ratio (dB)")
ax.set_ylabel("density")
ax.legend(fontsize=8)
H.savefig(fig, NB, "snr-by-kl-weighting")
plt.show()
print(f"{'removed':>8s} {f'{cfg.H} {run_cfg.kl_weighting}':>14s} "
      + " ".join(f"{f'{cfg.compare_H} {w}':>14s}" for w in alt))
for f in fractions:
    print(f"{f:7d}% {100 * curves['snr'][f]:13.2f}% "
          + " ".join(f"{100 * a['curve'][f]:13.2f}%" for a in alt.values()))
for weighting, a in alt.items():
    c = a["curve"]
    print(f"{cfg.compare_H} units, {weighting} weighting: {100 * (c[95] - c[0]):+.2f} pp at 95 %, "
          f"{100 * (c[98] - c[0]):+.2f} pp at 98 % ({a['cfg'].epochs} epochs, "
          f"{a['wall']:.0f} s of training)")

# %% [markdown]
# ## 7. Results file
#
# `results/04_pruning/snr.json`: `error_at` per fraction (SNR ranking), the increases at 95 % and
# 98 %, the same for the $|\mu|$ ranking, the storage/timing rows and the KL-weighting comparison.

# %%
wall = time.perf_counter() - t_start
metrics = {"error_at": {str(f): curves["snr"][f] for f in fractions},
           "weights_kept": {str(f): kept[f] for f in fractions},
           "delta_pp_95": delta95, "delta_pp_98": delta98,
           "magnitude": {"error_at": {str(f): curves["magnitude"][f] for f in fractions},
                         "delta_pp_95": 100 * (curves["magnitude"][95] - curves["magnitude"][0]),
                         "delta_pp_98": 100 * (curves["magnitude"][98] - curves["magnitude"][0])},
           "random": {"error_at": {str(f): curves["random"][f] for f in fractions}},
           "snr_vs_magnitude_mcnemar": {str(f): {"only_snr_wrong": a, "only_magnitude_wrong": b,
                                                 "p": p} for f, (a, b, p) in paired.items()},
           "storage_and_timing": rows,
           "kl_weighting_comparison": {
               w: {"model": a["cfg"].name, "H": cfg.compare_H,
                   "error_at": {str(f): a["curve"][f] for f in fractions},
                   "delta_pp_95": 100 * (a["curve"][95] - a["curve"][0]),
                   "delta_pp_98": 100 * (a["curve"][98] - a["curve"][0])}
               for w, a in alt.items()}}
H.save_results(NB, "snr", config={"model": run_cfg.name, "H": cfg.H, "n_weights": n_weights},
               metrics=metrics, profile=PROFILE, seed=SEED, device=device, wall_s=wall)
print(f"notebook wall time {wall:.0f} s")
