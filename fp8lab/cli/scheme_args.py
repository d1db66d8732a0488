"""GQ's command-line options: ``--scheme``, ``--rule`` and its ``--kernel`` (Python or C ABI).

The names are :data:`fp8lab.gates.GQ_RULES` (scheme -> its rules) and
:data:`fp8lab.schemes.RULES` / ``NVFP4_RULES``; bad values are a :class:`CliError` (one line,
exit status 2) that lists the valid names.
"""

from __future__ import annotations

import argparse
from typing import Any

from fp8lab.cli.common import CliError, load_callable
from fp8lab.cli.names import GQ_SCHEMES

__all__ = ["add_scheme_arguments", "load_scheme_kernel", "scheme_options"]


def add_scheme_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--scheme`` and ``--rule`` to the ``gates`` parser."""
    p.add_argument(
        "--scheme",
        metavar="NAME",
        help=f"GQ: the scheme your kernel computes, one of {', '.join(GQ_SCHEMES)}; default "
        "with no --kernel: every scheme",
    )
    p.add_argument(
        "--rule",
        metavar="NAME",
        help="GQ: the scale rule your kernel follows, e.g. vllm-per-group (the list: README, "
        "Scale rules); default with no --kernel: every rule of the scheme, each on its port",
    )


def scheme_options(args: argparse.Namespace) -> list[dict[str, str]]:
    """GQ's (scheme, rule) pairs: the one named, or every built-in rule that matches."""
    from fp8lab.gates import GQ_RULES
    from fp8lab.schemes import NVFP4_RULES

    if args.scheme is not None and args.scheme not in GQ_RULES:
        raise CliError(f"unknown --scheme {args.scheme!r}; choose from {', '.join(GQ_RULES)}")
    known = [r for rules in GQ_RULES.values() for r in rules]
    if args.rule in NVFP4_RULES and args.rule not in known:
        raise CliError(
            f"--rule {args.rule} models the NVFP4 block scale only (its kernel's element path "
            f"was not read); GQ checks {', '.join(GQ_RULES['nvfp4'])}"
        )
    if args.rule is not None and args.rule not in known:
        raise CliError(f"unknown --rule {args.rule!r}; choose from {', '.join(known)}")
    if args.scheme is not None and args.rule is not None and args.rule not in GQ_RULES[args.scheme]:
        valid = ", ".join(GQ_RULES[args.scheme])
        raise CliError(f"--rule {args.rule} is not a {args.scheme} rule; choose from {valid}")
    if args.kernel and (args.scheme is None or args.rule is None):
        raise CliError("GQ with --kernel needs --scheme and --rule (what your kernel computes)")
    return [
        {"scheme": scheme, "rule": rule}
        for scheme, rules in GQ_RULES.items()
        for rule in rules
        if args.scheme in (None, scheme) and args.rule in (None, rule)
    ]


def load_scheme_kernel(spec: str, scheme: str | None = None) -> Any:
    """A GQ kernel: ``MODULE:FUNC``, or ``path/lib.so:symbol`` for ``scheme`` through the C ABI.

    A library's symbol has ``fp8lab_scheme_quant``'s signature
    (``fp8lab_nvfp4_quant``'s for nvfp4); the scheme fixes its scales' layout.

    Raises:
        CliError: for a failed import, a missing library or symbol, or an object
            that is not callable.
    """
    from fp8lab.kernels.shared import is_shared_spec, load_shared, split_shared_spec

    if is_shared_spec(spec):
        if scheme is None:
            raise CliError(f"--kernel {spec}: a library needs --scheme (its scales' layout)")
        try:
            path, symbol = split_shared_spec(spec)
            return load_shared(path, symbol, "scheme", scheme=scheme)
        except ValueError as exc:
            raise CliError(f"--kernel: {exc}") from None
    return load_callable(spec)
