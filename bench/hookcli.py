#!/usr/bin/env python3
"""hookcli.py SCRIBE[,SCRIBE2] DIR RUNS [SESSION]: `scribe append --hook` as
Claude Code's Stop hook runs it, on BenchmarkHookAppend's store of N small
sessions (DIR/hook-store-N and DIR/hook-projects-N, as
`SCRIBE_BENCH_DIR=DIR go test ./cmd/scribe -run '^$' -bench HookAppend
-benchtime 1x` leaves them; N is SCRIBE_BENCH_SESSIONS, 10,000). Before
each run a turn (a prompt and its reply, as the benchmark's benchTurn
writes it) is appended to session SESSION's transcript (default N/2 + 1,
not the benchmark's own) and the hook's JSON is given on stdin; the
binaries alternate run by run, on the same store, or each on its own
copy given as SCRIBE@STORE (`cp -a` of the store): a version that keeps
other builder state than the other (stop 49's fork points) would find
the other's in a shared store, and pay for it. Per binary: the median
and 95th percentile of wall time, the median and mean of CPU time (user
+ system, from wait4, as /usr/bin/time reads them), the median page
faults and maximum resident set."""
import os, statistics, subprocess, sys, time

bins, top, runs = sys.argv[1].split(","), sys.argv[2], int(sys.argv[3])
n = int(os.environ.get("SCRIBE_BENCH_SESSIONS", "10000"))
idx = int(sys.argv[4]) if len(sys.argv) > 4 else n // 2 + 1
store, projects = os.path.join(top, "hook-store-%d" % n), os.path.join(top, "hook-projects-%d" % n)
sid = "005c0be0-0000-4000-8000-%012x" % idx
path = os.path.abspath(os.path.join(projects, "-home-dev-src-p%03d" % (idx // 100), sid + ".jsonl"))


def turn():
    data = open(path).read()
    t = data.count('"type":"user"')
    k = data.rfind('"uuid":"')
    parent = data[k + 7:k + 7 + 38] if k >= 0 else "null"
    at = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(1795392000 + 60 * t))  # 2026-11-23 + t minutes
    out = ""
    for j, msg in enumerate(['"type":"user","message":{"role":"user","content":"question %d"}' % t,
                             '"type":"assistant","message":{"id":"msg_t%d","role":"assistant","model":"m","content":[{"type":"text","text":"answer %d"}]}' % (t, t)]):
        u = "7e000000-0000-4000-8000-%012d" % (2 * t + j)
        out += '{"parentUuid":%s,"isSidechain":false,%s,"uuid":"%s","timestamp":"%s","cwd":"/home/dev/src/bench","sessionId":"%s"}\n' % (parent, msg, u, at, sid)
        parent = '"' + u + '"'
    with open(path, "a") as f:
        f.write(out)
    return ('{"session_id":"%s","transcript_path":"%s","hook_event_name":"Stop"}' % (sid, path)).encode()


def own_store(b):
    exe, at, own = b.rpartition("@")
    if not at or not os.path.isdir(own):  # an "@" in the binary's path
        return b, store
    return exe, own


res = {b: [] for b in bins}
for i in range(runs):
    for b in (bins if i % 2 == 0 else bins[::-1]):
        stdin = turn()
        os.sync()
        t0 = time.perf_counter()
        exe, root = own_store(b)
        p = subprocess.Popen([exe, "--root", root, "append", "--hook"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        p.stdin.write(stdin)
        p.stdin.close()
        _, status, ru = os.wait4(p.pid, 0)
        wall = (time.perf_counter() - t0) * 1000
        err = p.stderr.read()
        if status != 0 or err:
            sys.exit("%s: status %d\n%s" % (b, status, err.decode(errors="replace")))
        res[b].append((wall, (ru.ru_utime + ru.ru_stime) * 1000, ru.ru_minflt, ru.ru_maxrss / 1024))
print("%-24s %8s %8s %8s %8s %7s %7s" % ("binary", "wall-p50", "wall-p95", "cpu-p50", "cpu-mean", "faults", "rss-MB"))
for b in bins:
    r = res[b]
    w = sorted(x[0] for x in r)
    print("%-24s %8.1f %8.1f %8.1f %8.1f %7d %7.1f" % (b, statistics.median(w), w[int(0.95 * (len(w) - 1))],
          statistics.median(x[1] for x in r), statistics.mean(x[1] for x in r),
          statistics.median(x[2] for x in r), statistics.median(x[3] for x in r)))
