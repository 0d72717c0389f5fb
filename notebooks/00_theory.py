# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (bbb)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 00 — The theory of Bayes by Backprop
#
# [README](../README.md) · [01 MNIST →](01_mnist_classification.ipynb)
#
# **The question.** How can a network learn a *distribution* over every weight instead of a
# single value, and what exactly does "Bayes by Backprop" (BBB) compute?
# ([Blundell, Cornebise, Kavukcuoglu & Wierstra, ICML 2015](https://arxiv.org/abs/1505.05424),
# §3.)
#
# **The answer in brief.** BBB gives every weight a Gaussian
# $\mathcal N(\mu, \sigma^2)$ and fits every $\mu$ and $\sigma$ (through $\rho$, section 4) by gradient descent on the
# *variational free energy*: the Kullback–Leibler (KL) divergence $\mathrm{KL}[q\,\|\,P]$ between
# these Gaussians $q$ and the prior $P$, minus the expected log-likelihood of the data. It
# estimates both terms with sampled weights $\mathbf w = \mu + \sigma\,\epsilon$, where
# $\epsilon \sim \mathcal N(0, 1)$ is fresh noise: the estimate is differentiable and its
# gradient unbiased. Each step is checked numerically below, and the last section rebuilds the
# whole algorithm as one short class of plain PyTorch that gives the same loss and gradients as
# `helpers.BayesLinear`, the project's fast layer (a hand-written backward pass over compiled C
# code). What the checks found is rendered just below.
#
# Each idea below comes with a figure or a numerical check, and with the `helpers` function
# the later notebooks use:
#
# | idea | paper | `helpers` |
# |---|---|---|
# | Bayes' rule for weights | §3 (its opening) | — |
# | variational free energy: the negative of the evidence lower bound (ELBO) | eq. (1)–(2) | `elbo(...).loss` (−ELBO) |
# | reparameterisation trick, unbiased gradients | §3.1, Prop. 1 | `BayesLinear` |
# | $\sigma = \log(1+e^\rho)$: an unconstrained $\rho$ per weight | §3.2 | `BayesLinear.weight_sigma` |
# | priors: Gaussian, scale mixture (+ Laplace, Cauchy) | §3.3, eq. (7) | `helpers.priors` |
# | Monte-Carlo vs closed-form KL | §3.1 | `BayesLinear.kl` (one sample) vs `.kl_closed()` |
# | KL weighting over the $M$ minibatches of an epoch: $1/M$ each (eq. 8), or a share $\pi_i$ that halves from one minibatch to the next (eq. 9) | §3.4 | `kl_weights` |
# | the whole algorithm from scratch, checked against the fast layer | §3.2 | `BayesLinear` |
#
# **Runtime** (profile `default`; profiles: see Parameters): minutes on a CPU; the recorded
# time of the run shown is just below. Section 8 needs MNIST, which
# `helpers.load_mnist` downloads on first use into the folder `BBB_DATA_DIR` (default `data/`;
# `make` sets `../shared/data` when MNIST is there).

# %%
from helpers import theory
from helpers.report import show_markdown

show_markdown(theory.first_screen());

# %% [markdown]
# ## Parameters
# Everything that changes between runs lives in the next cell. `PROFILE` picks a row of
# `helpers.profiles`: `smoke` is a seconds-long test of the code, `default` the run shown here,
# `paper` takes more Monte-Carlo draws and trains section 8 on the 50,000 training images of
# notebook 01's split. A
# setting left at `None` takes the profile's value.

# %% tags=["parameters"]
PROFILE = "default"   # smoke | default | paper
SEED = 0
DEVICE = "cpu"        # this notebook is tiny; None picks cuda > mps > cpu
N_DRAWS = None        # Monte-Carlo draws for the gradient check
GRAD_REPS = None      # single-draw gradients shown in the histogram
M = None              # number of minibatches in the KL-weighting figure

# %% [markdown]
# Imports, settings and seeding, then the box of this notebook's departures from the paper. (A
# code cell whose first line is `# NBVAL_CHECK_OUTPUT` is re-run by the tests, which compare its
# output with the committed one; `# noqa` silences the style checker on one line.)

# %%
import math
import time

import matplotlib.pyplot as plt
import torch
from torch.nn import functional as F

import helpers as H

# %%
cfg = H.get_profile("00_theory", PROFILE, n_draws=N_DRAWS, grad_reps=GRAD_REPS, M=M)
device = H.get_device(DEVICE)
H.seed_everything(SEED)
H.use_style()
NB = "00_theory"
t_start = time.perf_counter()
show_markdown(theory.departures(cfg));

# %% [markdown]
# ## 1. Bayes' rule for weights
#
# A network defines a likelihood $P(\mathcal D \mid \mathbf w)$. With a prior $P(\mathbf w)$,
# Bayes' rule gives the posterior
# $$P(\mathbf w \mid \mathcal D) = \frac{P(\mathcal D \mid \mathbf w)\,P(\mathbf w)}{\int P(\mathcal D \mid \mathbf w')\,P(\mathbf w')\,d\mathbf w'},$$
# and predictions average over it:
# $P(\hat y \mid \hat x) = \mathbb E_{P(\mathbf w\mid\mathcal D)}[P(\hat y \mid \hat x, \mathbf w)]$
# — an ensemble of infinitely many networks. For a single weight everything can be computed on a
# grid: the model $y = w x + \eta$ with noise $\eta \sim \mathcal N(0, 0.5^2)$, a $\mathcal N(0, 1)$
# prior, and 5 observations at $x = -1, -0.5, 0, 0.5, 1$. With only 5 noisy points the posterior need not be centred on the true $w$: it describes what
# these particular points support, and the true value may well sit in its tail.

