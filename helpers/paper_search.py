"""Table 1 under the paper's protocol, with what the paper leaves open searched (protocol v2).

Issue 33's runs (``helpers.paper_protocol``, version 1) fixed rho0 = -5 and one learning rate for
mu and rho; with plain SGD on the summed cost the posterior's widths then never move from their
start. Version 2 keeps everything the paper states (plain SGD on the summed cost, minibatches of
128, one weight sample, KL weight 1/M, a random start, 600 epochs, pixels / 126) and searches what
it leaves open: rho0, a learning rate for rho of its own, mu's initial range, the learning-rate
schedule, and the paper's prior grid, by successive halving on two tuning seeds (validation error
on 10k images: near-ties of 0.2-0.3 pp are within noise, so the recipe is a choice, not a finding).

The campaign, in jobs that several processes share (``helpers.campaign`` claims):

1. ``rung1``: each method's ``trials`` settings (a balanced design, ``design``) on the tuning
   seeds for ``rungs[0]`` epochs at a constant learning rate;
2. ``rung2``: the best ``keep[0]`` (mean validation error over the tuning seeds; for BBB the
   best trial of each value of rho's learning rate among them, ``STRATIFY``) continued from
   their checkpoints to ``rungs[1]`` epochs;
3. ``rung3``: the best ``keep[1]`` (chosen the same way) continued to ``rungs[2]`` epochs under each schedule of
   ``schedules`` (a step decay branches from the constant run's checkpoint: the two are the same
   run until the first milestone); the best (setting, schedule) is the method's recipe;
4. ``final``: each recipe from a random start on the reported seeds and widths, validation and
   test error after every epoch (the test numbers are drawn and reported, never used to choose);
5. ``ablation``: the scale mixture's recipe with one choice at a time set back to version 1's
   (rho0, rho's learning rate, schedule, learning rate, mu's start, prior) on the first reported
   seeds at the search width.

Every budget is the same for every method: the same trials, rungs and schedules. Records are
written atomically under ``results/01_mnist_classification/paper_protocol/v2``.
"""
import json
import math
import random
import statistics
import time
from dataclasses import asdict, dataclass, replace
from itertools import combinations
from pathlib import Path

from . import campaign
from .classification import METHODS, RunConfig, checkpoint_path
from .classification import run as run_config
from .profiles import PAPER_FIXED
from .train import branch_checkpoint
from .utils import atomic_write_bytes, machine_info, results_dir

NB = "01_mnist_classification"
FOLDER = "paper_protocol/v2"
COST_ORDER = ("bbb_mixture", "bbb_gaussian", "dropout", "sgd")  # the longest runs first
STAGES = ("rung1", "rung2", "rung3", "final", "ablation")
V1_CHOICES = dict(rho_init=-5.0, rho_lr_scale=1.0, lr_milestones=None, lr=1e-3, mu_init=None,
                  pi=0.75, neg_log_sigma1=2.0, neg_log_sigma2=8.0)  # issue 33's mixture recipe

# what the paper leaves open, per method (values in the order a table lists them)
BBB_LR = (1e-3, 10 ** -2.5)
SPACES = {
    "sgd": {"lr": tuple(round(10 ** (-4 + 0.2 * k), 10) for k in range(12))},
    "dropout": {"lr": (10 ** -3.5, 1e-3, 10 ** -2.5, 1e-2), "dropout": (0.2, 0.35, 0.5)},
    "bbb_gaussian": {"lr": BBB_LR, "prior_sigma": (1.0, math.exp(-1), math.exp(-2)),
                     "rho_init": (-5.0, -4.0, -3.0), "rho_lr_scale": (1.0, 30.0),
                     "mu_init": (None, 0.1)},
    "bbb_mixture": {"lr": BBB_LR, "pi": (0.25, 0.5, 0.75), "neg_log_sigma1": (0.0, 1.0, 2.0),
                    "neg_log_sigma2": (6.0, 7.0, 8.0), "rho_init": (-5.0, -4.0, -3.0),
                    "rho_lr_scale": (1.0, 30.0), "mu_init": (None, 0.1)},
}
SCHEDULES = {"constant": None, "step": (300,)}  # step: lr x 0.1 after epoch 300
# a factor whose effect shows late (rho's own learning rate: sigma moves slowly): at every rung
# the best trial of each of its values goes on, the other places go by score
STRATIFY = {"bbb_gaussian": "rho_lr_scale", "bbb_mixture": "rho_lr_scale"}
GAMMA = 0.1

