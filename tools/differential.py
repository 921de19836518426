#!/usr/bin/env python3
"""Differential test: kvlint's argparse against the engine's own parser, run unmodified.

    differential.py sglang UNPACKED_WHEEL_DIR KVLINT_BINARY [--count N] [--seed S] [--show N]
    differential.py vllm   UNPACKED_WHEEL_DIR KVLINT_BINARY ...

The engine's parser is built by tools/extract_engine_flags.py (heavy imports stubbed, argparse code
untouched). From a fixed seed it generates command lines (aliases, prefixes, `--k=v`, repeats,
booleans and `--no-*`, size suffixes, short options, positionals, bad values, `--config` files),
parses each with the engine and with `kvlint parse-args`, and compares acceptance and every field
kvlint's capacity model reads. Prints the mismatch rate; exits 1 on any mismatch.
"""
import argparse
import ast
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extract_engine_flags as stubs  # noqa: E402  (installs the import stubs)

# kvlint's parse findings that mean "the engine refuses this command line".
REJECT = {"CFG001", "CFG002", "CFG004", "CFG005", "CFG006"}

# argparse dests kvlint's plans and rules read (src/capacity, src/rules, src/pipeline.rs).
FIELDS = {
    "sglang": ["model_path", "tp_size", "pp_size", "dp_size", "context_length",
               "mem_fraction_static", "kv_cache_dtype", "page_size", "dtype", "quantization",
               "max_running_requests", "max_total_tokens", "chunked_prefill_size",
               "max_prefill_tokens", "disaggregation_mode", "enable_dp_attention",
               "disable_radix_cache", "disable_cuda_graph", "cuda_graph_max_bs",
               "speculative_algorithm", "speculative_num_draft_tokens", "swa_full_tokens_ratio",
               "attention_backend"],
    "vllm": ["model", "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
             "max_model_len", "gpu_memory_utilization", "kv_cache_dtype", "block_size", "dtype",
             "quantization", "max_num_seqs", "max_num_batched_tokens", "enforce_eager",
             "enable_prefix_caching", "num_gpu_blocks_override", "kv_cache_memory_bytes",
             "kv_transfer_config", "optimization_level"],
}

def engine_function(path, name, env):
    """One top-level function or class of the engine's source, run unmodified: the entry points
    that hold it import the whole engine."""
    tree = ast.parse(open(path).read())
    node = next(n for n in tree.body if getattr(n, "name", None) == name)
    code = compile(ast.Module(body=[node], type_ignores=[]), path, "exec")
    exec(code, env)
    return env[name]


MODELS = ["Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct", "deepseek-ai/DeepSeek-V3"]
NOT_LLM = object()  # `sglang serve --model-type diffusion`: not the LLM server
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


# ---------------------------------------------------------------- the engines' own parse

class Engine:
    """Parses argv (after the command words) exactly as the engine's entry point does."""

    def __init__(self, name, root):
        self.name = name
        if name == "sglang":
            self.parser = stubs.sglang_parser(root)
            from sglang.srt.utils.server_args_config_parser import ConfigArgumentMerger
            self.merger = ConfigArgumentMerger
            serve = f"{root}/sglang/cli/serve.py"  # `sglang serve --model-type` (0.5.10+)
            src = open(serve).read() if os.path.exists(serve) else ""
            self.model_type = (engine_function(serve, "_extract_model_type_override", {})
                               if "_extract_model_type_override" in src else None)
        else:
            self.flexible, make = stubs.vllm_parts(root)
            self.parser = make(self.flexible())  # api_server: no sub command
            top = self.flexible()
            sub = top.add_subparsers(dest="subparser")
            make(sub.add_parser("serve"))
            self.top = top
            # VllmConfig (a pydantic dataclass) validates --optimization-level as this IntEnum.
            from enum import IntEnum
            from pydantic import TypeAdapter
            level = engine_function(f"{root}/vllm/config/vllm.py", "OptimizationLevel",
                                    {"IntEnum": IntEnum})
            self.level = TypeAdapter(level)

    def actions(self):
        return [a for a in self.parser._actions if a.dest in FIELDS[self.name]]

    def default(self, dest):
        return self.parser.get_default(dest)

    def parse(self, entry, argv):
        """Namespace of the parse, or None when the engine exits with an error."""
        try:
            with open(os.devnull, "w") as null:
                err, sys.stderr = sys.stderr, null
                try:
                    return self._parse(entry, list(argv))
                finally:
                    sys.stderr = err
        except (SystemExit, ValueError, AssertionError, IndexError, KeyError, TypeError,
                FileNotFoundError):  # pydantic's ValidationError is a ValueError
            return None

    def _parse(self, entry, argv):
        if self.name == "sglang":
            if entry == "serve" and self.model_type:  # sglang/cli/serve.py::serve
                backend, argv = self.model_type(argv)
                if backend not in ("auto", "llm", "diffusion"):  # ServeBackendRegistry.get
                    raise ValueError(f"Unknown serve backend {backend!r}")
                if backend == "diffusion":  # another server, with its own parser
                    return NOT_LLM
            if entry == "serve":  # sglang/cli/serve.py::_normalize_positional_model_path
                if argv and not argv[0].startswith("-"):
                    argv = ["--model-path", argv[0], *argv[1:]]
            if "--config" in argv:  # server_args.py::prepare_server_args
                argv = self.merger(self.parser).merge_config_with_args(argv)
            return self.parser.parse_args(argv)
        if entry == "serve":  # vllm/entrypoints/cli/main.py + serve.py::ServeSubcommand.cmd
            ns = self.top.parse_args(["serve", *argv])
            if getattr(ns, "model_tag", None) is not None:
                ns.model = ns.model_tag
        else:  # vllm/entrypoints/launchers/api_server/entry.py::main: model_tag is not copied
            ns = self.parser.parse_args(argv)
        if isinstance(getattr(ns, "optimization_level", None), str):
            self.level.validate_python(ns.optimization_level)  # VllmConfig(optimization_level=)
        return ns


