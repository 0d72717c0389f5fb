"""Notebook 00's figures: single-draw gradients, the softplus map, prior densities."""
import torch
from torch.nn import functional as F

# Okabe & Ito's colour-blind-safe palette: blue, orange, bluish green, vermillion, reddish purple
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7")


def gradient_histograms(per_draw, exact, shown):
    """Histograms of single-draw gradients ({name: tensor}), their mean over all draws (a marker
    above the histogram) and the exact values ({name: float}, a dashed line), both values
    printed in the panel; the first ``shown`` draws are drawn."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(per_draw), figsize=(5 * len(per_draw), 3.8),
                             constrained_layout=True, squeeze=False)
    for ax, (name, per) in zip(axes[0], per_draw.items()):
        heights, _, _ = ax.hist(per[:shown].numpy(), bins=60, density=True, alpha=0.6,
                                color=OKABE_ITO[0], label=f"first {shown:,} draws")
        top = float(max(heights))
        mean = per.mean().item()
        ax.axvline(exact[name], color="k", ls="--", lw=1.5, label="exact gradient")
        ax.plot([mean], [1.08 * top], marker="v", ms=9, ls="none", color=OKABE_ITO[3],
                label=f"mean of all {len(per):,} draws")
        ax.set_ylim(0, 1.3 * top)
        ax.text(0.98, 0.97, f"mean {mean:.4f}\nexact {exact[name]:.4f}", transform=ax.transAxes,
                ha="right", va="top", fontsize=8, family="monospace")
        ax.set(title=f"gradient w.r.t. $\\{name}$", xlabel="single-draw gradient estimate",
               ylabel="density")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=3,
               fontsize=9)
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
    styles = ("-", "--", "-.", ":")  # a line style per prior besides its colour
    for (label, p), color, ls in zip(priors.items(), OKABE_ITO, styles):
        lp = p.log_prob(wg)
        axes[0].plot(wg, lp.exp(), color=color, ls=ls, lw=1.8, label=label)
        axes[1].plot(wg, lp, color=color, ls=ls, lw=1.8, label=label)
    axes[0].set(ylim=(0, ymax), xlabel="w", ylabel="density",
                title="density, linear scale (the mixture's spike is clipped)")
    axes[1].set(ylim=(-12, ymax), xlabel="w", ylabel="log density", title="log density")
    axes[1].legend(fontsize=7, loc="lower center")
    return fig
