#!/usr/bin/env python3
"""bench/mksessions.py SOURCE OUT N: a projects tree of N copies of one
Claude Code transcript, each under a new session id (every occurrence of the
source's id replaced), 100 to a project folder: a store of many small
sessions, as issue 33's hook append at 10,000 sessions measures it.

    sed -n '1p;2p;3p;18p;20p' testdata/claude/projects/-home-dev-src-multiturn/22222222-2222-4222-8222-222222222222.jsonl > /tmp/22222222-2222-4222-8222-222222222222.jsonl
    python3 bench/mksessions.py /tmp/22222222-2222-4222-8222-222222222222.jsonl /tmp/p10k 10000
"""
import os
import sys
import uuid

src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(src).read()
old = os.path.basename(src)[: -len(".jsonl")]
for i in range(n):
    d = os.path.join(out, "-home-dev-src-p%03d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    new = str(uuid.UUID(int=(0x5C0BE << 100) + i, version=4))
    with open(os.path.join(d, new + ".jsonl"), "w") as f:
        f.write(data.replace(old, new))
