"""Notebook 03's campaign plan v2 (results/03_contextual_bandit/plan_v2.json), run.

    python tools/bandit_v2.py run     [--max-jobs N]     # start it twice for two cores
    python tools/bandit_v2.py status

``run`` takes the plan's jobs that are ready (helpers.bandit_v2.jobs: the screen, then each
family's confirm stage once its screen is complete, then the reported seeds once every family has
chosen), one at a time on one CPU thread, skipping jobs that have a record and jobs another live
process has claimed; a killed stacked job resumes from its checkpoint. Records go under
results/03_contextual_bandit/v2/; commit each as it lands. The plan must be committed first
(helpers.bandit_plan; a test checks the git order).
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
    ap.add_argument("command", choices=["run", "status"])
    ap.add_argument("--max-jobs", type=int, default=None)
    ap.add_argument("--poll", type=float, default=60.0,
                    help="seconds to wait when every ready job is claimed by another process")
    args = ap.parse_args(argv)
    import torch

    from helpers import bandit_plan as P
    from helpers import bandit_v2 as V
    from helpers import campaign
    plan = json.loads((ROOT / P.PLAN).read_text())
    bad = P.validate(plan)
    if bad:
        sys.exit(f"{P.PLAN} breaks the protocol:\n- " + "\n- ".join(bad))
    if args.command == "status":
        todo, n = V.jobs(plan)
        by = {}
        for j in todo:
            by[j.stage] = by.get(j.stage, 0) + 1
        print(f"ready, not yet run: {by or 'none'}")
        for f in plan["tuning"]["families"]:
            print(f"{f:16s} choice: {V.choice(f, plan) or '(tuning under way)'}")
        return
    torch.set_num_threads(1)
    campaign.code_version()  # the code this process loaded, named in every record it writes
    ran = 0
    while args.max_jobs is None or ran < args.max_jobs:
        todo, _ = V.jobs(plan)
        if not todo:
            break
        took = False
        for job in todo:
            path = campaign.claim_path(job.name, "03_contextual_bandit")
            if not campaign.claim(path):
                continue
            try:
                if V.read(job) is None:
                    t0 = time.perf_counter()
                    print(f"{time.strftime('%H:%M:%S')} start {job.name}", flush=True)
                    rec = V.run_job(job, plan)
                    print(f"{time.strftime('%H:%M:%S')} done  {job.name}: final regret "
                          f"{rec['final_per_seed']} ({time.perf_counter() - t0:.0f} s)",
                          flush=True)
                    ran += 1
                    took = True
            finally:
                campaign.release(path)
            break
        if not took:
            time.sleep(args.poll)  # every ready job is held by another process


if __name__ == "__main__":
    main()
