"""Notebook 01's "is the posterior learning?" (issue 49, item 1): short reruns with a trace.

For each source run (a committed Table 1 record: the paper's protocol of section 7 with either
prior, and plan v1's random-start scale mixture under Adam), the same configuration is trained
again for at most 50 epochs on seed 0, validation only (no test number is computed), with
``helpers.posterior_checks.PosteriorTrace`` after every epoch. ``tools/posterior_diagnostics.py``
runs it; the notebook reads ``results/01_mnist_classification/posterior_diagnostics.json``.
"""
import datetime
import json
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
    """Markdown: per run, sigma's 5-95 % range over all layers at the start and at the end, how
    far rho moved (the median weight and the 95th percentile, over layers), the narrow prior
    component's share of the means at the end (scale mixture), the training NLL and KL per
    example and the validation error at the end; every number from ``rec``."""
    verdicts = []
    lines = [f"Reruns of {rec['settings']['epochs']} epochs on seed {rec['settings']['seed']}, "
             "validation only (`results/01_mnist_classification/posterior_diagnostics.json`):",
             ""]
    for label, run in rec["runs"].items():
        first, last = run["trace"][0]["layers"], run["trace"][-1]["layers"]
        lo0, hi0 = min(v["sigma_q"][0] for v in first.values()), max(v["sigma_q"][2] for v in first.values())
        lo1, hi1 = min(v["sigma_q"][0] for v in last.values()), max(v["sigma_q"][2] for v in last.values())
        med = [v["rho_drift_q"][0] for v in last.values()]
        top = max(v["rho_drift_q"][1] for v in last.values())
        alike = top <= 1.1 * min(med)
        share = [v["narrow_share"] for v in last.values() if v["narrow_share"] is not None]
        end = run["trace"][-1]
        text = (f"- **{label}**: σ's 5–95 % range {lo0:.4f}–{hi0:.4f} at the start, "
                f"{lo1:.4f}–{hi1:.4f} after {run['epochs']} epochs; ρ moved by "
                f"{min(med):.3f}–{max(med):.3f} at the median weight of a layer and at most "
                f"{top:.3f} at the 95th percentile"
                + (" — every weight by about the same amount, whatever the data say" if alike
                   else ""))
        if share:
            text += (f"; the prior's narrow component claims {100 * min(share):.1f}–"
                     f"{100 * max(share):.1f} % of the means (by layer)")
        lines.append(text + f"; training NLL {end['nll']:.4f} and KL {end['kl']:.1f} nats per "
                     f"example; validation error {100 * run['val_error'][-1]:.2f} %.")
        verdicts.append((label, alike, hi1 / hi0))
    still = [f"*{label}*" for label, alike, _ in verdicts if alike]
    spread = [f"*{label}* (its largest σ grew {ratio:.0f}-fold)" for label, alike, ratio in verdicts
              if not alike]
    answer = "**What it shows.** "
    if still:
        answer += (f"In the run{'s' if len(still) > 1 else ''} {' and '.join(still)} the widths did not learn from the data: every ρ moved "
                   "by about the same amount, so σ is still what the initialisation set. ")
    if spread:
        answer += (f"In the run{'s' if len(spread) > 1 else ''} {' and '.join(spread)} the widths spread apart, weight by weight: the "
                   "posterior learned where the data allow uncertainty.")
    return "\n".join(lines + ["", answer.strip()])


def takeaway(rec):
    """One sentence from ``rec`` for the takeaways: in the runs whose ρ all moved alike, σ's
    range at the start and at the end (the widths did not learn), against the largest σ growth
    among the other runs. '' when every run's widths spread."""
    still, grew = [], []
    for label, run in rec["runs"].items():
        first, last = run["trace"][0]["layers"], run["trace"][-1]["layers"]
        med = [v["rho_drift_q"][0] for v in last.values()]
        top = max(v["rho_drift_q"][1] for v in last.values())
        hi0 = max(v["sigma_q"][2] for v in first.values())
        hi1 = max(v["sigma_q"][2] for v in last.values())
        (still if top <= 1.1 * min(med) else grew).append((label, hi0, hi1))
    if not still:
        return ""
    text = ("**Trained as the paper says, the posterior's widths did not learn**: over "
            f"{rec['settings']['epochs']} epochs every ρ moved alike and σ's 95th percentile "
            "went from " + "; ".join(f"{a:.4f} to {b:.4f} ({DISPLAY.get(k, k)})"
                                     for k, a, b in still) + ".")
    if grew:
        k, a, b = max(grew, key=lambda g: g[2] / g[1])
        text += (f" Under the Adam recipe it grew {b / a:.0f}-fold ({DISPLAY.get(k, k)}). So the "
                 "paper-protocol rows measure BBB with widths fixed at their start, not yet "
                 "the method the paper describes.")
    return text
