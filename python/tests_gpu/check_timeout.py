# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU test 2, the check: run timeout_kernel.py under torchrun with a
wall-clock limit and verify that it ended (no hang), failed, and that rank 0
printed TLE's timeout report naming rank 1 as the missing peer.

    python python/tests_gpu/check_timeout.py [--nproc 2] [--limit 120]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--limit", type=float, default=120.0, help="seconds before it counts as a hang")
    args = parser.parse_args()
    script = Path(__file__).with_name("timeout_kernel.py")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={args.nproc}",
           str(script)]
    print("running:", " ".join(cmd), flush=True)
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=args.limit)
    except subprocess.TimeoutExpired as e:
        output = e.stdout if isinstance(e.stdout, str) else (e.stdout or b"").decode(errors="replace")
        print(output)
        print(f"FAIL timeout: still running after {args.limit:.0f} s: the missing peer made it hang")
        return 1
    print(proc.stdout)
    checks = {
        "the run failed (non-zero exit)": proc.returncode != 0,
        "rank 0 reported a TLE timeout": re.search(r"\[rank 0\] TLE error report .*code=TIMEOUT", proc.stdout),
        "the report says the wait timed out": re.search(r"\[rank 0\] TLE error report .*timed out", proc.stdout),
        "rank 1 is the missing peer": re.search(r"\[rank 0\] record: .*missing_peers=\[1\]", proc.stdout),
        "rank 0's barrier did not return": "the barrier returned" not in proc.stdout,
    }
    for what, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if all(checks.values()):
        print(f"PASS timeout: the missing peer ended in TLE's report (exit {proc.returncode}), not a hang")
        return 0
    print(f"FAIL timeout: exit {proc.returncode}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
