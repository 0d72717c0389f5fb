"""The mushroom-bandit campaign of notebook 03 (paper section 5.3, Figure 6) after plan v2: a plan
of two tiers, its jobs per stage, the choice of tuned settings, and a resumable runner.

DRAFT: the plan built here is ``docs/drafts/bandit_plan_v3.json``; nothing is declared or run
until the lead commits a declaration (results/03_contextual_bandit/plan_v3.json).

- **paper tier**: BBB (Thompson sampling), greedy, 1 % and 5 % epsilon-greedy on the paper's
  buffer (the last 4,096 tuples), 64 updates of 64 tuples after every step, 50,000 steps; plus a
  labelled ablation, BBB with the other number of weight samples per decision.
- **showdown tier**: Riquelme, Tucker & Snoek (2018)'s protocol: every tuple kept, every network
  agent retrained every ``train_every`` (50) steps for ``train_steps`` (100) minibatches of
  ``train_batch`` (512) tuples, as their ``example_main.py`` sets it; BBB, greedy, NeuralLinear,
  LinFullPost, bootstrapped networks, dropout Thompson sampling, uniform.

Stages (``STAGES``), on disjoint seeds:

- ``screen``: every setting of every tuned family at ``screen_steps`` (10,000) on the two screen
  seeds (>= 100);
- ``confirm``: each tuned agent's best ``confirmed`` (2) screen settings at ``steps`` on the two
  confirm seeds;
- ``reported``: each agent's chosen setting (and the ablation, and the untuned agents) on the
  reported seeds 4-13.

``choose`` reads records of tuning seeds only: a record of a reported seed cannot move a choice
(tests/test_bandit_campaign.py). ``run_stage`` writes one JSON record per run (atomic) and skips
runs whose record exists; paper-tier batches also checkpoint per row (helpers.bandit_batch).

Engines: BBB and the epsilon-greedy agents run as rows of ``helpers.bandit_batch.BatchedRuns``
(``ScheduledRuns`` adds the Showdown's schedule: no update on most steps, ``train_steps``
updates of ``train_batch`` tuples every ``train_every`` steps, Adam's step counting the updates
made); the agents of ``helpers.bandit_agents`` run one network each in ``run_agent``'s loop on the
same mushroom stream, with the same schedule.
"""
import functools
import hashlib
import json
import math
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from . import bandit as B
from . import bandit_agents as BA
from . import bandit_batch as BB
from .paper_search import balanced_design
from .utils import PROJECT_ROOT, atomic_write_bytes, checkpoints_dir, one_thread, results_dir

VERSION = 3
STAGES = ("screen", "confirm", "reported")
TIERS = ("paper", "showdown")
MIXTURE = (0.5, 1.0, math.exp(-6))  # the paper's scale mixture (pi, sigma1, sigma2)
# one grid of learning rates for every agent tuned on its learning rate only (12 values: the
# number of settings BBB gets)
LR_GRID = (1e-4, 2e-4, 3e-4, 5e-4, 7e-4, 1e-3, 1.5e-3, 2e-3, 3e-3, 5e-3, 1e-2, 2e-2)
PLAIN_EPS = {"greedy": 0.0, "eps1": 0.01, "eps5": 0.05}

# ---- measured rates (CPU microseconds, one thread) behind the estimate --------------------------
# update64 (paper tier, whole step / 64): build/benchmarks/bandit_batch_loaded.json
# (bench_bandit_batch.py, 10 seeds x 4 agents, loaded machine) gives 182.8 us per network-update
# for 1 BBB : 3 plain rows; split by component with a tiny timing (BatchedRuns, 4 rows, 3 steps,
# loaded machine: BBB 318.5, plain 207.5, mixed 246.4 us) scaled by 182.8 / 246.4.
# update512 and act_step (showdown tier): ScheduledRuns, 4 rows, 50 steps (one training of 100
# updates of 512 tuples), loaded machine, unscaled (BBB 1796 / 134, plain 1064 / 90).
# agent_run_s: measure_rates, 200 steps (4 trainings) scaled to 50,000, loaded machine, unscaled
# (NeuralLinear 245, LinFullPost 37, bootstrap 621, dropout 227, uniform 2.4 s), rounded up;
# NeuralLinear's refresh of every stored tuple grows with the keep-all buffer: +150 s allowed.
RATES_US = {
    "update64": {"bbb": 236.3, "plain": 153.9},
    "update512": {"bbb": 1800.0, "plain": 1065.0},
    "act_step": {"bbb": 135.0, "plain": 90.0},      # a step without updates, per row
    # whole 50k-step runs of helpers.bandit_agents on the Showdown's schedule (CPU seconds)
    "agent_run_s": {"neural_linear": 400.0, "lin_full_post": 40.0, "bootstrap": 650.0,
                    "dropout": 250.0, "uniform": 5.0},
}

