#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a bench run's bench.csv into ratios.md and PNG plots.

    report.py RUN_DIR

Every number shown is the median over the repetitions, with the spread
(min-max over repetitions) in brackets.  Ratios are GRIM / peer, computed
per repetition (both ran in the same repetition, seconds apart) and then
summarised the same way.  Latency: below 1 means GRIM is faster.
Bandwidth and message rate: above 1 means GRIM is faster.
The interleaved cases, those at scale and IP over GRIM (grim0 ÷ the
bare veth, per loss level) are summarised over their runs instead, with
a confidence interval of the median ratio.
"""
import csv
import math
import os
import statistics
import sys
from collections import defaultdict

FAMS = ["grim", "tipc", "udp", "tcp", "raw"]
PEERS = ["tipc", "udp", "tcp", "raw"]
SOCKPERF = ["sockperf-udp", "sockperf-tcp"]
LABEL = {"grim": "GRIM (AF_GRIM RDM)", "tipc": "TIPC (RDM, over the veth)",
         "grimh": "GRIM, datacrc off", "grimo": "GRIM, datacrc offload",
         "grimk": "GRIM with a cluster key", "tipck": "TIPC with a cluster key",
         "grimj": "GRIM, jumbo frames", "tcpj": "TCP, jumbo frames",
         "udp": "UDP",
         "tcp": "TCP", "raw": "raw AF_PACKET (floor)",
         "sockperf-udp": "UDP (sockperf)", "sockperf-tcp": "TCP (sockperf)"}
STYLE = {"grim": ("tab:red", "o"), "tipc": ("tab:blue", "s"),
         "udp": ("tab:green", "^"), "tcp": ("tab:purple", "v"),
         "raw": ("tab:gray", "x"), "sockperf-udp": ("tab:olive", "1"),
         "sockperf-tcp": ("tab:pink", "2")}


def load(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            for k in ("size", "senders", "rep", "n", "sent", "rcvd"):
                r[k] = int(float(r[k] or 0))
            for k in ("lat_med_us", "lat_p99_us", "lat_mean_us", "lat_min_us", "mbps",
                      "msgs_per_s", "loss_pct", "elapsed_s"):
                r[k] = float(r[k] or 0)
            r["loss"] = float(r["loss"])
            rows.append(r)
    return rows


class Data:
    def __init__(self, rows):
        # (test, fam, size, senders, loss) -> {rep: row}
        self.d = defaultdict(dict)
        self.bad = []
        for r in rows:
            if r["status"] != "ok":
                self.bad.append(r)
                continue
            key = (r["test"], r["family"], r["size"], r["senders"], r["loss"])
            self.d[key][r["rep"]] = r
        # The repetitions of bench_one; the other cases count runs.
        rep_rows = [r for r in rows if r["test"] in ("pingpong", "stream")]
        self.losses = sorted({r["loss"] for r in rep_rows})
        self.reps = sorted({r["rep"] for r in rep_rows})

    def sizes(self, test, senders=1, loss=None):
        return sorted({k[2] for k in self.d if k[0] == test and k[3] == senders
                       and (loss is None or k[4] == loss)})

    def vals(self, test, fam, size, senders, loss, metric):
        reps = self.d.get((test, fam, size, senders, loss), {})
        return {rep: r[metric] for rep, r in reps.items()}

    def summary(self, test, fam, size, senders, loss, metric):
        v = list(self.vals(test, fam, size, senders, loss, metric).values())
        if not v:
            return None
        return statistics.median(v), min(v), max(v)

    def ratio(self, test, peer, size, senders, loss, metric, base="grim"):
        g = self.vals(test, base, size, senders, loss, metric)
        p = self.vals(test, peer, size, senders, loss, metric)
        v = [g[r] / p[r] for r in g if r in p and p[r] > 0]
        if not v:
            return None
        return statistics.median(v), min(v), max(v)


def median_ci(v, level=0.95):
    """The median of @v and a distribution-free confidence interval for
    it: the order statistics x(k) and x(n+1-k) with the largest k such
    that Binomial(n, 1/2) puts at most (1 - level) / 2 below k.
    """
    v = sorted(v)
    n = len(v)
    k, below = 0, 0.0
    while True:
        below += math.comb(n, k) / 2 ** n
        if below > (1 - level) / 2:
            break
        k += 1
    if k == 0:
        return statistics.median(v), None, None
    return statistics.median(v), v[k - 1], v[n - k]


def sign_test(wins, n):
    """Two-sided sign test: the chance of a split at least this uneven
    between @wins and @n - @wins if either side were as likely to win.
    """
    m = min(wins, n - wins)
    p = 2 * sum(math.comb(n, i) for i in range(m + 1)) / 2 ** n
    return min(p, 1.0)


# The interleaved cases: test name, metric, what the metric is, and
# whether GRIM wins with a ratio below 1.
ILV = {
    "interleaved": ("lat_med_us", "latency", True),
    "interleaved-stream": ("mbps", "bandwidth", False),
    "auth-interleaved": ("lat_med_us", "latency", True),
    "auth-interleaved-stream": ("mbps", "bandwidth", False),
    "jumbo-interleaved": ("lat_med_us", "latency", True),
    "jumbo-interleaved-stream": ("mbps", "bandwidth", False),
}

# The jumbo cases: (test, size, base, peer), base ÷ peer run by run.
JUMBO = [
    ("jumbo-interleaved-stream", 64000, "grimj", "grim"),
    ("jumbo-interleaved-stream", 64000, "tcpj", "tcp"),
    ("jumbo-interleaved-stream", 64000, "grim", "tcp"),
    ("jumbo-interleaved-stream", 64000, "grimj", "tcp"),
    ("jumbo-interleaved-stream", 64000, "grimj", "tcpj"),
    ("jumbo-interleaved", 64, "grimj", "grim"),
    ("jumbo-interleaved", 64, "grimj", "tcpj"),
]

# The authenticated cases: (test, size, base, peer, target) where the
# target is "<= x" for latency ratios and ">= x" for bandwidth ones.
AUTH = [
    ("auth-interleaved", 64, "grimk", "grim", ("<=", 1.15)),
    ("auth-interleaved-stream", 64000, "grimk", "grim", (">=", 0.8)),
    ("auth-interleaved", 64, "grimk", "tipck", ("<", 1.0)),
    ("auth-interleaved-stream", 64000, "grimk", "tipck", (">", 1.0)),
]


def auth_table(D):
    """GRIM with a cluster key against GRIM without and TIPC with its
    key, interleaved run by run, with the targets of the hardening work.
    """
    out = []
    if not any(k[0].startswith("auth-") for k in D.d):
        return out
    n = len(D.vals("auth-interleaved", "grimk", 64, 1, 0.0, "lat_med_us"))
    out.append(f"### Authenticated links: GRIM with a key, {n} interleaved runs")
    out.append("")
    out.append("Each run measures GRIM with a cluster key (grim2), GRIM "
               "without (grim0) and TIPC with its cluster key (gcm(aes)) "
               "in turn from one process; the ratio is taken run by run. "
               "The interval is a 95% confidence interval of the median.")
    out.append("")
    out.append("| case | size (B) | ratio | median [95% CI] | target | met |")
    out.append("|---|---:|---|---|---|---|")
    for test, size, base, peer, (op, x) in AUTH:
        v = ilv_ratios(D, test, size, peer, base)
        if not v:
            continue
        med, lo, hi = median_ci(v)
        met = {"<=": med <= x, ">=": med >= x, "<": med < x, ">": med > x}[op]
        what = "latency" if ILV[test][2] else "bandwidth"
        out.append(f"| {what} | {size} | {LABEL[base]} ÷ {LABEL[peer]} | "
                   f"{ilv_cell(v)} | {op} {x} | {'yes' if met else 'no'} |")
    out.append("")
    out.append("| family | 64 B one-way latency, median of runs (µs) | "
               "64000 B received MB/s, median of runs |")
    out.append("|---|---:|---:|")
    for f in ("grim", "grimk", "tipck"):
        lat = D.summary("auth-interleaved", f, 64, 1, 0.0, "lat_med_us")
        bw = D.summary("auth-interleaved-stream", f, 64000, 1, 0.0, "mbps")
        out.append(f"| {LABEL[f]} | {fmt_val(lat)} | {fmt_val(bw)} |")
    out.append("")
    return out


def jumbo_table(D):
    """GRIM and TCP over a lower MTU of 1500 and over jumbo frames,
    interleaved run by run: what a larger lower MTU gives each.
    """
    out = []
    if not any(k[0].startswith("jumbo-") for k in D.d):
        return out
    n = len(D.vals("jumbo-interleaved-stream", "grimj", 64000, 1, 0.0, "mbps"))
    out.append(f"### Jumbo frames: GRIM and TCP at two lower MTUs, {n} interleaved runs")
    out.append("")
    out.append("Each run measures GRIM and TCP on eth0 (MTU 1500) and on "
               "eth1 (jumbo frames, the MTU in context.txt) in turn from "
               "one process; the ratio is taken run by run. The interval "
               "is a 95% confidence interval of the median.")
    out.append("")
    out.append("| case | size (B) | ratio | median [95% CI] |")
    out.append("|---|---:|---|---|")
    for test, size, base, peer in JUMBO:
        v = ilv_ratios(D, test, size, peer, base)
        if not v:
            continue
        what = "latency" if ILV[test][2] else "bandwidth"
        out.append(f"| {what} | {size} | {LABEL[base]} ÷ {LABEL[peer]} | "
                   f"{ilv_cell(v)} |")
    out.append("")
    out.append("| family | 64 B one-way latency, median of runs (µs) | "
               "64000 B received MB/s, median of runs |")
    out.append("|---|---:|---:|")
    for f in ("grim", "grimj", "tcp", "tcpj"):
        lat = D.summary("jumbo-interleaved", f, 64, 1, 0.0, "lat_med_us")
        bw = D.summary("jumbo-interleaved-stream", f, 64000, 1, 0.0, "mbps")
        out.append(f"| {LABEL[f]} | {fmt_val(lat)} | {fmt_val(bw)} |")
    out.append("")
    return out


# IP over GRIM: IP over grim0 against IP over the bare veth, per loss
# level, round by round.  (what, test, metric, grim0 family, veth
# family, size, whether grim0 wins with a ratio below 1, target by loss:
# ("<=" | ">=", x), a loss of None for every level).
IP_CASES = [
    ("UDP 64 B ping-pong latency (sockperf)", "ip-pingpong", "lat_med_us",
     "ip-grim-udp", "ip-veth-udp", 64, True, {None: ("<=", 1.2)}),
    ("UDP 64 B ping-pong latency (grim-perf)", "ip-pingpong", "lat_med_us",
     "ip-grim-udp-gp", "ip-veth-udp-gp", 64, True, {None: ("<=", 1.2)}),
    ("TCP 64 B ping-pong latency (sockperf)", "ip-pingpong", "lat_med_us",
     "ip-grim-tcp", "ip-veth-tcp", 64, True, {None: ("<=", 1.2)}),
    ("TCP throughput (iperf3)", "ip-stream", "mbps",
     "ip-grim-tput", "ip-veth-tput", None, False,
     {0.0: (">=", 0.7), 5.0: (">=", 10.0)}),
]
IP_TESTS = ("ip-pingpong", "ip-stream")


def ip_ratios(D, test, metric, a, b, size, loss):
    """@a / @b of @metric in @test at @loss, round by round (both were
    measured in the same round); @size None: whatever size @a has.
    """
    if size is None:
        size = ip_size(D, test, a, loss)
    x = D.vals(test, a, size, 1, loss, metric)
    y = D.vals(test, b, size, 1, loss, metric)
    return [x[r] / y[r] for r in sorted(x) if r in y and y[r] > 0]


def ip_size(D, test, fam, loss):
    sizes = [k[2] for k in D.d if k[0] == test and k[1] == fam and k[4] == loss]
    return sizes[0] if sizes else None


def ip_num(x):
    """A ratio with two decimals, or two significant digits below 0.1."""
    return f"{x:.2f}" if x >= 0.1 or x == 0 else f"{x:.2g}"


def ip_cell(v):
    if not v:
        return "–"
    med, lo, hi = median_ci(v)
    if lo is None:
        return ip_num(med)
    return f"{ip_num(med)} [{ip_num(lo)}–{ip_num(hi)}]"


def target_met(med, lo, hi, op, x):
    """Whether the median @med meets "@op @x", and where the 95%
    interval [@lo, @hi] reaches across the line.
    """
    met = med <= x if op == "<=" else med >= x
    if lo is None:
        return "yes" if met else "no"
    if op == "<=":
        if met and hi > x:
            return f"yes (CI up to {ip_num(hi)})"
        if not met and lo <= x:
            return f"no (CI down to {ip_num(lo)})"
    else:
        if met and lo < x:
            return f"yes (CI down to {ip_num(lo)})"
        if not met and hi >= x:
            return f"no (CI up to {ip_num(hi)})"
    return "yes" if met else "no"


def ip_table(D):
    """IP over grim0 ÷ IP over the bare veth under it, per loss level."""
    out = []
    losses = sorted({k[4] for k in D.d if k[0] in IP_TESTS}
                    | {r["loss"] for r in D.bad if r["test"] in IP_TESTS})
    if not losses:
        return out
    runs = max([len(v) for k, v in D.d.items() if k[0] in IP_TESTS] + [0])
    out.append(f"### IP over GRIM: grim0 ÷ the bare veth, {runs} rounds per loss level")
    out.append("")
    out.append("IPv4 over grim0 (10.72.0.x, GRIM's reliable path) against "
               "IPv4 over the veth under it (eth0, 10.71.0.x), netem loss "
               "on the veth in both cases. In each round, 64 B ping-pongs "
               "(sockperf, UDP and TCP, and grim-perf, UDP; one-way latency "
               "= RTT/2) and iperf3 TCP (bandwidth the receiver counted) run "
               "over each in turn, the order alternating from round to "
               "round; the ratio is grim0 ÷ veth in the same round, median "
               "over the rounds with a 95% confidence interval of the "
               "median (it needs at least 6 rounds). **Latency: < 1 means "
               "grim0 is faster; throughput: > 1 means grim0 is faster.** "
               "`–`: no pair of results. sockperf's ping-pong waits for a "
               "lost message until its run ends: over a lossy bare veth its "
               "UDP has no valid round trip left (a failed case) and its "
               "TCP few, each held up by TCP's retransmission timeout; "
               "grim-perf's UDP gives a lost round trip up after 50 ms.")
    out.append("")
    out.append("| loss | case | grim0 ÷ veth, median [95% CI] | grim0 faster in "
               "| target | met |")
    out.append("|---:|---|---|---:|---|---|")
    for loss in losses:
        for what, test, metric, a, b, size, lower_wins, targets in IP_CASES:
            v = ip_ratios(D, test, metric, a, b, size, loss)
            tgt = targets.get(loss, targets.get(None))
            target, met, wins = "–", "–", "–"
            if tgt:
                target = f"{tgt[0]} {tgt[1]:g}"
            if v:
                med, lo, hi = median_ci(v)
                n = sum(1 for x in v if (x < 1 if lower_wins else x > 1))
                wins = f"{n} of {len(v)}"
                if tgt:
                    met = target_met(med, lo, hi, *tgt)
            out.append(f"| {lossname(loss)} | {what} | {ip_cell(v)} | {wins} "
                       f"| {target} | {met} |")
    out.append("")
    out.append("| loss | UDP veth (µs) | UDP grim0 (µs) | UDP veth, grim-perf "
               "(µs) [answered] | UDP grim0, grim-perf (µs) | TCP veth (µs) | "
               "TCP grim0 (µs) | TCP veth (MB/s) | TCP grim0 (MB/s) |")
    out.append("|---:|" + "---:|" * 8)
    for loss in losses:
        cells = []
        for f in ("ip-veth-udp", "ip-grim-udp", "ip-veth-udp-gp",
                  "ip-grim-udp-gp", "ip-veth-tcp", "ip-grim-tcp"):
            c = fmt_val(D.summary("ip-pingpong", f, 64, 1, loss, "lat_med_us"))
            if f == "ip-veth-udp-gp":
                rows = D.d.get(("ip-pingpong", f, 64, 1, loss), {}).values()
                sent = sum(r["sent"] for r in rows)
                if sent:
                    got = sum(r["rcvd"] for r in rows)
                    c += f" [{100 * got / sent:.1f}%]"
            cells.append(c)
        for f in ("ip-veth-tput", "ip-grim-tput"):
            size = ip_size(D, "ip-stream", f, loss)
            cells.append("–" if size is None else
                         fmt_val(D.summary("ip-stream", f, size, 1, loss, "mbps")))
        out.append(f"| {lossname(loss)} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("Values: median over the rounds (min–max); latency is the "
               "median one-way latency of each run (sockperf's, or "
               "grim-perf's of the round trips answered within 50 ms; "
               "[answered]: their share of all the veth's).")
    out.append("")
    return out


def ilv_ratios(D, test, size, peer, base="grim"):
    """@base / peer ratios of the interleaved runs of @test at @size, run
    by run (both were measured in the same run).
    """
    metric = ILV[test][0]
    g = D.vals(test, base, size, 1, 0.0, metric)
    p = D.vals(test, peer, size, 1, 0.0, metric)
    return [g[r] / p[r] for r in sorted(g) if r in p and p[r] > 0]


def ilv_cell(v):
    if not v:
        return "–"
    med, lo, hi = median_ci(v)
    return f"{med:.2f}" if lo is None else f"{med:.2f} [{lo:.2f}–{hi:.2f}]"


def ilv_table(D, test):
    out = []
    metric, what, lower_wins = ILV[test]
    for size in D.sizes(test, 1, 0.0):
        g = D.vals(test, "grim", size, 1, 0.0, metric)
        out.append(f"### Interleaved {what}: {size} B, {len(g)} runs")
        out.append("")
        if test == "interleaved":
            out.append("In each run one process makes round trips of every "
                       "family in turn (the order rotating), so whatever the "
                       "machine does meanwhile falls on all of them alike; "
                       "the ratio is GRIM's median one-way latency ÷ the "
                       "peer's in the same run. **< 1: GRIM is faster.**")
        else:
            out.append("In each run one process sends bursts of about 1 MiB "
                       "of every family in turn (the order rotating), each "
                       "burst timed from its first send to the receiver's "
                       "report of what it got; the ratio is GRIM's received "
                       "bandwidth ÷ the peer's in the same run. **> 1: GRIM "
                       "is faster.**")
        out.append("The interval is a 95% confidence interval of the median "
                   "ratio (order statistics; it needs at least 6 runs); p is "
                   "a two-sided sign test of GRIM winning as often as "
                   "losing.")
        out.append("")
        out.append("| GRIM | peer | median ratio | 95% CI | GRIM faster in | "
                   "sign test p |")
        out.append("|---|---|---:|---|---:|---:|")
        for base in ("grim", "grimo"):
            for peer in PEERS[:3]:
                v = ilv_ratios(D, test, size, peer, base)
                if not v:
                    continue
                med, lo, hi = median_ci(v)
                ci = "–" if lo is None else f"{lo:.2f}–{hi:.2f}"
                wins = sum(1 for x in v if (x < 1 if lower_wins else x > 1))
                out.append(f"| {LABEL[base]} | {LABEL[peer]} | {med:.2f} | "
                           f"{ci} | {wins} of {len(v)} | "
                           f"{sign_test(wins, len(v)):.3f} |")
        out.append("")
        if test == "interleaved":
            out.append("| family | one-way latency, median of runs (µs) | "
                       "p99 | best |")
            out.append("|---|---:|---:|---:|")
            metrics = ("lat_med_us", "lat_p99_us", "lat_min_us")
        else:
            out.append("| family | received MB/s, median of runs | "
                       "messages/s | UDP: % lost |")
            out.append("|---|---:|---:|---:|")
            metrics = ("mbps", "msgs_per_s", "loss_pct")
        for f in ["grim", "grimo"] + FAMS[1:4]:
            if not D.vals(test, f, size, 1, 0.0, metrics[0]):
                continue
            cells = [fmt_val(D.summary(test, f, size, 1, 0.0, m))
                     for m in metrics]
            if test != "interleaved" and f != "udp":
                cells[2] = "–"
            out.append(f"| {LABEL[f]} | " + " | ".join(cells) + " |")
        out.append("")
    return out


# The cases at scale.  "rate": grim-perf -T rate, senders = sockets of
# one process, rep = run.  "streams...": GRIM over three NIs alike but
# for the live send streams host 1 keeps on each (senders = that count),
# measured in turn by one process; "-ctl" before the extra streams.
SCALE_PEERS = ["tipc", "udp", "tcp"]
SCALE_TARGET = ("streams", 10000, "<=", 1.1)


def load_streams(run):
    """streams.csv of a run (the live streams grim link show gave), or []."""
    try:
        with open(os.path.join(run, "streams.csv")) as f:
            return [{k: (v if k in ("phase", "dev") else int(v))
                     for k, v in r.items()} for r in csv.DictReader(f)]
    except (OSError, ValueError):
        return []


def paired(D, test, a, b, metric, size=64):
    """Ratios a / b of @metric in @test, run by run, where a and b are
    (family, senders) measured in the same run.
    """
    x = D.vals(test, a[0], size, a[1], 0.0, metric)
    y = D.vals(test, b[0], size, b[1], 0.0, metric)
    return [x[r] / y[r] for r in sorted(x) if r in y and y[r] > 0]


def counts_seen(streams, phase, host, nominal, col):
    v = [r[col] for r in streams if r["phase"] == phase and
         r["host"] == host and r["nominal"] == nominal]
    if not v:
        return "–"
    return str(min(v)) if min(v) == max(v) else f"{min(v)}–{max(v)}"


def scale_tables(D, streams):
    out = []
    socks = sorted({k[3] for k in D.d if k[0] == "rate"})
    if socks:
        runs = len(D.vals("rate", "grim", 64, socks[0], 0.0, "msgs_per_s"))
        out.append(f"### At scale: 64 B message rate with {', '.join(map(str, socks))} "
                   f"sender sockets, {runs} runs")
        out.append("")
        out.append("`grim-perf -T rate -S N`: one process sends on its N "
                   "sockets in turn without blocking; a socket that would "
                   "block waits in poll() while the others go on. Each "
                   "run measures every family at every N, 1 s each, the "
                   "families' order rotating from run to run; the ratio is "
                   "GRIM's received messages/s ÷ the peer's in the same "
                   "run. **> 1: GRIM is faster.** Median ratio [95% "
                   "confidence interval; it needs at least 6 runs], then "
                   "how often GRIM was faster and the sign test's p.")
        out.append("")
        out.append("| sender sockets | ÷ TIPC | ÷ UDP | ÷ TCP |")
        out.append("|---:|---|---|---|")
        for n in socks:
            cells = []
            for p in SCALE_PEERS:
                v = paired(D, "rate", ("grim", n), (p, n), "msgs_per_s")
                if not v:
                    cells.append("–")
                    continue
                wins = sum(1 for x in v if x > 1)
                cells.append(f"{ilv_cell(v)}, {wins} of {len(v)}, "
                             f"p {sign_test(wins, len(v)):.2f}")
            out.append(f"| {n} | " + " | ".join(cells) + " |")
        out.append("")
        fams = ["grim"] + SCALE_PEERS
        out.append("| sender sockets | " + " | ".join(
            f"{LABEL[f]}, messages/s" for f in fams) + " | UDP: % lost |")
        out.append("|---:|" + "---:|" * (len(fams) + 1))
        for n in socks:
            cells = [fmt_val(D.summary("rate", f, 64, n, 0.0, "msgs_per_s"))
                     for f in fams]
            cells.append(fmt_val(D.summary("rate", "udp", 64, n, 0.0,
                                           "loss_pct")))
            out.append(f"| {n} | " + " | ".join(cells) + " |")
        out.append("")

    live = sorted({k[3] for k in D.d if k[0] == "streams"})
    if not live:
        return out
    base, more = live[0], live[1:]
    runs = len(D.vals("streams", "grim", 64, base, 0.0, "lat_med_us"))
    ctl = len(D.vals("streams-ctl", "grim", 64, base, 0.0, "lat_med_us"))
    out.append(f"### At scale: GRIM with {', '.join(map(str, live))} live "
               f"streams, {runs} runs")
    out.append("")
    out.append("A stream is GRIM's send state for one (local port, peer, "
               "remote port); it lives in its NI's tables until it idles "
               "for `streamidle` (600 s here). Three NIs set up alike, each "
               "on a veth pair of its own, carry the counts: on two of them "
               "a process on host 1 keeps the extra streams live (one "
               "message each, then idle). One client process makes 64 B "
               "round trips (then 64 B bursts) on a socket over each NI in "
               f"turn, the order rotating, as in the interleaved cases; the "
               f"ratio is taken run by run. The control is the same, {ctl} "
               "runs before the extra streams were made: how alike the NIs "
               "are. Latency: **> 1: slower than with one stream**; rate: "
               "**< 1: slower**.")
    out.append("")
    out.append(f"| case | live streams | ÷ GRIM with {base} stream, median "
               "[95% CI] | runs slower | sign test p | control, median "
               "[95% CI] | target | met |")
    out.append("|---|---:|---|---:|---:|---|---|---|")
    for test, ctest, metric, what, higher_worse in (
            ("streams", "streams-ctl", "lat_med_us", "latency", True),
            ("streams-rate", "streams-ctl-rate", "msgs_per_s",
             "message rate", False)):
        for n in more:
            v = paired(D, test, ("grim", n), ("grim", base), metric)
            if not v:
                continue
            c = paired(D, ctest, ("grim", n), ("grim", base), metric)
            slower = sum(1 for x in v if (x > 1 if higher_worse else x < 1))
            target, met = "–", "–"
            if (test, n) == SCALE_TARGET[:2]:
                op, x = SCALE_TARGET[2:]
                med, lo, hi = median_ci(v)
                target = f"{op} {x}"
                met = "yes" if med <= x else "no"
                if med <= x and hi is not None and hi > x:
                    met = f"yes (CI up to {hi:.2f})"
            out.append(f"| {what}, 64 B | {n} | {ilv_cell(v)} | {slower} of "
                       f"{len(v)} | {sign_test(slower, len(v)):.3f} | "
                       f"{ilv_cell(c)} | {target} | {met} |")
    out.append("")
    out.append("| live streams | host 1 send streams seen | host 2 receive "
               "streams seen | one-way latency, median of runs (µs) | p99 "
               "| messages/s |")
    out.append("|---:|---|---|---:|---:|---:|")
    for n in live:
        cells = [counts_seen(streams, "live", 1, n, "tx_streams"),
                 counts_seen(streams, "live", 2, n, "rx_streams")]
        cells += [fmt_val(D.summary("streams", "grim", 64, n, 0.0, m))
                  for m in ("lat_med_us", "lat_p99_us")]
        cells.append(fmt_val(D.summary("streams-rate", "grim", 64, n, 0.0,
                                       "msgs_per_s")))
        out.append(f"| {n} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("The stream counts are those `grim link show` gave after "
               "each run (`streams.csv`); host 2 forgets receive streams "
               "idle for twice `dead_ms`, and takes at most 8,192 from one "
               "peer, so the live streams are host 1's send streams.")
    out.append("")
    return out


def fmt(s, digits=2):
    if s is None:
        return "–"
    med, lo, hi = s
    if len(set((med, lo, hi))) == 1:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} ({lo:.{digits}f}–{hi:.{digits}f})"


def fmt_val(s):
    if s is None:
        return "–"
    med = s[0]
    d = 0 if med >= 100 else 1 if med >= 10 else 2
    return fmt(s, d)


def human(n):
    if n >= 1000 and n % 1000 == 0 and n % 1024:
        return f"{n // 1000}k"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024}K"
    return str(n)


def lossname(l):
    return f"{l:g}%"


# The group cases (guest.sh only=mcast): families and the tests.
MC_FAMS = ("grim-group", "grim-unicast", "tipc-group")
MC_TESTS = (("inject", "the sender's time in its send calls"),
            ("complete", "until the last member's answer"))


def mc_cell(v, digits=1):
    if not v:
        return "–"
    med, lo, hi = median_ci(v)
    if lo is None:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} [{lo:.{digits}f}–{hi:.{digits}f}]"


def mc_ratios(D, test, size, n, base, peer):
    g = D.vals(test, base, size, n, 0.0, "lat_med_us")
    p = D.vals(test, peer, size, n, 0.0, "lat_med_us")
    return [g[r] / p[r] for r in sorted(g) if r in p and p[r] > 0]


def mcast_tables(D):
    """One message to N members: each family's median over the runs (of
    the medians of their rounds), and GRIM's group over the others, run
    by run (they ran in turn in each run).
    """
    ns = sorted({k[3] for k in D.d if k[0] == "inject"})
    if not ns:
        return []
    out = ["### Groups: one message to N members, each answering", "",
           "Microseconds, median over runs [95% CI]; ratios run by run. "
           "**Below 1: GRIM's group is faster.**", ""]
    for size in sorted({k[2] for k in D.d if k[0] == "inject"}):
        for test, what in MC_TESTS:
            out.append(f"#### {test} ({what}), {size} B")
            out.append("")
            out.append("| N | " + " | ".join(MC_FAMS)
                       + " | group ÷ unicast | group ÷ TIPC |")
            out.append("|---:|" + "---|" * (len(MC_FAMS) + 2))
            for n in ns:
                cells = [mc_cell(list(D.vals(test, f, size, n, 0.0,
                                             "lat_med_us").values()))
                         for f in MC_FAMS]
                cells += [mc_cell(mc_ratios(D, test, size, n, "grim-group", p), 2)
                          for p in ("grim-unicast", "tipc-group")]
                out.append(f"| {n} | " + " | ".join(cells) + " |")
            out.append("")
        # Injection flat in N: the largest group's over the smallest's.
        lo = D.vals("inject", "grim-group", size, ns[0], 0.0, "lat_med_us")
        hi = D.vals("inject", "grim-group", size, ns[-1], 0.0, "lat_med_us")
        if lo and hi:
            out.append(f"GRIM group injection, N = {ns[-1]} ÷ N = {ns[0]} "
                       f"({size} B): {statistics.median(hi.values()) / statistics.median(lo.values()):.2f}")
            out.append("")
    return out


def mcast_plots(D, run):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = sorted({k[3] for k in D.d if k[0] == "inject"})
    sizes = sorted({k[2] for k in D.d if k[0] == "inject"})
    if not ns:
        return
    fig, axes = plt.subplots(len(sizes), 2, figsize=(10.4, 4.2 * len(sizes)),
                             squeeze=False)
    for i, size in enumerate(sizes):
        for j, (test, what) in enumerate(MC_TESTS):
            ax = axes[i][j]
            for f in MC_FAMS:
                xs, ys, lo, hi = [], [], [], []
                for n in ns:
                    v = list(D.vals(test, f, size, n, 0.0, "lat_med_us").values())
                    if not v:
                        continue
                    med, a, b = median_ci(v)
                    xs.append(n)
                    ys.append(med)
                    lo.append(med - (a if a is not None else med))
                    hi.append((b if b is not None else med) - med)
                if xs:
                    ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3,
                                label=f)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("members N")
            ax.set_ylabel("µs")
            ax.set_title(f"{test}: {what}, {size} B", fontsize=9)
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(run, "groups_vs_n.png"), dpi=110)
    plt.close(fig)


def tables(D, rate_senders, streams=()):
    out = []
    out.append("Ratios are GRIM ÷ peer, median over repetitions (min–max in "
               "brackets). **Latency: < 1 means GRIM is faster. Bandwidth and "
               "message rate: > 1 means GRIM is faster.** `–`: not measured "
               "(raw frames are single Ethernet frames, ≤ 1500 B) or failed.")
    out.append("")
    out.append("### Ratio table (GRIM ÷ peer)")
    out.append("")
    out.append("| case | size (B) | loss | ÷ TIPC | ÷ UDP | ÷ TCP | ÷ raw |")
    out.append("|---|---:|---:|---|---|---|---|")
    for loss in D.losses:
        for s in D.sizes("pingpong", 1, loss):
            cells = [fmt(D.ratio("pingpong", p, s, 1, loss, "lat_med_us"))
                     for p in PEERS]
            out.append(f"| latency (median) | {s} | {lossname(loss)} | "
                       + " | ".join(cells) + " |")
    for s in D.sizes("interleaved", 1, 0.0):
        cells = [ilv_cell(ilv_ratios(D, "interleaved", s, p)) for p in PEERS]
        out.append(f"| latency, interleaved (median, [95% CI]) | {s} "
                   "| 0% | " + " | ".join(cells) + " |")
    for s in D.sizes("pingpong", 1, 0.0):
        cells = [fmt(D.ratio("pingpong", p, s, 1, 0.0, "lat_min_us"))
                 for p in PEERS]
        out.append(f"| latency (best round trip) | {s} | 0% | "
                   + " | ".join(cells) + " |")
    for loss in D.losses:
        for s in D.sizes("stream", 1, loss):
            cells = [fmt(D.ratio("stream", p, s, 1, loss, "mbps"))
                     for p in PEERS[:3]] + ["–"]
            out.append(f"| bandwidth | {s} | {lossname(loss)} | "
                       + " | ".join(cells) + " |")
    for s in D.sizes("interleaved-stream", 1, 0.0):
        cells = [ilv_cell(ilv_ratios(D, "interleaved-stream", s, p))
                 for p in PEERS]
        out.append(f"| bandwidth, interleaved (median, [95% CI]) | {s} "
                   "| 0% | " + " | ".join(cells) + " |")
        if D.vals("interleaved-stream", "grimo", s, 1, 0.0, "mbps"):
            cells = [ilv_cell(ilv_ratios(D, "interleaved-stream", s, p,
                                         "grimo")) for p in PEERS]
            out.append("| bandwidth, interleaved, datacrc offload "
                       f"(median, [95% CI]) | {s} | 0% | "
                       + " | ".join(cells) + " |")
    for loss in D.losses:
        for n in sorted({1, rate_senders}):
            cells = [fmt(D.ratio("stream", p, 64, n, loss, "msgs_per_s"))
                     for p in PEERS[:3]] + ["–"]
            out.append(f"| msg rate, {n} sender{'s' if n > 1 else ''} | 64 | "
                       f"{lossname(loss)} | " + " | ".join(cells) + " |")
    for n in sorted({k[3] for k in D.d if k[0] == "rate"}):
        cells = [ilv_cell(paired(D, "rate", ("grim", n), (p, n), "msgs_per_s"))
                 for p in PEERS[:3]] + ["–"]
        out.append(f"| msg rate, {n} sender socket{'s' if n > 1 else ''} "
                   "of one process (median, [95% CI]) | 64 | 0% | "
                   + " | ".join(cells) + " |")
    out.append("")

    out.extend(ilv_table(D, "interleaved"))
    out.extend(ilv_table(D, "interleaved-stream"))
    out.extend(auth_table(D))
    out.extend(jumbo_table(D))
    out.extend(ip_table(D))
    out.extend(scale_tables(D, streams))

    if any(k[1] == "grimh" for k in D.d):
        out.append("### GRIM with datacrc off (CRC over headers only), ÷ peer")
        out.append("")
        out.append("| case | size (B) | loss | value | ÷ GRIM (datacrc on) | "
                   "÷ TIPC | ÷ UDP |")
        out.append("|---|---:|---:|---:|---|---|---|")
        for loss in D.losses:
            for test, metric, what in (("pingpong", "lat_med_us", "latency (µs)"),
                                       ("stream", "mbps", "bandwidth (MB/s)")):
                for s in D.sizes(test, 1, loss):
                    if not D.vals(test, "grimh", s, 1, loss, metric):
                        continue
                    cells = [fmt(D.ratio(test, p, s, 1, loss, metric, "grimh"))
                             for p in ("grim", "tipc", "udp")]
                    val = fmt_val(D.summary(test, "grimh", s, 1, loss, metric))
                    out.append(f"| {what} | {s} | {lossname(loss)} | {val} | "
                               + " | ".join(cells) + " |")
        out.append("")

    if not D.reps:
        return finish(out + mcast_tables(D), D)
    out.append("### Latency: one-way (round trip / 2), median µs")
    out.append("")
    out.append("| size (B) | loss | " + " | ".join(LABEL[f] for f in FAMS)
               + " | GRIM p99 |")
    out.append("|---:|---:|" + "---:|" * (len(FAMS) + 1))
    for loss in D.losses:
        for s in D.sizes("pingpong", 1, loss):
            cells = [fmt_val(D.summary("pingpong", f, s, 1, loss, "lat_med_us"))
                     for f in FAMS]
            p99 = fmt_val(D.summary("pingpong", "grim", s, 1, loss, "lat_p99_us"))
            out.append(f"| {s} | {lossname(loss)} | " + " | ".join(cells)
                       + f" | {p99} |")
    out.append("")

    if any(k[1] in SOCKPERF for k in D.d):
        out.append("### Cross-check: grim-perf against sockperf, UDP and TCP "
                   "one-way latency, median µs, loss 0%")
        out.append("")
        out.append("| size (B) | UDP grim-perf | UDP sockperf | TCP grim-perf | "
                   "TCP sockperf |")
        out.append("|---:|---:|---:|---:|---:|")
        for s in D.sizes("pingpong", 1, 0.0):
            cells = [fmt_val(D.summary("pingpong", f, s, 1, 0.0, "lat_med_us"))
                     for f in ("udp", "sockperf-udp", "tcp", "sockperf-tcp")]
            out.append(f"| {s} | " + " | ".join(cells) + " |")
        out.append("")

    out.append("### Streaming bandwidth received, MB/s (UDP: loss % in brackets "
               "after the value)")
    out.append("")
    sfams = FAMS[:4]
    out.append("| size (B) | loss | " + " | ".join(LABEL[f] for f in sfams) + " |")
    out.append("|---:|---:|" + "---:|" * len(sfams))
    for loss in D.losses:
        for s in D.sizes("stream", 1, loss):
            cells = []
            for f in sfams:
                c = fmt_val(D.summary("stream", f, s, 1, loss, "mbps"))
                if f == "udp":
                    lp = D.summary("stream", f, s, 1, loss, "loss_pct")
                    if lp:
                        c += f" [{lp[0]:.1f}% lost]"
                cells.append(c)
            out.append(f"| {s} | {lossname(loss)} | " + " | ".join(cells) + " |")
    out.append("")

    out.append("### 64 B message rate received, messages/s")
    out.append("")
    out.append("| senders | loss | " + " | ".join(LABEL[f] for f in sfams) + " |")
    out.append("|---:|---:|" + "---:|" * len(sfams))
    for loss in D.losses:
        for n in sorted({1, rate_senders}):
            cells = [fmt_val(D.summary("stream", f, 64, n, loss, "msgs_per_s"))
                     for f in sfams]
            out.append(f"| {n} | {lossname(loss)} | " + " | ".join(cells) + " |")
    out.append("")
    out += mcast_tables(D)
    return finish(out, D)


def finish(out, D):
    if D.bad:
        out.append("### Failed cases")
        out.append("")
        for r in D.bad:
            out.append(f"- {r['family']} {r['test']} size {r['size']} x{r['senders']} "
                       f"loss {lossname(r['loss'])} rep {r['rep']}: {r['status']}")
        out.append("")
    return "\n".join(out)


def md_to_rst(md):
    """The tables of ratios.md as reStructuredText list-tables."""
    out, table = [], []

    def flush():
        if not table:
            return
        rows = [[c.strip() for c in r.strip().strip("|").split("|")]
                for r in table if not set(r.replace("|", "").strip()) <= set("-:")]
        out.append(".. list-table::")
        out.append("   :header-rows: 1")
        out.append("")
        for row in rows:
            for i, c in enumerate(row):
                c = c.replace("`", "``").replace("*", "") or "\\"
                out.append(("   * - " if i == 0 else "     - ") + c)
        out.append("")
        table.clear()

    for line in md.splitlines():
        if line.startswith("|"):
            table.append(line)
            continue
        flush()
        if line.startswith("### "):
            title = line[4:]
            out += [title, "-" * len(title)]
        else:
            out.append(line.replace("`", "``"))
    flush()
    return "\n".join(out) + "\n"


def plots(D, run, rate_senders):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def series(ax, test, fam, metric, senders=1, loss=0.0):
        xs, ys, lo, hi = [], [], [], []
        for s in D.sizes(test, senders):
            v = D.summary(test, fam, s, senders, loss, metric)
            if v and v[0] > 0:  # nothing received: in the table, not on a log axis
                xs.append(s)
                ys.append(v[0])
                lo.append(v[0] - v[1])
                hi.append(v[2] - v[0])
        if xs:
            c, m = STYLE[fam]
            ax.errorbar(xs, ys, yerr=[lo, hi], color=c, marker=m, capsize=3,
                        label=LABEL[fam],
                        linestyle="--" if fam in SOCKPERF else "-")

    def by_size(test, metric, fams, ylabel, title, fname, logy=True):
        n = len(D.losses)
        fig, axes = plt.subplots(1, n, figsize=(5.2 * n, 4.4), squeeze=False,
                                 sharey=True)
        for ax, loss in zip(axes[0], D.losses):
            for f in fams:
                series(ax, test, f, metric, loss=loss)
            ax.set_xscale("log", base=2)
            xt = D.sizes(test)
            ax.set_xticks(xt)
            ax.set_xticklabels([human(x) for x in xt])
            if logy:
                ax.set_yscale("log")
            ax.set_xlabel("message size (bytes, log scale)")
            ax.tick_params(axis="x", which="minor", bottom=False)
            ax.set_title(f"netem loss {lossname(loss)}")
            ax.grid(True, which="both", alpha=0.3)
        axes[0][0].set_ylabel(ylabel)
        axes[0][0].legend(fontsize=8)
        fig.suptitle(title + " — median of repetitions, bars: min–max")
        fig.tight_layout()
        fig.savefig(os.path.join(run, fname), dpi=110)
        plt.close(fig)

    by_size("pingpong", "lat_med_us", FAMS + SOCKPERF,
            "one-way latency, RTT/2 (µs, log scale)",
            "Ping-pong latency vs message size", "latency_vs_size.png")
    by_size("stream", "mbps", FAMS[:4], "received bandwidth (MB/s, log scale)",
            "Streaming bandwidth vs message size", "bandwidth_vs_size.png")

    # Under loss: one size per panel, x = loss.
    lat_sizes = D.sizes("pingpong")
    bw_sizes = D.sizes("stream")
    panels = []
    if lat_sizes:
        panels.append(("pingpong", "lat_med_us", min(lat_sizes, key=lambda s: abs(s - 64)),
                       1, FAMS, "one-way latency (µs, log scale)", True))
        panels.append(("pingpong", "lat_med_us", max(lat_sizes), 1, FAMS[:4],
                       "one-way latency (µs, log scale)", True))
    if bw_sizes:
        panels.append(("stream", "mbps", max(bw_sizes), 1, FAMS[:4],
                       "received bandwidth (MB/s)", False))
        panels.append(("stream", "msgs_per_s", 64, rate_senders, FAMS[:4],
                       "received messages/s", False))
    cols = 2 if len(panels) > 2 else len(panels)
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4.4 * rows),
                             squeeze=False)
    flat = [a for row in axes for a in row]
    for ax, (test, metric, size, senders, fams, ylabel, logy) in zip(flat, panels):
        for f in fams:
            xs, ys, lo, hi = [], [], [], []
            for loss in D.losses:
                v = D.summary(test, f, size, senders, loss, metric)
                if v:
                    xs.append(loss)
                    ys.append(v[0])
                    lo.append(v[0] - v[1])
                    hi.append(v[2] - v[0])
            if xs:
                c, m = STYLE[f]
                ax.errorbar(xs, ys, yerr=[lo, hi], color=c, marker=m,
                            capsize=3, label=LABEL[f])
        if logy:
            ax.set_yscale("log")
        what = {"pingpong": "latency", "stream": "bandwidth"}[test]
        if metric == "msgs_per_s":
            what = f"message rate, {senders} senders"
        ax.set_title(f"{what}, {size} B")
        ax.set_xlabel("netem loss on each veth end (%)")
        ax.set_ylabel(ylabel)
        ax.set_xticks(D.losses)
        ax.grid(True, which="both", alpha=0.3)
    flat[0].legend(fontsize=8)
    fig.suptitle("Under packet loss — median of repetitions, bars: min–max")
    fig.tight_layout()
    fig.savefig(os.path.join(run, "under_loss.png"), dpi=110)
    plt.close(fig)


def main():
    run = sys.argv[1]
    rows = load(os.path.join(run, "bench.csv"))
    if not rows:
        print("report: no results", file=sys.stderr)
        return 1
    D = Data(rows)
    rate_senders = max([r["senders"] for r in rows if r["test"] == "stream"]
                       + [1])
    ctx = ""
    try:
        with open(os.path.join(run, "context.txt")) as f:
            ctx = f.read().strip()
    except OSError:
        pass
    md = tables(D, rate_senders, load_streams(run))
    with open(os.path.join(run, "ratios.md"), "w") as f:
        f.write("# GRIM benchmark\n\n")
        f.write(f"{len(D.reps)} repetition(s), netem loss "
                f"{', '.join(lossname(l) for l in D.losses)}.\n\n")
        if ctx:
            f.write("```\n" + ctx + "\n```\n\n")
        f.write(md + "\n")
        f.write("\n![latency](latency_vs_size.png)\n"
                "![bandwidth](bandwidth_vs_size.png)\n"
                "![under loss](under_loss.png)\n")
    with open(os.path.join(run, "ratios.rst"), "w") as f:
        f.write(md_to_rst(md))
    if D.sizes("pingpong"):
        plots(D, run, rate_senders)
    mcast_plots(D, run)
    if "### Groups" in md:
        print()
        print(md[md.index("### Groups"):].strip())
    # The table is what `make bench` ends with.
    start = md.index("### Ratio table")
    end = md.find("### Latency")
    if end < 0:
        end = len(md)
    print()
    print(md[:md.index("### Ratio table")].strip())
    print()
    print(md[start:end].strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
