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


def fit_gap_line(mu_q, sigma_q, mean_exact, sd_exact):
    """Printable line: the fitted q's mean and sd against the exact posterior's, both gaps in
    units of the posterior's sd, and a whole per cent that bounds both."""
    gaps = ((mu_q - mean_exact) / sd_exact, sigma_q / sd_exact - 1)
    bound = int(max(round(100 * abs(g), 1) for g in gaps)) + 1  # above both as printed
    return (f"q against the exact posterior: means {gaps[0]:+.1%} of the posterior sd apart, sd "
            f"{gaps[1]:+.1%} off (both gaps under {bound}% of the posterior's sd)")


def log_q_gradient_check(mu, sigma, eps, tol=1e-12):
    """Proposition 1 for f(w, theta) = log q(w | theta), q = N(mu, sigma^2), w = mu + sigma eps:
    the one part of BBB's f that depends on theta directly. Per draw, autograd gives the path
    term (df/dw dw/dtheta: theta held fixed inside log q), the direct term (df/dtheta: w held
    fixed) and their sum. E_q[log q] = -log(sigma) - log(2 pi e) / 2, so the exact gradient is 0
    for mu and -1/sigma for sigma; the direct term's mean is 0 (the score of q). Return, per
    parameter, each term's mean and standard error, whether it lies within Z_PASS standard errors
    of its expectation, and whether every draw's sum is exact (to ``tol`` relative to 1/sigma)."""
    n = len(eps)
    leaves = {k: torch.full((n,), v, dtype=torch.float64, requires_grad=True)
              for k, v in (("mu", mu), ("sigma", sigma))}
    w = leaves["mu"] + leaves["sigma"] * eps  # one copy of (mu, sigma) per draw: per-draw grads
    fixed = {k: v.detach() for k, v in leaves.items()}
    parts = {"path": torch.distributions.Normal(fixed["mu"], fixed["sigma"]).log_prob(w),
             "direct": torch.distributions.Normal(leaves["mu"], leaves["sigma"]).log_prob(w.detach()),
             "both": torch.distributions.Normal(leaves["mu"], leaves["sigma"]).log_prob(w)}
    exact = {"mu": 0.0, "sigma": -1 / sigma}
    out = {k: {"exact": exact[k]} for k in leaves}
    for part, f in parts.items():
        grads = torch.autograd.grad(f.sum(), list(leaves.values()), retain_graph=True)
        for k, g in zip(leaves, grads):
            mean, se = g.mean().item(), g.std().item() / math.sqrt(n)
            if part == "both":
                out[k]["both_exact_every_draw"] = bool(((g - exact[k]).abs() < tol / sigma).all())
                continue
            expect = exact[k] if part == "path" else 0.0
            out[k][part] = dict(estimate=mean, standard_error=se,
                                within_4se=abs(mean - expect) < Z_PASS * se)
    return out


def log_q_gradient_lines(check):
    """Printable lines of ``log_q_gradient_check``'s result."""
    out = [f"{'':10}{'path term only':>20}{'direct term only':>20}   both (Proposition 1)"]
    for k, r in check.items():
        cells = [f"{r[p]['estimate']:+.4f} +- {r[p]['standard_error']:.4f}" for p in ("path", "direct")]
        out.append(f"d/d{k:<5}: {cells[0]:>20}{cells[1]:>20}   exact {r['exact']:+.4f} in every "
                   f"draw: {r['both_exact_every_draw']}")
    ok = all(r[p]["within_4se"] for r in check.values() for p in ("path", "direct"))
    out.append(f"path term within 4 s.e. of the exact gradient, direct term within 4 s.e. of 0: {ok}")
    return out


