"""Table 1 under the paper's own protocol: plain SGD on the summed cost, random start, 600 epochs.

The declarations live in ``helpers.profiles`` (``PAPER_PROTOCOL``, ``PAPER_SPACES``,
``PAPER_FIXED``). A campaign has three stages, each a list of independent *jobs* (one training
run each), so that several processes can share it:

1. ``screen``: every method's nine trials for ``screen_epochs`` on the tuning seed (validation
   error only; no test number is computed);
2. ``continue``: the best ``keep`` trials of each method, by validation error, continued from their
   checkpoints to ``continue_epochs``;
3. ``final``: the best continued trial of each method, trained from a random start for
   ``final_epochs`` on every reported seed and width, with its validation and test error after
   every epoch (the test curve is drawn, never used for a choice).

A finished job writes its record atomically (``results/01_mnist_classification/paper_protocol/``,
``search/`` or ``runs/``); a process claims a job with a lock file beside the checkpoints, so two
processes never train the same run, and a claim whose process died is taken over. Unfinished
runs resume from their per-epoch checkpoints.
"""
import json
import math
import os
import shutil
import statistics
import time
from dataclasses import asdict, dataclass, replace
from itertools import product
from pathlib import Path

from . import campaign
from .classification import METHOD_COLORS, METHODS, RunConfig, checkpoint_path, run
from .profiles import L9, PAPER_FIXED, PAPER_PROTOCOL, PAPER_SPACES
from .utils import atomic_write_bytes, machine_info, results_dir

NB = "01_mnist_classification"
FOLDER = "paper_protocol"
STAGES = ("screen", "continue", "final")
# the order in which jobs of one stage are taken: the longest runs first
COST_ORDER = ("bbb_gaussian", "bbb_mixture", "dropout", "sgd")


def settings(profile="default"):
    """Return the campaign's declared settings for ``profile`` (a dict)."""
    if profile not in PAPER_PROTOCOL:
        raise ValueError(f"the paper protocol has no profile {profile!r}; choose one of "
                         f"{sorted(PAPER_PROTOCOL)}")
    return dict(PAPER_PROTOCOL[profile], profile=profile)


def root():
    """Return the folder of the campaign's results (under ``results_dir()``)."""
    return results_dir() / NB / FOLDER


def design(method, trials=9):
    """Return the screening points of ``method``: a list of dicts of settings.

    One factor: its values in order; two factors: their full 3 x 3 grid; four factors: the L9
    orthogonal array (each level of each factor three times, each pair of levels of two factors
    once). ``trials`` < 9 keeps the first ``trials`` points (the smoke profile)."""
    if method not in PAPER_SPACES:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(PAPER_SPACES)}")
    space = PAPER_SPACES[method]
    keys = list(space)
    if len(keys) == 1:
        points = [{keys[0]: v} for v in space[keys[0]]]
    elif len(keys) == 2:
        points = [dict(zip(keys, vs)) for vs in product(*(space[k] for k in keys))]
    elif len(keys) == 4:
        points = [{k: space[k][level] for k, level in zip(keys, row)} for row in L9]
    else:
        raise ValueError(f"no design for {len(keys)} factors ({keys})")
    return points[:trials]


def screen_configs(method, H, s):
    """Return the RunConfigs of ``method``'s screening trials at width ``H``."""
    return [RunConfig(method=method, H=H, epochs=s["screen_epochs"], seed=s["tuning_seed"],
                      **PAPER_FIXED, **point) for point in design(method, s["trials"])]


def search_path(cfg):
    return root() / "search" / f"{cfg.name}.json"


def run_path(cfg):
    return root() / "runs" / f"{cfg.name}.json"


def read(path):
    path = Path(path)
    return json.loads(path.read_text()) if path.exists() else None


def rank(records):
    """Return ``records`` best first: by validation error (diverged runs last), then by name."""
    def key(r):
        v = r["metrics"].get("val_error")
        return (v is None, v if v is not None else 0.0, r["name"])
    return sorted(records, key=key)


@dataclass
class Job:
    stage: str
    cfg: RunConfig
    path: Path
    start_from: Path = None  # a checkpoint to continue from (stage 'continue')

    @property
    def name(self):
        return self.cfg.name


def _search_width(s):
    return s["search_width"]


def plan_jobs(s):
    """Return (jobs not yet done whose inputs exist, number of jobs still to do in all).

    A later stage's jobs appear once the stage before it has finished for that method."""
    ready, remaining = [], 0
    H0 = _search_width(s)
    for method in sorted(METHODS, key=COST_ORDER.index):
        screen = screen_configs(method, H0, s)
        done = [read(search_path(c)) for c in screen]
        for c, rec in zip(screen, done):
            if rec is None:
                ready.append(Job("screen", c, search_path(c)))
        n_final = sum(len(s["seeds"][w]) for w in s["widths"])
        if any(r is None for r in done):
            remaining += sum(r is None for r in done) + s["keep"] + n_final
            continue
        best = [RunConfig.from_dict(r["config"]) for r in rank(done)[:s["keep"]]]
        cont = [replace(c, epochs=s["continue_epochs"]) for c in best]
        cont_recs = [read(search_path(c)) for c in cont]
        for short, c, rec in zip(best, cont, cont_recs):
            if rec is None:
                ready.append(Job("continue", c, search_path(c), checkpoint_path(short, NB)))
        if any(r is None for r in cont_recs):
            remaining += sum(r is None for r in cont_recs) + n_final
            continue
        chosen = RunConfig.from_dict(rank(cont_recs)[0]["config"])
        for w in s["widths"]:
            for seed in s["seeds"][w]:
                c = replace(chosen, H=w, seed=seed, epochs=s["final_epochs"])
                if read(run_path(c)) is None:
                    ready.append(Job("final", c, run_path(c)))
                    remaining += 1
    order = {st: i for i, st in enumerate(STAGES)}
    ready.sort(key=lambda j: (order[j.stage], j.cfg.H if j.stage == "final" else 0,
                              j.cfg.seed if j.stage == "final" else 0,
                              COST_ORDER.index(j.cfg.method)))
    return ready, remaining


def chosen(s, method):
    """Return the record of ``method``'s chosen continued trial (None while the search runs)."""
    H0 = _search_width(s)
    done = [read(search_path(c)) for c in screen_configs(method, H0, s)]
    if any(r is None for r in done):
        return None
    best = [replace(RunConfig.from_dict(r["config"]), epochs=s["continue_epochs"])
            for r in rank(done)[:s["keep"]]]
    cont = [read(search_path(c)) for c in best]
    if any(r is None for r in cont):
        return None
    return rank(cont)[0]


# --- claims: one process per job -----------------------------------------------------------

def _claim_path(job):
    return campaign.claim_path(job.name, NB)


STALE_S = campaign.STALE_S  # a claim from another host whose run wrote nothing for this long is abandoned


def claim(job):
    """Take ``job`` for this process (True), or leave it to the live process that holds it; a
    claim from another host stays alive while its run's checkpoint changes (helpers.campaign)."""
    return campaign.claim(_claim_path(job), watch=[checkpoint_path(job.cfg, NB)])


def release(job):
    campaign.release(_claim_path(job))