# %%
w_true, noise = 0.8, 0.5
x_obs = torch.linspace(-1, 1, 5)
y_obs = w_true * x_obs + noise * torch.randn(5)
print("y =", [round(v, 2) for v in y_obs.tolist()])
grid = torch.linspace(-2, 3, 2001)
prior = H.GaussianPrior(1.0)

# %%

def log_lik(w, x, y):
    """Log-likelihood (up to a constant) of every grid value of w."""
    return (-0.5 * ((y[None] - w[:, None] * x[None]) / noise) ** 2).sum(1)


def normalise(logp):
    """Density on the grid from unnormalised log-values (through logsumexp)."""
    p = torch.exp(logp - torch.logsumexp(logp, 0))
    return p / torch.trapezoid(p, grid)

# %%
def plot_bayes_rule(ax, n):
    """Prior, likelihood of the first n observations and posterior on the grid."""
    lp, ll = prior.log_prob(grid), log_lik(grid, x_obs[:n], y_obs[:n])
    blue, orange, green = theory.OKABE_ITO[:3]
    ax.plot(grid, normalise(lp), color=blue, ls="--", label="prior $P(w)$")
    ax.plot(grid, normalise(lp + ll), color=green, lw=3, label="posterior $P(w|\\mathcal{D})$")
    ax.plot(grid, normalise(ll), color=orange, ls="-.", lw=1.5,
            label="likelihood $P(\\mathcal{D}|w)$ (normalised)")
    ax.axvline(w_true, color="k", ls=":", lw=1, label="true $w$")
    ax.set(title=f"the first {n} observations (x = {', '.join(f'{v:g}' for v in x_obs[:n].tolist())})",
           xlabel="weight $w$")

# %% [markdown]
# The prior, the likelihood of the first 2 and of all 5 observations, and the posterior:

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True, constrained_layout=True)
for ax, n in zip(axes, (2, 5)):
    plot_bayes_rule(ax, n)
axes[0].set_ylabel("density")
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=4, fontsize=9)
H.savefig(fig, NB, "bayes-rule")
plt.show()

# %% [markdown]
# The posterior is the prior times the likelihood, renormalised. With 2 points it is wide, a
# little narrower than the likelihood and shifted slightly towards the prior's 0 (the prior counts
# for about a sixth of the precision here); with 5 points it is narrower and follows the
# likelihood.

# %% [markdown]
# ## 2. The variational free energy
#
# The normalising integral is intractable for a network, so BBB fits a diagonal Gaussian
# $q(\mathbf w \mid \theta)$, $\theta = (\mu, \rho)$, by minimising the *variational free energy*
# (the negative of the evidence lower bound, ELBO; eq. 1–2)
# $$\mathcal F(\mathcal D, \theta) = \mathrm{KL}\left[q(\mathbf w\mid\theta)\,\|\,P(\mathbf w)\right] - \mathbb E_{q(\mathbf w\mid\theta)}\left[\log P(\mathcal D\mid\mathbf w)\right]
# \approx \frac1S\sum_{s=1}^S \Big[\log q(\mathbf w^{(s)}\mid\theta) - \log P(\mathbf w^{(s)}) - \log P(\mathcal D\mid\mathbf w^{(s)})\Big],$$
# where $\mathbf w^{(1)},\dots,\mathbf w^{(S)} \sim q(\mathbf w\mid\theta)$ are $S$ sampled weight vectors. It trades data fit against staying close to the prior. In `helpers` this is
# `elbo(model, x, y, kl_weight, n_samples).loss`. Below, one `BayesLinear(1, 1, bias=False)` is fit
# to the same problem, starting from $\rho_0 = -1$ ($\sigma_0 = \log(1+e^{-1}) \approx 0.31$); the
# posterior is Gaussian here, so $q$ can match it (up to the noise of the stochastic optimiser,
# which a decaying learning rate tames). The line printed under the figure gives the gaps between
# $q$ and the exact posterior in units of the posterior's standard deviation (sd), and a round
# bound above both; that bound describes the fit, it is not a pass criterion (this check has none).

# %%
def fit_q(n_steps, n_samples=32):
    """Fit one BayesLinear weight to (x_obs, y_obs) by minimising the free energy."""
    layer = H.BayesLinear(1, 1, bias=False, prior=H.GaussianPrior(1.0), rho_init=-1.0)
    opt = torch.optim.Adam(layer.parameters(), lr=0.05)
    decay = torch.optim.lr_scheduler.CosineAnnealingLR(opt, n_steps)
    nll = lambda out, y: H.gaussian_nll(out.squeeze(-1), y, noise)  # noqa: E731
    for _ in range(n_steps):
        parts = H.elbo(layer, x_obs[:, None], y_obs, kl_weight=1.0, n_samples=n_samples, nll=nll)
        opt.zero_grad()
        parts.loss.backward()
        opt.step()
        decay.step()
    return layer

