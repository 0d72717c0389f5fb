# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (bbb)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 03 — A contextual bandit: Thompson sampling with BBB (Figure 6)
#
# [← 02 Regression](02_regression_uncertainty.ipynb) · [README](../README.md) ·
# [04 Pruning →](04_pruning.ipynb)
#
# **The question.** Can weight uncertainty tell an agent *where to explore*? The paper turns
# UCI Mushroom into a bandit and finds that Thompson sampling with a BBB network loses less than
# ε-greedy agents ([Blundell et al. 2015](https://arxiv.org/abs/1505.05424), §5.3, Figure 6).
# The **regret** of a step is what an oracle that eats exactly the edible mushrooms expects to
# win minus what the agent's action expects to win (section 1); an agent that explores well
# keeps its cumulative regret low. A *buffer* is the store of past steps an agent learns from.
#
# **Runtime** (profile `default`, 2-core CPU): seconds with the committed results. Cold, the
# tuning (`tools/bandit_tuning.py`, 12 settings × 20,000 steps) and the reported runs
# (`tools/bandit_runs.py`, 2 buffers × 4 seeds × 50,000 steps) take hours (what they took here:
# [lab log](../docs/lab_log.md#notebook-03)).

# %% [markdown]
# *Terms.* **Regret**: as defined above; the agents are compared on their cumulative regret
# after the last step. **N**: what BBB's KL term is divided by ("KL / 4,096": $N$ = 4,096;
# "KL / max(4,096, n)": $N$ grows with $n$, the tuples stored; section 1). **Holm**: Holm's
# correction raises the p-values of BBB's three paired t-tests per buffer (one per other agent)
# to allow for testing three claims at once; *holds*: BBB lower, and the corrected test says so;
# *not resolved*: the test cannot tell (section 3 gives every verdict with its interval).
#
# **The answer**, rendered from the reported runs:

# %%
from helpers import bandit as B
from helpers.report import show_markdown
show_markdown(B.answer());  # the default profile's runs, results/03_contextual_bandit/

# %% [markdown]
# <div style="border:1px solid #888; padding:6px 10px">
#
# **Departures from the paper and choices made after seeing numbers.** The paper gives neither
# BBB's prior nor what the KL is divided by; both were tuned here on two seeds that are not
# reported (section 2), after a first choice of the same values on the regret of reported seeds
# ([docs/choices.md](../docs/choices.md), entry 7). The recipe that keeps every tuple, a
# departure from the paper's buffer, was added after the regret of reported seed 0 with the
# paper's buffer had been seen (entry 6). Only BBB was tuned; the greedy agents were not. The
# test of the paper's orderings (section 3) was chosen after the runs. Each Thompson-sampling
# decision averages the predictions of two posterior draws, as the paper's section 5.3 says
# ("we sampled the weights twice and averaged two of these outputs"); textbook Thompson
# sampling uses one. Figure 6 (section 3) draws the median over 4 seeds; the paper's curves are
# means of five runs (its caption), so the statistic and the run count differ. How the notebook
# got here: [lab log](../docs/lab_log.md#notebook-03).
#
# </div>
#
# **What you will see.** How the settings the paper leaves open were chosen (section 2);
# Figure 6 over the reported seeds, with the paper's buffer and with a recipe that keeps every
# tuple and scales the KL differently (section 3); how exploration fades (section 4).

# %% [markdown]
# ## Parameters

# %% tags=["parameters"]
PROFILE = "default"    # smoke | default | paper
TRAIN_MISSING = True   # run the tuning and the reported runs when their results are missing

# %%
import matplotlib.pyplot as plt

import helpers as H
from helpers import bandit as B
from helpers.report import show_markdown

# %%
NB = "03_contextual_bandit"
cfg = H.get_profile(NB, PROFILE)
H.use_style()
features, poisonous = H.load_mushroom()
print(f"{features.shape[0]:,} mushrooms, {features.shape[1]} one-hot features, "
      f"{int(poisonous.sum()):,} poisonous; {cfg.steps:,} steps, reported seeds {cfg.seeds}")

