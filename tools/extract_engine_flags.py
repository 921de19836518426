#!/usr/bin/env python3
"""Extracts each engine's CLI flag table by running the engine's own argparse builder.

Heavy dependencies (torch, transformers, triton, ...) are replaced by permissive stub modules, so
only the engine's pure-Python parser code runs. Usage:

    extract_engine_flags.py sglang /tmp/sg/0.5.23 > flags-0.5.23.json
    extract_engine_flags.py vllm /tmp/vl/0.33.0 > flags-0.33.0.json
    extract_engine_flags.py merge sglang a.json b.json ... > src/engine/sglang_flags.toml
    extract_engine_flags.py split src/engine/vllm_flags.toml DIR   # DIR/flags-V.json per release

`split` turns a merged table back into the per-release tables, so a release can be added (an
older one too) by merging its extracted table with them, without downloading every release again.

The unpacked wheel / sdist trees come from `pip download` (see PREAMBLE); they are not committed.
"""
import abc
import argparse
import ast
import builtins
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import inspect
import json
import os
import re
import sys
import types


# `hasattr(torch, "npu")` must say no: engines probe it at import time and raise if present.
ACCELERATORS = {"npu"}


class _Meta(abc.ABCMeta):
    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub(name)

    def __eq__(cls, other):
        return isinstance(other, _Meta)

    __hash__ = type.__hash__

    def register(cls, *a, **k):
        return a[0] if a else None

    def __setitem__(cls, key, value):
        pass

    def __call__(cls, *a, **k):
        return _stub("call")

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls

    def __iter__(cls):
        return iter(())

    def __bool__(cls):
        return False

    def __int__(cls):
        return 0

    def __index__(cls):
        return 0

    def __float__(cls):
        return 0.0

    def __len__(cls):
        return 0

    def __lt__(cls, o):
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __mro_entries__(cls, bases):
        return (_Base,)

    def __contains__(cls, item):
        return False

    def __add__(cls, o):
        return cls

    __sub__ = __mul__ = __truediv__ = __radd__ = __rmul__ = __add__


class _Base:
    def __init_subclass__(cls, **kwargs):
        pass

    def __init__(self, *a, **k):
        pass

    def __getattr__(self, name):
        return _stub(name)


def _stub(name):
    return _Meta(str(name), (_Base,), {})


_getattr = builtins.getattr


def _lenient_getattr(obj, name, *default):
    """`getattr(torch, device)` where `device` came out of a stub: use the stub's name."""
    if isinstance(name, _Meta):
        name = name.__name__
    return _getattr(obj, name, *default)


_hasattr = builtins.hasattr


def _lenient_hasattr(obj, name):
    """`hasattr(torch.ops, lib_name)` (sglang 0.5.2-0.5.7 `direct_register_custom_op`) likewise."""
    if isinstance(name, _Meta):
        name = name.__name__
    return _hasattr(obj, name)


builtins.getattr = _lenient_getattr
builtins.hasattr = _lenient_hasattr
_real_version = importlib.metadata.version


def _lenient_version(name):
    """Version checks of stubbed libraries (`version("transformers")`) see a recent release."""
    try:
        return _real_version(name)
    except importlib.metadata.PackageNotFoundError:
        return "5.0.0"


importlib.metadata.version = _lenient_version
_json_default = json.JSONEncoder.default
json.JSONEncoder.default = lambda self, o: (
    o.__name__ if isinstance(o, _Meta) else _json_default(self, o)
)


class _StubModule(types.ModuleType):
    __version__ = "2.9.0"

    def __getattr__(self, name):
        if (name.startswith("__") and name.endswith("__")) or name in ACCELERATORS:
            raise AttributeError(name)
        if (self.__name__, name) == ("torch.library", "infer_schema"):
            return _infer_schema
        return _stub(name)


