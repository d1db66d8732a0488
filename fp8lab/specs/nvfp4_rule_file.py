"""NVFP4 rules as rule files: ``[[rule]]`` tables whose keys are the fields of an NVFP4 rule.

An NVFP4 rule file has the form of a scale-rule file (:mod:`fp8lab.specs.scale_rules`),
one ``[[rule]]`` table per rule, with the keys of
:class:`~fp8lab.specs.nvfp4_rules.Nvfp4ScaleRule`: ``order`` (the key that
marks it), ``clamp_block``, ``block``, ``element_source``, ``inverse``,
``tensor_scale``, ``block_bounds`` (``[lo, hi]``, or left out for none),
``amax_nan`` and ``nan_code``. :func:`read_any_rule_file` reads either kind.
"""

from __future__ import annotations

from pathlib import Path

from fp8lab.specs.nvfp4_rules import Nvfp4ScaleRule
from fp8lab.specs.rule_file import parse_tables, read_rule_text, rule_tables, tables_text
from fp8lab.specs.scale_rules import ScaleRule, parse_rules

__all__ = ["nvfp4_rule_text", "parse_nvfp4_rules", "read_any_rule_file"]


def nvfp4_rule_text(*rules: Nvfp4ScaleRule) -> str:
    """``rules`` as a rule file: the text :func:`parse_nvfp4_rules` reads back as the same rules."""
    return tables_text(*rules)


def parse_nvfp4_rules(text: str, where: str = "rules") -> tuple[Nvfp4ScaleRule, ...]:
    """The NVFP4 rules of a rule file's text (:mod:`fp8lab.specs.rule_file`).

    Raises:
        ValueError: for text that is not TOML, no ``[[rule]]``, an unknown or
            missing key, a value of the wrong kind or not one of its axis, or a
            name given twice.
    """
    return parse_tables(Nvfp4ScaleRule, text, where)


def read_any_rule_file(
    path: str | Path, max_bytes: int = 1 << 20
) -> tuple[ScaleRule, ...] | tuple[Nvfp4ScaleRule, ...]:
    """The rules of the rule file at ``path``: NVFP4 rules if a table has ``order``, else scale.

    Raises:
        ValueError: for a file that cannot be read, is too large or not UTF-8,
            or as :func:`parse_nvfp4_rules` or :func:`~fp8lab.specs.scale_rules.parse_rules`.
    """
    text = read_rule_text(path, max_bytes)
    entries = rule_tables(text, str(path))
    if any(isinstance(e, dict) and "order" in e for e in entries):
        return parse_nvfp4_rules(text, str(path))
    return parse_rules(text, str(path))
