"""Notebook 03's campaign plan, version 2 (issue 35): declared and committed before any of its runs.

What it fixes, before a number exists:

- **Families and their search spaces.** Every agent family gets the same tuning budget: the same
  number of settings (``SETTINGS_PER_FAMILY``), a declared Latin-hypercube design over its space
  when the space is larger (every value of every dimension appears), the same seeds, the same horizon (``STEPS``, the full
  50,000) and the same update budget (64 Adam updates of 64 tuples per step, the paper's). BBB is
  tuned on each buffer it is reported on; so are the greedy agents (the paper's three epsilons
  share one learning rate); the Showdown agents run on the keep-all buffer, as in Riquelme et al.
  (2018). Uniform random has nothing to tune.
- **Tuning seeds** (never reported, all >= 100): stage ``screen`` runs every setting on
  ``SCREEN_SEEDS``; stage ``confirm`` runs the ``CONTINUED`` best settings of each family (mean
  final regret over the screen seeds) on ``CONFIRM_SEEDS``; the choice is the lowest mean final
  regret over both stages' seeds.
- **Reported seeds** (0-7) and what runs on them: the paper's four agents on the paper's buffer;
  BBB, greedy, the Showdown agents and random on the keep-all buffer.
- **Tests and verdict words.** Per buffer, BBB against each other agent on final regret, paired by
  seed: the exact two-sided Wilcoxon signed-rank test (``helpers.stats.wilcoxon_exact``; regret
  is skewed, one seed can dominate a mean), Holm over the buffer's family, alpha 0.05; words
  "holds" / "reversed" / "not resolved at n seeds" (``helpers.stats.ordering`` with the
  adjusted p). The number of seeds is chosen so that the tests can resolve: with n seeds the
  smallest exact two-sided p is 2 / 2^n, and Holm multiplies the smallest of m by m;
  ``smallest_holm_p`` is written into the plan for each family and a test keeps it below alpha.
- **Cost**, estimated from ``results/benchmarks/bandit.json`` (milliseconds per update, one
  thread) before the runs, and measured after them.

``write_plan()`` writes ``results/03_contextual_bandit/plan_v2.json``; the runs it governs write
under ``results/03_contextual_bandit/v2/`` only.
"""
import itertools
import json
import random
from pathlib import Path

from .bandit import NB, PAPER_FIGURE6
from .bandit_agents import AGENTS
from .profiles import MNIST_MIXTURE

VERSION = 2
PLAN = Path("results") / NB / "plan_v2.json"  # relative to the repository
GOVERNS = [f"results/{NB}/v2/**"]
STEPS = 50_000
UPDATES_PER_STEP, BATCH = 64, 64
SCREEN_SEEDS = (100, 101)
CONFIRM_SEEDS = (102, 103, 104, 105)
SETTINGS_PER_FAMILY = 8
CONTINUED = 2
# fresh seeds: 0-3 were the reported seeds of the first protocol, on which the keep-all buffer and
# the KL scaling were picked after their regret was seen (docs/choices.md); ten seeds, so that the
# exact tests can resolve after Holm (smallest two-sided p 2 / 2^10)
REPORTED_SEEDS = tuple(range(4, 14))
ALPHA = 0.05
DRAW_SEED = 35  # the declared random draw of settings from spaces larger than the budget

# one learning-rate grid for every agent that trains a network (the issue: "the epsilon-greedy
# agents' learning rate from the same grid"); the greedy agents have nothing else to tune
_LR8 = [1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2]
_BBB_SPACE = {"prior": [0.02, 0.05, 0.1, list(MNIST_MIXTURE)], "rho_init": [-6.0, -5.0, -4.0],
              "lr": _LR8, "noise_sigma": [0.5, 1.0, 2.0], "thompson_samples": [1, 2]}
