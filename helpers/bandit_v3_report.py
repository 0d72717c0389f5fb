"""The declared analysis of the mushroom-bandit plan v3 (notebook 03, paper section 5.3, Figure 6),
written before any of its numbers exist. Every function reads run records as
``helpers.bandit_campaign._write_record`` writes them (one dict per run) and returns plain data
(lists of row dicts, dicts) or a matplotlib Figure; a notebook calls each in one line. The
statistics are the plan's "tests" field (helpers.bandit_campaign.plan()["tests"]).

Rules shared by every function (the plan's, and the choices it left open):

- **Which records.** ``final_table``, ``comparisons``, ``paper_claim`` and ``figure6`` read the
  records of stage 'reported' of one tier only; records of every other stage (screen, confirm,
  edge, why) and tier are ignored, so tuning seeds cannot move them. ``choice_table`` reads the
  tuning stages through ``helpers.bandit_campaign.choose`` (tuning seeds only); ``why_rows``,
  ``contraction`` and ``why_figure`` read stage 'why' only.
- **Refusals (ValueError, naming what is missing).** A tier whose reported records lack a
  declared agent (``AGENTS``, ``ABLATIONS``), whose agents do not share one seed set, that holds
  two records of one (agent, seed), an unknown agent, records of another plan version or of two
  profiles, or, in the default profile, a seed set other than the plan's reported seeds 4-13.
- **Summaries.** Quantiles (median, quartiles) interpolate linearly between order statistics
  (numpy's default, Hyndman & Fan type 7); sd has n - 1 in the denominator; IQR = [q1, q3].
- **Effects** (``wilcoxon_interval``): the Hodges-Lehmann estimate of bbb - other (median of the
  n(n+1)/2 Walsh averages of the paired differences, zeros included) with the exact interval
  from inverting the Wilcoxon signed-rank test (the Walsh averages of ranks k and M - k + 1, k
  the largest with 2 P(W+ <= k - 1) <= 0.05 under the no-ties null; its achieved level, e.g.
  95.1 % at 10 pairs, is reported); and the mean difference with its 95 % paired t interval.
  Intervals are not Holm-adjusted.
- **Verdict words** (one meaning each): 'BBB lower' / 'BBB higher': Holm-adjusted exact
  two-sided Wilcoxon p < 0.05 and the Hodges-Lehmann estimate below / above 0; otherwise
  'not resolved at n seeds' (also when p < 0.05 but the estimate is exactly 0).
- **Diverged runs** (``diverged``): 'non-finite' when the record says its weights ended
  non-finite (``finite`` False) or holds a non-finite regret or sigma; 'stopped eating' when, in
  its last ``STOP_WINDOW`` steps, no poisonous mushroom was eaten and the regret added is at
  least ``STOP_SHARE`` of what passing every edible mushroom costs (5 x 4,208 / 8,124 per step,
  the data's edible share). Such runs stay in every statistic; the table names them.
"""
import json
import math
import statistics

import torch

from . import bandit as B
from . import bandit_campaign as BC
from . import stats as S

VERSION = BC.VERSION
ALPHA = 0.05
LEVEL = 0.95
PAPER_STEP = 50_000
AIM = B.PAPER_FIGURE6["bbb"][PAPER_STEP]  # 5,700: the paper's BBB at 50k steps
CLAIM_AGAINST = ("greedy", "eps1", "eps5")  # the paper's claim: BBB lower than each
AGENTS = {"paper": ("bbb", "greedy", "eps1", "eps5"),
          "showdown": ("bbb", "greedy", "neural_linear", "lin_full_post", "bootstrap", "dropout",
                       "uniform")}
ABLATIONS = {"paper": ("bbb_one_draw",), "showdown": ()}
EDIBLE_SHARE = 4208 / 8124  # UCI mushroom data: 4,208 edible of 8,124
STOP_WINDOW, STOP_SHARE = 1_000, 0.8
# Okabe & Ito's palette: the paper tier's four as helpers.bandit has them; the ablation in BBB's
# colour (dashed); the Showdown's agents in the palette's other colours (and grey)
AGENT_COLORS = {**B.AGENT_COLORS, "bbb_one_draw": B.AGENT_COLORS["bbb"],
                "neural_linear": "#CC79A7", "lin_full_post": "#000000", "bootstrap": "#56B4E9",
                "dropout": "#E69F00", "uniform": "#999999"}
