"""Notebook 00's figures and readings: single-draw gradients, the softplus map, prior densities,
the Monte-Carlo KL against its closed form, and the takeaways rendered from its checks."""
import math

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
                ha="right", va="top", fontsize=10, family="monospace")
        ax.set(title=f"gradient w.r.t. $\\{name}$", xlabel="single-draw gradient estimate",
               ylabel="density")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=3,
               fontsize=9)
    return fig


def softplus_figure(rho0=-5.0):
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


def prior_figure(priors, ymax=1.0):
    """Density (linear, clipped at ``ymax``) and log density of each prior ({label: prior}), with
    one legend below both panels."""
    import matplotlib.pyplot as plt
    wg = torch.linspace(-1, 1, 4001)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), constrained_layout=True)
    # a colour and a line style per prior; the mixture solid, so that its spike stays whole
    looks = ((OKABE_ITO[0], "-", 1.8), (OKABE_ITO[1], "-", 2.2), (OKABE_ITO[2], "--", 1.8),
             (OKABE_ITO[4], ":", 2.2))
    for (label, p), (color, ls, lw) in zip(priors.items(), looks):
        lp = p.log_prob(wg)
        axes[0].plot(wg, lp.exp(), color=color, ls=ls, lw=lw, label=label)
        axes[1].plot(wg, lp, color=color, ls=ls, lw=lw, label=label)
    axes[0].set(ylim=(0, ymax), xlabel="w", ylabel="density",
                title="density, linear scale (the mixture's spike is clipped)")
    axes[1].set(xlabel="w", ylabel="log density", title="log density (nothing clipped)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=4,
               fontsize=10)
    return fig


def mc_kl_rows(layer, sample_sizes, total=10_000, min_repeats=20):
    """Monte-Carlo KL of ``layer`` (a BayesLinear with ``n_in`` inputs) at each number of weight
    samples S: max(min_repeats, total // S) repeated estimates each; return one dict per S with
    the repeats, the mean, the sd of one estimate and the standard error of the mean."""
    n_in = layer.weight_mu.shape[1]
    rows = []
    with torch.no_grad():
        for S in sample_sizes:
            repeats = max(min_repeats, total // S)
            est = []
            for _ in range(repeats):
                layer(torch.zeros(S, 1, n_in))  # a 3-D input draws S weight samples at once
                est.append(layer.kl.item())
            est = torch.tensor(est, dtype=torch.float64)
            sd = est.std().item()
            rows.append({"S": S, "repeats": repeats, "mean": est.mean().item(), "sd": sd,
                         "se": sd / math.sqrt(repeats)})
    return rows


def mc_kl_lines(rows, exact):
    """Printable lines: per S, the mean estimate, its gap to the closed form ``exact`` in standard
    errors (z), and the sd of one estimate times sqrt(S) (constant when the sd falls as
    1/sqrt(S))."""
    out = [f"{'S':>6} {'repeats':>8} {'MC mean':>9} {'s.e.':>6} {'z':>5} {'sd':>7} "
           f"{'sd*sqrt(S)':>10}   (closed form {exact:.2f})"]
    for r in rows:
        z = (r["mean"] - exact) / r["se"]
        out.append(f"{r['S']:>6} {r['repeats']:>8,} {r['mean']:9.2f} {r['se']:6.2f} {z:5.1f} "
                   f"{r['sd']:7.2f} {r['sd'] * math.sqrt(r['S']):10.1f}")
    return out


def mc_kl_figure(rows, exact):
    """Left: the mean Monte-Carlo KL minus the closed form, +- 2 standard errors of the mean;
    right: the sd of one estimate against S, with a 1/sqrt(S) line through the first point."""
    import matplotlib.pyplot as plt
    S = [r["S"] for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), constrained_layout=True)
    axes[0].errorbar(S, [r["mean"] - exact for r in rows], yerr=[2 * r["se"] for r in rows],
                     fmt="o", capsize=3, color=OKABE_ITO[0], label="mean of the repeats ± 2 s.e.")
    axes[0].axhline(0, color="k", ls="--", lw=1, label="closed form")
    axes[0].set(xscale="log", xlabel="Monte-Carlo samples S", ylabel="MC mean − closed form (nats)",
                title="bias: the gap to the closed form")
    axes[0].legend(fontsize=9)
    axes[1].loglog(S, [r["sd"] for r in rows], "o", color=OKABE_ITO[0], label="sd of one estimate")
    axes[1].loglog(S, [rows[0]["sd"] * math.sqrt(S[0] / s) for s in S], "--", color=OKABE_ITO[1],
                   label="$\\propto 1/\\sqrt{S}$")
    axes[1].set(xlabel="Monte-Carlo samples S", ylabel="sd (nats)", title="spread of one estimate")
    axes[1].legend(fontsize=9)
    return fig


def takeaways(rec):
    """Markdown bullets of the checks in ``rec`` (results/00_theory/checks.json as loaded)."""
    m = rec["metrics"]
    fit, mu, sig, kl, sc = (m["vi_fit"], m["reparam_grad"]["mu"], m["reparam_grad"]["sigma"],
                            m["kl_mc"], m["scratch"])
    last = kl["rows"][-1]
    zmax = max(abs(r["mean"] - kl["exact"]) / r["se"] for r in kl["rows"])
    return "\n".join([
        f"- **Free energy (section 2).** On the one-weight problem BBB's $q$ has mean "
        f"{fit['mu_q']:.3f} and sd {fit['sigma_q']:.3f}; the exact posterior {fit['mean_exact']:.3f} "
        f"and {fit['sd_exact']:.3f}.",
        f"- **Reparameterisation (section 3).** The Monte-Carlo gradients are "
        f"{mu['estimate']:.4f} ± {mu['standard_error']:.4f} for $\\mu$ (exact {mu['exact']:.1f}) "
        f"and {sig['estimate']:.4f} ± {sig['standard_error']:.4f} for $\\sigma$ (exact "
        f"{sig['exact']:.1f}): "
        + ("each within 4 standard errors of the exact value, as an unbiased estimator should be."
           if mu["within_4se"] and sig["within_4se"] else
           "not both within 4 standard errors of the exact value: the check fails."),
        f"- **Monte-Carlo KL (section 6).** Its mean is within {zmax:.1f} standard errors of the "
        f"closed form at every $S$; at $S$ = {last['S']:,} it is {abs(last['mean'] - kl['exact']):.3f} "
        f"nats from the closed form's {kl['exact']:.2f}.",
        f"- **From scratch (section 8).** A short plain-PyTorch layer gives the loss of "
        f"`helpers.BayesLinear` ({sc['loss_scratch']:.5f} against {sc['loss_helpers']:.5f}) and "
        f"every gradient to a relative {sc['max_grad_gap']:.1e}.",
    ])
