"""The declared analysis of the mushroom-bandit plan v3 (notebook 03, paper section 5.3, Figure 6),
written before any of its numbers exist. Every function reads run records as
``helpers.bandit_campaign._write_record`` writes them (one dict per run) and returns plain data
(lists of row dicts, dicts) or a matplotlib Figure; a notebook calls each in one line. The
statistics are the plan's "tests" field (helpers.bandit_campaign.plan()["tests"]).

The analysis code is this file and helpers/stats.py as of commit ``ANALYSIS_COMMIT`` (the
declared analysis commit; one constant to update when a new declaration is recorded);
``unchanged_since_declaration()`` says whether both files are still as they were then.

Rules shared by every function (the plan's, and the choices it left open):

- **The plan.** Every table, figure and verdict function takes the plan ``pl`` first: plan v3 as
  helpers.bandit_campaign.plan builds it for its profile (the declaration's own 'declared'
  record aside), else ValueError. Every record passed must be of plan version 3 and of ``pl``'s
  profile: default-profile analysis refuses smoke records, and smoke records are read only with
  the smoke plan passed explicitly.
- **The pinned choice** (``check_against_plan``). The reported and why records must be the runs
  the tuning's final choice defines and must carry its hash: the choice is recomputed from the
  tuning records (helpers.bandit_campaign.choose of 'screen', 'confirm' and 'edge', records in
  the order helpers.bandit_campaign.load_records gives), written as tools/bandit_v3.py
  ``pin_choice`` writes choice.json and hashed (SHA-256). Per tier read, the 'reported' records'
  run_ids must be exactly those of ``stage_runs(pl, 'reported', choose(pl, records, 'edge'))``
  of that tier (this fixes each agent's setting, the steps, the seeds and the ablation's
  ``thompson_samples``); the 'why' records' run_ids exactly those of stage 'why'; each record's
  run_id must be the one its own tier, stage, agent, seed, steps and setting give; every
  reported and why record's ``choice_sha256`` must equal the recomputed hash, and so must the
  SHA-256 of the pinned choice.json (plan_v3_runs/choice.json, when it exists).
- **Which records.** ``final_table``, ``comparisons``, ``paper_claim`` and ``figure6`` read the
  records of stage 'reported' of one tier only; records of every other stage and tier move
  them only through the checks above (a tuning record that changes the choice makes them
  refuse), never through their numbers, so tuning seeds cannot move a reported statistic.
  ``choice_table`` reads the tuning stages through ``helpers.bandit_campaign.choose`` (tuning
  seeds only); ``why_rows``, ``contraction`` and ``why_figure`` read stage 'why' only.
- **Refusals (ValueError, naming what is missing or differs).** Besides the two rules above: a
  tier whose reported records lack a declared agent (``AGENTS``, ``ABLATIONS``), whose agents
  do not share one seed set, that holds two records of one (agent, seed), an unknown agent,
  a seed set other than the plan's reported seeds (4-13 in the default profile).
- **Summaries.** Quantiles (median, quartiles) interpolate linearly between order statistics
  (numpy's default, Hyndman & Fan type 7); sd has n - 1 in the denominator; IQR = [q1, q3].
- **Effects** (``wilcoxon_interval``): the Hodges-Lehmann estimate of bbb - other (median of the
  n(n+1)/2 Walsh averages of the paired differences, zeros included) with the interval from
  inverting the Wilcoxon signed-rank test at ``LEVEL`` (the Walsh averages of ranks k and
  M - k + 1, k the largest with 2 P(W+ <= k - 1) <= 1 - LEVEL = 0.05 under the no-ties null
  distribution of W+ over ranks 1..n). Its level, e.g. 95.1 % at 10 pairs, is exact only when
  the differences have no zero and no tied absolute value: then it is reported as
  ``level_achieved``; with a zero or a tie the same figure is only nominal (``level_achieved``
  None, ``level_nominal`` the figure, ``level_note`` 'nominal: ties/zeros present'). Beside it
  the mean difference with its 95 % paired t interval. Intervals are not Holm-adjusted.
- **Verdict words** (one meaning each): 'BBB lower' / 'BBB higher' (BBB against another agent):
  Holm-adjusted exact two-sided Wilcoxon p < 0.05 and the Hodges-Lehmann estimate of
  bbb - other below / above 0; 'two draws lower' / 'two draws higher' (the ablation: BBB with
  its two weight draws per decision against one draw, bbb - bbb_one_draw), the same rule in its
  family of one; otherwise 'not resolved at n seeds' (also when p < 0.05 but the estimate is
  exactly 0, and when every difference is zero: p = 1).
- **Diverged runs** (``diverged``): 'non-finite' when the record says its weights ended
  non-finite (``finite`` False) or holds a non-finite regret or sigma; 'stopped eating' when, in
  some block of ``STOP_WINDOW`` steps (steps 1-1,000, 1,001-2,000, ... in the default profile),
  no poisonous mushroom was eaten and the regret added is at least ``STOP_SHARE`` of what
  passing every edible mushroom costs (5 x 4,208 / 8,124 per step, the data's edible share); the
  first such block is named, and whether a later block fails the rule (the run resumed). Such
  runs stay in every statistic; the table names them.
- **Declared constants.** The windows and steps of the why stage (``WHY_POINTS``,
  ``POISON_WINDOW``, ``REGRET_WINDOW``, ``CONTRACT_STEPS``, ``CONTRACT_FACTOR``), the interval's
  ``LEVEL`` and ``STOP_WINDOW`` are module constants, per profile where the smoke profile's
  short runs need their own; no function takes them as an argument.
"""
import hashlib
import json
import math
import statistics
import subprocess
from pathlib import Path