QUOTES = {
    "paper_buffer": {
        "text": "We kept the last 4096 reward, context and action tuples in a buffer, and trained "
                "the networks using randomly drawn minibatches of size 64 for 64 training steps "
                "(64 \u00d7 64 = 4096) per interaction with the Mushroom bandit.",
        "where": "Blundell et al. 2015, section 5.3 (checked through a verbatim quotation in a "
                 "public GitHub file; the PDF itself was not reachable from this session)"},
    "paper_samples": {
        "text": None,
        "where": "Blundell et al. 2015, section 5.3: NOT CHECKED in this session (no copy of "
                 "the paper text reachable). The project's code and notebook use two weight "
                 "samples averaged per decision; the lead must quote the sentence from the PDF "
                 "before declaring. Until then main_thompson_samples = 2 is an assumption."},
    "showdown_schedule": {
        "text": "hparams_rms / hparams_dropout / hparams_bbb: batch_size=512, buffer_s=-1, "
                "initial_pulls=2, training_freq=50, training_epochs=100; hparams_nlinear: "
                "training_freq=1, training_freq_network=50, training_epochs=100; hparams_rms: "
                "p=0.95, q=3",
        "where": "tensorflow/models research/deep_contextual_bandits/example_main.py (commit "
                 "edc769a3a1d5bc3e90eabebd1c589126e70f5cb3); posterior_bnn_sampling.py "
                 "update(): 'if self.t % self.training_freq == 0: ... "
                 "self.bnn.train(self.data_h, self.training_epochs)'"},
    "showdown_bbb_kl": {
        "text": "elbo = weighted_log_likelihood + (neg_kl_term / self.n)  with  "
                "self.n: data.num_points(self.f_num_points)",
        "where": "tensorflow/models research/deep_contextual_bandits/bandits/algorithms/"
                 "variational_neural_bandit_model.py (commit 33395b05d950): the KL is divided "
                 "by the number of tuples stored (every tuple is kept); one weight draw per "
                 "decision (y_pred from w = w_mu + w_sigma * w_noise)"},
}


# ---- the plan ------------------------------------------------


def _profile_numbers(profile):
    if profile == "default":
        return dict(steps=50_000, screen_steps=10_000, hidden=100, updates_per_step=64, batch=64,
                    record_every=100, train_every=50, train_steps=100, train_batch=512,
                    reported=list(range(4, 14)), screen=[100, 101], confirm=[102, 103],
                    settings=12, confirmed=2, max_rows=24)
    if profile == "smoke":
        return dict(steps=20, screen_steps=10, hidden=8, updates_per_step=2, batch=4,
                    record_every=5, train_every=5, train_steps=2, train_batch=8,
                    reported=[4, 5], screen=[100, 101], confirm=[102, 103], settings=4,
                    confirmed=2, max_rows=6)
    raise ValueError(f"unknown profile {profile!r}: 'default' or 'smoke'")


def _lr_family(agents, n, lrs=LR_GRID):
    """A family tuned on its learning rate only: ``n`` values of ``lrs`` (evenly spread)."""
    idx = [round(i * (len(lrs) - 1) / max(n - 1, 1)) for i in range(n)]
    return {"agents": list(agents), "space": {"lr": [lrs[i] for i in idx]},
            "settings": [{"lr": lrs[i]} for i in idx],
            "choice": "per agent (each agent its own best learning rate)"}


def _bbb_family(space, n, seed):
    return {"agents": ["bbb"], "space": space,
            "settings": balanced_design(space, n, seed=seed),
            "design": "helpers.paper_search.balanced_design: every value of every factor equally "
                      f"often, pairs as balanced as a seeded search finds (seed {seed})"}


def plan(profile="default"):
    """Return the plan v3 draft of ``profile`` ('default': the campaign; 'smoke': a few steps, for
    tests) as a JSON-ready dict (a fresh copy: the designs are searched once per process)."""
    return json.loads(_plan_text(profile))


@functools.lru_cache(maxsize=4)
def _plan_text(profile):
    return json.dumps(_build_plan(profile))


