#!/usr/bin/env python3
"""bench/longline.py SHAPE OUT [MB]: a session with one line of about MB
(100) megabytes of text, for issue 33's memory bound (64 MB + 2 x the
longest line), from the bundled samples:

  prompt-x       Claude Code, the multiturn sample's first prompt made MB of `x`
  prompt-words   the same prompt made MB of words (spaces, newlines, tabs, quotes)
  tool-json      Claude Code, the long sample's first tool result made MB of
                 pretty-printed JSON, half in the message's content and half in
                 toolUseResult.stdout (as Claude Code spells a Bash output twice)
  assistant      the long sample's first assistant text made MB of words
  codex          Codex, a rollout's first function_call_output made MB of words

OUT is a projects folder (Claude Code) or a sessions folder (Codex); the
file keeps the sample's name. bench/memory runs every command on them.
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.join(HERE, "..", "testdata")
MULTI = ("claude/projects/-home-dev-src-multiturn", "22222222-2222-4222-8222-222222222222.jsonl")
LONG = ("claude/projects/-home-dev-src-long", "99999999-9999-4999-8999-999999999999.jsonl")
CODEX = ("codex/sessions/2026/11/23", "rollout-2026-11-23T16-52-22-01a20952-aced-7670-b71b-a40087387e93.jsonl")
MARK = "\x00long\x00"
WORDS = ("the of and to in is that for it with as was on are be by this an at from or have not but "
         "which file error build test go func return value line main package import struct string "
         "int err nil").split()


def xs(n):
    while n > 0:
        k = min(n, 1 << 20)
        yield "x" * k
        n -= k


def words(n, seed):
    rng = random.Random(seed)
    i = 0
    while n > 0:
        lines = []
        for _ in range(1000):
            ws = " ".join(rng.choice(WORDS) for _ in range(8))
            lines.append('%06d\t%s "%s" é→ %s\n' % (i, ws, rng.choice(WORDS), rng.choice(WORDS)))
            i += 1
        s = "".join(lines)[:n]
        n -= len(s.encode())
        yield s


def jsontext(n, seed):
    rng = random.Random(seed)
    yield "[\n"
    i = 0
    while n > 0:
        recs = []
        for _ in range(500):
            rec = {"id": i, "name": " ".join(rng.choice(WORDS) for _ in range(3)),
                   "tags": [rng.choice(WORDS) for _ in range(3)], "score": rng.random(),
                   "path": "/home/dev/src/%s/%s.go" % (rng.choice(WORDS), rng.choice(WORDS)),
                   "nested": {"ok": rng.random() < 0.5, "note": "say \"%s\"" % rng.choice(WORDS)}}
            recs.append("  " + json.dumps(rec, indent=2).replace("\n", "\n  ") + ",\n")
            i += 1
        s = "".join(recs)
        n -= len(s.encode())
        yield s
    yield '  {"id": -1}\n]\n'


def escaped(chunks):
    for c in chunks:
        yield json.dumps(c, ensure_ascii=False)[1:-1]


def write(out, sample, pick, pieces):
    """Copies sample to out; the first line pick accepts is marked by it
    (it returns the decoded line with MARK where each piece goes) and the
    pieces' texts are written in the marks' places."""
    src = os.path.join(TESTDATA, *sample)
    if sample is CODEX:
        dst = os.path.join(out, "2026", "11", "23", sample[1])
    else:
        dst = os.path.join(out, os.path.basename(sample[0]), sample[1])
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    done = False
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as w:
        for line in f:
            if not done:
                e = json.loads(line)
                if pick(e):
                    done = True
                    enc = json.dumps(e, ensure_ascii=False, separators=(",", ":"))
                    parts = enc.split(json.dumps(MARK)[1:-1])
                    assert len(parts) == len(pieces) + 1, parts
                    for p, piece in zip(parts, pieces):
                        w.write(p)
                        for c in escaped(piece):
                            w.write(c)
                    w.write(parts[-1] + "\n")
                    continue
            w.write(line)
    assert done, "no line to make long in " + src
    print(dst)


def main():
    shape, out = sys.argv[1], sys.argv[2]
    n = int(float(sys.argv[3]) * 1e6) if len(sys.argv) > 3 else 100_000_000

    def prompt(e):
        m = e.get("message") or {}
        if e.get("type") == "user" and isinstance(m.get("content"), str):
            m["content"] = MARK
            return True
        return False

    def tool(e):
        m = e.get("message") or {}
        r = e.get("toolUseResult")
        if isinstance(r, dict) and isinstance(m.get("content"), list):
            m["content"][0]["content"] = MARK
            r["stdout"] = MARK
            return True
        return False

    def assistant(e):
        m = e.get("message") or {}
        if m.get("role") == "assistant" and m["content"][0].get("type") == "text":
            m["content"][0]["text"] = MARK
            return True
        return False

    def output(e):
        p = e.get("payload") or {}
        if p.get("type") == "function_call_output":
            p["output"] = MARK
            return True
        return False

    if shape == "prompt-x":
        write(out, MULTI, prompt, [xs(n)])
    elif shape == "prompt-words":
        write(out, MULTI, prompt, [words(n, 1)])
    elif shape == "tool-json":
        write(out, LONG, tool, [jsontext(n // 2, 1), jsontext(n // 2, 1)])
    elif shape == "assistant":
        write(out, LONG, assistant, [words(n, 2)])
    elif shape == "codex":
        write(out, CODEX, output, [words(n, 3)])
    else:
        sys.exit(__doc__)


main()