# %%
layer = fit_q(300 if PROFILE == "smoke" else 3000)

# %% [markdown]
# The fitted $q$ against the exact posterior on the grid:

# %%
mu_q, sigma_q = layer.weight_mu.item(), layer.weight_sigma.item()
post = normalise(prior.log_prob(grid) + log_lik(grid, x_obs, y_obs))
mean_exact = torch.trapezoid(grid * post, grid).item()
sd_exact = torch.trapezoid((grid - mean_exact) ** 2 * post, grid).sqrt().item()

# %%
fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(grid, post, lw=2.5, label=f"exact posterior: mean {mean_exact:.3f}, sd {sd_exact:.3f}")
ax.plot(grid, torch.distributions.Normal(mu_q, sigma_q).log_prob(grid).exp(), "--", lw=2,
        label=f"BBB $q(w|\\mu,\\sigma)$: mean {mu_q:.3f}, sd {sigma_q:.3f}")
ax.set(xlabel="weight $w$", ylabel="density", title="BBB's $q$ against the exact posterior",
       xlim=(mean_exact - 5 * sd_exact, mean_exact + 5 * sd_exact), ylim=(0, 1.6 * post.max()))
ax.legend(fontsize=9, loc="upper left")
H.savefig(fig, NB, "variational-fit")
plt.show()
print(theory.fit_gap_line(mu_q, sigma_q, mean_exact, sd_exact))

# %% [markdown]
# The two curves lie on top of each other, and both printed gaps are a small fraction of the
# posterior's sd: when the posterior is Gaussian, minimising the free energy recovers it.

# %% [markdown]
# ## 3. The reparameterisation trick gives unbiased gradients
#
# Proposition 1 of the paper: if $\mathbf w = t(\theta, \epsilon) = \mu + \sigma\circ\epsilon$ with
# $\epsilon \sim \mathcal N(0, I)$, then
# $\frac{\partial}{\partial\theta}\mathbb E_q[f(\mathbf w,\theta)] = \mathbb E_\epsilon\!\left[\frac{\partial f}{\partial \mathbf w}\frac{\partial \mathbf w}{\partial\theta} + \frac{\partial f}{\partial\theta}\right].$
# The right-hand side has two terms: the *path* term, $f$'s dependence on $\theta$ through the
# sampled $\mathbf w$, and the *direct* term $\partial f/\partial\theta$, for an $f$ that also
# depends on $\theta$ itself. BBB's $f = \log q(\mathbf w\mid\theta) - \log P(\mathbf w) -
# \log P(\mathcal D\mid\mathbf w)$ has both: only $\log q$ depends on $\theta$ directly. So the
# proposition is checked twice, on functions whose expectation is known in closed form:
#
# 1. $f(w) = w^2$ (path term only): $\mathbb E[w^2] = \mu^2 + \sigma^2$, so
#    $\partial_\mu = 2\mu$ and $\partial_\sigma = 2\sigma$. Each draw gives the estimate
#    $(2w,\; 2w\epsilon)$; their average must match the exact values.
# 2. $f(w, \theta) = \log q(w\mid\theta)$, BBB's own $\theta$-dependent term (below the
#    histogram).
#
# **The criterion for the Monte-Carlo checks (this section and section 6):** an estimate agrees
# with the exact value when it lies within 4 standard errors (s.e.) of it ($|z| < 4$, $z$ = the
# gap in standard errors), which an unbiased estimator misses with probability
# $6\times10^{-5}$. Section 6's figure draws $\pm 2$ s.e. bars, which an unbiased estimator's
# bar misses about one time in twenty.

# %%
mu = torch.tensor(0.6, dtype=torch.float64, requires_grad=True)
sigma = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
eps = torch.randn(cfg.n_draws, dtype=torch.float64)
w = mu + sigma * eps
per_draw_mu, per_draw_sigma = 2 * w.detach(), 2 * w.detach() * eps
(w ** 2).mean().backward()  # autograd through w = mu + sigma * eps: the mean of per-draw gradients

# %%
# NBVAL_CHECK_OUTPUT
checks = {}
for name, est, exact, per in (("mu", mu.grad.item(), 2 * 0.6, per_draw_mu),
                              ("sigma", sigma.grad.item(), 2 * 0.3, per_draw_sigma)):
    se = per.std().item() / math.sqrt(cfg.n_draws)
    ok = abs(est - exact) < 4 * se
    checks[name] = dict(estimate=est, exact=exact, standard_error=se, within_4se=ok)
    print(f"d/d{name:<5}: Monte Carlo {est:.4f} +- {se:.4f}   exact {exact:.4f}   "
          f"within 4 s.e.: {ok}")

# %% [markdown]
# A histogram of the first single-draw gradients, and their mean over all draws (the legend
# gives both counts):

# %%
fig = theory.gradient_histograms({"mu": per_draw_mu, "sigma": per_draw_sigma},
                                {"mu": 1.2, "sigma": 0.6}, shown=cfg.grad_reps)
