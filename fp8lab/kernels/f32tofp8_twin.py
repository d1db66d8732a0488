"""The compiled twin of the ``F32ToFp8`` port, generated from the port's own source.

:mod:`fp8lab.kernels.f32tofp8` settles each lane at the first step whose mask
holds, with elementwise numpy operations only. This module reads the source of
its step function ``_steps`` (the original, or a mutant of it) and writes the
same steps for one float32 lane, ``settle(mask, codes)`` becoming ``if mask:
return codes``, then compiles that with numba. Every operation emulates
numpy's result dtype (NEP 50: a Python literal takes the other operand's
dtype). Where numba's result could differ from numpy's (a float cast to an
integer out of range or from NaN/inf, an integer leaving its dtype, a code
outside 0..255, ``frexp`` of a non-finite value) the lane is *undetermined*
and the port's own numpy block encoder encodes it: every answer is the
numpy one, and the fast lanes agree with it by construction.

A twin is built only when the source is one this generator understands:
``_encode_block`` (with ``settle``) must be the text the generator was
written for, and every statement and call of ``_steps`` must come from a
short list; anything else gives ``None`` and the caller keeps numpy.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

numba: types.ModuleType | None
try:
    import numba
except ImportError:  # pragma: no cover - numba is a pinned dependency
    numba = None

__all__ = [
    "cache_dir",
    "frexp32",
    "ENCODE_BLOCK_DIGEST",
    "lane_groups",
    "load_generated",
    "attach_twin",
    "compiled_f32_to_fp8",
    "port_tree",
    "same_glue",
    "twin_checker",
]

# ast.dump of the port's ``_encode_block`` (with ``settle``), the glue this twin models.
ENCODE_BLOCK_DIGEST = "c01d4db0a95dc473"
_INT = {"u8": (0, 255), "i32": (-(1 << 31), (1 << 31) - 1), "i64": (-(1 << 63), (1 << 63) - 1)}
_NP = {"u8": "np.uint8", "i32": "np.int32", "i64": "np.int64", "f32": "np.float32"}
_NP |= {"f64": "np.float64"}
_DTYPES = {"uint8": "u8", "int32": "i32", "int64": "i64", "float32": "f32", "float64": "f64"}
_ORDER = ["u8", "i32", "i64", "f32", "f64"]


class _RefuseError(Exception):
    """The source holds something this generator does not model."""


def port_tree() -> ast.Module:
    """The parsed source of :mod:`fp8lab.kernels.f32tofp8`."""
    from fp8lab.kernels import f32tofp8

    return ast.parse(Path(f32tofp8.__file__ or "").read_text())


def _digest(node: ast.AST) -> str:
    return hashlib.sha256(ast.dump(node).encode()).hexdigest()[:16]


def _promote(a: str, b: str) -> str:
    """Numpy's result dtype of two typed operands (a bool takes the other's dtype)."""
    if a == b or b == "b":
        return a
    if a == "b":
        return b
    if a in _INT and b in _INT:
        return max(a, b, key=_ORDER.index)
    if "f64" in (a, b) or "i32" in (a, b) or "i64" in (a, b):
        return "f64"  # int32/int64 with float32 -> float64
    return "f32"  # uint8 with float32


class _Lane:
    """Writes one lane of ``_steps`` as straight-line Python over numpy scalars."""

    def __init__(self, globals_: dict[str, Any], returns: Callable[[str], str]) -> None:
        self.returns = returns  # the text that makes the lane answer a value
        self.lines: list[str] = []
        self.types: dict[str, str] = {"flat": "f32"}
        self.globals = globals_
        self.n = 0

    def tmp(self, code: str, kind: str) -> tuple[str, str]:
        self.n += 1
        name = f"_t{self.n}"
        self.lines.append(f"{name} = {code}")
        return name, kind

    def fail(self, cond: str) -> None:
        self.lines.append(f"if {cond}:\n        {self.returns('-1')}")

    def fit(self, name: str, kind: str) -> tuple[str, str]:
        lo, hi = _INT[kind]
        self.fail(f"not ({lo} <= {name} <= {hi})")
        return self.tmp(f"{_NP[kind]}({name})", kind)

    def literal(self, value: Any, kind: str) -> tuple[str, str]:
        if kind in _INT:
            if type(value) is not int or not _INT[kind][0] <= value <= _INT[kind][1]:
                raise _RefuseError(f"literal {value!r} as {kind}")
        elif kind == "b" or type(value) not in (int, float):
            raise _RefuseError(f"literal {value!r} as {kind}")
        return f"{_NP[kind]}({value!r})", kind

    def typed(self, node: ast.expr, like: str | None) -> tuple[str, str]:
        """Evaluate ``node``; a bare literal takes the dtype ``like`` (NEP 50)."""
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            if like is None:
                raise _RefuseError("literal with no dtype beside it")
            if type(node.value) is float and like in _INT:
                like = "f64"
            return self.literal(node.value, like)
        return self.expr(node)

    def pair(self, a: ast.expr, b: ast.expr) -> tuple[str, str, str]:
        weak = (isinstance(a, ast.Constant), isinstance(b, ast.Constant))
        if weak[0] and not weak[1]:
            y, ky = self.expr(b)
            x, kx = self.typed(a, ky)
        else:
            x, kx = self.expr(a)
            y, ky = self.typed(b, kx)
        kind = kx if kx == ky else _promote(kx, ky)
        return self.cast(x, kx, kind), self.cast(y, ky, kind), kind

    def cast(self, name: str, src: str, dst: str) -> str:
        if src == dst:
            return name
        if dst == "b":
            raise _RefuseError("cast to bool")
        if src == "b":
            return f"{_NP[dst]}(1 if {name} else 0)"
        if src in _INT and dst in _INT:  # C integer conversion: numpy wraps
            return f"{_NP[dst]}({name})"
        if dst in _INT:  # float -> int: exact only in range
            lo, hi = _INT[dst]
            self.fail(f"not ({float(lo)!r} <= {name} < {float(hi) + 1!r})")
            return self.tmp(f"{_NP[dst]}(math.trunc({name}))", dst)[0]
        return f"{_NP[dst]}({name})"  # to float: correctly rounded, as numpy

    def call(self, node: ast.Call) -> tuple[str, str]:
        f = node.func
        if isinstance(f, ast.Name) and f.id == "_fp8lab_identity" and len(node.args) == 1:
            return self.expr(node.args[0])
        if not isinstance(f, ast.Attribute) or node.keywords:
            raise _RefuseError(ast.unparse(node))
        if f.attr == "astype" and len(node.args) == 1:
            x, kx = self.expr(f.value)
            dst = self.dtype(node.args[0])
            return self.tmp(self.cast(x, kx, dst), dst)
        if not (isinstance(f.value, ast.Name) and f.value.id == "np"):
            raise _RefuseError(ast.unparse(node))
        args = node.args
        if f.attr in _DTYPES and len(args) == 1 and isinstance(args[0], ast.Constant):
            return self.literal(args[0].value, _DTYPES[f.attr])
        if f.attr == "ones" and ast.unparse(node) == "np.ones(flat.size, np.bool_)":
            return "True", "b"
        if f.attr in ("signbit", "isnan", "isfinite") and len(args) == 1:
            x, kx = self.expr(args[0])
            if kx not in ("f32", "f64"):
                raise _RefuseError(ast.unparse(node))
            test = {"signbit": f"np.signbit({x})", "isnan": f"{x} != {x}"}
            test["isfinite"] = f"abs({x}) < np.inf"  # false for NaN and +-inf only
            return self.tmp(test[f.attr], "b")
        if f.attr == "abs" and len(args) == 1:
            x, kx = self.expr(args[0])
            if kx not in ("f32", "f64"):
                raise _RefuseError(ast.unparse(node))
            return self.tmp(f"{_NP[kx]}(abs({x}))", kx)
        if f.attr == "rint" and len(args) == 1:
            x, kx = self.expr(args[0])
            if kx not in ("f32", "f64"):
                raise _RefuseError(ast.unparse(node))  # rint of a float32 is a float32
            return self.tmp(f"{_NP[kx]}(np.rint(np.float64({x})))", kx)
        if f.attr == "where" and len(args) == 3:
            c, kc = self.expr(args[0])
            if kc != "b":
                raise _RefuseError(ast.unparse(node))
            a, b, kind = self.pair(args[1], args[2])
            return self.tmp(f"{a} if {c} else {b}", kind)
        if f.attr == "clip" and len(args) == 3:
            x, kx = self.expr(args[0])
            if kx not in _INT:
                raise _RefuseError(ast.unparse(node))
            lo, _ = self.typed(args[1], kx)
            hi, _ = self.typed(args[2], kx)
            return self.tmp(f"min(max({x}, {lo}), {hi})", kx)
        raise _RefuseError(ast.unparse(node))

    def dtype(self, node: ast.expr) -> str:
        text = ast.unparse(node)
        if not text.startswith("np.") or text[3:] not in _DTYPES:
            raise _RefuseError(text)
        return _DTYPES[text[3:]]

    def expr(self, node: ast.expr) -> tuple[str, str]:
        if isinstance(node, ast.Name):
            if node.id in self.types:
                return node.id, self.types[node.id]
            value = self.globals.get(node.id)
            if isinstance(value, np.generic) and value.dtype.name in _DTYPES:
                return self.literal(value.item(), _DTYPES[value.dtype.name])
            raise _RefuseError(node.id)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            x, kx = self.expr(node.operand)
            if kx != "b":
                raise _RefuseError(ast.unparse(node))
            return self.tmp(f"not {x}", "b")
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            a, b, _ = self.pair(node.left, node.comparators[0])
            op = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
            op |= {ast.Eq: "==", ast.NotEq: "!="}
            if type(node.ops[0]) not in op:
                raise _RefuseError(ast.unparse(node))
            return self.tmp(f"{a} {op[type(node.ops[0])]} {b}", "b")
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        raise _RefuseError(ast.unparse(node))

    def binop(self, node: ast.BinOp) -> tuple[str, str]:
        a, b, kind = self.pair(node.left, node.right)
        ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.BitOr: "|", ast.BitAnd: "&"}
        ops |= {ast.LShift: "<<"}
        if type(node.op) not in ops:
            raise _RefuseError(ast.unparse(node))
        op = ops[type(node.op)]
        if kind == "b":
            if op not in "|&":
                raise _RefuseError(ast.unparse(node))
            return self.tmp(f"{a} {'or' if op == '|' else 'and'} {b}", "b")
        if kind in _INT:  # exact in Python-sized ints, then checked against the dtype
            if op == "<<":
                self.fail(f"not (0 <= {b} < 32)")
            wide = self.tmp(f"int({a}) {op} int({b})", "i64")[0]
            return self.fit(wide, kind)
        if op not in "+-*":
            raise _RefuseError(ast.unparse(node))
        return self.tmp(f"{_NP[kind]}({a} {op} {b})", kind)

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            return  # a bare constant (a dropped call): no effect
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            if not (isinstance(call.func, ast.Name) and call.func.id == "settle"):
                raise _RefuseError(ast.unparse(stmt))
            if len(call.args) != 2 or call.keywords:
                raise _RefuseError(ast.unparse(stmt))
            m, km = self.expr(call.args[0])
            if km != "b":
                raise _RefuseError(ast.unparse(stmt))
            if isinstance(call.args[1], ast.Constant):
                code, _ = self.literal(call.args[1].value, "u8")  # numpy rejects other ints
                self.lines.append(f"if {m}:\n        {self.returns(f'np.int16({code})')}")
                return
            c, kc = self.expr(call.args[1])
            if kc not in _INT:
                raise _RefuseError(ast.unparse(stmt))
            answer = f"(np.int16({c}) if 0 <= {c} <= 255 else -1)"
            self.lines.append(f"if {m}:\n        {self.returns(answer)}")
            return
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
            if isinstance(target, ast.Name):
                code, kind = self.expr(value)
                self.lines.append(f"{target.id} = {code}")
                self.types[target.id] = kind
                return
            frexp = isinstance(value, ast.Call) and ast.unparse(value.func) == "np.frexp"
            if isinstance(target, ast.Tuple) and frexp and len(target.elts) == 2:
                names = [e.id for e in target.elts if isinstance(e, ast.Name)]
                (arg,) = value.args  # type: ignore[attr-defined]
                x, kx = self.expr(arg)
                if len(names) != 2 or kx != "f32":
                    raise _RefuseError(ast.unparse(stmt))
                self.fail(f"not abs({x}) < np.inf")
                m, e = self.tmp(f"_frexp32({x})", "tuple")[0], names
                self.lines.append(f"{e[0]} = {m}[0]")
                self.lines.append(f"{e[1]} = {m}[1]")
                self.types |= {e[0]: "f32", e[1]: "i32"}
                return
        raise _RefuseError(ast.unparse(stmt))


def _function(tree: ast.Module, name: str) -> ast.FunctionDef:
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    if len(found) != 1:
        raise _RefuseError(f"no single {name}")
    return found[0]


def _answer(value: str) -> str:
    return f"return {value}"


def lane_groups(
    tree: ast.Module,
    namespace: dict[str, Any],
    returns: Callable[[str, int], str] | None = None,
) -> list[tuple[list[str], tuple[str, ...]]]:
    """Per statement of ``_steps``: its lane lines, and the names bound before it.

    One more entry ends the list: no lines, and the names bound after the last
    statement. ``returns(value, k)`` writes how statement ``k`` answers
    ``value`` (default ``return value``). Raises _RefuseError when the source
    is not modelled.
    """
    if _digest(_function(tree, "_encode_block")) != ENCODE_BLOCK_DIGEST:
        raise _RefuseError("_encode_block is not the text this twin models")
    steps = _function(tree, "_steps")
    if [a.arg for a in steps.args.args] != ["flat", "settle"]:
        raise _RefuseError("_steps(flat, settle)")
    stage = [0]
    lane = _Lane(namespace, lambda v: returns(v, stage[0]) if returns else _answer(v))
    groups = []
    for k, stmt in enumerate(steps.body):
        stage[0], bound, first = k, tuple(n for n in lane.types if n != "flat"), len(lane.lines)
        lane.statement(stmt)
        groups.append((lane.lines[first:], bound))
    groups.append(([], tuple(n for n in lane.types if n != "flat")))
    return groups


def lane_source(tree: ast.Module, namespace: dict[str, Any]) -> str:
    """The generated lane function's source (raises _RefuseError when not modelled)."""
    lines = [line for group, _ in lane_groups(tree, namespace) for line in group]
    body = "\n".join("    " + line for line in lines)
    return f"def _lane(flat):\n{body}\n    return np.int16(0)\n"