def kl_weighting_figure(uni, bl):
    """Both KL weightings of an epoch (``uni``: 1/M each, eq. 8; ``bl``: pi_i, eq. 9): the first
    12 minibatches on a linear axis and all M on a log axis, with a vertical line at the first
    minibatch whose pi_i is below 1/M, in both panels, and one legend below both (off the data)."""
    import matplotlib.pyplot as plt
    M = len(uni)
    i = torch.arange(1, M + 1)
    cross = int((bl < uni).nonzero()[0]) + 1
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.4), constrained_layout=True)
    for ax, n in zip(axes, (min(12, M), M)):
        style = "o-" if n < 20 else "-"
        ax.plot(i[:n], uni[:n], style, ms=3, label="uniform $1/M$ (eq. 8)")
        ax.plot(i[:n], bl[:n], style, ms=3, label="$\\pi_i = 2^{M-i}/(2^M-1)$ (eq. 9)")
        ax.axvline(cross, color="k", ls=":", lw=1, label=f"$\\pi_i < 1/M$ from $i$ = {cross}")
        ax.set_xlabel("minibatch i within the epoch")
    axes[0].set(ylabel="KL weight", title=f"the first {min(12, M)} minibatches")
    smallest = float(bl.min())
    mant, expo = f"{smallest:.1e}".split("e")
    axes[1].set(yscale="log", ylim=(10 ** (math.floor(math.log10(smallest)) - 2), 1),
                ylabel="KL weight (log scale)",
                title=f"all {M}, log scale: $\\pi_i$ halves down to "
                      f"${mant}\\times10^{{{int(expo)}}}$")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    axes[0].annotate(f"uniform: $1/M$ = {1 / M:.5f}", (min(12, M), 1 / M), xytext=(0, 8),
                     textcoords="offset points", ha="right", fontsize=9)
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


def prior_figure(priors, ymax=1.0, wmax=10.0):
    """Density on [-1, 1] (linear, clipped at ``ymax``) and log density on [-wmax, wmax] (its grid
    dense near 0, so that the mixture's narrow spike is drawn whole) of each prior ({label:
    prior}), with one legend below both panels."""
    import matplotlib.pyplot as plt
    wg = torch.linspace(-1, 1, 4001)
    wl = torch.cat([torch.linspace(-wmax, wmax, 4001), torch.linspace(-0.05, 0.05, 2001)]).sort()[0]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), constrained_layout=True)
    # a colour and a line style per prior; the mixture solid, so that its spike stays whole
    looks = ((OKABE_ITO[0], "-", 1.8), (OKABE_ITO[1], "-", 2.2), (OKABE_ITO[2], "--", 1.8),
             (OKABE_ITO[4], ":", 2.2), (OKABE_ITO[3], "-.", 1.8))
    for (label, p), (color, ls, lw) in zip(priors.items(), looks):
        axes[0].plot(wg, p.log_prob(wg).exp(), color=color, ls=ls, lw=lw, label=label)
        axes[1].plot(wl, p.log_prob(wl), color=color, ls=ls, lw=lw, label=label)
    axes[0].set(ylim=(0, ymax), xlabel="weight $w$", ylabel="density",
                title="density near 0, linear scale (the mixture's spike is clipped)")
    axes[1].set(xlabel="weight $w$", ylabel="log density",
                title=f"log density out to |w| = {wmax:g}: the tails (nothing clipped)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3,
               fontsize=10)
    return fig


def mixture_tail_lines(pi, sigma1, sigma2, w=10.0):
    """Printable lines: the scale mixture's variance-matched Gaussian (the paper's "plain
    Gaussian" of the same variance), the log densities at |w| of the mixture, of that Gaussian
    and of N(0, sigma1^2), and the mixture's excess kurtosis (0 for every Gaussian)."""
    var = pi * sigma1 ** 2 + (1 - pi) * sigma2 ** 2
    kurt = 3 * (pi * sigma1 ** 4 + (1 - pi) * sigma2 ** 4) / var ** 2 - 3
    log_n = lambda s: -0.5 * math.log(2 * math.pi * s ** 2) - w ** 2 / (2 * s ** 2)  # noqa: E731
    mix = float(torch.logsumexp(torch.tensor([math.log(pi) + log_n(sigma1),
                                              math.log(1 - pi) + log_n(sigma2)]), 0))
    return [f"mixture's variance {var:.4f}: the Gaussian of equal variance has sigma = "
            f"{math.sqrt(var):.3f}; the mixture's excess kurtosis is {kurt:.2f} (0 for a Gaussian)",
            f"log density at |w| = {w:g}: mixture {mix:.1f}, Gaussian of equal variance "
            f"{log_n(math.sqrt(var)):.1f}, Gaussian sigma = {sigma1:g} {log_n(sigma1):.1f} "
            f"(the mixture lies log(1/pi) = {math.log(1 / pi):.2f} below it)"]


