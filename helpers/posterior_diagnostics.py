"""Notebook 01's "is the posterior learning?" (issue 49, item 1): short reruns with a trace.

For each source run (a committed Table 1 record: the paper's protocol of section 7 with either
prior, and plan v1's random-start scale mixture under Adam), the same configuration is trained
again for at most 50 epochs on seed 0, validation only (no test number is computed), with
``helpers.posterior_checks.PosteriorTrace`` after every epoch. ``tools/posterior_diagnostics.py``
runs it; the notebook reads ``results/01_mnist_classification/posterior_diagnostics.json``.
"""
import datetime
import json
import math
import time
from pathlib import Path

from .campaign import code_label
from .utils import atomic_write_bytes, machine_info, results_dir

NB = "01_mnist_classification"
SOURCES = {
    "paper protocol, plain SGD, scale mixture": "paper_protocol/runs/mnist_bbb_mixture_h400_e600_"
    "sgd0p001_s0_cost-sum_mc1_uniform_rho-5_pi0p75-s1_2-s2_8.json",
    "paper protocol, plain SGD, Gaussian": "paper_protocol/runs/mnist_bbb_gaussian_h400_e600_"
    "sgd0p001_s0_cost-sum_mc1_uniform_rho-5_sigma0p367879.json",
    "plan v1, Adam, scale mixture (random start)": "plan_v1/runs/h400/bbb_random_start/mnist_bbb_"
    "mixture_h400_e50_adam0p001_s0_decay0p955_mc2_uniform_rho-6_mu0p1_pi0p25-s1_0-s2_6.json",
}
SETTINGS = {"default": dict(epochs=50, n_train=None, seed=0),
            "smoke": dict(epochs=1, n_train=2_000, seed=0)}
PROJECT = Path(__file__).resolve().parent.parent
COMMAND = "python tools/posterior_diagnostics.py"


def path():
    """Return the results file (under ``results_dir()``)."""
    return results_dir() / NB / "posterior_diagnostics.json"


def load():
    """Return the stored diagnostics, or None."""
    p = path()
    return json.loads(p.read_text()) if p.exists() else None


def diagnose(label, source, data, settings):
    """Train the configuration of the committed record ``source`` with a trace; return its entry."""
    import torch

    from .classification import RunConfig, build_model, fit_settings
    from .posterior_checks import PosteriorTrace
    from .train import fit
    record = json.loads((PROJECT / "results" / NB / source).read_text())
    config = {k: v for k, v in record["config"].items() if k != "prior"}
    cfg = RunConfig.from_dict({**config, "epochs": min(settings["epochs"], config["epochs"]),
                               "seed": settings["seed"]})
    torch.manual_seed(cfg.seed)
    model = build_model(cfg, data.x_train.shape[1])
    trace = PosteriorTrace(model)
    t0 = time.perf_counter()
    history = fit(model, data, **fit_settings(cfg), eval_sets=("val",), on_epoch=trace,
                  desc=label)
    return {"source": f"results/{NB}/{source}", "config": {**cfg.__dict__, "prior": str(cfg.prior())},
            "epochs": cfg.epochs, "wall_s": round(time.perf_counter() - t0, 1),
            "trace": trace.rows, "val_error": [r["val_error"] for r in history],
            "sigma_moved_5pct": trace.moved(0.05)}


def run_all(profile="default", log=print):
    """Run every source not yet in the results file, writing the file after each; return it."""
    from .data import load_mnist
    settings = SETTINGS[profile]
    out = load() or {"runs": {}}
    data = load_mnist(scale="paper", n_train=settings["n_train"])
    for label, source in SOURCES.items():
        if label in out["runs"]:
            log(f"{label}: done already")
            continue
        out["runs"][label] = diagnose(label, source, data, settings)
        out.update(profile=profile, settings=settings, code=code_label(), machine=machine_info(),
                   created=datetime.datetime.now(datetime.timezone.utc).isoformat(
                       timespec="seconds"),
                   note="validation only (no test number computed); seed 0; sigma quantiles of "
                        "each layer's weight matrix after every epoch")
        atomic_write_bytes(path(), (json.dumps(out, indent=1) + "\n").encode())
        log(f"{label}: {out['runs'][label]['wall_s']:.0f} s; median sigma moved > 5 %: "
            f"{out['runs'][label]['sigma_moved_5pct']}")
    return out


# the labels the notebook shows (the records keep the labels they were written under)
DISPLAY = {"paper protocol, plain SGD, scale mixture": "plain SGD, ρ₀ = −5, scale mixture",
           "paper protocol, plain SGD, Gaussian": "plain SGD, ρ₀ = −5, Gaussian prior",
           "plan v1, Adam, scale mixture (random start)":
               "Adam recipe, ρ₀ = −6, scale mixture (random start)"}


def display(rec):
    """``rec`` with its runs under the labels the notebook shows (``DISPLAY``)."""
    return {**rec, "runs": {DISPLAY.get(k, k): v for k, v in rec["runs"].items()}}


def words(rec):
    """Markdown: a table with a row per run: sigma's 5-95 % range over all layers at the start
    and at the end, how far rho moved (the median weight, by layer, and the 95th percentile,
    the largest over layers), the narrow prior component's share of the means at the end
    (scale mixture), the training NLL and KL per example and the validation error at the end;
    then what it shows and the reading of the figure's last panel (``panel_words``). Every
    number from ``rec``."""
    verdicts = []
    n = rec["settings"]["epochs"]
    lines = [f"| run | σ, 5th–95th percentile: start → epoch {n} | ρ drift: median weight "
             "(over layers) | ρ drift: 95th percentile | share of μ in the narrow prior component | "
             "training NLL; KL (nats/image) | validation error |",
             "|---|---|---|---|---|---|---|"]
    for label, run in rec["runs"].items():
        first, last = run["trace"][0]["layers"], run["trace"][-1]["layers"]
        lo0, hi0 = min(v["sigma_q"][0] for v in first.values()), max(v["sigma_q"][2] for v in first.values())
        lo1, hi1 = min(v["sigma_q"][0] for v in last.values()), max(v["sigma_q"][2] for v in last.values())
        med = [v["rho_drift_q"][0] for v in last.values()]
        top = max(v["rho_drift_q"][1] for v in last.values())
        alike = shifted_uniformly(last)
        share = [v["narrow_share"] for v in last.values() if v["narrow_share"] is not None]
        end = run["trace"][-1]
        lines.append(f"| {label} | {lo0:#.3g}–{hi0:#.3g} → {lo1:#.3g}–{hi1:#.3g} | "
                     f"{min(med):.3f}–{max(med):.3f} | {top:.3f} | "
                     + (f"{100 * min(share):.1f}–{100 * max(share):.1f} %" if share else "—")
                     + f" | {end['nll']:.4f}; {end['kl']:.1f} | {100 * run['val_error'][-1]:.2f} % |")
        verdicts.append((label, alike, hi1 / hi0))
    def runs(labels):  # "the plain SGD runs": the labels' first parts, each once
        heads = list(dict.fromkeys(label.split(",")[0] for label in labels))
        return f"the *{' and '.join(heads)}* run{'s' if len(labels) > 1 else ''}"
    still = [label for label, alike, _ in verdicts if alike]
    spread = [(label, ratio) for label, alike, ratio in verdicts if not alike]
    answer = "**What it shows.** "
    if still:
        answer += (f"In {runs(still)} σ shifted uniformly and did not learn: every ρ moved by "
                   "about the same amount. ")
    if spread:
        answer += (f"In {runs([k for k, _ in spread])} σ spread apart, weight by weight (its "
                   f"95th percentile grew {max(r for _, r in spread):.0f}-fold). ")
    answer += panel_words(rec)
    return "\n".join(lines + ["", answer.strip()])


def shifted_uniformly(layers):
    """Section 3's test on one reading of a network (``posterior_state``'s {layer: readings}
    with ρ drift): True when σ *shifted uniformly* (ρ's 95th-percentile drift, the largest
    over layers, at most 1.1 times the smallest layer median: every ρ moved by about the same
    amount), False when it *learned* (spread apart weight by weight). The one rule every
    reader here uses."""
    med = [v["rho_drift_q"][0] for v in layers.values()]
    top = max(v["rho_drift_q"][1] for v in layers.values())
    return top <= 1.1 * min(med)


