"""Notebook 03's words and tables (the mushroom bandit, paper section 5.3, Figure 6), rendered from
the runs of its declared plan (results/03_contextual_bandit/plan_v3.json) through the declared
analysis (helpers.bandit_v3_report, which this module never changes: every number, test and
verdict word comes from there; this module only words and lays them out).

- ``load(profile, train)``: (plan, records). ``default`` reads the committed records;
  ``smoke`` runs the smoke plan's five stages in-process (a few steps each) under the smoke
  profile's output folder, never under the project's results/ or checkpoints/.
- ``stage_status`` / ``ready`` / ``show_pending``: which stages are complete; while one is
  missing the notebook says so and renders nothing that needs it.
- The rest returns Markdown (``*_text``) or (header, rows) for ``helpers.plotting.show_table``
  (``*_rows``). Every function that needs a stage asks ``ready`` first and returns None (text)
  or None (rows) when that stage is not complete.
"""
import json
import re
import statistics

from . import bandit as B
from . import bandit_campaign as BC
from . import bandit_v3_report as R
from .report import and_list, cap
from .utils import PENDING, PROJECT_ROOT, checkpoints_dir, results_dir, set_active_profile

NB = B.NB
PROFILES = ("default", "smoke")
COMMAND = "python tools/bandit_v3.py run"
TUNING = ("screen", "confirm", "edge")


def stage_words(pl, stage):
    """What a stage is, in a few words, with ``pl``'s numbers."""
    sd = pl["seeds"]

    def seeds(*keys):
        v = sorted(x for k in keys for x in sd[k])
        return f"{v[0]}-{v[-1]}" if len(v) > 1 else f"{v[0]}"
    return {"screen": f"the screen (every setting, {pl['screen_steps']:,} steps, tuning seeds "
                      f"{seeds('screen')})",
            "confirm": f"the confirm stage (each agent's {pl['tuning']['confirmed']} best "
                       f"settings to {pl['steps']:,} steps, tuning seeds "
                       f"{seeds('screen', 'confirm')})",
            "edge": "the edge stage (a chosen setting at a grid edge, one step further out)",
            "why": f"the why runs (BBB's posterior under {len(BC.WHY_VARIANTS)} KL divisors, "
                   f"seeds {seeds('why')})",
            "reported": f"the reported runs (every agent, seeds {seeds('reported')})"}[stage]


def tier_words(pl, tier):
    if tier == "paper":
        return "paper tier (the paper's buffer)"
    return (f"keep-all tier (every tuple kept, retrained every "
            f"{pl['tiers']['showdown']['schedule']['train_every']} steps)")


VARIANT_WORDS = {"paper_capacity": "last 4,096, KL / 4,096",
                 "paper_seen": "last 4,096, KL / max(4,096, seen)",
                 "keep_all_floor4096": "all kept, KL / max(4,096, stored)",
                 "keep_all_filled": "all kept, KL / stored", BC.WHY_GREEDY: "greedy (reference)"}
FACTOR_WORDS = {"prior": "σp", "rho_init": "ρ0", "lr": "lr", "noise_sigma": "σ_noise",
                "kl": "N"}
KL_WORDS = {"capacity": "KL / 4,096", "seen": "KL / max(4,096, seen)",
            "filled": "KL / stored", "filled_floor4096": "KL / max(4,096, stored)"}


# ---- the runs ------------------------------------------------