def mc_kl_rows(layer, sample_sizes, total=10_000, min_repeats=20):
    """Monte-Carlo KL of ``layer`` (a BayesLinear with ``n_in`` inputs) at each number of weight
    samples S: max(min_repeats, total // S) repeated estimates each; return one dict per S with
    the repeats, the mean, the sd of one estimate and the standard error of the mean. Every
    forward pass draws its noise from a fresh seed taken from torch's global generator, so the
    estimates, within a row and across rows, use independent noise."""
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


Z_PASS = 4  # a check passes when |estimate - exact| < Z_PASS standard errors


def pooled_gap(rows, exact):
    """Inverse-variance weighted mean of the rows' gaps (mean - ``exact``) and its standard error.

    An S-sample estimate is the mean of S one-sample estimates, so every row has the same
    expectation and one constant bias describes them all: this is its best estimate."""
    w = [1 / r["se"] ** 2 for r in rows]
    gap = sum(wi * (r["mean"] - exact) for wi, r in zip(w, rows)) / sum(w)
    return gap, 1 / math.sqrt(sum(w))


def _chi2_sf(x, df):
    """P(chi-square with ``df`` degrees of freedom > ``x``), by the recursion
    sf(k + 2) = sf(k) + (x/2)^(k/2) e^(-x/2) / Gamma(k/2 + 1) from sf(1) or sf(2)."""
    if x <= 0:
        return 1.0
    k, p = (2, math.exp(-x / 2)) if df % 2 == 0 else (1, math.erfc(math.sqrt(x / 2)))
    while k < df:
        p += math.exp(k / 2 * math.log(x / 2) - x / 2 - math.lgamma(k / 2 + 1))
        k += 2
    return p


def pooled_split(rows, exact):
    """How much the pooled gap rests on the last row: that row's share of the weights 1/se^2,
    the pooled gap and s.e. of the other rows, and Cochran's Q of all rows (the weighted sum of
    squared deviations from the pooled gap) with its degrees of freedom and p-value: a small p
    would say the rows differ by more than chance allows, so that one common gap fits badly."""
    w = [1 / r["se"] ** 2 for r in rows]
    gap, _ = pooled_gap(rows, exact)
    q = sum(wi * (r["mean"] - exact - gap) ** 2 for wi, r in zip(w, rows))
    rest, rest_se = pooled_gap(rows[:-1], exact)
    return {"share": w[-1] / sum(w), "rest": rest, "rest_se": rest_se, "q": q,
            "df": len(rows) - 1, "p": _chi2_sf(q, len(rows) - 1)}


def mc_kl_verdict(rows, exact):
    """Markdown: the rows whose 95 % bar (2 s.e.) misses the closed form, the pooled gap of all
    rows with its 95 % interval and z, and how uncertain the last row's sd is (its repeats)."""
    miss = [r for r in rows if abs(r["mean"] - exact) > 2 * r["se"]]
    neg = sum(r["mean"] < exact for r in rows)
    gap, se = pooled_gap(rows, exact)
    lo, hi = gap - 1.96 * se, gap + 1.96 * se
    last = rows[-1]
    sp = pooled_split(rows, exact)
    r_lo, r_hi = sp["rest"] - 1.96 * sp["rest_se"], sp["rest"] + 1.96 * sp["rest_se"]
    lo_se, hi_se = min(r["se"] for r in rows[:-1]), max(r["se"] for r in rows[:-1])
    rel = 1 / math.sqrt(2 * (last["repeats"] - 1))  # relative s.e. of an sd from n normal values
    off = last["sd"] * math.sqrt(last["S"]) / (rows[0]["sd"] * math.sqrt(rows[0]["S"])) - 1
    z = [f"$S$ = {r['S']:,} ($z$ = {(r['mean'] - exact) / r['se']:.1f})" for r in miss]
    first = f"The bar of {' and '.join(z)} misses zero" if miss else "Every bar covers zero"
    return (f"{first}, and {neg} of the {len(rows)} gaps are negative. All rows have the same "
            f"expectation (an $S$-sample estimate is the mean of $S$ one-sample estimates), so "
            f"their gaps pool into one: {gap:+.3f} nats, 95 % interval [{lo:+.3f}, {hi:+.3f}], "
            f"$z$ = {gap / se:.1f}. The interval "
            + ("holds zero" if lo <= 0 <= hi else "misses zero")
            + f": it excludes a bias common to every $S$ below {lo:+.2f} or above {hi:+.2f} nats, "
            f"on a KL of {exact:.0f} nats. The $S$ = {last['S']:,} row carries {sp['share']:.0%} of its weight (weights "
            f"1/s.e.²). The rows $S$ ≤ {rows[-2]['S']:,} alone give {sp['rest']:+.2f} nats, 95 % "
            f"interval [{r_lo:+.2f}, {r_hi:+.2f}], $z$ = {sp['rest'] / sp['rest_se']:.1f}: "
            + ("an interval that misses zero" if r_hi < 0 or r_lo > 0 else "an interval that holds zero")
            + f", with $|z|$ {'inside' if abs(sp['rest'] / sp['rest_se']) < Z_PASS else 'outside'} "
            f"the criterion of {Z_PASS}. The rows differ "
            + ("no more than chance allows" if sp["p"] >= 0.05 else "more than chance allows")
            + f" (Cochran's $Q$ = {sp['q']:.1f} on {sp['df']} degrees of freedom, $p$ = "
            f"{sp['p']:.2f}), so one common gap " + ("fits them" if sp["p"] >= 0.05 else "fits them badly")
            + f"; each $S$ on its own is bounded only by its ±2 s.e. bar (±{2 * lo_se:.1f} to "
            f"±{2 * hi_se:.1f} nats for $S$ ≤ {rows[-2]['S']:,}). The $S$ = {last['S']:,} row's sd "
            f"rests on only "
            f"{last['repeats']} repeats, so it is uncertain by about ±{rel:.0%}; its point lies "
            f"{off:+.0%} off the $1/\\sqrt S$ line, {abs(off) / rel:.1f} times that uncertainty ("
            + ("within chance" if abs(off) / rel < 2 else "more than chance readily explains")
            + ").")


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


