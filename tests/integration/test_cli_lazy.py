"""The command line imports only the subcommand it runs, so --help is cheap.

A test plants nothing here: it checks the registry that makes laziness possible
against each module's own registration, so a renamed subcommand or a changed
help line cannot drift from what ``fp8lab --help`` lists.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from fp8lab.cli.main import SUBCOMMANDS, build_parser, command_of, main

pytestmark = pytest.mark.process


def registered(module: str) -> dict[str, str | None]:
    """Name -> help of every subparser ``module.add_parser`` registers."""
    sub = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(f"fp8lab.cli.{module}").add_parser(sub)
    return {a.dest: a.help for a in sub._choices_actions}


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_the_registry_names_each_modules_own_subcommand_and_help(name: str) -> None:
    module, help_line = SUBCOMMANDS[name]
    assert registered(module) == {name: help_line}


def test_the_full_parser_and_the_lazy_one_list_the_same_subcommands() -> None:
    def names(parser: argparse.ArgumentParser) -> list[str]:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return list(sub.choices)

    assert names(build_parser()) == names(build_parser("")) == list(SUBCOMMANDS)


def test_the_command_is_the_first_word_that_is_not_an_option() -> None:
    assert command_of(["--help"]) is None
    assert command_of(["-h", "gates", "--gate", "G1"]) == "gates"


def run_isolated(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_top_level_help_imports_no_subcommand_and_no_numpy() -> None:
    out = run_isolated(
        "import sys, contextlib, io\n"
        "from fp8lab.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(['--help'])\n"
        "cmds = sorted(m for m in sys.modules if m.endswith('_cmd'))\n"
        "print(code, 'numpy' in sys.modules, cmds)\n"
    )
    assert out.split(maxsplit=2) == ["0", "False", "[]\n"]


def test_a_subcommand_loads_only_its_own_module() -> None:
    out = run_isolated(
        "import sys, contextlib, io\n"
        "from fp8lab.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(['chains', '--help'])\n"
        "print(code, sorted(m for m in sys.modules if m.endswith('_cmd')))\n"
    )
    assert out.strip() == "0 ['fp8lab.cli.chains_cmd']"


def test_an_unknown_subcommand_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "invalid choice: 'nope'" in err[0]


def test_the_package_exports_every_public_name_lazily() -> None:
    import fp8lab

    assert sorted(fp8lab.__all__) == sorted(fp8lab._HOMES)
    for name in fp8lab.__all__:
        assert getattr(fp8lab, name) is getattr(importlib.import_module(fp8lab._HOMES[name]), name)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        fp8lab.nope  # noqa: B018


def test_the_parsers_copies_equal_their_homes() -> None:
    from fp8lab.cli import names
    from fp8lab.detect import BRUTE_ENGINES, BUILTIN_PAIR_KERNELS
    from fp8lab.evidence.execute import DEFAULT_TIMEOUT, NOTEBOOKS_DIR
    from fp8lab.evidence.proofs import PLANS
    from fp8lab.gates import GF_CHAINS, GQ_RULES
    from fp8lab.gates.records import ProofStatus
    from fp8lab.kernels import NAN_POLICIES
    from fp8lab.kernels.matmul_protocol import K_MULTIPLE
    from fp8lab.order import METHODS
    from fp8lab.sweeps.encoders import BUILTIN_ENCODERS
    from fp8lab.sweeps.exhaustive import KERNEL_ERROR_EXIT
    from fp8lab.sweeps.range_run import ALL_PATTERNS

    assert names.ALL_PATTERNS == ALL_PATTERNS
    assert tuple(BUILTIN_ENCODERS) == names.BUILTIN_ENCODERS
    assert names.KERNEL_ERROR_EXIT == KERNEL_ERROR_EXIT
    assert tuple(PLANS) == names.PROOF_PLANS
    assert names.K_MULTIPLE == K_MULTIPLE
    assert tuple(METHODS) == names.ORDER_METHODS
    assert names.DEFAULT_NOTEBOOK_TIMEOUT == DEFAULT_TIMEOUT
    assert tuple(BRUTE_ENGINES) == names.BRUTE_ENGINES
    assert tuple(BUILTIN_PAIR_KERNELS) == names.BUILTIN_PAIR_KERNELS
    assert names.KERNEL_ERROR == ProofStatus.KERNEL_ERROR
    assert tuple(GF_CHAINS) == names.GF_CHAINS
    assert tuple(GQ_RULES) == names.GQ_SCHEMES
    assert tuple(NAN_POLICIES) == names.NAN_POLICIES
    assert tuple(n for n, p in NAN_POLICIES.items() if not p.to_max) == names.CODEC_NAN_POLICIES
    from fp8lab.sweeps.encoders import ANY_NAN

    assert names.ANY_NAN == ANY_NAN
    assert names.NOTEBOOKS_DIR == NOTEBOOKS_DIR


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_every_subcommand_help_loads_no_numpy(name: str) -> None:
    out = run_isolated(
        "import sys, contextlib, io\n"
        "from fp8lab.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main([{name!r}, '--help'])\n"
        "print(code, sorted(m for m in ('numpy', 'ml_dtypes', 'numba') if m in sys.modules))\n"
    )
    assert out.strip() == "0 []"


def test_reading_records_and_running_sweeps_loads_no_ml_dtypes() -> None:
    """ml_dtypes (about 0.5 s to import) loads where a bfloat16 array is first made.

    The records of every gate, fp8lab.testing, the sweeps and the detector load
    without it; a G1 run (float32 and bfloat16 cases) loads it, and the gates'
    names still resolve from the package.
    """
    out = run_isolated(
        "import sys\n"
        "import fp8lab.gates, fp8lab.testing, fp8lab.detect, fp8lab.sweeps.exhaustive\n"
        "import fp8lab.gates.g1, fp8lab.populations.g1_rules\n"
        "before = 'ml_dtypes' in sys.modules\n"
        "from fp8lab.gates import GateStatus, run_g1\n"
        "from fp8lab.kernels import BUILTIN_KERNELS\n"
        "result = run_g1(BUILTIN_KERNELS['vllm_cpp'])\n"
        "print(before, 'ml_dtypes' in sys.modules, result.status is GateStatus.PASS,\n"
        "      'run_gq' in dir(fp8lab.gates), result.cases)\n"
    )
    before, after, passed, listed, cases = out.split()
    assert (before, after, passed, listed) == ("False", "True", "True", "True"), out
    assert int(cases) > 0


def test_the_gates_package_names_what_it_has_and_refuses_the_rest() -> None:
    import fp8lab.gates as gates

    assert set(gates.__all__) <= set(dir(gates))
    assert gates.run_gq is importlib.import_module("fp8lab.gates.gq").run_gq
    with pytest.raises(AttributeError, match="no attribute 'run_g9'"):
        _ = gates.run_g9