def _infer_schema(fn, *_, **__):
    """vLLM 0.21's `vllm/ir/op.py` parses the schema torch infers for its ops at import time:
    give one output Tensor per Tensor in the return annotation."""
    ret = str(inspect.signature(fn).return_annotation)
    n = max(ret.count("Tensor"), 1)
    returns = "Tensor" if n == 1 else "(" + ", ".join(["Tensor"] * n) + ")"
    return f"(Tensor x) -> {returns}"


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        m = _StubModule(spec.name)
        m.__path__ = []
        return m

    def exec_module(self, module):
        pass


class _StubFinder(importlib.abc.MetaPathFinder):
    """Stubs only the libraries an import actually failed on, so optional-device probes
    (`find_spec("torch_npu")`) still see them as absent."""

    def __init__(self):
        self.stubbed = set()

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in self.stubbed:
            return importlib.machinery.ModuleSpec(name, _StubLoader(), is_package=True)
        return None


def _import_with_stubs(own, root, fn, bare=False):
    """Runs `fn` (which imports the engine), stubbing each missing library and retrying."""
    try:  # pydantic models whose field types are stubs
        import pydantic

        pydantic.BaseModel.model_config["arbitrary_types_allowed"] = True
        real_adapter = pydantic.TypeAdapter

        def lenient_adapter(*a, **k):
            try:
                return real_adapter(*a, **k)
            except Exception:
                return _stub("TypeAdapter")

        pydantic.TypeAdapter = lenient_adapter
    except ImportError:
        pass
    sys.path.insert(0, root)
    finder = _StubFinder()
    sys.meta_path.insert(0, finder)
    for _ in range(300):
        for m in [m for m in sys.modules if m.split(".")[0] == own]:
            del sys.modules[m]
        if bare:
            _bare_package(own, root)
        try:
            return fn()
        except ModuleNotFoundError as e:
            top = (e.name or "").split(".")[0]
            if not top or top == own or top in finder.stubbed:
                raise
            finder.stubbed.add(top)
    raise RuntimeError("too many missing modules")


def _kind(a):
    if isinstance(a, argparse.BooleanOptionalAction):
        return "bool_optional"
    if isinstance(a, argparse._StoreTrueAction):
        return "store_true"
    if isinstance(a, argparse._StoreFalseAction):
        return "store_false"
    if isinstance(a, (argparse._HelpAction, argparse._VersionAction)):
        return "help"
    if isinstance(a, argparse._AppendAction):
        return "append"
    if isinstance(a, argparse._StoreConstAction):
        return "store_const"
    # _StoreAction and engine-defined actions (deprecation shims): zero-arg when nargs == 0.
    if a.nargs == 0:
        return "store_true"
    return "nargs" if a.nargs not in (None, "?") else "value"


def _type(t):
    if t is None or t is str:
        return "str"
    if t is int:
        return "int"
    if t is float:
        return "float"
    name = getattr(t, "__name__", type(t).__name__)
    if name in ("_optional_type", "_parse_type") and getattr(t, "__closure__", None):
        # vllm.engine.arg_utils.optional_type / parse_type(return_type): the wrapped type is in
        # the closure (`parse_type(json.loads)` for dict-valued config fields).
        inner = [c.cell_contents for c in t.__closure__ if callable(c.cell_contents)]
        return _type(inner[0]) if inner else "str"
    if name == "parse_dataclass":
        # vllm.engine.arg_utils._compute_kwargs: `TypeAdapter(cls).validate_json(val)` of a
        # config dataclass, so the value must be a JSON object.
        return "json_object"
    if "human_readable_int_or_auto" in name:
        return "human_int_or_auto"
    if "human_readable_int" in name:
        return "human_int"
    if name in ("optional_int", "int_or_none"):
        return "int"
    if name in ("optional_float", "float_or_none"):
        return "float"
    if "json" in name.lower() or name in ("loads", "parse_type"):
        return "json"
    return "str"