def log_q_takeaway(check):
    """Markdown bullet of the f = log q check (``log_q_gradient_check``'s result), or ''."""
    if not check:
        return ""
    s = check["sigma"]
    ok = all(r[p]["within_4se"] for r in check.values() for p in ("path", "direct")) and all(
        r["both_exact_every_draw"] for r in check.values())
    return (f"- **The direct term $\\partial f/\\partial\\theta$ (section 3).** For "
            f"$f = \\log q$, the path term alone gives {s['path']['estimate']:.4f} ± "
            f"{s['path']['standard_error']:.4f} for $\\sigma$ (exact {s['exact']:.4f}), the direct "
            f"term {s['direct']['estimate']:+.4f} ± {s['direct']['standard_error']:.4f} (its "
            f"expectation 0); " + ("together they give the exact gradient in every draw." if ok
                                  else "the check fails."))


def takeaways(rec):
    """Markdown bullets of the checks in ``rec`` (results/00_theory/checks.json as loaded)."""
    m = rec["metrics"]
    fit, mu, sig, kl, sc = (m["vi_fit"], m["reparam_grad"]["mu"], m["reparam_grad"]["sigma"],
                            m["kl_mc"], m["scratch"])
    last = kl["rows"][-1]
    zmax = max(abs(r["mean"] - kl["exact"]) / r["se"] for r in kl["rows"])
    return "\n".join(line for line in [
        f"- **Free energy (section 2).** On the one-weight problem BBB's $q$ has mean "
        f"{fit['mu_q']:.3f} and sd {fit['sigma_q']:.3f}; the exact posterior {fit['mean_exact']:.3f} "
        f"and {fit['sd_exact']:.3f}.",
        f"- **Reparameterisation (section 3).** The Monte-Carlo gradients are "
        f"{mu['estimate']:.4f} ± {mu['standard_error']:.4f} for $\\mu$ (exact {mu['exact']:.1f}) "
        f"and {sig['estimate']:.4f} ± {sig['standard_error']:.4f} for $\\sigma$ (exact "
        f"{sig['exact']:.1f}): "
        + (f"each within {Z_PASS} standard errors of the exact value, as an unbiased estimator "
           "should be." if mu["within_4se"] and sig["within_4se"] else
           f"not both within {Z_PASS} standard errors of the exact value: the check fails."),
        log_q_takeaway(m.get("reparam_grad_log_q")),
        f"- **Monte-Carlo KL (section 6).** Its mean is within {Z_PASS} standard errors of the "
        f"closed form at every $S$ (the largest $|z|$: {zmax:.1f}); pooled over all $S$, "
        f"{pooled_gap(kl['rows'], kl['exact'])[0]:+.3f} ± "
        f"{1.96 * pooled_gap(kl['rows'], kl['exact'])[1]:.3f} nats (95 %); at $S$ = {last['S']:,} it is {abs(last['mean'] - kl['exact']):.3f} "
        f"nats from the closed form's {kl['exact']:.2f}.",
        f"- **From scratch (section 8).** A short plain-PyTorch layer gives the loss of "
        f"`helpers.BayesLinear` ({sc['loss_scratch']:.5f} against {sc['loss_helpers']:.5f}) and "
        f"every gradient to a relative {sc['max_grad_gap']:.1e}.",
    ] if line)


