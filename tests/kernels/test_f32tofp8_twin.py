"""The compiled twin of the F32ToFp8 port: equal to the numpy port, exact where it cannot be."""

from __future__ import annotations

import ast
import copy
import json
import types
from pathlib import Path

import numpy as np
import pytest

from fp8lab.codecs import encode
from fp8lab.kernels import f32tofp8
from fp8lab.kernels import f32tofp8_twin as twin
from fp8lab.mutants.probes import encoder_probes


def _module(tree: ast.Module) -> types.ModuleType:
    module = types.ModuleType("planted_f32tofp8")
    exec(compile(ast.fix_missing_locations(tree), "<planted>", "exec"), module.__dict__)
    return module


def _with_steps(extra: str, at: int = 0) -> ast.Module:
    tree = copy.deepcopy(twin.port_tree())
    steps = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_steps")
    steps.body[at:at] = ast.parse(extra).body
    return tree


def _chunk(lo: int, n: int = 1 << 20) -> np.ndarray:
    return (np.arange(n, dtype=np.uint32) + np.uint32(lo)).view(np.float32)


def test_the_twin_equals_the_numpy_port_on_probes_and_dense_chunks() -> None:
    fast = twin.compiled_f32_to_fp8()
    x = np.array(encoder_probes())
    assert fast(x).tobytes() == f32tofp8.f32_to_fp8(x).tobytes()
    for lo in (0x0000_0000, 0x3B80_0000, 0x43DF_F000, 0x7F7F_0000, 0xBF00_0000, 0xFFC0_0000):
        assert fast(_chunk(lo)).tobytes() == f32tofp8.f32_to_fp8(_chunk(lo)).tobytes()


def test_frexp32_is_numpys_frexp_on_every_kind_of_finite_float32() -> None:
    import numba

    @numba.njit
    def run(x: np.ndarray, frac: np.ndarray, exp: np.ndarray) -> None:  # pragma: no cover
        for i in range(x.size):
            frac[i], exp[i] = twin.frexp32(x[i])

    probes = np.array(encoder_probes())
    for x in (probes[np.isfinite(probes)], _chunk(0), _chunk(0x8000_0000), _chunk(0x3F00_0000)):
        frac, exp = np.empty(x.size, np.float32), np.empty(x.size, np.int32)
        run(x, frac, exp)
        want_frac, want_exp = np.frexp(x)
        assert frac.tobytes() == want_frac.tobytes() and np.array_equal(exp, want_exp)


def test_undetermined_lanes_are_encoded_by_the_numpy_port() -> None:
    # without steps 1-2, NaN and inf reach frexp and the int casts: numpy decides those lanes
    tree = _with_steps("pass")
    steps = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_steps")
    steps.body = [s for s in steps.body if "isnan(flat), 0x7F" not in ast.unparse(s)]
    steps.body = [s for s in steps.body if "FP8_MAX), sign" not in ast.unparse(s)]
    steps.body = [s for s in steps.body if not isinstance(s, ast.Pass)]
    numpy_side, compiled_side = _module(copy.deepcopy(tree)), _module(copy.deepcopy(tree))
    assert twin.attach_twin(compiled_side, tree)
    x = np.array(encoder_probes())
    with np.errstate(all="ignore"):
        assert compiled_side.f32_to_fp8(x).tobytes() == numpy_side.f32_to_fp8(x).tobytes()


def test_a_source_the_twin_does_not_model_keeps_numpy() -> None:
    unknown_call = _with_steps("flat = np.sin(flat)")
    assert not twin.attach_twin(_module(copy.deepcopy(unknown_call)), unknown_call)
    loop = _with_steps("for _ in range(1):\n    pass")
    assert twin.twin_checker(_module(copy.deepcopy(loop)), loop) is None
    glue = copy.deepcopy(twin.port_tree())
    block = next(
        n for n in glue.body if isinstance(n, ast.FunctionDef) and n.name == "_encode_block"
    )
    block.body.insert(0, ast.parse("flat = flat[::-1]").body[0])
    assert not twin.attach_twin(_module(copy.deepcopy(glue)), glue)
    assert not twin.same_glue(glue, twin.port_tree())