import torch

from . import bandit as B
from . import bandit_campaign as BC
from . import stats as S
from .utils import PROJECT_ROOT

ANALYSIS_COMMIT = "fb9b023"  # the declared analysis commit (module docstring)
ANALYSIS_FILES = ("helpers/bandit_v3_report.py", "helpers/stats.py")
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
# verdict words: (lower, higher) of bbb - other; the ablation compares two draws with one
WORDS = {"main": ("BBB lower", "BBB higher"), "ablation": ("two draws lower", "two draws higher")}
NOMINAL = "nominal: ties/zeros present"
EDIBLE_SHARE = 4208 / 8124  # UCI mushroom data: 4,208 edible of 8,124
STOP_WINDOW = {"default": 1_000, "smoke": 10}  # steps per block of the 'stopped eating' rule
STOP_SHARE = 0.8
# the why stage (plan "why": sigma at 10k / 25k / 50k, poison per 1,000 steps, regret added in
# the last 10,000, 'contracts': median sigma at 50k <= 0.5 x at 10k); smoke: 20-step runs
WHY_POINTS = {"default": (10_000, 25_000, 50_000), "smoke": (10, 20)}
POISON_WINDOW = {"default": 1_000, "smoke": 10}
REGRET_WINDOW = {"default": 10_000, "smoke": 10}
CONTRACT_STEPS = {"default": (10_000, 50_000), "smoke": (10, 20)}  # (early, late)
CONTRACT_FACTOR = 0.5
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
# the five parts of the network's weights, in helpers.bandit_batch's order (its shapes
# (d_in, H), (H, H), (1, H), (H, 1), (1, 1); d_in includes the constant input whose row is the
# first layer's bias)
LAYERS = ("first layer (weights incl. its bias row)", "second layer weights",
          "second layer bias", "output weights", "output bias")
LAYER_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00")
VARIANT_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)))
VARIANT_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#000000")


def unchanged_since_declaration():
    """True when ``git diff --quiet -I '^ANALYSIS_COMMIT = ' ANALYSIS_COMMIT -- ANALYSIS_FILES``
    succeeds (this file and helpers/stats.py as they were at the declared analysis commit,
    uncommitted edits counted; the line naming that commit is the one change ignored), False
    when it reports a difference, None when git cannot answer (no git, not a repository, or the
    commit unknown)."""
    try:
        got = subprocess.run(["git", "diff", "--quiet", "-I", "^ANALYSIS_COMMIT = ",
                              ANALYSIS_COMMIT, "--", *ANALYSIS_FILES],
                             cwd=PROJECT_ROOT, capture_output=True)
    except OSError:
        return None
    return {0: True, 1: False}.get(got.returncode)


# ---- the plan, the records and the pinned choice ------------------------------------------