def load(profile="default", train=False, progress_fn=None):
    """Return (plan, records) of ``profile``. ``default``: the declared plan
    (results/03_contextual_bandit/plan_v3.json) and its committed records; with ``train`` the
    missing runs are run here first (``run_all``). ``smoke``: the smoke plan, its records
    under the smoke profile's output folder (``build/smoke`` unless BBB_OUTPUT_DIR says
    otherwise), run first with ``train`` (a fresh folder takes well under a minute)."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    set_active_profile(profile)
    if profile == "default":
        pl = json.loads((results_dir() / NB / "plan_v3.json").read_text())
    else:
        pl = BC.plan(profile)
    if train:
        run_all(pl, progress_fn=progress_fn)
    return pl, BC.load_records(pl)


def _checkpoint_dir(pl):
    ck = checkpoints_dir() / NB / "plan_v3"
    committed = (PROJECT_ROOT / "checkpoints").resolve()
    if pl["profile"] != "default" and (ck.resolve() == committed
                                       or committed in ck.resolve().parents):
        raise ValueError(f"profile {pl['profile']!r} may not write under {committed}")
    return ck


def run_all(pl, progress_fn=None):
    """Run every missing run of ``pl``'s five stages in order, in this process (one part), as
    tools/bandit_v3.py ``run`` does: each stage's choice from the tuning seeds' records, the
    choice pinned (choice.json, its SHA-256 in every why and reported record) before the why
    stage. Returns the number of runs made."""
    from .data import load_mushroom
    if {k: v for k, v in pl.items() if k != "declared"} != BC.plan(pl["profile"]):
        raise ValueError("the plan passed is not the plan helpers.bandit_campaign builds: the "
                         "code changed after the declaration; nothing is run")
    log = progress_fn or (lambda m: None)
    x, p = load_mushroom(download=False)
    ck, made, choice, extra = _checkpoint_dir(pl), 0, None, {}
    # run_stage's per-job lines stay out of the notebook; one line per stage goes to progress_fn
    for stage in BC.STAGES:
        recs = BC.load_records(pl)
        if stage in ("confirm", "edge", "why"):
            choice = BC.choose(pl, recs, {"confirm": "screen", "edge": "confirm",
                                          "why": "edge"}[stage])
        if stage == "why":
            extra = {"choice_sha256": pin_choice(pl, recs)}
        got = BC.run_stage(pl, stage, x, p, choice=choice, checkpoint_dir=ck, extra=extra)
        made += got["ran"]
        log(f"{stage}: ran {got['ran']}, found {got['skipped']} finished")
    return made


def pin_choice(pl, records):
    """Write the tuning's choice to choice.json in the records folder (as tools/bandit_v3.py
    ``pin_choice``: once; another choice later is an error) and return its SHA-256."""
    choice, sha = R.pinned_choice(pl, records)
    path = BC.records_dir(pl) / "choice.json"
    text = (json.dumps(choice, indent=1, sort_keys=True) + "\n").encode()
    if path.exists() and path.read_bytes() != text:
        raise ValueError(f"{path} holds another choice than the records give now")
    if not path.exists():
        from .utils import atomic_write_bytes
        atomic_write_bytes(path, text)
    return sha


def stage_status(pl, records):
    """[{stage, have, expected, complete}] in the plan's order. ``expected`` (the number of
    runs) is None while the stages it depends on are incomplete (their choice is not made)."""
    ids = {(r["tier"], r["stage"], r["run_id"]) for r in records}
    out, choice = [], None
    for stage in BC.STAGES:
        have = sum(r["stage"] == stage for r in records)
        if stage != "screen" and choice is None:
            out.append({"stage": stage, "have": have, "expected": None, "complete": False})
            continue
        runs = BC.stage_runs(pl, stage, choice)
        done = sum((r.tier, r.stage, r.run_id) in ids for r in runs)
        out.append({"stage": stage, "have": done, "expected": len(runs),
                    "complete": done == len(runs)})
        if stage in TUNING:
            choice = BC.choose(pl, records, stage) if done == len(runs) else None
    return out


def ready(pl, records):
    """{stage: complete} for every stage, and 'tuning': the screen at least is complete."""
    got = {s["stage"]: s["complete"] for s in stage_status(pl, records)}
    return {**got, "tuning": got["screen"]}


def show_pending(pl, records, print_fn=print):
    """Print one PENDING line per incomplete stage (what it is, how many runs it has, the
    command that runs it); return the list of incomplete stages."""
    missing = []
    for s in stage_status(pl, records):
        if s["complete"]:
            continue
        missing.append(s["stage"])
        count = (f"{s['have']} of {s['expected']} runs" if s["expected"] is not None
                 else "waits for the stage before")
        print_fn(f"{PENDING}: {stage_words(pl, s['stage'])}: {count}. Run `{COMMAND}` (it resumes "
                 "where it stopped) or execute this notebook with TRAIN_MISSING = True; the "
                 "cells that need it are skipped.")
    return missing


def tuning_records(pl, records):
    """The records of the complete tuning stages only (a partial stage cannot be read by
    helpers.bandit_campaign.choose)."""
    done = {s["stage"] for s in stage_status(pl, records) if s["complete"]}
    return [r for r in records if r["stage"] in done and r["stage"] in TUNING]


# ---- formatting ------------------------------------------------


def num(x, sign=False):
    """A regret: no decimals, thousands separated, a true minus sign."""
    return f"{x:+,.0f}".replace("-", "−") if sign else f"{x:,.0f}".replace("-", "−")


def interval(ci, sign=True):
    return "(no interval)" if ci is None else f"[{num(ci[0], sign)}, {num(ci[1], sign)}]"


def setting_label(setting):
    """A readable name of an agent's setting (``R.setting_label`` orders keys alphabetically)."""
    if not setting:
        return "not tuned"
    parts = []
    if "prior" in setting:
        pr = setting["prior"]
        parts.append(f"σp {pr:g}" if isinstance(pr, (int, float)) else "scale-mixture prior")
    for key, name in (("rho_init", "ρ0"), ("lr", "lr"), ("noise_sigma", "σ_noise"),
                      ("a0", "a0"), ("b0", "b0"), ("lambda_prior", "λ")):
        if key in setting:
            parts.append(f"{name} {setting[key]:g}".replace("-", "−"))
    if "kl" in setting:
        parts.append(KL_WORDS.get(setting["kl"], setting["kl"]))
    if "thompson_samples" in setting:
        parts.append(f"{setting['thompson_samples']} draw per decision")
    return ", ".join(parts)


