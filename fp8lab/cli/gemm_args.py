"""G3's GEMM flags: the declaration it checks against, and the warm-up calls.

``--gemm``, ``--gemm-file`` and ``--order-from`` name the declaration;
``--warmup`` the calls before the first case. Importing this module loads no
numpy; the declaration is read when a gate runs.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from fp8lab.cli.argtypes import warmup_arg
from fp8lab.cli.common import CliError

__all__ = ["add_gemm_arguments", "gemm_options", "read_declaration"]


def add_gemm_arguments(p: argparse.ArgumentParser) -> None:
    """``--gemm``, ``--gemm-file``, ``--order-from`` and ``--warmup``."""
    p.add_argument(
        "--gemm",
        metavar="NAME",
        help="G3: check against this GEMM declaration (fp8lab gemm list), or the one of "
        "that name in --gemm-file; default: what the kernel's spec says",
    )
    p.add_argument(
        "--gemm-file",
        metavar="PATH",
        help="G3: a GEMM declaration file ([[gemm]] tables, as fp8lab gemm infer "
        "--write-gemm writes): its only declaration, or the one --gemm names",
    )
    p.add_argument(
        "--order-from",
        metavar="ORDER.json",
        help="G3: the classes an fp8lab order --json run inferred (the order at that "
        "shape, its out dtype and output rounding), with the scales of --gemm/--gemm-file "
        "(default vllm_cpp's: folded, per tensor)",
    )
    p.add_argument(
        "--warmup",
        type=warmup_arg,
        default=None,
        metavar="N",
        help="G3: calls on the first case's inputs before it runs (default 1); a first call "
        "that answers otherwise is named in the record",
    )


def read_declaration(name: str | None, path: str | None) -> Any:
    """The declaration ``--gemm``/``--gemm-file`` name, or None when neither is given.

    Raises:
        CliError: for an unknown name, an unreadable file, or a file of several
            declarations and no ``--gemm``.
    """
    from fp8lab.specs.gemm_decl import GEMMS, read_gemm_file

    if path is None:
        if name is None:
            return None
        if name not in GEMMS:
            raise CliError(f"unknown --gemm {name!r}; one of {', '.join(GEMMS)}")
        return GEMMS[name]
    try:
        found = {g.name: g for g in read_gemm_file(path)}
    except ValueError as exc:
        raise CliError(f"--gemm-file {exc}") from None
    if name is None and len(found) == 1:
        return next(iter(found.values()))
    if name not in found:
        raise CliError(f"--gemm-file {path}: name one of {', '.join(found)} with --gemm")
    return found[name]


def gemm_options(args: argparse.Namespace) -> dict[str, Any]:
    """G3's ``declaration`` and ``warmup`` keywords from the flags.

    Raises:
        CliError: as :func:`read_declaration`, for an unreadable ``--order-from``
            record, or a negative ``--warmup``.
    """
    warmup = 1 if args.warmup is None else args.warmup
    decl = read_declaration(args.gemm, args.gemm_file)
    if args.order_from is not None:
        from fp8lab.order.declare import declaration_from_order
        from fp8lab.specs.gemm_decl import GEMMS

        try:
            with open(args.order_from, encoding="utf-8") as handle:
                record = json.load(handle)
            decl = declaration_from_order(record, decl or GEMMS["vllm_cpp"])
        except (OSError, ValueError) as exc:
            raise CliError(f"--order-from {args.order_from}: {exc}") from None
    if decl is None and args.kernel:
        spec = source_spec(args.kernel)
        if spec is not None:
            return {"warmup": warmup, "spec": spec}
    return {"warmup": warmup} | ({"declaration": decl} if decl is not None else {})


def source_spec(kernel: str) -> Any:
    """The ``MatmulSpec`` a ``MODULE:OBJ`` kernel's source text states (``spec = MatmulSpec(...)``).

    Read as text before the kernel runs (:mod:`fp8lab.kernels.sources.declared`);
    what the kernel's process reports of its model is recorded, never checked against.
    None where the source states none (G3 then holds the kernel to vllm.cpp's model).

    Raises:
        CliError: for a stated spec that is not literal, or that names no model.
    """
    import os
    import sys

    from fp8lab.gates.g3_spec import declared_spec
    from fp8lab.kernels.matmul_protocol import MatmulSpec
    from fp8lab.kernels.sources.declared import source_call
    from fp8lab.kernels.sources.shared_source import is_shared_source

    if is_shared_source(kernel):
        return None
    try:
        said = source_call(kernel, "spec", "MatmulSpec", [os.getcwd(), *sys.path])
        if said is None:
            return None
        spec = MatmulSpec(*said.pop("args"), **said)
        return declared_spec(argparse.Namespace(spec=spec))
    except (TypeError, ValueError) as exc:
        raise CliError(f"--kernel {kernel}: its source's spec: {exc}"[:300]) from None