if numba is not None:
    from llvmlite import ir  # type: ignore[import-untyped]
    from numba.core import types as _nbt

    @numba.extending.intrinsic  # type: ignore[untyped-decorator]
    def _f32_bits(typingctx: Any, v: Any) -> Any:  # pragma: no cover - compiled
        sig = _nbt.uint32(_nbt.float32)
        return sig, lambda ctx, builder, sg, args: builder.bitcast(args[0], ir.IntType(32))

    @numba.extending.intrinsic  # type: ignore[untyped-decorator]
    def _bits_f32(typingctx: Any, b: Any) -> Any:  # pragma: no cover - compiled
        sig = _nbt.float32(_nbt.uint32)
        return sig, lambda ctx, builder, sg, args: builder.bitcast(args[0], ir.FloatType())

    @numba.extending.intrinsic  # type: ignore[untyped-decorator]
    def _clz32(typingctx: Any, b: Any) -> Any:  # pragma: no cover - compiled
        sig = _nbt.uint32(_nbt.uint32)
        zero = ir.Constant(ir.IntType(1), 0)
        return sig, lambda ctx, builder, sg, args: builder.ctlz(args[0], zero)

    @numba.njit(inline="always")  # type: ignore[untyped-decorator]
    def frexp32(v: Any) -> Any:  # pragma: no cover - compiled
        """``np.frexp`` of one finite float32, from its bit fields (exact)."""
        b = _f32_bits(np.float32(v))
        field = np.int32((b >> np.uint32(23)) & np.uint32(0xFF))
        mant = b & np.uint32(0x7FFFFF)
        if field == 0:
            if mant == 0:
                return np.float32(v), np.int32(0)
            k = _clz32(mant) - np.uint32(8)  # shift the leading 1 to bit 23
            mant = (mant << k) & np.uint32(0x7FFFFF)
            e = np.int32(-125) - np.int32(k)
        else:
            e = field - np.int32(126)
        return _bits_f32((b & np.uint32(0x8000_0000)) | np.uint32(126 << 23) | mant), e