# --- one job ---------------------------------------------------------------------------------

code_version = campaign.code_version


def segments_path(cfg):
    """Return the file beside a run's checkpoint that lists the machines that trained it."""
    ck = checkpoint_path(cfg, NB)
    return ck.with_name(ck.stem + ".machines.json")


def record_segment(cfg, device):
    """Append to the run's segment list the machine that (re)starts it now and the epoch it starts
    from (0: a fresh run; more: resumed from the checkpoint, perhaps written by another machine);
    return the list. A run trained on one machine has one segment."""
    from .train import load_checkpoint
    ck, path = checkpoint_path(cfg, NB), segments_path(cfg)
    epoch = int(load_checkpoint(ck)["epoch"]) if ck.exists() else 0
    segs = json.loads(path.read_text()) if path.exists() else []
    if epoch == 0:
        segs = []  # a fresh start: earlier segments trained nothing that survives
    segs.append({"from_epoch": epoch, "machine": machine_info(device),
                 "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(segs, indent=1) + "\n").encode())
    return segs


def progress(s):
    """Return (run name, last checkpointed epoch, epochs) for every unfinished job of the plan
    that has a checkpoint here: what ``status`` shows of the runs under way."""
    from .train import load_checkpoint
    ready, _ = plan_jobs(s)
    out = []
    for job in ready:
        ck = checkpoint_path(job.cfg, NB)
        if ck.exists():
            out.append((job.name, int(load_checkpoint(ck)["epoch"]), job.cfg.epochs))
    return out


def run_job(job, data, s, log=print):
    """Train ``job`` (resuming from its checkpoint) and write its record; return the record."""
    if job.start_from is not None:
        dest = checkpoint_path(job.cfg, NB)
        if not dest.exists() and Path(job.start_from).exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.copy.tmp")
            shutil.copyfile(job.start_from, tmp)
            os.replace(tmp, dest)
    segments = record_segment(job.cfg, data.x_train.device)
    t0 = time.perf_counter()
    test = job.stage == "final"
    try:
        _, rec = run(job.cfg, data, notebook=NB, eval_samples=s["eval_samples"], test=test,
                     checkpoint_every=1, desc=f"{job.stage} {job.cfg.method} H={job.cfg.H}")
    except FloatingPointError as err:  # a diverged trial is a result of the search, not a crash
        rec = {"config": asdict(job.cfg), "name": job.name, "diverged": str(err),
               "metrics": {"val_error": None}, "history": []}
    rec.update(stage=job.stage, profile=s["profile"], protocol="paper",
               machine=machine_info(data.x_train.device), segments=segments, code=code_version(),
               created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               process_wall_s=round(time.perf_counter() - t0, 1))
    atomic_write_bytes(job.path, (json.dumps(rec, indent=1) + "\n").encode())
    return rec


def drive(data, s, log=print, poll_s=30, max_jobs=None, stop_after_stage=None, methods=None):
    """Take and run ready jobs until none is left (waiting while another process finishes a stage
    this one needs); return the number of jobs this process ran. ``methods`` (optional): take only
    those methods' jobs (which process runs a job changes no number: each run is seeded alone)."""
    if methods is not None:
        bad = sorted(set(methods) - set(COST_ORDER))
        if bad:
            raise ValueError(f"unknown methods {bad}; choose among {list(COST_ORDER)}")
    code_version()  # read now, before any job: the records name the code this process loaded
    ran = 0
    while max_jobs is None or ran < max_jobs:
        ready, remaining = plan_jobs(s)
        if stop_after_stage is not None:
            ready = [j for j in ready if STAGES.index(j.stage) <= STAGES.index(stop_after_stage)]
        if methods is not None:
            ready = [j for j in ready if j.cfg.method in methods]
            if not ready:
                break
        if not ready and remaining == 0:
            break
        took = None
        for job in ready:
            if claim(job):
                took = job
                break
        if took is None:
            if not ready and stop_after_stage is not None:
                break
            time.sleep(poll_s)
            continue
        try:
            if read(took.path) is None:  # another process may have finished it meanwhile
                log(f"{time.strftime('%H:%M:%S')} start {took.stage} {took.name}")
                rec = run_job(took, data, s, log)
                v = rec["metrics"].get("val_error")
                t = rec["metrics"].get("test_error")
                log(f"{time.strftime('%H:%M:%S')} done  {took.stage} {took.name}: val "
                    f"{v} test {t} ({rec['process_wall_s']} s)")
                ran += 1
        finally:
            release(took)
    return ran


# --- reading the campaign back: Table 1's paper-protocol rows and Figure 2 -------------------

LABELS = {"sgd": "SGD, no regularisation", "dropout": "SGD, dropout",
          "bbb_gaussian": "BBB, Gaussian prior", "bbb_mixture": "BBB, scale mixture prior"}
TABLE_LABELS = {**LABELS, "sgd": "plain network", "dropout": "dropout"}  # notebook 01
SHORT = {"sgd": "plain SGD", "dropout": "dropout", "bbb_gaussian": "the Gaussian prior",
         "bbb_mixture": "the scale mixture"}
COLORS = METHOD_COLORS


def final_records(s, method, H):
    """Return the finished final runs of ``method`` at width ``H`` (seed order), and the reported
    seeds still to run."""
    rec = chosen(s, method)
    if rec is None:
        return [], list(s["seeds"].get(H, ()))
    cfg = RunConfig.from_dict(rec["config"])
    done, pending = [], []
    for seed in s["seeds"].get(H, ()):
        r = read(run_path(replace(cfg, H=H, seed=seed, epochs=s["final_epochs"])))
        (done if r is not None else pending).append(r if r is not None else seed)
    return done, pending


def describe(cfg):
    """Return the chosen setting of a method in a few words (learning rate on the summed cost,
    and the method's own searched values)."""
    out = [f"lr {cfg['lr']:.2g}"]
    if cfg["method"] == "dropout":
        out.append(f"p {cfg['dropout']:g}")
    if cfg["method"] == "bbb_gaussian":
        out.append(f"σp e^{math.log(cfg['prior_sigma']):.0f}")
    if cfg["method"] == "bbb_mixture":
        out.append(f"π {cfg['pi']:g}, −log σ1 {cfg['neg_log_sigma1']:g}, "
                   f"−log σ2 {cfg['neg_log_sigma2']:g}")
    return ", ".join(out)


def _machine_word(m):
    if m.get("gpu"):
        return m["gpu"]
    t = m.get("threads")
    return f"{m.get('cpu') or 'CPU'}, {t} thread{'' if t == 1 else 's'}"


def hardware(rec):
    """Return where a finished run trained, in words: its machine, or each machine that trained
    part of it with the epoch it took over from (``segments``, written by ``run_job``)."""
    segs = rec.get("segments") or [{"from_epoch": 0, "machine": rec.get("machine") or {}}]
    parts = []
    for seg in segs:
        word = _machine_word(seg["machine"])
        if parts and parts[-1][0] == word:
            continue  # resumed on the same kind of machine
        parts.append((word, seg["from_epoch"]))
    return "; ".join(w if e == 0 else f"{w} from epoch {e}" for w, e in parts)


def segment_speeds(rec):
    """Return [(machine in words, epochs trained there, seconds per epoch)] for a finished run,
    from its per-epoch history (``wall_s`` counts training time, carried across a resume)."""
    segs = rec.get("segments") or [{"from_epoch": 0, "machine": rec.get("machine") or {}}]
    hist = rec.get("history") or []
    walls = [0.0] + [h["wall_s"] for h in hist]
    out = []
    for i, seg in enumerate(segs):
        a = seg["from_epoch"]
        b = segs[i + 1]["from_epoch"] if i + 1 < len(segs) else len(hist)
        if b > a:
            out.append((_machine_word(seg["machine"]), b - a, (walls[b] - walls[a]) / (b - a)))
    return out


def speed_lines(rec):
    """Return Markdown lines: the measured seconds per epoch of the finished runs, per method,
    width and machine (from ``speeds`` in summary.json)."""
    lines = []
    for r in rec["rows"]:
        for word, n, spe in r.get("speeds", []):
            runs = len(r["seeds"])
            lines.append(f"{LABELS[r['key']]}, 2×{r['H']}, {word}: {spe:.2f} s per epoch "
                         f"(the mean over the {n} epochs its {runs} run{'s' if runs > 1 else ''} "
                         f"trained there; 600 epochs ≈ {600 * spe / 3600:.2f} h)")
    return lines


def curve_end(history, window=100):
    """Return the mean test error over the last ``window`` epochs and over the ``window`` before,
    (their difference says whether the curve still falls at the end)."""
    errs = [h["test_error"] for h in history]
    if len(errs) < 2 * window:
        return None, None
    return (sum(errs[-window:]) / window, sum(errs[-2 * window:-window]) / window)


def curve_jitter(history, window=100):
    """Return the standard deviation of the test error over the last ``window`` epochs: the
    epoch-to-epoch noise against which a change of the curve's mean is read."""
    errs = [h["test_error"] for h in history][-window:]
    return statistics.stdev(errs) if len(errs) >= 2 else None


def summary(s):
    """Return the paper-protocol rows: per method and width, the chosen setting, the seeds done
    and pending, per-seed test and validation errors, the MC spread of single weight samples,
    the end of the test curve, and the training time per seed."""
    rows = []
    for H in s["widths"]:
        for method in ("sgd", "dropout", "bbb_gaussian", "bbb_mixture"):
            recs, pending = final_records(s, method, H)
            ch = chosen(s, method)
            row = {"key": method, "label": LABELS[method], "H": H, "protocol": "paper",
                   "chosen": None if ch is None else ch["name"],
                   "setting": None if ch is None else describe(ch["config"]),
                   "seeds": [r["config"]["seed"] for r in recs], "pending_seeds": pending,
                   "test_error": [r["metrics"]["test_error"] for r in recs],
                   "val_error": [r["metrics"]["val_error"] for r in recs],
                   "predictor": [r["metrics"]["predictor"] for r in recs],
                   "epochs": s["final_epochs"],
                   "train_wall_s": [r["metrics"]["train_wall_s"] for r in recs],
                   "runs": [r["name"] for r in recs],
                   "hardware": [hardware(r) for r in recs]}
            agg = {}
            for r in recs:  # seconds per epoch per machine, pooled over the seeds
                for word, n, spe in segment_speeds(r):
                    e, t = agg.get(word, (0, 0.0))
                    agg[word] = (e + n, t + n * spe)
            row["speeds"] = [(w, e, t / e) for w, (e, t) in agg.items()]
            singles = [r["metrics"].get("test_error_single_samples") for r in recs]
            row["mc_sd_single_sample"] = [None if not x or len(x) < 2 else
                                          statistics.stdev(x) for x in singles]
            ends = [curve_end(r["history"]) for r in recs]
            row["test_error_last_100"] = [e[0] for e in ends]
            row["test_error_previous_100"] = [e[1] for e in ends]
            row["test_error_sd_last_100"] = [curve_jitter(r["history"]) for r in recs]
            rows.append(row)
    return rows


# colour-blind-safe (Okabe & Ito 2008), shared with helpers.table1's figures
OKABE_ITO = {"sgd": "#009E73", "dropout": "#E69F00", "bbb_gaussian": "#CC79A7",
             "bbb_mixture": "#0072B2"}


def run_records(s, H, records=None):
    """{method: [finished final run records]} at width ``H``: ``records(method, H)`` when given
    (another campaign's runs), else this campaign's (``final_records``)."""
    get = records or (lambda m, w: final_records(s, m, w)[0])
    return {m: get(m, H) for m in ("sgd", "dropout", "bbb_gaussian", "bbb_mixture")}


def _running_mean(y, k):
    """The mean of each point's window of ``k`` (the window shrinks at the start)."""
    out, s = [], 0.0
    for i, v in enumerate(y):
        s += v - (y[i - k] if i >= k else 0.0)
        out.append(s / min(i + 1, k))
    return out


def _spread_labels(ys, gap):
    """Label positions (same order as ``ys``, log-error values) nudged apart to at least
    ``gap`` (a ratio) between neighbours, centred on the curves' ends."""
    import math
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    pos = [math.log(ys[i]) for i in order]
    for _ in range(50):
        moved = False
        for j in range(1, len(pos)):
            d = pos[j] - pos[j - 1]
            if d < math.log(gap):
                shift = (math.log(gap) - d) / 2
                pos[j - 1] -= shift
                pos[j] += shift
                moved = True
        if not moved:
            break
    out = [0.0] * len(ys)
    for j, i in enumerate(order):
        out[i] = math.exp(pos[j])
    return out


def figure2(s, widths=None, records=None, smooth=25, sigma_fixed=False):
    """The paper's Figure 2 under its own protocol, as small multiples (a row per width): a
    panel per method with its test error (posterior-mean weights for BBB) against epoch, the
    mean over seeds with the range of seeds as a band where there are several, and the paper's
    Table 1 value as a black dashed line with its own legend entry (legend text at 9 points);
    a last panel per row with
    the four methods' means together, each a running mean over ``smooth`` epochs in its
    colour-blind-safe colour (Okabe-Ito) and labelled at its end. Log error axis shared by
    every panel, every epoch and every paper value inside it; the title says how many seeds
    each row holds. ``records``: see ``run_records``. ``sigma_fixed``: σ did not learn under
    this protocol (section 3 of notebook 01); the BBB panels' titles say so."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    widths = list(widths or s["widths"])
    order = ("sgd", "dropout", "bbb_gaussian", "bbb_mixture")
    runs = {H: run_records(s, H, records) for H in widths}
    fig, axes = plt.subplots(len(widths), len(order) + 1, figsize=(3.5 * (len(order) + 1),
                             2.9 * len(widths) + 0.5), squeeze=False, sharey=True, sharex=True)
    vals = [h["test_error"] for H in widths for recs in runs[H].values() for r in recs
            for h in r["history"]]
    vals += [PAPER_TABLE1[m][H] for H in widths for m in PAPER_TABLE1 if H in PAPER_TABLE1[m]]
    lo, hi = (min(vals), max(vals)) if vals else (0.01, 0.03)

    def curve(recs):
        n = min(len(r["history"]) for r in recs)
        ys = [[r["history"][i]["test_error"] for r in recs] for i in range(n)]
        return list(range(1, n + 1)), ys
    seeds = {}
    for row, H in zip(axes, widths):
        ends = {}
        for ax, method in zip(row, order):
            recs, paper = runs[H][method], PAPER_TABLE1[method].get(H)
            c = OKABE_ITO[method]
            if recs:
                seeds.setdefault(H, set()).add(len(recs))
                x, ys = curve(recs)
                mean = [sum(v) / len(v) for v in ys]
                ax.plot(x, mean, c=c, lw=0.8, zorder=3,
                        label=f"ours ({len(recs)} seed{'s' if len(recs) > 1 else ''})")
                if len(recs) > 1:
                    ax.fill_between(x, [min(v) for v in ys], [max(v) for v in ys], color=c,
                                    alpha=0.45, lw=0, zorder=2)
                sm = _running_mean(mean, smooth)
                row[-1].plot(x, sm, c=c, lw=1.4, zorder=3)
                ends[method] = (x[-1], sm[-1])
            else:
                ax.text(0.5, 0.5, "no 600-epoch run yet", transform=ax.transAxes,
                        ha="center", va="center", color="0.4")
            if paper is not None:
                ax.axhline(paper, color="k", ls="--", lw=1.2, zorder=4,
                           label=f"the paper: {100 * paper:.2f}%")
            ax.set_title(f"{TABLE_LABELS[method]}, 784-{H}-{H}-10"
                         + ("\n(σ did not learn: not a test of BBB)"
                            if sigma_fixed and method.startswith("bbb") else ""), fontsize=9)
            ax.legend(fontsize=9, loc="upper right")
        ax = row[-1]
        if ends:
            keys = list(ends)
            ys = _spread_labels([ends[k][1] for k in keys], 1.2)
            for k, y in zip(keys, ys):
                ax.annotate(END_LABELS[k], (ends[k][0], ends[k][1]),
                            xytext=(s["final_epochs"] * 1.03, y), textcoords="data",
                            fontsize=8, color=OKABE_ITO[k], va="center", ha="left",
                            annotation_clip=False,
                            arrowprops=dict(arrowstyle="-", color=OKABE_ITO[k], lw=0.5))
        ax.set_title(f"all four, 784-{H}-{H}-10\n(running mean over {smooth} epochs)",
                     fontsize=9)
        row[0].set_ylabel("test error (log scale)")
    ax = axes[0][0]
    ax.set_yscale("log")
    ax.set_ylim(lo / 1.05, hi * 1.05)
    ticks = [t / 1000 for t in (10, 12, 15, 20, 30, 50, 100, 200, 500)]  # apart on a log axis
    ax.yaxis.set_major_locator(FixedLocator([t for t in ticks if lo / 1.05 <= t <= hi * 1.05]))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{100 * v:g}%"))
    ax.set_xlim(0, s["final_epochs"])
    for ax in axes[-1]:
        ax.set_xlabel("epoch")

    def said(H):
        n = sorted(seeds.get(H, ()))
        if not n:
            return f"2×{H}: no run"
        k = "/".join(map(str, n))
        return (f"2×{H}: {k} seed{'s' if n[-1] > 1 else ''} per method"
                + (" (line: mean, band: range)" if n[-1] > 1 else " (no band)"))
    fig.suptitle("Test error during training, the paper's protocol (BBB: posterior-mean weights "
                 "μ). "
                 + "; ".join(said(H) for H in widths), fontsize=12)
    fig.tight_layout(rect=(0, 0, 0.95, 1))
    return fig


def spikes(s, widths=None, records=None, factor=1.5, window=25):
    """[(method, width, epoch, test error, the running median around it, how many epochs from
    it stay above ``factor`` times that median)]: per method and width,
    the epoch whose mean test error over seeds lies furthest above the median of the ``window``
    epochs around it, where that is more than ``factor`` times the median (a transient jump,
    not the trend)."""
    out = []
    for H in widths or s["widths"]:
        for method, recs in run_records(s, H, records).items():
            if not recs:
                continue
            n = min(len(r["history"]) for r in recs)
            y = [sum(r["history"][i]["test_error"] for r in recs) / len(recs) for i in range(n)]
            best = None
            for i in range(window, n):
                near = sorted(y[max(0, i - window):i] + y[i + 1:i + 1 + window])
                med = near[len(near) // 2]
                if y[i] > factor * med and (best is None or y[i] / med > best[3] / best[4]):
                    k = i
                    while k + 1 < n and y[k + 1] > factor * med:
                        k += 1
                    best = (TABLE_LABELS[method], H, i + 1, y[i], med, k - i + 1)
            if best:
                out.append(best)
    return out


def spike_words(s, records=None):
    """One sentence naming ``spikes`` (method, width, epoch, the jump against the median around
    it) and that the curve returns; '' without any."""
    sp = spikes(s, records=records)
    if not sp:
        return ""
    return ("**Jumps.** " + "; ".join(
        f"{m}, 2×{H}: {100 * v:.2f}% at epoch {e} for {k} epoch{'' if k == 1 else 's'} "
        f"(around it {100 * med:.2f}%)" for m, H, e, v, med, k in sp)
        + ". They make the smoothed panel's bumps; cause not investigated.")


END_LABELS = {"sgd": "plain network", "dropout": "dropout", "bbb_gaussian": "Gaussian prior",
              "bbb_mixture": "scale mixture"}  # Figure 2's labels at the curves' ends


def predictor_rows(s, widths=None, records=None):
    """(header, rows): for each BBB run of the campaign, the validation and test error of the
    posterior-mean weights and of the average over sampled networks, and which one validation
    chose. ``records``: see ``run_records``."""
    header = ["method", "width", "seed", "validation: mean / average", "chosen",
              "test: mean / average"]
    out = []
    for H in widths or s["widths"]:
        runs = run_records(s, H, records)
        for m in ("bbb_gaussian", "bbb_mixture"):
            for r in runs[m]:
                x = r["metrics"]
                out.append([LABELS[m], f"2×{H}", str(r["config"]["seed"]),
                            f"{100 * x['val_error_mean_weights']:.2f} / "
                            f"{100 * x['val_error_ensemble']:.2f}%",
                            "mean weights" if x["predictor"] == "mean_weights" else "average",
                            f"{100 * x['test_error_mean_weights']:.2f} / "
                            f"{100 * x['test_error_ensemble']:.2f}%"])
    return header, out


def predictor_words(s, widths=None, records=None):
    """One sentence from the same records: how often validation chose the posterior mean, and
    on how many runs the average of samples had the lower test error."""
    runs = [r for H in widths or s["widths"] for m, recs in run_records(s, H, records).items()
            if m.startswith("bbb") for r in recs]
    if not runs:
        return ""
    mean = sum(r["metrics"]["predictor"] == "mean_weights" for r in runs)
    avg_better = sum(r["metrics"]["test_error_ensemble"] < r["metrics"]["test_error_mean_weights"]
                     for r in runs)
    return (f"Validation chose the posterior mean for {mean} of {len(runs)} BBB runs; on the test "
            f"set the average of {runs[0]['metrics'].get('eval_samples', 'several')} sampled "
            f"networks had the lower error in {avg_better} of {len(runs)}.")


FAR_BELOW = 0.2  # "far below": the drift is at most this share of the yardstick


def curve_rows(rec, window=100, against=None, verdicts=()):
    """(header, rows, words) from summary ``rec``: per method and width, the seeds n, the mean
    over seeds of the test error over the last ``window`` epochs minus the ``window`` before,
    the epoch-to-epoch sd over the last ``window`` epochs (mean over seeds), and whether the
    change is flat within its noise (``curve_rule``); ``words``: the conclusion in one sentence,
    the largest change over all curves (the largest remaining drift) with its method and width,
    and how many curves are flat; with ``against`` (the half-width of the narrowest adjusted
    95% interval among the comparisons, a fraction), the drift against it, and "600 epochs are
    enough for these comparisons" only where the drift is at most ``FAR_BELOW`` of it;
    ``verdicts``: [(words, adjusted interval)] of the resolved comparisons, each said to be
    safe from the drift where its interval's nearer end lies further from 0 than twice the
    drift (a difference of two curves drifts by at most the sum of their drifts).
    (header, [], '') without curves."""
    header = ["method", "width", "seeds", "change (pp)", f"epoch-to-epoch sd, last {window} (pp)",
              "flat"]
    rows, moved, flats = [], [], 0
    for r in rec["rows"]:
        ends = [(a - b, sd) for a, b, sd in zip(r["test_error_last_100"],
                                               r["test_error_previous_100"],
                                               r.get("test_error_sd_last_100") or [])
                if a is not None and sd is not None]
        if not ends:
            continue
        d = sum(e[0] for e in ends) / len(ends)
        sd = sum(e[1] for e in ends) / len(ends)
        flat = abs(d) < 2 * sd * math.sqrt(2 / (window * len(ends)))
        flats += flat
        moved.append((abs(d), f"{TABLE_LABELS[r['key']]}, 2×{r['H']}"))
        rows.append([TABLE_LABELS[r["key"]], f"2×{r['H']}", str(len(ends)),
                     f"{100 * d:+.3f}".replace("-", "−"), f"{100 * sd:.3f}",
                     "yes" if flat else "no"])
    if not rows:
        return header, [], ""
    big, where = max(moved)
    text = (f"**Conclusion:** the largest drift over the last {window} epochs is {100 * big:.3f} "
            f"pp ({where}), {big * 10_000:.1f} of the 10,000 test images.")
    if against:
        text += (f" That drift is {big / against:.0%} of the narrowest half-width of our "
                 f"intervals ({100 * against:.3f} pp)" + (
                     ": 600 epochs are enough for these comparisons."
                     if big <= FAR_BELOW * against else
                     ": longer training could move the closest comparisons by about that much."))
    safe = [(w, ci) for w, ci in verdicts if min(abs(ci[0]), abs(ci[1])) > 2 * big
            and ci[0] * ci[1] > 0]
    if safe:
        one = len(safe) == 1
        text += (f" It cannot change {'the' if one else 'any'} resolved verdict"
                 f"{'' if one else 's'} (" + "; ".join(
                     f"{w}, [{100 * ci[0]:+.2f}, {100 * ci[1]:+.2f}]".replace("-", "−")
                     for w, ci in safe)
                 + f"): {'its' if one else 'each'} interval ends more than twice that drift "
                 "from 0.")
    return header, rows, text


def curve_rule(window=100):
    """The rule ``curve_rows`` applies, in words, to stand before its table."""
    return (f"**Are 600 epochs enough?** A curve is *flat* when its change (mean test error of "
            f"the last {window} epochs minus the {window} before) is below "
            f"2 · sd · √(2 / ({window} · n)): twice the standard error of that difference over n "
            "seeds (sd: epoch-to-epoch); strict, as it takes neighbouring epochs as independent.")


# --- the verdicts the plan declares (helpers.stats; plan.json "analysis") ---------------------

PAPER_TABLE1 = {"sgd": {400: 0.0183, 800: 0.0184, 1200: 0.0188},
                "dropout": {400: 0.0151, 800: 0.0133, 1200: 0.0136},
                "bbb_gaussian": {400: 0.0182, 800: 0.0199, 1200: 0.0204},
                "bbb_mixture": {400: 0.0136, 800: 0.0134, 1200: 0.0132}}  # Table 1, fractions
ORDERINGS = (("bbb_mixture", "bbb_gaussian", "scale mixture < Gaussian prior"),
             ("bbb_mixture", "sgd", "BBB (scale mixture) < SGD"),
             ("dropout", "sgd", "dropout < SGD"))
COMPARABLE = ("bbb_mixture", "dropout", 0.001)  # the plan's margin: 0.1 pp
ALPHA = 0.05


def _paired(rows, a, b, H):
    ra, rb = rows.get((a, H)), rows.get((b, H))
    if not ra or not rb:
        return None
    common = sorted(set(ra["seeds"]) & set(rb["seeds"]))
    if not common:
        return None
    va = dict(zip(ra["seeds"], ra["test_error"]))
    vb = dict(zip(rb["seeds"], rb["test_error"]))
    return [va[s] for s in common], [vb[s] for s in common]


def analysis(rows, alpha=ALPHA):
    """Return the plan's verdicts on ``rows`` (from ``summary``): per cell the comparison with
    the paper (two-sided t-interval), per width the paper's orderings as one Holm family, and
    BBB against dropout with the declared margin. Paired by seed; seeds are those both rows
    have."""
    from . import stats
    by = {(r["key"], r["H"]): r for r in rows}
    cells = {}
    for r in rows:
        paper = PAPER_TABLE1[r["key"]].get(r["H"])
        cells[f"{r['key']}_h{r['H']}"] = (
            None if not r["test_error"] or paper is None else
            stats.vs_published(r["test_error"], paper, alpha=alpha, scale=100, unit=" pp"))
    widths = sorted({r["H"] for r in rows})
    orderings, comparable = {}, {}
    for H in widths:
        fam = stats.ordering_family({claim: _paired(by, a, b, H) for a, b, claim in ORDERINGS},
                                    alpha=alpha)
        orderings[H] = fam
        pair = _paired(by, COMPARABLE[0], COMPARABLE[1], H)
        comparable[H] = None if pair is None or len(pair[0]) < 2 else stats.comparable(
            *pair, margin=COMPARABLE[2], alpha=alpha)
    return {"cells": cells, "orderings": orderings, "comparable": comparable, "alpha": alpha}


def write_summary(s):
    """Write paper_protocol/summary.json: the rows and the verdicts, and which run files they
    come from (no machine: each run's record names its own). The same inputs give the same bytes."""
    rows = summary(s)
    rec = {"protocol": "paper", "profile": s["profile"], "plan": "plan.json",
           "rows": rows, "analysis": analysis(rows),
           "inputs": sorted(f"runs/{n}.json" for r in rows for n in r["runs"])}
    path = root() / "summary.json"
    atomic_write_bytes(path, (json.dumps(rec, indent=1, default=str) + "\n").encode())
    return rec


def _pct(v, d=2):
    return "—" if v is None else f"{100 * v:.{d}f}%"


def _mean_sd(values):
    from . import stats
    if not values:
        return "not run yet"
    m = stats.mean_ci(values)
    return _pct(m["mean"]) if m["sd"] is None else f"{100 * m['mean']:.2f} ± {100 * m['sd']:.2f}%"


def table_rows(rec, ours=None):
    """Return (header, rows) of Table 1 under both protocols: per method and width the paper's
    value, the paper protocol's mean ± sd (seeds; the verdict against the paper), our recipe's
    (from table1.json ``ours``, same width; a row with a ``source`` names it), the chosen setting, the Monte-Carlo sd of one
    weight sample's test error beside the seed sd, whether the test curve still falls over
    its last 100 epochs, and the training time per seed."""
    header = ["method", "units", "paper (600 epochs)", "paper protocol: mean ± sd (seeds)",
              "vs the paper", "ours, Adam: mean ± sd (seeds, source)", "chosen (summed cost)",
              "MC sd of one sample", "last 100 epochs vs the 100 before", "train h / seed",
              "trained on"]
    ours_by = {(r["key"], r["H"]): r for r in (ours or {}).get("metrics", {}).get("rows", [])}
    cells = rec["analysis"]["cells"]
    out = []
    for r in rec["rows"]:
        paper = PAPER_TABLE1[r["key"]].get(r["H"])
        cell = cells.get(f"{r['key']}_h{r['H']}")
        seeds = (f"seed{'s' if len(r['seeds']) > 1 else ''} "
                 f"{', '.join(str(s) for s in r['seeds'])}" if r["seeds"] else "no seed yet")
        if r["pending_seeds"]:
            seeds += f"; pending {', '.join(str(s) for s in r['pending_seeds'])}"
        o = ours_by.get((r["key"], r["H"]))
        ours_txt = "—" if not o or not o["test_error"] else \
            f"{_mean_sd(o['test_error'])} ({len(o['test_error'])} seed" \
            f"{'s' if len(o['test_error']) > 1 else ''}" \
            f"{', ' + o['source'] if o.get('source') else ''})"
        mc = [v for v in r["mc_sd_single_sample"] if v is not None]
        mc_txt = "—" if not mc else f"{100 * sum(mc) / len(mc):.2f} pp"
        ends = [(a, b) for a, b in zip(r["test_error_last_100"], r["test_error_previous_100"])
                if a is not None]
        end_txt = "—" if not ends else ", ".join(f"{100 * (a - b):+.3f} pp" for a, b in ends)
        walls = r["train_wall_s"]
        wall = "—" if not walls else f"{sum(walls) / len(walls) / 3600:.1f}"
        out.append([r["label"], f"2×{r['H']}", _pct(paper),
                    f"{_mean_sd(r['test_error'])} ({seeds})",
                    "—" if cell is None else cell["verdict"] + (
                        f" (95% CI {100 * cell['ci'][0]:.2f}–{100 * cell['ci'][1]:.2f}%)"
                        if cell.get("ci") else " (one seed: no test)" if cell["n"] == 1 else ""),
                    ours_txt,
                    r["setting"] or "search running", mc_txt, end_txt, wall,
                    "; ".join(dict.fromkeys(r.get("hardware") or [])) or "—"])
    return header, out


def ordering_rows(rec):
    """Return (header, rows): the paper's orderings per width with the paired t-test's mean
    difference, 95% interval, Holm-adjusted p, the sign test's p, and the verdict; then BBB
    against dropout with the declared margin."""
    header = ["width", "claim", "seeds", "mean difference", "95% interval", "p (Holm)",
              "p (sign test)", "verdict"]
    out = []
    for H, fam in rec["analysis"]["orderings"].items():
        for claim, res in fam.items():
            tt = res["t_test"]
            if tt is None:
                out.append([f"2×{H}", claim, "0", "—", "—", "—", "—", res["verdict"]])
                continue
            ci = "—" if tt["ci"] is None else \
                f"[{100 * tt['ci'][0]:+.2f}, {100 * tt['ci'][1]:+.2f}] pp"
            out.append([f"2×{H}", claim, str(tt["n"]), f"{100 * tt['mean_diff']:+.2f} pp", ci,
                        "—" if res["p_holm"] is None else f"{res['p_holm']:.3f}",
                        f"{res['sign_test']['p']:.3f}", res["verdict"]])
        comp = rec["analysis"]["comparable"].get(H)
        if comp is not None:
            tt = comp["t_test"]
            ci = "—" if tt["ci"] is None else \
                f"[{100 * tt['ci'][0]:+.2f}, {100 * tt['ci'][1]:+.2f}] pp"
            out.append([f"2×{H}", f"BBB (scale mixture) ≈ dropout (±{100 * comp['margin']:.1f} pp)",
                        str(tt["n"]), f"{100 * tt['mean_diff']:+.2f} pp", ci, "—", "—",
                        comp["verdict"]])
    return header, out


def search_rows(s):
    """Return (header, rows): each method's search under the paper's protocol — its trials, the
    range of their validation errors after the screen, the continued trials, and the choice."""
    header = ["method", "trials", f"validation error after {s['screen_epochs']} epochs (range)",
              f"best {s['keep']} of the screen (in its order), after {s['continue_epochs']} "
              "epochs", "chosen"]
    out = []
    H0 = _search_width(s)
    for method in ("sgd", "dropout", "bbb_gaussian", "bbb_mixture"):
        recs = [read(search_path(c)) for c in screen_configs(method, H0, s)]
        done = [r for r in recs if r is not None]
        vals = [r["metrics"]["val_error"] for r in done if r["metrics"]["val_error"] is not None]
        diverged = sum(r["metrics"]["val_error"] is None for r in done)
        rng = "—" if not vals else f"{_pct(min(vals))} – {_pct(max(vals))}" + (
            f"; {diverged} diverged" if diverged else "")
        cont = []
        if len(done) == len(recs):
            for r in rank(done)[:s["keep"]]:
                c = replace(RunConfig.from_dict(r["config"]), epochs=s["continue_epochs"])
                cr = read(search_path(c))
                cont.append(f"{describe(r['config'])}: " + ("running" if cr is None else
                                                            _pct(cr["metrics"]["val_error"])))
        ch = chosen(s, method)
        out.append([LABELS[method], f"{len(done)} of {len(recs)}", rng, "; ".join(cont) or "—",
                    "search running" if ch is None else describe(ch["config"])])
    return header, out


EDGE_NAMES = {"lr": "learning rate", "dropout": "dropout rate", "prior_sigma": "prior σ",
              "pi": "π", "neg_log_sigma1": "−log σ1", "neg_log_sigma2": "−log σ2"}


def edge_words(s):
    """Where each method's choice lies in the design it screened, in words read from the
    search records: the settings at the smallest or largest value the design tried (numeric
    settings with three values or more)."""
    parts = []
    for method in PAPER_SPACES:
        rec = chosen(s, method)
        if rec is None:
            parts.append(f"{SHORT[method]}: search running")
            continue
        grid = {}
        for point in design(method, s["trials"]):
            for k, v in point.items():
                grid.setdefault(k, set()).add(v)
        edges = []
        for k, vals in grid.items():
            vals = sorted(v for v in vals if isinstance(v, (int, float)))
            v = rec["config"].get(k)
            if len(vals) >= 3 and v in (vals[0], vals[-1]):
                edges.append(f"{EDGE_NAMES.get(k, k)} {v:g} "
                             f"({'largest' if v == vals[-1] else 'smallest'} of {len(vals)})")
        parts.append(f"{SHORT[method]}: " + (", ".join(edges) if edges else "inside the design"))
    return ("**Where the choices lie** in what each search tried: " + "; ".join(parts) + ".")


def chosen_rows(s):
    """(header, rows, words): the settings each method's search chose under the paper's
    protocol, read from the search records, in the columns of helpers.table1.recipe_rows (the
    learning rate with where it lies in the rates the search tried, unless every method chose
    the largest: ``words`` then says so once), and in ``words`` how they
    were chosen (the screen, the continuation, the tuning seed, from settings ``s``) and whether
    every method chose the largest learning rate it tried. Methods still searching are left
    out; ('', [], '') when none has chosen."""
    header = ["method", "learning rate", "epochs", "BBB: samples per step, ρ₀",
              "dropout rate or prior", "start"]
    widths = " and ".join(f"2×{W}" for W in s["widths"])
    rows, edges = [], _lr_edges(s)
    every_top = bool(edges) and all(e == "largest" for e in edges.values())
    for method in PAPER_SPACES:
        rec = chosen(s, method)
        if rec is None:
            continue
        c = rec["config"]
        lrs = sorted({p["lr"] for p in design(method, s["trials"]) if "lr" in p})
        where = (f" ({edges[method]} of {len(lrs)})" if edges.get(method) and not every_top
                 else "")  # every method at the top: ``words`` says it once
        bbb = method.startswith("bbb")
        setting = ("—" if method == "sgd" else f"{c['dropout']:g}" if method == "dropout" else
                   f"N(0, s²), −log s = {-math.log(c['prior_sigma']):.0f}"
                   if method == "bbb_gaussian" else
                   f"π = {c['pi']:g}, −log σ₁ = {c['neg_log_sigma1']:g}, "
                   f"−log σ₂ = {c['neg_log_sigma2']:g}")
        rows.append([TABLE_LABELS[method], f"{c['lr']:g}{where}, constant",
                     str(s["final_epochs"]),
                     f"{c['samples']}, {c['rho_init']:g}".replace("-", "−") if bbb else "—",
                     setting, "random"])
    if not rows:
        return "", [], ""
    top = [m for m, e in edges.items() if e == "largest"]
    words = (f"**The paper's protocol**, chosen on validation at 2×{_search_width(s)}: per method {s['trials']} settings trained "
             f"{s['screen_epochs']} epochs, the best {s['keep']} continued to "
             f"{s['continue_epochs']}, the best of those trained {s['final_epochs']} epochs at "
             f"{widths}. ")
    words += grid_words(s) + " "
    if edges and len(top) == len(edges):
        words += "Every method chose the largest learning rate its search tried"
    else:
        words += (f"{len(top)} of {len(edges)} methods chose the largest learning rate their "
                  "search tried")
    paper_top = max(PAPER_SPACES["dropout"]["lr"])
    if top and all(max(p["lr"] for p in design(m, s["trials"])) == paper_top for m in top):
        words += (f", {_power(paper_top)}, the paper's largest: a larger one would leave the "
                  "paper's protocol")
    return header, rows, words + "."


def _power(x):
    """10⁻³ for 0.001; x itself (:g) when it is not a power of ten."""
    k = math.log10(x)
    sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return f"10{str(round(k)).translate(sup)}" if abs(k - round(k)) < 1e-9 else f"{x:g}"


def grid_words(s):
    """What each method's screen tried (``design``), in words: the plain network's learning
    rates (its one setting), the paper's three rates crossed with dropout's rate or the
    Gaussian prior's s (3 × 3), and the scale mixture's four settings in an L9 array."""
    sgd = sorted(p["lr"] for p in design("sgd", s["trials"]))
    lrs = sorted(PAPER_SPACES["dropout"]["lr"])
    three = ", ".join(_power(x) for x in reversed(lrs))
    drop = ", ".join(f"{x:g}" for x in PAPER_SPACES["dropout"]["dropout"])
    logs = ", ".join(f"{abs(math.log(x)):.0f}" for x in PAPER_SPACES["bbb_gaussian"]["prior_sigma"])
    return (f"Tried: the plain network {len(sgd)} learning rates, {_power(sgd[0])} to "
            f"{_power(sgd[-1])}; the others the paper's rates ({three}) × dropout's rate "
            f"({drop}) or the Gaussian prior's −log s ({logs}), or × π, −log σ₁, −log σ₂ (the "
            "paper's values) in an L9 array.")


def _lr_edges(s):
    """{method: 'largest' / 'smallest' / None} for the learning rate each finished search chose,
    against the learning rates its design tried (methods still searching are left out)."""
    out = {}
    for method in PAPER_SPACES:
        rec = chosen(s, method)
        if rec is None:
            continue
        lrs = sorted({p["lr"] for p in design(method, s["trials"]) if "lr" in p})
        v = rec["config"].get("lr")
        out[method] = (None if len(lrs) < 2 or v not in (lrs[0], lrs[-1]) else
                       "largest" if v == lrs[-1] else "smallest")
    return out


def cost_takeaway(s):
    """The takeaway on section 7's summed cost: an argument, not a test, and where the chosen
    learning rates lie in their grids (read from the search records)."""
    edges = _lr_edges(s)
    top = [m for m, e in edges.items() if e == "largest"]
    low = [m for m, e in edges.items() if e == "smallest"]
    if not edges:
        where = "Its searches are still running."
    elif len(top) == len(edges):
        where = ((f"All {len(edges)} methods chose" if len(edges) > 1 else
                  f"The one finished search ({SHORT[top[0]]}) chose")
                 + " the largest learning rate their search tried, so a better rate may lie "
                 "above the largest one tried (section 7's edge line).")
    elif top or low:
        where = ("At an edge of the learning rates their search tried: "
                 + "; ".join(f"{SHORT[m]} (the {e})" for m, e in edges.items() if e)
                 + f", of {len(edges)} methods (section 7's edge line).")
    else:
        where = "Every chosen learning rate lies inside the rates its search tried."
    return ("- Section 7 trains on the paper's *summed* cost, the reading under which, we argue, "
            "the paper's learning rates mean what they meant; no run on the averaged cost tests "
            "that argument. " + where + " A 600-epoch run takes hours on a CPU; the verdicts are "
            "those of the seeds finished.")


def _interval(cell):
    lo, hi = cell["ci"]
    return f"[{100 * lo:.2f}, {100 * hi:.2f}]%, {100 * (hi - lo):.2f} pp wide"


def what_it_shows(rec, plan=None):
    """Return Markdown that states, from ``rec`` (summary.json) and the plan, where each width
    stands: a direct answer to the notebook's question, the scale mixture against the paper
    and the plan's goal (with the interval behind the verdict word), how it compares seed by
    seed with the other methods, whether its test curve still falls, and the orderings."""
    paper_mix = PAPER_TABLE1["bbb_mixture"]
    lines = []
    by = {(r["key"], r["H"]): r for r in rec["rows"]}
    for H in sorted({r["H"] for r in rec["rows"]}):
        mix = by.get(("bbb_mixture", H))
        paper = paper_mix.get(H)  # None at a width the paper did not run (the smoke profile's)
        goal = None if paper is None else paper + 0.001  # the plan's goal: the paper + 0.1 pp
        done = [k for k in ("sgd", "dropout", "bbb_gaussian", "bbb_mixture")
                if by.get((k, H)) and by[(k, H)]["test_error"]]
        if not mix or not mix["test_error"]:
            lines.append(f"- **2×{H}**: the scale mixture's runs are not finished yet "
                         f"({len(done)} of 4 methods have a finished seed), so the question is "
                         "open at this width.")
            continue
        n = len(mix["test_error"])
        m = sum(mix["test_error"]) / n
        if goal is None:
            answer = (f"**2×{H}** (a width the paper did not run): the scale mixture averages "
                      f"{_pct(m)} over {n} seed{'s' if n > 1 else ''}.")
        else:
            answer = (f"**Does BBB, trained the paper's way, reach the paper's number at "
                      f"2×{H}?** " + ("Yes, at these seeds: " if m <= goal else
                                      "Not at these seeds: ")
                      + f"the scale mixture averages {_pct(m)} over {n} seed"
                      f"{'s' if n > 1 else ''} against the paper's {_pct(paper)}, "
                      + (f"within the goal of {_pct(goal)}" if m <= goal else
                         f"{100 * (m - goal):.2f} pp above the goal of {_pct(goal)}")
                      + " (the paper + 0.1 pp, declared in the plan before any run).")
        seedwise = []
        for other in ("bbb_gaussian", "dropout", "sgd"):
            o = by.get((other, H))
            if not o or not o["test_error"]:
                continue
            pairs = [(a, b) for s_, a in zip(mix["seeds"], mix["test_error"])
                     for t_, b in zip(o["seeds"], o["test_error"]) if s_ == t_]
            if pairs:
                worse = sum(a > b for a, b in pairs)
                seedwise.append(f"{SHORT[other]} on {worse} of {len(pairs)}")
        cell = rec["analysis"]["cells"].get(f"bbb_mixture_h{H}")
        verdict = ""
        if cell is not None:
            verdict = f" The plan's word against the paper: *{cell['verdict']}*"
            if cell.get("ci") and cell["verdict"].startswith("matches"):
                verdict += (f", meaning that the paper's value lies inside the 95% interval of "
                            f"the mean, {_interval(cell)}: at {n} seeds that word says little "
                            "by itself")
            elif cell.get("ci"):
                verdict += (f": the paper's value lies outside the 95% interval of the mean, "
                            f"{_interval(cell)}")
            verdict += "."
        ends = [(a - b, sd) for a, b, sd in zip(
            mix["test_error_last_100"], mix["test_error_previous_100"],
            mix.get("test_error_sd_last_100") or [None] * n) if a is not None]
        trend = "" if not ends else (
            " Its test curve at the end (the mean of epochs 501–600 minus that of 401–500, "
            "per seed, against the epoch-to-epoch sd over the last 100 epochs): "
            + ", ".join(f"{100 * d:+.3f} pp" + ("" if sd is None else f" (sd {100 * sd:.2f} pp)")
                        for d, sd in ends)
            + (": flat within its noise." if all(sd is not None and abs(d) < sd
                                                 for d, sd in ends) else "."))
        fam = rec["analysis"]["orderings"].get(str(H)) or rec["analysis"]["orderings"].get(H)
        words = "" if not fam else " The paper's orderings, tested as the plan declares: " + \
            "; ".join(f"{k}: *{v['verdict']}*" for k, v in fam.items()) + "."
        comp = rec["analysis"]["comparable"].get(str(H)) or rec["analysis"]["comparable"].get(H)
        if comp and comp["t_test"] and comp["t_test"]["ci"]:
            lo, hi = comp["t_test"]["ci"]
            margin = comp["margin"]
            where = ("lies entirely above" if lo > margin else "lies entirely below" if
                     hi < -margin else "is not inside")
            words += (f" Against dropout, the paired difference's 95% interval "
                      f"[{100 * lo:+.2f}, {100 * hi:+.2f}] pp {where} the declared margin of "
                      f"±{100 * margin:.1f} pp (*{comp['verdict']}*).")
        predictors = sorted(set(mix.get("predictor") or []))
        pred = ("" if not predictors else " Its test errors use the predictor each run chose on "
                "validation (" + ", ".join(p.replace("_", " ") for p in predictors) + ").")
        lines.append(f"- {answer} Seed by seed, it is worse than " + ("; ".join(seedwise) or "—")
                     + f" seeds ({len(done)} of 4 methods have a finished seed).{verdict}{trend}"
                     f"{words}{pred}")
    speeds = speed_lines(rec)
    if speeds:
        lines.append("- Measured speed of the finished runs (training only, per-epoch "
                     "evaluation excluded; each run shared its machine with one to three other "
                     "runs, so read these as upper bounds):\n" + "\n".join(f"  - {x}" for x in speeds))
    if plan:
        cost = plan["estimate"]["per_run_cpu_h"]
        lines.append(f"- Cost measured before the runs (plan.json): a 600-epoch BBB run takes "
                     f"{cost['bbb_mixture_h400']} CPU-hours at 2×400 and "
                     f"{cost['bbb_mixture_h1200']} at 2×1200 on one thread of the machine "
                     f"that wrote the plan ({(plan.get('machine') or {}).get('cpu') or 'a CPU'}"
                     "); the speeds above say what the runs took.")
    return "**What it shows.**\n\n" + "\n".join(lines)


def takeaway(rec):
    """Return a one-bullet Markdown takeaway of the paper's protocol from ``rec`` (summary.json):
    per width with a finished scale mixture, its mean against the paper's value and the
    orderings' verdict words."""
    by = {(r["key"], r["H"]): r for r in rec["rows"]}
    parts = []
    for H in sorted({r["H"] for r in rec["rows"]}):
        mix = by.get(("bbb_mixture", H))
        if not mix or not mix["test_error"]:
            continue
        n = len(mix["test_error"])
        fam = rec["analysis"]["orderings"].get(str(H)) or rec["analysis"]["orderings"].get(H)
        paper = PAPER_TABLE1["bbb_mixture"].get(H)
        parts.append(f"at 2×{H} ({n} seed{'s' if n > 1 else ''}) the scale mixture reaches "
                     f"{_pct(sum(mix['test_error']) / n)}"
                     + ("" if paper is None else f" against the paper's {_pct(paper)}")
                     + ("" if not fam else "; the paper's orderings: " + "; ".join(
                         f"{k}: *{v['verdict']}*" for k, v in fam.items())))
    if not parts:
        return "- Trained as the paper says (section 7): no scale-mixture run has finished yet."
    return ("- Trained as the paper says (plain SGD on the summed cost, random start, 600 epochs; "
            "section 7): " + "; ".join(parts) + ".")