AGENT_STYLES = {"bbb_one_draw": "--", "lin_full_post": "-.", "uniform": ":", "dropout": "--"}
AGENT_LABELS = {**B.AGENT_LABELS, "bbb_one_draw": "BBB, one draw per decision (ablation)",
                "neural_linear": "NeuralLinear", "lin_full_post": "LinFullPost",
                "bootstrap": "bootstrapped networks", "dropout": "dropout Thompson sampling",
                "uniform": "uniform"}
TIER_TITLES = {"paper": "paper tier: the paper's buffer (last 4,096 tuples), 64 updates a step",
               "showdown": "keep-all tier: every tuple kept, retrained every 50 steps"}
LAYERS = ("layer 1 (weights and bias row)", "layer 2 weights", "layer 2 bias", "output weights",
          "output bias")
LAYER_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00")
VARIANT_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)))
VARIANT_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#000000")


# ---- selection and small statistics ------------------------------------------------


def _check_version(r):
    if r.get("plan_version") != VERSION:
        raise ValueError(f"record {r.get('run_id')!r} is of plan version "
                         f"{r.get('plan_version')!r}, not {VERSION}")


def reported(records, tier):
    """Return {agent: {seed: record}} of ``tier``'s 'reported' records, agents in the declared
    order (main agents, then ablations). Raises ValueError as the module docstring lists."""
    out, profiles = {}, set()
    for r in records:
        if r["stage"] != "reported" or r["tier"] != tier:
            continue
        _check_version(r)
        profiles.add(r["profile"])
        if r["agent"] not in AGENTS[tier] + ABLATIONS[tier]:
            raise ValueError(f"{tier} tier: unknown agent {r['agent']!r}")
        by = out.setdefault(r["agent"], {})
        if int(r["seed"]) in by:
            raise ValueError(f"{tier}/{r['agent']}: two reported records of seed {r['seed']}")
        by[int(r["seed"])] = r
    _check_seeds(out, tier, profiles)
    return {a: dict(sorted(out[a].items())) for a in AGENTS[tier] + ABLATIONS[tier]}


def _check_seeds(out, tier, profiles):
    missing = [a for a in AGENTS[tier] + ABLATIONS[tier] if a not in out]
    if missing:
        raise ValueError(f"{tier} tier: no reported records of {missing}")
    if len(profiles) > 1:
        raise ValueError(f"{tier} tier: reported records of profiles {sorted(profiles)}")
    union = sorted(set().union(*out.values()))
    gaps = {a: sorted(set(union) - set(v)) for a, v in out.items() if sorted(v) != union}
    if gaps:
        raise ValueError(f"{tier} tier: the agents do not share one seed set; seeds missing per "
                         f"agent: {gaps}")
    want = BC._profile_numbers("default")["reported"]
    if profiles == {"default"} and union != want:
        raise ValueError(f"{tier} tier: reported seeds {union}, the plan declares {want}")


def _quartiles(xs):
    """[q1, median, q3], linear interpolation (type 7); one value: that value three times."""
    if len(xs) < 2:
        return [float(xs[0])] * 3
    return [float(v) for v in statistics.quantiles(xs, n=4, method="inclusive")]


def wilcoxon_interval(a, b, level=LEVEL):
    """Hodges-Lehmann estimate of a - b (paired) and its exact interval by inverting the
    two-sided Wilcoxon signed-rank test (helpers.stats.wilcoxon_interval). Returns {hl, ci,
    level_achieved}: ``ci`` None (and level_achieved None) when n is too small for any interval
    at ``level`` (n < 6 at 95 %)."""
    got = S.wilcoxon_interval(a, b, level)
    ci = None if got["low"] is None else [got["low"], got["high"]]
    return {"hl": got["estimate"], "ci": ci, "level_achieved": got["coverage"]}


def _finals(by_seed):
    return [float(r["final_regret"]) for r in by_seed.values()]