PROFILES = {
    "smoke": dict(search_width=50, tuning_seeds=(100, 101), trials=4, rungs=(1, 2, 4),
                  keep=(2, 1), schedules={"constant": None, "step": (3,)}, widths=(50,),
                  seeds={50: (0,)}, final_epochs=4, ablation_seeds=(0,), n_train=2000,
                  n_eval=1000, eval_samples=2),
    "default": dict(search_width=400, tuning_seeds=(100, 101), trials=12, rungs=(60, 200, 600),
                    keep=(4, 2), schedules=SCHEDULES, widths=(400, 1200),
                    seeds={400: (0, 1, 2, 3, 4), 1200: (0, 1, 2, 3, 4)}, final_epochs=600,
                    ablation_seeds=(0, 1), n_train=None, n_eval=None, eval_samples=10),
}


def settings(profile="default"):
    """Return the campaign's declared settings for ``profile`` (a dict)."""
    if profile not in PROFILES:
        raise ValueError(f"protocol v2 has no profile {profile!r}; choose one of {sorted(PROFILES)}")
    return dict(PROFILES[profile], profile=profile)


def root():
    """Return the folder of the campaign's results (under ``results_dir()``)."""
    return results_dir() / NB / FOLDER


# --- the design: a balanced, nearly orthogonal set of trials ------------------------------------

MISSING_PAIR = 100.0  # the cost of a pair of values that no trial tries (where n allows all)


def imbalance(columns, n_levels):
    """Return how far the columns (lists of level indices) are from an orthogonal array: the sum
    over pairs of factors of the squared differences between each pair of levels' count and its
    expected count (0 when every pair of levels occurs equally often), plus ``MISSING_PAIR`` for
    every pair of values that no row holds although the rows are enough to hold them all."""
    n = len(next(iter(columns.values())))
    total = 0.0
    for a, b in combinations(columns, 2):
        expect = n / (n_levels[a] * n_levels[b])
        counts = {}
        for u, v in zip(columns[a], columns[b]):
            counts[(u, v)] = counts.get((u, v), 0) + 1
        total += sum((counts.get((i, j), 0) - expect) ** 2
                     for i in range(n_levels[a]) for j in range(n_levels[b]))
        if n >= n_levels[a] * n_levels[b]:
            total += MISSING_PAIR * (n_levels[a] * n_levels[b] - len(counts))
    return total


def balanced_design(space, n, seed=0, restarts=40, sweeps=60):
    """Return ``n`` trials (dicts) over ``space`` (name -> values): each value of each factor used
    equally often, every pair of values of two factors tried at least once where ``n`` allows it,
    the pairs of factors as close to orthogonal as a seeded local search finds (swaps within a
    column that lower ``imbalance``). Deterministic for a given seed."""
    keys = list(space)
    n_levels = {k: len(space[k]) for k in keys}
    bad = [k for k in keys if n % n_levels[k]]
    if bad:
        raise ValueError(f"{n} trials cannot use each value of {bad} equally often: choose a "
                         "multiple of every factor's number of values")
    rng = random.Random(seed)
    best, best_score = None, math.inf
    for _ in range(restarts):
        cols = {}
        for k in keys:
            col = [i % n_levels[k] for i in range(n)]
            rng.shuffle(col)
            cols[k] = col
        score = imbalance(cols, n_levels)
        for _ in range(sweeps):
            improved = False
            for k in keys[1:]:  # the first column fixes the order of the rows
                for i, j in combinations(range(n), 2):
                    if cols[k][i] == cols[k][j]:
                        continue
                    cols[k][i], cols[k][j] = cols[k][j], cols[k][i]
                    s = imbalance(cols, n_levels)
                    if s < score - 1e-12:
                        score, improved = s, True
                    else:
                        cols[k][i], cols[k][j] = cols[k][j], cols[k][i]
            if not improved:
                break
        if score < best_score:
            best, best_score = {k: list(v) for k, v in cols.items()}, score
        if best_score == 0:
            break
    order = sorted(range(n), key=lambda r: tuple(best[k][r] for k in keys))
    return [{k: space[k][best[k][r]] for k in keys} for r in order]


_DESIGNS = {}


def design(method, trials=12):
    """Return ``method``'s trials (the default profile's 12; fewer: the first ones)."""
    if method not in _DESIGNS:
        _DESIGNS[method] = _design(method)
    return [dict(p) for p in _DESIGNS[method][:trials]]