def factors(names):
    """The tuned factors' names as the notebook writes them."""
    return [FACTOR_WORDS.get(k, k) for k in names]


def _variant_order(variant):
    order = list(BC.WHY_VARIANTS) + [BC.WHY_GREEDY]
    return order.index(variant) if variant in order else len(order)


def _label(agent):
    return R.AGENT_LABELS[agent]


# ---- the tuning ------------------------------------------------


def choice_rows(pl, records, tier):
    """(header, rows) of ``tier``'s tuning: per tuned agent the settings sent to the confirm
    stage and the edge extensions, with their screen rank and score, the mean final regret on
    the four tuning seeds and the choice (✓). None before the screen is complete."""
    recs = tuning_records(pl, records)
    if not any(r["stage"] == "screen" for r in recs):
        return None
    table = R.choice_table(pl, recs, tier)
    n = {a: sum(r["agent"] == a and r["source"] == "grid" for r in table) for a in
         dict.fromkeys(r["agent"] for r in table)}
    header = ["agent", "setting", "screen rank",
              f"screen: regret extrapolated to {pl['steps']:,} steps",
              "mean final regret, 4 tuning seeds", "chosen"]
    rows = []
    for r in table:
        if not (r["confirmed"] or r["source"] != "grid" or r["chosen"]):
            continue
        rank = f"{r['screen_rank']} of {n[r['agent']]}" if r["screen_rank"] else r["source"]
        mean = r["confirm_mean"] if r["confirm_mean"] is not None else r["edge_mean"]
        chosen = "✓" + (f" (at a grid edge: {and_list(factors(r['at_edge']))})"
                        if r["at_edge"] else "") \
            if r["chosen"] else ""
        rows.append([_label(r["agent"]), setting_label(r["setting"]), rank,
                     num(r["screen_score"]) if r["screen_score"] is not None else "",
                     num(mean) if mean is not None else "pending", chosen])
    return header, rows