def diverged(rec):
    """'non-finite', 'stopped eating' or None for one record (module docstring)."""
    nums = list(rec["cum_regret"]) + [v for row in (rec.get("sigma_layers") or [])[-1:]
                                      for v in row]
    if rec.get("finite") is False or not all(math.isfinite(float(v)) for v in nums):
        return "non-finite"
    every, cum = rec["record_every"], rec["cum_regret"]
    k = max(1, min(STOP_WINDOW, rec["steps"]) // every)
    added = cum[-1] - (cum[-k - 1] if len(cum) > k else 0.0)
    if not any(rec["poison_rate"][-k:]) and \
            added >= STOP_SHARE * B.REWARD_EDIBLE * EDIBLE_SHARE * k * every:
        return "stopped eating"
    return None


# ---- the table and the comparisons ------------------------------------------------


def final_table(records, tier):
    """Final regret per agent of ``tier`` over its reported seeds: one row dict per agent
    (declared order: main agents, then the ablation) with n, seeds, mean, sd, median, q1, q3,
    ``lowest_k`` (of n), ``diverged`` ([{seed, reason}], ``diverged``) and ``paper_50k``.

    ``lowest_k``: the number of seeds on which the agent's final regret is the lowest among the
    tier's main agents (``AGENTS[tier]``; the ablation is left out of the count and gets None).
    Ties count for each: a seed on which several agents share the lowest final regret counts for
    every one of them, so the k's of a tier can add up to more than n. ``paper_50k``: the paper's
    Figure 6 value at 50,000 steps (helpers.bandit.PAPER_FIGURE6) for the paper tier's agents
    that have one, else None (the keep-all tier's protocol is not the paper's)."""
    by = reported(records, tier)
    seeds = list(next(iter(by.values())))
    main = list(AGENTS[tier])
    best = {s: min(float(by[a][s]["final_regret"]) for a in main) for s in seeds}
    rows = []
    for agent, recs in by.items():
        x = _finals(recs)
        q1, med, q3 = _quartiles(x)
        k = sum(float(recs[s]["final_regret"]) == best[s] for s in seeds) \
            if agent in main else None
        paper = B.PAPER_FIGURE6.get(agent, {}).get(PAPER_STEP) if tier == "paper" else None
        bad = [{"seed": s, "reason": diverged(r)} for s, r in recs.items() if diverged(r)]
        rows.append({"tier": tier, "agent": agent, "label": AGENT_LABELS[agent],
                     "role": "main" if agent in main else "ablation", "n": len(x),
                     "seeds": seeds, "mean": statistics.fmean(x),
                     "sd": statistics.stdev(x) if len(x) > 1 else None, "median": med,
                     "q1": q1, "q3": q3, "lowest_k": k, "diverged": bad, "paper_50k": paper})
    return rows


def _paper_diff(tier, other):
    """The paper's bbb - other at 50k steps (Figure 6), or None."""
    f = B.PAPER_FIGURE6
    if tier != "paper" or other not in f:
        return None
    return f["bbb"][PAPER_STEP] - f[other][PAPER_STEP]


def _excludes(ci, value):
    if ci is None or value is None:
        return None
    return not ci[0] <= value <= ci[1]


def _verdict(p_holm, hl, n):
    if p_holm is not None and p_holm < ALPHA and hl != 0:
        return "BBB lower" if hl < 0 else "BBB higher"
    return f"not resolved {S.at_n(n)}"


def comparisons(records, tier):
    """BBB (agent 'bbb', the main row) against every other agent of ``tier``, paired by seed over
    the reported seeds: one row dict per comparison, the tier's main agents first, then the
    ablation.

    Each row: ``p`` (exact two-sided Wilcoxon signed-rank p of the paired final regrets,
    helpers.stats.wilcoxon_exact: zero differences dropped, tied |differences| at mid-ranks),
    ``p_holm`` and ``family_size`` (Holm over the tier's family: paper greedy, eps1, eps5 = 3
    tests; keep-all 6 tests; the ablation bbb vs bbb_one_draw its own family of one, p_holm = p),
    ``hl`` with ``ci`` and ``level_achieved`` (``wilcoxon_interval``), ``mean_diff`` with
    ``t_ci`` (helpers.stats.paired_t, 95 %, n - 1 degrees of freedom), ``bbb_lower_on`` (seeds
    with bbb < other), ``verdict`` (module docstring). Paper tier against greedy, eps1 and eps5:
    ``paper_diff`` (the paper's bbb - other at 50k, PAPER_FIGURE6: a difference of five-run means
    read off its curves) and whether ``ci`` / ``t_ci`` exclude it (``ci_excludes_paper`` /
    ``t_excludes_paper``); None elsewhere. Intervals are not Holm-adjusted."""
    by = reported(records, tier)
    bbb = _finals(by["bbb"])
    rows = []
    for family in ([a for a in AGENTS[tier] if a != "bbb"], list(ABLATIONS[tier])):
        part = [_compare(tier, bbb, _finals(by[a]), a) for a in family]
        for row, p in zip(part, S.holm([r["p"] for r in part])):
            row.update(p_holm=p, family_size=len(part), role="ablation" if
                       row["other"] in ABLATIONS[tier] else "main",
                       verdict=_verdict(p, row["hl"], row["n"]))
        rows += part
    return rows


def _compare(tier, bbb, other, name):
    tt = S.paired_t(bbb, other, LEVEL)
    wi = wilcoxon_interval(bbb, other, LEVEL)
    paper = _paper_diff(tier, name)
    return {"tier": tier, "other": name, "label": AGENT_LABELS[name], "n": len(bbb),
            "p": S.wilcoxon_exact(bbb, other)["p"], **wi, "mean_diff": tt["mean_diff"],
            "t_ci": tt["ci"], "bbb_lower_on": sum(a < b for a, b in zip(bbb, other)),
            "paper_diff": paper, "ci_excludes_paper": _excludes(wi["ci"], paper),
            "t_excludes_paper": _excludes(tt["ci"], paper)}


def paper_claim(records):
    """The paper tier's claim and aim, as plan v3 words them.

    ``claim``: 'holds' when the verdict against each of greedy, eps1 and eps5 is 'BBB lower'
    (Holm within the paper tier's family of 3, ``comparisons``); 'reversed' when any of the
    three is 'BBB higher'; else 'not resolved at n seeds'. ``aim``: BBB's final regret against
    the paper's 5,700 at 50k (a mean of five runs) by helpers.stats.vs_published on the mean
    over the reported seeds (two-sided 95 % t interval): 'matches the paper' / 'better than the
    paper by x' / 'worse than the paper by x' (x in regret, no decimals); the median and IQR
    beside it, descriptive."""
    rows = {r["other"]: r for r in comparisons(records, "paper")}
    verdicts = {a: rows[a]["verdict"] for a in CLAIM_AGAINST}
    n = rows[CLAIM_AGAINST[0]]["n"]
    if all(v == "BBB lower" for v in verdicts.values()):
        claim = "holds"
    elif any(v == "BBB higher" for v in verdicts.values()):
        claim = "reversed"
    else:
        claim = f"not resolved {S.at_n(n)}"
    x = _finals(reported(records, "paper")["bbb"])
    q1, med, q3 = _quartiles(x)
    vp = S.vs_published(x, AIM, alpha=ALPHA, digits=0)
    return {"claim": claim, "verdicts": verdicts, "n": n,
            "aim": {"target": AIM, "verdict": vp["verdict"], "mean": vp["mean"],
                    "ci": vp["ci"], "median": med, "q1": q1, "q3": q3}}


# ---- the tuning ------------------------------------------------


def _one_tier(pl, tier):
    """``pl`` with the other tier's families emptied (``choose`` then reads ``tier`` only)."""
    tiers = {t: (tp if t == tier else {**tp, "families": {}}) for t, tp in pl["tiers"].items()}
    return {**pl, "tiers": tiers}


def setting_label(s):
    """A readable name of a setting dict (a mixture prior by helpers.bandit.prior_label)."""
    parts = []
    for k, v in s.items():
        if k == "prior":
            parts.append(B.prior_label(tuple(v) if isinstance(v, list) else v))
        else:
            parts.append(f"{k} {v:g}" if isinstance(v, (int, float)) else f"{k} {v}")
    return ", ".join(parts)


def _choice(pl, records, tier):
    """(choose's entries of ``tier``, the last stage decided): 'edge' once the tier has an edge
    record or its confirm choice needs no extension, else 'confirm' once it has a confirm
    record, else 'screen'."""
    one = _one_tier(pl, tier)
    has = {st: any(r["stage"] == st and r["tier"] == tier for r in records)
           for st in ("confirm", "edge")}
    if not has["confirm"]:
        return BC.choose(one, records, "screen")[tier], "screen"
    conf = BC.choose(one, records, "confirm")[tier]
    if has["edge"] or not any(e["extensions"] for e in conf.values()):
        return BC.choose(one, records, "edge")[tier], "edge"
    return conf, "confirm"


def choice_table(pl, records, tier):
    """The tuning of ``tier`` as rows, per tuned agent: its family's settings in plan order, then
    its edge extensions. Read through helpers.bandit_campaign.choose (tuning seeds only).

    Each row: ``setting``, ``label``, ``source`` ('grid' or 'edge: <factor> <low|high>'),
    ``screen_score`` (mean over the screen seeds of the regret extrapolated to the plan's steps)
    and ``screen_rank`` (1 = best, ties by plan order), ``confirmed`` (sent to the confirm
    stage), ``confirm_mean`` (mean final regret over the 4 tuning seeds), ``edge_mean`` (an
    extension's mean over the same seeds), ``chosen`` (the final choice once the edge stage is
    decided; the confirm stage's choice before that), ``at_edge`` (on the chosen row once
    decided: factors still at a grid edge) and ``decided`` (the last stage read). Partial
    records of a stage are choose's ValueError."""
    entries, decided = _choice(pl, records, tier)
    rows = []
    for agent, e in entries.items():
        keys = list(e["screen_scores"])
        ranked = sorted(keys, key=lambda k: (e["screen_scores"][k], keys.index(k)))
        tops = [BC._key(t) for t in e["top"]]
        for key in keys:
            rows.append(_choice_row(tier, agent, e, json.loads(key), "grid", decided,
                                    screen_score=e["screen_scores"][key],
                                    screen_rank=ranked.index(key) + 1, confirmed=key in tops,
                                    confirm_mean=e.get("confirm_scores", {}).get(key)))
        for ext in e.get("extensions", []) if decided != "screen" else []:
            rows.append(_choice_row(tier, agent, e, ext["setting"],
                                    f"edge: {ext['factor']} {ext['side']}", decided,
                                    edge_mean=ext.get("score")))
    return rows


def _choice_row(tier, agent, entry, s, source, decided, **cols):
    chosen = decided != "screen" and s == entry["chosen"]
    base = {"screen_score": None, "screen_rank": None, "confirmed": False, "confirm_mean": None,
            "edge_mean": None}
    return {"tier": tier, "agent": agent, "setting": s, "label": setting_label(s),
            "source": source, **base, **cols, "chosen": chosen,
            "at_edge": entry.get("at_edge") if chosen and decided == "edge" else None,
            "decided": decided}


# ---- Figure 6 ------------------------------------------------


def _curves(by_seed):
    """(steps, tensor seeds x points) of cumulative regret; the records must share a grid."""
    recs = list(by_seed.values())
    grids = {(r["steps"], r["record_every"], len(r["cum_regret"])) for r in recs}
    if len(grids) > 1:
        raise ValueError(f"records on different step grids: {sorted(grids)}")
    every = recs[0]["record_every"]
    y = torch.tensor([r["cum_regret"] for r in recs], dtype=torch.float64)
    return [every * (i + 1) for i in range(y.shape[1])], y


def _legend_below(ax, ncol=2):
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=ncol, fontsize=8,
              frameon=False)