def _build_plan(profile):
    p = _profile_numbers(profile)
    n = p["settings"]
    paper_bbb = {"prior": [0.02, 0.05, 0.1, list(MIXTURE)], "rho_init": [-6.0, -5.0, -4.0],
                 "lr": [3e-4, 1e-3, 3e-3, 1e-2], "noise_sigma": [0.5, 1.0, 2.0],
                 "kl": ["capacity", "seen"]}
    show_bbb = {"prior": [0.02, 0.05, 0.1, list(MIXTURE)], "rho_init": [-6.0, -5.0, -4.0],
                "lr": [1e-3, 3e-3, 1e-2, 3e-2], "noise_sigma": [0.1, 0.5, 1.0],
                "kl": ["filled", "filled_floor4096"]}
    if profile == "smoke":  # a 4-setting design (every factor's number of values divides 4)
        paper_bbb = {"prior": [0.05, list(MIXTURE)], "rho_init": [-5.0, -4.0],
                     "lr": [1e-3, 3e-3], "noise_sigma": [1.0, 2.0], "kl": ["capacity", "seen"]}
        show_bbb = {**paper_bbb, "kl": ["filled", "filled_floor4096"]}
    paper_schedule = {"kind": "every_step", "updates_per_step": p["updates_per_step"],
                      "batch": p["batch"]}
    show_schedule = {"kind": "every_k_steps", "train_every": p["train_every"],
                     "train_steps": p["train_steps"], "batch": p["train_batch"],
                     "initial_pulls": 2}
    out = {
        "version": VERSION, "status": "DRAFT: not declared, no run started",
        "notebook": B.NB, "profile": profile,
        "question": "Does BBB's Thompson sampling, tuned as fairly as every other agent, reach "
                    "the paper's regret on the mushroom bandit (paper tier), and where does it "
                    "place among the Deep Bayesian Bandits Showdown's agents (showdown tier)?",
        "quotes": QUOTES,
        "steps": p["steps"], "screen_steps": p["screen_steps"], "record_every": p["record_every"],
        "network": {"hidden": p["hidden"], "layers": "inputs (context, one-hot action, 1) -> "
                    "H -> H -> 1, ReLU, for every network agent of both tiers"},
        "seeds": {"reported": p["reported"], "screen": p["screen"], "confirm": p["confirm"],
                  "seen_before": [0, 1, 2, 3],
                  "rule": "tuning reads seeds >= 100 only; reported seeds 4-13 (plan v2 declared "
                          "them; 0-3 have been seen and are not used)"},
        "tuning": {"screen": f"every setting of every family on the screen seeds at "
                             f"{p['screen_steps']} steps",
                   "confirmed": p["confirmed"],
                   "confirm": f"each tuned agent's {p['confirmed']} settings of lowest mean final "
                              f"screen regret, on the confirm seeds at {p['steps']} steps",
                   "choice": "the confirmed setting of lowest mean final regret on the confirm "
                             "seeds; ties: the better screen rank",
                   "settings_per_family": n,
                   "edges": "a choice at the edge of a grid is reported beside the agent's row; "
                            "widening a grid is a new plan version"},
        "tiers": {
            "paper": {
                "buffer": "paper", "buffer_settings": B.buffer_settings("paper", p["steps"]),
                "schedule": paper_schedule,
                "agents": ["bbb", "greedy", "eps1", "eps5"],
                "main_thompson_samples": 2,
                "ablation": {"bbb_one_draw": {"of": "bbb", "thompson_samples": 1,
                                              "label": "ablation: one weight draw per decision "
                                                       "(textbook Thompson sampling), BBB's "
                                                       "tuned setting otherwise"}},
                "families": {"bbb": _bbb_family(paper_bbb, n, seed=3),
                             "plain": _lr_family(["greedy", "eps1", "eps5"], n)},
                "kl_levels": {"capacity": "KL / 4,096 (the buffer's size)",
                              "seen": "KL / max(4,096, tuples seen so far)"},
            },
            "showdown": {
                "buffer": "keep_all (every tuple, buffer_s = -1)", "schedule": show_schedule,
                "agents": ["bbb", "greedy", "neural_linear", "lin_full_post", "bootstrap",
                           "dropout", "uniform"],
                "main_thompson_samples": 1,
                "families": {"bbb": _bbb_family(show_bbb, n, seed=4),
                             "greedy": _lr_family(["greedy"], n),
                             "neural_linear": _lr_family(["neural_linear"], n),
                             "bootstrap": _lr_family(["bootstrap"], n),
                             "dropout": _lr_family(["dropout"], n)},
                "untuned": {"lin_full_post": {"a0": 6.0, "b0": 6.0, "lambda_prior": 0.25},
                            "uniform": {}},
                "agent_settings": {"bootstrap": {"heads": 5, "resample": "bernoulli",
                                                 "p": 0.95},
                                   "dropout": {"keep_prob": 0.8},
                                   "neural_linear": {"a0": 6.0, "b0": 6.0,
                                                     "lambda_prior": 0.25}},
                "kl_levels": {"filled": "KL / tuples stored (the Showdown's data.num_points())",
                              "filled_floor4096": "KL / max(4,096, tuples stored)"},
                "departures": [
                    "network 2 x 100 ReLU with the action as an input (the Showdown: one layer "
                    "of 50 units, one output per action)",
                    "Adam at the tuned learning rate (the Showdown: RMSProp, lr 0.1 with inverse "
                    "time decay, reset at each training; its BBB: Adam at 0.1)",
                    "BBB: one prior for every layer, tuned (the Showdown: N(0, 2 / fan_in)); "
                    "weights sampled per update (the Showdown: local reparameterisation, "
                    "analytic KL); biases Bayesian too (the Showdown: biases at their mean)",
                    "BBB and greedy rows act from step 1 (the Showdown: 2 round-robin pulls "
                    "per action first); the agents of helpers.bandit_agents keep them",
                    "bootstrap: 5 heads (the Showdown: q = 3), Bernoulli(0.95) inclusion",
                ],
            },
        },
        "tests": {
            "figure6": "per agent, median and inter-quartile band of cumulative regret over the "
                       "10 reported seeds on a log regret axis, the paper's curve beside it "
                       "(helpers.bandit.PAPER_FIGURE6), one panel per tier",
            "table": "final regret per agent: mean \u00b1 sd, median, 'lowest on k of 10' (k: "
                     "seeds on which the agent has the lowest final regret of its tier)",
            "comparisons": "BBB (main row) against each other agent of its tier: exact Wilcoxon "
                           "signed-rank test of the 10 paired final regrets "
                           "(helpers.stats.wilcoxon_exact); Holm within each tier "
                           "(paper: 3 + the ablation = 4 tests; showdown: 6 tests); effect: "
                           "median paired difference with a bootstrap 95 % interval over seeds "
                           "(10,000 resamples, seed 0) and the mean difference with a t interval",
            "words": "'BBB lower' / 'BBB higher' where Holm-adjusted p < 0.05 (the sign of the "
                     "median difference); else 'not resolved at 10 seeds'; the paper's claim "
                     "(paper tier) holds if BBB is lower than greedy, 1 % and 5 % greedy",
            "aim": "BBB (paper tier) <= 5,700 regret at 50k (the paper's Figure 6), read as the "
                   "median over the 10 seeds with its IQR",
        },
        "not_in_this_plan": ["plan v2 stays declared and never run "
                             "(results/03_contextual_bandit/plan_v2.json)"],
    }
    out["estimate"] = estimate(out)
    return out