H.savefig(fig, NB, "reparam-gradients")
plt.show()

# %% [markdown]
# Single-draw estimates spread widely around the exact gradient (dashed line), yet the mean over
# all draws (the triangle; its value is printed in the panel) lands on the exact value in both
# panels. The gradient for $\sigma$ is skewed: $2w\epsilon = 2(\mu + \sigma\epsilon)\epsilon$ is a
# parabola in $\epsilon$ whose minimum, $-\mu^2/(2\sigma) = -0.6$ here, is the histogram's hard
# left edge, while its right tail is long. So one weight sample per step gives an unbiased but
# noisy gradient, and stochastic gradient descent tolerates that noise, as it tolerates the noise
# of a minibatch (section 6 finds the same for the KL).

# %% [markdown]
# **The direct term.** For $f = \log q(w\mid\theta)$ with $q = \mathcal N(\mu, \sigma^2)$,
# $\mathbb E_q[\log q] = -\log\sigma - \frac12\log(2\pi e)$, so the exact gradient is $0$ for
# $\mu$ and $-1/\sigma$ for $\sigma$. With the same draws $\epsilon$, autograd gives each draw's
# path term (the $\theta$ inside $\log q$ held fixed), its direct term ($\mathbf w$ held fixed),
# and their sum, Proposition 1's estimate:

# %%
# NBVAL_CHECK_OUTPUT
log_q_check = theory.log_q_gradient_check(0.6, 0.3, eps)
print("\n".join(theory.log_q_gradient_lines(log_q_check)))

# %% [markdown]
# The direct term's expectation is zero (the expected gradient of $\log q$ with respect to its
# own parameters always is), so here it adds no bias. What it does is cancel the path term's
# noise: at $\mathbf w = \mu + \sigma\epsilon$, $\log q = -\log\sigma - \epsilon^2/2 + c$, whose
# gradient with $\epsilon$ held fixed is exactly $(0, -1/\sigma)$, so the sum is exact in every
# draw, while each term alone scatters (its standard error is printed). The fast layer of
# section 8 uses this form of $\log q$.

# %% [markdown]
# ## 4. $\sigma = \mathrm{softplus}(\rho) = \log(1 + e^{\rho})$
#
# The paper parameterises the standard deviation through $\rho$ so that $\sigma$ is always positive
# while $\rho$ is unconstrained. For very negative $\rho$, $\sigma \approx e^{\rho}$: an
# initialisation $\rho_0 = -5$ gives $\sigma_0 \approx 0.0067$, an almost deterministic start. It is
# the start of section 8 below and of notebook 01's networks trained the paper's way, with plain
# stochastic gradient descent (its networks trained with the Adam optimiser start lower, at
# $\rho_0 = -6$). The paper gives no $\rho_0$, so
# this is a choice of ours; each later notebook states the value it uses.
# `torch.nn.functional.softplus` computes it without overflow for large $\rho$.

# %%
fig = theory.softplus_figure(rho0=-5.0)
H.savefig(fig, NB, "softplus")
plt.show()
print(f"rho0 = -5 -> sigma = {F.softplus(torch.tensor(-5.0)).item():.5f}")

# %% [markdown]
# Left: $\sigma$ is positive for every $\rho$ and grows like $\rho$ for large $\rho$. Right: for
# negative $\rho$ the two curves coincide, so $\rho$ is simply $\log\sigma$ there, and the dotted
# line marks the start $\rho_0 = -5$.

# %% [markdown]
# ## 5. Priors
#
# The paper's prior is a **scale mixture** of two zero-mean Gaussians (eq. 7),
# $P(\mathbf w) = \prod_j \pi\,\mathcal N(w_j\mid0,\sigma_1^2) + (1-\pi)\,\mathcal N(w_j\mid0,\sigma_2^2)$
# with $\sigma_1 > \sigma_2$ and $\sigma_2 \ll 1$: a wide Gaussian component plus a sharp spike at
# zero. The paper says that $\sigma_1 > \sigma_2$ "provides a heavier tail in the prior density
# than is seen in a plain Gaussian prior" (§3.3). That holds against a Gaussian of the *same
# variance*, $\sigma = \sqrt{\pi\sigma_1^2 + (1-\pi)\sigma_2^2}$ (dash-dot curve in the figure; the
# mixture's excess kurtosis is printed below it), whose log density falls much faster. Against
# $\mathcal N(0, \sigma_1^2)$ the mixture's tails are still Gaussian, those of its wide component
# shifted down by $\log(1/\pi)$, and so far lighter than Laplace's or Cauchy's (right panel).
# `helpers`
# evaluates it as
# $\log P = \operatorname{logsumexp}(\log\pi + \log\mathcal N_1,\ \log(1-\pi) + \log\mathcal N_2)$, which
# stays finite and exact far into the tails. Laplace and Cauchy priors are there for notebook 05;
# the figure draws them at the scale it trains with, Laplace$(0, 1)$ and Cauchy$(0, 1)$.
# The figure uses $\sigma_2 = e^{-6}$, a value from the paper's MNIST grid
# ($-\log\sigma_2 \in \{6, 7, 8\}$) and the one section 8 of this notebook trains with; the numerical check below uses
# $\sigma_2 = e^{-8}$, the smallest $\sigma_2$ of the paper's grid and the hardest case numerically.

