"""Notebook 00's figures: single-draw gradients, the softplus map, prior densities."""
import torch
from torch.nn import functional as F

# Okabe & Ito's colour-blind-safe palette: blue, orange, bluish green, vermillion, reddish purple
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7")


def gradient_histograms(per_draw, exact, shown):
    """Histograms of single-draw gradients ({name: tensor}), their mean over all draws and the
    exact values ({name: float}); the first ``shown`` draws are drawn."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(per_draw), figsize=(5 * len(per_draw), 3.2),
                             constrained_layout=True, squeeze=False)
    for ax, (name, per) in zip(axes[0], per_draw.items()):
        ax.hist(per[:shown].numpy(), bins=60, density=True, alpha=0.6,
                label=f"first {shown:,} draws")
        ax.axvline(per.mean().item(), color="C3", lw=1.5, label=f"mean of all {len(per):,} draws")
        ax.axvline(exact[name], color="k", ls="--", lw=2.5, zorder=5, label="exact gradient")
        ax.set(title=f"gradient w.r.t. $\\{name}$", xlabel="single-draw gradient estimate",
               ylabel="density")
        ax.legend(fontsize=8)
    return fig


def softplus_figure(rho0=-6.0):
    """sigma = softplus(rho) on a linear and a log axis, with exp(rho) and the start ``rho0``."""
    import matplotlib.pyplot as plt
    rho = torch.linspace(-10, 5, 400)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3), constrained_layout=True)
    axes[0].plot(rho, F.softplus(rho))
    axes[0].set(xlabel="$\\rho$", ylabel="$\\sigma$", title="$\\sigma = \\log(1+e^{\\rho})$")
    axes[1].semilogy(rho, F.softplus(rho), label="softplus($\\rho$)")
    axes[1].semilogy(rho, torch.exp(rho), "--", label="$e^{\\rho}$")
    axes[1].axvline(rho0, color="k", ls=":", lw=1, label=f"$\\rho_0 = {rho0:g}$")
    axes[1].set(xlabel="$\\rho$", ylabel="$\\sigma$ (log scale)",
                title="log scale: $\\sigma \\approx e^{\\rho}$ for $\\rho \\ll 0$")
    axes[1].legend()
    return fig


def prior_figure(priors, ymax=8.0):
    """Density (linear, clipped at ``ymax``) and log density of each prior ({label: prior})."""
    import matplotlib.pyplot as plt
    wg = torch.linspace(-1, 1, 4001)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.4), constrained_layout=True)
    for (label, p), color in zip(priors.items(), OKABE_ITO):
        lp = p.log_prob(wg)
        axes[0].plot(wg, lp.exp(), color=color, label=label)
        axes[1].plot(wg, lp, color=color, label=label)
    axes[0].set(ylim=(0, ymax), xlabel="w", ylabel="density",
                title="density, linear scale (the mixture's spike is clipped)")
    axes[1].set(ylim=(-12, ymax), xlabel="w", ylabel="log density", title="log density")
    axes[1].legend(fontsize=7, loc="lower center")
    return fig