def _negative(a, opt):
    """Option strings that set a BooleanOptionalAction to False (`--no-x`, vLLM `--disable-x`)."""
    neg = getattr(a, "negative_option_strings", None)
    if neg is not None:
        return opt in neg
    return opt.startswith("--no-")


def _dump(parser):
    """One entry per action; option strings come from the parser's registry, which also holds
    the hidden ones (vLLM registers `--no-enable-x` but shows only `--disable-x`)."""
    by_action = {}
    for opt, a in parser._option_string_actions.items():
        by_action.setdefault(id(a), []).append(opt)
    out = []
    for a in parser._actions:
        k = _kind(a)
        if k == "help":
            continue
        opts = [o for o in a.option_strings if o in by_action.get(id(a), [])]
        opts += [o for o in by_action.get(id(a), []) if o not in opts]
        e = {"opts": [o for o in opts if not (k == "bool_optional" and _negative(a, o))],
             "dest": a.dest, "kind": k, "type": _type(a.type),
             "nargs": a.nargs if isinstance(a.nargs, (str, int)) else None}
        if k == "bool_optional":
            e["neg"] = [o for o in opts if _negative(a, o)]
        if a.choices is not None:
            try:
                e["choices"] = [str(c) for c in a.choices]
                if isinstance(a.choices, (set, frozenset)):  # hash order differs run to run
                    e["choices"].sort()
            except TypeError:
                pass
        out.append(e)
    return out


class _LenientDefaultsLoader(importlib.machinery.SourceFileLoader):
    """vLLM's `get_kwargs` instantiates config classes for their defaults; with stubbed torch
    some `__post_init__` checks fail. Defaults do not matter for the flag table."""

    def source_to_code(self, data, path, *, _optimize=-1):
        text = data.decode() if isinstance(data, bytes) else data
        text = re.sub(r"([\w.]*default_factory)\(\)", r"__kvlint_call(\1)", text)
        return compile(text, path, "exec", dont_inherit=True, optimize=_optimize)


def _kvlint_call(factory):
    try:
        return factory()
    except Exception:
        return None


builtins.__kvlint_call = _kvlint_call


class _PatchFinder(importlib.abc.MetaPathFinder):
    def __init__(self, root, modules):
        self.root, self.modules = root, modules

    def find_spec(self, name, path, target=None):
        if name not in self.modules:
            return None
        file = f"{self.root}/{name.replace('.', '/')}.py"
        return importlib.util.spec_from_file_location(name, file,
                                                      loader=_LenientDefaultsLoader(name, file))


def _bare_package(name, root):
    """Registers a package without running its __init__ (which patches heavy libraries)."""
    m = types.ModuleType(name)
    m.__path__ = [f"{root}/{name}"]
    sys.modules[name] = m


def sglang_parser(root):
    """The parser `prepare_server_args` (sglang/srt/server_args.py) builds, from the unmodified source."""
    def build():
        from sglang.srt.server_args import ServerArgs

        parser = argparse.ArgumentParser()
        ServerArgs.add_cli_args(parser)
        return parser

    return _import_with_stubs("sglang", root, build, bare=True)


def sglang(root):
    return _dump(sglang_parser(root))


def _serve_parser_module(root):
    """The module `vllm serve` (vllm/entrypoints/cli/serve.py) imports `make_arg_parser` from;
    it moved from entrypoints.openai to entrypoints.launchers (0.29) and entrypoints.common."""
    tree = ast.parse(open(f"{root}/vllm/entrypoints/cli/serve.py").read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "make_arg_parser" for a in node.names):
            return node.module
    raise RuntimeError("vllm/entrypoints/cli/serve.py imports no make_arg_parser")


def vllm_parts(root):
    """`(FlexibleArgumentParser, make_arg_parser)` of the release, from the unmodified source."""
    def build():
        if os.path.exists(f"{root}/vllm/utils/argparse_utils.py"):
            from vllm.utils.argparse_utils import FlexibleArgumentParser
        else:
            from vllm.utils import FlexibleArgumentParser
        make_arg_parser = importlib.import_module(_serve_parser_module(root)).make_arg_parser
        return FlexibleArgumentParser, make_arg_parser

    sys.meta_path.insert(0, _PatchFinder(root, {"vllm.engine.arg_utils"}))
    return _import_with_stubs("vllm", root, build)


