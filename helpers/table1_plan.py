"""Table 1 under analysis plan v1: equal searches at every width, the chosen recipes on the
reported seeds, the controls, and the plan's tests (``make table1 PROTOCOL=plan_v1``).

Everything the campaign does is read from results/01_mnist_classification/analysis_plan.json
(``load_plan`` refuses a missing or invalid plan, and, for the default profile, one that is not
committed as it stands or that comes after a file it governs; ``settings`` reads it): methods,
widths, reported and tuning seeds, each width's budget (trials, max_epochs, epoch_step), the
spaces and fixed settings, the warm start (init_epochs, its SGD source, its epochs inside the
budget), the predictor's weight samples, alpha, the Holm family, the comparability pair and
margin, the control rows and tests, the MC-noise redraws and the verdict words. The smoke profile
shrinks it (``helpers.profiles.PLAN_V1_SMOKE``) and writes under build/smoke/.

A campaign is a list of *jobs*, one training run each, that processes claim (the claims of
``helpers.campaign``), so that two processes share it; every run checkpoints after every
epoch (atomically, under <checkpoints>/01_mnist_classification/plan_v1/) and resumes from there,
and a finished job's record, written atomically, is never trained again:

- ``search``: at every width, each method's full grid on the tuning seed, every trial to its last
  epoch (no ASHA), run by the sweep engine (``helpers.sweep.run_local_trial`` with
  ``helpers.classification_trial.TRIAL``: it never sees a test image); each trial's row goes to
  plan_v1/search/h<H>/<method>/<name>.json. A warm-started trial trains init_epochs fewer epochs
  (its source's count inside the budget) and waits for the SGD search at its width and then for
  the ``source`` job (the chosen SGD recipe for init_epochs on the tuning seed). A finished search
  is plan_v1/search/h<H>/<method>.json: its rows and ``helpers.sweep.choose``'s choice.
- ``final``: each method's chosen recipe on each reported seed (plan_v1/runs/h<H>/<row>/), its
  test error computed once, after the choice; where the chosen scale-mixture recipe is
  warm-started, the controls: the warm-start source network (``warm_start_source``), that network
  trained on for as many epochs as BBB with BBB's restarted learning-rate schedule
  (``sgd_continued``), and BBB from a random start for init_epochs + its epochs
  (``bbb_random_start``). BBB runs whose averaged predictor was chosen are tested again with
  further evaluation seeds (MC noise).
- ``write_summary``: plan_v1/summary.json, the rows with every seed's value, the plan's tests
  (``helpers.stats``) and their verdict words, on a width only once all of its runs are done, the
  input files with their SHA-256 and the machines of the runs.
"""
import hashlib
import json
import math
import re
import statistics
import subprocess
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from . import analysis_plan as AP
from . import stats
from .classification import (METHOD_COLORS, METHOD_LABELS, PAPER_TABLE1, RunConfig,
                             checkpoint_path, load_model, run)
from .classification_trial import TRIAL, trial_checkpoint
from .metrics import error_rate, predict
from . import campaign
from .campaign import code_version
from .sweep import choose, expand, run_local_trial
from .train import load_checkpoint
from .utils import PROJECT_ROOT, atomic_write_bytes, machine_info, results_dir

NB = "01_mnist_classification"
FOLDER = "plan_v1"
NS = f"{NB}/{FOLDER}"  # the campaign's checkpoints: <checkpoints>/01_mnist_classification/plan_v1/
CONTINUED_NS = f"{NS}/sgd_continued"  # SGD trained on from a source: same names, other networks
GOVERNS = f"results/{NB}/{FOLDER}/**"
PROFILES = ("default", "smoke")
STAGES = ("source", "search", "final")
ORDER = ("sgd", "bbb_mixture", "bbb_gaussian", "dropout")  # SGD first: warm starts wait for it
CONTROL_LABELS = {"warm_start_source": "SGD, the warm start's source network (control)",
                  "sgd_continued": "SGD trained on for BBB's epochs (control)",
                  "bbb_random_start": "BBB, scale mixture, random start (control)"}
FIXED_KEYS = {"optimizer", "lr_bbb", "batch_size", "rho_init", "kl_weighting", "mixture_sigmas",
              "lr_decay_bbb_mixture", "uniform_start"}


class PlanError(ValueError):
    """The plan is missing, invalid, not committed as it stands, or says what this driver does
    not implement: the campaign does not run."""


# ---- the plan ------------------------------------------------------------------------------

def _git(*args):
    return subprocess.run(["git", "-C", str(PROJECT_ROOT), *args], capture_output=True, text=True)


def load_plan(path=None, committed=False):
    """Return the plan at ``path`` (default: the committed one), or raise PlanError saying why
    the campaign cannot run under it: no file, not JSON, a breach of ``analysis_plan.validate``,
    a plan that does not govern plan_v1/, and with ``committed`` (the default profile) a plan
    that differs from its committed version or comes after a file it governs."""
    path = Path(path) if path else AP.plan_path()
    if not path.exists():
        raise PlanError(f"no analysis plan at {path}: plan v1's campaign runs only under its "
                        f"committed plan ({AP.PLAN}; `git checkout -- {AP.PLAN}` restores it)")
    try:
        plan = AP.load(path)
    except json.JSONDecodeError as err:
        raise PlanError(f"{path} is not JSON ({err}): the campaign does not run") from err
    except ValueError as err:
        raise PlanError(f"refusing to run: {err}") from err
    if GOVERNS not in plan["governs"]:
        raise PlanError(f"{path} does not govern {GOVERNS}, where this campaign writes")
    if committed and _git("rev-parse", "--git-dir").returncode == 0:
        rel = str(path.resolve().relative_to(PROJECT_ROOT.resolve()))
        if _git("ls-files", "--error-unmatch", rel).returncode:
            raise PlanError(f"{rel} is not committed: commit the plan before its results")
        if _git("status", "--porcelain", "--", rel).stdout.strip():
            raise PlanError(f"{rel} differs from its committed version: the plan does not change "
                            "once its results exist (a change is a new version, committed first)")
        bad = AP.plan_precedes(PROJECT_ROOT)
        if bad:
            raise PlanError("the plan does not come before its results:\n- " + "\n- ".join(bad))
    return plan


def _match(pattern, text, what):
    m = re.search(pattern, text)
    if m is None:
        raise PlanError(f"the plan's {what} ({text!r}) is not in the form this driver reads "
                        f"({pattern!r})")
    return m.groups()


def _base_settings(fixed):
    """Return each method's fixed RunConfig settings from the plan's ``search.fixed``."""
    unknown = sorted(set(fixed) - FIXED_KEYS)
    if unknown:
        raise PlanError(f"search.fixed has settings this driver does not apply: {unknown}")
    s1, s2 = _match(r"-log sigma1 = ([\d.]+), -log sigma2 = ([\d.]+)", fixed["mixture_sigmas"],
                    "search.fixed.mixture_sigmas")
    common = dict(optimizer=fixed["optimizer"], batch_size=fixed["batch_size"])
    bbb = dict(common, lr=fixed["lr_bbb"], rho_init=fixed["rho_init"],
               kl_weighting=fixed["kl_weighting"])
    return {"sgd": dict(common, method="sgd"), "dropout": dict(common, method="dropout"),
            "bbb_gaussian": dict(bbb, method="bbb_gaussian"),
            "bbb_mixture": dict(bbb, method="bbb_mixture", lr_decay=fixed["lr_decay_bbb_mixture"],
                                neg_log_sigma1=float(s1), neg_log_sigma2=float(s2))}