# %%
priors = {"Gaussian $\\sigma$=1": H.GaussianPrior(1.0),
          "mixture $\\pi$=1/2, $\\sigma_1$=1, $\\sigma_2$=$e^{-6}$":
              H.ScaleMixturePrior(0.5, 1.0, math.exp(-6)),
          "Laplace b=1": H.LaplacePrior(1.0),
          "Cauchy $\\gamma$=1": H.CauchyPrior(1.0)}
sd_mix = math.sqrt(0.5 * 1.0 ** 2 + 0.5 * math.exp(-6) ** 2)  # the mixture's sd
priors[f"Gaussian of the mixture's variance, $\\sigma$={sd_mix:.2f}"] = H.GaussianPrior(sd_mix)

# %%
fig = theory.prior_figure(priors, ymax=1.0)
H.savefig(fig, NB, "priors")
plt.show()
spike = H.ScaleMixturePrior(0.5, 1.0, math.exp(-6)).log_prob(torch.zeros(1)).exp().item()
print(f"mixture density at w = 0: {spike:.1f} (the linear panel stops at 1)")
for name, p in priors.items():  # how fast each density falls from 0 to 1, and its height at 0
    d0, d1 = p.log_prob(torch.tensor([0.0, 1.0])).exp().tolist()
    print(f"{name:<50} p(0) = {d0:6.3f}   p(0)/p(1) = {d0 / d1:7.2f}")
print("\n".join(theory.mixture_tail_lines(0.5, 1.0, math.exp(-6))))

# %% [markdown]
# The scale mixture is the only prior with both a narrow spike at zero, far taller than the
# linear panel shows, and the Gaussian's wide shoulders: it can pull many weights to almost
# exactly zero while allowing the others a Gaussian's spread (notebook 04 prunes trained networks
# on this). At scale 1, Laplace and Cauchy fall off
# faster than the Gaussian from 0 to $\pm1$ (the printed $p(0)/p(1)$; Laplace with a cusp at 0),
# but neither has a spike, and Cauchy's density is lower than the Gaussian's all over $[-1, 1]$,
# because it keeps more of its mass in the tails. The tails are where they differ most (right
# panel): the log-density falls like $-w^2/2$ for the Gaussian and the mixture, like $-|w|$ for
# Laplace and only like $-2\log|w|$ for Cauchy, so Cauchy tolerates large weights by far the most.

# %% [markdown]
# A numerical check against float64, with the naive $\log(\pi\,\mathcal N_1 + (1-\pi)\,\mathcal N_2)$
# in float32 beside it. The naive version is still finite at $|w| = 10$, but both densities
# underflow to zero further out, and its logarithm is $-\infty$ at $|w| = 15$ and $|w| = 40$:

# %%
# NBVAL_CHECK_OUTPUT
mix = H.ScaleMixturePrior(0.5, 1.0, math.exp(-8))
w_big = torch.tensor([0.0, 0.5, 3.0, 10.0, 15.0, 40.0])
naive = torch.log(0.5 * torch.exp(torch.distributions.Normal(0, 1.0).log_prob(w_big))
                  + 0.5 * torch.exp(torch.distributions.Normal(0, math.exp(-8)).log_prob(w_big)))
print("w        :", w_big.tolist())
print("helpers  :", [round(v, 3) for v in mix.log_prob(w_big).tolist()])
print("float64  :", [round(v, 3) for v in mix.double().log_prob(w_big.double()).tolist()])
print("naive f32:", [round(v, 3) for v in naive.tolist()])

# %% [markdown]
# ## 6. Monte-Carlo vs closed-form KL
#
# With a Gaussian prior $\mathcal N(0, s^2)$ (here $s = 0.3$) the KL term has a closed form,
# $\mathrm{KL} = \sum_j \log\frac{s}{\sigma_j} + \frac{\sigma_j^2 + \mu_j^2}{2s^2} - \frac12$; with the
# scale mixture it does not, and the paper uses the Monte-Carlo estimate
# $\log q(\mathbf w\mid\theta) - \log P(\mathbf w)$ at the sampled weights (§3.1). Its expectation
# under $q$ is the KL by definition, so the check below tests the implementation (the sampling and
# the two log-densities), not the theory. For one layer of
# $50 \times 20$ weights and 20 biases (every $\rho$ starting at $-2$, so
# $\sigma_0 \approx 0.13$), each estimate below averages $S$ weight samples, and is
# repeated many times (more often at small $S$, where one estimate is noisier) to measure its mean
# and its spread; every estimate draws fresh, independent noise.
# KLs are in nats (natural-log units); MC in the table and the figure stands for Monte-Carlo.

# %%
H.seed_everything(SEED)
kl_layer = H.BayesLinear(50, 20, prior=H.GaussianPrior(0.3), rho_init=-2.0)
with torch.no_grad():
    kl_layer.weight_mu.normal_(0, 0.2)
exact_kl = kl_layer.kl_closed().item()