def vllm(root):
    flexible, make_arg_parser = vllm_parts(root)
    return _dump(make_arg_parser(flexible()))


# sglang.srt.server_args.ServerArgs.from_cli_args (<= 0.5.9) copies these argparse dests to the
# ServerArgs fields later versions use as dests directly; the table uses the field names.
SGLANG_DESTS = {"tensor_parallel_size": "tp_size", "pipeline_parallel_size": "pp_size",
                "data_parallel_size": "dp_size", "expert_parallel_size": "ep_size",
                "attention_context_parallel_size": "attn_cp_size",
                "moe_data_parallel_size": "moe_dp_size"}


def _toml_str(v):
    return json.dumps(v)


def merge(engine, files):
    """Per-version JSON tables → one TOML with `since`/`until` (inspected versions) per entry."""
    versions = [f.rsplit("-", 1)[1].removesuffix(".json") for f in files]
    order = sorted(range(len(files)), key=lambda i: tuple(int(x) for x in versions[i].split(".")))
    versions = [versions[i] for i in order]
    tables = [json.load(open(files[i])) for i in order]
    entries = {}
    for vi, table in enumerate(tables):
        for e in table:
            e = {k: v for k, v in e.items() if v is not None}  # as `split` writes them back
            if engine == "sglang":
                e["dest"] = SGLANG_DESTS.get(e["dest"], e["dest"])
            key = json.dumps(e, sort_keys=True)
            entries.setdefault(key, (e, []))[1].append(vi)
    lines = [f"# Generated by tools/extract_engine_flags.py from the {engine} releases below.",
             f"versions = {_toml_str(versions)}", ""]
    for e, present in sorted(entries.values(), key=lambda x: (x[0]["dest"], x[1][0])):
        runs, start = [], present[0]
        for a, b in zip(present, present[1:] + [None]):
            if b != a + 1:
                runs.append((start, a))
                start = b
        for lo, hi in runs:
            lines.append("[[flag]]")
            for k in ("opts", "neg", "dest", "kind", "type", "nargs", "choices"):
                if e.get(k) is not None:
                    lines.append(f"{k} = {_toml_str(e[k])}")
            lines.append(f"since = {_toml_str(versions[lo])}")
            if hi != len(versions) - 1:
                lines.append(f"until = {_toml_str(versions[hi])}")
            lines.append("")
    return "\n".join(lines)


def split(toml_path, out_dir):
    """The merged TOML → `out_dir/flags-V.json` per inspected release (what `merge` was given)."""
    import tomllib

    merged = tomllib.load(open(toml_path, "rb"))
    versions = merged["versions"]
    for vi, v in enumerate(versions):
        table = []
        for f in merged["flag"]:
            lo = versions.index(f["since"])
            hi = versions.index(f["until"]) if "until" in f else len(versions) - 1
            if lo <= vi <= hi:
                table.append({k: f[k] for k in ("opts", "neg", "dest", "kind", "type", "nargs", "choices")
                              if k in f})
        with open(f"{out_dir}/flags-{v}.json", "w") as out:
            json.dump(table, out, indent=0)


if __name__ == "__main__":
    if sys.argv[1] == "split":
        split(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if sys.argv[1] == "merge":
        sys.stdout.write(merge(sys.argv[2], sys.argv[3:]))
        sys.exit(0)
    eng, root = sys.argv[1], sys.argv[2]
    out, sys.stdout = sys.stdout, sys.stderr  # engine logging must not mix into the JSON
    table = {"sglang": sglang, "vllm": vllm}[eng](root)
    json.dump(table, out, indent=0, default=str)
