"""Running notebook 03's campaign plan v2 (``helpers.bandit_plan``): its jobs, one at a time.

A job is one setting of one family on some seeds at one stage:

- ``screen``: every declared setting of a family on the plan's screen seeds;
- ``confirm``: the family's ``CONTINUED`` best settings (mean final regret over the screen seeds;
  ties: the earlier setting) on the confirm seeds, once its screen is complete;
- ``reported``: once every family has chosen (lowest mean final regret over all tuning seeds),
  each reported seed: on the paper's buffer BBB and the three greedy agents, on the keep-all
  buffer BBB, greedy, the Showdown agents and uniform random, each with its family's choice.

BBB and the greedy agents run in ``helpers.bandit``'s stacked model, a job's seeds stacked in one
run that checkpoints every 1,000 steps (a killed job resumes); the Showdown agents run with
``helpers.bandit_agents.run_agents``, one job per seed (a killed job starts that seed again).
Every job writes its record under ``results/03_contextual_bandit/v2/`` (the folder the plan
governs) with the code version its process loaded and the machine. ``scale`` (tests, smoke)
shortens the horizon and the update budget; the default is the plan's.
"""
import json
import time
from dataclasses import dataclass

from . import bandit as B
from . import bandit_agents as BA
from . import bandit_plan as P
from .campaign import code_version
from .utils import atomic_write_bytes, checkpoints_dir, machine_info, results_dir

ROOT = "v2"


@dataclass(frozen=True)
class Job:
    stage: str            # screen, confirm, reported
    family: str           # a family of the plan, or for 'reported' the buffer
    index: int            # the setting's index in the family (reported: -1)
    seeds: tuple
    agent: str = ""       # reported jobs: the agent (group) it runs

    @property
    def name(self):
        seeds = "-".join(map(str, self.seeds))
        if self.stage == "reported":
            return f"reported_{self.family}_{self.agent}_s{seeds}"
        return f"{self.stage}_{self.family}_{self.index}_s{seeds}"


def record_path(job):
    sub = ("reported", job.family) if job.stage == "reported" else ("tuning", job.family)
    return results_dir() / B.NB / ROOT / sub[0] / sub[1] / f"{job.name}.json"


def read(job):
    path = record_path(job)
    return json.loads(path.read_text()) if path.exists() else None


def _stacked(family):
    return P.STACKED[family]


def _seed_groups(family, seeds):
    """One job for a stacked family's seeds, one job per seed otherwise."""
    return [tuple(seeds)] if _stacked(family) else [(s,) for s in seeds]


def _mean_final(records):
    """The tuning score of a family's records: the mean final regret over their seeds and over
    the family's agents (the greedy family's three agents share its learning rate)."""
    finals = [f for r in records for f in r["score_per_seed"]]
    return sum(finals) / len(finals)


def continued(family, plan):
    """Return the indices of the family's settings that go on to the confirm stage, or None
    while its screen is incomplete."""
    n = len(plan["tuning"]["families"][family]["settings"])
    screen = plan["tuning"]["screen_seeds"]
    means = []
    for i in range(n):
        recs = [read(Job("screen", family, i, g)) for g in _seed_groups(family, screen)]
        if any(r is None for r in recs):
            return None
        means.append((_mean_final(recs), i))
    return sorted(i for _, i in sorted(means)[:plan["tuning"]["continued"]])


def choice(family, plan):
    """Return (index, mean final regret over all tuning seeds) of the family's choice, or None
    while its confirm stage is incomplete."""
    keep = continued(family, plan)
    if keep is None:
        return None
    t = plan["tuning"]
    rows = []
    for i in keep:
        recs = [read(Job(st, family, i, g)) for st, seeds in (("screen", t["screen_seeds"]),
                                                           ("confirm", t["confirm_seeds"]))
                for g in _seed_groups(family, seeds)]
        if any(r is None for r in recs):
            return None
        rows.append((_mean_final(recs), i))
    best = min(rows)
    return best[1], best[0]


REPORTED_GROUPS = {"paper": {"bbb": "bbb_paper", "greedy": "greedy_paper"},
                   "keep_all": {"bbb": "bbb_keep_all", "greedy": "greedy_keep_all",
                                "neural_linear": "neural_linear", "lin_full_post": "lin_full_post",
                                "bootstrap": "bootstrap", "dropout": "dropout", "uniform": None}}