def figure6(records):
    """Figure 6 of plan v3: two panels, the paper tier then the keep-all tier (a tier with no
    reported record gets an empty panel saying so). Per agent, the median (thick line), the mean
    (thin line) and the inter-quartile band (q1-q3, shaded) of cumulative regret over the
    reported seeds against step, on a log regret axis; the ablation dashed in BBB's colour.
    Paper tier: the paper's values (PAPER_FIGURE6, read off its curves: means of five runs) as
    crosses in the agent's colour, where their step lies within the runs' steps. Legends sit
    below the panels."""
    import matplotlib.pyplot as plt

    from .plotting import use_style
    use_style()
    fig, axes = plt.subplots(1, 2, figsize=(12.4, 5.4), constrained_layout=True)
    for ax, tier in zip(axes, BC.TIERS):
        ax.set_title(TIER_TITLES[tier], fontsize=10)
        if not any(r["stage"] == "reported" and r["tier"] == tier for r in records):
            ax.text(0.5, 0.5, "no reported runs", ha="center", transform=ax.transAxes)
            continue
        _figure6_panel(ax, tier, reported(records, tier))
    axes[0].set_ylabel("cumulative regret (log axis)")
    return fig


def _figure6_panel(ax, tier, by):
    last = 0
    for agent, recs in by.items():
        steps, y = _curves(recs)
        last = max(last, steps[-1])
        q = y.quantile(torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64), dim=0)
        c, ls = AGENT_COLORS[agent], AGENT_STYLES.get(agent, "-")
        ax.fill_between(steps, q[0], q[2], color=c, alpha=0.18, lw=0)
        ax.plot(steps, q[1], c=c, lw=2, ls=ls, label=AGENT_LABELS[agent])
        ax.plot(steps, y.mean(0), c=c, lw=0.7, ls=ls)
    for agent in by if tier == "paper" else []:
        for step, value in B.PAPER_FIGURE6.get(agent, {}).items():
            if step <= last:
                ax.plot(step, value, "x", c=AGENT_COLORS[agent], ms=9, mew=2)
    if tier == "paper":
        ax.plot([], [], "kx", label="the paper (means of 5 runs, read off its Figure 6)")
    n = len(next(iter(by.values())))
    ax.plot([], [], c="k", lw=6, alpha=0.18,
            label=f"thick: median, thin: mean, band: inter-quartile range ({n} seeds)")
    ax.set_yscale("log")
    ax.set_xlabel("step (mushrooms shown)")
    _legend_below(ax)


