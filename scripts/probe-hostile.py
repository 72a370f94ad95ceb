#!/usr/bin/env python3
"""Hostile-input probe: mutates the shared test files and runs the apps on them.

Usage: scripts/probe-hostile.py BUILD_DIR [--strict] [--jobs N] [--only PARSER] [--case ID]

BUILD_DIR is an ASan+UBSan build (scripts/test-sanitized.sh's build-asan/, or one
configured the same way) with llama-cli, llama-template, llama-perplexity and
llama-convert built. Every input is made from the files under the shared models and
reference directories by seeded, deterministic mutations (bit flips, truncation,
header and JSON fields set to extremes or wrong types, deep nesting, Jinja chains and
huge ranges, tokenizer.json pipeline bombs, special files as flags' arguments), so the
same seed makes the same inputs on every machine. Each case runs under a wall-time
cap and a memory cap (resident set polled in /proc and killed at the cap:
`prlimit --as` does not work with ASan's shadow memory) and is classified:

  refused    non-zero exit with one line "<app>: ..." naming the file or flag
  accepted   exit 0 (the input was harmless)
  failure    a signal, a sanitizer report, the time or memory cap, an error of
             several lines or none, an "internal error" (a library exception that
             leaked), "out of memory", or a line naming neither the file nor the flag

It prints a table per parser (inputs tried, refused, accepted, failures), then every
failure by class with the command that reproduces it (`--case ID` runs one case again
and shows its output). Default caps: 20 s and 8 GB per case, as issue 39's probe;
--strict: 1 s of CPU time and 256 MB, the issue's target for each refusal (CPU time,
not wall time, so that other work on a shared machine does not count; --time-cap 1
for wall time on a quiet one). Exit status 1 when a case fails.

Needs python3 (standard library only); documented in docs/robustness.md ("Probing").
The inputs are made in probe_hostile/{binary_files,hf_files,text_inputs}.py, run and
classified in probe_hostile/runner.py.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import sys
import tempfile

from probe_hostile import binary_files, hf_files, text_inputs
from probe_hostile.common import APPS, Inputs
from probe_hostile.runner import Caps, Result, classify, execute, sanitizer_env

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def all_cases(models, reference, seed):
    """Every case, each with an id "<parser>-<n>" that --case finds again."""
    inp = Inputs(models, reference, seed)
    for part in (binary_files.gguf, binary_files.llama2c, binary_files.tokenizer_bin,
                 hf_files.safetensors, hf_files.config_json, hf_files.tokenizer_json,
                 hf_files.tokenizer_config, text_inputs.jinja, text_inputs.messages,
                 text_inputs.flags, text_inputs.perplexity_text):
        part(inp)
    counts = {}
    for c in inp.cases:
        counts[c.parser] = counts.get(c.parser, 0) + 1
        c.id = "%s-%d" % (re.sub(r"[^a-z0-9]+", "-", c.parser.lower()).strip("-"), counts[c.parser])
    return inp.cases


def reproduce(run, build, cwd):
    import shlex
    cmd = "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1 " + \
        shlex.join([os.path.join(build, "bin", run.app)] + run.args)
    if run.stdin:
        cmd += " < " + shlex.quote(run.stdin)
    return f"(cd {shlex.quote(cwd)} && {cmd})"


def run_case(case, args, work, env):
    d = os.path.join(work, case.id)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    try:
        run = case.make(d)
    except Exception as e:  # a mutation that cannot be made is a bug in this script
        return Result(case, None, "failure", f"probe error: {e!r}")
    code, killed, seconds, cpu, peak, err = execute(run, args.build, d, args.caps, env)
    outcome, why = classify(run, code, killed, err, args.caps)
    result = Result(case, run, outcome, why, seconds, cpu, peak, err, code)
    if outcome != "failure" and not args.case:
        shutil.rmtree(d, ignore_errors=True)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", help="build directory with bin/llama-cli etc. (ASan+UBSan)")
    ap.add_argument("--strict", action="store_true",
                    help="caps of 1 s of CPU and 256 MB, the target (wall time stays 20 s)")
    ap.add_argument("--time-cap", type=float, default=20.0, help="wall seconds per case (default 20)")
    ap.add_argument("--cpu-cap", type=float, help="CPU seconds per case (default none; strict 1)")
    ap.add_argument("--mem-cap", type=int, help="MB of resident memory per case (default 8192; strict 256)")
    ap.add_argument("--seed", type=int, default=39, help="picks the mutations (default 39)")
    ap.add_argument("--models", default=os.environ.get("LLAMA_MODELS_DIR", os.path.join(ROOT, "..", "shared", "models")))
    ap.add_argument("--reference", default=os.environ.get("LLAMA_REFERENCE_DIR", os.path.join(ROOT, "..", "shared", "reference")))
    ap.add_argument("--jobs", type=int, default=1, help="cases at a time (default 1: timings stay honest)")
    ap.add_argument("--only", help="run only the parsers whose name contains this")
    ap.add_argument("--case", help="run one case by id and show its output")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--work", help="directory for the inputs (default: a new one under $TMPDIR); "
                    "failing cases' inputs stay there")
    ap.add_argument("--json", help="write every result to this file")
    ap.add_argument("-v", "--verbose", action="store_true", help="a line per case as it ends")
    args = ap.parse_args()
    args.caps = Caps(args.time_cap, args.cpu_cap or (1.0 if args.strict else None),
                     args.mem_cap or (256 if args.strict else 8192))
    for app in APPS:
        if not os.access(os.path.join(args.build, "bin", app), os.X_OK):
            sys.exit(f"probe-hostile: {args.build}/bin/{app}: not built (build llama-cli "
                     "llama-template llama-perplexity llama-convert there)")
    for d in (args.models, args.reference):
        if not os.path.isdir(d):
            sys.exit(f"probe-hostile: {d}: no such directory (--models / --reference)")
    args.build = os.path.abspath(args.build)
    cases = all_cases(os.path.abspath(args.models), os.path.abspath(args.reference), args.seed)
    if args.only:
        cases = [c for c in cases if args.only.lower() in c.parser.lower()]
    if args.case:
        cases = [c for c in cases if c.id == args.case]
        if not cases:
            sys.exit(f"probe-hostile: no case {args.case} (see --list)")
    if args.list:
        for c in cases:
            print(f"{c.id}\t{c.parser}\t{c.label}")
        return 0
    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="probe-hostile-")
    os.makedirs(work, exist_ok=True)
    env = sanitizer_env()
    print(f"probe-hostile: {len(cases)} inputs, seed {args.seed}, caps {args.caps}, build "
          f"{args.build}, inputs in {work}", flush=True)
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for r in pool.map(lambda c: run_case(c, args, work, env), cases):
            results.append(r)
            if args.verbose or args.case:
                print(f"{r.case.id:32} {r.outcome:9} {r.seconds:6.2f} s {r.cpu:6.2f} cpu "
                      f"{r.peak_mb:7.0f} MB  "
                      f"{r.case.label[:60]}" + (f"  [{r.why}]" if r.why else ""), flush=True)
    if args.case:
        r = results[0]
        print(f"exit {r.code}; stderr:\n{r.err[-4000:]}")
        if r.run:
            print("reproduce: " + reproduce(r.run, args.build, os.path.join(work, r.case.id)))
        return 1 if r.outcome == "failure" else 0
    # The table per parser, then every failure by class.
    parsers = []
    for r in results:
        if r.case.parser not in parsers:
            parsers.append(r.case.parser)
    print(f"\n{'parser':28} {'inputs':>6} {'refused':>8} {'accepted':>8} {'failures':>8}")
    totals = [0, 0, 0, 0]
    for p in parsers + ["total"]:
        rs = [r for r in results if p in ("total", r.case.parser)]
        row = [len(rs)] + [sum(r.outcome == o for r in rs) for o in ("refused", "accepted", "failure")]
        if p == "total":
            row = totals
        else:
            totals = [a + b for a, b in zip(totals, row)]
        print(f"{p:28} {row[0]:6} {row[1]:8} {row[2]:8} {row[3]:8}")
    slowest = max(results, key=lambda r: r.seconds)
    busiest = max(results, key=lambda r: r.cpu)
    biggest = max(results, key=lambda r: r.peak_mb)
    print(f"slowest case: {slowest.case.id} {slowest.seconds:.2f} s; most CPU: {busiest.case.id} "
          f"{busiest.cpu:.2f} s; largest: {biggest.case.id} {biggest.peak_mb:.0f} MB")
    failures = [r for r in results if r.outcome == "failure"]
    by_class = {}
    for r in failures:
        by_class.setdefault(r.why, []).append(r)
    for why, rs in sorted(by_class.items(), key=lambda kv: -len(kv[1])):
        print(f"\n{why}: {len(rs)}")
        for r in rs:
            print(f"  {r.case.id} ({r.case.parser}: {r.case.label[:70]}) {r.seconds:.2f} s, "
                  f"{r.cpu:.2f} s CPU, {r.peak_mb:.0f} MB")
            last = [l for l in r.err.splitlines() if l.strip()][-1:] or [""]
            if last[0]:
                print(f"    stderr: {last[0][:200]}")
            if r.run:
                print(f"    {reproduce(r.run, args.build, os.path.join(work, r.case.id))}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"id": r.case.id, "parser": r.case.parser, "label": r.case.label,
                        "outcome": r.outcome, "why": r.why, "seconds": round(r.seconds, 3),
                        "cpu_seconds": round(r.cpu, 3),
                        "peak_mb": round(r.peak_mb, 1), "exit": r.code,
                        "command": r.run and [r.run.app] + r.run.args,
                        "stderr": r.err[-2000:]} for r in results], f, indent=1)
    if not failures:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())