FAMILIES = {
    # family: the agents one run trains (stacked where they share a run), the buffer, the space
    "bbb_paper": dict(agents=["bbb"], buffer="paper", space=_BBB_SPACE),
    "bbb_keep_all": dict(agents=["bbb"], buffer="keep_all",
                         space={**_BBB_SPACE, "kl_count": ["filled", "fixed"]}),
    "greedy_paper": dict(agents=["greedy", "eps1", "eps5"], buffer="paper", space={"lr": _LR8}),
    "greedy_keep_all": dict(agents=["greedy"], buffer="keep_all", space={"lr": _LR8}),
    "neural_linear": dict(agents=["neural_linear"], buffer="keep_all",
                          space={"lr": _LR8, "lambda_prior": [0.25, 1.0], "a0": [3.0, 6.0]},
                          fixed={"refresh_every": 50}),
    "lin_full_post": dict(agents=["lin_full_post"], buffer="keep_all",
                          space={"lambda_prior": [0.01, 0.1, 0.25, 1.0], "a0": [3.0, 6.0]}),
    "bootstrap": dict(agents=["bootstrap"], buffer="keep_all",
                      space={"lr": _LR8, "heads": [3, 10],
                             "resample": ["poisson", "bernoulli"]}),
    "dropout": dict(agents=["dropout"], buffer="keep_all",
                    space={"lr": _LR8, "keep_prob": [0.5, 0.7, 0.9]}),
}
REPORTED = {"paper": ["bbb", "greedy", "eps1", "eps5"],
            "keep_all": ["bbb", "greedy", "neural_linear", "lin_full_post", "bootstrap", "dropout",
                         "uniform"]}
# the benchmark row whose ms per update bounds one run of each family (one thread): BBB alone
# and the greedy agents run in the stacked model, whose row times all four paper agents at once
BENCH_ROW = {"bbb_paper": "fused_stacked", "bbb_keep_all": "fused_stacked",
             "greedy_paper": "fused_stacked", "greedy_keep_all": "fused_stacked",
             "neural_linear": "neural_linear", "lin_full_post": "lin_full_post",
             "bootstrap": "bootstrap", "dropout": "dropout"}
STACKED = {f: FAMILIES[f]["agents"][0] in ("bbb", "greedy") for f in FAMILIES}
REPORTED_ROWS = {"paper": ["fused_stacked"],
                 "keep_all": ["fused_stacked", "neural_linear", "lin_full_post", "bootstrap",
                              "dropout", "uniform"]}


def settings(family):
    """Return the declared settings of ``family``: its whole space when it holds at most
    ``SETTINGS_PER_FAMILY`` points; else a Latin-hypercube design of that many: each dimension's
    values repeated in turn to fill a column (every value appears, as evenly as the budget
    allows), each column shuffled by ``DRAW_SEED`` (redrawn until no two settings coincide).
    Every setting carries the family's fixed values."""
    spec = FAMILIES[family]
    keys = list(spec["space"])
    n_points = 1
    for k in keys:
        n_points *= len(spec["space"][k])
    if n_points <= SETTINGS_PER_FAMILY:
        points = [dict(zip(keys, v)) for v in itertools.product(*(spec["space"][k] for k in keys))]
    else:
        for attempt in range(100):
            cols = {}
            for k in keys:
                vals = spec["space"][k]
                col = [vals[i % len(vals)] for i in range(SETTINGS_PER_FAMILY)]
                random.Random(f"{DRAW_SEED}:{family}:{k}:{attempt}").shuffle(col)
                cols[k] = col
            points = [{k: cols[k][i] for k in keys} for i in range(SETTINGS_PER_FAMILY)]
            if len({json.dumps(p, sort_keys=True) for p in points}) == len(points):
                break
    return [{**p, **spec.get("fixed", {})} for p in points]


def smallest_holm_p(n_seeds, family_size):
    """The smallest Holm-adjusted p an exact two-sided Wilcoxon test can reach over a family of
    ``family_size`` claims at ``n_seeds`` seeds: family_size x 2 / 2^n_seeds (capped at 1)."""
    return min(1.0, family_size * 2.0 / 2 ** n_seeds)


def run_minutes(ms_per_update):
    """Minutes of one run of ``STEPS`` steps at ``ms_per_update`` (``UPDATES_PER_STEP`` each)."""
    return ms_per_update * UPDATES_PER_STEP * STEPS / 60_000.0


