# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (bbb)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 06 — Is Bayes by Backprop worth it today?
#
# [← 05 Uncertainty](05_uncertainty.ipynb) · [README](../README.md)
#
# **The question.** A reader choosing a method today weighs BBB against what came after it. On
# one architecture (784-400-400-10) and one split (MNIST 50k / 10k / 10k), how do they compare
# in accuracy, calibration, out-of-distribution detection, robustness to rotated digits and cost?
#
# **The methods.** MAP (Adam with weight decay); MC dropout
# ([Gal & Ghahramani 2016](https://arxiv.org/abs/1506.02142)); a deep ensemble of five
# ([Lakshminarayanan et al. 2017](https://arxiv.org/abs/1612.01474)); BBB with notebook 01's
# recipe; **IVON** ([Shen et al. 2024](https://arxiv.org/abs/2402.17641), package `ivon-opt`), a
# variational-learning optimiser at nearly Adam's cost; and the **Laplace approximation**
# ([Daxberger et al. 2021](https://arxiv.org/abs/2106.14806), package `laplace-torch`) around the
# MAP network, last-layer KFAC, all-layer diagonal and all-layer KFAC, with the prior precision
# chosen by the marginal likelihood. No method is written by hand here.
#
# **Runtime** (profile `default`, 2-core CPU): seconds with the committed results; cold about an
# hour (three seeds of eight methods, thirteen rotations each).

# %% [markdown]
# ## Parameters

# %% tags=["parameters"]
PROFILE = "default"    # smoke | default | paper
TRAIN_MISSING = True   # train and evaluate whatever results/06_alternatives lacks
DEVICE = "cpu"

# %%
import matplotlib.pyplot as plt

import helpers as H
from helpers import alternatives as A
from helpers import table1 as T

NB = "06_alternatives"
cfg = H.get_profile(NB, PROFILE)
H.use_style()
print(f"profile {PROFILE}: seeds {cfg.seeds}, {cfg.eval_samples} samples per prediction, "
      f"rotations {cfg.angles}")

# %% [markdown]
# ## 1. Settings, chosen on validation data
#
# MAP's weight decay, schedule and epochs come from a search scored by the validation negative
# log-likelihood (NLL); IVON's learning rate and epochs from a small grid scored the same way;
# MC dropout and BBB take the choices of notebooks 05 and 01; the Laplace approximations set
# their prior precision by maximising the marginal likelihood of the training data. The test
# sets (MNIST, Fashion-MNIST, rotated MNIST) are used once, after these choices.

# %%
summary = A.build(cfg, train=TRAIN_MISSING, device=H.get_device(DEVICE))
if not H.pending(summary, "the comparison (searches, 3 seeds of each method, evaluations)",
                 f"make notebooks ONLY=06 PROFILE={PROFILE}"):
    chosen = summary["config"]["chosen"]
    print("MAP:", T.describe(chosen["map"]), f"for {chosen['map']['epochs']} epochs")
    print(f"IVON: lr {chosen['ivon']['hp']['lr']}, initial Hessian {chosen['ivon']['hp']['hess_init']}, "
          f"weight decay {chosen['ivon']['hp']['weight_decay']}, {chosen['ivon']['epochs']} epochs")

# %% [markdown]
# ## 2. The summary table
#
# Mean ± standard deviation over the seeds (per-seed values in
# `results/06_alternatives/summary.json`). Test error, NLL, Brier score and expected calibration
# error (ECE) on the MNIST test set; AUROC of telling Fashion-MNIST from MNIST test images by the
# predictive entropy, and by the mutual information where the method has samples; training time
# relative to MAP in the same run on this machine; prediction time for 10,000 images; numbers
# stored to predict.

# %%
if summary:
    H.show_table(*A.summary_rows(summary));

# %% [markdown]
# ## 3. Calibration: reliability diagrams (seed 0)

# %%
if summary:
    fig = A.reliability_figure(summary)
    H.savefig(fig, NB, "reliability")
    plt.show()

# %% [markdown]
# ## 4. Dataset shift: rotated digits
#
# The MNIST test set rotated by 0°–180° in steps of 15°
# (`torchvision.transforms.functional.rotate`, no new data), as
# [Ovadia et al. (2019)](https://arxiv.org/abs/1906.02530) plot it: error, NLL and ECE against
# the angle, mean over seeds.

# %%
if summary:
    fig = A.rotation_figure(summary)
    H.savefig(fig, NB, "rotation")
    plt.show()

# %% [markdown]
# ## 5. All methods, all metrics
#
# Each metric scaled to the range of the methods (0: the best method, 1: the worst), so that
# one figure shows where each method stands.

# %%
if summary:
    fig = A.summary_figure(summary)
    H.savefig(fig, NB, "summary")
    plt.show()

# %% [markdown]
# ## 6. The verdict
#
# The cell below answers the question this project asks of its own BBB, from the table: does it
# reach the best method's out-of-distribution AUROC and ECE at no more than three times MAP's
# training time?

# %%
for line in A.verdict(summary) if summary else []:
    print(line)

# %% [markdown]
# **Published numbers, for context only.** Kristiadi, Hein and Hennig's LULA results give an
# MNIST → Fashion-MNIST AUROC of about 0.98–0.99 for MAP, Laplace and ensembles — with a
# WRN-16-4 convolutional network, not an MLP, so they are not comparable with the table above
# ([Kristiadi et al. 2021](https://arxiv.org/abs/2010.02720)).
#
# ## Takeaways
#
# - One architecture, one split, one rule for the settings: the differences in the table are
#   differences between methods, measured with the seed spread beside them.
#
# ## Exercises
#
# 1. Fit the last-layer Laplace approximation around the BBB network's posterior mean instead of
#    the MAP network: what happens to its AUROC?
# 2. Give IVON two weight samples per step (`mc_samples=2`) and compare its cost and NLL.
# 3. Replace the entropy by the maximum softmax probability as the out-of-distribution score.
