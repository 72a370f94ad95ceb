"""Cases from the binary files: GGUF (header fields, truncation, bit flips, model
keys, vocabularies, chat templates), llama2.c checkpoints (versions 0 and 2) and
tokenizer.bin. Gguf parses a header to know where each field is, and writes one back."""

import os
import struct

from .common import (I32_EXTREMES, U32_EXTREMES, U64_EXTREMES, Run, flip_bits, flip_bits_in,
                     put, read, write)
from .text_inputs import jinja_bombs

GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<B",
                10: "<Q", 11: "<q", 12: "<d"}


class Gguf:
    """The header of a GGUF file: key/values and tensor infos with the byte offset
    of every count, length, type and value in the file."""

    def __init__(self, data):
        self.data = data
        self.fields = []  # (description, offset, struct format)
        self.kvs = []     # (key, type, value)
        self.tensors = []  # (name, dims, type, offset)
        pos = 4
        self.version, self.n_tensors, self.n_kv = struct.unpack_from("<IQQ", data, pos)
        self.fields += [("tensor count", 8, "<Q"), ("metadata count", 16, "<Q")]
        pos = 24
        for _ in range(self.n_kv):
            key, pos = self._string(pos, "key length")
            self.fields.append((f"{key}: value type", pos, "<I"))
            vtype, = struct.unpack_from("<I", data, pos)
            value, pos = self._value(vtype, pos + 4, key)
            self.kvs.append((key, vtype, value))
        for _ in range(self.n_tensors):
            name, pos = self._string(pos, "tensor name length")
            self.fields.append((f"tensor {name}: n_dims", pos, "<I"))
            n, = struct.unpack_from("<I", data, pos)
            pos += 4
            dims = []
            for d in range(n):
                self.fields.append((f"tensor {name}: dim {d}", pos, "<Q"))
                dims.append(struct.unpack_from("<Q", data, pos)[0])
                pos += 8
            self.fields.append((f"tensor {name}: type", pos, "<I"))
            self.fields.append((f"tensor {name}: offset", pos + 4, "<Q"))
            ttype, toff = struct.unpack_from("<IQ", data, pos)
            pos += 12
            self.tensors.append((name, dims, ttype, toff))
        self.alignment = dict((k, v) for k, _, v in self.kvs).get("general.alignment", 32)
        self.data_start = (pos + self.alignment - 1) // self.alignment * self.alignment

    def _string(self, pos, what):
        n, = struct.unpack_from("<Q", self.data, pos)
        self.fields.append((what, pos, "<Q"))
        return self.data[pos + 8:pos + 8 + n].decode("utf-8", "replace"), pos + 8 + n

    def _value(self, vtype, pos, key):
        if vtype == 8:
            s, pos = self._string(pos, f"{key}: string length")
            return s, pos
        if vtype == 9:
            etype, count = struct.unpack_from("<IQ", self.data, pos)
            self.fields.append((f"{key}: array element type", pos, "<I"))
            self.fields.append((f"{key}: array length", pos + 4, "<Q"))
            pos += 12
            if etype == 8:
                out = []
                for _ in range(count):
                    n, = struct.unpack_from("<Q", self.data, pos)
                    out.append(self.data[pos + 8:pos + 8 + n])
                    pos += 8 + n
                return (etype, out), pos
            fmt = GGUF_SCALARS[etype]
            size = struct.calcsize(fmt)
            return (etype, list(struct.unpack_from("<%d%s" % (count, fmt[1]), self.data, pos))), \
                pos + size * count
        fmt = GGUF_SCALARS[vtype]
        self.fields.append((f"{key}: value", pos, fmt))
        return struct.unpack_from(fmt, self.data, pos)[0], pos + struct.calcsize(fmt)

    def rewrite(self, set_kv=None, drop=()):
        """The file with keys replaced or added (set_kv: key -> (type, value)) or
        dropped, tensor data unchanged (offsets are relative to the data section)."""
        set_kv = dict(set_kv or {})
        kvs = [(k, t, v) for k, t, v in self.kvs if k not in drop and k not in set_kv]
        kvs += [(k, t, v) for k, (t, v) in set_kv.items()]
        out = bytearray(b"GGUF" + struct.pack("<IQQ", self.version, len(self.tensors), len(kvs)))

        def string(s):
            b = s if isinstance(s, (bytes, bytearray)) else s.encode("utf-8")
            return struct.pack("<Q", len(b)) + b

        for k, t, v in kvs:
            out += string(k) + struct.pack("<I", t)
            if t == 8:
                out += string(v)
            elif t == 9:
                etype, items = v
                out += struct.pack("<IQ", etype, len(items))
                for item in items:
                    out += string(item) if etype == 8 else struct.pack(GGUF_SCALARS[etype], item)
            else:
                out += struct.pack(GGUF_SCALARS[t], v)
        for name, dims, ttype, toff in self.tensors:
            out += string(name) + struct.pack("<I", len(dims))
            out += b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", ttype, toff)
        out += b"\0" * ((-len(out)) % self.alignment)
        return bytes(out) + self.data[self.data_start:]


