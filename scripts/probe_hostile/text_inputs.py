"""Cases from text: Jinja templates (chains, deep nesting, unbounded work, extreme
slices and integer overflow, mutated real templates, token soup), the conversations
they render, flags (special files, numbers out of range, chat's standard input) and
perplexity texts."""

import json
import os

from .common import LONG_FLAGS, Run, flip_bits, read, write


def jinja_bombs():
    """Templates that recurse, overflow or do unbounded work (issue 39's classes)."""
    n = 100000
    return {
        "100000 chained filters": "{{ 'x'" + "|lower" * n + " }}",
        "100000 chained attributes": "{% set x = namespace(a=1) %}{{ x" + ".a" * n + " }}",
        "100000 chained additions": "{{ 1" + " + 1" * n + " }}",
        "100000 chained concatenations": "{{ 'a'" + " ~ 'a'" * n + " }}",
        "100000 chained ands": "{{ true" + " and true" * n + " }}",
        "100000 chained ors": "{{ false" + " or false" * n + " }}",
        "100000 chained subscripts": "{{ messages" + "[0]" * n + " }}",
        "100000 chained calls": "{{ range" + "(1)" * n + " }}",
        "100000 nots": "{{ " + "not " * n + "true }}",
        "100000 unary minuses": "{{ " + "-" * n + "1 }}",
        "100000 nested parentheses": "{{ " + "(" * n + "1" + ")" * n + " }}",
        "100000 nested lists": "{{ " + "[" * n + "]" * n + " }}",
        "100000 nested dicts": "{{ " + "{'a': " * n + "1" + "}" * n + " }}",
        "100000 chained comparisons": "{{ 1" + " < 2" * n + " }}",
        "100000 chained conditionals": "{{ 1" + " if true else 1" * n + " }}",
        "10000 nested ifs": "{% if true %}" * 10000 + "x" + "{% endif %}" * 10000,
        "10000 nested fors": "{% for i in [1] %}" * 10000 + "x" + "{% endfor %}" * 10000,
        "a macro that calls itself": "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
        "a list doubled 40 times": "{% set ns = namespace(x=[1]) %}{% for i in range(40) %}{% set ns.x = ns.x + ns.x %}{% endfor %}{{ ns.x|length }}",
        "a string doubled 40 times": "{% set ns = namespace(x='ab') %}{% for i in range(40) %}{% set ns.x = ns.x ~ ns.x %}{% endfor %}{{ ns.x|length }}",
        "range(16000000) twice": "{% for i in range(16000000) %}{% endfor %}{% for i in range(16000000) %}{% endfor %}",
        "range(2**62)": "{% for i in range(4611686018427387904) %}{% endfor %}",
        "nested loops of 100000 x 100000": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "tojson of a million-element list in a loop": "{% set x = range(1000000)|list %}{% for i in range(100) %}{{ x|tojson|length }}{% endfor %}",
        "x in a big list 500000 times": "{% set x = range(500000)|list %}{% for i in range(500000) %}{{ (i in x)|string|length }}{% endfor %}",
        "a string times 2**40": "{{ 'a' * 1099511627776 }}",
        "a list times 2**40": "{{ [1] * 1099511627776 }}",
        "a string times 2**63-1": "{{ 'ab' * 9223372036854775807 }}",
        "a list slice with step 2**63-1": "{{ [1,2,3][1::9223372036854775807] }}",
        "a string slice with step 2**63-1": "{{ 'abc'[1::9223372036854775807] }}",
        "a slice with step -2**63": "{{ [1,2,3][::-9223372036854775808] }}",
        "a slice from 2**63-1 to -2**63 backwards": "{{ 'abc'[9223372036854775807:-9223372036854775808:-1] }}",
        "a slice with step 0": "{{ [1,2,3][::0] }}",
        "a subscript -2**63": "{{ [1,2,3][-9223372036854775808] }}",
        "2**63-1 + 1": "{{ 9223372036854775807 + 1 }}",
        "-2**63 - 1": "{{ -9223372036854775807 - 2 }}",
        "2**63-1 * 2": "{{ 9223372036854775807 * 2 }}",
        "-2**63 // -1": "{{ (-9223372036854775807 - 1) // -1 }}",
        "-2**63 % -1": "{{ (-9223372036854775807 - 1) % -1 }}",
        "-(-2**63)": "{{ -(-9223372036854775807 - 1) }}",
        "2 ** 64": "{{ 2 ** 64 }}",
        "10 ** 400": "{{ 10 ** 400 }}",
        "2 ** -1": "{{ 2 ** -1 }}",
        "an integer literal of 400 digits": "{{ 1" + "0" * 400 + " }}",
        "2**63 as a literal": "{{ 9223372036854775808 }}",
        "a float literal 1e999": "{{ 1e999 }}",
        "range(-2**63, 2**63-1, 2**62)": "{{ range(-9223372036854775807 - 1, 9223372036854775807, 4611686018427387904)|list }}",
        "range with step 0": "{{ range(0, 10, 0)|list }}",
        "range with step -2**63": "{{ range(0, -10, -9223372036854775807 - 1)|list }}",
        "abs(-2**63)": "{{ (-9223372036854775807 - 1)|abs }}",
        "'9'*30 | int": "{{ ('9' * 30)|int }}",
        "round to -2**63 digits": "{{ 1.5|round(-9223372036854775807 - 1) }}",
        "indent 2**31": "{{ 'a\\nb'|indent(2147483648) }}",
        "center 2**40": "{{ 'a'|center(1099511627776) }}",
        "truncate -1": "{{ 'abc'|truncate(-1) }}",
        "wordwrap 0": "{{ 'a b c'|wordwrap(0) }}",
        "batch 0": "{{ [1,2,3]|batch(0)|list }}",
        "batch 2**63-1": "{{ [1,2,3]|batch(9223372036854775807)|list }}",
        "format with 2**31 width": "{{ '%2147483647d'|format(1) }}",
        "join of range(10**7)": "{{ range(10000000)|join(',')|length }}",
        "replace a with 1 MB, 20 times": "{% set ns = namespace(x='a') %}{% for i in range(20) %}{% set ns.x = ns.x|replace('a', 'aa') %}{% endfor %}{{ ns.x|length }}",
        "loop.cycle without arguments": "{% for i in [1] %}{{ loop.cycle() }}{% endfor %}",
        "namespace with 100000 attributes": "{% set ns = namespace(" + ",".join(f"a{i}=1" for i in range(100000)) + ") %}{{ ns.a5 }}",
        "dictsort of a nested dict": "{{ {'a': {'b': 1}, 'b': [1]}|dictsort }}",
        "raise_exception of 10 MB": "{{ raise_exception('x' * 10000000) }}",
        "an unterminated tag": "{% for x in messages %}{{ x",
        "an unterminated string": "{{ 'abc }}",
        "invalid UTF-8": b"{{ '\xff\xfe' }}\xc0\xaf",
        "a NUL byte": "{{ 'a\u0000b' }}\u0000",
        "a comment never closed": "{# " + "x" * 100000,
        "1000000 raw tags": "{% raw %}{% endraw %}" * 1000000,
    }