def test_the_checker_finds_a_lane_planted_on_one_input() -> None:
    hidden = np.array([0x3F00_1235], np.uint32).view(np.float32)[0]
    tree = _with_steps(f"settle(flat == np.float32({float(hidden)!r}), 0x01)")
    check = twin.twin_checker(_module(copy.deepcopy(tree)), tree)
    assert check is not None and twin.same_glue(tree, twin.port_tree())
    x = _chunk(0x3F00_0000)
    want = f32tofp8.f32_to_fp8(x)
    assert check(x, want) == 0x1235
    assert check(x[0x1236:], want[0x1236:]) == -1


def test_the_twin_is_the_fast_codec_on_a_window_of_every_stratum() -> None:
    # fp8lab prove proves the numpy port equal to the fast codec on all 2^32 (PROOF_PLAN's
    # fast vs f32tofp8, published in results/proofs; tests/evidence/test_published_proofs.py);
    # the twin, generated from the port's source, is held to it on a seeded 2^18-pattern
    # window in each 64th of the patterns (a 2^32 sweep here took ~20 s of CPU)
    fast = twin.compiled_f32_to_fp8()
    rng = np.random.default_rng(64)
    for stratum in range(64):
        lo = (stratum << 26) + int(rng.integers(0, (1 << 26) - (1 << 18)))
        x = _chunk(lo, 1 << 18)
        assert fast(x).tobytes() == encode(x, "e4m3fn", saturate=True, nan="canonical").tobytes()


def test_the_published_proofs_hold_the_port_to_the_fast_codec_on_all_2_32() -> None:
    # the record make evidence publishes (results/proofs): the 2^32 half of the window above
    root = Path(__file__).resolve().parents[2] / "results" / "proofs"
    runs = sorted(root.glob("*/exhaustive/fast-vs-f32tofp8-e4m3fn-sat-canonical.json"))
    assert runs, "no published proofs run holds the fast vs f32tofp8 proof"
    record = json.loads(runs[-1].read_text())
    assert (record["status"], record["examined"], record["mismatches"]) == ("PASS", 1 << 32, 0)


def _block_loop_line() -> int:
    import inspect

    from fp8lab.kernels import f32tofp8

    lines, first = inspect.getsourcelines(f32tofp8.f32_to_fp8)
    return first + next(i for i, t in enumerate(lines) if "for start in range(" in t)


_BLOCK_LOOP_LINE = _block_loop_line()


def _port_mutations() -> list[str]:
    from fp8lab.mutants.source import source_mutations

    return [m.key for m in source_mutations("fp8lab.kernels.f32tofp8")]


@pytest.mark.slow
@pytest.mark.parametrize("key", _port_mutations())
def test_every_port_mutant_s_twin_gives_its_numpy_codes(key: str) -> None:
    from fp8lab.mutants.source import load_mutant, mutant_tree, source_mutations

    mutation = next(m for m in source_mutations("fp8lab.kernels.f32tofp8") if m.key == key)
    if mutation.line == _BLOCK_LOOP_LINE:
        # the first block moved: f32_to_fp8's np.empty output keeps lanes no block wrote, so
        # the mutant's codes there are whatever memory held, on either side (no answer to match)
        return
    try:
        numpy_side = load_mutant(mutation)
    except Exception:  # noqa: BLE001 - a mutant that cannot be built has no twin either
        return
    tree = mutant_tree(mutation)
    compiled_side = _module(copy.deepcopy(tree))
    modelled = twin.attach_twin(compiled_side, tree)
    x = np.concatenate([np.array(encoder_probes()), _chunk(0x3C00_0000, 1 << 16)])
    with np.errstate(all="ignore"):
        try:
            want = numpy_side.f32_to_fp8(x)
        except Exception as exc:  # noqa: BLE001 - then the twin raises alike
            with pytest.raises(type(exc)):
                compiled_side.f32_to_fp8(x)
            return
        assert compiled_side.f32_to_fp8(x).tobytes() == want.tobytes(), modelled
        # the re-check scans with the checker only where the glue is the port's (same_glue)
        same = twin.same_glue(tree, twin.port_tree())
        check = twin.twin_checker(_module(copy.deepcopy(tree)), tree) if same else None
        if check is not None:  # it stops only at an undetermined lane: no code differs
            loop, _ = twin._compile(twin.lane_source(tree, compiled_side.__dict__))
            lanes = np.empty(x.size, np.int16)
            loop(x, lanes)
            stops = np.flatnonzero(lanes < 0)
            assert check(x, want) == (int(stops[0]) if stops.size else -1)