def checks_answer(rec):
    """Markdown for the first screen: what the checks of ``rec`` (results/00_theory/checks.json
    as loaded) found. The Monte-Carlo checks (sections 3 and 6) and the from-scratch layer
    (section 8) have a pass criterion; the one-weight fit (section 2) is described, not judged."""
    m = rec["metrics"]
    grads = [m["reparam_grad"][k] for k in ("mu", "sigma")]
    log_q = m.get("reparam_grad_log_q") or {}
    kl, sc, fit = m["kl_mc"], m["scratch"], m["vi_fit"]
    z_grad = max([abs(g["estimate"] - g["exact"]) / g["standard_error"] for g in grads]
                 + [abs(r[p]["estimate"] - (r["exact"] if p == "path" else 0.0))
                    / r[p]["standard_error"] for r in log_q.values() for p in ("path", "direct")])
    z_kl = max(abs(r["mean"] - kl["exact"]) / r["se"] for r in kl["rows"])
    gap, se = pooled_gap(kl["rows"], kl["exact"])
    sp = pooled_split(kl["rows"], kl["exact"])
    passed = {"the Monte-Carlo gradients (section 3)": all(g["within_4se"] for g in grads) and all(
                  r[p]["within_4se"] and r["both_exact_every_draw"]
                  for r in log_q.values() for p in ("path", "direct")),
              "the Monte-Carlo KL (section 6)": z_kl < Z_PASS,
              "the from-scratch layer (section 8)": sc["max_grad_gap"] < 1e-4}
    failed = [k for k, ok in passed.items() if not ok]
    head = ("**What the checks found** (the run shown, `results/00_theory/checks.json`): "
            + ("every check with a pass criterion passes. " if not failed else
               f"**not every check passes**: {', '.join(failed)} failed. "))
    fit_gap = max(abs(fit["mu_q"] - fit["mean_exact"]), abs(fit["sigma_q"] - fit["sd_exact"]))
    return head + (
        f"The Monte-Carlo gradients (of $\\mathbb E[w^2]$ and, path and direct terms, of "
        f"$\\mathbb E[\\log q]$) lie within {Z_PASS} standard errors of the exact ones "
        f"(largest $|z|$ {z_grad:.1f}, $z$ being the gap in standard errors) and the Monte-Carlo KL "
        f"within {Z_PASS} standard errors of its closed form "
        f"at every sample size (largest $|z|$ {z_kl:.1f}). Averaged over the sample sizes (weights "
        f"1/s.e.²), its gap is {gap:+.3f} nats (natural-log units), 95 % interval "
        f"[{gap - 1.96 * se:+.3f}, {gap + 1.96 * se:+.3f}], on a KL of {kl['exact']:.0f} nats; the "
        f"$S$ = {kl['rows'][-1]['S']:,} row carries {sp['share']:.0%} of that weight, and the other "
        f"rows alone give {sp['rest']:+.2f} [{sp['rest'] - 1.96 * sp['rest_se']:+.2f}, "
        f"{sp['rest'] + 1.96 * sp['rest_se']:+.2f}]"
        + (f", an interval that misses zero at $|z|$ {abs(sp['rest'] / sp['rest_se']):.1f}"
           if abs(sp["rest"]) > 1.96 * sp["rest_se"] else "")
        + f" (section 6). By the criterion, both behave as unbiased estimators should. The plain-PyTorch layer reproduces "
        f"`helpers.BayesLinear`'s loss ({sc['loss_scratch']:.5f} against {sc['loss_helpers']:.5f}) "
        f"and every gradient to a relative {sc['max_grad_gap']:.1e} "
        f"(criterion $10^{{-4}}$). On the one-weight problem, BBB's $q$ recovers the exact posterior: "
        f"its mean and standard deviation (sd) differ from the posterior's by at most "
        f"{fit_gap / fit['sd_exact']:.1%} of the posterior's sd (section 2 sets no pass criterion).")


