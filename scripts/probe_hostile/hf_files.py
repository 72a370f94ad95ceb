"""Cases from the Hugging Face files: safetensors headers and shard indexes,
config.json and generation_config.json, tokenizer.json (vocabularies, merges, added
tokens, pipeline bombs, backtracking regexes) and tokenizer_config.json."""

import json
import os
import struct

from .common import JSON_EXTREMES, U64_EXTREMES, Run, flip_bits, flip_bits_in, put, read, write


def safetensors(inp):
    path = inp.model("hf", "stories1M", "model.safetensors")
    base = read(path)
    n, = struct.unpack_from("<Q", base, 0)
    header = json.loads(base[8:8 + n])
    data = base[8 + n:]
    names = [k for k in header if k != "__metadata__"]

    def with_header(h, raw=None):
        text = (raw if raw is not None else json.dumps(h)).encode()
        text += b" " * ((-len(text)) % 8)
        return struct.pack("<Q", len(text)) + text + data

    cases = []
    for v in U64_EXTREMES + [n - 1, n + 1, len(base)]:
        cases.append((f"header length = {v}", lambda v=v: put(base, 0, "<Q", v)))
    rng = inp.rng("safetensors fields")
    edits = {
        "dtype": ["F64", "I8", "BOOL", "", 5, None, "F8_E4M3", ["F32"]],
        "shape": [[2**31 - 1, 128], [-1], [], [0], [2**63], [2**64], [1] * 20, "128",
                  [[128]], [128, 2048, 2, 2], [1.5, 128]],
        "data_offsets": [[0, 2**63], [5, 1], [-1, 4], [0], "x", [0, 0], [0, 2**64 + 4],
                         [2**63 - 1, 2**63 + 1023], None],
    }
    for field, values in edits.items():
        for v in values:
            t = rng.choice(names)
            def edit(t=t, field=field, v=v):
                h = json.loads(json.dumps(header))
                h[t][field] = v
                return with_header(h)
            cases.append((f"{t}.{field} = {json.dumps(v)}", edit))
    t0 = names[1]
    cases += [
        ("a tensor missing", lambda: with_header({k: v for k, v in header.items() if k != t0})),
        ("an unexpected tensor", lambda: with_header(dict(header, extra={"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}))),
        ("a duplicate tensor name", lambda: with_header(None, json.dumps(header)[:-1] + ", " + json.dumps(t0) + ": " + json.dumps(header[t0]) + "}")),
        ("__metadata__ a list", lambda: with_header(dict(header, __metadata__=[1, 2]))),
        ("__metadata__ nested 100000 deep", lambda: with_header(None, '{"__metadata__": ' + "[" * 100000 + "]" * 100000 + "}")),
        ("the header a list", lambda: with_header([1, 2, 3])),
        ("the header not JSON", lambda: with_header(None, "{" + "\"a\":" * 1000)),
        ("the header 100 MB of spaces", lambda: struct.pack("<Q", 100 << 20) + b" " * (100 << 20) + data),
        ("a tensor's entry a string", lambda: with_header(dict(header, **{t0: "F32"}))),
        ("every tensor at offset 0", lambda: with_header({k: (dict(v, data_offsets=[0, v["data_offsets"][1] - v["data_offsets"][0]]) if k != "__metadata__" else v) for k, v in header.items()})),
    ]
    for cut in [0, 7, 8, 100, 8 + n - 1, 8 + n, 8 + n + 1000, len(base) - 1]:
        cases.append((f"truncated to {cut} bytes", lambda cut=cut: base[:cut]))
    for i, flips in enumerate([1, 4, 16, 64]):
        r = inp.rng(f"safetensors flips {i}")
        cases.append((f"{flips} bit flips in the header", lambda r=r, flips=flips: flip_bits_in(base, r, flips, 8 + n)))
    for i, (label, edit) in enumerate(cases):
        def make(d, edit=edit, i=i):
            out = inp.hf_dir(d, "stories1M", {"model.safetensors": edit()})
            r = inp.checkpoint_runs(out)[i % 3]
            r.names += ["model.safetensors"]
            return r
        inp.add("safetensors", label, make)
    # The shard index of a sharded directory.
    index = json.loads(read(inp.model("hf", "rand-mistral-f16", "model.safetensors.index.json")))
    first = next(iter(index["weight_map"]))
    for label, target in [("a shard ../../../../etc/passwd", "../../../../etc/passwd"),
                          ("a shard /dev/zero", "/dev/zero"), ("a shard that is a directory", "."),
                          ("a missing shard", "nothing.safetensors"), ("a shard name 5", 5),
                          ("a shard name of 1 MB", "x" * (1 << 20)), ("an empty shard name", "")]:
        def make(d, target=target):
            ix = json.loads(json.dumps(index))
            ix["weight_map"][first] = target
            out = inp.hf_dir(d, "rand-mistral-f16", {"model.safetensors.index.json": json.dumps(ix)})
            return Run("llama-cli", ["-c", out, "-s", "4", "-t", "0", "-p", inp.text],
                       ["model.safetensors.index.json", out])
        inp.add("safetensors", f"index: {label}", make)
    for label, text in [("weight_map a list", '{"weight_map": []}'),
                        ("nested 100000 deep", "[" * 100000 + "]" * 100000),
                        ("not JSON", "{\"weight_map\": {"),
                        ("a 70 MB index", '{"weight_map": {}, "x": "' + "a" * (70 << 20) + '"}')]:
        def make(d, text=text):
            out = inp.hf_dir(d, "rand-mistral-f16", {"model.safetensors.index.json": text})
            return Run("llama-cli", ["-c", out, "-s", "4", "-t", "0", "-p", inp.text],
                       ["model.safetensors.index.json", out])
        inp.add("safetensors", f"index: {label}", make)


def config_json(inp):
    base = json.loads(read(inp.model("hf", "stories1M", "config.json")))
    fields = ["hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
              "num_key_value_heads", "head_dim", "vocab_size", "max_position_embeddings",
              "rms_norm_eps", "rope_theta", "tie_word_embeddings", "bos_token_id",
              "eos_token_id", "torch_dtype", "rope_scaling", "hidden_act", "architectures"]
    rng = inp.rng("config.json fields")
    cases = []
    for f in fields:
        for v in rng.sample(JSON_EXTREMES, 4):
            cases.append((f"{f} = {json.dumps(v)}", lambda f=f, v=v: json.dumps(dict(base, **{f: v}))))
    for v in [100000000, 2**31 - 1]:  # issue 39: allocation before validation
        cases.append((f"num_hidden_layers = {v}", lambda v=v: json.dumps(dict(base, num_hidden_layers=v))))
    for scaling in [{"rope_type": "llama3", "factor": 0, "low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 64},
                    {"rope_type": "llama3", "factor": 8, "low_freq_factor": 4, "high_freq_factor": 4, "original_max_position_embeddings": 0},
                    {"rope_type": "linear", "factor": -1}, {"rope_type": "yarn", "factor": 1e308},
                    {"type": "dynamic", "factor": 2}, {"rope_type": 5}]:
        cases.append((f"rope_scaling = {json.dumps(scaling)}", lambda s=scaling: json.dumps(dict(base, rope_scaling=s))))
    text = json.dumps(base)
    cases += [
        ("a duplicate key", lambda: text[:-1] + ', "hidden_size": 64}'),
        ("nested 100000 deep", lambda: text[:-1] + ', "x": ' + "[" * 100000 + "]" * 100000 + "}"),
        ("a key chain 100000 long", lambda: text[:-1] + ', "x": ' + '{"a": ' * 100000 + "1" + "}" * 100000 + "}"),
        ("a 17 MB config", lambda: text[:-1] + ', "x": "' + "a" * (17 << 20) + '"}'),
        ("invalid UTF-8", lambda: text[:-1].encode() + b', "x": "\xff\xfe"}'),
        ("a list", lambda: "[1, 2, 3]"),
        ("empty", lambda: ""),
        ("a number 10^100000", lambda: text[:-1] + ', "x": 1' + "0" * 100000 + "}"),
        ("truncated", lambda: text[:len(text) // 2]),
    ]
    gen = json.loads(read(inp.model("hf", "stories1M", "generation_config.json")))
    for v in [-1, 2**31, [1] * 1000000, [[1]], "2", None, 2**64]:
        cases.append((f"generation_config eos_token_id = {json.dumps(v)[:40]}",
                      lambda v=v: ("generation_config.json", json.dumps(dict(gen, eos_token_id=v)))))
    cases.append(("generation_config nested 100000 deep", lambda: ("generation_config.json", "[" * 100000 + "]" * 100000)))
    for i, (label, edit) in enumerate(cases):
        def make(d, edit=edit, i=i):
            e = edit()
            name, content = e if isinstance(e, tuple) else ("config.json", e)
            out = inp.hf_dir(d, "stories1M", {name: content})
            r = inp.checkpoint_runs(out)[i % 2]
            r.names += [name]
            return r
        inp.add("config.json", label, make)


def tokenizer_json(inp):
    base = json.loads(read(inp.model("hf", "stories1M", "tokenizer.json")))

    def edited(**changes):
        t = json.loads(json.dumps(base))
        for path, v in changes.items():
            node = t
            keys = path.split("__")
            for k in keys[:-1]:
                node = node[k]
            node[keys[-1]] = v
        return json.dumps(t)

    def raw(key, text):
        """The file with the top-level `key` set to JSON text too deep for Python's parser."""
        return json.dumps(dict(base, **{key: "@RAW@"})).replace('"@RAW@"', text)

    def replace(n, a, b):
        return [{"type": "Replace", "pattern": {"String": a}, "content": b}] * n

    a100k = "a" * 100000
    cases = [
        # Pipeline bombs (issue 39): output growing exponentially or without bound.
        ("48 normalizer Replace a -> aa", lambda: edited(normalizer={"type": "Sequence", "normalizers": replace(48, "a", "aa")}), "aaaa"),
        ("32 normalizer Replace a -> aaaa", lambda: edited(normalizer={"type": "Sequence", "normalizers": replace(32, "a", "aaaa")}), "a"),
        ("400 normalizer Prepend of 100 KB", lambda: edited(normalizer={"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": a100k}] * 400}), "hi"),
        ("48 decoder Replace a -> aa", lambda: edited(decoder={"type": "Sequence", "decoders": replace(48, "a", "aa")}), "aaaa"),
        ("400 decoder Replace of 100 KB", lambda: edited(decoder={"type": "Sequence", "decoders": replace(400, "a", a100k)}), "aaaa"),
        ("a Replace regex that backtracks", lambda: edited(normalizer={"type": "Replace", "pattern": {"Regex": "(a*)*b"}, "content": "x"}), "a" * 30000),
        ("a Split regex that backtracks polynomially", lambda: edited(pre_tokenizer={"type": "Split", "pattern": {"Regex": ".{0,3000}.{0,3000}[^a]"}, "behavior": "Isolated", "invert": False}), "a" * 100000),
        ("a Split regex with nested quantifiers", lambda: edited(pre_tokenizer={"type": "Split", "pattern": {"Regex": "(a|aa)+$"}, "behavior": "Isolated", "invert": False}), "a" * 50000 + "b"),
        ("a Split regex that is invalid", lambda: edited(pre_tokenizer={"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated", "invert": False}), "aaa"),
        ("a Split regex of 1 MB", lambda: edited(pre_tokenizer={"type": "Split", "pattern": {"Regex": "a" * (1 << 20)}, "behavior": "Isolated", "invert": False}), "aaa"),
        ("a normalizer Sequence nested 10000 deep", lambda: raw("normalizer", '{"type": "Sequence", "normalizers": [' * 10000 + '{"type": "NFC"}' + "]}" * 10000), "hi"),
        ("a pre_tokenizer Sequence nested 10000 deep", lambda: raw("pre_tokenizer", '{"type": "Sequence", "pretokenizers": [' * 10000 + '{"type": "Whitespace"}' + "]}" * 10000), "hi"),
        ("a decoder Sequence nested 10000 deep", lambda: raw("decoder", '{"type": "Sequence", "decoders": [' * 10000 + '{"type": "Fuse"}' + "]}" * 10000), "hi"),
        ("100000 normalizers", lambda: edited(normalizer={"type": "Sequence", "normalizers": [{"type": "NFC"}] * 100000}), "hi"),
        ("post_processor with 1000000 special tokens", lambda: edited(post_processor={"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}] * 1000000 + [{"Sequence": {"id": "A", "type_id": 0}}], "pair": [], "special_tokens": base["post_processor"]["special_tokens"]}), "hi"),
        ("post_processor special token ids huge", lambda: edited(post_processor={"type": "TemplateProcessing", "single": base["post_processor"]["single"], "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [2**31 - 1, -1], "tokens": ["<s>"]}}}), "hi"),
    ]
    vocab = list(base["model"]["vocab"])
    rng = inp.rng("tokenizer.json fields")
    for v in [-1, 2**31 - 1, 2**24 + 1, 1e30, "5", None, [1], 0]:
        piece = rng.choice(vocab[3:])
        cases.append((f"vocab {piece!r} = {json.dumps(v)}", lambda p=piece, v=v: edited(model__vocab=dict(base["model"]["vocab"], **{p: v})), inp.text))
    for label, merges in [("a merge of one piece", ["a"]), ("a merge of unknown pieces", ["zz yy"]),
                          ("a merge that is a number", [5]), ("a merge of three pieces", ["a b c"]),
                          ("merges an object", {"a": "b"}), ("a merge as a list of numbers", [[1, 2]]),
                          ("1000000 copies of one merge", [base["model"]["merges"][0]] * 1000000)]:
        cases.append((label, lambda m=merges: edited(model__merges=m), inp.text))
    for field, values in [("type", ["WordPiece", 5, None, "Unigram"]), ("unk_token", [5, "nothing", ""]),
                          ("byte_fallback", ["yes", 2]), ("dropout", [0.5, -1, "x"]),
                          ("vocab", [[], {}, "x"]), ("fuse_unk", [3])]:
        for v in values:
            cases.append((f"model.{field} = {json.dumps(v)}", lambda f=field, v=v: edited(**{"model__" + f: v}), inp.text))
    added = base["added_tokens"]
    for label, tokens in [("an added token with id 2^31-1", added + [dict(added[0], id=2**31 - 1, content="<big>")]),
                          ("an added token with id -1", added + [dict(added[0], id=-1, content="<neg>")]),
                          ("an added token with empty content", added + [dict(added[0], id=2048, content="")]),
                          ("an added token content 5", added + [dict(added[0], id=2048, content=5)]),
                          ("an added token of 10 MB", added + [dict(added[0], id=2048, content="x" * (10 << 20))]),
                          ("100000 added tokens", added + [dict(added[0], id=2048 + i, content=f"<t{i}>") for i in range(100000)]),
                          ("added tokens an object", {"a": 1}),
                          ("an added token special = 5", [dict(added[0], special=5)] + added[1:])]:
        cases.append((label, lambda t=tokens: edited(added_tokens=t), inp.text + " <t5> <big>"))
    text = json.dumps(base)
    cases += [
        ("nested 100000 deep", lambda: text[:-1] + ', "x": ' + "[" * 100000 + "]" * 100000 + "}", inp.text),
        ("a duplicate key", lambda: text[:-1] + ', "model": {}}', inp.text),
        ("a number 10^100000", lambda: text[:-1] + ', "x": 1' + "0" * 100000 + "}", inp.text),
        ("a list", lambda: "[1]", inp.text),
        ("truncated", lambda: text[:len(text) // 2], inp.text),
        ("invalid UTF-8 in a piece", lambda: text.replace('"h e"', '"h \\udc80"', 1), inp.text),
        ("normalizer unknown type", lambda: edited(normalizer={"type": "Evil"}), inp.text),
        ("normalizer a number", lambda: edited(normalizer=5), inp.text),
        ("decoder Strip of 2^63 characters", lambda: edited(decoder={"type": "Strip", "content": " ", "start": 2**63 - 1, "stop": 2**63 - 1}), inp.text),
        ("decoder Strip of -1 characters", lambda: edited(decoder={"type": "Strip", "content": " ", "start": -1, "stop": -1}), inp.text),
        ("Replace with an empty pattern", lambda: edited(normalizer={"type": "Replace", "pattern": {"String": ""}, "content": "xx"}), inp.text),
    ]
    for i, flips in enumerate([1, 8, 64]):
        r = inp.rng(f"tokenizer.json flips {i}")
        cases.append((f"{flips} bit flips", lambda r=r, flips=flips: flip_bits(text.encode(), r, flips), inp.text))
    for label, edit, prompt in cases:
        def make(d, edit=edit, prompt=prompt):
            out = os.path.join(d, "tok")
            os.makedirs(out)
            path = write(os.path.join(out, "tokenizer.json"), edit())
            return Run("llama-cli", ["-k", path, "--tokenize", "--format", "json", "-p", prompt],
                       ["tokenizer.json", path])
        inp.add("tokenizer.json", label, make)


def tokenizer_config(inp):
    base = json.loads(read(inp.model("hf", "stories1M", "tokenizer_config.json")))
    tpl = "{% for m in messages %}{{ bos_token + m['content'] + eos_token }}{% endfor %}"
    cases = [
        ("chat_template list with name 5", dict(base, chat_template=[{"name": 5, "template": tpl}])),
        ("chat_template list with template 5", dict(base, chat_template=[{"name": "default", "template": 5}])),
        ("chat_template list of strings", dict(base, chat_template=["a", "b"])),
        ("chat_template list without default", dict(base, chat_template=[{"name": "tool_use", "template": tpl}])),
        ("chat_template 5", dict(base, chat_template=5)),
        ("chat_template an object", dict(base, chat_template={"a": 1})),
        ("chat_template null", dict(base, chat_template=None)),
        ("chat_template empty", dict(base, chat_template="")),
        ("chat_template of 10 MB", dict(base, chat_template=tpl + "x" * (10 << 20))),
        ("chat_template list of 100000", dict(base, chat_template=[{"name": f"t{i}", "template": tpl} for i in range(100000)])),
        ("bos_token 5", dict(base, bos_token=5, chat_template=tpl)),
        ("bos_token content 5", dict(base, bos_token={"content": 5}, chat_template=tpl)),
        ("bos_token a list", dict(base, bos_token=["<s>"], chat_template=tpl)),
        ("bos_token of 1 MB", dict(base, bos_token="x" * (1 << 20), chat_template=tpl)),
        ("eos_token an object without content", dict(base, eos_token={"a": 1}, chat_template=tpl)),
        ("added_tokens_decoder a list", dict(base, added_tokens_decoder=[1], chat_template=tpl)),
        ("added_tokens_decoder with id -1", dict(base, added_tokens_decoder={"-1": {"content": "<x>", "special": True}}, chat_template=tpl)),
        ("added_tokens_decoder with id 2^63", dict(base, added_tokens_decoder={str(2**63): {"content": "<x>", "special": True}}, chat_template=tpl)),
        ("added_tokens_decoder content 5", dict(base, added_tokens_decoder={"3": {"content": 5}}, chat_template=tpl)),
        ("a list", [1, 2]),
    ]
    text = json.dumps(dict(base, chat_template=tpl))
    raw = [
        ("nested 100000 deep", text[:-1] + ', "x": ' + "[" * 100000 + "]" * 100000 + "}"),
        ("a duplicate chat_template", text[:-1] + ', "chat_template": 5}'),
        ("truncated", text[:len(text) // 2]),
        ("a 70 MB file", text[:-1] + ', "x": "' + "a" * (70 << 20) + '"}'),
        ("invalid UTF-8", text[:-1].encode() + b', "x": "\xff"}'),
    ]
    for i, (label, content) in enumerate([(l, json.dumps(c)) for l, c in cases] + raw):
        def make(d, content=content, i=i):
            out = inp.hf_dir(d, "stories1M", {"tokenizer_config.json": content})
            path = os.path.join(out, "tokenizer_config.json")
            if i % 2 == 0:
                return Run("llama-cli", ["-k", out, "-m", "chat", "--tokenize", "--format", "json",
                                         "-p", "Hi"], ["tokenizer_config.json", path])
            msgs = write(os.path.join(d, "m.json"), '[{"role": "user", "content": "Hi"}]')
            return Run("llama-template", ["--template", path, "--messages", msgs],
                       ["tokenizer_config.json", path, "--template"])
        inp.add("tokenizer_config.json", label, make)