# %% [markdown]
# ## 1. The bandit
#
# Each step shows a random mushroom (22 categorical attributes, one-hot encoded); the agent eats
# it or passes. Eating an edible one pays $+5$; eating a poisonous one pays $-35$ or $+5$ with
# probability ½ each; passing pays 0. An oracle eats exactly the edible ones. The **regret** of a
# step is the oracle's expected reward minus the expected reward of the action taken: 15 for
# eating a poisonous mushroom, 5 for passing an edible one.
#
# Every agent is an MLP (two hidden layers of 100 ReLU units) that predicts the reward of an
# action from the mushroom's features and a one-hot action. After every step it makes 64 Adam
# updates (learning rate $10^{-3}$) on minibatches of 64 tuples (context, action, reward) from
# its **buffer**, the store of past steps.
#
# - **BBB** learns a Gaussian posterior $q(\mathbf w\mid\theta)$ over the weights of the network
#   $f(x,a;\mathbf w)$ (notebook 00), with prior $P(\mathbf w)$, by minimising, per minibatch $B$
#   and with $\mathbf w$ sampled from $q$,
#   $\frac{1}{|B|}\sum_{i\in B}\frac{(r_i-f(x_i,a_i;\mathbf w))^2}{2}
#   + \frac1N\big(\log q(\mathbf w\mid\theta)-\log P(\mathbf w)\big)$, a one-sample estimate
#   of the KL divergence scaled by $1/N$ ($N$: section 2). It acts by **Thompson sampling**:
#   draw weights from $q$, then take the action that network predicts to pay more. Where the
#   posterior is wide, draws disagree, so the agent sometimes tries the action it thinks worse;
#   as the posterior narrows, the draws agree and exploration fades. Textbook Thompson sampling
#   uses one draw per decision; here, as in the paper, each decision averages the predictions
#   of two draws (the box above).
# - **greedy** (plain greedy), **ε-greedy (1 %)**, **ε-greedy (5 %)**: one network each, acting
#   greedily on its prediction except with probability ε (0, 1 %, 5 %), when it acts at random.

# %% [markdown]
# ## 2. What the paper leaves open, and how it was chosen
#
# The paper gives neither the prior nor $N$ (what the KL is divided by). Its buffer of the last
# 4,096 tuples is one of several reasonable ones: [Riquelme, Tucker & Snoek
# (2018)](https://arxiv.org/abs/1802.09127), whose bandit benchmark includes this task, keep every
# tuple. A **recipe** is a buffer with its $N$. The declared grid (`helpers/profiles.py`) has
# four priors (three Gaussian priors, each with its standard deviation $\sigma_p$, and a scale
# mixture) and three recipes:
#
# - last 4,096 tuples, KL / 4,096 (the paper's buffer);
# - every tuple, KL / 4,096;
# - every tuple, KL / max(4,096, tuples stored).
#
# We run BBB alone for 20,000 steps under each setting, on **tuning seeds** 100 and 101 (a seed
# fixes the mushrooms shown and the networks' random draws; these two are not reported). For
# each buffer we keep the setting with the lowest mean regret. The grid was built around a
# prior and a KL scaling first picked on reported seeds, and the recipe that keeps every tuple
# entered it after a reported seed's regret had been seen (the box above): the reported seeds
# played a part in these choices, above all in the results of that recipe.

# %%
tuning, reported = B.ensure(PROFILE, train=TRAIN_MISSING, progress_fn=print)
H.pending(tuning and tuning["metrics"]["complete"], "some settings of the tuning",
          f"python tools/bandit_tuning.py --profile {PROFILE}")
H.pending(reported, "the reported runs (seeds 0-3, 50,000 steps per buffer)",
          f"python tools/bandit_runs.py --profile {PROFILE}");

# %% [markdown]
# **Tuning table.** One row per setting: BBB's cumulative regret after 20,000 steps on each
# tuning seed, and their mean. ✓ marks the setting chosen for each buffer.

# %%
if tuning:  # a partial tuning marks no choice
    H.show_table(*B.tuning_rows(tuning));