# ---- why the posterior does (not) contract ------------------------------------------------


def why_runs(records):
    """Return {variant: {seed: record}} of stage 'why' (variant: the record's
    setting['variant']; BBB's KL variants and the greedy reference), variants in first-seen
    order; ValueError on a duplicate (variant, seed) or another plan version."""
    out = {}
    for r in records:
        if r["stage"] != "why":
            continue
        _check_version(r)
        by = out.setdefault(r["setting"]["variant"], {})
        if int(r["seed"]) in by:
            raise ValueError(f"why/{r['setting']['variant']}: two records of seed {r['seed']}")
        by[int(r["seed"])] = r
    return {v: dict(sorted(by.items())) for v, by in out.items()}


def sigma_init(rec):
    """The σ every weight starts at: softplus(rho_init), rho_init from the record's setting,
    else its batched row, else helpers.bandit_batch.RowSpec's default (-5)."""
    rho = rec["setting"].get("rho_init", rec.get("row", {}).get("rho_init", -5.0))
    return math.log1p(math.exp(float(rho)))


def _per(window, every, what):
    if window % every:
        raise ValueError(f"{what} ({window} steps) is not a multiple of record_every ({every})")
    return window // every


def poison_blocks(rec, window=1_000):
    """The share of poisonous mushrooms eaten per ``window`` steps: [(end step, share)], the
    share being the unweighted mean of the window's per-record_every shares (each 100-step
    share counts once whatever the number of poisonous mushrooms it saw: about half of 100;
    a record with none seen holds 0)."""
    k = _per(window, rec["record_every"], "the poison window")
    pr = rec["poison_rate"]
    return [((i + k) * rec["record_every"], statistics.fmean(pr[i:i + k]))
            for i in range(0, len(pr) - k + 1, k)]


