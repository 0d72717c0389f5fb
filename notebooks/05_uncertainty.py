# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (bbb)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 05 — Uncertainty beyond the paper: unfamiliar inputs, calibration, priors
#
# [← 04 Pruning](04_pruning.ipynb) · [README](../README.md) ·
# [06 Alternatives →](06_alternatives.ipynb)
#
# **The question.** Does the weight uncertainty of Bayes by Backprop tell a classifier when it
# sees something it was not trained on, and are its probabilities calibrated? The paper
# ([Blundell et al. 2015](https://arxiv.org/abs/1505.05424)) does not ask. Here BBB and three
# rivals were trained on MNIST on ten paired seeds (each seed gives every method the same data
# order; notebook 06's runs, reloaded here) and shown Fashion-MNIST
# (grey images of clothing, the size of MNIST's digits). The answer below uses these terms
# (section 1 gives the formulas):
#
# - *MAP*: one network trained with weight decay (the *maximum a posteriori* weights).
# - *MC dropout*: one network with dropout, averaged over fresh random dropout masks.
# - *Deep ensemble*: five MAP networks trained from different seeds.
# - *AUROC*: the chance that a random Fashion-MNIST image gets a more uncertain prediction
#   than a random MNIST test image (0.5: chance; higher is better).
# - *ECE* (expected calibration error): the gap between the predictions' confidence and their
#   accuracy, averaged over confidence bins (lower is better).
# - *NLL*: the test negative log-likelihood of the true labels, a score of confidence and
#   accuracy together (lower is better).
#
# **Runtime** (profile `default`): under a minute; nothing is trained (more under Parameters).

# %%
from helpers import ood_plan as O
from helpers.report import show_markdown

runs = O.load_summary()
show_markdown(O.answer_text(runs));

# %% [markdown]
# > **Departures from the paper and choices made after seeing numbers.** The whole comparison
# > is beyond the paper. Against the paper's MNIST protocol (run in
# > [notebook 01](01_mnist_classification.ipynb)), BBB here trains with Adam at a constant
# > learning rate for at most 60 epochs, not SGD for 600, draws one weight sample per step, and
# > keeps its scale-mixture prior at one point of the paper's grid (section 2) where the paper
# > searched it; its $\rho_0$ (where every $\rho$ of its posterior starts) is searched with the
# > learning rate on validation NLL. The answer gives the paper's test error beside this BBB's.
# >
# > Every setting is chosen on validation data only, on grids fixed before any test number of
# > these runs was seen. But:
# >
# > - the six comparisons of section 3 were declared after earlier, smaller runs with unequal
# >   searches had shown BBB ahead on AUROC and behind on ECE;
# > - MAP's grid was placed by an earlier search of MAP's own, and the other learning-rate grids
# >   are centred on earlier validation choices (BBB's ρ₀ grid, −7 to −4, has not moved since
# >   these searches were declared);
# > - notebook 06's *failed-fit* rule (section 3), which withholds a verdict, was set after the
# >   test numbers: without it, all-layer KFAC Laplace would beat BBB on AUROC.
# >
# > Why: [docs/choices.md](../docs/choices.md#notebooks-05-and-06-beyond-the-paper). The earlier
# > runs and what they showed: [docs/lab_log.md](../docs/lab_log.md#notebook-05).

# %% [markdown]
# ## Parameters
#
# Nothing is trained: the stored runs are [notebook 06](06_alternatives.ipynb)'s, and the
# appendix, an illustration on **one seed** on 2-D data, reloads its stored networks. Tables and figures are numbered by notebook (here: Figure 5.x), not as
# the paper's.

# %% tags=["parameters"]
PROFILE = "default"    # smoke | default | paper: the appendix's 2-D fits only (steps, points)
TRAIN_MISSING = False  # train the 2-D priors' networks when missing
SEED = 0               # the 2-D priors' networks
DEVICE = None          # None: cuda > mps > cpu