def choice_text(pl, records):
    """One paragraph: which stage the tuning has reached and, once chosen, each agent's
    setting (and a factor still at a grid edge)."""
    recs = tuning_records(pl, records)
    if not any(r["stage"] == "screen" for r in recs):
        return None
    out = []
    for tier in BC.TIERS:
        table = R.choice_table(pl, recs, tier)
        decided = table[0]["decided"]
        if decided == "screen":
            out.append(f"*{cap(tier_words(pl, tier))}*: the screen has ranked every setting; the "
                       "confirm stage decides between the two kept per agent.")
            continue
        chosen = [r for r in table if r["chosen"]]
        words = [f"{_label(r['agent'])}: {setting_label(r['setting'])}"
                 + (f" (still at the grid's edge in {and_list(factors(r['at_edge']))})"
                    if r["at_edge"] else "") for r in chosen]
        out.append(f"*{cap(tier_words(pl, tier))}*, chosen" + (" (before the edge stage)"
                                                           if decided == "confirm" else "")
                   + ": " + "; ".join(words) + ".")
    return "\n\n".join(out)


# ---- the reported runs ------------------------------------------------


def final_rows(pl, records, tier):
    """(header, rows) of ``R.final_table``: per agent its setting, mean ± sd, median [IQR],
    lowest on k of n, the paper's value at 50,000 steps and the diverged runs. None until the
    reported stage is complete."""
    if not ready(pl, records)["reported"]:
        return None
    header = ["agent", "setting", "mean ± sd", "median [IQR]", "lowest on", "the paper",
              "runs that diverged"]
    rows = []
    for r in R.final_table(pl, records, tier):
        bad = "; ".join(f"seed {d['seed']}: {d['reason']}" + (
            f" from step {d['from_step']:,}" if d["from_step"] else "") for d in r["diverged"])
        rows.append([r["label"], setting_label(r["setting"]),
                     f"{num(r['mean'])} ± {num(r['sd'])}",
                     f"{num(r['median'])} [{num(r['q1'])}, {num(r['q3'])}]",
                     f"{r['lowest_k']} of {r['n']}" if r["lowest_k"] is not None else "—",
                     num(r["paper_50k"]) if r["paper_50k"] is not None else "—",
                     bad or "none"])
    return header, rows


def _versus(r):
    """One comparison as words: the difference, its interval, what the interval excludes, the
    paper's difference beside it; then the verdict (after the interval)."""
    other = "one draw per decision" if r["role"] == "ablation" else r["label"]
    paper = f"; the paper {num(r['paper_diff'], True)}" if r["paper_diff"] is not None else ""
    if r["ci"] is None:
        return (f"BBB − {other}: {num(r['hl'], True)} (too few seeds for an interval{paper}); "
                f"lower on {r['bbb_lower_on']} of {r['n']} seeds → **{r['verdict']}**")
    level = "95 %" if r["level_note"] == "exact" else "nominal 95 %, ties present"
    excl = ["excludes 0" if not r["ci"][0] <= 0 <= r["ci"][1] else "includes 0"]
    if r["paper_diff"] is not None:
        excl.append(f"{'excludes' if r['ci_excludes_paper'] else 'includes'} the paper's "
                    f"{num(r['paper_diff'], True)}")
    return (f"BBB − {other}: {num(r['hl'], True)}, interval {interval(r['ci'])} ({level}; "
            f"it {and_list(excl)}); lower on {r['bbb_lower_on']} of {r['n']} seeds → "
            f"**{r['verdict']}**")


def excludes(r):
    """What a comparison's Wilcoxon interval excludes: '0', "the paper's", both, 'neither',
    or '—' without an interval."""
    if r["ci"] is None:
        return "—"
    got = (["0"] if not r["ci"][0] <= 0 <= r["ci"][1] else []) + (
        ["the paper's"] if r["ci_excludes_paper"] else [])
    return and_list(got) if got else "neither"