def panel_words(rec):
    """One sentence reading the figure's last panel (training NLL against KL per example):
    for the runs whose ρ all moved alike, how little their KL changed from the first to the
    last epoch while the NLL fell (vertical curves); for the others, whether the NLL rose after
    its lowest epoch while the KL fell (the posterior trading fit for a smaller KL). '' when
    neither applies."""
    still, grew = _growth(rec)
    parts = []
    kl = []
    for label, _, _ in still:
        t = [r for r in rec["runs"][label]["trace"] if r.get("nll") is not None]
        if len(t) >= 2 and t[-1]["nll"] < t[0]["nll"]:
            kl.append(abs(t[-1]["kl"] / t[0]["kl"] - 1))
    if kl:
        heads = " and ".join(dict.fromkeys(k.split(",")[0] for k, _, _ in still))
        parts.append(f"the *{heads}* curves are vertical: their KL changes by at most "
                     f"{100 * max(kl):.0f} % while the NLL falls, so only μ fits the data")
    for label, _, _ in grew:
        t = [r for r in rec["runs"][label]["trace"] if r.get("nll") is not None]
        if len(t) < 3:
            continue
        i = min(range(len(t)), key=lambda j: t[j]["nll"])
        if i < len(t) - 1 and t[-1]["nll"] > 1.5 * t[i]["nll"] and t[-1]["kl"] < t[i]["kl"]:
            parts.append(f"the *{label.split(',')[0]}* curve turns back: after epoch {t[i]['epoch']} its "
                         f"training NLL rises ({t[i]['nll']:.3f} to {t[-1]['nll']:.3f}) while "
                         f"its KL falls ({t[i]['kl']:.1f} to {t[-1]['kl']:.1f} nats), the "
                         "posterior giving up fit to move towards the prior")
    if not parts:
        return ""
    text = "In the last panel, " + "; ".join(parts) + "."
    return text


def _growth(rec):
    """([(label, start, end)] of the runs whose ρ all moved alike, the same of the others): σ's
    95th percentile (the largest over layers) at the start and after the last epoch."""
    still, grew = [], []
    for label, run in rec["runs"].items():
        first, last = run["trace"][0]["layers"], run["trace"][-1]["layers"]
        hi0 = max(v["sigma_q"][2] for v in first.values())
        hi1 = max(v["sigma_q"][2] for v in last.values())
        (still if shifted_uniformly(last) else grew).append((label, hi0, hi1))
    return still, grew


PAPER_RUN = "paper protocol, plain SGD, scale mixture"  # the run ``widths_phrase`` reads


def widths_phrase(diag):
    """The project's one statistic for "the widths did not learn", as a plain phrase without a
    final full stop: σ's 95th percentile (the largest over layers) at the start and after the
    last epoch of the paper-protocol scale-mixture rerun of ``diag`` (``load()``'s value), e.g.
    "σ's 95th percentile went only from 0.0067 to 0.0071 in 50 epochs". '' without that run.
    Notebooks 01 and 04 and the README (tools/status_table.py) call it."""
    runs = (diag or {}).get("runs") or {}
    run = runs.get(PAPER_RUN) or runs.get(DISPLAY[PAPER_RUN])  # stored or displayed labels
    if not run or len(run.get("trace") or []) < 2:
        return ""
    first, last = run["trace"][0]["layers"], run["trace"][-1]["layers"]
    a = max(v["sigma_q"][2] for v in first.values())
    b = max(v["sigma_q"][2] for v in last.values())
    epochs = run["trace"][-1].get("epoch") or run.get("epochs")
    went = "went only" if b < 2 * a else "went"
    return (f"σ's 95th percentile {went} from {a:.4f} to {b:.4f} in {epochs} "
            f"epoch{'' if epochs == 1 else 's'}")


def answer_words(rec):
    """The answer's σ clause from ``rec``, kept short (section 3 gives the numbers): under
    the paper's protocol BBB's σ barely moved in the rerun. '' when no run's ρ all moved
    alike (``widths_phrase`` finds no such run), or without ``rec``."""
    if not rec or not _growth(rec)[0] or not widths_phrase(rec):
        return ""
    epochs = (rec.get("settings") or {}).get("epochs")
    return ("BBB's σ did not learn: in a"
            f"{'' if epochs is None else f' {epochs}-epoch'} rerun every ρ moved by about the "
            "same small amount, whatever the data (section 3)")


def _softplus(x):
    return math.log1p(math.exp(x))


def _softplus_inv(y):
    return math.log(math.expm1(y))


def _ratio(layers):
    """The σ rule's ratio of one reading (as ``shifted_uniformly`` reads it): ρ's 95th-percentile
    drift, the largest over layers, over the smallest layer median."""
    return (max(v["rho_drift_q"][1] for v in layers.values())
            / min(v["rho_drift_q"][0] for v in layers.values()))


def extrapolated(rec, epochs):
    """The numbers ``extrapolation`` says: {n (the rerun's epochs), s0, s_n (σ's 95th
    percentile at its start and end, the largest over layers), rate (ρ's drift per epoch at its
    95th percentile), steady, s_end (σ's 95th percentile after ``epochs`` at that rate),
    learned (the Adam run's σ 95th percentile at the end, or None), n_mid, ratio_mid, ratio_n
    (the σ rule's ratio after the rerun's middle epoch n_mid and its last), ratio_end (that ratio after
    ``epochs``, each layer's median and 95th-percentile drift carried on at its rate over the
    rerun's second half), shifted_end (the rule's reading of that)}; None without the paper-protocol scale-mixture rerun."""
    runs = (rec or {}).get("runs") or {}
    run = runs.get(PAPER_RUN) or runs.get(DISPLAY[PAPER_RUN])
    if not run or len(run.get("trace") or []) < 3:
        return None
    trace = run["trace"]
    n = trace[-1]["epoch"]
    top = max(v["rho_drift_q"][1] for v in trace[-1]["layers"].values())
    mid = min(trace, key=lambda r: abs(r["epoch"] - n / 2))
    mid_top = max(v["rho_drift_q"][1] for v in mid["layers"].values())
    s0 = max(v["sigma_q"][2] for v in trace[0]["layers"].values())
    learned = [max(v["sigma_q"][2] for v in r["trace"][-1]["layers"].values())
               for k, r in runs.items() if "Adam" in k and r.get("trace")]
    span = n - mid["epoch"]

    def ahead(k):  # each layer's drift carried on to ``epochs`` at its second-half rate
        return {name: {"rho_drift_q": [v["rho_drift_q"][i] + (v["rho_drift_q"][i]
                                       - mid["layers"][name]["rho_drift_q"][i]) / span
                                       * (epochs - n) for i in (0, 1)]}
                for name, v in trace[-1]["layers"].items()}
    return {"n": n, "s0": s0, "s_n": max(v["sigma_q"][2] for v in trace[-1]["layers"].values()),
            "rate": top / n, "steady": abs(mid_top / top - mid["epoch"] / n) < 0.05 * mid["epoch"] / n,
            "s_end": _softplus(_softplus_inv(s0) + top / n * epochs),
            "learned": max(learned) if learned else None,
            "n_mid": mid["epoch"], "ratio_mid": _ratio(mid["layers"]), "ratio_n": _ratio(trace[-1]["layers"]),
            "ratio_end": _ratio(ahead(0)) if span > 0 else None,
            "shifted_end": shifted_uniformly(ahead(0)) if span > 0 else None}