# %%
rows = theory.mc_kl_rows(kl_layer, cfg.n_kl_samples)  # max(20, 10,000 / S) repeats per S
kl_rel_err = abs(rows[-1]["mean"] - exact_kl) / exact_kl

# %%
fig = theory.mc_kl_figure(rows, exact_kl)
H.savefig(fig, NB, "mc-vs-closed-kl")
plt.show()
print("\n".join(theory.mc_kl_lines(rows, exact_kl)))

# %% [markdown]
# Left: the mean of the repeats minus the closed form, with two standard errors of that mean as
# bars (section 3: such a bar misses zero about one time in twenty); $z$
# in the table is the gap in standard errors, and every $|z|$ is below 4, the criterion of section
# 3. Right: the spread of a single estimate, which falls like $1/\sqrt S$ (the table's
# sd$\cdot\sqrt S$ column stays roughly constant). What the rows show together:

# %%
show_markdown(theory.mc_kl_verdict(rows, exact_kl));

# %% [markdown]
# So any bias of the Monte-Carlo KL is small beside its spread: compare the bounds above with the
# table's sd at $S$ = 1, the scatter of one single-sample estimate (the paper's choice, one sample
# per step). Only the spread clearly depends on $S$. The estimator is
# unbiased by construction (its expectation is the KL); these rows cannot confirm that to better
# than their intervals.

# %% [markdown]
# ## 7. Weighting the KL across minibatches
#
# With $M$ minibatches per epoch, eq. (8) spreads the KL uniformly,
# $\mathcal F_i = \frac1M \mathrm{KL} - \mathbb E_q[\log P(\mathcal D_i|\mathbf w)]$; eq. (9) instead uses
# $\pi_i = \frac{2^{M-i}}{2^M - 1}$ (a share of the KL, not the mixture weight $\pi$ of section 5;
# the paper uses the letter for both), so the first minibatches of an epoch are dominated by the prior
# and the last ones by the data. `kl_weights` computes $\log\pi_i = (M-i)\log 2 - \log(2^M-1)$ in
# log space, so the weights stay finite although they span more than a hundred orders of magnitude. The
# profile's $M$ (below) is $469 = \lceil 60{,}000/128\rceil$: the paper's $60{,}000$ training images in
# batches of 128. Notebook 01 trains on 50,000 of them ($M = 391$); the picture is the same. The
# later notebooks train with eq. (8) unless they say otherwise; notebook 04 compares the two
# weightings on pruning.

# %%
uni, bl = H.kl_weights(cfg.M, "uniform"), H.kl_weights(cfg.M, "blundell")
fig = theory.kl_weighting_figure(uni, bl)
H.savefig(fig, NB, "kl-weighting")
plt.show()

# %%
# NBVAL_CHECK_OUTPUT
print(f"M = {cfg.M}: sum uniform = {uni.sum().item():.6f}, sum blundell = {bl.sum().item():.6f}")
print(f"blundell: first weight {bl[0].item():.4f}, share of the KL in the first 10 minibatches "
      f"{bl[:10].sum().item():.6f}, below 1/M from minibatch {int((bl < uni).nonzero()[0]) + 1}")

# %% [markdown]
# Both weightings sum to one over the epoch, so each epoch counts the KL exactly once. The uniform
# weighting spreads it evenly; $\pi_i$ halves from one minibatch to the next, so the first few
# minibatches carry almost all of it (the printed share). From the printed minibatch on (the
# dotted vertical line in both panels, where the two curves cross) $\pi_i$ is below $1/M$, but
# the KL can still outweigh the data there: a network's KL runs to $10^5$ nats (section 8), and
# its share $\pi_i\,\mathrm{KL} \approx 2^{-i}\,\mathrm{KL}$ falls below one nat only for
# $i > \log_2 \mathrm{KL} \approx 17$. Only the minibatches after that are driven by the data
# almost alone.

# %% [markdown]
# ## 8. Bayes by Backprop from scratch
#
# Everything above fits in one small layer. `BayesLinear` in `helpers` is custom autograd over C
# kernels (fast, and hard to read); here is the same computation in plain PyTorch: $\sigma$ by
# softplus, $\mathbf w=\mu+\sigma\odot\epsilon$, and the one-sample estimate of eq. (2),
# $\log q(\mathbf w\mid\theta)-\log P(\mathbf w)$. The noise comes from
# `H.standard_normal`, which draws exactly what the fast layer would draw next, so the two can be
# compared number for number. Every $\rho$ starts at $\rho_0 = -5$ ($\sigma_0 \approx 0.0067$)
# and every $\mu$ uniformly in $\pm 1/\sqrt{n_\text{in}}$, PyTorch's default for a linear
# layer. The fast layer saves work in one place: at $\mathbf w = \mu + \sigma\epsilon$,
# $\log q(\mathbf w\mid\theta) = \sum_j -\log\sigma_j - \epsilon_j^2/2 + c$, and with $\epsilon$ held
# fixed $\epsilon_j^2$ does not depend on $\theta$, so its gradient only needs
# $-\sum_j\log\sigma_j$; the scratch layer below computes $\log q$ in full.