def settings(plan, profile="default"):
    """Return the campaign's settings (a dict), every one read from ``plan``; ``profile``
    'smoke' shrinks them (``helpers.profiles.PLAN_V1_SMOKE``)."""
    if profile not in PROFILES:
        raise ValueError(f"plan v1 has no profile {profile!r}; choose one of {PROFILES}")
    net = plan["cells"]["network"]
    for need in ("784-H-H-10", "50,000 training images", "the last 10,000 training images",
                 "pixels / 126"):
        if need not in net:
            raise PlanError(f"cells.network says {net!r}; this driver trains '{need}'")
    search, tests = plan["search"], plan["tests"]
    if search["early_stopping"].get("asha") is not False:
        raise PlanError("search.early_stopping: this driver runs every trial to max_epochs "
                        "(no ASHA)")
    warm = search["warm_start"]
    _match(r"(SGD) recipe chosen by the SGD search at the same width.*(same seed)",
           warm["source"], "search.warm_start.source")
    _match(r"(init_epochs) \+ its own epochs <= (max_epochs)", warm["counts_in_budget"],
           "search.warm_start.counts_in_budget")
    lo, hi = _match(r"mu ~ U\(-([\d.]+), ([\d.]+)\)", search["fixed"]["uniform_start"],
                    "search.fixed.uniform_start")
    if lo != hi:
        raise PlanError(f"search.fixed.uniform_start is not symmetric: {lo}, {hi}")
    base = _base_settings(search["fixed"])
    methods = list(plan["cells"]["methods"])
    spaces = {m: {k: list(v) for k, v in search["spaces"][m].items()} for m in methods}
    for m, declared in spaces.items():
        clash = sorted(set(declared) & set(base[m]))
        unknown = sorted(set(declared) - set(RunConfig.__dataclass_fields__) - {"start"})
        starts = set(declared.get("start", [])) - {"uniform", "warm"}
        if clash or unknown or starts:
            raise PlanError(f"search.spaces.{m}: {clash or unknown or sorted(starts)} cannot be "
                            "searched here (fixed already, not a RunConfig setting, or an "
                            "unknown start)")
    (samples,) = _match(r"average of the predictive distributions of (\d+) weight samples",
                        plan["predictor"], "predictor")
    n_redraws, offset = _match(r"with (\d+) further evaluation seeds \(seed \+ (\d+) \+ k",
                               plan["mc_noise"]["ensemble_redraws"], "mc_noise.ensemble_redraws")
    controls = plan["controls"]
    claims = re.findall(r"(\w+) < (\w+)", controls["tests"].split(":")[0])
    if not claims or len({a for a, _ in claims}) != 1 or \
            not {b for _, b in claims} <= set(controls["rows"]):
        raise PlanError(f"controls.tests ({controls['tests']!r}): expected 'method < row' claims "
                        f"on the rows {sorted(controls['rows'])}")
    comp = tests["comparability"]
    widths = list(plan["cells"]["widths"])
    s = {"profile": profile, "plan_version": plan["version"], "methods": methods,
         "widths": widths, "plan_width": {H: H for H in widths},
         "seeds": {H: list(plan["seeds"]["reported"][str(H)]) for H in widths},
         "tuning_seed": plan["seeds"]["tuning"],
         "budget": {H: {k: search["budget"][str(H)][k]
                        for k in ("trials", "max_epochs", "epoch_step")} for H in widths},
         "init_epochs": warm["init_epochs"], "warm_source": "sgd", "spaces": spaces,
         "base": base, "mu_uniform": float(hi), "eval_samples": int(samples),
         "redraws": (int(n_redraws), int(offset)), "n_train": None, "n_eval": None,
         "alpha": tests["alpha"], "lower_is_better": tests["cell_vs_paper"]["lower_is_better"],
         "family": [tuple(c.split(" < ")) for c in tests["orderings"]["family_per_width"]],
         "comparable": tuple(comp["pair"].split(" vs ")) + (comp["margin_pp"] / 100,),
         "control_method": claims[0][0], "control_claims": claims,
         "verdict_words": plan["verdict_words"], "rule": search["rule"]}
    if profile == "smoke":
        from .profiles import PLAN_V1_SMOKE
        s = _shrink(s, PLAN_V1_SMOKE)
    for H in s["widths"]:  # equal searches: every method's grid fills the budget exactly
        sizes = {m: len(expand(space(s, H, m), s["tuning_seed"], TRIAL)) for m in methods}
        if set(sizes.values()) != {s["budget"][H]["trials"]}:
            raise PlanError(f"searches at 2x{H}: {sizes} trials, the budget is "
                            f"{s['budget'][H]['trials']} for every method")
        if s["init_epochs"] >= s["budget"][H]["max_epochs"]:
            raise PlanError("init_epochs must leave epochs for the warm-started trials")
    return s


def _shrink(s, smoke):
    """Return the smoke version of settings ``s``: tiny widths standing for the plan's, few
    epochs, little data, the first seeds, the kept values of each space."""
    s = dict(s)
    mapping = {int(H): h for H, h in smoke["widths"].items()}
    s["widths"] = [mapping[H] for H in s["widths"] if H in mapping]
    s["plan_width"] = {h: H for H, h in mapping.items()}
    s["seeds"] = {h: s["seeds"][H][:smoke["n_seeds"]] for H, h in mapping.items()}
    spaces = {m: {d: [v[i] for i in smoke["keep"].get(m, {}).get(d, [0])] for d, v in sp.items()}
              for m, sp in s["spaces"].items()}
    s["spaces"] = spaces
    s["init_epochs"] = smoke["init_epochs"]
    s.update(n_train=smoke["n_train"], n_eval=smoke["n_eval"], eval_samples=smoke["eval_samples"])
    trials = math.prod(len(v) for v in next(iter(spaces.values())).values())
    s["budget"] = {h: {"trials": trials, "max_epochs": smoke["max_epochs"],
                       "epoch_step": smoke["epoch_step"]} for h in mapping.values()}
    return s


# ---- the searches --------------------------------------------------------------------------

def _start(s, H, start, sgd):
    """The settings of a start: 'uniform' (mu ~ U(-a, a)) or 'warm' (the means start at the
    chosen SGD recipe ``sgd`` trained for init_epochs; the trial keeps the rest of the budget)."""
    max_epochs = s["budget"][H]["max_epochs"]
    if start == "uniform":
        return {"mu_init": s["mu_uniform"], "init_from": None, "epochs": max_epochs}
    return {"mu_init": None, "init_from": s["warm_source"], "init_epochs": s["init_epochs"],
            "init_lr": None if sgd is None else sgd["lr"],
            "init_lr_decay": None if sgd is None else sgd["lr_decay"],
            "epochs": max_epochs - s["init_epochs"]}


def space(s, H, method, sgd=None, starts=("uniform", "warm")):
    """Return the declared space of ``method`` at width ``H`` for ``helpers.sweep.expand``
    (``sgd``: the chosen SGD configuration that warm starts begin from; ``starts``: the starts
    kept)."""
    grid = {}
    for dim, values in s["spaces"][method].items():
        grid[dim] = ([_start(s, H, v, sgd) for v in values if v in starts] if dim == "start"
                     else values)
    return {"base": {**s["base"][method], "H": H, "epochs": s["budget"][H]["max_epochs"]},
            "grid": grid}


def _warm(method, s):
    return "warm" in s["spaces"][method].get("start", [])


def search_configs(s, H, method):
    """Return (the search's configurations that can be made now, how many cannot yet: warm
    starts before the SGD search at ``H`` has chosen)."""
    if not _warm(method, s):
        return expand(space(s, H, method), s["tuning_seed"], TRIAL), 0
    sgd = chosen(s, H, s["warm_source"])
    if sgd is None:
        now = expand(space(s, H, method, starts=("uniform",)), s["tuning_seed"], TRIAL)
        total = len(expand(space(s, H, method), s["tuning_seed"], TRIAL))
        return now, total - len(now)
    return expand(space(s, H, method, sgd["config"]), s["tuning_seed"], TRIAL), 0


def root():
    """The campaign's results folder (under ``results_dir()``; governed by the plan)."""
    return results_dir() / NB / FOLDER


def trial_path(H, method, name):
    return root() / "search" / f"h{H}" / method / f"{name}.json"


def source_path(H, name):
    return root() / "search" / f"h{H}" / "source" / f"{name}.json"


def search_path(H, method):
    return root() / "search" / f"h{H}" / f"{method}.json"


def run_path(H, key, name):
    return root() / "runs" / f"h{H}" / key / f"{name}.json"


def read(path):
    path = Path(path)
    return json.loads(path.read_text()) if path.exists() else None


def search_rows(s, H, method):
    """Return the rows of a finished search (name order, as ``helpers.sweep.run_sweep`` sorts
    them), or None while a trial is to run."""
    configs, later = search_configs(s, H, method)
    if later:
        return None
    recs = [read(trial_path(H, method, TRIAL.name(c))) for c in configs]
    if any(r is None for r in recs):
        return None
    return sorted((r["row"] for r in recs), key=lambda t: t["name"])


def chosen(s, H, method):
    """Return ``helpers.sweep.choose`` of a finished search (None while it runs, or when no
    trial finished)."""
    rows = search_rows(s, H, method)
    return None if rows is None else choose(rows)


N_VAL = 10_000  # validation images: the last 10,000 training images (helpers.data.load_images)


def margin_words(s):
    """How far each search's choice is ahead of its best other trial, in validation images, beside
    the binomial standard deviation of one trial's count of errors at the chosen error rate
    (sqrt(N p (1 - p)), N = N_VAL), per width whose four searches are done. Read from the
    search records (validation numbers only)."""
    out = []
    for H in s["widths"]:
        rows = {m: search_rows(s, H, m) for m in s["methods"]}
        if any(r is None for r in rows.values()):
            continue
        gaps, sds = [], []
        for m, trials in rows.items():
            ch = choose(trials)
            if ch is None:
                continue
            rest = [t["val"] for t in trials if t["name"] != ch["name"] and t["val"] is not None]
            if not rest:
                continue
            gaps.append((m, round((min(rest) - ch["val"]) * N_VAL)))
            sds.append(math.sqrt(N_VAL * ch["val"] * (1 - ch["val"])))
        if gaps:
            sd = max(sds)
            out.append(f"at 2×{s['plan_width'][H]}, by " + ", ".join(
                f"{g} ({SHORT[m]})" for m, g in gaps) + f" images; one trial's count of errors "
                f"has a standard deviation of up to {sd:.0f} images "
                f"({sum(g < sd for _, g in gaps)} of {len(gaps)} leads smaller)")
    if not out:
        return ""
    text = "; ".join(out)
    return (f"**How far ahead the choices are.** Of the {N_VAL:,} validation images, each search's "
            "chosen trial made fewer mistakes than its best other trial " + text + ". Two "
            "trials scored on the same images differ with less noise than one count (their "
            "mistakes overlap, by an amount the records do not store), but a lead of a few "
            "images is not a resolved difference: the choice among near-equals is partly chance, "
            "and the chosen validation error, the best of many, is optimistic. The reported "
            "seeds' test errors carry no such selection.")


def search_edges(s, H, method, choice=None):
    """The chosen recipe's values that sit at an end of what the plan searched: every numeric
    dimension of the plan's space with three values or more, and the epochs (the epoch budget of
    the chosen trial: its last epoch is an edge; a warm-started trial's budget is its own
    epochs). Returns [{dim, value, end, values}] (``end``: 'smallest' / 'largest')."""
    choice = chosen(s, H, method) if choice is None else choice
    if choice is None:
        return []
    cfg = choice["config"]
    grid = {k: sorted({float(v) for v in vals if isinstance(v, (int, float))
                       and not isinstance(v, bool)})
            for k, vals in s["spaces"][method].items()}
    step = s["budget"][H]["epoch_step"]
    last = s["budget"][H]["max_epochs"] - (cfg["init_epochs"] if cfg.get("init_from") else 0)
    grid["epochs"] = [float(e) for e in range(step, last + 1, step)]
    chosen_values = {**{k: cfg.get(k) for k in grid}, "epochs": choice["epochs"]}
    out = []
    for dim, values in grid.items():
        v = chosen_values.get(dim)
        if len(values) < 3 or v is None:
            continue
        for end, label in ((values[0], "smallest"), (values[-1], "largest")):
            if math.isclose(float(v), end, rel_tol=1e-9):
                out.append({"dim": dim, "value": v, "end": label, "values": values})
    return out