def jinja(inp):
    msgs_text = '[{"role": "system", "content": "Be brief"}, {"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi"}, {"role": "user", "content": "Who are you"}]'
    def run(d, source):
        t = write(os.path.join(d, "t.jinja"), source)
        m = write(os.path.join(d, "m.json"), msgs_text)
        return Run("llama-template", ["--template", t, "--messages", m, "--add-generation-prompt"],
                   ["t.jinja", t])
    for label, source in jinja_bombs().items():
        inp.add("Jinja template", label, lambda d, s=source: run(d, s))
    real = json.loads(read(os.path.join(inp.r, "chat-templates.json")))["templates"]
    tokens = ["{%", "%}", "{{", "}}", "for", "in", "if", "else", "endif", "endfor", "set", "=",
              "(", ")", "[", "]", ".", "|", "~", "+", "*", "**", "not", "and", "x", "messages",
              "loop", "'s'", "1", "-1", "9223372036854775807", ":", ",", "macro", "endmacro",
              "call", "filter", "namespace", "range", "{#", "#}", "\n"]
    for i in range(24):
        r = inp.rng(f"jinja real {i}")
        src = real[i % len(real)]["template"].encode()
        if i % 3 == 0:
            mutated = src[:r.randrange(len(src))]
            label = f"{real[i % len(real)]['name']} truncated"
        elif i % 3 == 1:
            mutated = flip_bits(src, r, 1 + r.randrange(8))
            label = f"{real[i % len(real)]['name']} with bit flips (#{i})"
        else:
            words = src.split(b" ")
            for _ in range(1 + r.randrange(6)):
                words.insert(r.randrange(len(words) + 1), r.choice(tokens).encode())
            mutated = b" ".join(words)
            label = f"{real[i % len(real)]['name']} with tokens inserted (#{i})"
        inp.add("Jinja template", label, lambda d, s=mutated: run(d, s))
    for i in range(16):
        r = inp.rng(f"jinja soup {i}")
        soup = " ".join(r.choice(tokens) for _ in range(r.randrange(5, 400)))
        inp.add("Jinja template", f"token soup #{i}", lambda d, s=soup: run(d, s))


