"""GEMM declarations as data: every choice an fp8 matmul makes differently is a named field.

A declaration says how a kernel forms ``out = scales(A·Bᵀ)`` from e4m3fn
codes: how its products join the sum, where each scale is applied and at
what granularity, the order of its adds (a named accumulator, or the trees
inferred by class), and the type its output is rounded to. The built-in
declarations are a data file, ``fp8lab/specs/rules/gemm.toml``, one
``[[gemm]]`` table each; a user's file has the same form
(:func:`read_gemm_file`), and ``fp8lab gemm infer --write-gemm`` writes one.
This module is data only (standard library): G3's model
(:mod:`fp8lab.refs.gemm_declared`) reads the declaration, the kernels never do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from importlib import resources
from pathlib import Path
from types import MappingProxyType

from fp8lab.specs.rule_file import read_rule_text, rule_tables

__all__ = [
    "GEMMS",
    "OUTPUTS",
    "OUT_DTYPES",
    "PRODUCTS",
    "ROUNDINGS",
    "SCALES",
    "SCALE_ORDERS",
    "GemmDeclaration",
    "TreeClass",
    "gemm_text",
    "get_gemm",
    "index_list",
    "parse_gemms",
    "read_gemm_file",
]

PRODUCTS = ("exact", "rounded", "fused", "fused_high")
SCALES = ("folded", "accumulator", "product", "operands", "none")
SCALE_ORDERS = ("a-first", "b-first")
A_SCALES = ("tensor", "row")
B_SCALES = ("tensor", "column")
OUTPUTS = ("float32", "bfloat16", "float16")
ROUNDINGS = ("once", "per-add")
OUT_DTYPES = ("f32", "bf16", "f16")
INTERMEDIATES = ("f32", "exact")
INFERRED = "inferred"
Shape = tuple[int, int, int]
Nodes = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class TreeClass:
    """Outputs of one product shape that sum in one binary tree (inferred, FPRev).

    Args:
        shape: (M, N, K) of the product the tree was inferred on.
        outputs: ``"all"``, a grid ``ROWS:COLS`` (comma lists and ranges
            a-b, ``*`` for every one), or ``i,j;i,j;...``.
        nodes: the canonical tree: per node its two child ids (``< K`` a
            leaf, ``K + t`` node t), children before parents, root last.
        products: how this class's products join the sum, or "" for the
            declaration's ``products``.
        family: the tree's known family (words only; the nodes decide).
    """

    shape: Shape
    outputs: str
    nodes: Nodes
    products: str = ""
    family: str = ""

    def __post_init__(self) -> None:
        m, n, k = self.shape
        if min(m, n, k) < 1:
            raise ValueError(f"class shape {self.shape}: want M, N, K >= 1")
        if len(self.nodes) != k - 1 or any(len(kids) != 2 for kids in self.nodes):
            raise ValueError(f"class {self.shape}: a binary tree over {k} leaves has {k - 1} nodes")
        if self.products not in ("", *PRODUCTS):
            raise ValueError(f"class {self.shape}: products {self.products!r}; one of {PRODUCTS}")
        positions(self.outputs, m, n)  # raises for a malformed or outside set

    def positions(self) -> list[tuple[int, int]]:
        """The (row, column) outputs of this class, row-major."""
        return positions(self.outputs, self.shape[0], self.shape[1])


@dataclass(frozen=True)
class GemmDeclaration:
    """One GEMM's choices, each named.

    ``out[i,j] = round_T(scales(Σ_k a[i,k]·b[j,k]))``, where:

    Args:
        name: the declaration's name.
        source: what it describes (implementation, path, version).
        products: ``exact`` (fp8 products are exact: any way of forming them
            gives the same sum); ``rounded`` (``f32(a·b)``, then an add);
            ``fused`` (an FMA chain; a two-leaf add starts from +0);
            ``fused_high`` (a two-leaf add starts from the larger leaf's
            ``f32(a·b)``). After operand scaling products are not exact.
        scales: where the scales are applied: ``folded``
            (``f32(f32(s_a·s_b)·acc)``); ``accumulator`` (one after the other
            on the sum: ``f32(s2·f32(s1·acc))``); ``product`` (inside each
            product before it is added: ``f32(f32(a·b·s1)·s2)``); ``operands``
            (``f32(a·s_a)`` and ``f32(b·s_b)`` before the products); ``none``
            (the kernel takes no scales; G3 hands 1).
        scale_order: ``accumulator`` and ``product``: which scale multiplies
            first (``a-first``: s1 = s_a; ``b-first``: s1 = s_b).
        swap_max_m: ``accumulator``: the order is swapped for M <= this
            (vLLM's SM90 swap_ab); None: never.
        intermediate: ``folded``/``accumulator``: ``f32`` rounds alpha or the
            first multiply; ``exact`` rounds ``s_a·s_b·acc`` once.
        a_scale: A's scale granularity: ``tensor`` or ``row`` (one per row of A).
        b_scale: B's: ``tensor`` or ``column`` (one per column of the output).
        accumulation: a named accumulator (``fp8lab.refs.gemm_accumulators.MODELS``)
            for every shape, or ``inferred``: the trees of ``classes``.
        classes: ``inferred``: the trees by shape and class of outputs.
        output: the type the result is rounded to (RNE): ``float32``,
            ``bfloat16`` or ``float16``; an f32 output is that value widened.
        output_rounding: ``once`` (float32 sum, rounded at the end) or
            ``per-add`` (every add rounded to ``output``).
        outputs: the ``out_dtype`` values the kernel takes (``f32``, ``bf16``, ``f16``).
        k_multiple: K must be a multiple of this (1: any K).
        n_multiple: N must be a multiple of this.
    """

    name: str
    source: str = ""
    products: str = "exact"
    scales: str = "folded"
    scale_order: str = "b-first"
    swap_max_m: int | None = None
    intermediate: str = "f32"
    a_scale: str = "tensor"
    b_scale: str = "tensor"
    accumulation: str = "sequential"
    classes: tuple[TreeClass, ...] = field(default=(), repr=False)
    output: str = "float32"
    output_rounding: str = "once"
    outputs: tuple[str, ...] = ("f32", "bf16")
    k_multiple: int = 1
    n_multiple: int = 1

    def __post_init__(self) -> None:
        where = f"gemm {self.name!r}"
        for key, choices in (
            ("products", PRODUCTS), ("scales", SCALES), ("scale_order", SCALE_ORDERS),
            ("intermediate", INTERMEDIATES), ("a_scale", A_SCALES), ("b_scale", B_SCALES),
            ("output", OUTPUTS), ("output_rounding", ROUNDINGS),
        ):  # fmt: skip
            if getattr(self, key) not in choices:
                raise ValueError(f"{where}: {key} = {getattr(self, key)!r}; one of {choices}")
        if not self.name or not self.accumulation:
            raise ValueError(f"{where}: name and accumulation must be non-empty")
        if not self.outputs or any(o not in OUT_DTYPES for o in self.outputs):
            raise ValueError(f"{where}: outputs {self.outputs!r}; some of {OUT_DTYPES}")
        if (self.accumulation == INFERRED) != bool(self.classes):
            raise ValueError(
                f"{where}: classes go with accumulation = {INFERRED!r}, which needs them"
            )
        if self.intermediate != "f32" and self.scales not in ("folded", "accumulator"):
            raise ValueError(f"{where}: intermediate = exact goes with folded or accumulator")
        if self.swap_max_m is not None and (self.scales != "accumulator" or self.swap_max_m < 0):
            raise ValueError(f"{where}: swap_max_m (>= 0) goes with accumulator scales")
        if self.scales == "none" and (self.a_scale, self.b_scale) != ("tensor", "tensor"):
            raise ValueError(f"{where}: scales = none has no granularity")
        if self.scales == "product" and self.products != "exact":
            raise ValueError(f"{where}: product scales round each scaled product: products = exact")
        fused = any((c.products or self.products).startswith("fused") for c in self.classes)
        if self.output_rounding == "per-add" and self.output != "float32" and fused:
            raise ValueError(f"{where}: a fused product adds in float32, not per-add {self.output}")
        if min(self.k_multiple, self.n_multiple) < 1:
            raise ValueError(f"{where}: k_multiple and n_multiple must be >= 1")
        shapes = [(c.shape, p) for c in self.classes for p in c.positions()]
        if len(set(shapes)) != len(shapes):
            raise ValueError(f"{where}: an output of one shape is in two classes")
        for shape in {c.shape for c in self.classes}:
            m, n, _ = shape
            if sum(len(c.positions()) for c in self.classes if c.shape == shape) != m * n:
                raise ValueError(f"{where}: the classes of {shape} leave outputs out")

    @property
    def shapes(self) -> tuple[Shape, ...]:
        """The shapes the inferred classes cover (empty for a named accumulation)."""
        return tuple(dict.fromkeys(c.shape for c in self.classes))

    def renamed(self, name: str) -> GemmDeclaration:
        """The same declaration under another name."""
        return replace(self, name=name)


def positions(text: str, m: int, n: int) -> list[tuple[int, int]]:
    """The outputs ``text`` names in an MxN product (see :class:`TreeClass`).

    Raises:
        ValueError: for a malformed set or an output outside the product.
    """
    text = text.strip()
    if text == "all":
        return [(r, c) for r in range(m) for c in range(n)]
    if ";" in text or ("," in text and ":" not in text):
        out = []
        for pair in text.split(";"):
            i, _, j = pair.partition(",")
            try:
                r, c = int(i), int(j)
            except ValueError:
                raise ValueError(f"outputs {pair!r}: want i,j") from None
            if not (0 <= r < m and 0 <= c < n):
                raise ValueError(f"output ({r}, {c}) is outside {m}x{n}")
            out.append((r, c))
        return sorted(set(out))
    rows, sep, cols = text.partition(":")
    if not sep:
        raise ValueError(f"outputs {text!r}: want 'all', ROWS:COLS or i,j;i,j")
    return [
        (r, c) for r in index_list(rows, m, "outputs:") for c in index_list(cols, n, "outputs:")
    ]


def index_list(text: str, size: int, what: str) -> list[int]:
    """The indices ``text`` names in ``0..size-1``: a comma list of numbers and ranges a-b.

    ``*``, ``all`` or nothing names every one; ``what`` begins each error.

    Raises:
        ValueError: for a part that is no number or range, or one outside ``0..size-1``.
    """
    if text.strip() in ("*", "all", ""):
        return list(range(size))
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        try:
            first, last = int(lo), int(hi) if hi else int(lo)
        except ValueError:
            raise ValueError(f"{what} {part.strip()!r} is not a number or a range a-b") from None
        if not 0 <= first <= last < size:
            raise ValueError(f"{what} {part.strip()!r} is outside 0..{size - 1}")
        out.extend(range(first, last + 1))
    return sorted(set(out))


_INTS = ("k_multiple", "n_multiple")


def _whole(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where} = {value!r:.40} is not a whole number")
    return value


def _tree_class(entry: object, where: str) -> TreeClass:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: a class is a table")
    keys = [f.name for f in fields(TreeClass)]
    unknown = sorted(set(entry) - set(keys))
    if unknown or not {"shape", "outputs", "nodes"} <= set(entry):
        raise ValueError(f"{where}: keys {', '.join(keys)} (shape, outputs, nodes required)")
    shape = entry["shape"]
    if not isinstance(shape, list) or len(shape) != 3:
        raise ValueError(f"{where}: shape = [M, N, K]")
    m, n, k = (_whole(v, f"{where}: shape") for v in shape)
    raw = entry["nodes"]
    if not isinstance(raw, list) or not all(isinstance(p, list) and len(p) == 2 for p in raw):
        raise ValueError(f"{where}: nodes = [[child, child], ...]")
    nodes = tuple((_whole(p[0], f"{where}: nodes"), _whole(p[1], f"{where}: nodes")) for p in raw)
    texts = {key: entry.get(key, "") for key in ("outputs", "products", "family")}
    if not all(isinstance(v, str) for v in texts.values()):
        raise ValueError(f"{where}: outputs, products and family are strings")
    outputs, products, family = (str(texts[key]) for key in ("outputs", "products", "family"))
    return TreeClass((m, n, k), outputs, nodes, products, family)


def _gemm(entry: dict[str, object], where: str) -> GemmDeclaration:
    """One ``[[gemm]]`` table as a :class:`GemmDeclaration`; every value checked."""
    keys = [f.name for f in fields(GemmDeclaration)]
    unknown = sorted(set(entry) - set(keys))
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; the keys: {', '.join(keys)}")
    if "name" not in entry:
        raise ValueError(f"{where}: missing key 'name'")
    values: dict[str, object] = dict(entry)
    for key in _INTS:
        if key in values:
            values[key] = _whole(values[key], f"{where}: {key}")
    if "swap_max_m" in values:
        values["swap_max_m"] = _whole(values["swap_max_m"], f"{where}: swap_max_m")
    outs = values.get("outputs", ["f32", "bf16"])
    if not isinstance(outs, list) or not all(isinstance(o, str) for o in outs):
        raise ValueError(f'{where}: outputs = ["f32", ...]')
    values["outputs"] = tuple(outs)
    raw = values.get("classes", [])
    if not isinstance(raw, list):
        raise ValueError(f"{where}: classes are [[gemm.classes]] tables")
    values["classes"] = tuple(_tree_class(c, f"{where}, class {i + 1}") for i, c in enumerate(raw))
    for key in ("name", "source", "products", "scales", "scale_order", "intermediate",
                "a_scale", "b_scale", "accumulation", "output", "output_rounding"):  # fmt: skip
        if key in values and not isinstance(values[key], str):
            raise ValueError(f"{where}: {key} must be a string")
    try:
        return GemmDeclaration(**values)  # type: ignore[arg-type]
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def parse_gemms(text: str, where: str = "gemm") -> tuple[GemmDeclaration, ...]:
    """The declarations of a GEMM file's text: ``[[gemm]]`` tables, one key per field.

    Raises:
        ValueError: for text that is not TOML or nested too deep, no ``[[gemm]]``, an unknown key,
            a value of the wrong kind, a choice outside its axis, a declaration
            :class:`GemmDeclaration` refuses, or a name given twice.
    """
    entries = rule_tables(text, where, "gemm")
    gemms = tuple(_gemm(e, f"{where}, gemm {i + 1}") for i, e in enumerate(entries))
    names = [g.name for g in gemms]
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: a gemm name given twice")
    return gemms


def _value(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return str(value)


def gemm_text(*gemms: GemmDeclaration) -> str:
    """``gemms`` as a GEMM file: the text :func:`parse_gemms` reads back as the same ones."""
    lines: list[str] = []
    for g in gemms:
        lines.append("[[gemm]]")
        for f in fields(GemmDeclaration):
            value = getattr(g, f.name)
            if f.name != "classes" and value is not None:
                lines.append(f"{f.name} = {_value(value)}")
        for c in g.classes:
            lines.append("")
            lines.append("[[gemm.classes]]")
            lines.append(f"shape = {_value(c.shape)}")
            lines.append(f"outputs = {_value(c.outputs)}")
            if c.products:
                lines.append(f"products = {_value(c.products)}")
            if c.family:
                lines.append(f"family = {_value(c.family)}")
            lines.append(f"nodes = {_value(c.nodes)}")
        lines.append("")
    return "\n".join(lines)


def read_gemm_file(path: str | Path, max_bytes: int = 1 << 24) -> tuple[GemmDeclaration, ...]:
    """The declarations of the GEMM file at ``path`` (at most ``max_bytes``).

    Raises:
        ValueError: as :func:`parse_gemms`, or for a file that cannot be read, is not a
            regular file (a FIFO is refused, never waited on), is too large or not UTF-8.
    """
    text = read_rule_text(path, max_bytes, "GEMM")
    return parse_gemms(text, str(path))


_DECLARED = parse_gemms(
    resources.files("fp8lab.specs").joinpath("rules/gemm.toml").read_text("utf-8"),
    "fp8lab/specs/rules/gemm.toml",
)

GEMMS: MappingProxyType[str, GemmDeclaration] = MappingProxyType({g.name: g for g in _DECLARED})


def get_gemm(gemm: str | GemmDeclaration) -> GemmDeclaration:
    """Look a declaration up by name, or pass a :class:`GemmDeclaration` through.

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    if isinstance(gemm, GemmDeclaration):
        return gemm
    try:
        return GEMMS[gemm]
    except (KeyError, TypeError):
        raise ValueError(f"unknown gemm {gemm!r}; known: {', '.join(GEMMS)}") from None