def _check_plan(pl):
    """``pl`` must be plan v3 as helpers.bandit_campaign builds it for its profile."""
    profile = pl.get("profile") if isinstance(pl, dict) else None
    if profile not in ("default", "smoke") or pl.get("version") != VERSION:
        raise ValueError(f"pl must be plan v{VERSION} of profile 'default' or 'smoke' "
                         "(helpers.bandit_campaign.plan or the declared plan_v3.json)")
    built = BC.plan(profile)
    got = {k: v for k, v in pl.items() if k != "declared"}
    if got != built:
        keys = sorted(k for k in set(got) | set(built) if got.get(k) != built.get(k))
        raise ValueError(f"pl is not plan v{VERSION} ({profile}) as helpers.bandit_campaign "
                         f"builds it: fields {keys} differ")


def _check_records(pl, records):
    """Every record of plan version 3 and of ``pl``'s profile."""
    for r in records:
        if r.get("plan_version") != VERSION:
            raise ValueError(f"record {r.get('run_id')!r} is of plan version "
                             f"{r.get('plan_version')!r}, not {VERSION}")
        if r.get("profile") != pl["profile"]:
            raise ValueError(f"record {r.get('run_id')!r} is of profile {r.get('profile')!r}, "
                             f"the plan passed of profile {pl['profile']!r}: pass the plan of "
                             "the records' profile explicitly")


def _own_run_id(r):
    return BC.Run(r["tier"], r["stage"], r["agent"], int(r["seed"]), int(r["steps"]),
                  json.dumps(r["setting"], sort_keys=True)).run_id


def _describe(by_id, ids, most=4):
    """A few of ``ids`` (records or Runs in ``by_id``) as 'tier/agent seed s, n steps, setting'."""
    def one(x):
        if isinstance(x, BC.Run):
            return f"{x.tier}/{x.agent} seed {x.seed}, {x.steps} steps, setting {x.setting}"
        return (f"{x['tier']}/{x['agent']} seed {x['seed']}, {x['steps']} steps, setting "
                f"{json.dumps(x['setting'], sort_keys=True)}")
    shown = [one(by_id[i]) for i in ids[:most]]
    return "; ".join(shown) + (f"; and {len(ids) - most} more" if len(ids) > most else "")


def _choice_file(pl):
    """plan_v3_runs/choice.json of ``pl``'s records folder (None for a non-default profile
    pointed at the project's results/, which holds no records of it)."""
    try:
        return BC.records_dir(pl) / "choice.json"
    except ValueError:
        return None


def pinned_choice(pl, records):
    """The tuning's choices and their hash, as tools/bandit_v3.py ``pin_choice`` writes them:
    ({'screen', 'confirm', 'edge': choose(pl, records, stage)}, SHA-256 of
    json.dumps(that, indent=1, sort_keys=True) + newline). Records are read in load_records'
    order (tier, stage, file name) so that sums over seeds add in the driver's order. ValueError
    when the tuning records give no final choice (a stage's record missing)."""
    ordered = sorted(records, key=lambda r: (r["tier"], r["stage"], f"{r['run_id']}.json"))
    try:
        choice = {s: BC.choose(pl, ordered, s) for s in ("screen", "confirm", "edge")}
    except ValueError as e:
        raise ValueError(f"the tuning records give no final choice (the pinned choice cannot "
                         f"be recomputed): {e}") from e
    text = (json.dumps(choice, indent=1, sort_keys=True) + "\n").encode()
    return choice, hashlib.sha256(text).hexdigest()