# ---- jobs ------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One run of the campaign: a tier, a stage, an agent (its name in the plan), a seed, a number
    of steps and the agent's setting (a dict as JSON text, sorted)."""
    tier: str
    stage: str
    agent: str
    seed: int
    steps: int
    setting: str  # json.dumps(setting, sort_keys=True)

    @property
    def settings(self):
        return json.loads(self.setting)

    @property
    def run_id(self):
        h = hashlib.sha256(f"{self.agent}|{self.setting}".encode()).hexdigest()[:10]
        return f"{self.agent}_s{self.seed}_{self.steps}_{h}"

    @property
    def engine(self):
        return "batched" if self.agent in ("bbb", "bbb_one_draw") or self.agent in PLAIN_EPS \
            else "agent"


def _run(tier, stage, agent, seed, steps, setting):
    return Run(tier, stage, agent, int(seed), int(steps), json.dumps(setting, sort_keys=True))


def _tuned_agents(tier_plan):
    """Return {agent: (family name, family)} of a tier's tuned agents."""
    return {a: (name, fam) for name, fam in tier_plan["families"].items() for a in fam["agents"]}


def stage_runs(pl, stage, choice=None):
    """Return every Run of ``stage`` ('screen', 'confirm', 'reported') of plan ``pl``.

    ``choice`` (``choose``'s answer) is needed for 'confirm' (the screen's ``top``) and
    'reported' (the ``chosen`` settings)."""
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
    seeds = pl["seeds"]
    runs = []
    for tier in TIERS:
        tp = pl["tiers"][tier]
        tuned = _tuned_agents(tp)
        if stage == "screen":
            for agent, (_, fam) in tuned.items():
                for s in fam["settings"]:
                    runs += [_run(tier, stage, agent, sd, pl["screen_steps"], s)
                             for sd in seeds["screen"]]
        elif stage == "confirm":
            if choice is None:
                raise ValueError("the confirm stage needs choose(plan, records, 'screen')")
            for agent in tuned:
                for s in choice[tier][agent]["top"]:
                    runs += [_run(tier, stage, agent, sd, pl["steps"], s)
                             for sd in seeds["confirm"]]
        else:
            if choice is None:
                raise ValueError("the reported stage needs choose(plan, records, 'confirm')")
            for agent in tp["agents"]:
                s = choice[tier][agent]["chosen"] if agent in tuned else \
                    tp.get("untuned", {}).get(agent, {})
                runs += [_run(tier, stage, agent, sd, pl["steps"], s) for sd in seeds["reported"]]
            for name, abl in tp.get("ablation", {}).items():
                s = {**choice[tier][abl["of"]]["chosen"],
                     "thompson_samples": abl["thompson_samples"]}
                runs += [_run(tier, stage, name, sd, pl["steps"], s) for sd in seeds["reported"]]
    return runs


