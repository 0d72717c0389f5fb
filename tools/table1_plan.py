"""Table 1 under analysis plan v1 (results/01_mnist_classification/analysis_plan.json).

    python tools/table1_plan.py run      [--profile default|smoke] [--widths 400] [--threads 1]
                                         [--max-jobs N] [--plan PATH (smoke only)]
    python tools/table1_plan.py status   [--profile ...]
    python tools/table1_plan.py summary  [--profile ...]   # write summary.json from what is done
    python tools/table1_plan.py estimate [--profile ...] [--threads 1]

``run`` executes the plan (``make table1 PROTOCOL=plan_v1 [WIDTH=400] JOBS=2`` starts JOBS of
them, which share the campaign through claims): the searches (every method's full grid at every
width on the tuning seed, validation only), the chosen recipes on the reported seeds, the
controls where the chosen scale-mixture recipe is warm-started, then summary.json with the plan's
tests. It resumes: a finished run is read back, an unfinished one continues from its per-epoch
checkpoint, so a killed process is simply started again. It refuses to run when the plan is
missing or fails validation, and, in the default profile, when the plan differs from its
committed version or comes after a file it governs. Results: results/01_mnist_classification/
plan_v1/ (default profile only; smoke: build/smoke/...).

``estimate`` measures seconds per epoch of every method at the plan's smallest and largest width
on one thread (a 2-epoch run on seed 10, reserved for checks; 800 interpolated by parameter
count) and writes plan_v1/estimate.json: the CPU-hours per width and stage. It is never written
into analysis_plan.json.
"""
import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MEASURE_SEED = 10  # seeds 10-99: checks outside the notebooks (analysis_plan.json, "reserved")


def _settings(args):
    from helpers import table1_plan as T
    if args.plan and args.profile == "default":
        sys.exit("the default profile runs under the committed plan only (no --plan)")
    try:
        plan = T.load_plan(args.plan, committed=args.profile == "default")
        return T.settings(plan, args.profile), plan
    except T.PlanError as err:
        sys.exit(f"table1_plan: {err}")


def _widths(s, args):
    if not args.widths:
        return None
    stands_for = {H: h for h, H in s["plan_width"].items()}  # smoke: a plan width's tiny one
    widths = [w if w in s["widths"] else stands_for.get(w) for w in args.widths]
    bad = [w for w, h in zip(args.widths, widths) if h is None]
    if bad:
        sys.exit(f"widths {bad} are not in the plan's {sorted(stands_for)}")
    return widths


def cmd_run(args):
    from helpers import table1_plan as T
    s, _ = _settings(args)
    widths = _widths(s, args)
    n = T.drive(s, widths=widths, log=lambda m: print(m, flush=True), poll_s=args.poll,
                max_jobs=args.max_jobs, threads=args.threads)
    _, remaining, blocked = T.plan_jobs(s, widths)
    print(f"ran {n} jobs; {remaining} still to do" + "".join(f"\nblocked: {b}" for b in blocked))
    if remaining == 0 and T.plan_jobs(s)[1] == 0:
        print(f"wrote {T.root() / 'summary.json'}")


def cmd_status(args):
    from helpers import table1_plan as T
    s, _ = _settings(args)
    widths = _widths(s, args) or s["widths"]
    ready, remaining, blocked = T.plan_jobs(s, widths)
    stages = {}
    for j in ready:
        stages[j.stage] = stages.get(j.stage, 0) + 1
    print(f"profile {s['profile']}: {T.root()}\nready: {stages or 'none'}; still to do: "
          f"{remaining}")
    for b in blocked:
        print(f"blocked: {b}")
    for H in widths:
        rows = {r["key"]: r for r in T.rows(s, H)}
        for m in s["methods"]:
            configs, later = T.search_configs(s, H, m)
            done = sum(T.trial_path(H, m, T.TRIAL.name(c)).exists() for c in configs)
            ch = T.chosen(s, H, m)
            what = "-" if ch is None else f"{ch['name']} ({ch['epochs']} epochs)"
            print(f"2x{H:<5d} {m:13s} search {done}/{len(configs) + later}  chosen: {what}")
        for key, r in rows.items():
            print(f"2x{H:<5d} {key:17s} seeds done {r['seeds']}, pending {r['pending_seeds']}")


def cmd_summary(args):
    from helpers import table1_plan as T
    s, _ = _settings(args)
    rec = T.write_summary(s, args.plan)
    for H, a in rec["analysis"].items():
        if a["status"] != "done":
            print(f"2x{H}: {a['status']}")
            continue
        for k, c in a["cells"].items():
            print(f"2x{H} {k}: {c['verdict']}")
        for k, c in a["orderings"].items():
            print(f"2x{H} {k}: {c['verdict']}")
        print(f"2x{H} {a['comparable']['pair']}: {a['comparable']['verdict']}")
        for k, c in a.get("controls", {}).items():
            print(f"2x{H} {k} (control): {c['verdict']}")
    print(f"wrote {T.root() / 'summary.json'} (complete: {rec['complete']})")