def edge_words(edges):
    """'lr 0.001 (largest of 6)' for each edge, joined; '' for none."""
    names = {"lr": "lr", "prior_sigma": "prior σ", "pi": "π", "dropout": "dropout",
             "epochs": "epochs"}
    return ", ".join(f"{names.get(e['dim'], e['dim'])} {e['value']:g} ({e['end']} of "
                     f"{len(e['values'])})" for e in edges)


# ---- jobs ----------------------------------------------------------------------------------

@dataclass
class Job:
    stage: str  # 'source' (a search's warm-start network), 'search' (a trial) or 'final'
    key: str    # the method, or a control row
    H: int
    cfg: RunConfig
    path: Path
    namespace: str = NS
    source: RunConfig = None  # sgd_continued: the network it trains on
    trial: dict = None        # 'source': a warm-started trial configuration that starts from it

    @property
    def name(self):
        """The claim's name: one per checkpoint, so that two jobs of one network wait for each
        other (``helpers.campaign.claim``)."""
        folder = "sweep-" if self.stage in ("source", "search") else ""
        return f"{self.namespace.replace('/', '-')}-{folder}{self.cfg.name}"


def _claim_file(job):
    return campaign.claim_path(job.name, NB)


def claim(job):
    """Take ``job`` for this process (helpers.campaign); a claim from another host stays alive
    while the job's checkpoint changes."""
    ck = (trial_checkpoint(job.cfg, NS) if job.stage in ("source", "search")
          else checkpoint_path(job.cfg, job.namespace))
    return campaign.claim(_claim_file(job), watch=[ck])


def release(job):
    campaign.release(_claim_file(job))


def final_configs(s, H, method, choice):
    """Return the chosen recipe on each reported seed (RunConfigs)."""
    cfg = RunConfig.from_dict(choice["config"])
    return [replace(cfg, seed=seed) for seed in s["seeds"][H]]


def control_configs(s, bbb):
    """Return the control runs of a warm-started BBB run ``bbb`` (one seed): {row: (config,
    the network it continues or None)}."""
    src = bbb.init_source()
    cont = RunConfig(method=src.method, H=bbb.H, epochs=bbb.epochs, lr=bbb.lr,
                     lr_decay=bbb.lr_decay, optimizer=bbb.optimizer, batch_size=bbb.batch_size,
                     seed=bbb.seed)
    cold = replace(bbb, init_from=None, init_lr=None, init_lr_decay=None,
                   mu_init=s["mu_uniform"], epochs=bbb.init_epochs + bbb.epochs)
    return {"warm_start_source": (src, None), "sgd_continued": (cont, src),
            "bbb_random_start": (cold, None)}


def plan_jobs(s, widths=None):
    """Return (jobs ready to run, jobs still to do in all, blocked: [reasons]) for ``widths``
    (default: all). A job waits for what it starts from; a search whose every trial diverged
    blocks what depends on it."""
    ready, remaining, blocked = [], 0, []
    for H in widths or s["widths"]:
        choices = {}
        for method in s["methods"]:
            configs, later = search_configs(s, H, method)
            if later and search_rows(s, H, s["warm_source"]) is not None:
                blocked.append(f"2x{H} {method}: {later} warm-started trials need the "
                               f"{s['warm_source']} search's choice, and it chose nothing")
            elif later:
                remaining += later + len(s["seeds"][H])  # and its final runs, at least
            for c in configs:
                path = trial_path(H, method, TRIAL.name(c))
                if path.exists():
                    continue
                remaining += 1
                cfg = RunConfig.from_dict(c)
                src = cfg.init_source()
                if src is not None and not source_path(H, src.name).exists():
                    ready.append(Job("source", s["warm_source"], H, src, source_path(H, src.name),
                                     trial=c))
                    remaining += 1
                    continue
                ready.append(Job("search", method, H, cfg, path))
            if later:
                continue
            if any(not trial_path(H, method, TRIAL.name(c)).exists() for c in configs):
                remaining += len(s["seeds"][H])  # its final runs, at least
                continue
            choices[method] = chosen(s, H, method)
            if choices[method] is None:
                blocked.append(f"2x{H} {method}: every search trial diverged; no recipe")
        finals = {}
        for method, choice in choices.items():
            if choice is None:
                continue
            for cfg in final_configs(s, H, method, choice):
                finals[(method, cfg.seed)] = (cfg, None)
                if cfg.init_from is not None:
                    finals[("warm_start_source", cfg.seed)] = (cfg.init_source(), None)
                if method == s["control_method"] and cfg.init_from is not None:
                    for key, pair in control_configs(s, cfg).items():
                        finals[(key, cfg.seed)] = pair
        for (key, seed), (cfg, src) in finals.items():
            path = run_path(H, key, cfg.name)
            if path.exists():
                continue
            remaining += 1
            start = cfg.init_source() if cfg.init_from is not None else src
            if start is not None and not run_path(H, "warm_start_source", start.name).exists():
                continue  # waits for the network it starts from
            ready.append(Job("final", key, H, cfg, path,
                             CONTINUED_NS if key == "sgd_continued" else NS, source=src))
    seen, out = set(), []
    for j in ready:  # one job per record (a source several trials start from, listed once)
        if j.path not in seen:
            seen.add(j.path)
            out.append(j)
    rank = {m: i for i, m in enumerate(ORDER)}
    out.sort(key=lambda j: (j.H, STAGES.index(j.stage), j.cfg.seed,  # a width done first
                            rank.get(j.key, len(ORDER)), j.cfg.name))
    remaining -= len(ready) - len(out)
    return out, remaining, blocked


# ---- running one job -----------------------------------------------------------------------

def _epoch_of(checkpoint):
    """The epoch a run's checkpoint holds (0: none): where a restarted job resumes from."""
    return int(load_checkpoint(checkpoint)["epoch"]) if Path(checkpoint).exists() else 0


def trial_fixed(s, threads=1):
    """The sweep's fixed settings for the plan's trials (per-epoch checkpoints)."""
    return {"notebook": NS, "threads": threads, "n_train": s["n_train"], "n_eval": s["n_eval"],
            "eval_samples": s["eval_samples"], "metric": "val_error", "checkpoint_every": 1}


def _config_dict(cfg):
    return {k: v for k, v in asdict(cfg).items() if k != "tags"}


def _search_trial(job, s, fixed):
    resumed = _epoch_of(trial_checkpoint(job.cfg, NS))
    row = run_local_trial(TRIAL, _config_dict(job.cfg), fixed,
                          epoch_step=s["budget"][job.H]["epoch_step"], metric="val_error")
    if row["error"] is not None and "diverged" not in row["error"]:
        raise RuntimeError(f"search trial {job.cfg.name} failed: {row['error']} (its checkpoint "
                           "stays: run the driver again to resume it)")
    return {"kind": "search trial", "method": job.key, "name": row["name"], "row": row,
            "resumed_from_epoch": resumed, "selected_on": "validation", "test_evaluated": False}


def _search_source(job, s, fixed):
    ck = trial_checkpoint(job.cfg, NS)
    resumed = _epoch_of(ck)
    TRIAL.prepare([job.trial], fixed)
    hist = load_checkpoint(ck)["history"]
    return {"kind": "search warm-start source", "config": _config_dict(job.cfg),
            "name": job.cfg.name, "history": hist, "resumed_from_epoch": resumed,
            "metrics": {"val_error": hist[-1]["val_error"], "epochs": len(hist),
                        "train_wall_s": hist[-1]["wall_s"]},
            "selected_on": "validation", "test_evaluated": False}


def _redraws(model, data, cfg, metrics, s):
    """The plan's MC noise of an averaged predictor: its test error with further evaluation
    seeds (seed + offset + k); the reported number stays the first draw."""
    n, offset = s["redraws"]
    if metrics.get("predictor") != "ensemble":
        return {"test_error_ensemble_redraws": None,
                "redraws_note": "posterior-mean predictor: deterministic, no MC noise"}
    state = torch.get_rng_state()
    errs, seeds = [], [cfg.seed + offset + k for k in range(1, n + 1)]
    for seed in seeds:
        torch.manual_seed(seed)
        errs.append(error_rate(predict(model, data.x_test, n_samples=s["eval_samples"]).mean,
                               data.y_test))
    torch.set_rng_state(state)
    return {"test_error_ensemble_redraws": errs, "redraw_seeds": seeds}


def _final(job, s, data):
    resumed = _epoch_of(checkpoint_path(job.cfg, job.namespace))
    start = None if job.source is None else load_model(job.source, notebook=NS)
    try:
        model, rec = run(job.cfg, data, notebook=job.namespace, eval_samples=s["eval_samples"],
                         test=True, checkpoint_every=1, init_model=start,
                         desc=f"{job.key} 2x{job.H} seed {job.cfg.seed}")
    except FloatingPointError as err:  # a result, kept: the seed is not dropped, nor rerun
        return {"config": asdict(job.cfg), "name": job.cfg.name, "diverged": str(err),
                "metrics": {"test_error": None, "val_error": None, "predictor": None,
                            "train_wall_s": None}, "history": [], "resumed_from_epoch": resumed}
    if job.cfg.bayesian:
        rec["metrics"].update(_redraws(model, data, job.cfg, rec["metrics"], s))
    if job.source is not None:
        rec["continues"] = {"source": job.source.name, "source_epochs": job.source.epochs,
                            "schedule": f"{job.cfg.optimizer} at lr {job.cfg.lr:g} x "
                                        f"{job.cfg.lr_decay:g} per epoch, restarted where the "
                                        "warm-started BBB run restarts it",
                            "total_epochs": job.source.epochs + job.cfg.epochs}
    rec["resumed_from_epoch"] = resumed
    return rec


