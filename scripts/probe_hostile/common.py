"""The probe's shared pieces: a case, what it runs, seeded mutations of bytes, and
Inputs, the context every parser's cases are made in (scripts/probe-hostile.py)."""

import os
import random
import struct
import zlib

APPS = ("llama-cli", "llama-template", "llama-perplexity", "llama-convert")
I32_EXTREMES = [0, -1, 1, 2**31 - 1, -(2**31), 65536, 100000000]
U64_EXTREMES = [0, 2**64 - 1, 2**31 - 1, 2**32, 2**63 - 1, 2**40]
U32_EXTREMES = [0, 2**32 - 1, 2**31 - 1, 13, 9, 65536]
LONG_FLAGS = {"-c": "--checkpoint", "-k": "--tokenizer", "-f": "--file", "-s": "--steps",
              "-t": "--temperature", "-j": "--threads", "-r": "--seed", "-p": "--prompt",
              "-m": "--mode", "-b": "--backend"}
JSON_EXTREMES = [0, -1, 2**31 - 1, 2**31, 2**63 - 1, 2**64, 10**30, -(2**63), 1e308, -1e308,
                 0.5, "12", "", None, True, [], {}, [1, 2], {"a": 1}, "\u0000\u00ff"]


class Case:
    """One input: `make(dir)` writes its files under dir and returns the run."""

    def __init__(self, parser, label, make):
        self.parser, self.label, self.make = parser, label, make
        self.id = ""


class Run:
    """What to run: the app, its arguments, standard input (a path or None) and the
    strings of which the error line must hold one (the files' names, the flags)."""

    def __init__(self, app, args, names, stdin=None):
        self.app, self.args, self.names, self.stdin = app, args, names, stdin


def rng_for(seed, label):
    return random.Random(seed * 1000003 + zlib.crc32(label.encode()))


def write(path, data):
    with open(path, "wb" if isinstance(data, (bytes, bytearray)) else "w") as f:
        f.write(data)
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


def flip_bits(data, rng, count):
    b = bytearray(data)
    for _ in range(count):
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def flip_bits_in(data, rng, count, end):
    """Bit flips in the first `end` bytes (the headers, where parsing happens)."""
    b = bytearray(data)
    for _ in range(count):
        i = rng.randrange(min(end, len(b)))
        b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def put(data, offset, fmt, value):
    b = bytearray(data)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


class Inputs:
    """Builds the cases from the shared files; `seed` picks the mutations. Each
    parser's module adds its cases through add(); make(dir) writes the input only
    when the case runs, so the list costs nothing to build."""

    def __init__(self, models, reference, seed):
        self.m, self.r, self.seed = models, reference, seed
        self.cases = []
        self.text = "Once upon a time"

    def add(self, parser, label, make):
        self.cases.append(Case(parser, label, make))

    def rng(self, label):
        return rng_for(self.seed, label)

    def model(self, *parts):
        return os.path.join(self.m, *parts)

    def checkpoint_runs(self, path, k=None):
        """Ways to run a checkpoint file or directory at `path`; `k`: a tokenizer flag."""
        tok = ["-k", k] if k else []
        name = os.path.basename(path.rstrip("/"))
        return [
            Run("llama-cli", ["-c", path] + tok + ["-s", "4", "-t", "0", "-p", self.text],
                [name, path]),
            Run("llama-cli", ["-c", path] + tok + ["--verify-checkpoint"], [name, path]),
            Run("llama-convert", [path, path.rstrip("/") + ".out", "--to", "gguf-q8_0"] +
                (["--tokenizer", k] if k else []), [name, path]),
        ]

    def checkpoint_cases(self, parser, label, make_file, k=None, runner=None):
        """One case per mutation, run through the checkpoint runs in turn."""
        n = sum(1 for c in self.cases if c.parser == parser)
        def make(d):
            path = make_file(d)
            runs = self.checkpoint_runs(path, k)
            return runs[runner if runner is not None else n % len(runs)]
        self.add(parser, label, make)

    def hf_dir(self, d, base, replace):
        """A copy of hf/<base> in d/<base> whose files are links to the shared ones,
        except those in `replace` (name -> bytes or str)."""
        src = self.model("hf", base)
        out = os.path.join(d, base)
        os.makedirs(out, exist_ok=True)
        for name in os.listdir(src):
            if name not in replace:
                os.symlink(os.path.join(src, name), os.path.join(out, name))
        for name, data in replace.items():
            write(os.path.join(out, name), data)
        return out

    def special_files(self, d):
        """name -> path: a device that never ends, an empty one, a directory, a FIFO."""
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        empty_dir = os.path.join(d, "empty-dir")
        os.makedirs(empty_dir)
        return {"/dev/zero": "/dev/zero", "/dev/null": "/dev/null", "a directory": empty_dir,
                "a FIFO": fifo}