# %%
class ScratchBayesLinear(torch.nn.Module):
    """A Bayesian linear layer: q(w) = N(mu, softplus(rho)^2), one-sample KL of eq. (2)."""

    def __init__(self, n_in, n_out, prior, rho0=-5.0):
        super().__init__()
        bound = 1 / math.sqrt(n_in)
        self.w_mu = torch.nn.Parameter(torch.empty(n_out, n_in).uniform_(-bound, bound))
        self.w_rho = torch.nn.Parameter(torch.full((n_out, n_in), rho0))
        self.b_mu = torch.nn.Parameter(torch.empty(n_out).uniform_(-bound, bound))
        self.b_rho = torch.nn.Parameter(torch.full((n_out,), rho0))
        self.prior, self.kl = prior, None

    def sample(self, mu, rho):
        sigma = F.softplus(rho)                                # sigma = log(1 + e^rho) > 0
        w = mu + sigma * H.standard_normal(mu.shape, mu)       # reparameterisation
        log_q = torch.distributions.Normal(mu, sigma).log_prob(w).sum()
        return w, log_q - self.prior.log_prob(w).sum()         # log q(w) - log P(w)

    def forward(self, x):
        w, kl_w = self.sample(self.w_mu, self.w_rho)
        b, kl_b = self.sample(self.b_mu, self.b_rho)
        self.kl = kl_w + kl_b
        return F.linear(x, w, b)

# %% [markdown]
# A 784-100-10 network of two such layers, trained on the first $N$ MNIST training images
# ($N$ is the profile's `scratch_n`; the first line printed below gives it) by minimising eq. (8),
# the minibatch free energy with the KL spread uniformly over the $M = \lceil N/128\rceil$
# minibatches, one weight sample per step, with Adam on the loss divided by 128 (the departures
# box at the top). Each epoch prints the free energy
# per training example, averaged over the epoch, split into its KL part ($\mathrm{KL}/M$ summed
# over the $M$ minibatches, i.e. $\mathrm{KL}/N$ per example) and its data part (the negative
# log-likelihood, NLL). After the last epoch it prints the error on MNIST's validation images (the
# last $10{,}000$ of its $60{,}000$ training images, as in notebook 01) of the network with every
# weight at its mean $\mu$, beside that of the same network before training (a guess among ten
# digits errs nine times in ten):

# %%
def free_energy_parts(net, x, y, n_batches):
    """The two terms of eq. (8) for one minibatch: KL / M and the summed NLL."""
    out = net(x)  # samples the weights, and sets each layer's KL
    kl = sum(m.kl for m in net if isinstance(m, ScratchBayesLinear))
    return kl / n_batches, F.cross_entropy(out, y, reduction="sum")


def free_energy(net, x, y, n_batches):
    """(KL / M + summed NLL) / batch size: eq. (8) per example."""
    kl_part, nll_part = free_energy_parts(net, x, y, n_batches)
    return (kl_part + nll_part) / len(x)

# %%
def posterior_mean_error(net, x, y):
    """Error of the network with every weight at its mean, w = mu."""
    with torch.no_grad():
        h = F.relu(F.linear(x, net[0].w_mu, net[0].b_mu))
        return H.error_rate(F.linear(h, net[2].w_mu, net[2].b_mu), y)

# %%
def train_epoch(net, opt, n_batches, batch=128):
    """One epoch of eq. (8) / batch; return the epoch's KL / M and NLL parts, per example."""
    kl_sum = nll_sum = 0.0
    for idx in torch.randperm(cfg.scratch_n).split(batch):
        x, y = mnist.x_train[idx], mnist.y_train[idx]
        kl_part, nll_part = free_energy_parts(net, x, y, n_batches)
        opt.zero_grad()
        ((kl_part + nll_part) / batch).backward()
        opt.step()
        kl_sum, nll_sum = kl_sum + kl_part.item(), nll_sum + nll_part.item()
    return kl_sum / cfg.scratch_n, nll_sum / cfg.scratch_n

# %%
mnist = H.load_mnist(n_train=cfg.scratch_n)
prior_s = H.ScaleMixturePrior(0.5, 1.0, math.exp(-6))
H.seed_everything(SEED)
net = torch.nn.Sequential(ScratchBayesLinear(784, 100, prior_s), torch.nn.ReLU(),
                          ScratchBayesLinear(100, 10, prior_s))
err_start = posterior_mean_error(net, mnist.x_val, mnist.y_val)  # the untrained network

# %%
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
n_batches = math.ceil(cfg.scratch_n / 128)
print(f"N = {cfg.scratch_n:,} training images, M = {n_batches} minibatches per epoch")
for epoch in range(cfg.scratch_epochs):
    kl_ex, nll_ex = train_epoch(net, opt, n_batches)
    print(f"epoch {epoch + 1}: free energy per example {kl_ex + nll_ex:.3f} = KL part (KL/N) "
          f"{kl_ex:.3f} + NLL {nll_ex:.3f}")
val_err = posterior_mean_error(net, mnist.x_val, mnist.y_val)
print(f"validation error with w = mu ({len(mnist.y_val):,} images): {val_err:.2%} after "
      f"{cfg.scratch_epochs} epochs, {err_start:.2%} before training")

