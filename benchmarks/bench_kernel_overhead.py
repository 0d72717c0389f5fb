"""The Bayes-by-Backprop step's overhead over a deterministic step: this tree's C kernels against
those of a baseline commit (default fb7b4ce), side by side on the same machine.

Overhead = (BBB step time / deterministic step time) - 1, both timed in the same process,
interleaved step by step. MLP 784-H-H-10, batch 128, 1 thread, one weight sample; the BBB step
is one minibatch step of ``helpers.fit`` with the paper's estimator (scale-mixture prior,
Monte-Carlo KL, C kernels: the ``helpers_paper`` row of bench_step.py). Two optimisers:
  - ``adam``: fused Adam (helpers.make_optimizer, lr 1e-3) for both networks (what fit uses);
  - ``sgd``: torch.optim.SGD (lr 1e-3, no momentum) for both (the paper-protocol campaign's).

Each version runs in its own subprocess with its own ``helpers`` package (the baseline's is
``git archive <commit> helpers`` unpacked under build/baseline_<commit>/; its kernels compile
into the usual cache under their own source hash), the benchmark code (step builders of
bench_step.py) being this tree's. Subprocesses alternate baseline / current for ``--rounds``
rounds, so both versions sample the machine's load alike; each round's overhead is the ratio of
that subprocess's medians, and a version's overhead is the median over its rounds. The cut is
1 - overhead(current) / overhead(baseline).

    python benchmarks/bench_kernel_overhead.py            # H = 400 and 1200, 6 rounds
    python benchmarks/bench_kernel_overhead.py --quick    # seconds (CI): H = 32, 2 rounds

Writes results/benchmarks/kernel_overhead.json (``--quick``: build/benchmarks/
kernel_overhead_quick.json): {"machine": {..., "load_avg_before", "load_avg_after",
"load_note"}, "settings": {...}, "versions": {"baseline": {"tree", "commit"}, "current": {...}},
"rows": [{"H", "version", "optimizer", "det_ms", "bbb_ms", "overhead", "round_overheads"}],
"cut": [{"H", "optimizer", "overhead_baseline", "overhead_current", "cut_percent"}],
"notes": [...]}. Where the baseline commit cannot be read (a shallow clone), the baseline is
this tree too (current vs current) and a note says so.
"""
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, load_avg, load_note, parser, settle, write  # noqa: E402

BASELINE = "fb7b4ce"
IMPLS = ("det_adam", "bbb_adam", "det_sgd", "bbb_sgd")
FULL = dict(H=[400, 1200], rounds=6, steps=10, warmup=3, threads=1)
QUICK = dict(H=[32], rounds=2, steps=3, warmup=1, threads=1)


def baseline_tree(commit):
    """Return (path of the baseline's tree holding its ``helpers`` package, note or None):
    ``git archive <commit> helpers`` unpacked under build/baseline_<commit>/ (once), or this
    tree with a note when the commit cannot be read."""
    target = ROOT / "build" / f"baseline_{commit}"
    if (target / "helpers" / "_bbb_kernels.c").exists():
        return target, None
    target.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "helpers"],
                             capture_output=True)
    if archive.returncode != 0:
        return ROOT, (f"baseline commit {commit} unavailable here "
                      f"({archive.stderr.decode().strip()[-200:]}): the baseline is this tree "
                      "(current vs current)")
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target, None


def _rel(path):
    """``path`` relative to the project ('.' for the project itself)."""
    try:
        return Path(path).resolve().relative_to(ROOT).as_posix() or "."
    except ValueError:
        return str(path)


def _child(tree, Hs, steps, warmup, threads):
    """Time the four steps at width Hs with the ``helpers`` package of ``tree``; print JSON."""
    sys.path.insert(0, str(tree))
    import torch
    import helpers as H  # the tree's own, first on the path
    assert Path(H.__file__).resolve().parent == (Path(tree) / "helpers").resolve(), H.__file__
    import bench_step as B  # this tree's builders, using the helpers imported above
    torch.set_num_threads(threads)
    x, y = B.make_data(torch.device("cpu"))

    def det(opt_name):
        torch.manual_seed(0)
        model = B._det_model(Hs)
        opt = (H.make_optimizer(model.parameters(), "adam", 1e-3) if opt_name == "adam"
               else torch.optim.SGD(model.parameters(), lr=1e-3))

        def step(xb, yb):
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
        return step

    def bbb(opt_name):
        torch.manual_seed(0)
        model = B.helpers_model("helpers_paper", Hs)
        opt = (H.make_optimizer(model.parameters(), "adam", 1e-3) if opt_name == "adam"
               else torch.optim.SGD(model.parameters(), lr=1e-3))
        return B.helpers_step(model, opt)

    built = {"det_adam": det("adam"), "bbb_adam": bbb("adam"), "det_sgd": det("sgd"),
             "bbb_sgd": bbb("sgd")}
    nb = B.N_DATA // B.BATCH
    for i in range(warmup):  # also compiles the kernels (cached across runs)
        for step in built.values():
            b = i % nb
            step(x[b * B.BATCH:(b + 1) * B.BATCH], y[b * B.BATCH:(b + 1) * B.BATCH])
    times = {k: [] for k in built}
    for i in range(steps):
        b = i % nb
        xb, yb = x[b * B.BATCH:(b + 1) * B.BATCH], y[b * B.BATCH:(b + 1) * B.BATCH]
        for k, step in built.items():
            t0 = time.perf_counter()
            step(xb, yb)
            times[k].append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"times_ms": times, "native": H.native.library() is not None,
                      "helpers": str(Path(H.__file__).resolve().parent)}))


