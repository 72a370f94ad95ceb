"""Running one case under caps (wall time, CPU time, resident memory polled in /proc)
and classifying what it did: refused, accepted, or a failure and its class."""

import os
import re
import signal
import subprocess
import tempfile
import time


SANITIZER = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer)[: ]+([\w-]*)"
                       r"|runtime error: ([^\n]{0,160})")
# Lines an app may print on stderr before failing: progress, not the error.
PROGRESS = re.compile(r"^llama-perplexity: (chunk \d+/\d+|encoding )")


def memory_kb(pid):
    """(resident now, peak resident since the last exec) in kB; the peak (VmHWM) also
    catches a spike between two polls, and unlike the rusage of wait4 it does not count
    the memory of this script, which the child shares until it execs."""
    now = peak = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    now = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    peak = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return now, max(now, peak)


def sanitizer_env():
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=1:strict_string_checks=1:" + \
        env.get("ASAN_OPTIONS", "")
    env["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1:" + env.get("UBSAN_OPTIONS", "")
    return env


class Result:
    def __init__(self, case, run, outcome, why, seconds=0.0, cpu=0.0, peak_mb=0.0, err="", code=0):
        self.case, self.run, self.outcome, self.why = case, run, outcome, why
        self.seconds, self.cpu, self.peak_mb, self.err, self.code = seconds, cpu, peak_mb, err, code


def cpu_seconds(pid):
    """User + system time of every thread of `pid` so far (/proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


class Caps:
    """Per case: wall seconds, CPU seconds (None: no CPU cap) and resident MB."""

    def __init__(self, wall, cpu, mem_mb):
        self.wall, self.cpu, self.mem_mb = wall, cpu, mem_mb

    def __str__(self):
        cpu = f", {self.cpu:g} s of CPU" if self.cpu else ""
        return f"{self.wall:g} s{cpu} and {self.mem_mb} MB"


def execute(run, build, cwd, caps, env):
    """Runs one case; returns (exit code or -signal, killed: None|'time'|'cpu'|'memory',
    wall seconds, CPU seconds, peak MB, stderr text)."""
    import resource
    exe = os.path.join(build, "bin", run.app)
    stdin = open(run.stdin, "rb") if run.stdin else subprocess.DEVNULL
    err_file = tempfile.TemporaryFile(dir=cwd)
    start = time.monotonic()
    p = subprocess.Popen([exe] + run.args, stdin=stdin, stdout=subprocess.DEVNULL, stderr=err_file,
                         cwd=cwd, env=env, start_new_session=True,
                         preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))
    killed, peak = None, 0
    while True:
        # The zombie's /proc entry is gone, so read the peak before reaping: waitid
        # with WNOWAIT says whether it has exited without reaping it.
        if os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            _, status, usage = os.wait4(p.pid, 0)
            break
        peak = max(peak, memory_kb(p.pid)[1])
        elapsed = time.monotonic() - start
        if killed is None:
            if peak > caps.mem_mb * 1024:
                killed = "memory"
            elif elapsed > caps.wall:
                killed = "time"
            elif caps.cpu and cpu_seconds(p.pid) > caps.cpu:
                killed = "cpu"
            if killed:
                try:
                    os.killpg(p.pid, signal.SIGKILL)  # the group this case started, nothing else
                except ProcessLookupError:
                    pass
        time.sleep(0.01 if elapsed < 1 else 0.05)
    p.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    seconds = time.monotonic() - start
    cpu = usage.ru_utime + usage.ru_stime  # the child's own, exact
    if run.stdin:
        stdin.close()
    if killed is None and peak > caps.mem_mb * 1024:
        killed = "memory"  # a spike between two polls
    if killed is None and caps.cpu and cpu > caps.cpu:
        killed = "cpu"
    err_file.seek(0, os.SEEK_END)
    size = err_file.tell()
    err_file.seek(0)
    if size <= (8 << 20):
        err = err_file.read()
    else:  # an app that floods stderr: its start and its end
        err = err_file.read(4 << 20) + b"\n" + (err_file.seek(size - (4 << 20)) and err_file.read())
    err = err.decode("utf-8", "replace")
    err_file.close()
    return p.returncode, killed, seconds, cpu, peak / 1024, err


def classify(run, code, killed, err, caps):
    """('refused' | 'accepted' | 'failure', why)."""
    if killed == "time":
        return "failure", f"timeout (over {caps.wall:g} s)"
    if killed == "cpu":
        return "failure", f"over {caps.cpu:g} s of CPU"
    if killed == "memory":
        return "failure", f"memory over {caps.mem_mb} MB"
    m = SANITIZER.search(err)
    if m:
        if m.group(3):
            return "failure", "sanitizer: " + re.sub(r"\d{4,}", "N", m.group(3)).strip()
        return "failure", f"sanitizer: {m.group(1)} {m.group(2)}".strip()
    if code < 0:
        return "failure", f"signal {signal.Signals(-code).name}"
    if code == 0:
        return "accepted", ""
    lines = [l for l in err.splitlines() if l.strip() and not PROGRESS.match(l)]
    if not lines:
        return "failure", f"exit {code} printing nothing"
    if len(lines) > 1:
        return "failure", "an error of several lines"
    line = lines[0]
    if not line.startswith(run.app + ": "):
        return "failure", "an error not from the app"
    if "internal error" in line:
        return "failure", "internal error (a library exception leaked)"
    if "out of memory" in line:
        return "failure", "out of memory (allocation before validation)"
    if not any(n and n in line for n in run.names):
        return "failure", "an error naming neither the file nor the flag"
    return "refused", ""