# ---------------------------------------------------------------- generation

class Gen:
    def __init__(self, engine, seed, tmp):
        self.e = engine
        self.r = random.Random(seed)
        self.tmp = tmp
        self.acts = engine.actions()
        self.longs = sorted({o for a in engine.parser._actions for o in a.option_strings
                             if o.startswith("--")})
        self.gone = removed_options(engine.name, self.longs)

    def int_text(self):
        r = self.r
        n = r.choice([1, 2, 4, 8, 16, 0, 3, 4096, 8192, 32768, 131072])
        form = r.randrange(12)
        if form == 0:
            return f"{n:_}" if n >= 1000 else str(n)
        if form == 1:
            return f"+{n}"
        if form == 2:
            return str(n).translate(FULLWIDTH)
        if form == 3:
            return r.choice(["32k", "32K", "4.1M", "1.5k", "128k", "2Ki", "1M", "1m", "2g"])
        if form == 4:
            return r.choice(["abc", "1.5", "", "0x10", "1e3", "-1", "auto", " 8 "])
        return str(n)

    def float_text(self):
        return self.r.choice(["0.8", ".85", "0.9", "1e-1", "0.5", "1", "inf", "nan", "abc",
                              "1.2", "0", "-0.1", "0.7_5", "+0.6"])

    def value(self, a):
        if a.choices is not None:
            choices = [str(c) for c in a.choices]
            pick = self.r.choice(choices)
            if self.r.random() < 0.15:
                return self.r.choice([pick.upper(), "bf16", "nope"])
            return pick
        t = stubs._type(a.type)
        if t in ("int", "human_int", "human_int_or_auto"):
            return self.int_text()
        if t == "float":
            return self.float_text()
        if a.dest in ("model", "model_path"):
            return self.r.choice(MODELS)
        if a.dest == "kv_transfer_config":
            role = self.r.choice(["kv_producer", "kv_consumer", "kv_both"])
            return json.dumps({"kv_connector": "NixlConnector", "kv_role": role})
        if a.dest == "dtype":
            return self.r.choice(["auto", "float16", "bfloat16", "float32", "half"])
        return self.r.choice(["fp8", "awq", "eagle", "flashinfer", "prefill", "decode", "x"])

    def spelling(self, a):
        """One option string of the action, maybe abbreviated, underscored, or negated."""
        r = self.r
        opts = list(a.option_strings)
        neg = getattr(a, "negative_option_strings", None)
        if isinstance(a, argparse.BooleanOptionalAction) and r.random() < 0.4:
            opts = sorted(neg) if neg else [o for o in opts if o.startswith("--no-")] or opts
        elif isinstance(a, argparse.BooleanOptionalAction):
            opts = [o for o in opts if o not in (neg or ())] or opts
        opt = r.choice(opts)
        roll = r.random()
        if opt.startswith("--") and roll < 0.2:
            return opt[: r.randrange(4, len(opt) + 1)]
        if opt.startswith("--") and roll < 0.3:
            return "--" + opt[2:].replace("-", "_")
        return opt

    def option(self, a):
        """Tokens of one occurrence of action `a`."""
        r = self.r
        opt = self.spelling(a)
        if a.nargs == 0:
            roll = r.random()
            if roll < 0.1:
                return [opt, r.choice(["true", "false"])]
            if roll < 0.15:
                return [f"{opt}=true"]
            return [opt]
        v = self.value(a)
        if opt.startswith("--") and r.random() < 0.3:
            return [f"{opt}={v}"]
        if not opt.startswith("--") and r.random() < 0.2:
            return [f"{opt}={v}"] if r.random() < 0.5 else [f"{opt}{v}"]
        return [opt, v]

    def removed(self):
        """An option of an earlier release, whole or cut short: some are gone, and some are
        now an ambiguous prefix of the options that replaced them (`--cuda-graph-max-bs`)."""
        r = self.r
        opt = r.choice(self.gone)
        if r.random() < 0.3:
            opt = opt[: r.randrange(4, len(opt) + 1)]
        value = r.choice(["8", "generate", "auto", "true"])
        return [opt, value] if r.random() < 0.8 else [f"{opt}={value}"]

    def subcommand(self, entry):
        """Options only an entry point reads, before the engine's parser sees the rest."""
        r = self.r
        if self.e.name == "sglang" and entry == "serve":
            value = r.choice(["llm", "auto", "diffusion", "nope", "LLM"])
            return r.choice([["--model-type", value], [f"--model-type={value}"],
                             ["--model-typ", value], ["--model-type"]])
        return self.special()

    def special(self):
        """Engine-specific forms the generic generator does not reach."""
        r = self.r
        if self.e.name == "vllm":
            return r.choice([
                ["-O3"], ["-O", "3"], ["-O=3"], ["-Odecode"], ["-O", "decode"], ["-tp=2"],
                ["-O4"], ["-O", "4"], ["-O=5"], ["-O", "-1"], ["-O"], ["-O０"], ["-O 2"],
                ["--optimization-level", r.choice(["0", "4", " 3", "+1", "03", "O3"])],
                ["-qfp8"], ["-tp", "2"], ["-pp=2"], ["-dp", "2"],
                ["--kv-transfer-config.kv_role", r.choice(["kv_producer", "kv_consumer"]),
                 "--kv-transfer-config.kv_connector", "NixlConnector"],
                ["--kv-transfer-config.kv_role=kv_consumer"],
                ["--model", r.choice(MODELS)],
                ["--config", self.config_file()], [f"--config={self.config_file()}"],
                ["stray"],
            ])
        return r.choice([
            ["--config", self.config_file()], ["--config", self.config_file(),
                                               "--config", self.config_file()],
            ["--context-length", "4.1M"], ["--max-total-tokens", "32_768"],
            ["--tp", "+2"], ["stray"], ["--enable-dp-attention", "true"],
        ])

    def config_file(self):
        """A --config YAML: duplicate keys, `1e4`, booleans, a deprecated store-true key."""
        r = self.r
        lines = []
        for _ in range(r.randrange(1, 4)):
            a = r.choice(self.acts)
            key = a.option_strings[0].lstrip("-") if a.option_strings else a.dest
            if a.nargs == 0:
                lines.append(f"{key}: {r.choice(['true', 'false'])}")
            else:
                v = r.choice(["1e4", "8192", "0.8", "4", "fp8_e4m3", "auto", MODELS[0]])
                lines.append(f"{key}: {json.dumps(v) if r.random() < 0.3 else v}")
        if lines and r.random() < 0.3:
            lines.append(lines[0].split(":")[0] + ": 2")
        fd, path = tempfile.mkstemp(suffix=".yaml", dir=self.tmp)
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def command(self):
        """(entry, argv after the command words, whole command)."""
        r = self.r
        if self.e.name == "sglang":
            entry = r.choice(["launch", "launch", "serve"])
            head = ["python3", "-m", "sglang.launch_server"] if entry == "launch" else ["sglang", "serve"]
            argv = [r.choice(MODELS)] if entry == "serve" and r.random() < 0.5 else []
            if not argv:
                argv = ["--model-path", r.choice(MODELS)]
        else:
            entry = r.choice(["serve", "serve", "serve", "api"])
            head = (["vllm", "serve"] if entry == "serve"
                    else ["python3", "-m", "vllm.entrypoints.openai.api_server"])
            argv = [r.choice(MODELS)] if r.random() < 0.7 else ["--model", r.choice(MODELS)]
        for _ in range(r.randrange(1, 6)):
            roll = r.random()
            if roll < 0.08 and self.gone:
                argv += self.removed()
            elif roll < 0.16:
                argv += self.subcommand(entry)
            elif roll < 0.28:
                argv += self.special()
            else:
                argv += self.option(r.choice(self.acts))
        if r.random() < 0.15:  # a repeat
            argv += self.option(r.choice(self.acts))
        return entry, argv, head + argv