# %%

import matplotlib.pyplot as plt
import torch

import helpers as H
from helpers import uncertainty as U
from helpers.toy import LIMS, PRIORS_2D, TOY, build_toy, prior_maps

# %%
NB = "05_uncertainty"
cfg = H.get_profile(NB, PROFILE)
retrain = f"make notebooks ONLY=05 PROFILE={PROFILE} TRAIN=1"
device = H.get_device(DEVICE)
H.use_style()

# %% [markdown]
# ## 1. Four predictive distributions
#
# Each method turns an image $x$ into class probabilities $\bar p(y\mid x)$, the average of $S$
# members $p_s(y\mid x)$:
#
# | method | members $p_s$ |
# |---|---|
# | MAP (one network) | one network trained with weight decay, the *maximum a posteriori* estimate under a Gaussian prior ($S=1$) |
# | MC dropout ([Gal & Ghahramani 2016](https://arxiv.org/abs/1506.02142)) | the network with a fresh dropout mask each ($S=20$) |
# | BBB | networks with weights $\mathbf w_s\sim q(\mathbf w\mid\theta)$, under the paper's scale-mixture prior ($S=20$) |
# | deep ensemble ([Lakshminarayanan et al. 2017](https://arxiv.org/abs/1612.01474)) | five MAP networks trained from different seeds |
#
# **Flagging unfamiliar images.** The score of uncertainty is the **predictive entropy**
# $\mathbb H[\bar p]$; the **mutual information** (MI) $\mathbb H[\bar p]-\frac1S\sum_s\mathbb H[p_s]$
# is the part due to disagreement between members (zero for one network). A score that is
# higher on unfamiliar images separates them; the **AUROC** (area under the ROC curve) is the
# chance that a random Fashion-MNIST image scores higher than a random MNIST test image (0.5:
# chance, 1: perfect).
#
# **Calibration.** The **expected calibration error** (ECE) on the MNIST test set: the images
# are binned by confidence (the top class's probability, 15 equal bins), and the ECE is the gap
# between accuracy and confidence in each bin, averaged with each bin weighted by its images.
# Zero means that of the images predicted with confidence $c$, a fraction $c$ is right. With
# so few errors, nearly every image falls in the top bin and the few errors drive the score:
# the ECE verdicts below are about this 15-bin estimator (other binnings were not tried).

# %% [markdown]
# ## 2. Searches of one size, ten paired seeds
#
# - **The search.** Each method's settings are chosen by the **validation negative
#   log-likelihood** (NLL) of its own predictive distribution on held-out training images (the
#   last 10,000), never by a test score. MAP, MC dropout and BBB each get 16 trials of a
#   784-400-400-10 network, each trained 60 epochs from random weights with Adam at a constant
#   learning rate; the training length is chosen too, by the validation NLL averaged over the
#   five epochs ending there. The search table below lists the grids. BBB's grid includes
#   $\rho_0$, the starting value of every $\rho$ of its posterior, whose
#   $\sigma=\log(1+e^\rho)$.
# - **The runs.** The chosen settings are trained on seeds 0–9, with the same data order for
#   every method at a given seed, so the seeds are **paired**. The deep ensemble of seed $s$ is
#   MAP's network of that seed and four more MAP networks from seeds of their own.
# - **The tests.** Each comparison is BBB against one rival on one score, across the ten
#   paired seeds: the mean difference BBB − rival with its $95\,\%$ **t-interval**, and a
#   two-sided paired t-test. **Holm's correction** keeps the chance of any false verdict in a
#   family of $m$ tests at $\alpha=0.05$: it tests the smallest p-value at $\alpha/m$, the next
#   at $\alpha/(m-1)$, and so on, stopping at the first that fails. Equivalently, the **Holm
#   p** the tables report: the $k$-th smallest of $m$ p-values is multiplied by $m+1-k$, each
#   kept at least as large as the one before; a verdict is decided when its Holm p is below
#   $0.05$. Intervals are unadjusted. The ECE comparisons are corrected over their own three. The AUROC comparisons are corrected
#   over a family of seven, shared with [notebook 06](06_alternatives.ipynb): these three and
#   BBB against IVON and three Laplace approximations, trained in the same runs (section 3
#   defines them and a *failed fit*, and lists all seven p-values).
# - **The verdict words.** *BBB better* or *BBB worse*: the corrected test decides that
#   direction. *Not resolved at 10 seeds*: it decides neither.