def comparison_rows(pl, records, tier):
    """(header, rows) of ``R.comparisons``: every comparison as a difference (Hodges-Lehmann,
    its Wilcoxon interval; the mean difference, its t interval), the paper's difference, p,
    Holm's p and the verdict. None until the reported stage is complete."""
    if not ready(pl, records)["reported"]:
        return None
    header = ["BBB − …", "median difference [95 % interval]", "mean difference [95 % t]",
              "the paper", "the interval excludes", "BBB lower on", "p", "Holm p (tests)",
              "verdict"]
    rows = []
    for r in R.comparisons(pl, records, tier):
        other = "one draw (ablation)" if r["role"] == "ablation" else r["label"]
        note = "" if r["level_note"] in ("exact", None) else " (nominal: ties)"
        rows.append([other, f"{num(r['hl'], True)} {interval(r['ci'])}{note}",
                     f"{num(r['mean_diff'], True)} {interval(r['t_ci'])}",
                     num(r["paper_diff"], True) if r["paper_diff"] is not None else "—",
                     excludes(r), f"{r['bbb_lower_on']} of {r['n']}", f"{r['p']:.3g}",
                     f"{r['p_holm']:.3g} ({r['family_size']})", r["verdict"]])
    return header, rows


def comparison_text(pl, records, tier):
    """A list, one line per comparison of ``tier`` (``_versus``). None until reported."""
    if not ready(pl, records)["reported"]:
        return None
    return "\n".join(f"- {_versus(r)}" for r in R.comparisons(pl, records, tier))


def _place(pl, records, tier):
    """(BBB's place by median final regret among the tier's main agents, their number, the
    agent of lowest median, its median)."""
    rows = [r for r in R.final_table(pl, records, tier) if r["role"] == "main"]
    order = sorted(rows, key=lambda r: r["median"])
    place = 1 + sum(r["median"] < next(x for x in rows if x["agent"] == "bbb")["median"]
                    for r in rows)
    return place, len(rows), order[0]


def answer(pl, records):
    """The first screen's answer: the paper tier's claim with its three differences and the aim,
    then BBB's place in the keep-all tier. Until the reported runs are complete: what is
    pending."""
    if not ready(pl, records)["reported"]:
        st = {s["stage"]: s for s in stage_status(pl, records)}["reported"]
        have = f" ({st['have']} of {st['expected']} runs)" if st["expected"] else ""
        return (f"*{PENDING}: the reported runs{have}. The answer, Figure 6 and the tests "
                "appear here once they are in; until then the notebook shows the tuning.*")
    claim = R.paper_claim(pl, records)
    rows = {r["other"]: r for r in R.comparisons(pl, records, "paper")}
    diffs = [f"{_label(a)} {num(rows[a]['hl'], True)} {interval(rows[a]['ci'])}, the paper "
             f"{num(rows[a]['paper_diff'], True)}" for a in R.CLAIM_AGAINST]
    aim = claim["aim"]
    word = {"holds": "holds", "reversed": "is reversed"}.get(claim["claim"],
                                                             f"is {claim['claim']}")
    first = (f"**With the paper's buffer, the paper's claim that BBB ends with less regret than "
             f"greedy and both ε-greedy agents {word}** (BBB − other after "
             f"{pl['steps']:,} steps, median difference and 95 % interval: {'; '.join(diffs)}); BBB's mean regret, "
             f"{num(aim['mean'])} {interval(aim['ci'], False)}, {aim['verdict']} "
             f"(the paper: {num(aim['target'])}).")
    place, n, best = _place(pl, records, "showdown")
    show = R.comparisons(pl, records, "showdown")
    lower = [r["label"] for r in show if r["verdict"] == R.WORDS["main"][0]]
    higher = [r["label"] for r in show if r["verdict"] == R.WORDS["main"][1]]
    rest = len(show) - len(lower) - len(higher)
    second = (f"**When every tuple is kept**, BBB's median regret places {_ordinal(place)} of "
              f"{n} agents (lowest: {best['label']}, median {num(best['median'])}); BBB is "
              f"lower than {and_list(lower) if lower else 'none of them'}, higher than "
              f"{and_list(higher) if higher else 'none'}"
              + (f"; {rest} comparison{'s' if rest > 1 else ''} not resolved at "
                 f"{show[0]['n']} seeds" if rest else "") + " (section 4).")
    return first + "\n\n" + second