def check_against_plan(pl, records, tiers=BC.TIERS, why=True, choice_path=None):
    """Refuse (ValueError, naming what differs) records that are not the runs the pinned choice
    defines (module docstring, 'The pinned choice'); return {choice, sha256}.

    Checked: every record's run_id against its own fields; for each tier in ``tiers`` the
    'reported' records' run_ids against ``stage_runs(pl, 'reported', choice['edge'])`` of that
    tier; with ``why`` the 'why' records' run_ids against stage 'why' (paper tier; the keep-all
    tier has none); every reported and why
    record's ``choice_sha256`` against the recomputed hash; the SHA-256 of ``choice_path`` (by
    default plan_v3_runs/choice.json in ``pl``'s records folder, when it exists) against it."""
    _check_plan(pl)
    _check_records(pl, records)
    for r in records:
        if r.get("run_id") != _own_run_id(r):
            raise ValueError(f"record {r.get('run_id')!r}: its run_id is not the one its tier, "
                             f"stage, agent, seed, steps and setting give ({_own_run_id(r)})")
    choice, sha = pinned_choice(pl, records)
    parts = [("reported", t) for t in tiers] + ([("why", t) for t in BC.TIERS] if why else [])
    for stage, tier in parts:
        want = {r.run_id: r for r in BC.stage_runs(pl, stage, choice["edge"]) if r.tier == tier}
        got = {r["run_id"]: r for r in records if r["stage"] == stage and r["tier"] == tier}
        extra, missing = sorted(set(got) - set(want)), sorted(set(want) - set(got))
        if extra or missing:
            raise ValueError(
                f"{tier} tier, stage {stage}: the records are not the runs the pinned choice "
                f"defines: {len(extra)} record(s) not of it ({_describe(got, extra) or 'none'}); "
                f"{len(missing)} run(s) of it without a record "
                f"({_describe(want, missing) or 'none'})")
    for r in records:
        if r["stage"] not in ("reported", "why"):
            continue
        if r.get("choice_sha256") is None:
            raise ValueError(f"{r['tier']}/{r['stage']} record {r['run_id']} has no "
                             "choice_sha256 (the pinned choice's hash)")
        if r["choice_sha256"] != sha:
            raise ValueError(f"{r['tier']}/{r['stage']} record {r['run_id']} carries choice "
                             f"hash {r['choice_sha256']}, the tuning records give {sha}")
    path = Path(choice_path) if choice_path is not None else _choice_file(pl)
    if path is not None and (choice_path is not None or path.exists()):
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        if got != sha:
            raise ValueError(f"{path} has SHA-256 {got}, the tuning records give {sha}: the "
                             "pinned choice is not the records' choice")
    return {"choice": choice, "sha256": sha}


# ---- selection and small statistics ------------------------------------------------


def reported(pl, records, tier):
    """Return {agent: {seed: record}} of ``tier``'s 'reported' records, agents in the declared
    order (main agents, then ablations), after ``check_against_plan`` of that tier. Raises
    ValueError as the module docstring lists."""
    return _reported(pl, records, tier)[0]


def _reported(pl, records, tier):
    """(reported(...), check_against_plan's answer)."""
    _check_plan(pl)
    _check_records(pl, records)
    out = {}
    for r in records:
        if r["stage"] != "reported" or r["tier"] != tier:
            continue
        if r["agent"] not in AGENTS[tier] + ABLATIONS[tier]:
            raise ValueError(f"{tier} tier: unknown agent {r['agent']!r}")
        by = out.setdefault(r["agent"], {})
        if int(r["seed"]) in by:
            raise ValueError(f"{tier}/{r['agent']}: two reported records of seed {r['seed']}")
        by[int(r["seed"])] = r
    _check_seeds(pl, out, tier)
    pinned = check_against_plan(pl, records, tiers=(tier,), why=False)
    return {a: dict(sorted(out[a].items())) for a in AGENTS[tier] + ABLATIONS[tier]}, pinned


def _check_seeds(pl, out, tier):
    missing = [a for a in AGENTS[tier] + ABLATIONS[tier] if a not in out]
    if missing:
        raise ValueError(f"{tier} tier: no reported records of {missing}")
    union = sorted(set().union(*out.values()))
    gaps = {a: sorted(set(union) - set(v)) for a, v in out.items() if sorted(v) != union}
    if gaps:
        raise ValueError(f"{tier} tier: the agents do not share one seed set; seeds missing per "
                         f"agent: {gaps}")
    want = pl["seeds"]["reported"]
    if union != want:
        raise ValueError(f"{tier} tier: reported seeds {union}, the plan declares {want}")


def _quartiles(xs):
    """[q1, median, q3], linear interpolation (type 7); one value: that value three times."""
    if len(xs) < 2:
        return [float(xs[0])] * 3
    return [float(v) for v in statistics.quantiles(xs, n=4, method="inclusive")]


def wilcoxon_interval(a, b):
    """Hodges-Lehmann estimate of a - b (paired) and its interval by inverting the two-sided
    Wilcoxon signed-rank test at ``LEVEL`` (helpers.stats.wilcoxon_interval). Returns {hl, ci,
    level_achieved, level_nominal, level_note}: ``level_nominal`` is the level the no-ties null
    distribution gives (e.g. 95.1 % at 10 pairs); it is exact, and repeated as
    ``level_achieved`` with ``level_note`` 'exact', only when no difference is zero and no two
    |differences| tie (helpers.stats.wilcoxon_exact's ``zeros_dropped`` and
    ``ties_in_ranks``); else ``level_achieved`` is None and ``level_note`` 'nominal: ties/zeros
    present'. ``ci`` None (and every level None) when n is too small for any interval at
    ``LEVEL`` (n < 6 at 95 %)."""
    got = S.wilcoxon_interval(a, b, LEVEL)
    w = S.wilcoxon_exact(a, b)
    if got["low"] is None:
        return {"hl": got["estimate"], "ci": None, "level_achieved": None,
                "level_nominal": None, "level_note": None}
    exact = not (w["zeros_dropped"] or w["ties_in_ranks"])
    return {"hl": got["estimate"], "ci": [got["low"], got["high"]],
            "level_achieved": got["coverage"] if exact else None,
            "level_nominal": got["coverage"], "level_note": "exact" if exact else NOMINAL}