def estimate(bench):
    """Return the campaign's CPU-hours from a bandit benchmark record (its rows' median ms per
    update, one thread): per family the tuning runs, per buffer the reported runs, the total,
    and what the benchmark was (machine, load) - an estimate, measured against after the runs."""
    ms = {r["impl"]: r["median_ms"] for r in bench["rows"]}
    runs = len(SCREEN_SEEDS) * SETTINGS_PER_FAMILY + len(CONFIRM_SEEDS) * CONTINUED
    # BBB and the greedy agents run a setting's seeds stacked in one model (helpers.bandit, as
    # tools/bandit_tuning.py does): one run per setting and stage, timed by the stacked row
    stacked_runs = SETTINGS_PER_FAMILY + CONTINUED
    tuning = {f: round((stacked_runs if STACKED[f] else runs) * run_minutes(ms[BENCH_ROW[f]])
                       / 60.0, 1) for f in FAMILIES}
    reported = {b: round(len(REPORTED_SEEDS) * sum(run_minutes(ms[r]) for r in rows) / 60.0, 1)
                for b, rows in REPORTED_ROWS.items()}
    m = bench.get("machine", {})
    return {"runs_per_family": runs, "processes_per_family": {
                f: stacked_runs if STACKED[f] else runs for f in FAMILIES},
            "tuning_cpu_h": tuning, "reported_cpu_h": reported,
            "total_cpu_h": round(sum(tuning.values()) + sum(reported.values()), 1),
            "from": f"results/benchmarks/bandit.json (median ms per update, "
                    f"{bench['settings'].get('agent_buffer', '?')}-tuple buffer)",
            "machine": m.get("cpu"), "threads": m.get("threads"),
            "load_note": m.get("load_note"),
            "caveat": "an upper bound where a row times more than the run trains (the stacked "
                      "row holds four agents, a stacked tuning run two to four; the NeuralLinear "
                      "row refreshes its features every step, the plan every 50 steps); "
                      "bootstrap with 3 heads costs less than the 10-head row; times from a "
                      "loaded machine are inflated (load_note)"}


def plan(bench):
    """Return the plan (a plain dict) with its estimate from ``bench``."""
    families = {}
    for f, spec in FAMILIES.items():
        families[f] = {"agents": spec["agents"], "buffer": spec["buffer"],
                       "space": spec["space"], "fixed": spec.get("fixed", {}),
                       "settings": settings(f)}
    tests = {}
    for buffer, agents in REPORTED.items():
        claims = [f"bbb < {a}" for a in agents if a != "bbb"]
        tests[buffer] = {"claims": claims, "smallest_holm_p": smallest_holm_p(
            len(REPORTED_SEEDS), len(claims))}
    return {
        "version": VERSION,
        "notebook": NB,
        "question": "Does BBB's Thompson sampling, tuned as fairly as every other agent, reach "
                    "the paper's regret on the mushroom bandit, and where does it place among "
                    "the agents of the Deep Bayesian Bandits Showdown?",
        "steps": STEPS, "updates_per_step": UPDATES_PER_STEP, "batch": BATCH,
        "network": "inputs (context, one-hot action, constant 1) -> 100 -> 100 -> 1, ReLU, for "
                   "every agent that trains a network",
        "tuning": {"screen_seeds": list(SCREEN_SEEDS), "confirm_seeds": list(CONFIRM_SEEDS),
                   "settings_per_family": SETTINGS_PER_FAMILY, "continued": CONTINUED,
                   "draw_seed": DRAW_SEED,
                   "rule": "screen: every setting on the screen seeds; confirm: the "
                           f"{CONTINUED} settings with the lowest mean final regret over the "
                           "screen seeds, on the confirm seeds; choice: the lowest mean final "
                           "regret over all six tuning seeds (ties: the earlier setting). A "
                           "family of several agents (the paper's greedy, 1 % and 5 % greedy, "
                           "which share one learning rate) is scored by the mean of its agents' "
                           "final regrets",
                   "design": "a space larger than the budget: a Latin-hypercube design, each "
                             "dimension balanced on its own (pairs of values are not)",
                   "edges": "a choice at the edge of its grid is reported as such beside the "
                            "agent's row; widening a grid is a new plan version for every "
                            "family",
                   "families": families},
        "reported": {"seeds": list(REPORTED_SEEDS), "agents": REPORTED,
                     "figure": "median and inter-quartile band of cumulative regret per agent, "
                               "log regret axis, the paper's mean curve beside it",
                     "table": "mean ± sd, median, 'lowest on k of n seeds'"},
        "paper_regret": {a: {str(k): v for k, v in d.items()} for a, d in PAPER_FIGURE6.items()},
        "vs_paper": {"claim": "BBB's mean regret at 50,000 steps on the paper's buffer against "
                              "the paper's ~5,700 (read off its Figure 6)",
                     "test": "helpers.stats.vs_published: the paper's value inside the 95 % "
                             "t-interval of the mean over the reported seeds: 'matches the "
                             "paper', else 'better' / 'worse than the paper by x'"},
        "tests": {"score": "cumulative regret at the last step", "pairing": "seed",
                  "test": "exact two-sided Wilcoxon signed-rank (helpers.stats.wilcoxon_exact); "
                          "exact sign test beside it",
                  "correction": "Holm within each buffer's family", "alpha": ALPHA,
                  "verdict_words": ["holds", "reversed",
                                    f"not resolved at {len(REPORTED_SEEDS)} seeds"],
                  "families": tests},
        "estimate": estimate(bench),
        "governs": GOVERNS,
    }


