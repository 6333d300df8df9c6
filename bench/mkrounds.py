#!/usr/bin/env python3
"""bench/mkrounds.py OUT SESSIONS ROUNDS: a Claude Code projects tree of SESSIONS
sessions of ROUNDS rounds each, drawn as index/bench_test.go's million-round
corpus is: a prompt of 12 words and a reply of 8-88 (four in five common),
and in half the rounds a Bash call whose output is 10-150 words of command
output (one in five rare), one in 100 with "No such file or directory", one
in 300 "Exit code 3", one in 20,000 "Segmentation fault (core dumped)".
Issue 33's search at 200,000 rounds (bench/README.md):

    python3 bench/mkrounds.py /tmp/p200k 2000 100
    scribe --root /tmp/st200k inscribe --no-redact /tmp/p200k
    python3 bench/searchcli.py "$(command -v scribe)" /tmp/st200k 10
"""
import json, os, random, sys, uuid, datetime

out, nsess, nrounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(1)
common = """the a to of and in is it that for on with this be as are was file code
test run error function return value go type we can if not use need will add fix change make check build
index search session round append export store document markdown json line commit branch merge deploy
config server client request response data user agent model tool result output input path directory""".split()
rare = ["".join(chr(97 + rng.randrange(26)) for _ in range(5 + rng.randrange(6))) for _ in range(50000)]
toolw = """total drwxr-xr-x rw-r--r-- root staff 4096 Nov 22 09:26 src main.go go.mod README.md
ok PASS FAIL --- RUN test tests passed failed error warning line col at in package build npm install added
packages audited found vulnerabilities exit status code file not found permission denied directory created
updated deleted modified 1 2 3 0 100 true false null undefined cannot open read write""".split()

def word():
    return rare[rng.randrange(len(rare))] if rng.randrange(5) == 0 else common[rng.randrange(len(common))]

def tooltext():
    if rng.randrange(2) == 0:
        return ""
    ws = [rare[rng.randrange(len(rare))] if rng.randrange(5) == 0 else toolw[rng.randrange(len(toolw))] for _ in range(10 + rng.randrange(141))]
    if rng.randrange(100) == 0: ws.append("cat: x.txt: No such file or directory")
    if rng.randrange(300) == 0: ws.append("Exit code 3")
    if rng.randrange(20000) == 0: ws.append("Segmentation fault (core dumped)")
    return " ".join(ws)

t0 = datetime.datetime(2026, 1, 1)
def ts(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)

for s in range(nsess):
    sid = str(uuid.UUID(int=(0x5EA4C << 100) + s, version=4))
    proj = "/home/dev/src/project-%02d" % (s % 20)
    d = os.path.join(out, proj.replace("/", "-"))
    os.makedirs(d, exist_ok=True)
    base = {"sessionId": sid, "cwd": proj, "version": "2.1.328", "gitBranch": "main", "userType": "external", "isSidechain": False}
    lines, parent, n = [], None, 0
    start = t0 + datetime.timedelta(hours=3 * s * 500 / nrounds)
    def add(obj, t):
        global parent
        u = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        obj.update(base); obj.update({"parentUuid": parent, "uuid": u, "timestamp": ts(t)})
        lines.append(json.dumps(obj, separators=(",", ":")))
        parent = u
    for r in range(nrounds):
        t = start + datetime.timedelta(seconds=20 * r)
        words = [word() for _ in range(20 + rng.randrange(81))]
        add({"type": "user", "message": {"role": "user", "content": " ".join(words[:12])}}, t)
        tt = tooltext()
        if tt:
            n += 1
            tid = "toolu_%d_%d" % (s, n)
            add({"type": "assistant", "message": {"id": "msg_%d" % n, "type": "message", "role": "assistant", "model": "claude-opus-5-5",
                 "content": [{"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": "ls -la src"}}], "stop_reason": "tool_use"}},
                t + datetime.timedelta(seconds=1))
            add({"type": "user", "message": {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result", "content": tt}]},
                 "toolUseResult": {"stdout": tt, "stderr": "", "interrupted": False}}, t + datetime.timedelta(seconds=2))
        n += 1
        add({"type": "assistant", "message": {"id": "msg_%d" % n, "type": "message", "role": "assistant", "model": "claude-opus-5-5",
             "content": [{"type": "text", "text": " ".join(words[12:])}], "stop_reason": "end_turn"}}, t + datetime.timedelta(seconds=3))
    with open(os.path.join(d, sid + ".jsonl"), "w") as f:
        f.write("\n".join(lines) + "\n")