def row_spec(pl, run):
    """Return the helpers.bandit_batch RowSpec of a batched run."""
    tier, s = run.tier, dict(run.settings)
    buffer = {"buffer": B.buffer_settings("paper", run.steps)["buffer"]} if tier == "paper" \
        else {"buffer": max(run.steps, pl["tiers"]["showdown"]["schedule"]["batch"])}
    if run.agent in ("bbb", "bbb_one_draw"):
        kl = s.pop("kl", "capacity" if tier == "paper" else "filled")
        kl_fields = {"capacity": {"kl_count": "capacity", "kl_floor": 0},
                     "seen": {"kl_count": "seen", "kl_floor": 0},
                     "filled": {"kl_count": "filled", "kl_floor": 0},
                     "filled_floor4096": {"kl_count": "filled", "kl_floor": 4096}}[kl]
        prior = s.pop("prior")
        prior = tuple(prior) if isinstance(prior, list) else prior
        samples = s.pop("thompson_samples", pl["tiers"][tier]["main_thompson_samples"])
        return BB.RowSpec(seed=run.seed, bayesian=True, prior=prior, thompson_samples=samples,
                          name=run.agent, **buffer, **kl_fields, **s)
    if run.agent in PLAIN_EPS:
        return BB.RowSpec(seed=run.seed, epsilon=PLAIN_EPS[run.agent], name=run.agent, **buffer,
                          **s)
    raise ValueError(f"{run.agent} is not a batched agent")


def batch_config(pl, run):
    """Return the BatchConfig of a batched run (the Showdown tier: its training minibatch)."""
    sch = pl["tiers"][run.tier]["schedule"]
    U = sch["updates_per_step"] if sch["kind"] == "every_step" else sch["train_steps"]
    return BB.BatchConfig(steps=run.steps, hidden=pl["network"]["hidden"], updates_per_step=U,
                          batch=sch["batch"], record_every=pl["record_every"])


def jobs(pl, stage, choice=None):
    """Return the jobs of ``stage``: a list of dicts {tier, engine, runs}, each a batch of batched
    runs sharing one BatchConfig (at most ``max_rows`` rows) or one agent run."""
    max_rows = _profile_numbers(pl["profile"])["max_rows"]
    groups, out = {}, []
    for run in stage_runs(pl, stage, choice):
        if run.engine == "agent":
            out.append({"tier": run.tier, "engine": "agent", "runs": [run]})
        else:
            groups.setdefault((run.tier, batch_config(pl, run)), []).append(run)
    batched = []
    for (tier, _), runs in groups.items():
        for i in range(0, len(runs), max_rows):
            batched.append({"tier": tier, "engine": "batched", "runs": runs[i:i + max_rows]})
    return batched + out


# ---- the choice (tuning seeds only) ------------------------------------------------


def _final(rec):
    return float(rec["final_regret"])


def choose(pl, records, stage):
    """Return {tier: {agent: {...}}} from the records of ``stage`` ('screen' or 'confirm').

    Only records of that stage whose seed is a tuning seed of that stage (the plan's ``screen`` or
    ``confirm`` seeds) are read; every other record is ignored. 'screen' gives each tuned agent's
    ``top`` settings (lowest mean final regret over the screen seeds, the plan's order breaking
    ties); 'confirm' adds ``chosen``: the confirmed setting of lowest mean final regret over the
    confirm seeds (ties: the better screen rank). A setting with a seed missing is an error."""
    if stage not in ("screen", "confirm"):
        raise ValueError("choose reads the 'screen' or the 'confirm' stage")
    seeds = set(pl["seeds"][stage])
    keep = [r for r in records if r["stage"] == stage and int(r["seed"]) in seeds]
    out = {}
    for tier in TIERS:
        tp = pl["tiers"][tier]
        out[tier] = {}
        for agent, (_, fam) in _tuned_agents(tp).items():
            order = [json.dumps(s, sort_keys=True) for s in fam["settings"]]
            if stage == "confirm":
                order = [json.dumps(s, sort_keys=True)
                         for s in choose(pl, records, "screen")[tier][agent]["top"]]
            scores = {}
            for key in order:
                vals = [_final(r) for r in keep if r["tier"] == tier and r["agent"] == agent
                        and json.dumps(r["setting"], sort_keys=True) == key]
                got = sorted(int(r["seed"]) for r in keep if r["tier"] == tier
                             and r["agent"] == agent
                             and json.dumps(r["setting"], sort_keys=True) == key)
                if got != sorted(seeds):
                    raise ValueError(f"{tier}/{agent} setting {key}: {stage} records of seeds "
                                     f"{got}, need {sorted(seeds)}")
                scores[key] = sum(vals) / len(vals)
            ranked = sorted(order, key=lambda k: (scores[k], order.index(k)))
            entry = {"scores": {k: scores[k] for k in order}}
            if stage == "screen":
                entry["top"] = [json.loads(k) for k in ranked[:pl["tuning"]["confirmed"]]]
            else:
                entry["top"] = [json.loads(k) for k in order]
                entry["chosen"] = json.loads(ranked[0])
                entry["at_edge"] = _at_edge(fam, entry["chosen"])
            out[tier][agent] = entry
    return out