def _at(rec, key, i):
    """rec[key][i], or None for a record without ``key`` (the greedy reference has no σ)."""
    return rec[key][i] if rec.get(key) is not None else None


def why_rows(records, points=(10_000, 25_000, 50_000), poison_window=1_000,
             regret_window=10_000):
    """One row per (variant, seed, step in ``points`` within the run) of stage 'why':
    ``sigma_layers`` (mean σ of each of the 5 parts, ``LAYERS``), ``sigma_init`` and
    ``sigma_ratio`` (mean σ / its initial value, per part), ``sigma_median`` (the median σ per
    part, from the record's 5/50/95 % quantiles ``sigma_q``), ``kl_over_n`` (KL over its divisor
    N at that step), ``kl``, ``kl_se``, ``kl_n``, ``nll`` (per stored tuple at the posterior
    mean), ``nll_q`` (its mean over the record's weight draws), ``pred_sd`` (the record's spread
    of Q(eat) - Q(pass) over draws), ``poison_rate`` (share of poisonous mushrooms eaten in the
    ``poison_window`` steps ending at the step, ``poison_blocks``' unweighted mean) and
    ``regret_added`` (cumulative regret gained in the ``regret_window`` steps ending at the
    step; at 50k: the last 10,000). Fields a record lacks (the greedy reference: every σ, KL and
    NLL field) are None."""
    rows = []
    for variant, by in why_runs(records).items():
        for seed, r in by.items():
            every = r["record_every"]
            kp = _per(poison_window, every, "the poison window")
            kr = _per(regret_window, every, "the regret window")
            for step in (p for p in points if p <= r["steps"]):
                i = _per(step, every, "a point") - 1
                rows.append({"variant": variant, "tier": r["tier"], "agent": r["agent"],
                             "seed": seed, "step": step, **_sigma_cols(r, i), **{
                                 k: _at(r, k, i) for k in ("kl", "kl_se", "kl_n", "nll",
                                                           "nll_q", "pred_sd")},
                             "kl_over_n": r["kl"][i] / r["kl_n"][i] if r.get("kl") else None,
                             "poison_rate": statistics.fmean(
                                 r["poison_rate"][max(0, i - kp + 1):i + 1]),
                             "regret_added": r["cum_regret"][i] - (
                                 r["cum_regret"][i - kr] if i >= kr else 0.0)})
    return rows