def messages(inp):
    tpl = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    cases = [
        ("nested 100000 deep", "[" * 100000 + "]" * 100000),
        ("objects nested 100000 deep", '{"a": ' * 100000 + "1" + "}" * 100000),
        ("a number 10^100000", '[{"role": "user", "content": 1' + "0" * 100000 + "}]"),
        ("content 2**64", '[{"role": "user", "content": 18446744073709551616}]'),
        ("content a list of 100000 objects", json.dumps([{"role": "user", "content": [{"type": "text", "text": "x"}] * 100000}])),
        ("messages 5", '{"messages": 5}'),
        ("a message that is a string", '["hello"]'),
        ("role null", '[{"role": null, "content": "x"}]'),
        ("a duplicate key", '[{"role": "user", "role": "system", "content": "x"}]'),
        ("invalid UTF-8", b'[{"role": "user", "content": "\xff\xfe"}]'),
        ("a lone surrogate escape", '[{"role": "user", "content": "\\ud800"}]'),
        ("NaN", '[{"role": "user", "content": NaN}]'),
        ("truncated", '[{"role": "user", "content": "x'),
        ("1000000 messages", json.dumps([{"role": "user", "content": "x"}] * 1000000)),
        ("a 17 MB conversation", '[{"role": "user", "content": "' + "x" * (17 << 20) + '"}]'),
        ("empty", ""),
    ]
    for label, text in cases:
        def make(d, text=text):
            t = write(os.path.join(d, "t.jinja"), tpl)
            m = write(os.path.join(d, "m.json"), text)
            # The template's own error (it cannot iterate over 5) names the template.
            return Run("llama-template", ["--template", t, "--messages", m], ["m.json", m, t])
        inp.add("messages JSON", label, make)


