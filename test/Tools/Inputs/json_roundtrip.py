# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Runs tlerun with hostile buffer names and checks that every --dump line
and every --json object is valid JSON that gives the names back: quotes,
backslashes, newlines, control characters, non-ASCII text, and bytes that
are not UTF-8 (which become U+FFFD). Usage: json_roundtrip.py SCALE.mlir
ALLREDUCE.mlir; prints OK and exits 0, or raises."""

import json
import os
import subprocess
import sys

scale, allreduce = sys.argv[1], sys.argv[2]

NAMES = [
    'quote"name',
    "back\\slash",
    "new\nline",
    "tab\tcr\r",
    "ctl\x01\x1f",
    "ünïcödé ☃ 𝄞",
    '{"rank", 9, "buffer"}], [',
]
# argv bytes that are not UTF-8 (a lone continuation byte, a truncated
# sequence): each byte becomes U+FFFD.
BAD = {b"bad\x80name": "bad\ufffdname", b"cut\xe2\x98": "cut\ufffd\ufffd"}


def tlerun(*args: bytes | str) -> subprocess.CompletedProcess:
    return subprocess.run([os.fsencode(a) if isinstance(a, str) else a for a in ("tlerun", *args)],
                          capture_output=True, timeout=120)


def check_dump_lines(name_arg: bytes | str, expected: str) -> None:
    spec = (name_arg.encode() if isinstance(name_arg, str) else name_arg) + b":f64:2:iota"
    run = tlerun(scale, "--kernel", "scale", "--ranks", "2", "--block", "2", "--buffer", spec,
                 "--dump", name_arg)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.decode("utf-8").splitlines()
    assert len(lines) == 2, lines
    for rank, line in enumerate(lines):
        obj = json.loads(line)
        assert obj == {"rank": rank, "buffer": expected, "values": [0, 2]}, obj

    run = tlerun(scale, "--kernel", "scale", "--ranks", "2", "--block", "2", "--buffer", spec,
                 "--dump", name_arg, "--json")
    assert run.returncode == 0, run.stderr
    obj = json.loads(run.stdout.decode("utf-8"))
    assert [d["buffer"] for d in obj["dumps"]] == [expected, expected], obj
    assert obj["exit_status"] == 0 and obj["error"] is None, obj


for name in NAMES:
    check_dump_lines(name, name)
for raw, expected in BAD.items():
    check_dump_lines(raw, expected)

# An error message that carries a hostile name (a usage error) is JSON too.
run = tlerun(scale, "--kernel", "scale", "--ranks", "2", "--buffer", 'a"\n:f64:1', "--dump", "x\\y",
             "--json")
assert run.returncode == 2, run
obj = json.loads(run.stdout.decode("utf-8"))
assert obj["error"]["stage"] == "usage" and obj["error"]["message"] == "--dump x\\y: no --buffer of that name", obj
print("OK")