def _sigma_cols(r, i):
    if r.get("sigma_layers") is None:
        return {"sigma_layers": None, "sigma_init": None, "sigma_ratio": None,
                "sigma_median": None}
    s0, sig = sigma_init(r), r["sigma_layers"][i]
    med = [q[1] for q in r["sigma_q"][i]] if r.get("sigma_q") is not None else None
    return {"sigma_layers": sig, "sigma_init": s0, "sigma_ratio": [v / s0 for v in sig],
            "sigma_median": med}


def contraction(records, early=10_000, late=50_000, factor=0.5):
    """The plan's rule, per (variant, seed, layer part) of BBB's why runs: a part 'contracts'
    when its median σ (``sigma_q``'s 50 % quantile) at ``late`` steps is at most ``factor`` x
    its median σ at ``early`` steps. Rows {variant, seed, layer, early, late, ratio,
    contracts}; ValueError if a BBB why record lacks ``sigma_q`` or either step."""
    rows = []
    for variant, by in why_runs(records).items():
        for seed, r in by.items():
            if r.get("sigma_layers") is None:
                continue  # the greedy reference
            if r.get("sigma_q") is None or r["steps"] < late:
                raise ValueError(f"why/{variant} seed {seed}: no sigma_q to {late} steps")
            i0 = _per(early, r["record_every"], "early") - 1
            i1 = _per(late, r["record_every"], "late") - 1
            for k, name in enumerate(LAYERS):
                a, b = r["sigma_q"][i0][k][1], r["sigma_q"][i1][k][1]
                rows.append({"variant": variant, "seed": seed, "layer": name, "early": a,
                             "late": b, "ratio": b / a, "contracts": b <= factor * a})
    return rows


def why_figure(records, poison_window=1_000):
    """The 'why' experiment in 2 x 2 panels: (a) mean σ per layer part over steps, from its
    initial value at step 0 (colour: part; log axis); (b) KL/N and NLL per stored tuple at the
    posterior mean over steps (colour: quantity; log axis, symlog if a value is <= 0); (c) share
    of poisonous mushrooms eaten per ``poison_window`` steps (``poison_blocks``); (d) cumulative
    regret. One line style per variant (in (c) and (d) also one colour; the greedy reference
    appears there only); each seed a thin line."""
    import matplotlib.pyplot as plt

    from .plotting import percent_axis, use_style
    use_style()
    fig, axes = plt.subplots(2, 2, figsize=(12.4, 9.6), constrained_layout=True)
    a, b, c, d = axes.flat
    for j, (variant, by) in enumerate(why_runs(records).items()):
        ls, col = VARIANT_STYLES[j % 5], VARIANT_COLORS[j % 5]
        for r in by.values():
            _why_lines(a, b, c, d, r, ls, col, poison_window)
        for ax in (c, d):
            ax.plot([], [], c=col, ls=ls, label=variant)
        if any(r.get("sigma_layers") is not None for r in by.values()):
            for ax in (a, b):
                ax.plot([], [], c="k", ls=ls, label=variant)
    for k, name in enumerate(LAYERS):
        a.plot([], [], c=LAYER_COLORS[k], label=name)
    b.plot([], [], c="#0072B2", label="KL / N (nats per tuple)")
    b.plot([], [], c="#D55E00", label="NLL per tuple at the posterior mean (nats)")
    _why_axes(a, b, c, d, poison_window, percent_axis)
    return fig