def _design(method):
    if method not in SPACES:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(SPACES)}")
    space = SPACES[method]
    if len(space) == 1:
        (k, values), = space.items()
        points = [{k: v} for v in values]
    elif len(space) == 2:
        a, b = space
        points = [{a: u, b: v} for u in space[a] for v in space[b]]
    else:
        points = balanced_design(space, 12, seed=0)
    if len(points) != 12:
        raise ValueError(f"{method}'s space gives {len(points)} trials, not 12")
    return points


# --- jobs ---------------------------------------------------------------------------------------

FIXED = dict(PAPER_FIXED)  # plain SGD, summed cost, batch 128, one sample, KL weight 1/M


def base_config(method, point, H, seed, epochs, schedule=None, s=None):
    """Return the RunConfig of ``point`` at width ``H`` under ``schedule`` (a name of
    ``s['schedules']``)."""
    fixed = dict(FIXED)
    fixed.update(point)
    if method in ("sgd", "dropout"):
        fixed.pop("mu_init", None)
    milestones = (s or settings())["schedules"][schedule] if schedule else None
    return RunConfig(method=method, H=H, epochs=epochs, seed=seed, lr_milestones=milestones,
                     lr_gamma=GAMMA, **fixed)


def read(path):
    path = Path(path)
    return json.loads(path.read_text()) if path.exists() else None


def record_path(cfg, stage):
    folder = {"final": "runs", "ablation": "ablations"}.get(stage, "search")
    return root() / folder / f"{cfg.name}.json"


@dataclass
class Job:
    stage: str
    cfg: RunConfig
    path: Path
    start_from: Path = None   # the checkpoint this run continues
    branch: tuple = None      # milestones: start_from is a constant run to branch to this schedule

    @property
    def name(self):
        return self.cfg.name


def score(records):
    """Return a trial's score: the mean validation error over its tuning seeds (inf when a run
    diverged)."""
    vals = [r["metrics"].get("val_error") for r in records]
    if any(v is None for v in vals):
        return math.inf
    return statistics.fmean(vals)


def _trial_key(t):
    return (t["score"], json.dumps(t["point"], sort_keys=True), t["schedule"] or "")


def select(trials, k, factor=None):
    """Return the ``k`` trials that go on, best first: with ``factor``, first the best trial of
    each of its values (so a late-acting value is judged at the next rung too), then the rest
    by score; without, the best ``k`` by score."""
    ranked = sorted(trials, key=_trial_key)
    if factor is None:
        return ranked[:k]
    keep = []
    for t in ranked:
        if all(t["point"].get(factor) != u["point"].get(factor) for u in keep):
            keep.append(t)
    keep = keep[:k]
    keep += [t for t in ranked if t not in keep][:k - len(keep)]
    return sorted(keep, key=_trial_key)


def search_state(s, method):
    """Return the search of ``method`` as far as it has gone: a dict with ``jobs`` (those not yet
    done whose inputs exist), ``todo`` (jobs still to run in all, ready or not), ``rungs`` (per
    rung: the trials with their point, schedule, records and score, best first) and ``recipe``
    (the chosen trial, or None while the search runs)."""
    H0, seeds, rungs, keep = s["search_width"], s["tuning_seeds"], s["rungs"], s["keep"]
    jobs, todo, table = [], 0, []

    def trial(point, epochs, schedule, start_epochs=None, stage="rung1"):
        nonlocal todo
        recs = []
        for seed in seeds:
            cfg = base_config(method, point, H0, seed, epochs, schedule, s)
            rec = read(record_path(cfg, stage))
            recs.append(rec)
            if rec is None:
                todo += 1
                start, branch = None, None
                if start_epochs is not None:
                    prev = base_config(method, point, H0, seed, start_epochs, None, s)
                    start = checkpoint_path(prev, NB)
                    branch = s["schedules"][schedule] if schedule else None
                jobs.append(Job(stage, cfg, record_path(cfg, stage), start, branch))
        done = all(r is not None for r in recs)
        return {"point": point, "schedule": schedule, "epochs": epochs, "records": recs,
                "score": score(recs) if done else None}

    r1 = [trial(p, rungs[0], None) for p in design(method, s["trials"])]
    table.append(r1)
    n_sched = len(s["schedules"])
    if any(t["score"] is None for t in r1):
        todo += len(seeds) * (keep[0] + keep[1] * n_sched)
        return dict(jobs=jobs, todo=todo, rungs=table, recipe=None)
    best = select(r1, keep[0], STRATIFY.get(method))
    r2 = [trial(t["point"], rungs[1], None, rungs[0], "rung2") for t in best]
    table.append(r2)
    if any(t["score"] is None for t in r2):
        todo += len(seeds) * keep[1] * n_sched
        return dict(jobs=jobs, todo=todo, rungs=table, recipe=None)
    best = select(r2, keep[1], STRATIFY.get(method))
    r3 = [trial(t["point"], rungs[2], sched, rungs[1], "rung3")
          for t in best for sched in s["schedules"]]
    table.append(r3)
    if any(t["score"] is None for t in r3):
        return dict(jobs=jobs, todo=todo, rungs=table, recipe=None)
    return dict(jobs=jobs, todo=todo, rungs=table, recipe=sorted(r3, key=_trial_key)[0])