def _ordinal(k):
    return {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth",
            7: "seventh"}.get(k, f"{k}th")


# ---- why the posterior does (not) contract ------------------------------------------------


def why_table(pl, records):
    """(header, rows) of ``R.why_rows`` averaged over the why seeds, per variant and step: mean σ
    over its start (first layer; output weights), KL/N and the NLL per tuple, the spread of
    Q(eat) − Q(pass) over draws, the poisonous share eaten and the regret added. None until the
    why stage is complete."""
    if not ready(pl, records)["why"]:
        return None
    rows, groups = [], {}
    for r in R.why_rows(pl, records):
        groups.setdefault((r["variant"], r["step"]), []).append(r)

    def mean(rs, f):
        vals = [f(r) for r in rs if f(r) is not None]
        return statistics.fmean(vals) if vals else None

    def show(v, fmt):
        return "—" if v is None else fmt.format(v)
    header = ["variant", "step", "σ / start, first layer", "σ / start, output weights",
              "KL / N (nats)", "NLL per tuple", "spread of Q(eat) − Q(pass)",
              "poisonous eaten", "regret added"]
    for (variant, step), rs in sorted(groups.items(),
                                      key=lambda kv: (_variant_order(kv[0][0]), kv[0][1])):
        ratio = [mean(rs, lambda r, k=k: r["sigma_ratio"][k] if r["sigma_ratio"] else None)
                 for k in (0, 3)]
        rows.append([VARIANT_WORDS.get(variant, variant), f"{step:,}", show(ratio[0], "{:.3g}"), show(ratio[1], "{:.3g}"),
                     show(mean(rs, lambda r: r["kl_over_n"]), "{:.3g}"),
                     show(mean(rs, lambda r: r["nll"]), "{:.3g}"),
                     show(mean(rs, lambda r: r["pred_sd"]), "{:.3g}"),
                     show(mean(rs, lambda r: r["poison_rate"]), "{:.1%}"),
                     num(mean(rs, lambda r: r["regret_added"]))])
    return header, rows


def contraction_text(pl, records):
    """Per variant: how many of its (seed, layer part) pairs contract by the plan's rule, the
    parts that do, and the range of late / early median σ. None until the why stage is in."""
    if not ready(pl, records)["why"]:
        return None
    early, late = R.CONTRACT_STEPS[pl["profile"]]
    by = {}
    for r in R.contraction(pl, records):
        by.setdefault(r["variant"], []).append(r)
    lines = []
    for variant, rs in sorted(by.items(), key=lambda kv: _variant_order(kv[0])):
        parts = sorted({r["layer"] for r in rs if r["contracts"]}, key=list(R.LAYERS).index)
        lo, hi = min(r["ratio"] for r in rs), max(r["ratio"] for r in rs)
        lines.append(f"- {VARIANT_WORDS.get(variant, variant)}: {sum(r['contracts'] for r in rs)} of {len(rs)} (seed, part) "
                     f"pairs contract (median σ at {late:,} steps ≤ {R.CONTRACT_FACTOR:g} × at "
                     f"{early:,}); ratios {lo:.3g} to {hi:.3g}"
                     + (f"; contracting: {and_list(parts)}" if parts else "") + ".")
    return "\n".join(lines)


