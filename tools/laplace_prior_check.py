"""Notebook 06, after plan v3's numbers: the last-layer Laplace row under three prior precisions
(helpers.laplace_prior_check; a disclosed sensitivity check, not one of the plan's verdicts).

    python tools/laplace_prior_check.py run [--seeds 0 1]   # one record per seed, resumable
    python tools/laplace_prior_check.py analyse             # writes .../laplace_prior/summary.json
    python tools/laplace_prior_check.py export DIR          # MAP's weights, for another machine
    python tools/laplace_prior_check.py run --networks DIR --device cuda

``run`` reads MAP's final networks back from their checkpoints (``tools/alternatives_search.py
final`` trains them), or from the weights ``export`` wrote (checked against the plan's records'
fingerprints), on one CPU thread or a GPU, and skips seeds that have a record.
"""
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["run", "analyse", "export"])
    ap.add_argument("folder", nargs="?", default=None, help="export: where the weights go")
    ap.add_argument("--seeds", type=int, nargs="+", default=None)
    ap.add_argument("--networks", default=None, help="run: MAP's weights from `export`")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    import torch

    from helpers import alternatives_final as F
    from helpers import alternatives_plan as A
    from helpers import laplace_prior_check as P
    from helpers.utils import atomic_write_bytes
    if args.command == "analyse":
        out = P.analysis()
        path = P.summary_path()
        atomic_write_bytes(path, (json.dumps(out, indent=1) + "\n").encode())
        print(f"wrote {path} (seeds {out['seeds']})")
        return
    bad = sorted(set(args.seeds or []) - set(A.REPORTED_SEEDS))
    if bad:
        sys.exit(f"seeds {bad} are not plan v3's reported seeds {list(A.REPORTED_SEEDS)}")
    import helpers as H
    from helpers import campaign
    torch.set_num_threads(1)
    campaign.code_version()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("--device cuda: no GPU is visible to torch here; leave --device out")
    data = H.load_images("MNIST", device=args.device)
    chosen = F.choices()
    if args.command == "export":
        if not args.folder:
            ap.error("export needs a folder")
        for seed in args.seeds or A.REPORTED_SEEDS:
            print(f"seed {seed}: {P.export_network(seed, data, chosen, Path(args.folder))}")
        return
    x_ood = H.load_test_images("FashionMNIST", device=args.device)[0]
    networks = Path(args.networks) if args.networks else None
    for seed in args.seeds or A.REPORTED_SEEDS:
        if P.record_path(seed).exists():
            continue
        t0 = time.perf_counter()
        rec = P.run_seed(seed, data, x_ood, chosen, networks=networks,
                         progress_fn=lambda m: print(f"{time.strftime('%H:%M:%S')} {m}",
                                                     flush=True))
        print(f"{time.strftime('%H:%M:%S')} seed {seed} done ({time.perf_counter() - t0:.0f} s): "
              + ", ".join(f"{k} NLL {v['full']['nll']:.4f}" for k, v in rec["settings"].items()),
              flush=True)


if __name__ == "__main__":
    main()