# %%
show_markdown("**Table 5.1.** What each search varied and chose (validation NLL only).")
H.show_table(*O.choices_rows())
show_markdown(O.edges_words())
show_markdown(O.cost_words());

# %% [markdown]
# ## 3. Trained on MNIST, shown Fashion-MNIST
#
# First each method's scores (then notes on the ECE, BBB's σ and its recipe), then the six
# comparisons behind the answer and the AUROC family.
# [Notebook 06](06_alternatives.ipynb) reads the same runs for test NLL and cost.

# %%
if not H.pending(runs, "the runs of MAP, MC dropout, the ensemble and BBB (notebook 06's; "
                 "hours of CPU time)", "python tools/alternatives_search.py analyse"):
    show_markdown("**Table 5.2.** Mean ± sd over the ten seeds (MNIST test set; AUROC: MNIST "
                  "test images against Fashion-MNIST's test images; S: the members averaged "
                  "per prediction).")
    H.show_table(*O.scores_rows(runs))
    fig = O.scores_figure(runs)
    H.savefig(fig, NB, "ood-scores")
    plt.show()
    show_markdown(O.caption("ood-scores"))
    show_markdown(O.scores_notes(runs))

# %%
if runs:
    show_markdown("**Table 5.3.** BBB against each rival (BBB − rival, mean over the paired "
                  "seeds).")
    H.show_table(*O.effects_rows(runs))
    fig = O.differences_figure(runs)
    H.savefig(fig, NB, "ood-differences")
    plt.show()
    show_markdown(O.caption("ood-differences"))
    show_markdown(O.family_text(runs))
    show_markdown(O.outside_text(runs))
    show_markdown(O.effects_text(runs))
    show_markdown(O.robustness_words(runs));

# %% [markdown]
# ## Appendix: the choice of prior on 2-D data (one seed)
#
# An illustration beside the question, not a test. A 2-5-5-2 tanh network, every weight
# Bayesian, trained with the whole training set as one minibatch on the *moons* and *circles*
# data (re-implemented in `helpers.make_toy_2d`) under each prior (the setup, with the training
# set's size, is printed below the next cell):
#
# | prior | $\log p(w)$ (up to a constant) |
# |---|---|
# | Normal $\mathcal N(0, 1)$ | $-w^2/2$ |
# | Laplace$(0, 1)$ | $-\lvert w\rvert$ |
# | Cauchy$(0, 1)$ | $-\log(1 + w^2)$ |
# | scale mixture ($\pi=\frac12$, $\sigma_1=1$, $\sigma_2=e^{-6}$) | $\log\big(\pi\mathcal N(w;0,\sigma_1^2) + (1-\pi)\mathcal N(w;0,\sigma_2^2)\big)$ |
# | flat (improper) | $0$: the KL term is $-\mathbb H[q]$ |
#
# **Learned prior scale.** A *hyperprior* (a prior over the prior's own scale $s$: half-normal
# or half-Cauchy, each of scale 1, or inverse-gamma with shape 1 and rate 1) and a variational
# posterior $q(\log s)=\mathcal N(m,\tau^2)$ per layer, learned with the weights; the objective gains $\mathrm{KL}[q(\log s)\,\Vert\,p(\log s)]$ with
# $p(\log s)=p_s(e^{\log s})\,e^{\log s}$ (`helpers.LearnedScalePrior`).