def _at_edge(fam, setting):
    """Return the factors whose chosen value is the first or last of its grid (numeric grids)."""
    edges = []
    for k, vals in fam["space"].items():
        nums = [v for v in vals if isinstance(v, (int, float))]
        if len(nums) > 2 and setting.get(k) in (min(nums), max(nums)):
            edges.append(k)
    return edges


# ---- engines ------------------------------------------------


class ScheduledRuns(BB.BatchedRuns):
    """BatchedRuns on the Showdown's schedule: after the tuple of step t (1-based) is stored, the
    rows train ``cfg.updates_per_step`` minibatches of ``cfg.batch`` tuples if t is a multiple of
    ``train_every``, none otherwise. Adam's step counts the updates made (1, 2, ...)."""

    def __init__(self, rows, cfg, features, poisonous, train_every):
        super().__init__(rows, cfg, features, poisonous)
        self.full_cfg, self.every = cfg, int(train_every)
        self.idle_cfg = replace(cfg, updates_per_step=0)

    def _update(self, codes, rewards, seeds, step):
        U = self.full_cfg.updates_per_step
        t = (step - 1) // U                      # the 0-based step being trained after
        done = (t + 1) // self.every - 1         # trainings before this one
        return super()._update(codes, rewards, seeds, done * U + (step - 1) % U + 1)

    def advance(self, until, on_step=None):
        while self.t < until:
            nxt = min(until, (self.t // self.every + 1) * self.every)  # next training step
            if nxt - 1 > self.t:  # steps without training first
                self.cfg = self.idle_cfg
                super().advance(nxt - 1, on_step)
            if nxt % self.every == 0:
                self.cfg = self.full_cfg
                super().advance(nxt, on_step)
            else:
                self.cfg = self.idle_cfg
                super().advance(nxt, on_step)
        self.cfg = self.full_cfg


def run_scheduled(rows, cfg, features, poisonous, train_every):
    """Run ``rows`` on the Showdown's schedule (no checkpoints: such runs are cheap); return
    BatchedRuns.results()."""
    engine = ScheduledRuns(rows, cfg, features, poisonous, train_every)
    engine.advance(cfg.steps)
    return engine.results()


def run_agent(name, seed, steps, features, poisonous, *, hidden, train_every, train_steps,
              batch, record_every, settings=None):
    """Play ``steps`` steps of the mushroom bandit with helpers.bandit_agents' agent ``name`` on
    the Showdown's schedule: every tuple kept, ``train_steps`` minibatches of ``batch`` tuples
    every ``train_every`` steps (and NeuralLinear's features of every stored tuple recomputed
    after each training, its regression updated every step). Returns a record dict."""
    X = features.to(torch.float32)
    pois = poisonous.to(torch.bool)
    settings = dict(settings or {})
    shared = {"hidden": hidden, "buffer": steps, "batch": batch, "updates_per_step": 0}
    if name == "neural_linear":
        settings["refresh_every"] = steps + 1  # refreshed here, after each training
    agent = BA.make_agent(name, X.shape[1], 2, shared=shared, seed=int(seed), **settings)
    ctx, coin = B.mushroom_stream(len(X), steps, seed)
    regret = {e: {q: float(B.regret_of(torch.tensor(bool(e)), torch.tensor(bool(q))))
                  for q in (0, 1)} for e in (0, 1)}
    n_rec = steps // record_every
    cum_rec, pr_rec = [0.0] * n_rec, [0.0] * n_rec
    cum = eaten = seen = 0.0
    c0 = time.process_time()
    for t in range(steps):
        i = int(ctx[t])
        x, is_poison = X[i], bool(pois[i])
        eat = agent.act(x) == B.EAT
        reward = (B.REWARD_POISON_BAD if is_poison and float(coin[t]) < 0.5
                  else B.REWARD_EDIBLE) if eat else 0.0
        cum += regret[int(eat)][int(is_poison)]
        eaten += eat and is_poison
        seen += is_poison
        agent.update(x, B.EAT if eat else B.PASS, reward)
        if (t + 1) % train_every == 0 and hasattr(agent, "train"):
            agent.updates_per_step = train_steps
            agent.train()
            agent.updates_per_step = 0
            if hasattr(agent, "refresh") and name == "neural_linear":
                agent.refresh()
        if (t + 1) % record_every == 0:
            r = (t + 1) // record_every - 1
            cum_rec[r], pr_rec[r] = cum, eaten / max(seen, 1.0)
            eaten = seen = 0.0
    return {"cum_regret": cum_rec, "poison_rate": pr_rec, "mean_sigma": None,
            "sigma_layers": None, "cpu_s": time.process_time() - c0,
            "n_updates": getattr(agent, "n_updates", 0)}


# ---- records and the stage runner ------------------------------------------------


def records_dir(pl, out_dir=None):
    """Return the folder of the plan's per-run records: ``out_dir`` if given, else
    ``results_dir()/<notebook>/plan_v3_runs``; only the default profile may write under the
    project's results/."""
    root = Path(out_dir) if out_dir is not None else results_dir() / B.NB / "plan_v3_runs"
    committed = (PROJECT_ROOT / "results").resolve()
    if pl["profile"] != "default" and (root.resolve() == committed
                                       or committed in root.resolve().parents):
        raise ValueError(f"profile {pl['profile']!r} may not write under {committed}: use "
                         "BBB_RESULTS_DIR / BBB_OUTPUT_DIR or out_dir")
    return root


def record_path(pl, run, out_dir=None):
    return records_dir(pl, out_dir) / run.tier / run.stage / f"{run.run_id}.json"


def load_records(pl, out_dir=None):
    """Return every record under the plan's records folder."""
    root = records_dir(pl, out_dir)
    return [json.loads(p.read_text()) for p in sorted(root.glob("*/*/*.json"))]


def _write_record(pl, run, res, out_dir, extra):
    rec = {"plan_version": VERSION, "profile": pl["profile"], "tier": run.tier,
           "stage": run.stage, "agent": run.agent, "seed": run.seed, "steps": run.steps,
           "setting": run.settings, "run_id": run.run_id,
           "record_every": pl["record_every"],
           "final_regret": float(res["cum_regret"][-1]),
           "cum_regret": [float(v) for v in res["cum_regret"]],
           "poison_rate": [float(v) for v in res["poison_rate"]],
           "mean_sigma": res.get("mean_sigma"), "sigma_layers": res.get("sigma_layers"),
           "cpu_s": round(float(res["cpu_s"]), 3), **extra}
    atomic_write_bytes(record_path(pl, run, out_dir), json.dumps(rec).encode())
    return rec


def run_stage(pl, stage, features, poisonous, choice=None, out_dir=None, part=(0, 1),
              checkpoint_dir=None):
    """Run the jobs of ``stage`` numbered ``part[0]`` modulo ``part[1]`` (two processes: (0, 2)
    and (1, 2)), skipping every run whose record exists; return {ran, skipped} (run counts).
    One thread (the setting bandit_batch's bit-for-bit tests hold at)."""
    with one_thread():
        return _run_stage(pl, stage, features, poisonous, choice, out_dir, part, checkpoint_dir)


def _run_stage(pl, stage, features, poisonous, choice, out_dir, part, checkpoint_dir):
    i_part, n_part = part
    ran = skipped = 0
    ck = Path(checkpoint_dir) if checkpoint_dir is not None else \
        checkpoints_dir() / B.NB / "plan_v3"
    for j, job in enumerate(jobs(pl, stage, choice)):
        if j % n_part != i_part:
            continue
        todo = [r for r in job["runs"] if not record_path(pl, r, out_dir).exists()]
        skipped += len(job["runs"]) - len(todo)
        if not todo:
            continue
        tier_plan = pl["tiers"][job["tier"]]
        sch = tier_plan["schedule"]
        if job["engine"] == "batched":
            rows = [row_spec(pl, r) for r in todo]
            cfg = batch_config(pl, todo[0])
            if sch["kind"] == "every_step":
                results = BB.run_rows(rows, cfg, features, poisonous,
                                      checkpoint_dir=ck / job["tier"])
            else:
                results = run_scheduled(rows, cfg, features, poisonous, sch["train_every"])
            for run, row, res in zip(todo, rows, results):
                _write_record(pl, run, res, out_dir, {"row": _jsonable_row(row),
                                                      "engine": "bandit_batch",
                                                      "schedule": sch})
        else:
            run = todo[0]
            settings = {**tier_plan.get("agent_settings", {}).get(run.agent, {}),
                        **run.settings}
            res = run_agent(run.agent, run.seed, run.steps, features, poisonous,
                            hidden=pl["network"]["hidden"], train_every=sch["train_every"],
                            train_steps=sch["train_steps"], batch=sch["batch"],
                            record_every=pl["record_every"], settings=settings)
            _write_record(pl, run, res, out_dir, {"engine": "bandit_agents", "schedule": sch,
                                                  "agent_settings": settings,
                                                  "n_updates": res["n_updates"]})
        ran += len(todo)
    return {"ran": ran, "skipped": skipped}


def _jsonable_row(row):
    d = asdict(row)
    d["prior"] = list(d["prior"]) if isinstance(d["prior"], tuple) else d["prior"]
    return d


# ---- the estimate ------------------------------------------------


def _run_cpu_s(pl, run, rates=RATES_US):
    """Estimated CPU seconds of one run from ``rates``."""
    kind = "bbb" if run.agent in ("bbb", "bbb_one_draw") else "plain"
    sch = pl["tiers"][run.tier]["schedule"]
    if run.engine == "agent":
        return rates["agent_run_s"][run.agent] * run.steps / 50_000
    if sch["kind"] == "every_step":  # the per-update rate is a whole step's cost / 64
        return run.steps * sch["updates_per_step"] * rates["update64"][kind] * 1e-6
    n_updates = run.steps // sch["train_every"] * sch["train_steps"]
    return (n_updates * rates["update512"][kind] + run.steps * rates["act_step"][kind]) * 1e-6


def estimate(pl, rates=RATES_US):
    """Return CPU-hours per tier and stage (confirm and reported counted with the numbers of runs
    they will have: any choice gives the same counts), and the total."""
    confirmed = pl["tuning"]["confirmed"]
    stand_in = {t: {a: {"top": fam["settings"][:confirmed], "chosen": fam["settings"][0]}
                    for a, (_, fam) in _tuned_agents(pl["tiers"][t]).items()} for t in TIERS}
    parts = {}
    for stage in STAGES:
        runs = stage_runs(pl, stage, None if stage == "screen" else stand_in)
        for tier in TIERS:
            by_agent = {}
            for r in (r for r in runs if r.tier == tier):
                n, h = by_agent.get(r.agent, (0, 0.0))
                by_agent[r.agent] = (n + 1, h + _run_cpu_s(pl, r, rates) / 3600)
            parts[f"{tier}/{stage}"] = {
                "runs": sum(n for n, _ in by_agent.values()),
                "cpu_h": round(sum(h for _, h in by_agent.values()), 2),
                "by_agent": {a: {"runs": n, "cpu_h": round(h, 2)}
                             for a, (n, h) in by_agent.items()}}
    total = round(sum(v["cpu_h"] for v in parts.values()), 2)
    tiers = {t: round(sum(v["cpu_h"] for k, v in parts.items() if k.startswith(t + "/")), 2)
             for t in TIERS}
    return {"parts": parts, "tiers_cpu_h": tiers, "total_cpu_h": total, "budget_cpu_h": 40,
            "rates_us": rates,
            "rates_from": "update64 / update512: bench_bandit_batch full run (loaded machine, "
                          "build/benchmarks/bandit_batch_loaded.json, 182.8 us per mixed "
                          "network-update) split by component with a tiny timing; agent_run_s and "
                          "act_step: measure_rates (tiny timings, scaled to 50k steps); see "
                          "build/bandit_plan_v3_notes.md",
            "wall_h_on_two_cores": round(total / 2, 1)}


def measure_rates(features, poisonous, steps=200, seed=100):
    """Time each engine briefly on the Showdown's schedule (``steps`` steps, default network);
    return CPU seconds per 50,000 steps by agent (acting grows with the keep-all buffer for
    NeuralLinear's refresh: an underestimate there)."""
    torch.set_num_threads(1)
    out = {}
    for name in ("neural_linear", "lin_full_post", "bootstrap", "dropout", "uniform"):
        pl = plan("default")
        sch = pl["tiers"]["showdown"]["schedule"]
        res = run_agent(name, seed, steps, features, poisonous, hidden=100,
                        train_every=sch["train_every"], train_steps=sch["train_steps"],
                        batch=sch["batch"], record_every=steps,
                        settings=pl["tiers"]["showdown"].get("agent_settings", {}).get(name))
        out[name] = res["cpu_s"] * 50_000 / steps
    return out


def write_draft(path, profile="default"):
    """Write the plan draft as JSON (indent 1); return the path."""
    return atomic_write_bytes(path, (json.dumps(plan(profile), indent=1) + "\n").encode())
