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
# [← 03 Bandit](03_contextual_bandit.ipynb) · [README](../README.md) ·
# [05 Uncertainty →](05_uncertainty.ipynb)
#
# **The question.** A BBB network knows how sure it is of every weight: each weight has a
# posterior mean $\mu$ and standard deviation $\sigma$. The paper ranks weights by their *signal-to-noise ratio* (SNR) $|\mu|/\sigma$, quoted
# in decibels (dB) without a formula; we read it as $10\log_{10}(|\mu|/\sigma)$, so 0 dB means
# $|\mu|=\sigma$. It reports that
# removing 95 % of the weights of a 2×1200 network (two hidden layers of that many units) adds
# +0.05 percentage points (pp: the difference of two error rates in %) of test error, and draws
# the SNR density with two modes
# ([Blundell et al. 2015](https://arxiv.org/abs/1505.05424), §5.1, Table 2, Figure 4).
# We ask four things: **(1)** does pruning by SNR remove 95 % of the weights at Table 2's small
# cost? **(2)** does $\sigma$ add anything over ranking by $|\mu|$ alone? **(3)** is it special
# to BBB, or do plain and dropout networks pruned by weight size do as well? **(4)** does the
# KL weighting across an epoch's minibatches matter: the paper's proposed eq. 9 (the weight
# halves from one minibatch to the next) against eq. 8's even $1/M$ each, which our networks
# use? Besides 2×1200 we prune 2×400 networks, the width of question 4's test.
#
# **Runtime**: seconds (profile `default`), from stored results in `results/04_pruning/`.

# %% tags=["parameters"]
PROFILE = "default"    # smoke | default | paper
TRAIN_MISSING = False  # retrain notebook 01's networks whose checkpoints are missing
DEVICE = None

# %%
import matplotlib.pyplot as plt
import helpers as H
from helpers import pruning, pruning_plan
from helpers.report import show_markdown
NB = "04_pruning"
cfg = H.get_profile(NB, PROFILE)
H.use_style()
rec = pruning.build(cfg, train=TRAIN_MISSING, device=H.get_device(DEVICE))
dip = rec and pruning.build_dip(rec)
refs, start_refs = pruning_plan.load_both()

# %%
if rec:
    show_markdown(pruning_plan.answer_text(rec, dip["metrics"], refs, v3=start_refs));

# %% [markdown]
# **Terms used in the answer.**
# - *Holds* / *reversed* / *not resolved*: a claim "a < b" is tested by a two-sided paired
#   $t$-test over the seeds; its $p$-value, raised by Holm's correction for the claims tested
#   together (a *family*), is below 0.05 with a below b / above b / otherwise. *Holm's
#   correction*: the family's $p$-values in increasing order (*Holm's order*), the $k$-th
#   multiplied by the number of claims from it on, never below the one before.
# - *95 % interval*: the plain (unadjusted) $t$ interval of one difference a − b; the verdict
#   uses Holm's correction, so an interval that excludes 0 can still read "not resolved".
#   *Measurable*: a difference whose 95 % interval excludes 0.
# - *Declared*: a claim written down, with its family and verdict rule, before its test over the
#   seeds was computed; each section says what had been seen by then. *Exploratory*: a reading
#   no declared test covers, or a declared claim whose numbers on both sides had been seen on
#   every seed (marked *[exploratory]*); described by its interval, with no verdict word.
#   Where only some seeds had been seen, the unseen ones are also given alone.
# - *Dip*: the low point of the SNR density between its two modes (peaks).

# %% [markdown]
# **The networks, named once.** A *plain network* has no weight uncertainty and no dropout;
# every network here is trained with the Adam optimiser. A *warm start* is a BBB run whose posterior means start from a trained plain
# network. Each kind has seeds 0, 1 and 2; recipes from the run
# records (π: the prior's mixture weight; samples: weight samples per step; in full:
# [docs/04_details.md](../docs/04_details.md#the-networks-pruned)):

# %%
if rec:
    H.show_table(*pruning_plan.names_rows(rec, refs, start_refs));
    print(pruning.pruned_words(rec, pruning_plan.replication_seeds(refs)))