def first_screen(root=None):
    """Markdown below the header: what the checks of the recorded run found (``checks_answer``
    of results/00_theory/checks.json) and its time (``runtime_line``). ``root``: the results
    folder (default: the project's, as committed, so that a smoke run shows the same)."""
    import json
    from pathlib import Path
    res = Path(root) if root else Path(__file__).resolve().parent.parent / "results"
    path = res / "00_theory" / "checks.json"
    answer = (checks_answer(json.loads(path.read_text())) if path.exists() else
              "No run of the checks is recorded yet: the takeaways at the end give their outcome.")
    return answer + "\n\n" + runtime_line(root=root)


def kl_scale_line(kl_per_example, n, n_big=50_000):
    """Markdown: the last epoch's KL part per example (KL / ``n``), rescaled to ``n_big`` images,
    beside log 10, the NLL per example of a uniform guess over ten digits."""
    return (f"Spread over notebook 01's {n_big:,} training images instead of this run's {n:,}, "
            f"the same KL would count {kl_per_example * n / n_big:.2f} nats per example "
            f"(KL/N = {kl_per_example:.2f} here, times {n:,}/{n_big:,}), still above "
            f"$\\log 10$ = {math.log(10):.2f}, the NLL of a uniform guess over ten digits, and far "
            f"above the NLL of a trained network. (A network trained on {n_big:,} images would "
            f"end at a somewhat different KL; this only rescales the one shown.)")


def runtime_line(notebook="00_theory", profile="default", experiment="checks", root=None):
    """Markdown: one wall time of ``notebook``, that of the run whose numbers are shown
    (``wall_s`` of results/<notebook>/<experiment>.json, which `save_results` keeps while a re-run
    reproduces every number); the timed `make notebooks` run of results/runtimes.json only when
    that file holds no run of ``profile``. ``root``: the results folder (default: the project's)."""
    import json
    from pathlib import Path
    res = Path(root) if root else Path(__file__).resolve().parent.parent / "results"
    load = lambda p: json.loads(p.read_text()) if p.exists() else {}  # noqa: E731
    shown = load(res / notebook / f"{experiment}.json")
    if shown.get("wall_s") is not None and shown.get("profile") == profile:
        return (f"Recorded time (profile `{profile}`): about {shown['wall_s'] / 60:.0f} min on a "
                f"CPU for the run that computed the numbers shown "
                f"({shown.get('created', '?')[:10]}, `results/{notebook}/{experiment}.json`).")
    timed = load(res / "runtimes.json").get(profile, {}).get(notebook) or {}
    if timed.get("wall_s") is not None:
        return (f"Recorded time (profile `{profile}`): about {timed['wall_s'] / 60:.0f} min on a "
                f"CPU for the timed `make notebooks` run ({timed.get('date', '?')}, "
                f"`results/runtimes.json`).")
    return f"No run of profile `{profile}` is recorded in `results/`."


def departures(cfg):
    """Markdown: the box of this notebook's departures from the paper (``cfg``: its profile)."""
    return "\n".join([
        "**Departures from the paper and choices made after seeing numbers** "
        "([lab log](../docs/lab_log.md#notebook-00), [choices](../docs/choices.md)). "
        "No choice in this notebook followed a result; the departures:",
        "- The starting $\\rho$ (the parameter of each weight's $\\sigma$, section 4): "
        "$\\rho_0 = -5$, $\\sigma_0 = \\log(1 + e^{-5}) \\approx 0.0067$, in sections 4 and 8 "
        "(section 2's one-weight fit starts at $\\rho_0 = -1$, section 6's layer at $-2$). "
        "The paper gives no $\\rho_0$; our choice.",
        f"- Section 8 trains with the Adam optimiser (learning rate $10^{{-3}}$), not plain "
        f"stochastic gradient descent (SGD), on the loss "
        f"divided by the fixed batch size of 128 (so the epoch's last, smaller minibatch does not "
        f"over-weight the KL), and on the first {cfg.scratch_n:,} training images for "
        f"{cfg.scratch_epochs} epochs: it shows that the loop trains, not the paper's errors.",
        "- A setup choice, not a departure: section 6 checks the Monte-Carlo KL against a closed "
        "form, so it uses a Gaussian prior, whose closed-form KL `helpers` implements "
        "(`BayesLinear.kl_closed()`); the paper's scale mixture has none.",
    ])