def extrapolation(rec, epochs, level=True):
    """Markdown: the paper-protocol scale-mixture rerun of ``rec`` carried on to ``epochs``
    (the final runs' length), said to be an extrapolation (``extrapolated``). It argues from
    what the σ rule reads, the *spread* of ρ's drift across weights: the rule's ratio after the
    rerun's middle and last epochs, and carried on to ``epochs`` (each layer's median and 95th
    percentile at its rate over the rerun's second half), against the rule's threshold. The
    *level* σ's 95th percentile would reach (softplus of ρ at its start plus its drift per
    epoch times ``epochs``) is given for size only, beside the Adam run's (one seed), unless
    ``level`` is False (notebook 01: the rule alone). '' without that run."""
    x = extrapolated(rec, epochs)
    if x is None:
        return ""
    n, s0, s_n, s_end = x["n"], x["s0"], x["s_n"], x["s_end"]
    rm, rn, r_end = x["ratio_mid"], x["ratio_n"], x["ratio_end"]
    verdict = ("" if r_end is None else
               f" At the second half's rates it would be about {r_end:.2f} after {epochs} epochs: "
               + ("*shifted uniformly*: σ did not learn there either." if
                  x["shifted_end"] else f"*learned*: the {epochs}-epoch rows' σ is not known."))
    far = (f"; the Adam run's reached {x['learned']:.3g} in {n}" if x["learned"] else "")
    return (f"**σ in the {epochs}-epoch runs: an extrapolation.** Those runs did not record "
            f"σ. The rule reads the *spread* of ρ's drift; in the {n}-epoch rerun its ratio fell "
            f"from {rm:.3f} (epoch {x['n_mid']}) to {rn:.3f} (epoch {n}).{verdict}" + (
                "" if not level else " For size "
            f"only (the *level*, which the rule does not read): σ's 95th percentile, {s0:.4f} to "
            f"{s_n:.4f} in {n} epochs" + (" (steadily)" if x["steady"] else "")
            + f", would reach about {s_end:.4f} after {epochs}{far}."))


def fixed_sigma(rec):
    """σ's 95th percentile at the start of the paper-protocol scale-mixture rerun of ``rec``
    where σ did not learn there (``answer_words`` is not ''), else None: the σ near which the
    paper's protocol keeps BBB."""
    if not answer_words(rec):
        return None
    runs = rec["runs"]
    run = runs.get(PAPER_RUN) or runs.get(DISPLAY[PAPER_RUN])
    return float(max(v["sigma_q"][2] for v in run["trace"][0]["layers"].values()))


def _setting(c):
    """{what: value} of a run's config, for ``contrast_words``."""
    return {"ρ₀": f"{c['rho_init']:g}".replace("-", "−"), "samples": f"{c['samples']}",
            "schedule": ("constant" if c["lr_decay"] in (None, 1, 1.0) else
                         f"×{c['lr_decay']:g} per epoch"),
            "prior": (f"π = {c['pi']:g}, −log σ₁ = {c['neg_log_sigma1']:g}, −log σ₂ = "
                      f"{c['neg_log_sigma2']:g}" if c["method"] == "bbb_mixture" else
                      f"N(0, {c['prior_sigma']:.3g}²)"),
            "cost": "summed" if c.get("reduction") == "sum" else "averaged"}


_CONTRAST = {"ρ₀": "ρ₀ = {}", "samples": "{} weight samples per step",
             "schedule": "learning rate {}", "prior": "prior {}", "cost": "cost {} over the minibatch"}


def contrast_words(rec):
    """One sentence from the runs' configs: how the Adam run differs from the paper-protocol
    scale-mixture run besides the optimiser (ρ₀, samples, schedule, prior, cost; the
    paper-protocol run's value in brackets), so that it is a contrast, not a controlled
    comparison. '' without both runs."""
    runs = (rec or {}).get("runs") or {}
    base = runs.get(PAPER_RUN) or runs.get(DISPLAY[PAPER_RUN])
    other = next((v for k, v in runs.items() if "Adam" in k), None)
    if not base or not other or "config" not in base or "config" not in other:
        return ""
    a, b = _setting(other["config"]), _setting(base["config"])
    diff = [_CONTRAST[k].format(a[k]) + f" ({b[k]})" for k in a if a[k] != b[k]]
    if not diff:
        return ""
    return ("Besides the optimiser, the Adam run differs from the plain-SGD runs (in "
            "brackets): " + "; ".join(diff) + ": a contrast (σ *can* move), not a controlled "
            "comparison.")


def narrow_share(rec):
    """The largest share of the means, over layers and runs, that the prior's narrow component
    claims at the end of the runs whose ρ all moved alike; None without one."""
    if not rec:
        return None
    still = {k for k, _, _ in _growth(rec)[0]}
    shares = [v["narrow_share"] for k, run in rec["runs"].items() if k in still
              for v in run["trace"][-1]["layers"].values() if v["narrow_share"] is not None]
    return max(shares) if shares else None


# colour-blind-safe (Okabe & Ito 2008); the two plain-SGD runs in their prior's Table 1 colour
COLORS = {"paper protocol, plain SGD, scale mixture": "#0072B2",
          "paper protocol, plain SGD, Gaussian": "#CC79A7",
          "plan v1, Adam, scale mixture (random start)": "0.0"}  # black: not dropout's orange
_STYLE = {"paper protocol, plain SGD, scale mixture": dict(lw=4.0, ls="-", z=2),
          "paper protocol, plain SGD, Gaussian": dict(lw=1.4, ls=(0, (4, 2)), z=4),
          "plan v1, Adam, scale mixture (random start)": dict(lw=1.6, ls="-", z=3)}