# %%
toy = build_toy(PROFILE, cfg.toy_n, cfg.toy_steps, seed=SEED, train=TRAIN_MISSING)
if not H.pending(toy, "the networks of the 2-D priors", retrain):
    toy_models, toy_acc, toy_data = toy
    rec = H.load_results(NB, "priors_2d")
    n_test, steps, n_train = (rec["config"][k] for k in ("n_test", "steps", "n_train"))
    check = U.collapse_check(toy_models, toy_data, toy_acc, n_test)
    show_markdown(U.toy_setup_text(rec))

# %% [markdown]
# Test accuracy of the predictive distribution (100 weight samples) on 1,000 fresh points, and
# the learned prior scale $e^{m}$ of each layer where it is learned; then the class-1
# probability on the moons and its standard deviation over weight samples (100 samples at each
# point of a grid), for every prior (the figure below; the circles' maps are not drawn). On
# the std rows, the dashed line lies 0.5 from the nearest training point.

# %%
def scales(ds, prior):
    layers = H.bayes_layers(toy_models[(ds, prior)])
    return " ".join(f"{m.prior.scale():.2f}" for m in layers) if "~" in prior else ""


if toy:
    show_markdown("**Table 5.4.** Test accuracy per prior and data set (one network each).")
    H.show_table(["prior", "moons", "circles", "learned scale per layer (moons | circles)"],
                 [[p, f"{toy_acc[('moons', p)]:.3f}", f"{toy_acc[('circles', p)]:.3f}",
                   " | ".join(filter(None, (scales("moons", p), scales("circles", p))))]
                  for p in PRIORS_2D])

# %%
for ds in ("moons",) if toy else ():
    torch.manual_seed(SEED)
    fig = prior_maps({p: toy_models[(ds, p)] for p in PRIORS_2D}, LIMS[ds], *toy_data[ds])
    fig.suptitle(f"{ds}: P(class 1) (top two rows) and its std over weight samples (bottom two)")
    U.style_maps(fig, toy_data[ds][0], LIMS[ds], U.at_chance(toy_acc, ds, n_test))
    H.savefig(fig, NB, f"priors-{ds}")
    plt.show()
    show_markdown(O.caption(f"priors-{ds}"))
if toy:
    stds = U.far_std(toy_models, toy_data, LIMS)
    show_markdown(U.appendix_text(toy_acc, n_test, steps, stds, check=check));

# %% [markdown]
# ## Takeaways

# %%
if runs:
    show_markdown(O.takeaways_text(runs));

# %% [markdown]
# ## Exercises
#
# 1. BBB's chosen $\rho_0$ sits at the end of its grid with the least initial posterior
#    uncertainty. Add $\rho_0=-8$ to BBB's grid in `helpers/alternatives_plan.py` and run its
#    search (`python tools/alternatives_search.py search --methods bbb`; four more trials, each
#    about as long as one of the ten BBB runs whose summed training time section 2 gives): does
#    the choice move?
# 2. The scores table of section 3 also scores the mutual information. For which methods does it
#    separate Fashion-MNIST better than the entropy? Compare the two AUROC columns seed by
#    seed (`helpers.stats.paired_t`) before reading a difference into the means.
# 3. In the appendix, train the Laplace-prior network on the circles again from other seeds, or
#    for ten times more steps: how often does it stay at chance?
# 4. Weight uncertainty is not tied to dense layers. `helpers.bayes_conv_net` is a Bayesian
#    conv net (two $5\times5$ convolutions with 32 filters, a 64-unit dense layer, every weight
#    under the paper's scale mixture); `helpers.uncertainty.build_conv_net(cfg, 0, train=True)`
#    trains it on MNIST (Adam, its learning rate shrunk by 0.955 per epoch; about 20
#    CPU-minutes). Score its
#    Fashion-MNIST AUROC with `helpers.uncertainty.sample_probs` and set it beside the BBB row
#    of the scores table in section 3 (one seed: a contrast, not a test).
