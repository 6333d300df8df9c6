#!/usr/bin/env python3
"""bench/mktiny.py OUT N [codex]: a session of N tiny lines, as issue 33's
"a session of a million tiny lines" measures it.

Claude Code (the default): OUT/projects/-home-dev-src-tiny/<id>.jsonl, N
entries of a user prompt and the assistant's reply in turn, a few words
each, each the parent of the next, with the fields the client writes on
every entry (about 410 bytes a line: a million lines are 414 MB, 500,000
rounds).

codex: OUT/sessions/2026/11/27/rollout-...jsonl, the session_meta line of
the bundled compact session, then N response_item messages of the user and
the assistant in turn (about 180 bytes a line).

    python3 bench/mktiny.py /tmp/tiny 1000000
    scribe --root /tmp/tiny-store inscribe /tmp/tiny/projects
"""
import datetime
import json
import os
import sys
import uuid

out, n = sys.argv[1], int(sys.argv[2])
codex = len(sys.argv) > 3 and sys.argv[3] == "codex"
t0 = datetime.datetime(2026, 11, 27, 9, 0, 0, tzinfo=datetime.timezone.utc)
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]


def ts(i):
    return (t0 + datetime.timedelta(milliseconds=10 * i)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def line(f, e):
    f.write(json.dumps(e, separators=(",", ":")) + "\n")


if codex:
    here = os.path.dirname(os.path.abspath(__file__))
    meta = os.path.join(here, "..", "testdata", "codex", "sessions", "2026", "11", "23",
                        "rollout-2026-11-23T16-52-29-01a20952-c650-7460-8240-fe79e3d5153c.jsonl")
    d = os.path.join(out, "sessions", "2026", "11", "27")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "rollout-2026-11-27T09-00-00-01a20952-c650-7460-8240-fe79e3d5153c.jsonl"), "w") as f:
        f.write(open(meta).readline())
        for i in range(n):
            w = "%s %d" % (words[i % 4], i // 2)
            if i % 2 == 0:
                p = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "say " + w}]}
            else:
                p = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": w}]}
            line(f, {"timestamp": ts(i), "ordinal": i + 1, "type": "response_item", "payload": p})
    sys.exit(0)

sid = str(uuid.UUID(int=(0x71A1 << 100) + n, version=4))
d = os.path.join(out, "projects", "-home-dev-src-tiny")
os.makedirs(d, exist_ok=True)


def u(i):
    return str(uuid.UUID(int=(0xBEEF << 100) + i, version=4))


with open(os.path.join(d, sid + ".jsonl"), "w") as f:
    parent = None
    for i in range(n):
        w = words[i % 8] + " " + words[(i // 8) % 8]
        if i % 2 == 0:
            e = {"parentUuid": parent, "isSidechain": False, "type": "user",
                 "message": {"role": "user", "content": "say %s %d" % (w, i // 2)}}
        else:
            e = {"parentUuid": parent, "isSidechain": False, "type": "assistant",
                 "message": {"id": "msg_%08d" % i, "type": "message", "role": "assistant", "model": "claude-opus-5-5",
                             "content": [{"type": "text", "text": "%s %d" % (w, i // 2)}],
                             "stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 2}}}
        e.update({"uuid": u(i), "timestamp": ts(i), "cwd": "/home/dev/src/tiny", "sessionId": sid, "version": "2.1.328"})
        parent = u(i)
        line(f, e)