def _job_checkpoint(job):
    if job.stage in ("search", "source"):
        return trial_checkpoint(job.cfg, NS)
    return checkpoint_path(job.cfg, job.namespace)


def record_segment(job, code):
    """Append to the job's segment list (a file beside its checkpoint) the epoch it (re)starts
    from, the code and the machine that run it now; return the list. A run resumed after a
    restart (perhaps under newer code) keeps every part's commit; a fresh start drops the list."""
    ck = Path(_job_checkpoint(job))
    path = ck.with_name(ck.stem + ".segments.json")
    epoch = _epoch_of(ck)
    segs = json.loads(path.read_text()) if path.exists() and epoch else []
    if epoch and not segs:  # resumed from a checkpoint older than this list: its code unknown
        segs.append({"from_epoch": 0, "code": None, "machine": None, "started": None})
    segs.append({"from_epoch": epoch, "code": code, "machine": machine_info(),
                 "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(segs, indent=1) + "\n").encode())
    return segs


def run_job(job, s, data_fn, fixed, code):
    """Train ``job`` (resuming from its checkpoint) and write its record atomically; return
    the record. ``data_fn()``: the images with the test set (final runs only). The record's
    ``segments`` list each part of the run with the epoch it started from and its code."""
    t0 = time.perf_counter()
    segments = record_segment(job, code)
    if job.stage == "search":
        rec = _search_trial(job, s, fixed)
    elif job.stage == "source":
        rec = _search_source(job, s, fixed)
    else:
        rec = _final(job, s, data_fn())
    rec.update(stage=job.stage, key=job.key, H=job.H, plan_width=s["plan_width"][job.H],
               profile=s["profile"], plan_version=s["plan_version"],
               machine=machine_info(), code=code, segments=segments,
               created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               process_wall_s=round(time.perf_counter() - t0, 2))
    atomic_write_bytes(job.path, (json.dumps(rec, indent=1) + "\n").encode())
    if job.stage == "search":
        write_search(s, job.H, job.key)
    return rec


def write_search(s, H, method):
    """Write a finished search's record (its rows and the choice; the same bytes from the same
    rows, whichever process writes it); return it, or None while the search runs."""
    rows = search_rows(s, H, method)
    if rows is None:
        return None
    b = s["budget"][H]
    rec = {"method": method, "H": H, "plan_width": s["plan_width"][H], "profile": s["profile"],
           "plan_version": s["plan_version"], "seed": s["tuning_seed"],
           "budget": {**b, "asha": False, "trial_epochs_run": sum(t["epochs_run"] for t in rows),
                      "warm_start_epochs": s["init_epochs"] if _warm(method, s) else 0},
           "rule": s["rule"], "chosen_by": "helpers.sweep.choose", "selected_on": "validation",
           "test_evaluated": False, "trials": rows, "chosen": choose(rows)}
    path = search_path(H, method)
    data = (json.dumps(rec, indent=1) + "\n").encode()
    if not (path.exists() and path.read_bytes() == data):
        atomic_write_bytes(path, data)
    return rec


def drive(s, widths=None, log=print, poll_s=30.0, max_jobs=None, threads=1, trial_extra=None):
    """Take and run ready jobs until none is left (waiting while another process finishes what a
    job starts from); write summary.json when the whole campaign is done. Return the number of
    jobs this process ran. ``trial_extra``: settings added to every trial's (tests)."""
    from .data import load_mnist
    torch.set_num_threads(threads)
    loaded = {}

    def data_fn():
        if "data" not in loaded:
            loaded["data"] = load_mnist(scale="paper", n_train=s["n_train"], n_test=s["n_eval"])
        return loaded["data"]

    fixed = {**trial_fixed(s, threads), **(trial_extra or {})}
    code = code_version()
    ran = 0
    while max_jobs is None or ran < max_jobs:
        ready, remaining, blocked = plan_jobs(s, widths)
        if not ready:
            if remaining == 0:
                break
            time.sleep(poll_s)  # another process trains what the rest starts from
            continue
        took = next((j for j in ready if claim(j)), None)
        if took is None:
            time.sleep(poll_s)
            continue
        try:
            if not took.path.exists():  # another process may have finished it meanwhile
                log(f"{time.strftime('%H:%M:%S')} start {took.stage} {took.key} 2x{took.H} "
                    f"{took.cfg.name}")
                rec = run_job(took, s, data_fn, fixed, code)
                log(f"{time.strftime('%H:%M:%S')} done {took.stage} {took.key} 2x{took.H} "
                    f"{took.cfg.name} ({rec['process_wall_s']} s)")
                ran += 1
        finally:
            release(took)
    if plan_jobs(s)[1] == 0:
        write_summary(s)
    return ran


# ---- the summary: rows, the plan's tests, provenance ---------------------------------------

def _sd(values):
    return statistics.stdev(values) if values and len(values) > 1 else None


def _row(s, H, key, configs, before=0):
    """One row of the table: a method or a control at width ``H`` from its runs (``configs``:
    one per reported seed, or None before the search has chosen; ``before``: epochs of the
    network a run continues, for its total)."""
    recs, pending, paths = [], [], []
    for seed, cfg in zip(s["seeds"][H], configs or [None] * len(s["seeds"][H])):
        rec = None if cfg is None else read(run_path(H, key, cfg.name))
        if rec is None:
            pending.append(seed)
        else:
            recs.append(rec)
            paths.append(str(run_path(H, key, cfg.name).relative_to(root())))
    diverged = [r["config"]["seed"] for r in recs if r.get("diverged")]
    recs = [r for r in recs if not r.get("diverged")]
    tests = [r["metrics"]["test_error"] for r in recs]
    cfg = configs[0] if configs else None
    singles = [r["metrics"].get("test_error_single_samples") for r in recs]
    redraws = [r["metrics"].get("test_error_ensemble_redraws") for r in recs]
    return {"key": key, "label": METHOD_LABELS.get(key, CONTROL_LABELS.get(key)), "H": H,
            "plan_width": s["plan_width"][H],
            "recipe": None if cfg is None else {k: v for k, v in _config_dict(cfg).items()
                                                if k != "seed"},
            "epochs": None if cfg is None else cfg.epochs,
            "total_epochs": None if cfg is None else cfg.epochs + (
                cfg.init_epochs if cfg.init_from else before),
            "seeds": [r["config"]["seed"] for r in recs], "pending_seeds": pending,
            "diverged_seeds": diverged,
            "test_error": tests, "val_error": [r["metrics"]["val_error"] for r in recs],
            "predictor": [r["metrics"]["predictor"] for r in recs],
            "mean": statistics.fmean(tests) if tests else None, "sd": _sd(tests),
            "paper": PAPER_TABLE1.get(key, {}).get(s["plan_width"][H]),
            "mc_sd_single_sample": [_sd(x) for x in singles] if any(singles) else None,
            "mc_sd_ensemble_redraws": [_sd(x) for x in redraws] if any(redraws) else None,
            "train_wall_s": [r["metrics"]["train_wall_s"] for r in recs], "runs": paths}


def rows(s, H):
    """Return the rows at width ``H``: the four methods, then the controls that apply."""
    out, warm = [], {}
    for method in s["methods"]:
        choice = chosen(s, H, method)
        configs = None if choice is None else final_configs(s, H, method, choice)
        out.append(_row(s, H, method, configs))
        if configs and configs[0].init_from is not None:
            warm[method] = configs
    if warm:  # every warm start at a width begins from the same network (the chosen SGD recipe)
        out.append(_row(s, H, "warm_start_source",
                        [c.init_source() for c in next(iter(warm.values()))]))
    bbb = warm.get(s["control_method"])
    if bbb:
        for key in ("sgd_continued", "bbb_random_start"):
            out.append(_row(s, H, key, [control_configs(s, c)[key][0] for c in bbb],
                            before=bbb[0].init_epochs if key == "sgd_continued" else 0))
    return out


def progress(s, widths=None):
    """Where the campaign stands, without a test number: per width, each method's search (trials
    done of its budget, the recipe validation chose, its validation error) and each row's
    reported seeds done of planned. Returns (rows, runs done, runs still to do)."""
    out, done = [], 0
    for H in widths or s["widths"]:
        row_of = {r["key"]: r for r in rows(s, H)}
        for key in list(s["methods"]) + [k for k in row_of if k not in s["methods"]]:
            r = row_of.get(key)
            item = {"H": H, "key": key, "label": METHOD_LABELS.get(key, CONTROL_LABELS.get(key)),
                    "search_done": None, "search_trials": None, "chosen": None,
                    "chosen_epochs": None, "chosen_val_error": None,
                    "seeds_done": len(r["seeds"]) if r else 0,
                    "seeds_planned": len(s["seeds"][H])}
            if key in s["methods"]:
                configs, later = search_configs(s, H, key)
                item["search_trials"] = len(configs) + later
                item["search_done"] = sum(trial_path(H, key, TRIAL.name(c)).exists()
                                          for c in configs)
                done += item["search_done"]
                choice = chosen(s, H, key)
                if choice is not None:
                    item.update(chosen=choice["name"], chosen_epochs=choice["epochs"],
                                chosen_val_error=choice["val_error"],
                                chosen_config=choice["config"])
            done += item["seeds_done"]
            out.append(item)
    return out, done, plan_jobs(s, widths)[1]


def progress_table(s, widths=None):
    """(headers, rows) of ``progress`` for ``helpers.show_table``: no test number."""
    items, _, _ = progress(s, widths)
    head = ["width", "row", "search trials done",
            "recipe chosen on validation (epochs: the trial's best)", "its validation error",
            "reported seeds done"]
    body = []
    for it in items:
        search = ("—" if it["search_trials"] is None
                  else f"{it['search_done']} of {it['search_trials']}")
        recipe = "—"
        if it["chosen"] is not None:  # the epochs kept: the best of the trial's (the plan's rule)
            recipe = recipe_words(it["chosen_config"], it["chosen_epochs"])
        val = "—" if it["chosen_val_error"] is None else f"{100 * it['chosen_val_error']:.2f}%"
        body.append([f"2×{s['plan_width'][it['H']]}", it["label"], search, recipe, val,
                     f"{it['seeds_done']} of {it['seeds_planned']}"])
    return head, body


def todo_is_exact(s, widths=None):
    """Whether ``plan_jobs``' count of runs to do is exact: only once every search at
    ``widths`` has finished. Before that it counts a search's final runs "at least" (one per
    reported seed) and cannot count a warm start's source network and controls until the
    search has chosen. Presentation only: reads the trial records, decides nothing."""
    for H in widths or s["widths"]:
        for method in s["methods"]:
            configs, later = search_configs(s, H, method)
            if later or any(not trial_path(H, method, TRIAL.name(c)).exists() for c in configs):
                return False
    return True


def progress_words(s, widths=None):
    """One paragraph: how far the campaign is, and what is shown when. The runs to do are "at
    least" that many while a search is unfinished (``todo_is_exact``)."""
    _, done, todo = progress(s, widths)
    budget = "; ".join(f"2×{s['plan_width'][H]}: {s['budget'][H]['trials']} trials of at most "
                       f"{s['budget'][H]['max_epochs']} epochs per method, "
                       f"{len(s['seeds'][H])} reported seeds" for H in widths or s["widths"])
    least = "" if todo_is_exact(s, widths) else "at least "
    state = ("complete" if todo == 0 else
             f"running: {done} runs done, {least}{todo} to do")
    return (f"**Plan v1's campaign ({s['profile']} profile): {state}.** Budgets: {budget}. "
            "A width's tests (intervals, orderings, verdicts) are run only once all of its runs "
            "are done; this table shows validation numbers only.")


def _pct(x):
    return "—" if x is None else f"{100 * x:.2f}%"


SHORT = {"sgd": "SGD", "dropout": "dropout", "bbb_gaussian": "BBB Gaussian",
         "bbb_mixture": "BBB mixture", "warm_start_source": "SGD source",
         "sgd_continued": "SGD continued", "bbb_random_start": "BBB random start"}


def _claim(text):
    """'bbb_mixture < sgd' in the table's short names."""
    return re.sub(r"\w+", lambda m: SHORT.get(m.group(0), m.group(0)), text)


def recipe_words(cfg, epochs=None):
    """A recipe (a RunConfig's dict) in words: optimiser and rate, epochs (``epochs``: the
    epochs kept, where a trial ran longer), and what the method adds."""
    if not cfg:
        return "—"
    ep = cfg["epochs"] if epochs is None else epochs
    words = [f"{cfg['optimizer'].capitalize()} lr {cfg['lr']:g}"
             + (f" ×{cfg['lr_decay']:g}/epoch" if cfg.get("lr_decay") else "")]
    if cfg["method"] == "dropout":
        words.append(f"dropout {cfg['dropout']:g}")
    if cfg["method"].startswith("bbb"):
        if cfg["method"] == "bbb_mixture":
            words.append(f"π {cfg['pi']:g}, −log σ1 {cfg['neg_log_sigma1']:g}, "
                         f"−log σ2 {cfg['neg_log_sigma2']:g}")
        else:
            words.append(f"prior σ {cfg['prior_sigma']:g}")
        words.append(f"ρ0 {cfg['rho_init']:g}, {cfg['samples']} sample"
                     + ("s" if cfg["samples"] > 1 else "") + " per step")
    if cfg.get("init_from"):
        words.append(f"warm start: {cfg['init_from'].upper()} {cfg['init_epochs']} epochs, "
                     f"then {ep}")
    else:
        words.append(f"{ep} epochs" + (f", means ~ U(±{cfg['mu_init']:g})"
                                       if cfg.get("mu_init") else ""))
    return "; ".join(words)


def _recipe(r):
    """The recipe of a row's runs, in words (a continued network: its epochs in all)."""
    text = recipe_words(r["recipe"])
    if r["recipe"] and not r["recipe"].get("init_from") and r["total_epochs"] != r["epochs"]:
        text += f", continuing the source network: {r['total_epochs']} epochs in all"
    return text


def _interval(ci):
    return "—" if not ci or ci[0] is None else f"[{100 * ci[0]:.2f}, {100 * ci[1]:.2f}]%"


def _plan_width(rec, H):
    """The paper's width that ``H`` stands for (smoke: a tiny width stands for one), whether the
    summary's keys are numbers (in memory) or strings (read back from JSON)."""
    pw = rec["plan_width"]
    return pw.get(str(H), pw.get(H, H))


def _predictor(r):
    """Which predictor validation chose on how many seeds, and the MC sd of the reported one
    (the posterior mean has none; the average of weight samples: sd over its redraws)."""
    if not r["predictor"]:
        return "—"
    words = {"mean_weights": "posterior mean", "ensemble": "average of samples",
             "network": "the network"}
    counts = {}
    for p in r["predictor"]:
        counts[p] = counts.get(p, 0) + 1
    text = ", ".join(f"{words.get(p, p)} ({n} of {len(r['predictor'])})"
                     for p, n in counts.items())
    sds = [v for v in (r["mc_sd_ensemble_redraws"] or []) if v is not None]
    if sds:
        text += f"; redraw sd {100 * statistics.fmean(sds):.2f} pp"
    elif "ensemble" not in counts:
        text += ": no MC noise"
    return text


def results_table(rec):
    """(headers, rows) of Table 1 under plan v1 from a summary record (``summary``): every row of
    every width whose runs are all done, its test error over the reported seeds with the plan's
    interval and verdict against the paper, the per-seed values, the Monte-Carlo sd of one
    weight sample's test error beside the seed sd, and the recipe. A width still running gives
    one line saying how much is left (no test number before a width is complete)."""
    head = ["width", "row", "paper", "test error: mean ± sd", "95% interval", "vs the paper",
            "per seed (seeds)", "reported predictor", "MC sd of one weight sample",
            "recipe", "chosen at the edge of its search"]
    body = []
    for H in rec["widths"]:
        a = rec["analysis"][str(H)]
        width = f"2×{_plan_width(rec, H)}"
        if a["status"] != "done":
            body.append([width, "not complete (the progress table says what is left): no test "
                         "is run before every run of the width is done"] + ["—"] * (len(head) - 2))
            continue
        for r in (r for r in rec["rows"] if r["H"] == H):
            cell = a["cells"].get(r["key"])
            mc = [v for v in (r["mc_sd_single_sample"] or []) if v is not None]
            sd = "—" if r["sd"] is None else f"{100 * r['sd']:.2f} pp"
            body.append([
                width, r["label"], _pct(r["paper"]), f"{_pct(r['mean'])} ± {sd}",
                _interval(cell and cell.get("ci")), "—" if cell is None else cell["verdict"],
                ", ".join(f"{100 * t:.2f}" for t in r["test_error"])
                + f" ({', '.join(str(x) for x in r['seeds'])})",
                _predictor(r), "—" if not mc else f"{100 * statistics.fmean(mc):.2f} pp",
                _recipe(r), edge_words(rec["searches"].get(str(H), {}).get(r["key"], {})
                                       .get("edges") or []) or "—"])
    return head, body


def tests_table(rec):
    """(headers, rows): the plan's tests at every complete width, read from a summary record:
    the paper's orderings (one Holm family per width), the comparability of the declared pair
    within its margin, and the controls of a warm-started BBB row (their own Holm family)."""
    head = ["width", "claim", "family", "seeds", "mean difference", "95% interval",
            "p (paired t)", "p (sign test)", "p (Holm)", "verdict"]
    body = []

    def diff_cells(tt):
        if tt is None:
            return ["0", "—", "—", "—"]
        ci = "—" if tt["ci"] is None else \
            f"[{100 * tt['ci'][0]:+.2f}, {100 * tt['ci'][1]:+.2f}] pp"
        return [str(tt["n"]), f"{100 * tt['mean_diff']:+.2f} pp", ci,
                "—" if tt["p"] is None else f"{tt['p']:.3g}"]

    for H in rec["widths"]:
        a = rec["analysis"][str(H)]
        if a["status"] != "done":
            continue
        width = f"2×{_plan_width(rec, H)}"
        for fam, name in (("orderings", "the paper's orderings"), ("controls", "controls")):
            for claim, res in a.get(fam, {}).items():
                body.append([width, _claim(claim), name, *diff_cells(res["t_test"]),
                             f"{res['sign_test']['p']:.3g}",
                             "—" if res["p_holm"] is None else f"{res['p_holm']:.3g}",
                             res["verdict"]])
        comp = a["comparable"]
        cells = diff_cells(comp["t_test"])
        cells[-1] = "—"  # a p against zero says nothing of the margin: the interval decides
        body.append([width, f"{_claim(comp['pair'])} within ±{comp['margin_pp']:.1f} pp",
                     "comparability", *cells, "—", "—", comp["verdict"]])
    if not body:
        body.append(["—", "no width complete yet: no test run"] + ["—"] * (len(head) - 2))
    return head, body


_CONTROL_WORDS = {  # control claim -> (if it holds, if reversed, if not resolved at {n} seeds)
    "bbb_mixture < sgd_continued": (
        "BBB beats its SGD start trained on for the same epochs: the Bayesian fine-tuning adds "
        "something that more SGD training does not",
        "its SGD start trained on for the same epochs does better than BBB",
        "BBB cannot be told apart from its SGD start trained on for the same epochs at {n} "
        "seeds: what the Bayesian fine-tuning adds is not resolved from what the extra epochs "
        "give"),
    "bbb_mixture < bbb_random_start": (
        "the warm start helps at this budget: BBB from a random start with the same recipe "
        "and epochs (searched for the warm start, not for a random start) does worse",
        "BBB from a random start with the same epochs does better than the warm start",
        "the warm start's advantage over BBB from a random start is not resolved at {n} seeds")}


def _controls_meaning(controls, n):
    """What the two controls' verdicts say about where a warm-started BBB's result comes from."""
    out = []
    for claim, (holds, reversed_, unresolved) in _CONTROL_WORDS.items():
        verdict = controls.get(claim, {}).get("verdict")
        if verdict:
            out.append({"holds": holds, "reversed": reversed_}.get(verdict,
                                                                     unresolved.format(n=n)))
    return ("So " + "; ".join(out) + ".") if out else ""


def what_it_shows(rec):
    """A paragraph per complete width, every number and word read from the summary ``rec``:
    the scale mixture against the paper, the paper's orderings, BBB against dropout, the
    controls. Before any width is complete: a sentence saying so."""
    out, alpha = [], None
    for H in rec["widths"]:
        a = rec["analysis"][str(H)]
        if a["status"] != "done":
            continue
        alpha = a["cells"]["bbb_mixture"]["alpha"]
        row = {r["key"]: r for r in rec["rows"] if r["H"] == H}
        mix, cell = row["bbb_mixture"], a["cells"]["bbb_mixture"]
        n = len(mix["seeds"])

        def claim(res, text):
            tt = res["t_test"]
            return (f"{text} {res['verdict']} (mean difference {100 * tt['mean_diff']:+.2f} pp, "
                    f"95% interval [{100 * tt['ci'][0]:+.2f}, {100 * tt['ci'][1]:+.2f}] pp, "
                    f"Holm p {res['p_holm']:.2g})")
        orders = [claim(res, _claim(c)) for c, res in a["orderings"].items()]
        comp = a["comparable"]
        tt = comp["t_test"]
        text = (f"**At 2×{_plan_width(rec, H)}, {n} seeds.** The scale mixture's test error, "
                f"{_pct(mix['mean'])} (95% interval {_interval(cell['ci'])}), "
                f"{cell['verdict']} (the paper: {_pct(mix['paper'])}). The paper's orderings: "
                + "; ".join(orders) + ". BBB (mixture) against dropout: "
                f"{comp['verdict']} within ±{comp['margin_pp']:.1f} pp (paired difference "
                f"{100 * tt['mean_diff']:+.2f} pp, interval [{100 * tt['ci'][0]:+.2f}, "
                f"{100 * tt['ci'][1]:+.2f}] pp).")
        if a.get("controls"):
            text += (" Controls of the warm start: " + "; ".join(
                claim(res, _claim(c)) for c, res in a["controls"].items()) + ". "
                + _controls_meaning(a["controls"], n))
        out.append(text)
    if not out:
        return ("No width of plan v1 is complete yet, so no test has been run: the verdicts "
                "appear here, width by width, once every run of a width is done.")
    # the sign test's floor at each complete width (a width still running has fewer seeds done)
    done = {H for H in rec["widths"] if rec["analysis"][str(H)]["status"] == "done"}
    ns = sorted({min(len(r["seeds"]) for r in rec["rows"] if r["seeds"] and r["H"] == H)
                 for H in done}, reverse=True)
    floors = "; ".join(f"with {n} seeds its smallest two-sided p is {2 * 0.5 ** n:g}"
                       for n in ns)
    return "\n\n".join(out + [
        "The paper's values come from its own protocol (plain SGD, 600 epochs) with no spread "
        "given, so \"better\" or \"worse than the paper\" says where the paper's number lies "
        "against our interval, not that a rerun of the same experiment failed. Holm's correction, for a "
        "family of k claims: the smallest p is multiplied by k, the next by k − 1, and so on "
        "(never below the one before). The exact sign test is shown beside each claim as a "
        f"check of direction, not used for a verdict: {floors} (a sign-test p at that floor "
        "is the most its seeds can give).",
        f"\"Not resolved at n seeds\" is a result: the paired t-test's Holm-corrected p is not "
        f"below the plan's α = {alpha:g}, so these seeds cannot order the two methods in either "
        "direction (the intervals are each claim's own, uncorrected). \"Holds\" and "
        "\"reversed\" are the plan's words for a difference the corrected test resolves."])


MAIN_KEYS = ("sgd", "dropout", "bbb_gaussian", "bbb_mixture")
COLORS = {**METHOD_COLORS, **{k: "0.45" for k in CONTROL_LABELS}}


def _pp_end(x):
    """One end of an interval in pp: two decimals, three where two would print as zero."""
    return f"{100 * x:+.3f}" if 0 < abs(100 * x) < 0.005 else f"{100 * x:+.2f}"


def _pp_interval(tt):
    return f"[{_pp_end(tt['ci'][0])}, {_pp_end(tt['ci'][1])}] pp"


def provenance_words(rec):
    """Where plan v1's numbers come from, read from the summary ``rec``: the machines that
    trained its records (CPU, threads, torch, how many records each), when the records were
    written, and the code versions they name (each record names its own commit)."""
    machines = rec.get("machines") or []
    if not machines:
        return "**Provenance.** No run record yet."
    n = sum(m["records"] for m in machines)
    where = "; ".join(
        f"{m['records']} on {m['machine'].get('gpu') or m['machine'].get('cpu')} "
        f"({m['machine'].get('threads')} thread{'s' if m['machine'].get('threads') != 1 else ''}, "
        f"torch {m['machine'].get('torch')}, Python {m['machine'].get('python')})"
        for m in machines)
    codes = rec.get("code_versions") or []
    first, last = (rec.get("records_created") or [None, None])
    return (f"**Provenance.** The {n} run records behind these tables (searches and final runs) "
            f"were trained on these machines: {where}; written between {first} and {last} (UTC). They name "
            f"{len(codes)} code version{'s' if len(codes) != 1 else ''} (most records: "
            + ", ".join(f"{c['commit']} ({c['records']})" for c in codes[:3])
            + "); each record names its own, and `summary.json` lists them all with the SHA-256 "
            "of every input.")


def _against_dropout(comp):
    """BBB against dropout in words: the plan's verdict, and where the paired interval lies
    (a description of the interval, not a further verdict)."""
    tt, m = comp["t_test"], comp["margin"]
    head = (f"paired difference {100 * tt['mean_diff']:+.2f} pp, 95% interval "
            f"{_pp_interval(tt)}" if tt.get("ci") else "no interval")
    if comp["verdict"] == "comparable":
        return f"{head}: comparable within the plan's ±{comp['margin_pp']:.1f} pp"
    if not tt.get("ci"):
        return f"{head}: {comp['verdict']}"
    lo, hi = tt["ci"]
    where = ("the whole interval lies above the margin: dropout's error is lower" if lo > m else
             "the whole interval lies below the margin: BBB's error is lower" if hi < -m else
             "the interval reaches past the margin" + (
                 " and contains zero: these seeds neither order the two nor show them within "
                 "the margin" if lo <= 0 <= hi else
                 f" and lies {'above' if lo > 0 else 'below'} zero: "
                 f"{'dropout' if lo > 0 else 'BBB'}'s mean error is lower at these seeds, a "
                 "description of an uncorrected interval, not a result: the plan declares no "
                 "test of this direction, and an ordering it does test can exclude zero the same "
                 "way and stay not resolved after Holm"))
    return f"{head}: {comp['verdict']} ({where})"


def takeaway(rec):
    """Plan v1's answer to the notebook's question, a bullet per complete width, every number
    and word read from the summary ``rec``: the scale mixture against the paper, against
    dropout, and against SGD trained on for as many epochs (where the width has controls)."""
    out = []
    for H in rec["widths"]:
        a = rec["analysis"][str(H)]
        if a.get("status") != "done":
            continue
        mix = next(r for r in rec["rows"] if r["H"] == H and r["key"] == "bbb_mixture")
        cell = a["cells"]["bbb_mixture"]
        text = (f"- **Plan v1, 2×{_plan_width(rec, H)} ({len(mix['seeds'])} seeds):** BBB with "
                f"the scale mixture reaches {_pct(mix['mean'])}, {cell['verdict']}. Against "
                f"dropout: {_against_dropout(a['comparable'])}.")
        cont = (a.get("controls") or {}).get("bbb_mixture < sgd_continued")
        if cont:
            tt = cont["t_test"]
            word = cont["verdict"]
            text += (f" Against SGD trained on from the same start for as many epochs: "
                     f"{100 * tt['mean_diff']:+.2f} pp, {word}" + (
                         ": at these seeds BBB's result cannot be told apart from what the "
                         "extra epochs give SGD." if word.startswith("not resolved") else
                         ": BBB does better than the extra epochs alone." if word == "holds"
                         else ": the extra epochs alone do better than BBB."))
        out.append(text)
    if not out:
        return ("- Plan v1 has no complete width yet (section 8): its answer appears here once "
                "every run of a width is done.")
    return "\n".join(out)


def answer(rec):
    """The notebook's question answered from plan v1's summary ``rec`` in one bullet, once every
    width is complete: is BBB (scale mixture) shown within the plan's margin of dropout, where
    its mean lies against dropout's, what the control against SGD trained on says, which claims
    hold, and how far SGD itself lies from the paper's SGD (a stronger baseline leaves BBB less
    to gain). '' while a width is still running."""
    widths = [H for H in rec["widths"] if rec["analysis"][str(H)].get("status") == "done"]
    if not widths or len(widths) != len(rec["widths"]):
        return ""
    a = {H: rec["analysis"][str(H)] for H in widths}
    name = {H: f"2×{_plan_width(rec, H)}" for H in widths}
    comp = {H: a[H]["comparable"] for H in widths}
    n_comp = sum(c["verdict"] == "comparable" for c in comp.values())
    diffs = ", ".join(f"{100 * comp[H]['t_test']['mean_diff']:+.2f} pp at {name[H]}"
                      for H in widths)
    cont = {H: (a[H].get("controls") or {}).get("bbb_mixture < sgd_continued") for H in widths}
    words = {H: c["verdict"].split(" at ")[0] for H, c in cont.items() if c}
    if not words:
        cont_text = "no such control (no width was warm-started)"
    elif len(set(words.values())) == 1 and len(words) == len(widths):
        cont_text = f"{next(iter(words.values()))} at every width"
    else:
        cont_text = "; ".join(f"{w} at {name[H]}" for H, w in words.items())
    credit = (", so what it gains cannot be credited to the Bayesian fine-tuning rather than to "
              "the extra epochs" if words and all(w == "not resolved" for w in words.values())
              else "")
    held = [f"{_claim(c)} at {name[H]}" for H in widths
            for fam in ("orderings", "controls") for c, res in (a[H].get(fam) or {}).items()
            if res["verdict"] == "holds"]
    sgd = {H: a[H]["cells"].get("sgd", {}).get("verdict", "") for H in widths}
    return (f"- **Plan v1's answer** (all {len(widths)} widths): BBB with the scale mixture is "
            f"shown within ±{comp[widths[0]]['margin_pp']:.1f} pp of dropout at {n_comp} of "
            f"{len(widths)} widths; its mean error minus dropout's: {diffs}. Against its SGD start "
            f"trained on for the same epochs: {cont_text}{credit}. Of the paper's orderings and "
            "the controls, "
            + (f"only {'; '.join(held)} holds" if len(held) == 1 else
               f"these hold: {'; '.join(held)}" if held else "none holds")
            + ". Our SGD is itself " + "; ".join(f"{sgd[H]} at {name[H]}" for H in widths)
            + ": a stronger baseline than the paper's leaves BBB less room to improve on it.")


def ours_for_paper_table(rec, table):
    """Our Adam recipes' rows for section 7's comparison (``helpers.paper_protocol.table_rows``
    reads ``{"metrics": {"rows": [...]}}``): plan v1's at every width it has finished, section
    3's (table1.json ``table``) elsewhere, each row naming its source."""
    done = {int(H) for H in rec["widths"] if rec["analysis"][str(H)].get("status") == "done"}
    rows = [{**r, "source": "plan v1"} for r in rec["rows"]
            if r["H"] in done and r["key"] in MAIN_KEYS]
    rows += [{**r, "source": "section 3"} for r in ((table or {}).get("metrics") or {}).get(
        "rows", []) if r["H"] not in done]
    return {"metrics": {"rows": rows}}


def _seed_values(row):
    return dict(zip(row["seeds"], row["test_error"]))


def _claim_panels(a):
    """The tests of one width as (label, a, b, result, margin): the orderings, BBB against
    dropout (with its margin), the controls."""
    out = [(c, *c.split(" < "), res, None) for c, res in a["orderings"].items()]
    comp = a["comparable"]
    out.append((comp["pair"].replace(" vs ", " < "), *comp["pair"].split(" vs "), comp,
                comp["margin"]))
    out += [(c, *c.split(" < "), res, None) for c, res in (a.get("controls") or {}).items()]
    return out


def _short_verdict(word):
    return (word.replace(" at ", "\nat ").replace("not shown comparable", "not shown\ncomparable"))


def figure(rec):
    """Table 1 under plan v1, one column per complete width. Top: each reported seed's test
    error (dots in the method's colour; a grey line joins one seed's four methods: every method
    saw that seed's initial draw and data order), the mean with the plan's 95% t-interval (bar),
    the paper's value (red dash); the controls right of a dotted line. Bottom: what the tests
    use, each seed's paired difference for every claim of the plan (the orderings, BBB against
    dropout with its margin shaded, the controls), the mean difference with its own 95%
    interval (uncorrected) and the plan's verdict (Holm-corrected) above it. Widths not complete
    are named below the figure."""
    import matplotlib.pyplot as plt

    from .plotting import percent_axis
    done = [int(H) for H in rec["widths"] if rec["analysis"][str(H)].get("status") == "done"]
    left = [int(H) for H in rec["widths"] if int(H) not in done]
    if not done:
        fig, ax = plt.subplots(figsize=(6, 2))
        ax.axis("off")
        ax.text(0.5, 0.5, "no width of plan v1 is complete yet", ha="center", va="center",
                color="0.4")
        return fig
    fig, axes = plt.subplots(2, len(done), figsize=(5.2 * len(done), 8.2), squeeze=False,
                             sharey="row")
    values = [v for r in rec["rows"] if r["H"] in done for v in r["test_error"] if v is not None]
    values += [r["paper"] for r in rec["rows"] if r["H"] in done and r["paper"] is not None]
    values += [v for H in done for c in rec["analysis"][str(H)]["cells"].values()
               for v in (c.get("ci") or [])]
    span = []  # the bottom row's extent: every difference and interval end
    for col, H in enumerate(done):
        ax, bx = axes[0][col], axes[1][col]
        a = rec["analysis"][str(H)]
        rows = {r["key"]: r for r in rec["rows"] if r["H"] == H}
        keys = [k for k in MAIN_KEYS if k in rows]
        keys += [k for k in CONTROL_LABELS if k in rows and rows[k]["seeds"]]
        seeds = sorted({s for k in MAIN_KEYS for s in rows[k]["seeds"]})
        for s in seeds:
            pts = [(i, _seed_values(rows[k])[s]) for i, k in enumerate(MAIN_KEYS)
                   if s in rows[k]["seeds"]]
            ax.plot(*zip(*pts), color="0.8", lw=0.7, zorder=1)
        for i, k in enumerate(keys):
            r = rows[k]
            ax.scatter([i] * len(r["test_error"]), r["test_error"], s=14, color=COLORS[k],
                       zorder=3, alpha=0.85, lw=0)
            cell = a["cells"].get(k) or stats.mean_ci(r["test_error"])
            if cell.get("ci"):
                ax.errorbar(i + 0.2, cell["mean"], yerr=[[cell["mean"] - cell["ci"][0]],
                                                         [cell["ci"][1] - cell["mean"]]],
                            fmt="o", ms=4, color=COLORS[k], capsize=3, lw=1.2, zorder=4)
            if r["paper"] is not None:
                ax.scatter([i + 0.2], [r["paper"]], marker="_", s=300, color="C3", lw=1.8,
                           zorder=5)
        if len(keys) > len(MAIN_KEYS):
            ax.axvline(len(MAIN_KEYS) - 0.5, color="0.6", ls=":", lw=0.9)
            ax.text((len(MAIN_KEYS) + len(keys) - 1) / 2, 1.0, "controls", ha="center",
                    va="top", fontsize=8, color="0.35", transform=ax.get_xaxis_transform())
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([SHORT[k] for k in keys], rotation=35, ha="right", fontsize=8)
        ax.set_xlim(-0.5, len(keys) - 0.3)
        ax.set_title(f"2×{_plan_width(rec, H)}: test error, {len(seeds)} seeds")
        # the tests: paired differences per seed
        claims = _claim_panels(a)
        for i, (label, ka, kb, res, margin) in enumerate(claims):
            va, vb = _seed_values(rows[ka]), _seed_values(rows[kb])
            diffs = [va[s] - vb[s] for s in sorted(set(va) & set(vb))]
            span += diffs + list(res["t_test"].get("ci") or [])
            bx.scatter([i] * len(diffs), diffs, s=14, color=COLORS.get(ka, "0.3"), alpha=0.85,
                       lw=0, zorder=3)
            tt = res["t_test"]
            if tt.get("ci"):
                bx.errorbar(i + 0.2, tt["mean_diff"], yerr=[[tt["mean_diff"] - tt["ci"][0]],
                                                            [tt["ci"][1] - tt["mean_diff"]]],
                            fmt="o", ms=4, color="0.2", capsize=3, lw=1.2, zorder=4)
            if margin:
                bx.fill_between([i - 0.35, i + 0.45], -margin, margin, color="C1", alpha=0.15,
                                lw=0, zorder=0)
            bx.text(i + 0.05, 1.0, _short_verdict(res["verdict"]), ha="center", va="top",
                    fontsize=6.5, color="0.25", transform=bx.get_xaxis_transform())
        bx.axhline(0, color="0.3", lw=0.8)
        bx.set_xticks(range(len(claims)))
        bx.set_xticklabels([" − ".join(SHORT[k] for k in (c[1], c[2])) for c in claims],
                           rotation=35, ha="right", fontsize=8)
        bx.set_xlim(-0.5, len(claims) - 0.3)
        bx.set_title(f"2×{_plan_width(rec, H)}: the plan's tests, paired by seed", fontsize=10)
    lo, hi = min(span + [-0.001]), max(span + [0.001])
    pad = 0.06 * (hi - lo)
    axes[1][0].set_ylim(lo - pad, hi + pad + 0.3 * (hi - lo))  # room for the verdicts
    axes[0][0].set_ylim(min(values) * 0.95, max(values) * 1.04)
    percent_axis(axes[0][0], "y", decimals=2)
    axes[0][0].set_ylabel("test error")
    from matplotlib.ticker import FuncFormatter
    axes[1][0].yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:+.2f} pp"))
    axes[1][0].set_ylabel("difference in test error (a − b)")
    handles = [plt.Line2D([], [], marker="o", ls="", ms=4, color="C0", alpha=0.85,
                          label="one seed (method's colour)"),
               plt.Line2D([], [], color="0.8", lw=0.7, label="one seed's methods"),
               plt.Line2D([], [], marker="o", ms=4, color="0.2",
                          label="mean, 95% interval (uncorrected)"),
               plt.Line2D([], [], marker="_", ls="", ms=14, mew=1.8, color="C3",
                          label="the paper's Table 1"),
               plt.Rectangle((0, 0), 1, 1, color="C1", alpha=0.15,
                             label="the plan's margin for \"comparable\"")]
    ncol = 2 if len(done) == 1 else 5
    fig.legend(handles=handles, fontsize=8, loc="lower center", ncol=ncol, frameon=False)
    top = 1.0
    if left:
        top = 0.97
        fig.text(0.5, 0.995, "not complete yet: " + ", ".join(
            f"2×{_plan_width(rec, H)}" for H in left) + " (see the progress table)",
            ha="center", va="top", fontsize=8, color="0.35")
    fig.tight_layout(rect=(0, 0.1 if ncol == 2 else 0.05, 1, top))
    return fig


def _paired(by, a, b):
    xa, xb = by[a], by[b]
    common = sorted(set(xa) & set(xb))
    return [xa[k] for k in common], [xb[k] for k in common]


def analysis(s, width_rows):
    """The plan's tests at one width, once every run there is done (``helpers.stats``): each
    method against the paper (t-interval), the orderings as one Holm family, the comparability
    of the pair within the margin, and the controls as their own Holm family."""
    todo = sum(len(r["pending_seeds"]) for r in width_rows)
    if todo:
        return {"status": f"pending: {todo} runs to go; no test before every run is done"}
    lost = {r["key"]: r["diverged_seeds"] for r in width_rows if r["diverged_seeds"]}
    if lost:
        return {"status": f"runs diverged ({lost}): the plan's tests need every reported seed, "
                          "and none is dropped after a test number is seen; no test"}
    alpha = s["alpha"]
    by = {r["key"]: dict(zip(r["seeds"], r["test_error"])) for r in width_rows}
    cells = {r["key"]: stats.vs_published(r["test_error"], r["paper"], alpha=alpha,
                                          lower_is_better=s["lower_is_better"], scale=100,
                                          unit=" pp")
             for r in width_rows if r["paper"] is not None}
    family = stats.ordering_family({f"{a} < {b}": _paired(by, a, b) for a, b in s["family"]},
                                   alpha=alpha)
    a, b, margin = s["comparable"]
    out = {"status": "done", "cells": cells, "orderings": family,
           "comparable": {"pair": f"{a} vs {b}", "margin_pp": 100 * margin,
                          **stats.comparable(*_paired(by, a, b), margin, alpha=alpha)}}
    if all(c in by for _, c in s["control_claims"]):
        out["controls"] = stats.ordering_family(
            {f"{a} < {b}": _paired(by, a, b) for a, b in s["control_claims"]}, alpha=alpha)
    return out


def _word_pattern(word):
    """A verdict template of the plan as a regular expression ('x' a number, 'n' a count)."""
    parts = []
    for token in word.split(" "):
        parts.append({"x": r"\d+(\.\d+)?", "n": r"\d+", "seeds": "seeds?"}.get(token,
                                                                             re.escape(token)))
    return re.compile("^" + " ".join(parts) + "$")


def check_words(s, width_analysis):
    """Return the verdicts at one width that are not the plan's words (empty: all are)."""
    words = {k: [_word_pattern(w) for w in v] for k, v in s["verdict_words"].items()
             if isinstance(v, list)}
    found = [("cell", c["verdict"]) for c in width_analysis.get("cells", {}).values()]
    found += [("ordering", c["verdict"]) for fam in ("orderings", "controls")
              for c in width_analysis.get(fam, {}).values()]
    if "comparable" in width_analysis:
        found.append(("comparability", width_analysis["comparable"]["verdict"]))
    return [f"{kind}: {v!r}" for kind, v in found
            if not any(p.match(v) for p in words[kind])]


def _sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def summary(s, plan_file=None):
    """Return the summary record (see ``write_summary``)."""
    plan_file = Path(plan_file) if plan_file else AP.plan_path()
    out_rows, tests, searches = [], {}, {}
    for H in s["widths"]:
        width_rows = rows(s, H)
        out_rows += width_rows
        tests[str(H)] = analysis(s, width_rows)
        bad = check_words(s, tests[str(H)])
        if bad:
            raise ValueError(f"verdicts at 2x{H} that are not the plan's words: {bad}")
        searches[str(H)] = {}
        for method in s["methods"]:
            configs, later = search_configs(s, H, method)
            done = sum(trial_path(H, method, TRIAL.name(c)).exists() for c in configs)
            choice = chosen(s, H, method)
            searches[str(H)][method] = {
                "trials": len(configs) + later, "done": done,
                "chosen": None if choice is None else choice["name"],
                "epochs": None if choice is None else choice["epochs"],
                "val_error": None if choice is None else choice["val_error"],
                "edges": search_edges(s, H, method, choice)}
    files = sorted(p for p in root().rglob("*.json")
                   if p.parent != root() or p.name not in ("summary.json", "estimate.json"))
    inputs = {str(p.relative_to(root())): _sha256(p) for p in files}
    machines, dates, codes = {}, [], {}
    for p in files:
        rec = json.loads(p.read_text())
        if "machine" in rec:
            k = json.dumps(rec["machine"], sort_keys=True)
            machines[k] = machines.get(k, 0) + 1
            dates.append(rec["created"])
        if isinstance(rec.get("code"), dict):
            c = rec["code"]
            k = f"{str(c.get('commit'))[:7]}{' (dirty)' if c.get('dirty') else ''}"
            codes[k] = codes.get(k, 0) + 1
    try:
        plan_name = str(plan_file.resolve().relative_to(PROJECT_ROOT.resolve()))
    except ValueError:
        plan_name = str(plan_file)
    return {"plan": {"file": plan_name, "version": s["plan_version"],
                     "sha256": _sha256(plan_file)},
            "profile": s["profile"], "widths": s["widths"], "plan_width": s["plan_width"],
            "complete": plan_jobs(s)[1] == 0, "searches": searches, "rows": out_rows,
            "analysis": tests,
            "verdict_words": "every verdict is one of the plan's verdict_words (checked)",
            "mc_noise": "per BBB run: the sd of the test error over its single weight samples "
                        "(mc_sd_single_sample) and, where the averaged predictor was chosen, over "
                        "the further evaluation seeds (mc_sd_ensemble_redraws); beside the seed sd",
            "inputs": inputs,
            "inputs_sha256": hashlib.sha256(json.dumps(inputs, sort_keys=True).encode())
            .hexdigest(),
            "machines": [{"machine": json.loads(k), "records": n}
                         for k, n in sorted(machines.items(), key=lambda kv: (-kv[1], kv[0]))],
            "records_created": [min(dates), max(dates)] if dates else None,
            "code_versions": [{"commit": k, "records": n} for k, n in
                              sorted(codes.items(), key=lambda kv: (-kv[1], kv[0]))],
            "aggregated_by": "helpers.table1_plan.write_summary (no machine or date of its own: "
                             "the same inputs give the same bytes)"}


def write_summary(s, plan_file=None):
    """Write plan_v1/summary.json (unless it holds these bytes already); return the record."""
    rec = summary(s, plan_file)
    data = (json.dumps(rec, indent=1, default=str) + "\n").encode()
    path = root() / "summary.json"
    if not (path.exists() and path.read_bytes() == data):
        atomic_write_bytes(path, data)
    return rec


# ---- the campaign's cost -------------------------------------------------------------------

def cost_key(cfg):
    """The key of a configuration's seconds per epoch: its method, and its weight samples."""
    return cfg.method + (f"_mc{cfg.samples}" if cfg.bayesian and cfg.samples > 1 else "")


def estimate(s, spe, H):
    """Return the CPU-hours of the campaign at width ``H`` from seconds per epoch ``spe``
    ({cost_key: seconds}): the searches exactly (every trial runs to its last epoch, plus the
    warm start's source), the final runs and the controls as upper bounds (every chosen run as
    long as its search allowed, the costliest configuration of each method chosen)."""
    b = s["budget"][H]
    sgd_like = {"mu_init": None, "lr": 1e-3, "lr_decay": 1.0}
    search_s, worst = 0.0, {}
    warm_any = False
    for method in s["methods"]:
        for c in expand(space(s, H, method, sgd_like), s["tuning_seed"], TRIAL):
            cfg = RunConfig.from_dict(c)
            cost = cfg.epochs * spe[cost_key(cfg)]
            search_s += cost
            warm_any |= cfg.init_from is not None
            worst[method] = max(worst.get(method, 0.0), cost + (
                s["init_epochs"] * spe[s["warm_source"]] if cfg.init_from else 0.0))
    if warm_any:
        search_s += s["init_epochs"] * spe[s["warm_source"]]  # one source per width
    n = len(s["seeds"][H])
    final_s = n * sum(worst.values())
    mix = max(spe[k] for k in spe if k.startswith(s["control_method"]))
    controls_s = n * (b["max_epochs"] * mix
                      + (b["max_epochs"] - s["init_epochs"]) * spe[s["warm_source"]])
    h = lambda v: round(v / 3600, 2)  # noqa: E731
    return {"search_cpu_h": h(search_s), "final_cpu_h_at_most": h(final_s),
            "controls_cpu_h_at_most": h(controls_s),
            "total_cpu_h_at_most": h(search_s + final_s + controls_s), "seeds": n}