def gguf(inp):
    base_path = inp.model("gguf", "stories1M.q8_0.gguf")
    base = read(base_path)
    g = Gguf(base)
    rng = inp.rng("gguf fields")
    fields = g.fields
    # Every count, length and type field of the header, then tensor fields, to extremes.
    picked = list(fields)
    rng.shuffle(picked)
    for desc, off, fmt in picked[:30]:
        values = U64_EXTREMES if fmt == "<Q" else U32_EXTREMES if fmt == "<I" else [0, 2**31 - 1]
        for v in rng.sample(values, 2):
            if fmt in ("<f", "<d"):
                v = float("nan") if v == 0 else float("inf")
            elif fmt in ("<B", "<b", "<h", "<H", "<i"):
                v = {"<B": 255, "<b": -1, "<H": 65535, "<h": -1, "<i": -1}[fmt] if v else 0
            inp.checkpoint_cases("GGUF", f"{desc} = {v}",
                                  lambda d, off=off, fmt=fmt, v=v:
                                  write(os.path.join(d, "m.gguf"), put(base, off, fmt, v)))
    for cut in [0, 3, 4, 8, 23, 24, 100, 1000, g.data_start - 1, g.data_start,
                g.data_start + 1000, len(base) - 1]:
        inp.checkpoint_cases("GGUF", f"truncated to {cut} bytes",
                              lambda d, cut=cut: write(os.path.join(d, "m.gguf"), base[:cut]))
    for i, flips in enumerate([1, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]):
        r = inp.rng(f"gguf flips {i}")
        inp.checkpoint_cases("GGUF", f"{flips} bit flips in the header (#{i})",
                              lambda d, r=r, flips=flips: write(
                                  os.path.join(d, "m.gguf"),
                                  flip_bits_in(base, r, flips, g.data_start)))
    # Model keys to extremes and to wrong types (rewritten, tensor data unchanged).
    keys = ["llama.block_count", "llama.context_length", "llama.embedding_length",
            "llama.feed_forward_length", "llama.attention.head_count",
            "llama.attention.head_count_kv", "llama.rope.dimension_count",
            "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"]
    for key in keys:
        for t, v in [(4, 0), (4, 2**32 - 1), (4, 2**31 - 1), (10, 2**63 - 1), (5, -1),
                     (8, "5")]:
            inp.checkpoint_cases("GGUF", f"{key} = {v!r} (type {t})",
                                  lambda d, key=key, t=t, v=v: write(
                                      os.path.join(d, "m.gguf"), g.rewrite({key: (t, v)})))
    for v in [0.0, -1.0, float("nan"), float("inf"), 1e30]:
        for key in ["llama.attention.layer_norm_rms_epsilon", "llama.rope.freq_base"]:
            inp.checkpoint_cases("GGUF", f"{key} = {v}",
                                  lambda d, key=key, v=v: write(
                                      os.path.join(d, "m.gguf"), g.rewrite({key: (6, v)})))
    toks = dict((k, v) for k, _, v in g.kvs)["tokenizer.ggml.tokens"][1]
    token_edits = {
        "a 1 MB token": lambda t: [b"x" * (1 << 20)] + t[1:],
        "empty tokens": lambda t: [b""] * len(t),
        "duplicate tokens": lambda t: [t[5]] * len(t),
        "invalid UTF-8 tokens": lambda t: [b"\xff\xfe" + x for x in t],
        "one token": lambda t: t[:1],
        "twice the tokens": lambda t: t + t,
    }
    for what, edit in token_edits.items():
        inp.checkpoint_cases("GGUF", f"tokenizer.ggml.tokens: {what}",
                              lambda d, edit=edit: write(
                                  os.path.join(d, "m.gguf"),
                                  g.rewrite({"tokenizer.ggml.tokens": (9, (8, edit(toks)))})),
                              runner=0)
    for what, value in [("nan scores", (6, [float("nan")] * len(toks))),
                        ("too few scores", (6, [0.0])), ("scores as strings", (8, [b"x"] * len(toks)))]:
        inp.checkpoint_cases("GGUF", f"tokenizer.ggml.scores: {what}",
                              lambda d, value=value: write(
                                  os.path.join(d, "m.gguf"),
                                  g.rewrite({"tokenizer.ggml.scores": (9, value)})), runner=0)
    # A chat template in the file: the Jinja bombs reach llama-cli -m chat from a model.
    for label, source in list(jinja_bombs().items())[:12] + [
            ("a 10 MB template", "{{ bos_token }}" + "x" * (10 << 20))]:
        def make(d, source=source):
            path = write(os.path.join(d, "m.gguf"),
                         g.rewrite({"tokenizer.chat_template": (8, source)}))
            return Run("llama-cli", ["-c", path, "-m", "chat", "-s", "8", "-t", "0", "-p", "Hi"],
                       ["m.gguf", path])
        inp.add("GGUF", f"tokenizer.chat_template: {label}", make)