def why_text(pl, records):
    """Which KL variant adds the least regret over the last window, beside the greedy reference,
    and whether KL/N ends below the NLL per tuple (the KL's pull is then the smaller term)."""
    if not ready(pl, records)["why"]:
        return None
    last = max(r["step"] for r in R.why_rows(pl, records))
    rows = [r for r in R.why_rows(pl, records) if r["step"] == last]
    added = {}
    for r in rows:
        added.setdefault(r["variant"], []).append(r["regret_added"])
    means = {v: statistics.fmean(x) for v, x in added.items()}
    best = min((v for v in means if v != BC.WHY_GREEDY), key=means.get)
    pull = [r for r in rows if r["kl_over_n"] is not None]
    small = sum(r["kl_over_n"] < r["nll"] for r in pull)
    window = R.REGRET_WINDOW[pl["profile"]]
    return (f"Over the last {window:,} steps, {VARIANT_WORDS.get(best, best)} adds the least regret of BBB's variants "
            f"({num(means[best])} on average, the greedy reference {num(means[BC.WHY_GREEDY])}). "
            f"At step {last:,}, KL / N is below the NLL per tuple in {small} of {len(pull)} "
            "runs: where it is, the data term outweighs the prior's pull.")


# ---- cost ------------------------------------------------


def cost_rows(pl, records):
    """(header, rows) of ``R.measured_cost``: measured CPU-hours per tier and stage beside the
    plan's estimate (stages without runs yet left out, except the total)."""
    header = ["tier", "stage", "runs", "CPU-hours", "estimated runs", "estimated CPU-hours"]
    rows = []
    for r in R.measured_cost(pl, records):
        if not r["runs"] and r["tier"] != "all":
            continue
        rows.append([r["tier"], r["stage"], r["runs"], f"{r['cpu_h']:.2f}",
                     r["est_runs"] if r["est_runs"] is not None else "—",
                     f"{r['est_cpu_h']:.2f}" if r["est_cpu_h"] is not None else "—"])
    return header, rows


# ---- takeaways ------------------------------------------------


def takeaways(pl, records):
    """Bullets from the reported and why runs (None until the reported stage is in)."""
    if not ready(pl, records)["reported"]:
        return None
    claim = R.paper_claim(pl, records)
    comp = {r["other"]: r for r in R.comparisons(pl, records, "paper")}
    abl = comp["bbb_one_draw"]
    place, n, best = _place(pl, records, "showdown")
    word = claim["claim"] + (f" at {claim['n']} seeds" if claim["claim"] in ("holds", "reversed")
                             else "")
    out = [f"- **The paper's claim** (BBB below greedy, ε-greedy 1 % and 5 % with its buffer): "
           f"{word}; against greedy, {_versus(comp['greedy'])}.",
           f"- **The paper's number**: BBB's mean regret after {pl['steps']:,} steps "
           f"{num(claim['aim']['mean'])} {interval(claim['aim']['ci'], False)} "
           f"{claim['aim']['verdict']} (the paper: {num(claim['aim']['target'])}).",
           f"- **Two draws per decision against one** (the ablation): {_versus(abl)}.",
           f"- **Keep every tuple**, and BBB's median places {_ordinal(place)} of {n}; "
           f"{best['label']} has the lowest median."]
    rows = R.contraction(pl, records) if ready(pl, records)["why"] else []
    if rows:
        early, late = R.CONTRACT_STEPS[pl["profile"]]
        out.append(f"- **The posterior** contracts (median σ at least halves between {early:,} "
                   f"and {late:,} steps) in {sum(r['contracts'] for r in rows)} of {len(rows)} (variant, "
                   "seed, layer part) cases of the why runs.")
    return "\n".join(out)


# ---- the sources ------------------------------------------------


def quotes(pl, keys):
    """The plan's quotes ``keys`` as Markdown block quotes, each with its source (its 'where'
    up to a note on the copy read or a commit, or up to a colon)."""
    out = []
    for k in keys:
        q = pl["quotes"][k]
        where = re.split(r" \((?:read|same|commit)", q["where"])[0].split(": ")[0]
        out.append(f"> {q['text']}\n>\n> — {where}")
    return "\n\n".join(out)
