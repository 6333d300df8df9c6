#!/usr/bin/env python3
"""searchcli.py SCRIBE[,SCRIBE2] ROOT RUNS: scribe search as a process over a
store of bench/mkrounds.py's sessions, each query shape of index's
BenchmarkSearchMillion (the rare words of mkrounds.py's draw), RUNS runs per
query (the binaries alternated run by run; ONLY=shape,... selects): per
shape and binary the median and 95th percentile of the runs' wall time and
CPU time (user + system: the rusage /usr/bin/time reads, from wait4, to the
microsecond), over all its queries."""
import os, random, statistics, subprocess, sys, time
bins, root, runs = sys.argv[1].split(","), sys.argv[2], int(sys.argv[3])
rng = random.Random(1)
rare = ["".join(chr(97 + rng.randrange(26)) for _ in range(5 + rng.randrange(6))) for _ in range(50000)]
r = rare
shapes = [
 ("rare", [[r[10]], [r[11]], [r[12]], [r[13]]]),
 ("rare-fts", [["--fts", r[2000] + " OR " + r[3000]], ["--fts", '"' + r[5] + " " + r[6] + '"'], ["--fts", r[7] + "*"], ["--fts", "deploy AND " + r[42]], ["--fts", "error NEAR(" + r[100] + " file, 5)"]]),
 ("rare-filtered", [[r[10], "--project", "project-01", "--since", "2026-03-01"], [r[11], "--project", "project-0"], [r[12], "--since", "2027-01-01", "--until", "2027-03-01"]]),
 ("common", [["the"], ["error"], ["data"], ["function"]]),
 ("common-and", [["the", "error"], ["file", "test"], ["go", "data", "config"]]),
 ("common-fts", [["--fts", "error OR data"], ["--fts", "NEAR(error file, 5)"], ["--fts", "test NOT data"]]),
 ("common-filtered", [["the", "--project", "project-07", "--since", "2026-03-01"], ["error", "--project", "project-07"], ["function", "--since", "2027-05-01", "--until", "2027-05-02"], ["test", "--until", "2026-01-10"], ["config", "--since", "2029-05-01"]]),
 ("prefix", [["te*"], ["co*"], ["re*"], ["fun*"]]),
 ("prefix-short", [["d*"], ["t*"]]),
 ("prefix-long", [["deplo*"], ["functio*"], ["direct*"], ["config*"]]),
 ("prefix-filtered", [["co*", "--project", "project-03"], ["re*", "--project", "project-13"], ["te*", "--since", "2027-05-01", "--until", "2027-05-02"]]),
 ("phrase", [["the-file"], ["run.test"], ["error/function"], ["--fts", '"index search"']]),
 ("phrase-sparse", [["go-test-data"], ["the.file.error"], ["src/index/search.go"]]),
 ("phrase-sparse-filtered", [["go-test-data", "--project", "project-03"], ["the.file.error", "--since", "2027-01-01"], ["data-error-file", "--project", "project-1"]]),
 ("phrase-and-word", [["error", "go-test-data"], ["the-file-error", "data"], ["file", "the-test"], [r[20], "the-file"], ["deploy*", "go-test-data"]]),
 ("tools-rare", [["--in", "tools", r[30]], [r[31]], ["--in", "prompts,replies", r[32]], [r[33], "exit"]]),
 ("tools-common", [["--in", "tools", "total"], ["permission", "denied"], ["--in", "tools", "error"], ["--in", "prompts", "denied"]]),
 ("tools-phrase", [["No", "such", "file", "or", "directory"], ["Exit", "code", "3"], ["segmentation", "fault", "core", "dumped"], ["no", "such", "file"], ["--in", "tools", "exit", "code"], ["--in", "tools", "file", "not", "found"]]),
 ("phrase-filtered", [["the-file", "--since", "2026-03-01"], ["run.test", "--project", "project-05"], ["error/function", "--project", "project-11"], ["index.search", "--since", "2027-05-01", "--until", "2027-05-02"]]),
]
only = os.environ.get("ONLY", "")
print("%-24s %-10s %8s %8s %8s %8s %8s  %s" % ("shape", "binary", "wall-p50", "wall-p95", "cpu-p50", "cpu-p95", "cpu-max", "hits/err"))
for name, qs in shapes:
    if only and name not in only.split(","):
        continue
    walls, cpus, notes = {b: [] for b in bins}, {b: [] for b in bins}, {b: set() for b in bins}
    for q in qs:
      for i in range(runs):
        for scribe in bins:
            t0 = time.perf_counter()
            p = subprocess.Popen([scribe, "--root", root, "search", "--json"] + q, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            out = p.stdout.read()
            _, status, ru = os.wait4(p.pid, 0)
            walls[scribe].append((time.perf_counter() - t0) * 1000); cpus[scribe].append((ru.ru_utime + ru.ru_stime) * 1000)
            if i == 0:
                notes[scribe].add(out.count('"session_id"') if status == 0 else "exit %d" % status)
    for b in bins:
        w, c = sorted(walls[b]), sorted(cpus[b])
        p95 = lambda v: v[min(len(v) - 1, len(v) * 95 // 100)]
        print("%-24s %-10s %8.1f %8.1f %8.1f %8.1f %8.1f  %s" % (name, os.path.basename(b), statistics.median(w), p95(w), statistics.median(c), p95(c), c[-1], sorted(notes[b], key=str)), flush=True)