def removed_options(engine, current):
    """Long options of every release kvlint's table holds that this release lacks."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(f"{here}/../src/engine/{engine}_flags.toml", "rb") as f:
        table = tomllib.load(f)
    known = {o for flag in table["flag"] for o in flag["opts"] if o.startswith("--")}
    return sorted(known - set(current))


# ---------------------------------------------------------------- comparison

def norm(dest, v):
    if dest == "kv_transfer_config":
        if v is None:
            return None
        if isinstance(v, str):
            try:
                v = json.loads(v)
            except ValueError:
                return v
        role = v.get("kv_role") if isinstance(v, dict) else getattr(v, "kv_role", None)
        return ("kv_role", role)
    if dest == "max_model_len" and v == "auto":  # human_readable_int_or_auto: auto is -1
        return -1.0
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return "nan" if isinstance(v, float) and math.isnan(v) else float(v)
    if isinstance(v, str) and v in ("inf", "-inf", "nan", "NaN"):
        return "nan" if v.lower() == "nan" else float(v)
    if isinstance(v, (list, tuple)):
        return [str(x) for x in v]
    if type(v).__module__ != "builtins":  # a stubbed type: compare by name
        return str(getattr(v, "value", v))
    return v


def compare(engine, entry, ns, got):
    """Differences between the engine's namespace and kvlint's output, as strings."""
    if ns is NOT_LLM:  # no KV pool to plan: kvlint must say it did not read a launch
        return [] if "INP006" in got.get("errors", []) else ["diffusion backend planned as an LLM"]
    if ns is None:
        rejected = bool(set(got.get("errors", [])) & REJECT)
        return [] if rejected or not got.get("launch") else ["engine rejects, kvlint accepts"]
    errors = set(got.get("errors", [])) & REJECT
    if engine.name == "vllm" and entry == "api" and getattr(ns, "model_tag", None) is not None:
        # The engine starts, but serves its default model instead of the positional one:
        # kvlint must say so (CFG004) rather than plan the positional model.
        if "CFG004" not in errors:
            return ["api_server ignores the positional model; kvlint does not say so"]
        errors = set(e for e in got.get("errors", []) if e != "CFG004") & REJECT
    if errors:
        return [f"engine accepts, kvlint reports {sorted(errors)}"]
    out = []
    settings = got.get("settings", {})
    for dest in FIELDS[engine.name]:
        if not hasattr(ns, dest):
            continue
        want = norm(dest, getattr(ns, dest))
        have = norm(dest, settings[dest]) if dest in settings else norm(dest, engine.default(dest))
        if want != have and not (dest == "dtype" and want == "auto" and have is None):
            out.append(f"{dest}: engine {want!r}, kvlint {have!r}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("engine", choices=["sglang", "vllm"])
    ap.add_argument("root")
    ap.add_argument("kvlint")
    ap.add_argument("--version", required=True, help="the release the wheel is")
    ap.add_argument("--count", type=int, default=400)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--show", type=int, default=40, help="mismatches to print")
    a = ap.parse_args()
    a.kvlint = os.path.abspath(a.kvlint)
    real_stdout, sys.stdout = sys.stdout, sys.stderr  # engine logging stays off the report
    engine = Engine(a.engine, a.root)
    with tempfile.TemporaryDirectory() as tmp:
        gen = Gen(engine, a.seed, tmp)
        cases = [gen.command() for _ in range(a.count)]
        lines = "".join(json.dumps(c[2]) + "\n" for c in cases)
        run = subprocess.run([a.kvlint, "parse-args", "--engine-version", a.version],
                             input=lines, capture_output=True, text=True, cwd=tmp)
        if run.returncode != 0:
            print(run.stderr, file=real_stdout)
            sys.exit(2)
        results = [json.loads(x) for x in run.stdout.splitlines()]
        bad = []
        for (entry, argv, whole), got in zip(cases, results):
            diff = compare(engine, entry, engine.parse(entry, argv), got)
            if diff:
                files = [open(w).read() for w in whole if w.startswith(tmp) and os.path.exists(w)]
                bad.append((whole, diff + [f"config file: {f!r}" for f in files]))
    sys.stdout = real_stdout
    for whole, diff in bad[: a.show]:
        print(" ".join(whole).replace(tmp, "$TMP"))
        for d in diff:
            print(f"    {d}")
    rate = 100.0 * len(bad) / len(cases)
    print(f"{a.engine} {a.version}: {len(bad)} of {len(cases)} command lines differ ({rate:.1f} %)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