# %%
if tuning and tuning["metrics"]["complete"]:
    show_markdown(B.tuning_text(tuning));

# %% [markdown]
# ## 3. Figure 6: cumulative regret
#
# The setting chosen for each buffer, run on the reported seeds for 50,000 steps; all four agents
# see the same mushrooms on a given seed.

# %%
if reported:
    show_markdown(B.recipes_text(reported));

# %% [markdown]
# **Figure 6**, one panel per buffer: cumulative regret against steps, on a logarithmic y axis.
# Thick lines: median over seeds (one failed run moves a mean, not the median: the answer
# above); thin lines: each seed; crosses: the paper's curves read off at 10,000 and 50,000
# steps (possibly another statistic over another number of runs: the box at the top). $n$: the tuples
# stored.

# %%
if reported:
    fig = B.figure6(reported)
    H.savefig(fig, NB, "figure6")
    plt.show()

# %% [markdown]
# **Final-regret table.** Each agent's cumulative regret after 50,000 steps: mean ± standard
# deviation over the reported seeds, the median, each seed (in seed order), on how many seeds
# the agent had the lowest regret of the four, and the paper's value. The last column names the
# buffer, what was tuned, and what was chosen after reported seeds had been seen (section 2).

# %%
if reported:
    H.show_table(*B.headline_rows(reported));

# %%
if reported:
    show_markdown(B.figure6_text(reported));

# %% [markdown]
# **The test.** The standard paired test of the project's statistics module
# (`helpers/stats.py`), chosen after the runs had been seen: read its *holds* and *not
# resolved* as post hoc.

# %%
if reported:
    show_markdown(B.headline_text(reported));

# %% [markdown]
# ## 4. How exploration fades
#
# **Exploration figure.** One panel per agent: the share of the poisonous mushrooms shown that
# it ate, averaged over the 50 records of 100 steps up to each step (fewer at the start), one
# colour per buffer; the line is the mean over the seeds, the band spans the seeds. The axis is
# linear below 0.1 % and logarithmic above. Thompson sampling eats them only while its
# posterior still allows that they are edible; ε-greedy (1 %) and ε-greedy (5 %) keep eating
# some at random (the dotted line: what random actions alone eat). Right: the mean posterior
# $\sigma$ of BBB's weights. This moving average spans 50 records, longer than the exploration
# table's last 1,000 steps: a small share late in the run (plain greedy's with the paper's buffer,
# near $10^{-3}$ in the figure) can round to zero in the table.

# %%
if reported:
    fig = B.exploration_figure(reported)
    H.savefig(fig, NB, "exploration")
    plt.show()

# %% [markdown]
# **Exploration table.** The share of the poisonous mushrooms shown that each agent ate over
# the last 1,000 steps: each seed (in seed order) and their mean.

# %%
if reported:
    H.show_table(*B.exploration_rows(reported));

# %%
if reported:  # the BBB panel, the ε-greedy panels, then the posterior σ panel
    show_markdown("\n".join([B.exploration_text(reported, tuning),
                             B.epsilon_greedy_text(reported),
                             B.posterior_sigma_text(reported)]));

# %% [markdown]
# ## Takeaways
#
# *Holds* and *not resolved* are the verdicts of section 3's paired test, chosen after the runs;
# the rest are descriptions and counts. BBB's prior and KL scaling were tuned on seeds that are
# not reported but first picked on reported ones, and the recipe that keeps every tuple was
# added after a reported seed's regret had been seen (the box at the top).

# %%
if reported:
    show_markdown(B.takeaways_text(reported));

# %% [markdown]
# ## Exercises
#
# 1. Add $\sigma_p = 0.03$ to the tuning grid and rerun `tools/bandit_tuning.py`: does the
#    choice move?
# 2. Read `reported_paper.json`: on which steps does BBB's regret grow fastest, and does the
#    share of poisonous mushrooms it eats rise at the same time?
# 3. Give the ε-greedy agents a decaying ε ($\varepsilon_t = \varepsilon_0/\sqrt{t/1000}$) in
#    `helpers.bandit.run` and compare with Thompson sampling.
