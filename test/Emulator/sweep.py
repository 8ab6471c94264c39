# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Runs one kernel of a test file under tlerun for a range of seeds and
checks that every schedule is classified the same way.

    sweep.py FILE --kernel K --expect clean|TEXT [--seeds N] -- TLERUN-ARGS

`clean`: every run exits 0. Otherwise every run exits 1, its report
contains TEXT, and it names the source line of every op of FILE tagged
`// site: K` (as `FILE:LINE:`), so a report that blames the wrong op, or a
schedule in which the bug goes unseen, fails the test with its seed. The
emulator's checks (races by happens-before, slot misuse, deadlocks) must
not depend on the interleaving a seed picks: this is where that is shown.
"""

import argparse
import os
import re
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--kernel", required=True)
    parser.add_argument("--expect", required=True)
    parser.add_argument("--seeds", type=int, default=6)
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    extra = argv[split + 1:]

    tag = re.compile(r"//\s*site:\s*(.*)$")
    lines = []
    with open(args.file) as f:
        for number, text in enumerate(f, 1):
            m = tag.search(text)
            if m and args.kernel in m.group(1).split():
                lines.append(number)
    if args.expect != "clean" and not lines:
        sys.exit(f"sweep: no op of {args.file} is tagged '// site: {args.kernel}'")

    name = os.path.basename(args.file)
    for seed in range(1, args.seeds + 1):
        cmd = ["tlerun", args.file, "--kernel", args.kernel, "--seed", str(seed)] + extra
        run = subprocess.run(cmd, capture_output=True, text=True)
        report = run.stderr
        where = f"seed {seed}: {' '.join(cmd)}\n{report}"
        if args.expect == "clean":
            if run.returncode != 0:
                sys.exit(f"sweep: expected a clean run, got exit {run.returncode} with {where}")
            continue
        if run.returncode != 1:
            sys.exit(f"sweep: expected exit 1, got {run.returncode} with {where}")
        if args.expect not in report:
            sys.exit(f"sweep: the report does not say '{args.expect}' with {where}")
        for line in lines:
            if f"{name}:{line}:" not in report:
                sys.exit(f"sweep: the report does not name {name}:{line} with {where}")
    print(f"sweep: {args.kernel}: {args.seeds} seeds, each "
          f"{'clean' if args.expect == 'clean' else repr(args.expect)}")


if __name__ == "__main__":
    main()
