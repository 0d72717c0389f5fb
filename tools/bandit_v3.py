"""The mushroom bandit's plan v3 (notebook 03, the paper's Figure 6): declare it, run it, see where
it stands (``helpers.bandit_campaign``).

    python tools/bandit_v3.py plan              # write results/03_contextual_bandit/plan_v3.json
    python tools/bandit_v3.py run [--part 0/1]  # screen -> confirm -> edge -> why -> reported
    python tools/bandit_v3.py status

``plan`` writes the declaration; commit it before ``run``. ``run`` refuses to start unless the
committed plan is the plan the code builds (a changed plan is a new version), then works through
the stages in order, each stage's choice read from the tuning seeds' records only. With
``--part i/n`` a process takes every n-th job of a stage (two processes: 0/2 and 1/2) and waits
for the other parts' records before the next stage. After the screen it stops if the screen cost
more than the plan's budget check allows; before the why and reported stages it pins the tuning's
choices (plan_v3_runs/choice.json, its SHA-256 in every later record). Each run's record is written atomically under
results/03_contextual_bandit/plan_v3_runs/ as it finishes; batched paper-tier rows checkpoint
every 1,000 steps (git-ignored checkpoints/), so a killed process resumes where it stopped.
"""
import argparse
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers import bandit_campaign as C  # noqa: E402
from helpers.utils import atomic_write_bytes, machine_info, results_dir  # noqa: E402


def declared_path():
    return results_dir() / C.B.NB / "plan_v3.json"


def same_plan(declared, built):
    """True when a declared plan is the code's plan (the declaration's own record aside)."""
    return {k: v for k, v in declared.items() if k != "declared"} == \
        json.loads(json.dumps(built))


def cmd_plan(args):
    path = declared_path()
    if path.exists() and not args.force:
        sys.exit(f"{path} exists: a plan changes only as a new version (--force, then say why in "
                 "docs/choices.md)")
    pl = C.plan("default")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    pl["declared"] = {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                      "code_commit_before": commit, "machine": machine_info()}
    atomic_write_bytes(path, (json.dumps(pl, indent=1) + "\n").encode())
    e = pl["estimate"]
    print(json.dumps({k: v["cpu_h"] for k, v in e["parts"].items()}, indent=1))
    print(f"total {e['total_cpu_h']} CPU-h; wrote {path}: commit it before `run`")


def load_declared():
    path = declared_path()
    if not path.exists():
        sys.exit(f"no {path}: run `python tools/bandit_v3.py plan` and commit it first")
    declared = json.loads(path.read_text())
    if not same_plan(declared, C.plan("default")):
        sys.exit(f"{path} is not the plan helpers/bandit_campaign.py builds: the code changed "
                 "after the declaration. Restore the code, or declare a new version")
    return declared


def stage_done(pl, stage, choice):
    return all(C.record_path(pl, r).exists() for r in C.stage_runs(pl, stage, choice))


def wait_for(pl, stage, choice, poll_s):
    while not stage_done(pl, stage, choice):
        missing = sum(not C.record_path(pl, r).exists() for r in C.stage_runs(pl, stage, choice))
        print(f"{time.strftime('%H:%M:%S')} waiting for {missing} {stage} runs of other parts",
              flush=True)
        time.sleep(poll_s)


def pin_choice(pl, choice):
    """Write the tuning's choices to plan_v3_runs/choice.json (once; a different choice later is
    an error) and return the file's SHA-256, which every why and reported record carries."""
    path = C.records_dir(pl) / "choice.json"
    text = (json.dumps(choice, indent=1, sort_keys=True) + "\n").encode()
    if path.exists() and path.read_bytes() != text:
        sys.exit(f"{path} holds another choice than the records give now: a tuning record "
                 "changed after the choice was pinned; find out why before running on")
    if not path.exists():
        atomic_write_bytes(path, text)
    return hashlib.sha256(text).hexdigest()


def screen_over_budget(pl, recs):
    """Return (measured, estimated, factor) CPU-hours of the screen."""
    got = sum(r["cpu_s"] for r in recs if r["stage"] == "screen") / 3600
    est = sum(v["cpu_h"] for k, v in pl["estimate"]["parts"].items() if k.endswith("/screen"))
    return got, est, pl["tuning"]["budget_check"]


def cmd_run(args):
    from helpers.data import load_mushroom
    pl = load_declared()
    i, n = (int(v) for v in args.part.split("/"))
    if not 0 <= i < n:
        sys.exit(f"--part {args.part}: need i/n with 0 <= i < n")
    x, p = load_mushroom(download=False)
    log = lambda m: print(f"{time.strftime('%H:%M:%S')} {m}", flush=True)  # noqa: E731
    choice, extra = None, {}
    factor = C._profile_numbers("default")["screen_budget_factor"]
    for stage in ("screen", "confirm", "edge", "why", "reported"):
        if stage == "confirm":
            got, est, _ = screen_over_budget(pl, C.load_records(pl))
            log(f"screen: {got:.2f} CPU-h measured, {est:.2f} estimated")
            if got > factor * est:
                sys.exit(f"the screen cost {got:.2f} CPU-h, more than {factor} x its estimate "
                         f"{est:.2f}: the plan stops here (tuning.budget_check); re-plan")
            choice = C.choose(pl, C.load_records(pl), "screen")
        elif stage == "edge":
            choice = C.choose(pl, C.load_records(pl), "confirm")
        elif stage == "why":
            recs = C.load_records(pl)
            choice = C.choose(pl, recs, "edge")
            pinned = {s: C.choose(pl, recs, s) for s in ("screen", "confirm", "edge")}
            extra = {"choice_sha256": pin_choice(pl, pinned)}
        log(f"{stage}: part {i}/{n} of {len(C.stage_runs(pl, stage, choice))} runs")
        got = C.run_stage(pl, stage, x, p, choice=choice, part=(i, n), extra=extra, log=log)
        log(f"{stage}: ran {got['ran']}, found {got['skipped']} finished")
        wait_for(pl, stage, choice, args.poll)
    log("plan v3 finished")


def cmd_status(args):
    pl = load_declared()
    recs = C.load_records(pl)
    cpu = sum(r["cpu_s"] for r in recs) / 3600
    print(f"{len(recs)} records, {cpu:.2f} CPU-h measured; plan estimate "
          f"{pl['estimate']['total_cpu_h']} CPU-h")
    choice = None
    for stage in ("screen", "confirm", "edge", "why", "reported"):
        try:
            if stage == "confirm":
                choice = C.choose(pl, recs, "screen")
            elif stage == "edge":
                choice = C.choose(pl, recs, "confirm")
            elif stage == "why":
                choice = C.choose(pl, recs, "edge")
        except ValueError:
            print(f"{stage}: waits for the stage before")
            break
        runs = C.stage_runs(pl, stage, choice)
        done = sum(C.record_path(pl, r).exists() for r in runs)
        print(f"{stage}: {done} of {len(runs)} runs")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--force", action="store_true")
    p = sub.add_parser("run")
    p.add_argument("--part", default="0/1", help="i/n: this process's share of each stage")
    p.add_argument("--poll", type=float, default=120.0, help="seconds between checks while "
                   "waiting for the other parts")
    sub.add_parser("status")
    args = ap.parse_args(argv)
    {"plan": cmd_plan, "run": cmd_run, "status": cmd_status}[args.cmd](args)


if __name__ == "__main__":
    main()