def jobs(plan):
    """Return (the jobs whose inputs exist and that have no record yet, the number of jobs still
    to do that are known now)."""
    t = plan["tuning"]
    ready = []
    for family, spec in t["families"].items():
        for i in range(len(spec["settings"])):
            ready += [Job("screen", family, i, g)
                      for g in _seed_groups(family, t["screen_seeds"])]
        keep = continued(family, plan)
        for i in keep or []:
            ready += [Job("confirm", family, i, g)
                      for g in _seed_groups(family, t["confirm_seeds"])]
    chosen = {f: choice(f, plan) for f in t["families"]}
    if all(c is not None for c in chosen.values()):
        for buffer, groups in REPORTED_GROUPS.items():
            for agent, family in groups.items():
                if family is not None and family not in t["families"]:
                    continue  # a plan without that family (a test's small plan)
                ready += [Job("reported", buffer, -1, (s,), agent)
                          for s in plan["reported"]["seeds"]]
    todo = [j for j in ready if read(j) is None]
    return todo, len(todo)


def _bbb_config(family, setting, seeds, steps, updates):
    spec = P.FAMILIES[family]
    if spec["buffer"] == "paper":
        recipe = "paper"
    else:
        recipe = "keep_all" if setting.get("kl_count", "filled") == "filled" else "keep_all_fixed_kl"
    agents = ((B.AgentSpec("bbb", bayesian=True),) if spec["agents"] == ["bbb"] else
              tuple(a for a in B.PAPER_AGENTS if a.name in spec["agents"]))
    prior = setting.get("prior", 0.05)
    kw = {k: setting[k] for k in ("rho_init", "lr", "noise_sigma", "thompson_samples")
          if k in setting}
    return B.BanditConfig(steps=steps, seeds=tuple(seeds), updates_per_step=updates,
                          record_every=min(100, steps),
                          prior=tuple(prior) if isinstance(prior, list) else prior,
                          agents=agents, **kw, **B.buffer_settings(recipe, steps))


def _play(family, setting, seeds, steps, updates, checkpoint):
    """Run ``setting`` of ``family`` on ``seeds``; return the per-agent result rows."""
    from .data import load_mushroom
    features, poisonous = load_mushroom()
    if family is not None and _stacked(family):
        cfg = _bbb_config(family, setting, seeds, steps, updates)
        res = B.run(cfg, features, poisonous, desc=family, checkpoint=checkpoint)
    else:  # one agent of helpers.bandit_agents (uniform random: family None), one seed
        name = setting["agent"] if family is None else P.FAMILIES[family]["agents"][0]
        buffer = "keep_all" if family is None else P.FAMILIES[family]["buffer"]
        cfg = BA.showdown_config(buffer, steps, seeds[0], updates, min(100, steps))
        res = BA.run_agents([name], cfg, features, poisonous,
                            agent_settings={name: {k: v for k, v in setting.items()
                                                   if k != "agent"}}, desc=name)
    every = max(1, 1000 // res.record_every)
    out = {"names": list(res.names), "wall_s": round(res.wall_s, 1),
           "update_ms": round(res.update_ms, 4), "record_every": res.record_every,
           "final": {n: res.cum_regret[a, :, -1].tolist() for a, n in enumerate(res.names)},
           "cum_regret_every_1000": {n: [c[every - 1::every].tolist() for c in res.cum_regret[a]]
                                     for a, n in enumerate(res.names)},
           "poison_eaten": {n: res.poison_eaten[a, :, -1].tolist()
                            for a, n in enumerate(res.names)}}
    if res.mean_sigma.numel():
        out["mean_sigma"] = res.mean_sigma.tolist()
    return out


def run_job(job, plan, scale=None):
    """Run ``job`` and write its record; return the record."""
    scale = scale or {}
    steps = int(scale.get("steps", plan["steps"]))
    updates = int(scale.get("updates_per_step", plan["updates_per_step"]))
    t0 = time.perf_counter()
    ck = checkpoints_dir() / B.NB / ROOT / f"{job.name}_{steps}.pt"
    if job.stage == "reported":
        family = REPORTED_GROUPS[job.family][job.agent]
        if family is None:  # uniform random: nothing to tune
            setting, index = {"agent": "uniform"}, None
        else:
            index, _ = choice(family, plan)
            setting = plan["tuning"]["families"][family]["settings"][index]
        res = _play(family, setting, job.seeds, steps, updates, ck)
    else:
        family, index = job.family, job.index
        setting = plan["tuning"]["families"][family]["settings"][index]
        res = _play(family, setting, job.seeds, steps, updates, ck)
    main = res["names"][0]
    rec = {"plan_version": plan["version"], "stage": job.stage, "family": family,
           "agent": job.agent or None,
           "buffer": job.family if job.stage == "reported" else P.FAMILIES[family]["buffer"],
           "setting_index": index, "setting": setting, "seeds": list(job.seeds),
           "steps": steps, "updates_per_step": updates,
           "final_per_seed": res["final"][main],
           "score_per_seed": [sum(v) / len(v) for v in zip(*res["final"].values())],
           **res,
           "machine": machine_info("cpu"), "code": code_version(), "scale": scale or None,
           "process_wall_s": round(time.perf_counter() - t0, 1),
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    atomic_write_bytes(record_path(job), (json.dumps(rec, indent=1) + "\n").encode())
    return rec