# %% [markdown]
# The KL part dwarfs the NLL, as it should here: a KL summed over the
# $784\cdot100+100+100\cdot10+10 \approx 8\times10^4$ weights and biases of this 784-100-10
# network, divided by only $N$ images, outweighs a data term of the order of
# $\log 10 \approx 2.3$ nats per example (the NLL of a uniform guess over ten digits), or less
# once the network learns. The prior's weight falls as $1/N$:

# %%
show_markdown(theory.kl_scale_line(kl_ex, cfg.scratch_n));

# %% [markdown]
# The error is far above every error in the paper's Table 1, and that is not a fault
# of the layer: this run only shows that the loop trains, on few images, for few epochs, with a
# KL that dominates the loss. Notebook 01 trains in the paper's setting.

# %% [markdown]
# **The fast layer computes exactly this.** Copy the scratch network's $\mu$ and $\rho$ into a
# `helpers.BayesMLP` (a multilayer perceptron built of `BayesLinear` layers), draw the same noise (same seed), and compare the loss and every gradient:

# %%
fast = H.BayesMLP(784, (100,), 10, prior=prior_s)
with torch.no_grad():
    for a, b in zip((net[0], net[2]), H.bayes_layers(fast)):
        for src, dst in ((a.w_mu, b.weight_mu), (a.w_rho, b.weight_rho), (a.b_mu, b.bias_mu),
                         (a.b_rho, b.bias_rho)):
            dst.copy_(src)

# %%
x, y = mnist.x_train[:128], mnist.y_train[:128]
torch.manual_seed(SEED)
loss_scratch = free_energy(net, x, y, n_batches)
torch.manual_seed(SEED)
loss_fast = H.elbo(fast, x, y, kl_weight=1 / n_batches).loss
net.zero_grad()
loss_scratch.backward()
loss_fast.backward()

# %%
# NBVAL_CHECK_OUTPUT
grad_gap = max(((a.grad - b.grad).abs().max() / a.grad.abs().max()).item()
               for a, b in zip(net.parameters(), fast.parameters()))
print(f"loss: scratch {loss_scratch.item():.5f}, helpers {loss_fast.item():.5f}; largest gradient "
      f"difference below 1e-4 of the gradient's scale: {grad_gap < 1e-4}")

# %% [markdown]
# The numerical checks of this notebook go to `results/00_theory/checks.json`, with the profile,
# seed, machine and wall time of the run; the takeaways below are rendered from that file and
# give the largest gradient difference itself.

# %%
wall = time.perf_counter() - t_start
vi_fit = {"mu_q": mu_q, "sigma_q": sigma_q, "mean_exact": mean_exact, "sd_exact": sd_exact}
scratch = {"val_error": val_err, "val_error_before": err_start, "loss_scratch": loss_scratch.item(),
           "loss_helpers": loss_fast.item(), "max_grad_gap": grad_gap}
config = {"n_draws": cfg.n_draws, "M": cfg.M, "n_kl_samples": list(cfg.n_kl_samples),
          "scratch_n": cfg.scratch_n, "scratch_epochs": cfg.scratch_epochs}
metrics = {"reparam_grad": checks, "reparam_grad_log_q": log_q_check,
           "kl_mc_rel_error_at_max_samples": kl_rel_err,
           "kl_mc": {"exact": exact_kl, "rows": rows}, "vi_fit": vi_fit, "scratch": scratch}
path = H.save_results(NB, "checks", config=config, metrics=metrics, profile=PROFILE, seed=SEED,
                      device=device, wall_s=wall)

# %% [markdown]
# ## Takeaways
#
# - BBB replaces each weight by a Gaussian $\mathcal N(\mu,\sigma^2)$ and minimises the free
#   energy: expected data misfit plus the KL to the prior, estimated with sampled weights.
# - The reparameterisation $\mathbf w=\mu+\sigma\odot\epsilon$ makes that estimate
#   differentiable and its gradients unbiased; softplus keeps $\sigma$ positive.
# - The scale-mixture prior, the Monte-Carlo KL and the KL weighting across minibatches are the
#   paper's three further choices; `helpers` implements each in a numerically safe form.
#
# What the checks of this run found:

# %%
show_markdown(theory.takeaways(H.load_results(NB, "checks")));

# %% [markdown]
# ## Exercises
#
# 1. Section 2: fit with `n_samples=1` instead of 32. How much noisier is the fitted $\sigma$?
# 2. Section 8: replace the scale mixture by `H.GaussianPrior(1.0)` and compare the validation
#    error `posterior_mean_error(net, mnist.x_val, mnist.y_val)` after the same epochs, with
#    each prior.
# 3. Section 6: from the table's sd$\cdot\sqrt S$ column, predict the number of samples $S$ at
#    which the Monte-Carlo KL's standard deviation falls below half of 1 % of the closed form, and the
#    $S$ for a tenth of that (neither is a row of the table); then check both with
#    `theory.mc_kl_rows(kl_layer, [S])`.
# 4. Section 5: draw `H.LaplacePrior(0.1)` and `H.CauchyPrior(0.05)` beside the scale mixture.
#    Which comes closest to its spike, and which to its wide shoulders?