def _finals(by_seed):
    return [float(r["final_regret"]) for r in by_seed.values()]


def diverged(rec):
    """None, or {reason, from_step, to_step, resumed} for one record (module docstring).

    'non-finite': from_step, to_step and resumed None. 'stopped eating': the first block of
    ``STOP_WINDOW[profile]`` steps (blocks from the run's start: steps 1-1,000, 1,001-2,000, ...;
    a last incomplete block is not read) in which no poisonous mushroom was eaten (every
    record's poison share 0) and the regret added reached ``STOP_SHARE`` x 5 x EDIBLE_SHARE x
    the block's steps; ``from_step`` / ``to_step`` its first and last step; ``resumed`` True when
    a later block does not meet that rule, False when every later block does (or none
    follows)."""
    nums = list(rec["cum_regret"]) + [v for row in (rec.get("sigma_layers") or [])[-1:]
                                      for v in row]
    if rec.get("finite") is False or not all(math.isfinite(float(v)) for v in nums):
        return {"reason": "non-finite", "from_step": None, "to_step": None, "resumed": None}
    every, cum, pr = rec["record_every"], rec["cum_regret"], rec["poison_rate"]
    k = _per(min(STOP_WINDOW[rec["profile"]], rec["steps"]), every, "the stop window")
    stopped = []
    for j in range(0, len(cum) - k + 1, k):
        added = cum[j + k - 1] - (cum[j - 1] if j else 0.0)
        stopped.append(not any(pr[j:j + k]) and
                       added >= STOP_SHARE * B.REWARD_EDIBLE * EDIBLE_SHARE * k * every)
    if not any(stopped):
        return None
    first = stopped.index(True)
    return {"reason": "stopped eating", "from_step": first * k * every + 1,
            "to_step": (first + 1) * k * every, "resumed": not all(stopped[first:])}


# ---- the table and the comparisons ------------------------------------------------


def final_table(pl, records, tier):
    """Final regret per agent of ``tier`` over its reported seeds: one row dict per agent
    (declared order: main agents, then the ablation) with n, seeds, mean, sd, median, q1, q3,
    ``lowest_k`` (of n), ``diverged`` ([{seed, reason, from_step, to_step, resumed}],
    ``diverged``), ``paper_50k`` and the setting it ran: ``setting`` (its records' setting),
    ``setting_label`` (``setting_label``), ``tuned`` and ``at_edge``.

    ``lowest_k``: the number of seeds on which the agent's final regret is the lowest among the
    tier's main agents (``AGENTS[tier]``; the ablation is left out of the count and gets None).
    Ties count for each: a seed on which several agents share the lowest final regret counts for
    every one of them, so the k's of a tier can add up to more than n. ``paper_50k``: the paper's
    Figure 6 value at 50,000 steps (helpers.bandit.PAPER_FIGURE6) for the paper tier's agents
    that have one, else None (the keep-all tier's protocol is not the paper's). ``at_edge``: the
    factors of the final choice still at a grid edge (``choose(pl, records, 'edge')``'s
    ``at_edge``; [] when none), for a tuned agent and for the ablation (its agent's choice, one
    draw per decision); None for an untuned agent (``tuned`` False)."""
    by, pinned = _reported(pl, records, tier)
    final = pinned["choice"]["edge"][tier]
    ablation_of = {a: v["of"] for a, v in pl["tiers"][tier].get("ablation", {}).items()}
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
        bad = [{"seed": s, **d} for s, d in ((s, diverged(r)) for s, r in recs.items()) if d]
        entry = final.get(ablation_of.get(agent, agent))
        setting = next(iter(recs.values()))["setting"]
        rows.append({"tier": tier, "agent": agent, "label": AGENT_LABELS[agent],
                     "role": "main" if agent in main else "ablation", "n": len(x),
                     "seeds": seeds, "mean": statistics.fmean(x),
                     "sd": statistics.stdev(x) if len(x) > 1 else None, "median": med,
                     "q1": q1, "q3": q3, "lowest_k": k, "diverged": bad, "paper_50k": paper,
                     "setting": setting, "setting_label": setting_label(setting),
                     "tuned": entry is not None,
                     "at_edge": list(entry["at_edge"]) if entry is not None else None})
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