# %% [markdown]
# > **Departures from the paper and choices made after seeing numbers.**
# > - The BBB nets are Adam warm starts (not notebook 01's final Table 1 nets), not the
# >   paper's 600 epochs of plain SGD from scratch: notebook 01's runs of the paper's recipe
# >   left σ almost where it started, so their SNR would rank the weights by $|\mu|$ alone
# >   ([docs/04_details.md](../docs/04_details.md#the-networks-pruned)). The KL is
# >   weighted as the paper's eq. 8, where the paper proposes eq. 9 (section 4).
# > - Each test was declared after some numbers had been seen; each section says which
# >   ([docs/choices.md](../docs/choices.md), notebook 04's section).
# > - Figure 4 is read at the density's dip, a reading chosen after seeing the densities
# >   ([docs/lab_log.md](../docs/lab_log.md#notebook-04)).
# > - Tables and checks left out of this story: [docs/04_details.md](../docs/04_details.md).
#
# **Rebuilding the results.** `make notebooks ONLY=04 TRAIN=1` (the pruned networks);
# `python tools/pruning_refs.py run && python tools/pruning_refs.py analyse` (sections 3–4).

# %%
retrain = f"make notebooks ONLY=04 PROFILE={PROFILE} TRAIN=1"
if not H.pending(rec, "the pruning analysis (results/04_pruning/snr.json)", retrain):
    models = rec["metrics"]["models"]
    H.pending(rec["metrics"].get("complete", True), f"some networks (the 2×{cfg.H} one or the "
              "other KL weighting's)", retrain)
    print(pruning.retrain_words(rec))
    print(pruning_plan.refs_time_words(refs, start_refs))

# %% [markdown]
# ## 1. Figure 4: the signal-to-noise ratio, read at the dip
#
# The SNR of every weight (biases are kept) of the BBB nets. **The figure**: the 2×1200 seed-0
# network's density on a linear axis as the paper draws it and on a log axis with a smoothed
# curve (a Gaussian kernel density estimate), the share of weights above each SNR, and the
# smoothed densities of all six networks (inset: each one's dip). The paper marks the 75 %
# cut-off; we read the density at its dip.

# %%
if rec:
    fig = pruning.figure4(models[0], dip["metrics"], models)
    H.savefig(fig, NB, "figure4")
    plt.show()
    cut75 = ("75", models[0]["cuts_db"]["75"])
    show_markdown(pruning.dip_text(dip["metrics"], cut75, models[0], method=False));

# %% [markdown]
# ## 2. Table 2: test error after pruning
#
# The lowest-scoring fraction of weights is set to zero and the posterior means of the rest
# predict, without retraining. The fractions are fixed in advance; the test set only reports
# the error at each. First, why our unpruned error differs from the paper's.

# %%
if rec:
    show_markdown(pruning_plan.networks_text(rec, start_refs, ("paper",)))

# %% [markdown]
# **Table 2 (ours beside the paper's).** Test error, mean ± standard deviation (sd) over the
# seeds. Ours err more unpruned (the 0 % row), so what compares with the paper is the error
# pruning *adds* (the line under the table).

# %%
if rec:
    H.show_table(*pruning.table2_rows(rec, cfg.compare_H));
    print(pruning.gap_line(rec, 95))
    show_markdown(pruning.full_row_line(rec))

# %% [markdown]
# **The pruning curves.** The same errors, one panel per width (open marker: the mean; dots:
# each seed), and random removal at both widths.

# %%
if rec:
    fig = pruning.curves_figure(rec)
    H.savefig(fig, NB, "pruning-curves")
    plt.show()
    show_markdown(pruning.table2_text(rec, cfg.compare_H, full_row=False));

# %% [markdown]
# ## 3. Is it special to BBB, and does σ help?
#
# The plain and dropout references (named at the top) are pruned at the same fractions, without
# retraining, by weight magnitude $|w|$, the simplest rule a practitioner would use. One
# family of six claims over the three seeds, at 95 % and 98 % removed: BBB by SNR errs less
# (*error after pruning*) than plain by $|w|$ and dropout by $|w|$ (is it special to BBB?) and
# than BBB by $|\mu|$ (does σ help? *[exploratory]*: BBB's errors had all been seen; no
# reference's). A secondary family, *error added by pruning* (minus the unpruned
# error), is read in one line.
#
# **The error table** (2×1200, mean ± sd; BBB's in Table 2) and **the test table**.

# %%
ARMS_1200 = ["sgd_magnitude", "dropout_magnitude", "sgd_random", "dropout_random"]
FAMILIES_1200 = ("error after pruning", "error added by pruning")
if not H.pending(refs, *pruning_plan.MISSING["references"]):
    H.show_table(*pruning_plan.table_rows(refs, ARMS_1200));
    show_markdown(pruning_plan.needs_text(refs, FAMILIES_1200, explain=False));
    H.show_table(*pruning_plan.test_rows(refs, FAMILIES_1200[:1]));
    show_markdown(pruning_plan.reading_text(refs, rec=rec));