def llama2c(inp):
    base = read(inp.model("stories1M.bin"))
    tok = inp.model("tok2048.bin")
    names = ["dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"]
    rng = inp.rng("llama2c fields")
    for i, name in enumerate(names):
        for v in I32_EXTREMES:
            if v == 1 and name in ("dim", "hidden_dim"):
                continue
            inp.checkpoint_cases("llama2.c checkpoint", f"{name} = {v}",
                                  lambda d, i=i, v=v: write(os.path.join(d, "m.bin"),
                                                            put(base, 4 * i, "<i", v)), k=tok)
    for cut in [0, 4, 27, 28, 29, 1000, len(base) // 2, len(base) - 4, len(base) - 1]:
        inp.checkpoint_cases("llama2.c checkpoint", f"truncated to {cut} bytes",
                              lambda d, cut=cut: write(os.path.join(d, "m.bin"), base[:cut]), k=tok)
    for i, flips in enumerate([1, 2, 4, 8, 16, 32]):
        r = inp.rng(f"llama2c flips {i}")
        inp.checkpoint_cases("llama2.c checkpoint", f"{flips} bit flips in the header",
                              lambda d, r=r, flips=flips: write(
                                  os.path.join(d, "m.bin"), flip_bits_in(base, r, flips, 28)),
                              k=tok)
    weights = len(base) - 28
    for what, value in [("infinite", float("inf")), ("NaN", float("nan")), ("huge", 3e38)]:
        for runner in (0, 1):
            def make(d, value=value, runner=runner):
                data = base[:28] + struct.pack("<f", value) * (weights // 4)
                path = write(os.path.join(d, "m.bin"), data)
                return inp.checkpoint_runs(path, tok)[runner]
            inp.add("llama2.c checkpoint", f"every weight {what} (run {runner})", make)
    v2 = read(inp.model("q-gqa.v2.bin"))
    v2_fields = [("magic", 0, "<I", [0, 0x616b3431, 2**32 - 1]), ("version", 4, "<i", [0, 3, -1, 2**31 - 1])]
    v2_fields += [(n, 8 + 4 * i, "<i", [0, -1, 2**31 - 1]) for i, n in enumerate(names)]
    v2_fields += [("shared_classifier", 36, "<B", [2, 255]),
                  ("group_size", 37, "<i", [0, -1, 1, 3, 2**31 - 1, 65536])]
    for name, off, fmt, values in v2_fields:
        for v in values:
            inp.checkpoint_cases("llama2.c checkpoint", f"v2 {name} = {v}",
                                  lambda d, off=off, fmt=fmt, v=v: write(
                                      os.path.join(d, "q.bin"), put(v2, off, fmt, v)),
                                  k=inp.model("tokenizer.bin"))
    for cut in [8, 255, 256, 4096, len(v2) - 1]:
        inp.checkpoint_cases("llama2.c checkpoint", f"v2 truncated to {cut} bytes",
                              lambda d, cut=cut: write(os.path.join(d, "q.bin"), v2[:cut]),
                              k=inp.model("tokenizer.bin"))


def tokenizer_bin(inp):
    base = read(inp.model("tok2048.bin"))
    ck = inp.model("stories1M.bin")
    # Entry offsets: int32 max_token_length, then float score, int32 length, bytes.
    offsets, pos = [], 4
    while pos < len(base):
        offsets.append(pos)
        n, = struct.unpack_from("<i", base, pos + 4)
        pos += 8 + n

    def runs(path, i):
        name = os.path.basename(path)
        if i % 2 == 0:
            return Run("llama-cli", ["-k", path, "--tokenize", "--format", "json", "-p",
                                     "Once upon a time, \u00e9\u4e2d\U0001F600 <s>"], [name, path])
        return Run("llama-cli", ["-c", ck, "-k", path, "-s", "8", "-t", "0", "-p", inp.text],
                   [name, path])

    cases = []
    for v in I32_EXTREMES:
        cases.append((f"max_token_length = {v}", lambda b, v=v: put(b, 0, "<i", v)))
    for entry in [0, 3, 258, len(offsets) - 1]:
        for v in [-1, 2**31 - 1, 100000, 65537]:
            cases.append((f"entry {entry} length = {v}",
                          lambda b, e=entry, v=v: put(b, offsets[e] + 4, "<i", v)))
    for v in [float("nan"), float("inf"), -float("inf")]:
        cases.append((f"every score {v}", lambda b, v=v: b[:4] + b"".join(
            struct.pack("<f", v) + b[o + 4:(offsets + [len(b)])[i + 1]]
            for i, o in enumerate(offsets))))
    for cut in [0, 3, 4, 7, 12, len(base) // 2, len(base) - 1]:
        cases.append((f"truncated to {cut} bytes", lambda b, cut=cut: b[:cut]))
    for i, flips in enumerate([1, 4, 16, 64, 256]):
        r = inp.rng(f"tokenizer.bin flips {i}")
        cases.append((f"{flips} bit flips", lambda b, r=r, flips=flips: flip_bits(b, r, flips)))
    cases.append(("every piece empty", lambda b: b[:4] + b"".join(
        b[o:o + 4] + struct.pack("<i", 0) for o in offsets)))
    cases.append(("every piece the same", lambda b: b[:4] + b"".join(
        b[o:o + 4] + struct.pack("<i", 1) + b"a" for o in offsets)))
    for i, (label, edit) in enumerate(cases):
        inp.add("llama2.c tokenizer.bin", label,
                 lambda d, edit=edit, i=i: runs(write(os.path.join(d, "tok.bin"), edit(base)), i))