def _verdict(p_holm, hl, n, role):
    lower, higher = WORDS[role]
    if p_holm is not None and p_holm < ALPHA and hl != 0:
        return lower if hl < 0 else higher
    return f"not resolved {S.at_n(n)}"


def comparisons(pl, records, tier):
    """BBB (agent 'bbb', the main row) against every other agent of ``tier``, paired by seed over
    the reported seeds: one row dict per comparison, the tier's main agents first, then the
    ablation.

    Each row: ``p`` (exact two-sided Wilcoxon signed-rank p of the paired final regrets,
    helpers.stats.wilcoxon_exact: zero differences dropped, tied |differences| at mid-ranks,
    the null distribution enumerated for those ranks) with that test's ``zeros_dropped``,
    ``n_used`` (pairs left after dropping zeros) and ``ties_in_ranks``; ``p_holm`` and
    ``family_size`` (Holm over the tier's family: paper greedy, eps1, eps5 = 3 tests; keep-all 6
    tests; the ablation bbb vs bbb_one_draw its own family of one, p_holm = p); ``hl`` with
    ``ci``, ``level_achieved``, ``level_nominal`` and ``level_note`` (``wilcoxon_interval``:
    with a zero or tied difference the interval's level is nominal); ``mean_diff`` with ``t_ci``
    (helpers.stats.paired_t, 95 %, n - 1 degrees of freedom; None without spread);
    ``bbb_lower_on`` (seeds with bbb < other); ``verdict`` (module docstring: 'BBB lower' /
    'BBB higher' against an agent, 'two draws lower' / 'two draws higher' for the ablation,
    else 'not resolved at n seeds'). Paper tier against greedy, eps1 and eps5: ``paper_diff``
    (the paper's bbb - other at 50k, PAPER_FIGURE6: a difference of five-run means read off its
    curves) and whether ``ci`` / ``t_ci`` exclude it (``ci_excludes_paper`` /
    ``t_excludes_paper``); None elsewhere. Intervals are not Holm-adjusted."""
    return _comparison_rows(tier, reported(pl, records, tier))


def _comparison_rows(tier, by):
    bbb = _finals(by["bbb"])
    rows = []
    for role, family in (("main", [a for a in AGENTS[tier] if a != "bbb"]),
                         ("ablation", list(ABLATIONS[tier]))):
        part = [_compare(tier, bbb, _finals(by[a]), a) for a in family]
        for row, p in zip(part, S.holm([r["p"] for r in part])):
            row.update(p_holm=p, family_size=len(part), role=role,
                       verdict=_verdict(p, row["hl"], row["n"], role))
        rows += part
    return rows


def _compare(tier, bbb, other, name):
    tt = S.paired_t(bbb, other, LEVEL)
    wi = wilcoxon_interval(bbb, other)
    w = S.wilcoxon_exact(bbb, other)
    paper = _paper_diff(tier, name)
    return {"tier": tier, "other": name, "label": AGENT_LABELS[name], "n": len(bbb),
            "p": w["p"], "zeros_dropped": w["zeros_dropped"], "n_used": w["n_used"],
            "ties_in_ranks": w["ties_in_ranks"], **wi, "mean_diff": tt["mean_diff"],
            "t_ci": tt["ci"], "bbb_lower_on": sum(a < b for a, b in zip(bbb, other)),
            "paper_diff": paper, "ci_excludes_paper": _excludes(wi["ci"], paper),
            "t_excludes_paper": _excludes(tt["ci"], paper)}