# %% [markdown]
# The references were trained without any pull towards zero, while each BBB net is pulled
# towards zero by the prior's narrow component: the
# comparison above tests the regulariser as much as the ranking. The next claims set BBB by SNR
# against the very network each BBB run starts from, pruned by $|w|$ (declared after BBB's
# errors and the plain references of seeds 0–1 had been seen, before any start net was pruned).

# %%
if not H.pending(start_refs, *pruning_plan.MISSING["starts"]):
    starts = pruning_plan.starting_networks(start_refs, refs)
    show_markdown(pruning_plan.starting_network_text(starts[0], recipe=False))  # names table
    if start_refs["retrained"]:
        H.show_table(*pruning_plan.table_rows(start_refs, ["start_magnitude", "start_random"]));

# %%
if start_refs and start_refs["retrained"]:
    show_markdown(pruning_plan.needs_text(start_refs, explain=False));
    H.show_table(*pruning_plan.test_rows(start_refs));
    show_markdown(pruning_plan.start_reading_text(start_refs, refs, rec));

# %% [markdown]
# ## 4. Does the KL weighting change how prunable a network is?
#
# Each epoch's KL term is split over its $M$ minibatches. The paper's eq. 9 gives minibatch $i$
# a weight $\pi_i$ (not the prior's $\pi$) and proposes $\pi_i=2^{M-i}/(2^M-1)$ (*eq. 9*
# below): the weights halve from one minibatch to the next; eq. 8 gives $1/M$ to every
# minibatch (what the pruned networks use). Both sum to 1 over an epoch: eq. 9 moves the KL to
# the epoch's first few minibatches, it does not shrink it. The paper does not say which
# weighting its Table 2 used. The 2×400 recipe with each weighting: **the figure** shows their
# SNR densities for seed 0; the test errors follow over three seeds.

# %%
alt = rec and rec["metrics"]["other_kl_weighting"]
if not H.pending(alt, "the network with the other KL weighting", retrain):
    base = next(m for m in models if m["H"] == cfg.compare_H and m["seed"] == 0)
    fig = pruning.weighting_figure(base, alt, cfg.compare_H)
    H.savefig(fig, NB, "snr-by-kl-weighting")
    plt.show()
    show_markdown(pruning.weighting_text(base, alt, errors=False));

# %% [markdown]
# A test over the three seeds asks whether eq. 8's weights give the lower test error after SNR
# pruning at 95 % and 98 % removed, declared after eq. 9's seed-0 net and every eq. 8 net had
# been seen (seed 0 on both sides). **The error table** (eq. 9's; eq. 8's are Table 2's 2×400
# SNR column) and **the test table** (a verdict needs what section 3's two claims against the
# start nets need).

# %%
if refs:
    H.show_table(*pruning_plan.table_rows(refs, ["blundell_snr"]));
    H.show_table(*pruning_plan.test_rows(refs, ("KL weighting",)));
    show_markdown(pruning_plan.kl_reading_text(refs));

# %% [markdown]
# ## Takeaways

# %%
if rec:
    show_markdown(pruning_plan.takeaways_text(rec, dip["metrics"], refs, start_refs));

# %% [markdown]
# ## Appendix A. SNR against $|\mu|$, network by network
#
# Both rankings are scored on the same test images by *McNemar's exact test*, a paired test
# from the images only one of them gets wrong, per network and fraction, uncorrected for the
# number of tests (the counts: [docs/04_details.md](../docs/04_details.md#snr-against-μ-network-by-network-appendix-as-table)).
# The answer's 2×400 finding rests on these tests.

# %%
if rec:
    show_markdown(pruning.mcnemar_text(rec));

# %% [markdown]
# ## Appendix B. What pruning buys
#
# The pruned 2×1200 seed-0 network stored as compressed-sparse-row (CSR) matrices (each
# non-zero value with an int32 column index) against dense ones: the size `torch.save` writes
# (MiB, $2^{20}$ bytes) and the time to predict the test set (median of 5 repeats).

# %%
if rec:
    H.show_table(*pruning.storage_rows(rec));
    show_markdown(pruning.storage_text(rec));

# %% [markdown]
# ## Exercises
#
# 1. Prune by $\sigma$ alone (largest first): how does it compare with SNR and $|\mu|$?
# 2. After removing 98 %, fine-tune the remaining means for one epoch: how much error comes back?
# 3. Time both products at 90, 93 and 97 % removed: is the sparse one ever faster?
