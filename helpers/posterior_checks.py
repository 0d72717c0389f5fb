"""Is the posterior learning? Per-layer readings of a Bayesian network's weights.

A BBB network can fit its means while its widths stay where they started (plain SGD on the summed
cost moves each rho by about the learning rate per epoch, whatever the data say). These readings
tell the two apart, per layer:

- the 5 / 50 / 95 % quantiles of sigma = softplus(rho);
- how far rho has moved from where it started (median and 95 % quantile of |rho - rho_start|);
- under a scale-mixture prior, the share of weights whose posterior mean the prior's narrow
  component claims (its responsibility at w = mu above one half).

``posterior_state(model)`` reads them once; ``PosteriorTrace`` records them after every epoch of
``helpers.fit`` (its ``on_epoch`` hook). Nothing here trains or knows an experiment.
"""
import math

import torch

from .layers import bayes_layers, softplus
from .priors import ScaleMixturePrior

QUANTILES = (0.05, 0.5, 0.95)


def _quantiles(x, qs):
    x = x.detach().flatten().double()
    if x.numel() > 2**24:  # torch.quantile's limit; a fixed, evenly spaced subsample
        x = x[:: math.ceil(x.numel() / 2**24)]
    return [float(v) for v in torch.quantile(x, torch.tensor(qs, dtype=torch.float64))]


def narrow_share(mu, prior):
    """Return the share of ``mu`` whose narrow-component responsibility under the scale mixture
    ``prior`` exceeds one half (None for another prior)."""
    if not isinstance(prior, ScaleMixturePrior):
        return None
    ka, kb, ca, cb = prior.constants()  # log weight densities: c - k w^2 (wide a, narrow b)
    w2 = mu.detach().double() ** 2
    return float(((cb - kb * w2) > (ca - ka * w2)).double().mean())


def _linear_layers(model):
    """The BayesLinear of each Bayesian layer (a BayesConv2d keeps its weights in one)."""
    return [getattr(layer, "_lin", layer) for layer in bayes_layers(model)]


def layer_names(model):
    """Return the names of ``model``'s Bayesian layers in order ('layer0', ... where unnamed)."""
    names = {id(m): n for n, m in model.named_modules()}
    return [names.get(id(layer)) or f"layer{i}" for i, layer in enumerate(bayes_layers(model))]


def posterior_state(model, start=None, quantiles=QUANTILES):
    """Return {layer name: readings} for the weight matrices of ``model``'s Bayesian layers:
    ``sigma_q`` (the sigma quantiles ``quantiles``), ``rho_drift_q`` (median and 95 % quantile of
    |rho - start|, None without ``start``: a {layer name: rho tensor} as ``rho_snapshot`` returns),
    ``narrow_share`` (scale mixture only, else None) and ``n`` (weights)."""
    out = {}
    for name, layer in zip(layer_names(model), _linear_layers(model)):
        rho = layer.weight_rho.detach()
        row = {"n": rho.numel(), "sigma_q": _quantiles(softplus(rho), quantiles), "rho_drift_q": None,
               "narrow_share": narrow_share(layer.weight_mu, getattr(layer, "prior", None))}
        if start is not None:
            row["rho_drift_q"] = _quantiles((rho - start[name].to(rho)).abs(), (0.5, 0.95))
        out[name] = row
    return out


def rho_snapshot(model):
    """Return {layer name: a copy of its weight rho} (the start ``posterior_state`` measures from)."""
    return {n: layer.weight_rho.detach().clone()
            for n, layer in zip(layer_names(model), _linear_layers(model))}


class PosteriorTrace:
    """Record ``posterior_state`` after every epoch: ``fit(..., on_epoch=trace)``.

    ``rows``: one dict per epoch, {"epoch", "nll", "kl", "layers": {name: readings}}; the start
    is the model as the trace was made (epoch 0 is recorded then)."""

    def __init__(self, model):
        self.start = rho_snapshot(model)
        self.rows = [{"epoch": 0, "nll": None, "kl": None, "layers": posterior_state(model, self.start)}]

    def __call__(self, row, model):
        self.rows.append({"epoch": row["epoch"], "nll": row.get("nll"), "kl": row.get("kl"),
                          "layers": posterior_state(model, self.start)})

    def moved(self, rel=0.05):
        """Return {layer: True when its median sigma moved more than ``rel`` (relative) from the
        start}: the plain reading of "did sigma move from its initial value?"."""
        first, last = self.rows[0]["layers"], self.rows[-1]["layers"]
        return {n: abs(last[n]["sigma_q"][1] / first[n]["sigma_q"][1] - 1) > rel for n in first}


def plot_traces(runs, axes=None):
    """Draw, for each run of ``runs`` ({label: {"trace": PosteriorTrace.rows}}), the median sigma
    of every layer against the epoch with its 5-95 % band (left; colour: run, line style: layer),
    and the training NLL against the KL per example, epoch by epoch (right). Return the figure."""
    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.lines import Line2D
    from matplotlib.ticker import ScalarFormatter
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
    fig = axes[0].figure
    colors = sns.color_palette("colorblind", len(runs))
    styles = ("-", "--", ":", "-.")
    n_layers = 0
    for i, ((label, run), color) in enumerate(zip(runs.items(), colors)):
        rows = run["trace"]
        epochs = [r["epoch"] for r in rows]
        lw = 3.4 if i == 0 else 1.6  # the first run drawn wide underneath: curves that coincide stay visible
        for k, layer in enumerate(rows[0]["layers"]):
            q = [r["layers"][layer]["sigma_q"] for r in rows]
            axes[0].plot(epochs, [v[1] for v in q], styles[k % 4], color=color, lw=lw, zorder=2 + i)
            axes[0].fill_between(epochs, [v[0] for v in q], [v[2] for v in q], color=color,
                                 alpha=0.10, linewidth=0)
            n_layers = max(n_layers, k + 1)
        fit_rows = [r for r in rows if r["nll"] is not None]
        axes[1].plot([r["kl"] for r in fit_rows], [r["nll"] for r in fit_rows], "o-", ms=2,
                     color=color, label=label)
        for r, where in ((fit_rows[0], "epoch 1"), (fit_rows[-1], f"epoch {fit_rows[-1]['epoch']}")):
            axes[1].annotate(where, (r["kl"], r["nll"]), fontsize=7, color=color, xytext=(3, 3),
                             textcoords="offset points")
    axes[0].set(yscale="log", xlabel="epoch", ylabel="σ = softplus(ρ): median, 5–95 % band",
                title="Do the posterior's widths move?")
    axes[1].set(xscale="log", yscale="log", xlabel="KL per training example (nats)",
                ylabel="training NLL per example (nats)", title="Fit against complexity, per epoch")
    axes[1].xaxis.set_major_formatter(ScalarFormatter())
    axes[1].xaxis.set_minor_formatter(ScalarFormatter())
    handles = [Line2D([], [], color=c, lw=2) for c in colors[:len(runs)]]
    handles += [Line2D([], [], color="0.3", ls=styles[k % 4]) for k in range(n_layers)]
    names = list(runs) + [f"layer {k + 1}" + (" (input)" if k == 0 else " (output)"
                                               if k == n_layers - 1 else "")
                          for k in range(n_layers)]
    fig.legend(handles, names, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    return fig