def paper_claim(pl, records):
    """The paper tier's claim and aim, as plan v3 words them.

    ``claim``: 'holds' when the verdict against each of greedy, eps1 and eps5 is 'BBB lower'
    (Holm within the paper tier's family of 3, ``comparisons``); 'reversed' when any of the
    three is 'BBB higher'; else 'not resolved at n seeds'. ``aim``: BBB's final regret against
    the paper's 5,700 at 50k (a mean of five runs) by helpers.stats.vs_published on the mean
    over the reported seeds (two-sided 95 % t interval): 'matches the paper' / 'better than the
    paper by x' / 'worse than the paper by x' (x in regret, no decimals), or 'not resolved at n
    seeds' when the seeds' final regrets have no spread (every value the same up to rounding,
    helpers.stats.NO_SPREAD: no t interval; ``ci`` None); the median and IQR beside it,
    descriptive."""
    by = reported(pl, records, "paper")
    rows = {r["other"]: r for r in _comparison_rows("paper", by)}
    verdicts = {a: rows[a]["verdict"] for a in CLAIM_AGAINST}
    n = rows[CLAIM_AGAINST[0]]["n"]
    lower, higher = WORDS["main"]
    if all(v == lower for v in verdicts.values()):
        claim = "holds"
    elif any(v == higher for v in verdicts.values()):
        claim = "reversed"
    else:
        claim = f"not resolved {S.at_n(n)}"
    x = _finals(by["bbb"])
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
    records of a stage are choose's ValueError; ``pl`` and the records' profile as for every
    function (module docstring)."""
    _check_plan(pl)
    _check_records(pl, records)
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


def figure6(pl, records):
    """Figure 6 of plan v3: two panels, the paper tier then the keep-all tier (a tier with no
    reported record gets an empty panel saying so). Per agent, the median (thick line), the mean
    (thin line) and the inter-quartile band (q1-q3, shaded) of cumulative regret over the
    reported seeds against step, on a log regret axis; the ablation dashed in BBB's colour.
    Paper tier: the paper's values (PAPER_FIGURE6, read off its curves: means of five runs) as
    crosses in the agent's colour, where their step lies within the runs' steps. Legends sit
    below the panels. Each drawn tier's records pass ``reported`` (the pinned choice checked)."""
    import matplotlib.pyplot as plt

    from .plotting import use_style
    _check_plan(pl)
    _check_records(pl, records)
    panels = {t: reported(pl, records, t) for t in BC.TIERS
              if any(r["stage"] == "reported" and r["tier"] == t for r in records)}
    use_style()
    fig, axes = plt.subplots(1, 2, figsize=(12.4, 5.4), constrained_layout=True)
    for ax, tier in zip(axes, BC.TIERS):
        ax.set_title(TIER_TITLES[tier], fontsize=10)
        if tier not in panels:
            ax.text(0.5, 0.5, "no reported runs", ha="center", transform=ax.transAxes)
            continue
        _figure6_panel(ax, tier, panels[tier])
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


def why_runs(pl, records):
    """Return {variant: {seed: record}} of stage 'why' (variant: the record's
    setting['variant']; BBB's KL variants and the greedy reference), variants in first-seen
    order, after ``check_against_plan`` of the why stage (its records exactly the runs
    ``stage_runs(pl, 'why', ...)`` gives for the pinned choice, each with its hash); ValueError
    on a duplicate (variant, seed), records of another plan version or profile."""
    check_against_plan(pl, records, tiers=(), why=True)
    out = {}
    for r in records:
        if r["stage"] != "why":
            continue
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


def poison_blocks(rec):
    """The share of poisonous mushrooms eaten per ``POISON_WINDOW[profile]`` steps (1,000 in the
    default profile): [(end step, share)], the
    share being the unweighted mean of the window's per-record_every shares (each 100-step
    share counts once whatever the number of poisonous mushrooms it saw: about half of 100;
    a record with none seen holds 0)."""
    k = _per(POISON_WINDOW[rec["profile"]], rec["record_every"], "the poison window")
    pr = rec["poison_rate"]
    return [((i + k) * rec["record_every"], statistics.fmean(pr[i:i + k]))
            for i in range(0, len(pr) - k + 1, k)]


def _at(rec, key, i):
    """rec[key][i], or None for a record without ``key`` (the greedy reference has no σ)."""
    return rec[key][i] if rec.get(key) is not None else None