def flags(inp):
    ck, tok = inp.model("stories1M.bin"), inp.model("tok2048.bin")
    text = inp.model("stories1M-val.txt")
    base = {"llama-cli": ["-c", ck, "-k", tok, "-s", "8", "-t", "0", "-p", inp.text],
            "llama-perplexity": ["-c", ck, "-k", tok, "-f", text, "--ctx", "64"]}
    chat = ["-c", ck, "-k", tok, "-m", "chat", "-s", "16", "-t", "0"]
    msgs = '[{"role": "user", "content": "Hi"}]'
    # (app, flag, arguments before, arguments after); the special file goes after the flag.
    slots = [
        ("llama-cli", "--chat-template", chat + ["-p", "Hi"], []),
        ("llama-cli", "-c", [], ["-k", tok, "-s", "4", "-p", inp.text]),
        ("llama-cli", "-k", ["-c", ck], ["-s", "4", "-p", inp.text]),
        ("llama-cli", "-k", ["--tokenize", "-p", inp.text], []),
        ("llama-template", "--template", [], ["--messages", "{msgs}"]),
        ("llama-template", "--messages", ["--template", "{tpl}"], []),
        ("llama-perplexity", "-f", ["-c", ck, "-k", tok], []),
        ("llama-perplexity", "-c", ["-k", tok, "-f", text], []),
        ("llama-perplexity", "-k", ["-c", ck, "-f", text], []),
        ("llama-convert", "IN", [], ["{out}", "--to", "gguf-f32"]),
        ("llama-convert", "--tokenizer", [ck, "{out}", "--to", "gguf-f32"], []),
    ]
    for app, flag, before, after in slots:
        for kind in ["/dev/zero", "/dev/null", "a directory", "a FIFO"]:
            def make(d, app=app, flag=flag, before=before, after=after, kind=kind):
                path = inp.special_files(d)[kind]
                subst = {"{msgs}": write(os.path.join(d, "m.json"), msgs),
                         "{tpl}": write(os.path.join(d, "t.jinja"), "{{ messages[0].content }}"),
                         "{out}": os.path.join(d, "out.gguf")}
                args = [subst.get(a, a) for a in before] + ([] if flag == "IN" else [flag]) + \
                    [path] + [subst.get(a, a) for a in after]
                return Run(app, args, [path, flag, LONG_FLAGS.get(flag, flag)])
            inp.add("flags and special files", f"{app} {flag} {kind}", make)
    # Standard input of a chat: a line without end, a 50 MB line, invalid UTF-8.
    for label, data in [("a 50 MB line", lambda: b"a" * (50 << 20) + b"\n"),
                        ("1 MiB + 1 bytes without a newline", lambda: b"b" * ((1 << 20) + 1)),
                        ("invalid UTF-8 lines", lambda: b"\xff\xfe\n\xc0\xaf\n"),
                        ("100000 empty lines", lambda: b"\n" * 100000)]:
        def make(d, data=data):
            stdin = write(os.path.join(d, "stdin"), data())
            return Run("llama-cli", chat, ["standard input"], stdin=stdin)
        inp.add("flags and special files", f"llama-cli -m chat: standard input {label}", make)
    inp.add("flags and special files", "llama-cli -m chat: standard input /dev/zero",
             lambda d: Run("llama-cli", chat, ["standard input"], stdin="/dev/zero"))
    numbers = [
        ("llama-cli", "-s", ["-1", "9223372036854775807", "99999999999999999999", "x"]),
        ("llama-cli", "-t", ["nan", "inf", "-1", "1e400", "1e39"]),
        ("llama-cli", "--top-p", ["2", "nan", "-0.5"]),
        ("llama-cli", "-j", ["0", "100000", "-1"]),
        ("llama-cli", "-r", ["-1", "18446744073709551616"]),
        ("llama-cli", "--ctx-size", ["2147483648", "-1", "0"]),
        ("llama-cli", "-p", ["x" * 100000, "%value%", "a\nb", "\x01\x1b[31m"]),
        ("llama-perplexity", "--ctx", ["9223372036854775807", "-5", "1", "3"]),
        ("llama-perplexity", "-j", ["0", "1025"]),
    ]
    for app, flag, values in numbers:
        for v in values:
            def make(d, app=app, flag=flag, v=v):
                return Run(app, base[app] + [flag, v], [flag, LONG_FLAGS.get(flag, flag)])
            inp.add("flags and special files", f"{app} {flag} {v[:30]!r}", make)
    for label, args in [("--group-size 0", ["--to", "v2", "--group-size", "0"]),
                        ("--group-size 2^31", ["--to", "v2", "--group-size", "2147483648"]),
                        ("--group-size 3", ["--to", "v2", "--group-size", "3"]),
                        ("--to bogus", ["--to", "bogus"]),
                        ("OUT in a missing directory", ["--to", "v1", "OUT=/nonexistent/dir/x.bin"]),
                        ("OUT the input", ["--to", "v1", "OUT=IN"])]:
        def make(d, args=args):
            out = os.path.join(d, "out.bin")
            outs = [a for a in args if a.startswith("OUT=")]
            if outs:
                out = ck if outs[0] == "OUT=IN" else outs[0][4:]
            argv = [ck, out] + [a for a in args if not a.startswith("OUT=")]
            return Run("llama-convert", argv, ["--group-size", "--to", out, ck])
        inp.add("flags and special files", f"llama-convert {label}", make)


def perplexity_text(inp):
    ck, tok = inp.model("stories1M.bin"), inp.model("tok2048.bin")
    val = read(inp.model("stories1M-val.txt"))

    def binary():  # 60 MB of seeded noise, issue 39's example
        r = inp.rng("perplexity binary")
        return bytes(r.getrandbits(8) for _ in range(1 << 16)) * 960

    cases = [("a binary file of 60 MB", binary), ("empty", lambda: b""), ("one byte", lambda: b"a"),
             ("a NUL after the text", lambda: val[:1500] + b"\0"),
             ("latin-1", lambda: val[:1500] + b"caf\xe9"),
             ("a lone continuation byte", lambda: b"\x80" + val[:1500]),
             ("a 65 MB text", lambda: val * (65 * (1 << 20) // len(val) + 1)),
             ("an overlong encoding", lambda: val[:1500] + b"\xc0\xaf"),
             ("a surrogate", lambda: val[:1500] + b"\xed\xa0\x80"),
             ("a special-token spelling", lambda: val[:1500].replace(b" ", b" <s></s> "))]
    for label, data in cases:
        def make(d, data=data):
            path = write(os.path.join(d, "text.txt"), data())
            return Run("llama-perplexity", ["-c", ck, "-k", tok, "-f", path, "--ctx", "64"],
                       ["text.txt", path, "--file"])
        inp.add("perplexity text", label, make)