def validate(p):
    """Return the breaches of the protocol's rules in plan ``p`` (empty: none)."""
    bad = []
    fams = p["tuning"]["families"]
    counts = {f: len(spec["settings"]) for f, spec in fams.items()}
    if len(set(counts.values())) != 1:
        bad.append(f"families get unequal numbers of settings: {counts}")
    for f, spec in fams.items():
        unknown = [a for a in spec["agents"] if a not in AGENTS and
                   a not in ("bbb", "greedy", "eps1", "eps5")]
        if unknown:
            bad.append(f"{f}: unknown agents {unknown}")
        keys = [tuple(sorted(s.items(), key=lambda kv: kv[0])) for s in
                (json.loads(json.dumps(x)) for x in spec["settings"])]
        if len({json.dumps(k) for k in keys}) != len(keys):
            bad.append(f"{f}: a setting appears twice")
    tuning_seeds = set(p["tuning"]["screen_seeds"]) | set(p["tuning"]["confirm_seeds"])
    if any(s < 100 for s in tuning_seeds):
        bad.append(f"tuning seeds must be >= 100, got {sorted(tuning_seeds)}")
    if tuning_seeds & set(p["reported"]["seeds"]):
        bad.append("a tuning seed is also reported")
    if len(p["reported"]["seeds"]) < 6:
        bad.append("fewer than 6 reported seeds")
    for buffer, t in p["tests"]["families"].items():
        if t["smallest_holm_p"] >= p["tests"]["alpha"]:
            bad.append(f"{buffer}: at {len(p['reported']['seeds'])} seeds the tests cannot "
                       f"resolve (smallest Holm p {t['smallest_holm_p']:.3f} >= alpha)")
    if p["tuning"]["continued"] > p["tuning"]["settings_per_family"]:
        bad.append("more settings continued than screened")
    return bad


def write_plan(root=None):
    """Write the plan, with its estimate from the committed bandit benchmark, to ``PLAN``."""
    from .utils import PROJECT_ROOT, atomic_write_bytes
    root = Path(root or PROJECT_ROOT)
    bench = json.loads((root / "results" / "benchmarks" / "bandit.json").read_text())
    p = plan(bench)
    bad = validate(p)
    if bad:
        raise ValueError("the plan breaks the protocol:\n- " + "\n- ".join(bad))
    return atomic_write_bytes(root / PLAN, (json.dumps(p, indent=1) + "\n").encode())