def why_rows(pl, records):
    """One row per (variant, seed, step of ``WHY_POINTS[profile]`` within the run: 10,000,
    25,000 and 50,000 in the default profile) of stage 'why' (``why_runs``):
    ``sigma_layers`` (mean σ of each of the 5 parts, ``LAYERS``: the first layer with its bias
    row, the second layer's weights, its bias, the output weights, the output bias),
    ``sigma_init`` and ``sigma_ratio`` (mean σ / its initial value, per part), ``sigma_median``
    (the median σ per part, from the record's 5/50/95 % quantiles ``sigma_q``), ``kl_over_n``
    (KL over its divisor N at that step), ``kl``, ``kl_se``, ``kl_n``, ``nll`` (per stored
    tuple at the posterior mean), ``nll_q`` (its mean over the record's weight draws),
    ``pred_sd`` (the record's spread of Q(eat) - Q(pass) over draws), ``poison_rate`` (share
    of poisonous mushrooms eaten in the ``POISON_WINDOW[profile]`` steps ending at the step,
    1,000 in the default profile, ``poison_blocks``' unweighted mean) and ``regret_added``
    (cumulative regret gained in the ``REGRET_WINDOW[profile]`` steps ending at the step,
    10,000 in the default profile; at 50k: the last 10,000). Fields a record lacks (the greedy
    reference: every σ, KL and NLL field) are None."""
    prof = pl["profile"]
    rows = []
    for variant, by in why_runs(pl, records).items():
        for seed, r in by.items():
            every = r["record_every"]
            kp = _per(POISON_WINDOW[prof], every, "the poison window")
            kr = _per(REGRET_WINDOW[prof], every, "the regret window")
            for step in (p for p in WHY_POINTS[prof] if p <= r["steps"]):
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


def contraction(pl, records):
    """The plan's rule, per (variant, seed, layer part) of BBB's why runs (``why_runs``): a part
    'contracts' when its median σ (``sigma_q``'s 50 % quantile) at the late step is at most
    ``CONTRACT_FACTOR`` (0.5) x its median σ at the early step (``CONTRACT_STEPS[profile]``:
    10,000 and 50,000 in the default profile). The five parts (``LAYERS``, in
    helpers.bandit_batch's order): the first layer's weights including its bias row (the
    constant input's), the second layer's weights, the second layer's bias, the output weights,
    the output bias. Rows {variant, seed, layer (its ``LAYERS`` name), early, late, ratio,
    contracts}; the greedy reference has no σ and no rows. ValueError if a BBB why record lacks
    ``sigma_q`` or either step."""
    early, late = CONTRACT_STEPS[pl["profile"]]
    rows = []
    for variant, by in why_runs(pl, records).items():
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
                             "late": b, "ratio": b / a,
                             "contracts": b <= CONTRACT_FACTOR * a})
    return rows


def why_figure(pl, records):
    """The 'why' experiment in 2 x 2 panels: (a) mean σ per layer part over steps, from its
    initial value at step 0 (colour: part; log axis); (b) KL/N and NLL per stored tuple at the
    posterior mean over steps (colour: quantity; log axis, symlog if a value is <= 0); (c) share
    of poisonous mushrooms eaten per ``POISON_WINDOW[profile]`` steps (``poison_blocks``); (d)
    cumulative regret. One line style per variant (in (c) and (d) also one colour; the greedy
    reference appears there only); each seed a thin line. The records pass ``why_runs``."""
    import matplotlib.pyplot as plt

    from .plotting import percent_axis, use_style
    runs = why_runs(pl, records)
    poison_window = POISON_WINDOW[pl["profile"]]
    use_style()
    fig, axes = plt.subplots(2, 2, figsize=(12.4, 9.6), constrained_layout=True)
    a, b, c, d = axes.flat
    for j, (variant, by) in enumerate(runs.items()):
        ls, col = VARIANT_STYLES[j % 5], VARIANT_COLORS[j % 5]
        for r in by.values():
            _why_lines(a, b, c, d, r, ls, col)
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


def _why_lines(a, b, c, d, r, ls, col):
    steps = [r["record_every"] * (i + 1) for i in range(len(r["cum_regret"]))]
    x, y = zip(*poison_blocks(r))
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


def measured_cost(pl, records):
    """CPU-hours per (tier, stage): ``runs`` and ``cpu_h`` summed from the records' cpu_s
    (a batched process's CPU time is split evenly over its rows when written), beside the
    plan's ``pl['estimate']`` parts (``est_runs``, ``est_cpu_h``; None for a stage the estimate
    lacks) and ``ratio`` = cpu_h / est_cpu_h; a last row 'all' / 'all' sums both over every
    part. ValueError on a record without cpu_s (and as for every function on ``pl`` and the
    records' profile). Counts what exists: no pinned-choice check (it reads a campaign in
    progress too)."""
    _check_plan(pl)
    _check_records(pl, records)
    parts = pl["estimate"]["parts"]
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