def measure(s, threads, widths):
    """Return {(cost key, width): seconds per epoch}: a 2-epoch run of each method's costliest
    kind of configuration (the scale mixture with 1 and with 2 weight samples) on seed 10,
    validation and test evaluated after every epoch as in the final runs (an upper bound for the
    searches, which evaluate validation only)."""
    from dataclasses import replace

    import torch

    import helpers as H
    from helpers import table1_plan as T
    from helpers.classification import RunConfig, run
    torch.set_num_threads(threads)
    data = H.load_mnist(scale="paper", n_train=s["n_train"], n_test=s["n_eval"])
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["BBB_CHECKPOINT_DIR"] = tmp
        for width in widths:
            kinds = {}
            for method in s["methods"]:
                space = T.space(s, width, method, {"lr": 1e-3, "lr_decay": 1.0})
                for c in T.expand(space, MEASURE_SEED, T.TRIAL):
                    cfg = RunConfig.from_dict(c)
                    if cfg.init_from is not None:  # the cost of its own epochs: a random start
                        cfg = replace(cfg, init_from=None, init_lr=None, init_lr_decay=None,
                                      mu_init=s["mu_uniform"])
                    kinds.setdefault(T.cost_key(cfg), cfg)
            for key, cfg in kinds.items():
                cfg = replace(cfg, epochs=2, seed=MEASURE_SEED)
                t0, c0 = time.perf_counter(), time.process_time()
                _, rec = run(cfg, data, notebook="measure", eval_samples=s["eval_samples"],
                             checkpoint_every=1)
                cpu = (time.process_time() - c0) / 2
                total = (time.perf_counter() - t0) / 2
                train = rec["history"][-1]["wall_s"] / 2
                out[(key, width)] = {"cpu_s_per_epoch": round(cpu, 2),
                                     "wall_s_per_epoch": round(total, 2),
                                     "train_wall_s_per_epoch": round(train, 2)}
                print(f"{key} 2x{width}: {cpu:.2f} CPU s/epoch, {total:.2f} s wall "
                      f"({train:.2f} s training)", flush=True)
        del os.environ["BBB_CHECKPOINT_DIR"]
    return out


def _params(width):
    return 784 * width + width * width + 10 * width + 2 * width + 10


def cmd_estimate(args):
    from helpers import table1_plan as T
    from helpers.utils import atomic_write_bytes, machine_info
    s, _ = _settings(args)
    lo, hi = min(s["widths"]), max(s["widths"])
    measured = measure(s, args.threads, [lo, hi])
    keys = sorted({k for k, _ in measured})
    spe, wall = {}, {}
    for width in s["widths"]:
        for out, what in ((spe, "cpu_s_per_epoch"), (wall, "wall_s_per_epoch")):
            if width in (lo, hi):
                out[width] = {k: measured[(k, width)][what] for k in keys}
            else:  # linear in the number of weights between the two measured widths
                f = (_params(width) - _params(lo)) / (_params(hi) - _params(lo))
                out[width] = {k: round(measured[(k, lo)][what] * (1 - f)
                                       + measured[(k, hi)][what] * f, 2) for k in keys}
    per_width = {str(w): T.estimate(s, spe[w], w) for w in s["widths"]}
    per_width_wall = {str(w): T.estimate(s, wall[w], w) for w in s["widths"]}
    total = round(sum(v["total_cpu_h_at_most"] for v in per_width.values()), 2)
    total_wall = round(sum(v["total_cpu_h_at_most"] for v in per_width_wall.values()), 2)
    rec = {"plan": "results/01_mnist_classification/analysis_plan.json", "profile": args.profile,
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "measured": {"seed": MEASURE_SEED, "epochs": 2, "threads": args.threads,
                        "widths": [lo, hi],
                        "seconds_per_epoch": {f"{k}_h{w}": v for (k, w), v in measured.items()},
                        "how": "CPU time (this process, one torch thread) and wall time of a "
                               "2-epoch run / 2: training, validation and test error after every "
                               "epoch, the final predictive evaluation with the plan's weight "
                               "samples; the scale mixture with 1 and 2 samples",
                        "interpolated_cpu_s": {str(w): spe[w] for w in s["widths"]
                                               if w not in (lo, hi)},
                        "interpolation": "seconds per epoch linear in the number of weights "
                                         "between the two measured widths"},
           "machine": machine_info(),
           "load_average_1_5_15_min": [round(v, 2) for v in os.getloadavg()],
           "shared_machine": f"measured while other training processes ran on this machine's "
                             f"{os.cpu_count()} cores: the CPU seconds are the estimate (what "
                             "the runs need); the wall seconds, inflated by the sharing, are an "
                             "upper bound on a machine as busy as this one",
           "cpu_hours": per_width, "total_cpu_h_at_most": total,
           "hours_from_wall_time_on_this_busy_machine": per_width_wall,
           "total_h_from_wall_time_at_most": total_wall,
           "wall_h_two_processes_at_least": round(total / 2, 2),
           "how": "searches: every trial of every grid to its last epoch (warm-started trials "
                  "init_epochs fewer) plus the warm start's source network at each width, "
                  "exactly; final runs and controls: upper bounds, each chosen run as long as "
                  "its search allowed and the costliest configuration of each method chosen "
                  "(controls only where the chosen scale mixture is warm-started)"}
    path = T.root() / "estimate.json"
    atomic_write_bytes(path, (json.dumps(rec, indent=1) + "\n").encode())
    print(json.dumps(per_width, indent=1))
    print(f"total at most {total} CPU-hours ({total_wall} h from the wall times); wrote {path}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["run", "status", "summary", "estimate"])
    ap.add_argument("--profile", default="default", choices=["default", "smoke"])
    ap.add_argument("--plan", default=None,
                    help="another plan file (smoke profile only; the default profile runs under "
                         "the committed plan)")
    ap.add_argument("--widths", type=int, nargs="*", default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--poll", type=float, default=30.0,
                    help="seconds between looks while another process trains what is next")
    ap.add_argument("--max-jobs", type=int, default=None,
                    help="stop after this many jobs (the rest resumes on the next run)")
    args = ap.parse_args(argv)
    from helpers.utils import use_profile_outputs
    use_profile_outputs(args.profile)  # only `default` writes the committed results
    {"run": cmd_run, "status": cmd_status, "summary": cmd_summary,
     "estimate": cmd_estimate}[args.command](args)


if __name__ == "__main__":
    main()