def _run_child(tree, Hs, args):
    cmd = [sys.executable, __file__, "--child", str(tree), "--H", str(Hs), "--steps",
           str(args.steps), "--warmup", str(args.warmup), "--threads", str(args.threads)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"timing subprocess failed ({tree}, H={Hs}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = parser(__doc__, f"H={QUICK['H']}, {QUICK['rounds']} rounds of {QUICK['steps']} steps; "
                         "writes build/benchmarks/kernel_overhead_quick.json")
    ap.add_argument("--H", type=int, nargs="+", default=None, help="hidden widths (400 1200)")
    ap.add_argument("--rounds", type=int, default=None, help="subprocess pairs per width (6)")
    ap.add_argument("--steps", type=int, default=None, help="timed steps per subprocess (10)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up steps (3)")
    ap.add_argument("--baseline", default=BASELINE, help=f"baseline commit ({BASELINE})")
    ap.add_argument("--child", default=None, help=argparse_suppress())
    args = ap.parse_args(argv)
    if args.child:
        for key, value in FULL.items():
            if getattr(args, key, None) is None:
                setattr(args, key, value)
        return _child(args.child, args.H[0], args.steps, args.warmup, args.threads)
    out = settle(ap, args, "kernel_overhead", full=FULL, quick=QUICK,
                 at_least=dict(H=1, rounds=1, steps=1, warmup=0, threads=1))
    base_tree, note = baseline_tree(args.baseline)
    trees = {"baseline": base_tree, "current": ROOT}
    notes = [note] if note else []
    load_before = load_avg()
    t_start = time.perf_counter()
    rounds = {(v, h): [] for v in trees for h in args.H}
    loads = []
    for h in args.H:
        for r in range(args.rounds):
            order = ("baseline", "current") if r % 2 == 0 else ("current", "baseline")
            for version in order:  # alternating: each version first in half the rounds
                res = _run_child(trees[version], h, args)
                if not res["native"]:
                    notes.append(f"{version} H={h} round {r}: C kernels unavailable (torch path)")
                rounds[(version, h)].append(res["times_ms"])
                loads.append(load_avg()[0])
            print(f"H={h} round {r + 1}/{args.rounds} done (load {loads[-1]})", flush=True)
    rows, cut = [], []
    for h in args.H:
        over = {}
        for version in trees:
            runs = rounds[(version, h)]
            for opt in ("adam", "sgd"):
                det = [t for run in runs for t in run[f"det_{opt}"]]
                bbb = [t for run in runs for t in run[f"bbb_{opt}"]]
                per_round = [statistics.median(run[f"bbb_{opt}"])
                             / statistics.median(run[f"det_{opt}"]) - 1 for run in runs]
                over[(version, opt)] = statistics.median(per_round)
                rows.append({"H": h, "version": version, "optimizer": opt,
                             "det_ms": round(statistics.median(det), 3),
                             "bbb_ms": round(statistics.median(bbb), 3),
                             "overhead": round(over[(version, opt)], 4),
                             "round_overheads": [round(v, 4) for v in per_round]})
                print(f"H={h:5d} {version:8s} {opt:4s} det {rows[-1]['det_ms']:8.2f} ms  "
                      f"BBB {rows[-1]['bbb_ms']:8.2f} ms  overhead {rows[-1]['overhead']:.3f}",
                      flush=True)
        for opt in ("adam", "sgd"):
            b, c = over[("baseline", opt)], over[("current", opt)]
            cut.append({"H": h, "optimizer": opt, "overhead_baseline": round(b, 4),
                        "overhead_current": round(c, 4),
                        "cut_percent": round(100 * (1 - c / b), 1) if b > 0 else None})
            print(f"H={h:5d} {opt:4s} overhead {b:.3f} -> {c:.3f}: cut "
                  f"{cut[-1]['cut_percent']} %", flush=True)
    from helpers.campaign import code_label
    from helpers.utils import machine_info
    import torch
    torch.set_num_threads(args.threads)
    record = {"machine": {**machine_info(), "load_avg_before": load_before,
                          "load_avg_after": load_avg(), "load_avg_per_subprocess": loads,
                          "load_note": load_note(load_before, args.threads)},
              "settings": {"quick": args.quick, "H": args.H, "rounds": args.rounds,
                           "steps_per_subprocess": args.steps, "warmup": args.warmup,
                           "threads": args.threads, "batch": 128, "lr": 1e-3,
                           "impls": {"det_adam": "nn.Linear MLP, fused Adam",
                                     "bbb_adam": "helpers_paper row of bench_step.py (fused "
                                                 "Adam)",
                                     "det_sgd": "nn.Linear MLP, torch.optim.SGD, no momentum",
                                     "bbb_sgd": "helpers_paper model and step, torch.optim.SGD"}},
              "versions": {"baseline": {"commit": args.baseline, "tree": _rel(base_tree)},
                           "current": {"commit": code_label(), "tree": _rel(ROOT)}},
              "wall_s": round(time.perf_counter() - t_start, 1),
              "rows": rows, "cut": cut, "notes": notes}
    return write(out, record)


def argparse_suppress():
    import argparse
    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