def figure(rec):
    """Section 3's figure from ``rec`` (the stored labels): one panel per layer with σ's median
    against the epoch and its 5–95 % band (each run's band in its colour, edged by thin lines of
    the same colour, so bands that overlap stay apart); runs whose medians coincide are drawn
    one wide underneath, one dashed on top, and named at the right edge. Last panel: training
    NLL against KL per example, epoch by epoch. Return the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter
    runs = rec["runs"]
    layers = list(next(iter(runs.values()))["trace"][0]["layers"])
    fig, axes = plt.subplots(1, len(layers) + 1, figsize=(4.0 * (len(layers) + 1), 4.4))
    lo = min(r["layers"][k]["sigma_q"][0] for run in runs.values() for r in run["trace"]
             for k in layers)
    hi = max(r["layers"][k]["sigma_q"][2] for run in runs.values() for r in run["trace"]
             for k in layers)
    last = max(r["epoch"] for run in runs.values() for r in run["trace"])
    for j, (ax, layer) in enumerate(zip(axes, layers)):
        for label, run in runs.items():
            c, st = COLORS.get(label, "0.3"), _STYLE.get(label, dict(lw=1.5, ls="-", z=3))
            ep = [r["epoch"] for r in run["trace"]]
            q = [r["layers"][layer]["sigma_q"] for r in run["trace"]]
            ax.fill_between(ep, [v[0] for v in q], [v[2] for v in q], color=c, alpha=0.15,
                            lw=0, zorder=1)
            for i in (0, 2):
                ax.plot(ep, [v[i] for v in q], color=c, lw=0.7, ls=":", zorder=st["z"])
            ax.plot(ep, [v[1] for v in q], color=c, lw=st["lw"], ls=st["ls"], zorder=st["z"])
        meds = []  # [(median at the end, [labels])]: medians within 5 % of each other coincide
        for label, run in runs.items():
            m = run["trace"][-1]["layers"][layer]["sigma_q"][1]
            near = [g for g in meds if abs(g[0] / m - 1) < 0.05]
            near[0][1].append(label) if near else meds.append((m, [label]))
        for m, same in meds:
            if len(same) > 1:  # say so beside them
                ax.annotate(" and ".join(DISPLAY.get(k, k).split(", ")[-1] for k in same)
                            + ":\nthe lines coincide", (0.98 * last, float(m)),
                            xytext=(0, 6), textcoords="offset points", ha="right", va="bottom",
                            fontsize=7, color="0.2")
        ax.set(yscale="log", ylim=(lo / 1.3, hi * 1.3), xlabel="epoch",
               title=f"layer {j + 1}" + (" (input)" if j == 0 else " (output)"
                                         if j == len(layers) - 1 else ""))
        ax.set_xlim(0, last)
    axes[0].set_ylabel("σ = softplus(ρ): median, 5–95 % band (log scale)")
    for ax in axes[1:len(layers)]:
        ax.sharey(axes[0])
    ax = axes[-1]
    for label, run in runs.items():
        c = COLORS.get(label, "0.3")
        rows = [r for r in run["trace"] if r["nll"] is not None]
        ax.plot([r["kl"] for r in rows], [r["nll"] for r in rows], "o-", ms=2, color=c)
        for r, where in ((rows[0], "epoch 1"), (rows[-1], f"epoch {rows[-1]['epoch']}")):
            # the first epoch's label to the right of a run's rightmost point; the last epoch's
            # to the left of the point (the nearly vertical plain-SGD paths sit side by side),
            # above it only where it is the panel's leftmost point
            right = r is rows[0] and r["kl"] >= max(x["kl"] for x in rows)
            left = r["kl"] <= min(x["kl"] for x in rows) and (
                r is rows[0] or r["kl"] <= min(x["kl"] for v in runs.values()
                                               for x in v["trace"] if x["nll"] is not None))
            # a last-epoch label beside a path is led up and to the left on a thin line, clear
            # of the other runs' paths
            lead = not right and not left and r is not rows[0]
            ax.annotate(where, (r["kl"], r["nll"]), fontsize=7, color=c,
                        xytext=(4, 0) if right else (0, 5) if left else (-36, 22) if lead
                        else (-4, 0),
                        ha="left" if right or left else "right",
                        va="bottom" if left and not right else "center",
                        textcoords="offset points",
                        arrowprops=dict(arrowstyle="-", color=c, lw=0.5) if lead else None)
    ax.set(xscale="log", yscale="log", xlabel="KL per training example (nats, log scale)",
           ylabel="training NLL per example (nats, log scale)", title="fit against complexity")
    kls = [r["kl"] for run in runs.values() for r in run["trace"] if r["nll"] is not None]
    ticks = [t for t in (1, 2, 5, 10, 20, 40, 100, 200, 500) if min(kls) <= t <= max(kls)]
    ax.xaxis.set_major_locator(FixedLocator(ticks or [min(kls)]))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())  # major ticks only: labels kept apart
    handles = [Line2D([], [], color=COLORS.get(k, "0.3"), lw=_STYLE.get(k, {}).get("lw", 1.5),
                      ls=_STYLE.get(k, {}).get("ls", "-")) for k in runs]
    handles.append(Line2D([], [], color="0.3", lw=0.7, ls=":"))
    names = [DISPLAY.get(k, k) for k in runs] + [
        "5th and 95th percentiles (band edges; plain SGD's lie within their lines)"]
    fig.legend(handles, names, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    return fig


# ---- σ in the Adam recipe's Table 1 runs: what their run records can say ----

SIGMA_KEYS = ("posterior", "sigma", "sigma_q", "rho")  # keys a record would hold σ under


def _n_params(H, d_in=784, d_out=10):
    """Weights and biases of a 784-H-H-10 network: the terms the KL sums over."""
    return d_in * H + H + H * H + H + H * d_out + d_out


def records_hold_sigma(records):
    """Whether any run record holds σ statistics (a key of ``SIGMA_KEYS`` in its metrics, or at
    its top level)."""
    return any(k in r or k in (r.get("metrics") or {}) for r in records for k in SIGMA_KEYS)


def sigma_floor(record, n_train=50_000):
    """A lower bound on the geometric mean of σ over a Gaussian-prior BBB run's weights and
    biases, from its last epoch's KL per training example (``history``): for q = N(μ, σ²) and
    the prior N(0, s²), KL_j = log s − log σ_j + (σ_j² + μ_j²)/(2 s²) − ½ ≥ log s − log σ_j − ½,
    so mean(log σ_j) ≥ log s − ½ − KL · n_train / P. Returns {floor, start (softplus(ρ₀)),
    ratio}; None for another prior or without a history."""
    c, h = record.get("config") or {}, record.get("history") or []
    if c.get("method") != "bbb_gaussian" or not h:
        return None
    per = h[-1]["kl"] * n_train / _n_params(c["H"])
    floor = math.exp(math.log(c["prior_sigma"]) - 0.5 - per)
    start = _softplus(c["rho_init"])
    return {"floor": floor, "start": start, "ratio": floor / start}


def adam_sigma_check(get, widths, labels, warm=None, measured=None):
    """Markdown: what the run records of the Adam recipe's Table 1 BBB runs say about σ
    (``get(method, H)``: their records; ``widths``; ``labels``: {method: name}; ``warm``:
    {method: [widths where it starts warm]}). Whether the records hold σ at all; for the
    Gaussian prior, the KL's lower bound on σ's geometric mean (``sigma_floor``) against its
    start, beside a single sampled network's test error; for a prior whose KL bounds nothing
    (the scale mixture), σ measured in a rerun of seed 0 (``measured``: ``adam_load()``'s
    value; ``measured_words``) at the widths it holds, and "not checked" at the others. ''
    without records."""
    got = {H for H in widths if str(H) in ((measured or {}).get("widths") or {})}
    rows, held, unchecked, grown = [], False, [], []
    for m in ("bbb_gaussian", "bbb_mixture"):
        recs = {H: get(m, H) for H in widths}
        recs = {H: r for H, r in recs.items() if r}
        if not recs:
            continue
        held = held or any(records_hold_sigma(r) for r in recs.values())
        w = [H for H in recs if H in (warm or {}).get(m, [])]
        cold = [H for H in recs if H not in w]
        start = ("warm start" if not cold else "random start" if not w else
                 "random start at " + " and ".join(f"2×{H}" for H in cold) + ", warm at "
                 + " and ".join(f"2×{H}" for H in w))
        floors = [f for rs in recs.values() for f in map(sigma_floor, rs) if f]
        single = [100 * (sum(r["metrics"]["test_error_single_samples"])
                         / len(r["metrics"]["test_error_single_samples"]))
                  for rs in recs.values() for r in rs
                  if r["metrics"].get("test_error_single_samples")]
        sample = (f"{min(single):.1f}–{max(single):.1f} %" if single else "—")
        if floors:
            lo = min(f["floor"] for f in floors)
            grown.append(min(f["ratio"] for f in floors))
            st = {float(f"{f['start']:.3g}") for f in floors}
            what = (f"≥ {lo:#.3g} at the end (KL bound), {min(st):#.3g} at the start: "
                    f"≥ {float(f'{lo:.3g}') / min(st):.0f}-fold")  # from the printed values
        elif m == "bbb_mixture" and got:
            what = "measured in a rerun of seed 0 (below)"
            if set(recs) - got:
                unchecked.append(labels[m] + " at " + " and ".join(
                    f"2×{H}" for H in sorted(set(recs) - got)))
        else:
            what = "not bounded by the records"
            unchecked.append(labels[m])
        n = sum(len(rs) for rs in recs.values())
        rows.append(f"| {labels[m]} ({start}; {n} runs) | {what} | {sample} |")
    if not rows:
        return ""
    head = ("**Did σ learn in the Adam recipe's Table 1 runs?** "
            + ("Their run records hold σ statistics." if held else
               "Their run records hold no σ (the rule above needs it), only bounds:"))
    table = ["", "", "| BBB runs of Table 1 | σ's geometric mean over the weights | one "
             "sampled network's test error |", "|---|---|---|", *rows, "", ""]
    tail = []
    if grown and min(grown) >= 10:  # far from its start: too large to be alike everywhere
        tail.append("Gaussian prior: σ that large on every weight would swamp the means, yet a "
                    "sampled network still classifies, so σ differs weight by weight (inferred, "
                    "not measured).")
    elif grown:
        tail.append("Gaussian prior: the KL bound does not show σ grown far from its start, so "
                    "these records cannot tell whether it learned.")
    if unchecked:
        tail.append(f"{' and '.join(unchecked)[:1].upper()}{' and '.join(unchecked)[1:]}: not "
                    "checked on these runs; their verdicts rest on the related rerun above "
                    "(same optimiser, ρ₀ and 2×400 prior; random start, 50 epochs, one seed), "
                    "where σ learned.")
    more = measured_words(measured, sorted(got), labels["bbb_mixture"]) if got else ""
    return head + "\n".join(table) + " ".join(tail) + (f"\n\n{more}" if more else "")


MIXTURE_NO_VERDICT = "no verdict (σ did not learn)"  # the Adam recipe's mixture, where it did not


def adam_unlearned(measured):
    """The widths (ints, ascending) at which the rerun of the Adam recipe's warm-started scale
    mixture (``measured``: ``adam_load()``'s value) found σ *shifted uniformly*
    (``shifted_uniformly``): there the mixture's Adam-recipe verdicts read
    ``MIXTURE_NO_VERDICT``, as the paper protocol's BBB rows do. [] without measurements."""
    got = (measured or {}).get("widths") or {}
    return sorted(int(H) for H, e in got.items() if shifted_uniformly(e["layers"]))


def mixture_verdict(measured, H, verdict):
    """The Adam recipe's scale-mixture verdict ``verdict`` at width ``H`` as it may be read:
    ``MIXTURE_NO_VERDICT`` where σ did not learn there (``adam_unlearned``), else
    ``verdict`` unchanged (σ learned, or was not measured at ``H``)."""
    return MIXTURE_NO_VERDICT if int(H) in adam_unlearned(measured) else verdict


def _pct(x):
    return "—" if x is None else f"{100 * x:.2f} %"


def rerun_words(entry):
    """Whether a width's rerun reproduced its committed record (the cell under 'the rerun
    reproduced the record'): 'exactly (test error X)' when every compared value is equal, else
    "not exactly (same recipe and seed): test error X vs the record's Y"."""
    m, r = entry["metrics"], entry["record_metrics"]
    if entry["reproduced"]["exact"]:
        return f"exactly (test error {_pct(m['test_error'])})"
    return (f"not exactly (same recipe and seed): test error {_pct(m['test_error'])} vs the "
            f"record's {_pct(r['test_error'])}")


def measured_words(measured, widths, label="BBB, scale mixture prior"):
    """Markdown: σ measured at the end of the rerun of seed 0 at each of ``widths`` (the
    warm-started scale mixture; ``measured``: ``adam_load()``'s value): σ's median (range over
    layers) and 5–95 % range beside its start softplus(ρ₀), ρ's drift (median, range over
    layers; 95th percentile, the largest), section 3's reading (``shifted_uniformly``) and whether
    the rerun reproduced the record (``rerun_words``); then what that means for the mixture's
    Adam-recipe verdicts (``MIXTURE_NO_VERDICT`` where σ did not learn). '' without them."""
    got = (measured or {}).get("widths") or {}
    widths = [H for H in widths if str(H) in got]
    if not widths:
        return ""
    lines = [f"| {label}, seed 0 rerun | σ at the end: median (over layers); 5–95 % | "
             "ρ drift: median; 95th percentile (their ratio, the rule's) | σ | the rerun "
             "reproduced the record |", "|---|---|---|---|---|"]
    for H in widths:
        e = got[str(H)]
        lay = e["layers"].values()
        med = [v["sigma_q"][1] for v in lay]
        lo, hi = min(v["sigma_q"][0] for v in lay), max(v["sigma_q"][2] for v in lay)
        dmed = [v["rho_drift_q"][0] for v in lay]
        dtop = max(v["rho_drift_q"][1] for v in lay)
        ratio = dtop / min(dmed)
        ratio = f"{ratio:.2f}" if ratio < 10 else f"{ratio:.0f}"  # as notebook 01 quotes it
        # drifts to 3 significant figures, so that the ratio can be recomputed from them
        lines.append(f"| 2×{H} | {_span(min(med), max(med))}; {lo:#.3g}–{hi:.4f} (start "
                     f"{e['sigma_start']:#.3g}) | {_span3(min(dmed), max(dmed))}; {dtop:#.3g} "
                     f"({ratio}) | "
                     + ("shifted uniformly" if shifted_uniformly(e["layers"]) else "learned")
                     + f" | {rerun_words(e)} |")
    still = [H for H in adam_unlearned(measured) if H in widths]
    learned = [H for H in widths if H not in still]
    def at(ws):
        from .report import and_list
        return and_list([f"2×{H}" for H in ws])
    parts = []
    if learned:
        parts.append(f"At {at(learned)} σ learned (the rule above)"
                     + ("" if still else ": its verdicts count") + ".")
    if still:
        parts.append(f"At {at(still)} σ shifted uniformly, every ρ by about the same amount: "
                     f"the mixture's Adam-recipe verdicts there read *{MIXTURE_NO_VERDICT}*.")
    return "\n".join(lines) + "\n\n" + " ".join(parts)


def _span3(a, b):
    """'a–b' to three significant figures, one number where they agree at that precision."""
    x, y = f"{a:#.3g}", f"{b:#.3g}"
    return x if x == y else f"{x}–{y}"


def _span(a, b, digits=4):
    """'a–b' to ``digits`` decimals, one number where they agree at that precision."""
    x, y = f"{a:.{digits}f}", f"{b:.{digits}f}"
    return x if x == y else f"{x}–{y}"


# ---- σ measured in the Adam recipe's warm-started scale-mixture runs: a rerun of seed 0 ----
#
# The Table 1 run records of the Adam recipe hold no σ, and their checkpoints are not kept. So
# the committed seed-0 record of the warm-started scale mixture at each width is trained again
# exactly as it was run (helpers.classification.run, the record's config, the plan's data and
# predictor samples, one thread on the same kind of CPU), and σ is read from the rerun's network
# at its end. Whether the rerun reproduced the record (its per-epoch history and final metrics)
# is part of the result: where it did, the σ read is the σ of the reported run.

ADAM_NOTEBOOK = "01_adam_sigma_check"  # the reruns' checkpoint folder (not the campaign's)
ADAM_SETTINGS = {"default": dict(widths=[400, 800, 1200], n_train=None, n_eval=None,
                                 eval_samples=10, overrides={}),
                 "smoke": dict(widths=[400], n_train=1_000, n_eval=500, eval_samples=2,
                               overrides=dict(H=16, epochs=1, init_epochs=1))}
ADAM_HISTORY_KEYS = ("loss", "nll", "kl", "val_error", "test_error")
ADAM_METRIC_KEYS = ("test_error", "val_error", "predictor", "test_error_ensemble",
                    "test_error_mean_weights", "val_error_ensemble", "val_error_mean_weights",
                    "test_error_single_samples")


def adam_path():
    """The measurements' file (under ``results_dir()``: the smoke profile's under build/)."""
    return results_dir() / NB / "adam_sigma_check.json"


def adam_load():
    """The stored measurements, or None."""
    p = adam_path()
    return json.loads(p.read_text()) if p.exists() else None


def adam_source(H):
    """The committed seed-0 record of the warm-started scale mixture at width ``H`` (the Adam
    recipe's Table 1 run): its path relative to the project."""
    folder = PROJECT / "results" / NB / "plan_v1" / "runs" / f"h{H}" / "bbb_mixture"
    for p in sorted(folder.glob("*.json")):
        c = json.loads(p.read_text())["config"]
        if c["seed"] == 0 and c.get("init_from"):
            return p.relative_to(PROJECT)
    raise FileNotFoundError(f"no warm-started seed-0 scale-mixture record under {folder}")


def _max_abs(a, b):
    """Largest |a − b| over paired numbers (lists, dicts with the same keys, or numbers); None
    where either is missing or the lengths or keys differ; 0.0 for equal non-numbers, inf for
    unequal ones."""
    if isinstance(a, list) or isinstance(b, list):
        if not isinstance(a, list) or not isinstance(b, list) or len(a) != len(b):
            return None
        vals = [_max_abs(x, y) for x, y in zip(a, b)]
        return None if any(v is None for v in vals) else max(vals, default=0.0)
    if isinstance(a, dict) or isinstance(b, dict):  # the same keys, the largest over them
        if not isinstance(a, dict) or not isinstance(b, dict) or set(a) != set(b):
            return None
        vals = [_max_abs(a[k], b[k]) for k in a]
        return None if any(v is None for v in vals) else max(vals, default=0.0)
    if a is None or b is None:
        return None if a is not b else 0.0
    if isinstance(a, str) or isinstance(b, str):
        return 0.0 if a == b else math.inf
    return abs(float(a) - float(b))


def compare_runs(rerun, record):
    """Whether ``rerun`` (a record ``run`` returned) reproduced ``record`` (the committed one):
    {"history": {key: max |Δ| over epochs}, "metrics": {key: max |Δ|}, "epochs": [rerun's,
    record's], "exact": every compared value equal, "max_abs_diff": the largest |Δ| (None where
    something could not be paired)}. Compared: ``ADAM_HISTORY_KEYS`` of each epoch and
    ``ADAM_METRIC_KEYS`` (wall times and paths are not)."""
    h1, h0 = rerun.get("history") or [], record.get("history") or []
    hist = {k: (_max_abs([r.get(k) for r in h1], [r.get(k) for r in h0]) if len(h1) == len(h0)
                else None) for k in ADAM_HISTORY_KEYS}
    met = {k: _max_abs(rerun["metrics"].get(k), record["metrics"].get(k))
           for k in ADAM_METRIC_KEYS if k in rerun["metrics"] or k in record["metrics"]}
    diffs = list(hist.values()) + list(met.values())
    exact = all(d == 0.0 for d in diffs)
    return {"history": hist, "metrics": met, "epochs": [len(h1), len(h0)], "exact": exact,
            "max_abs_diff": None if any(d is None for d in diffs) else max(diffs, default=0.0)}


def bias_state(model, rho_init):
    """{layer name: {"sigma_q", "rho_drift_q", "n"}} of the Bayesian layers' biases (their ρ
    start at ``rho_init`` too), as ``posterior_checks.posterior_state`` reads the weights."""
    import torch

    from .posterior_checks import QUANTILES, _linear_layers, _quantiles, layer_names
    out = {}
    for name, layer in zip(layer_names(model), _linear_layers(model)):
        rho = getattr(layer, "bias_rho", None)
        if rho is None:
            continue
        rho = rho.detach()
        out[name] = {"n": rho.numel(),
                     "sigma_q": _quantiles(torch.nn.functional.softplus(rho), QUANTILES),
                     "rho_drift_q": _quantiles((rho - rho_init).abs(), (0.5, 0.95))}
    return out


def code_snapshot(commit):
    """The package ``helpers/`` as it was at ``commit``, extracted (``git archive``, which reads
    the repository and changes nothing) under build/code/<commit>/; return that folder. A run
    started there with it as the working directory imports that code, not today's."""
    import io
    import shutil
    import subprocess
    import tarfile
    dest = PROJECT / "build" / "code" / commit[:12]
    if not (dest / "helpers" / "__init__.py").exists():
        tmp = dest.with_name(dest.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        tar = subprocess.run(["git", "archive", commit, "helpers"], cwd=PROJECT,
                             capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as t:
            t.extractall(tmp, filter="data")
        shutil.rmtree(dest, ignore_errors=True)
        tmp.rename(dest)
    return dest


# run in a subprocess from a code snapshot: train as helpers.classification.run did then, and
# save the trained network's parameters and the record it returned
_SNAPSHOT_RUN = """
import json, os, sys, torch
torch.set_num_threads(1)
import helpers
from helpers.classification import RunConfig, run
from helpers.data import load_mnist
a = json.loads(sys.argv[1])
assert os.path.abspath(helpers.__file__).startswith(a["code_dir"]), helpers.__file__
data = load_mnist(scale="paper", n_train=a["n_train"], n_test=a["n_eval"])
model, rec = run(RunConfig.from_dict(a["config"]), data, notebook=a["notebook"],
                 eval_samples=a["eval_samples"], test=True, checkpoint_every=1, desc=a["desc"])
torch.save({"model": model.state_dict(), "record": rec, "threads": torch.get_num_threads()},
           a["out"])
"""


def _train_under(commit, config, settings, notebook, desc, script=None, extra=None, env=None):
    """Train ``config`` with the code of ``commit`` (``code_snapshot``) in a subprocess on one
    thread; return (its parameters, the record its ``run`` returned, its thread count).
    ``script`` (default ``_SNAPSHOT_RUN``: ``helpers.classification.run``) is the code the
    subprocess runs, ``extra`` more of its arguments, ``env`` more of its environment (e.g.
    another checkpoint folder)."""
    import os
    import subprocess
    import sys

    import torch

    from .utils import checkpoints_dir
    code = code_snapshot(commit)
    out = checkpoints_dir() / notebook / "trained.pt"
    out.parent.mkdir(parents=True, exist_ok=True)
    args = {"code_dir": str(code), "config": config, "n_train": settings["n_train"],
            "n_eval": settings["n_eval"], "eval_samples": settings.get("eval_samples"),
            "notebook": notebook, "desc": desc, "out": str(out), **(extra or {})}
    env = {**os.environ, "BBB_CHECKPOINT_DIR": str(checkpoints_dir()), "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONPATH": str(code), **(env or {})}
    subprocess.run([sys.executable, "-c", script or _SNAPSHOT_RUN, json.dumps(args)], cwd=code,
                   env=env, check=True)
    state = torch.load(out, map_location="cpu", weights_only=False)
    out.unlink()
    return state["model"], state["record"], state["threads"]


def adam_rerun(H, data, settings, log=print, code="record"):
    """Train the committed seed-0 warm-started scale-mixture record at width ``H`` again as it
    was run (its config without "prior", ``settings``' overrides applied in the smoke profile)
    through ``helpers.classification.run`` with the test set (as the record was; the numbers are
    the reported run's, nothing is chosen from them); return the file's entry: σ and ρ drift per
    layer at the end (``posterior_state`` from a constant ρ₀: the means start from the source
    network, every ρ at ρ₀), the same for the biases, the narrow component's share, and whether
    the rerun reproduced the record (``compare_runs``), with the source network's history
    compared too. ``code``: 'record' trains with the code of the record's commit
    (``_train_under``; today's BBB kernels draw another noise stream), 'current' with today's
    (``data``: the images, used only then)."""
    import torch

    from .classification import RunConfig, build_model, checkpoint_path, run
    from .posterior_checks import _linear_layers, layer_names, posterior_state
    from .train import load_checkpoint
    src = adam_source(H)
    record = json.loads((PROJECT / src).read_text())
    config = {k: v for k, v in record["config"].items() if k != "prior"}
    cfg = RunConfig.from_dict({**config, **settings["overrides"]})
    t0 = time.perf_counter()
    desc = f"adam sigma check 2x{H}"
    if code == "record":
        commit = record["code"]["commit"]
        folder = f"{ADAM_NOTEBOOK}/{commit[:12]}"  # its checkpoints apart from today's code's
        params, rec, threads = _train_under(commit, {**config, **settings["overrides"]},
                                            settings, folder, desc)
        model = build_model(cfg)
        model.load_state_dict(params)
        ran = {"commit": commit, "how": "the record's commit (helpers/ by git archive)",
               "threads": threads}
    else:
        folder = ADAM_NOTEBOOK
        model, rec = run(cfg, data, notebook=folder, eval_samples=settings["eval_samples"],
                         test=True, checkpoint_every=1, desc=desc)
        ran = {"commit": code_label(), "how": "today's code", "threads": torch.get_num_threads()}
    wall = time.perf_counter() - t0
    start = {n: torch.full_like(lay.weight_rho, cfg.rho_init)  # every ρ started at ρ₀
             for n, lay in zip(layer_names(model), _linear_layers(model))}
    entry = {"H": H, "source": str(src), "source_code": record.get("code"), "ran_with": ran,
             "config": {**config, **settings["overrides"]}, "seed": cfg.seed,
             "rho_init": cfg.rho_init, "sigma_start": _softplus(cfg.rho_init),
             "layers": posterior_state(model, start),
             "biases": bias_state(model, cfg.rho_init), "layer_order": layer_names(model),
             "metrics": {k: rec["metrics"].get(k) for k in ADAM_METRIC_KEYS},
             "record_metrics": {k: record["metrics"].get(k) for k in ADAM_METRIC_KEYS},
             "history": [{k: r.get(k) for k in ADAM_HISTORY_KEYS + ("epoch",)}
                         for r in rec["history"]],
             "reproduced": compare_runs(rec, record), "wall_s": round(wall, 1)}
    src_cfg = cfg.init_source()
    ck = checkpoint_path(src_cfg, folder)
    src_rec = PROJECT / "results" / NB / "plan_v1" / "runs" / f"h{H}" / "warm_start_source" / \
        f"{src_cfg.name}.json"
    if ck.exists() and src_rec.exists():
        hist, want = load_checkpoint(ck)["history"], json.loads(src_rec.read_text())["history"]
        entry["source_reproduced"] = {
            k: (_max_abs([r.get(k) for r in hist], [r.get(k) for r in want])
                if len(hist) == len(want) else None) for k in ("loss", "val_error", "test_error")}
    log(f"2x{H} ({ran['how']}): {wall:.0f} s; reproduced exactly: "
        f"{entry['reproduced']['exact']} (max |Δ| {entry['reproduced']['max_abs_diff']}); test "
        f"error {rec['metrics']['test_error']} vs the record's {record['metrics']['test_error']}")
    return entry


ADAM_NOTE = ("seed 0 of each width's warm-started scale-mixture Table 1 run (the Adam recipe), "
             "trained again with the committed record's config, data and code path ('widths': "
             "with the code of the record's commit; 'current_code': with today's, whose BBB "
             "kernels draw another noise stream); σ read from "
             "the network at its end (ρ drift from ρ₀, where every ρ starts). The test errors "
             "computed here are the reported run's own (same seed, same code path), already "
             "reported: nothing is chosen from them.")


def adam_run_all(profile="default", widths=None, log=print, code="record"):
    """Rerun every width of ``widths`` (default: the profile's) not yet in the file, in order,
    writing the file atomically after each; return it. ``code`` (``adam_rerun``): 'record'
    fills "widths" (what the notebook reads), 'current' fills "current_code"."""
    import torch

    from .data import load_mnist
    settings = ADAM_SETTINGS[profile]
    key = "widths" if code == "record" else "current_code"
    out = adam_load() or {}
    out.setdefault(key, {})
    todo = [H for H in (widths or settings["widths"]) if str(H) not in out[key]]
    for H in (widths or settings["widths"]):
        if str(H) in out[key]:
            log(f"2x{H}: done already")
    if not todo:
        return out
    data = (load_mnist(scale="paper", n_train=settings["n_train"], n_test=settings["n_eval"])
            if code == "current" else None)
    for H in todo:
        entry = adam_rerun(H, data, settings, log=log, code=code)
        out = _adam_store(key, H, entry, dict(
            profile=profile, settings={k: v for k, v in settings.items()}, code=code_label(),
            machine=machine_info(), threads=torch.get_num_threads(),
            created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            note=ADAM_NOTE))
    return out


def _adam_store(key, H, entry, meta):
    """Add ``entry`` under ``key``/``H`` to the file as it is now (read again under a lock, so
    that runs of different widths in parallel keep each other's entries), widths in ascending
    order; write it atomically; return it."""
    import fcntl
    path = adam_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = PROJECT / "build" / "adam_sigma_check.lock"  # not beside the results
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        out = adam_load() or {}
        got = {**out.get(key, {}), str(H): entry}
        out[key] = {k: got[k] for k in sorted(got, key=int)}
        out.update(meta)
        atomic_write_bytes(path, (json.dumps(out, indent=1) + "\n").encode())
    return out


# ---- σ measured in notebook 06's (and 05's) final BBB runs: reruns of seeds 0, 1, 2 ----
#
# The final BBB records of notebook 06's plan v3 (results/06_alternatives/v3/final/bbb/, which
# notebook 05 reads too) hold no σ and no checkpoint of them is kept. So each seed's run is
# trained again as it was run: ``helpers.alternatives_final.run_one`` of the record's own commit
# (helpers/ by ``git archive``, a subprocess on one thread, the plan's search records giving the
# choice, its own record and checkpoints written apart), and σ is read from the network it
# trained. Whether the rerun reproduced the record (every score it holds) is part of the result.

ALT_NB = "06_alternatives"
BBB06_NOTEBOOK = "06_bbb_sigma_check"  # the reruns' checkpoint folder (not the campaign's)
BBB06_SETTINGS = {"default": dict(seeds=[0, 1, 2], n_train=None, n_eval=None, overrides={}),
                  "smoke": dict(seeds=[0], n_train=1_000, n_eval=500,
                                overrides=dict(H=16, epochs=1))}
# what a final record holds that a rerun must reproduce (not: wall times, machine, code)
BBB06_COMPARED = ("full", "subset", "mc_repeats", "subset_size", "test_samples", "stored_floats",
                  "setting", "epochs", "chosen", "failed", "map_network")
BBB06_NOTE = ("seeds of notebook 06's final BBB runs (plan v3), each trained again through "
              "helpers.alternatives_final.run_one with the code of its record's commit (helpers/ "
              "by git archive, one thread), the choice read from the committed search records; "
              "σ read from the network at its end (ρ drift from ρ₀, where every ρ starts). The "
              "scores computed here are the reported runs' own (same seed, same code path), "
              "already reported: nothing is chosen from them.")


def bbb06_path():
    """The measurements' file (under ``results_dir()``: the smoke profile's under build/)."""
    return results_dir() / ALT_NB / "v3" / "bbb_sigma_check.json"


def bbb06_load():
    """The stored measurements, or None."""
    p = bbb06_path()
    return json.loads(p.read_text()) if p.exists() else None


def bbb06_source(seed):
    """The committed final BBB record of ``seed``: its path relative to the project."""
    return Path("results") / ALT_NB / "v3" / "final" / "bbb" / f"seed{int(seed)}.json"


# run in a subprocess from a code snapshot: alternatives_final.run_one as the final runs were
# made (tools/alternatives_search.py final), keeping the network it trained
_FINAL_RUN = """
import json, os, sys, torch
torch.set_num_threads(1)
import helpers as H
from helpers import alternatives_final as F
a = json.loads(sys.argv[1])
assert os.path.abspath(H.__file__).startswith(a["code_dir"]), H.__file__
data = H.load_images("MNIST", n_train=a["n_train"], n_test=a["n_eval"])
x_ood = H.load_images("FashionMNIST", n_test=a["n_eval"]).x_test
chosen = F.choices(partial=True)
c = chosen[a["method"]]
assert (c["name"], c["epochs"]) == (a["chosen"], a["epochs"]), (c["name"], c["epochs"])
if a["overrides"]:
    o = a["overrides"]
    chosen[a["method"]] = {**c, "config": {**c["config"], **o},
                           "epochs": o.get("epochs", c["epochs"])}
got = {}
networks = F.networks
def keep(*args, **kw):
    obj, wall = networks(*args, **kw)
    got["model"] = obj
    return obj, wall
F.networks = keep
rec = F.run_one(a["method"], a["seed"], data, x_ood, chosen,
                progress_fn=lambda m: print(m, flush=True))
torch.save({"model": got["model"].state_dict(), "record": rec, "threads": torch.get_num_threads()},
           a["out"])
"""


def compare_final(rerun, record, keys=BBB06_COMPARED):
    """Whether ``rerun`` (a final record ``run_one`` returned) reproduced ``record`` (the
    committed one): {"scores": {"full.<metric>" / "subset.<metric>": |Δ|}, "fields": {key: max
    |Δ|} over ``keys``, "exact": every compared value equal, "max_abs_diff": the largest (None
    where something could not be paired), "max_score_diff": the largest over the scores}."""
    scores = {}
    for part in ("full", "subset"):
        a, b = rerun.get(part) or {}, record.get(part) or {}
        for k in sorted(set(a) | set(b)):
            scores[f"{part}.{k}"] = _max_abs(a.get(k), b.get(k))
    fields = {k: _max_abs(rerun.get(k), record.get(k)) for k in keys
              if k in rerun or k in record}
    diffs = list(scores.values()) + list(fields.values())
    return {"scores": scores, "fields": fields, "exact": all(d == 0.0 for d in diffs),
            "max_abs_diff": None if any(d is None for d in diffs) else max(diffs, default=0.0),
            "max_score_diff": (None if not scores or any(d is None for d in scores.values())
                               else max(scores.values()))}


def bbb06_rerun(seed, settings, log=print):
    """Train the committed final BBB run of ``seed`` again as it was run (``_FINAL_RUN`` under its
    record's commit; ``settings``' overrides in the smoke profile); return the file's entry: σ
    and ρ drift per weight matrix at the end (``posterior_state`` from ρ₀: every ρ starts there),
    the same for the biases, the narrow component's share, section 3's reading
    (``shifted_uniformly``) and whether the rerun reproduced the record (``compare_final``)."""
    import shutil

    import torch

    from .classification import RunConfig, build_model
    from .posterior_checks import _linear_layers, layer_names, posterior_state
    from .utils import checkpoints_dir
    src = bbb06_source(seed)
    record = json.loads((PROJECT / src).read_text())
    commit = record["code"]["commit"]
    folder = f"{BBB06_NOTEBOOK}/{commit[:12]}/seed{int(seed)}"
    own = checkpoints_dir() / folder  # the rerun's own results and checkpoints
    search = own / "results" / ALT_NB / "v3" / "search"
    search.parent.mkdir(parents=True, exist_ok=True)
    if not search.exists():
        search.symlink_to(PROJECT / "results" / ALT_NB / "v3" / "search")  # read only
    shutil.rmtree(own / "results" / ALT_NB / "v3" / "final", ignore_errors=True)
    t0 = time.perf_counter()
    extra = {"method": "bbb", "seed": int(seed), "chosen": record["chosen"],
             "epochs": record["epochs"], "overrides": settings["overrides"]}
    params, rec, threads = _train_under(
        commit, None, settings, folder, f"bbb sigma check seed {seed}", script=_FINAL_RUN,
        extra=extra, env={"BBB_RESULTS_DIR": str(own / "results"),
                          "BBB_CHECKPOINT_DIR": str(own / "checkpoints")})
    wall = time.perf_counter() - t0
    cfg = RunConfig.from_dict(rec["setting"])
    model = build_model(cfg)
    model.load_state_dict(params)
    start = {n: torch.full_like(lay.weight_rho, cfg.rho_init)
             for n, lay in zip(layer_names(model), _linear_layers(model))}
    layers = posterior_state(model, start)
    entry = {"seed": int(seed), "source": str(src), "source_code": record.get("code"),
             "ran_with": {"commit": commit, "how": "the record's commit (helpers/ by git "
                          "archive), alternatives_final.run_one", "threads": threads},
             "setting": rec["setting"], "rho_init": cfg.rho_init,
             "sigma_start": _softplus(cfg.rho_init), "layers": layers,
             "biases": bias_state(model, cfg.rho_init), "layer_order": layer_names(model),
             "shifted_uniformly": shifted_uniformly(layers),
             "scores": {k: rec.get(k) for k in ("full", "subset")},
             "record_scores": {k: record.get(k) for k in ("full", "subset")},
             "reproduced": compare_final(rec, record), "wall_s": round(wall, 1)}
    top = max(v["sigma_q"][2] for v in layers.values())
    log(f"seed {seed}: {wall:.0f} s; reproduced exactly: {entry['reproduced']['exact']} (max "
        f"|Δ| {entry['reproduced']['max_abs_diff']}); σ 95th pct {top:.4g} (start "
        f"{entry['sigma_start']:.4g}); shifted uniformly: {entry['shifted_uniformly']}")
    return entry


def bbb06_run_all(profile="default", seeds=None, log=print):
    """Rerun every seed of ``seeds`` (default: the profile's) not yet in the file, in order, one
    at a time, writing the file (with its ``text``, ``bbb06_text``) atomically after each;
    return it. A stored ``text`` that today's ``bbb06_text`` renders otherwise is rendered again
    first (nothing else changes)."""
    import torch
    settings = BBB06_SETTINGS[profile]
    out = bbb06_load() or {}
    if out.get("seeds") and out.get("text") != bbb06_text(out):  # rendered by today's code
        out["text"] = bbb06_text(out)
        atomic_write_bytes(bbb06_path(), (json.dumps(out, indent=1) + "\n").encode())
    for s in (seeds if seeds is not None else settings["seeds"]):
        if str(s) in out.get("seeds", {}):
            log(f"seed {s}: done already")
            continue
        entry = bbb06_rerun(s, settings, log=log)
        out = bbb06_load() or {}  # read again: another process may have added a seed
        got = {**out.get("seeds", {}), str(s): entry}
        out["seeds"] = {k: got[k] for k in sorted(got, key=int)}
        out.update(profile=profile, settings=settings, code=code_label(), machine=machine_info(),
                   threads=torch.get_num_threads(), note=BBB06_NOTE,
                   created=datetime.datetime.now(datetime.timezone.utc).isoformat(
                       timespec="seconds"))
        out["text"] = bbb06_text(out)
        path = bbb06_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, (json.dumps(out, indent=1) + "\n").encode())
    return out


def _seeds_words(seeds):
    from .report import and_list
    return f"seed{'s' if len(seeds) > 1 else ''} {and_list([str(s) for s in seeds])}"


def _rule_numbers(layers):
    """(ρ's 95th-percentile change, the largest over layers; its median change, the smallest
    over layers): the two numbers ``shifted_uniformly`` compares."""
    return (max(v["rho_drift_q"][1] for v in layers.values()),
            min(v["rho_drift_q"][0] for v in layers.values()))


def bbb06_text(measured, n_runs=None):
    """One or two plain sentences for notebook 06's reader, from ``measured`` (``bbb06_load()``'s
    value): whether σ learned in each rerun seed by section 3's rule of notebook 01
    (``shifted_uniformly``: ρ's 95th-percentile change from its start more than 1.1 times its
    median), with those two numbers (ranges over the seeds) and σ's median and 5th–95th
    percentiles at the end (ranges over layers and seeds) beside its start; then whether each
    rerun reproduced its record's scores exactly. '' without a seed. ``n_runs``: how many
    final BBB runs there are (default: the committed records')."""
    got = (measured or {}).get("seeds") or {}
    if not got:
        return ""
    if n_runs is None:
        n_runs = len(list((PROJECT / bbb06_source(0)).parent.glob("seed*.json")))
    seeds = [int(s) for s in got]
    still = [s for s in seeds if shifted_uniformly(got[str(s)]["layers"])]
    learned = [s for s in seeds if s not in still]

    def rng(xs, digits=3):  # significant digits; one number where they agree
        a, b = f"{min(xs):.{digits}g}", f"{max(xs):.{digits}g}"
        return a if a == b else f"{a}–{b}"

    def rule(group):
        nums = [_rule_numbers(got[str(s)]["layers"]) for s in group]
        return (f"ρ's 95th-percentile change from its start {rng([t for t, _ in nums])} "
                f"against a median change of {rng([m for _, m in nums])}")
    lay = [v for e in got.values() for v in e["layers"].values()]
    lo, hi = min(v["sigma_q"][0] for v in lay), max(v["sigma_q"][2] for v in lay)
    start = rng([e["sigma_start"] for e in got.values()])
    answer = "Yes" if not still else "No" if not learned else "Not in every seed"
    first = (f"{answer}, by [notebook 01](01_mnist_classification.ipynb)'s test (section 3): "
             f"in {_seeds_words(seeds)} of the {n_runs} final BBB runs, trained again, ")
    if learned:
        first += (f"σ learned{' in ' + _seeds_words(learned) if still else ''}, spreading apart "
                  f"weight by weight ({rule(learned)})")
    if still:
        first += ("; " if learned else "") + (
            f"σ shifted uniformly{' in ' + _seeds_words(still) if learned else ''}, every ρ "
            f"moving by about the same amount ({rule(still)}): it did not learn")
    med = [v["sigma_q"][1] for v in lay]
    first += (f"; at the end σ's median over a layer's weights is {rng(med)} and its 5th–95th "
              f"percentiles span {rng([lo, hi])}, from {start} at the start.")
    exact = [s for s in seeds if got[str(s)]["reproduced"]["exact"]]
    off = [s for s in seeds if s not in exact]
    if not off:
        second = ((f"Each rerun" if len(seeds) > 1 else "The rerun") + " reproduced every "
                  "score of its record exactly, so " + ("these are the σ of the reported runs."
                                                        if len(seeds) > 1 else
                                                        "this is the σ of the reported run."))
    else:
        d = [got[str(s)]["reproduced"].get("max_score_diff") for s in off]
        second = (f"The rerun of {_seeds_words(off)} did not reproduce its record exactly ("
                  + ("scores not comparable" if any(x is None for x in d) else
                     f"largest score difference {max(d):.2g}")
                  + "): its σ is that of the same recipe and seed, not of the reported run"
                  + (f"; {_seeds_words(exact)} reproduced exactly" if exact else "") + ".")
    return first + " " + second