def recipe_config(s, method, H, seed, epochs=None):
    """Return the RunConfig of ``method``'s chosen recipe at width ``H`` and ``seed`` (None while
    the search runs)."""
    rec = search_state(s, method)["recipe"]
    if rec is None:
        return None
    return base_config(method, rec["point"], H, seed, epochs or s["final_epochs"],
                       rec["schedule"], s)


def ablations(s):
    """Return the scale mixture's one-factor ablations: (label, RunConfig at seed 0) for each of
    version 1's choices that the recipe does not already make (empty while the search runs)."""
    base = recipe_config(s, "bbb_mixture", s["search_width"], 0)
    if base is None:
        return []
    out = []
    steps = [("rho0 -5 (version 1)", dict(rho_init=V1_CHOICES["rho_init"])),
             ("one learning rate for mu and rho (version 1)", dict(rho_lr_scale=1.0)),
             ("constant learning rate (version 1)", dict(lr_milestones=None)),
             ("learning rate 1e-3 (version 1)", dict(lr=V1_CHOICES["lr"])),
             ("mu drawn as nn.Linear draws weights (version 1)", dict(mu_init=None)),
             ("version 1's prior (pi 3/4, sigma1 e^-2, sigma2 e^-8)",
              dict(pi=V1_CHOICES["pi"], neg_log_sigma1=V1_CHOICES["neg_log_sigma1"],
                   neg_log_sigma2=V1_CHOICES["neg_log_sigma2"]))]
    for label, change in steps:
        cfg = replace(base, **change)
        if cfg != base:
            out.append((label, cfg))
    return out


def plan_jobs(s, methods=None):
    """Return (jobs ready now, jobs still to do in all): the searches, then each width's final
    runs (2x400 first), then the ablations, each stage's longest runs first."""
    methods = [m for m in COST_ORDER if methods is None or m in methods]
    ready, todo = [], 0
    recipes = {}
    for m in COST_ORDER:
        st = search_state(s, m)
        if m in methods:
            ready += st["jobs"]
        todo += st["todo"]
        recipes[m] = st["recipe"]
    n_final = sum(len(v) for v in s["seeds"].values())
    for m in COST_ORDER:
        if recipes[m] is None:
            todo += n_final
            continue
        for H in s["widths"]:
            for seed in s["seeds"][H]:
                cfg = recipe_config(s, m, H, seed)
                if read(record_path(cfg, "final")) is None:
                    todo += 1
                    if m in methods:
                        ready.append(Job("final", cfg, record_path(cfg, "final")))
    abl = ablations(s)
    if recipes["bbb_mixture"] is None:
        todo += 6 * len(s["ablation_seeds"])
    for _, cfg0 in abl:
        for seed in s["ablation_seeds"]:
            cfg = replace(cfg0, seed=seed)
            if read(record_path(cfg, "ablation")) is None:
                todo += 1
                if "bbb_mixture" in methods:
                    ready.append(Job("ablation", cfg, record_path(cfg, "ablation")))

    def order(j):
        stage = STAGES.index(j.stage)
        if j.stage == "ablation":  # after the search width's final runs, before the wider ones
            stage = STAGES.index("final") + 0.5
            return (stage, 0, j.cfg.seed, COST_ORDER.index(j.cfg.method))
        if j.stage == "final" and j.cfg.H != s["search_width"]:
            stage = STAGES.index("final") + 0.75
        return (stage, j.cfg.H, j.cfg.seed, COST_ORDER.index(j.cfg.method))
    ready.sort(key=order)
    return ready, todo