def _why_lines(a, b, c, d, r, ls, col, poison_window):
    steps = [r["record_every"] * (i + 1) for i in range(len(r["cum_regret"]))]
    x, y = zip(*poison_blocks(r, poison_window))
    c.plot(x, y, c=col, ls=ls, lw=0.8)
    d.plot(steps, r["cum_regret"], c=col, ls=ls, lw=0.8)
    if r.get("sigma_layers") is None:
        return
    s0 = sigma_init(r)
    for k in range(len(LAYERS)):
        a.plot([0] + steps, [s0] + [v[k] for v in r["sigma_layers"]], c=LAYER_COLORS[k], ls=ls,
               lw=0.8)
    b.plot(steps, [k / n for k, n in zip(r["kl"], r["kl_n"])], c="#0072B2", ls=ls, lw=0.8)
    b.plot(steps, r["nll"], c="#D55E00", ls=ls, lw=0.8)


def _why_axes(a, b, c, d, poison_window, percent_axis):
    a.set_yscale("log")
    ys = [v for line in b.get_lines() for v in line.get_ydata()]
    if ys and min(ys) <= 0:
        b.set_yscale("symlog", linthresh=min((abs(v) for v in ys if v), default=1.0))
    else:
        b.set_yscale("log")
    titles = ("(a) mean σ per layer part (step 0: its initial value)",
              "(b) KL / N and NLL per stored tuple", f"(c) poisonous mushrooms eaten, share per "
              f"{poison_window:,} steps", "(d) cumulative regret")
    for ax, t in zip((a, b, c, d), titles):
        ax.set_title(t, fontsize=10)
        ax.set_xlabel("step (mushrooms shown)")
        _legend_below(ax, ncol=2)
    percent_axis(c)


# ---- cost ------------------------------------------------


def measured_cost(records, pl=None):
    """CPU-hours per (tier, stage): ``runs`` and ``cpu_h`` summed from the records' cpu_s
    (a batched process's CPU time is split evenly over its rows when written), beside the
    plan's ``pl['estimate']`` parts (``est_runs``, ``est_cpu_h``; None for a stage the estimate
    lacks, or without ``pl``) and ``ratio`` = cpu_h / est_cpu_h; a last row 'all' / 'all' sums
    both over every part. ValueError on a record without cpu_s."""
    parts = (pl or {}).get("estimate", {}).get("parts", {})
    got = {}
    for r in records:
        if r.get("cpu_s") is None:
            raise ValueError(f"record {r.get('run_id')!r} has no cpu_s")
        n, h = got.get(f"{r['tier']}/{r['stage']}", (0, 0.0))
        got[f"{r['tier']}/{r['stage']}"] = (n + 1, h + float(r["cpu_s"]) / 3600)
    order = [f"{t}/{s}" for t in BC.TIERS for s in BC.STAGES]
    keys = [k for k in order if k in got or k in parts] + sorted(set(got) - set(order))
    rows = [_cost_row(k, got.get(k, (0, 0.0)), parts.get(k)) for k in keys]
    est = [p["cpu_h"] for p in parts.values()]
    total = (sum(n for n, _ in got.values()), sum(h for _, h in got.values()))
    rows.append(_cost_row("all/all", total, {"runs": sum(p["runs"] for p in parts.values()),
                                             "cpu_h": sum(est)} if parts else None))
    return rows


def _cost_row(key, got, part):
    tier, stage = key.split("/")
    est = part["cpu_h"] if part else None
    return {"tier": tier, "stage": stage, "runs": got[0], "cpu_h": got[1],
            "est_runs": part["runs"] if part else None, "est_cpu_h": est,
            "ratio": got[1] / est if est else None}
