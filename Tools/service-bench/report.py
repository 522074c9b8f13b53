"""The table of make service-bench (Tools/service-bench.sh) from its results file.

usage: report.py RESULTS_JSONL SECONDS SEED_NOTES NOTEBOOK_NOTES [PACE_MS [RATIO_PAIRS]]
"""
import json
import statistics
import sys

path, seconds, seed_notes, notebook_notes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pace_ms = sys.argv[5] if len(sys.argv) > 5 else None
pairs = int(sys.argv[6]) if len(sys.argv) > 6 else 0
results = {}
for line in open(path):
    row = json.loads(line)
    results[(row["service"], row["label"])] = row

CABINET, GRDB, CEILING = "notes-service", "notes-service-grdb", "notes-service-dictionary"


def result(service, label):
    row = results.get((service, label))
    return row["result"] if row else None


def errors(r):
    return sum(r[k] for k in ("connect_errors", "read_errors", "write_errors", "status_errors", "timeouts"))


def verdict(ok):
    return "met" if ok else "**not met**"


print(f"wrk -d{seconds}s on 127.0.0.1, {seed_notes:,} seeded notes, a notebook of {notebook_notes:,}")
print()
print("| route | conns | no store req/s | GRDB req/s | Cabinet req/s | Cabinet ÷ GRDB | target | | GRDB p50 / p99 ms | Cabinet p50 / p99 ms |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
targets = {"get": 1.5, "put": 3.0, "post": 3.0}
names = {"health": "GET /health (no store)", "get": "GET /notes/:id", "list": "GET /notes?limit=20&after=", "put": "PUT /notes/:id",
         "post": "POST /notes", "post-notebook": "POST /notebooks/:id/notes"}
for route in ("health", "get", "list", "put", "post", "post-notebook"):
    for c in (16, 64):
        g, k = result(GRDB, f"{route}-c{c}"), result(CABINET, f"{route}-c{c}")
        if not g or not k:
            continue
        ratio = k["rps"] / g["rps"] if g["rps"] else float("inf")
        target = targets.get(route)
        noted = "" if errors(g) + errors(k) == 0 else f" (errors: GRDB {errors(g)}, Cabinet {errors(k)})"
        n = result(CEILING, f"{route}-c{c}")
        print(f"| {names[route]} | {c} | {n['rps']:,.0f} | " if n else f"| {names[route]} | {c} | — | ", end="")
        print(f"{g['rps']:,.0f} | {k['rps']:,.0f} | {ratio:.2f}× | "
              f"{'≥ %.1f×' % target if target else '—'} | {verdict(ratio >= target) if target else ''}{noted} | "
              f"{g['p50_ms']:.2f} / {g['p99_ms']:.2f} | {k['p50_ms']:.2f} / {k['p99_ms']:.2f} |")

# A target above what the same routes do with no store at all (dictionaries in
# memory) cannot be met on this machine by any store: say so beside the numbers.
print()
for route in ("put", "post"):
    for c in (16, 64):
        g, ceiling = result(GRDB, f"{route}-c{c}"), result(CEILING, f"{route}-c{c}")
        if g and ceiling:
            need = targets[route] * g["rps"]
            print(f"- {names[route]}, {c} conns: {targets[route]:.0f} × GRDB is {need:,.0f} req/s; the same route with no "
                  f"store answers {ceiling['rps']:,.0f} req/s"
                  f"{' (the target is above what any store could reach here)' if need > ceiling['rps'] else ''}")
print()
print("| check | GRDB | Cabinet | target | |")
print("| --- | --- | --- | --- | --- |")


def cpu_per_request(service, label):
    """The service's CPU microseconds a request over one run, if it was measured."""
    row = results.get((service, label))
    if not row or "service_cpu_s" not in row or not row["result"]["requests"]:
        return None
    return row["service_cpu_s"] * 1e6 / row["result"]["requests"]


def pair_cpu(service, c):
    """Each pair's CPU a request (µs), plain POST and notebook POST."""
    rows = []
    for r in range(1, pairs + 1):
        plain, notebook = cpu_per_request(service, f"pair-post-c{c}-r{r}"), cpu_per_request(service, f"pair-notebook-c{c}-r{r}")
        if plain and notebook:
            rows.append((plain, notebook))
    return rows


def pair_ratios(service, c):
    """The notebook ÷ plain POST ratio of each back-to-back pair of runs."""
    ratios = []
    for r in range(1, pairs + 1):
        plain, notebook = result(service, f"pair-post-c{c}-r{r}"), result(service, f"pair-notebook-c{c}-r{r}")
        if plain and notebook and plain["rps"]:
            ratios.append(notebook["rps"] / plain["rps"])
    return ratios


for c in (16, 64):
    cells = [pair_ratios(service, c) for service in (GRDB, CABINET)]
    if cells[1]:
        text = [f"{statistics.median(r):.2f}× ({' '.join(f'{x:.2f}' for x in r)})" if r else "—" for r in cells]
        median = statistics.median(cells[1])
        print(f"| POST to the {notebook_notes:,}-note notebook ÷ plain POST, {c} conns, median of {len(cells[1])} pairs | "
              f"{text[0]} | {text[1]} | ≥ 0.8× | {verdict(median >= 0.8)} |")
        # What the service's CPU says of the same runs: a request's cost, which wanders less than a rate.
        cpu = [pair_cpu(service, c) for service in (GRDB, CABINET)]
        if all(cpu):
            text = [f"{statistics.median(p for p, _ in rows):.0f} / {statistics.median(n for _, n in rows):.0f} µs"
                    for rows in cpu]
            print(f"| … service CPU a request, plain / notebook POST, {c} conns, medians | {text[0]} | {text[1]} | | |")
        continue
    # Without pairs (RATIO_PAIRS=0): the two rate runs.
    cells = []
    for service in (GRDB, CABINET):
        plain, notebook = result(service, f"post-c{c}"), result(service, f"post-notebook-c{c}")
        cells.append(notebook["rps"] / plain["rps"] if plain and notebook else None)
    if cells[1] is not None:
        print(f"| POST to the {notebook_notes:,}-note notebook ÷ plain POST, {c} conns | {cells[0]:.2f}× | "
              f"{cells[1]:.2f}× | ≥ 0.8× | {verdict(cells[1] >= 0.8)} |")
for beside, load in (("get-beside-post", "a POST load"), ("get-beside-paced-post", f"a POST load paced at {pace_ms} ms")):
    cells = [(result(s, "get-alone"), result(s, beside)) for s in (GRDB, CABINET)]
    if not all(a and b for a, b in cells):
        continue
    text = [f"{b['p99_ms']:.2f} ÷ {a['p99_ms']:.2f} ms = {b['p99_ms'] / a['p99_ms']:.2f}×" for a, b in cells]
    ratio = cells[1][1]["p99_ms"] / cells[1][0]["p99_ms"]
    print(f"| GET p99 beside {load} ÷ alone (16 + 16 conns) | {text[0]} | {text[1]} | ≤ 2× | {verdict(ratio <= 2)} |")
    writes = [result(s, beside.replace("get-beside-", "") + "-beside-get") for s in (GRDB, CABINET)]
    reads = [b["rps"] for _, b in cells]
    print(f"| … reads / writes per second meanwhile | {reads[0]:,.0f} / {writes[0]['rps']:,.0f} | "
          f"{reads[1]:,.0f} / {writes[1]['rps']:,.0f} | | |")
kills = [results.get((s, "kill-9")) for s in (GRDB, CABINET)]
if all(kills):
    text = [f"{k['missing']} of {k['acknowledged']:,} lost" for k in kills]
    print(f"| acknowledged creates lost after kill -9 mid-POST | {text[0]} | {text[1]} | 0 | "
          f"{verdict(kills[1]['missing'] == 0 and kills[1]['acknowledged'] > 0)} |")
rss = [results.get((s, "rss-kb")) for s in (GRDB, CABINET)]
if all(rss):
    print(f"| service RSS after the load runs | {rss[0]['value'] / 1024:.0f} MB | {rss[1]['value'] / 1024:.0f} MB | | |")