# --- running one job ----------------------------------------------------------------------------

def prepare(job):
    """Put the checkpoint a continued job starts from at its own checkpoint path (a copy, or a
    branch to a step schedule), unless it has one already."""
    if job.start_from is None:
        return
    dest = checkpoint_path(job.cfg, NB)
    if dest.exists():
        return
    src = Path(job.start_from)
    if not src.exists():
        raise FileNotFoundError(f"{src} is missing: the run {job.name} continues it. Its record "
                                "exists but its checkpoint does not (another machine trained it): "
                                "delete the earlier rung's records of this trial to rerun them")
    if job.branch:
        branch_checkpoint(src, dest, job.branch, GAMMA)
    else:
        from .train import load_checkpoint, save_checkpoint
        save_checkpoint(dest, **load_checkpoint(src))


def run_job(job, data, s):
    """Train ``job`` (resuming from its checkpoint) and write its record; return the record."""
    from .paper_protocol import record_segment
    prepare(job)
    segments = record_segment(job.cfg, data.x_train.device)
    t0 = time.perf_counter()
    test = job.stage in ("final", "ablation")
    try:
        model, rec = run_config(job.cfg, data, notebook=NB, eval_samples=s["eval_samples"],
                                test=test, checkpoint_every=1,
                                desc=f"{job.stage} {job.cfg.method} H={job.cfg.H}")
        if job.cfg.bayesian:  # where the posterior's widths ended (issue 33's never moved)
            from .posterior_checks import posterior_state
            rec["posterior"] = posterior_state(model)
    except FloatingPointError as err:  # a diverged trial is a result of the search
        rec = {"config": asdict(job.cfg), "name": job.name, "diverged": str(err),
               "metrics": {"val_error": None}, "history": []}
    rec.update(stage=job.stage, profile=s["profile"], protocol="paper v2",
               machine=machine_info(data.x_train.device), segments=segments,
               code=campaign.code_version(),
               created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               process_wall_s=round(time.perf_counter() - t0, 1))
    atomic_write_bytes(job.path, (json.dumps(rec, indent=1) + "\n").encode())
    return rec


def drive(data, s, log=print, poll_s=30.0, max_jobs=None, methods=None, stages=None,
          sleep=time.sleep):
    """Take and run ready jobs beside other processes until none is left; return how many this
    process ran. ``methods`` / ``stages``: take only those (which process runs a job changes no
    number: every run is seeded alone)."""
    if methods is not None:
        bad = sorted(set(methods) - set(METHODS))
        if bad:
            raise ValueError(f"unknown methods {bad}; choose among {list(METHODS)}")
    if stages is not None:
        bad = sorted(set(stages) - set(STAGES))
        if bad:
            raise ValueError(f"unknown stages {bad}; choose among {list(STAGES)}")
    campaign.code_version()  # read now: the records name the code this process loaded

    def ready():
        jobs = plan_jobs(s, methods)[0]
        return [j for j in jobs if stages is None or j.stage in stages]

    def run_one(job):
        log(f"{time.strftime('%H:%M:%S')} start {job.stage} {job.name}")
        rec = run_job(job, data, s)
        log(f"{time.strftime('%H:%M:%S')} done  {job.stage} {job.name}: val "
            f"{rec['metrics'].get('val_error')} ({rec['process_wall_s']} s)")

    return campaign.work(ready, run_one, f"{NB}/v2", name_fn=lambda j: j.name,
                         done_fn=lambda j: read(j.path) is not None,
                         watch_fn=lambda j: [checkpoint_path(j.cfg, NB)],
                         blocked_fn=lambda: plan_jobs(s, methods)[1] > 0,
                         max_jobs=max_jobs, poll_s=poll_s, sleep=sleep)


def progress(s):
    """Return one line per method: where its search stands, and its final runs."""
    lines = []
    for m in COST_ORDER:
        st = search_state(s, m)
        done = [sum(t["score"] is not None for t in rung) for rung in st["rungs"]]
        rec = st["recipe"]
        finals = [read(record_path(recipe_config(s, m, H, seed), "final")) is not None
                  for H in s["widths"] for seed in s["seeds"][H]] if rec else []
        lines.append(f"{m:13s} rungs done {done}; recipe "
                     f"{(rec['point'], rec['schedule']) if rec else '(search running)'}; "
                     f"final runs {sum(finals)}/{sum(len(v) for v in s['seeds'].values())}")
    return lines