_LOOPS = """
import math

import numba
import numpy as np

from fp8lab.kernels.f32tofp8_twin import frexp32 as _frexp32

_lane = numba.njit(inline="always", error_model="numpy", cache=True)(_lane)


@numba.njit(nogil=True, error_model="numpy", cache=True)
def loop(flat, out):
    for i in range(flat.size):
        out[i] = _lane(flat[i])


@numba.njit(nogil=True, error_model="numpy", cache=True)
def first_mismatch(flat, want):
    buf = np.empty(4096, np.int16)
    for lo in range(0, flat.size, 4096):
        part = flat[lo : lo + 4096]
        loop(part, buf)
        for j in range(part.size):
            if buf[j] != np.int16(want[lo + j]):  # an undetermined -1 differs too
                return lo + j
    return -1
"""


def cache_dir() -> Path:
    """Where generated lanes are written, so numba caches each compiled lane across runs."""
    root = os.environ.get("FP8LAB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "fp8lab"
    )
    return Path(root) / "f32tofp8_twin"


def load_generated(text: str) -> types.ModuleType:
    """Import generated module text from :func:`cache_dir` (so numba caches what it compiles)."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"lane_{digest}.py"
    if not path.exists() or path.read_text() != text:
        partial = folder / f".lane_{digest}.{os.getpid()}.tmp"
        partial.write_text(text)
        partial.replace(path)
    spec = importlib.util.spec_from_file_location(f"_fp8lab_twin_{digest}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba's cache finds the lane's module by name
    spec.loader.exec_module(module)
    return module


@functools.cache
def _compile(source: str) -> tuple[Any, Any]:
    """The block loop and the mismatch loop of one generated lane (numba-cached on disk)."""
    module = load_generated(source + _LOOPS)
    return module.loop, module.first_mismatch


def twin_checker(module: types.ModuleType, tree: ast.Module) -> Any:
    """The compiled ``first_mismatch(flat, want)`` of ``module``'s steps, or None.

    It answers the first lane whose code differs from ``want`` or is
    undetermined, -1 for none; None when the source is not modelled.

    Valid for ``module`` as a whole only where the rest of ``tree`` is the port's text.
    """
    try:
        _, check = _compile(lane_source(tree, module.__dict__))
        check(np.zeros(1, np.float32), np.zeros(1, np.uint8))  # compile now, or refuse
    except Exception:  # noqa: BLE001 - numba could not type it: keep numpy
        return None
    return check


def attach_twin(module: types.ModuleType, tree: ast.Module) -> bool:
    """Replace ``module._encode_block`` by its compiled twin; False when not modelled.

    ``tree`` is the source ``module`` was built from. Undetermined lanes go to
    the module's own numpy ``_encode_block``, so answers stay numpy's.
    """
    try:
        loop, _ = _compile(lane_source(tree, module.__dict__))
        loop(np.zeros(1, np.float32), np.zeros(1, np.int16))  # compile now, or refuse
    except Exception:  # noqa: BLE001 - not modelled, or numba could not type it
        return False
    slow = module._encode_block

    def encode_block(flat: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
        codes = np.empty(flat.size, np.int16)
        loop(np.ascontiguousarray(flat), codes)
        undetermined = np.flatnonzero(codes < 0)
        if undetermined.size:
            codes[undetermined] = slow(flat[undetermined])
        return codes.astype(np.uint8)

    setattr(module, "_encode_block", encode_block)  # noqa: B010 - a module attribute
    return True


def compiled_f32_to_fp8() -> Callable[[npt.NDArray[np.float32]], npt.NDArray[np.uint8]]:
    """``f32_to_fp8`` of a fresh copy of the port, its blocks encoded by the compiled twin.

    Raises:
        RuntimeError: when the port's source is not one the twin models.
    """
    tree = port_tree()
    module = types.ModuleType("fp8lab.kernels.f32tofp8__twin")
    exec(compile(tree, "<fp8lab.kernels.f32tofp8>", "exec"), module.__dict__)
    if not attach_twin(module, tree):
        raise RuntimeError("the F32ToFp8 port's source is not one its compiled twin models")
    return module.f32_to_fp8  # type: ignore[no-any-return]


def same_glue(tree: ast.Module, original: ast.Module) -> bool:
    """Whether ``tree`` differs from ``original`` at most inside ``_steps``'s body."""

    def without_steps(t: ast.Module) -> str:
        body = [n for n in t.body if not (isinstance(n, ast.FunctionDef) and n.name == "_steps")]
        return ast.dump(ast.Module(body=body, type_ignores=[]))

    return without_steps(tree) == without_steps(original)
