"""The equivalence re-check: probes, the exhaustive sweep, and what each re-check records."""

from __future__ import annotations

import numpy as np
import pytest

from fp8lab.mutants import equivalence_sweep
from fp8lab.mutants.equivalence import recheck_equivalents
from fp8lab.mutants.probes import chunk_order, encoder_probes
from fp8lab.mutants.runner import Equivalent, load_equivalents

_HIDDEN = 0x3F00_1235  # 0.5 plus 0x1235 ulps: no probe lands on it


@pytest.mark.slow
def test_every_justified_entry_passes_the_probe_screen_and_says_it_is_a_screen() -> None:
    checks = recheck_equivalents(load_equivalents(), exhaustive=False)
    assert all(c.equivalent for c in checks.values()), [c for c in checks.values()]
    assert all("no proof" in c.means and c.examined > 100_000 for c in checks.values())


def test_a_stale_entry_is_rejected_not_raised() -> None:
    key = "fp8lab.kernels.f32tofp8:swap_strict_compare:2"
    stale = Equivalent(key, "a >= 1", "a > 1", "old text")
    (check,) = recheck_equivalents({key: stale}, exhaustive=False).values()
    assert not check.equivalent and "stale" in check.detail


def test_the_sweep_finds_a_difference_the_probes_miss(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _HIDDEN not in encoder_probes().view(np.uint32)

    def good(x: np.ndarray) -> np.ndarray:
        return np.zeros(x.shape, np.uint8)

    def bad(x: np.ndarray) -> np.ndarray:
        return (x.view(np.uint32) == _HIDDEN).astype(np.uint8)

    class K:
        def __init__(self, f: object) -> None:
            self.name, self.encoder = "k", f

    monkeypatch.setattr(equivalence_sweep, "_pair", lambda key: ({"k": K(good)}, {"k": K(bad)}))
    target = equivalence_sweep._Target("m:op:0", "k", "encoder", 1.0)
    miss, probed = equivalence_sweep._probe(target)
    assert miss == "" and probed == encoder_probes().size
    examined = {"m:op:0": 0}
    found = equivalence_sweep._sweep([target], 1, None, examined)
    assert "0x3f001235" in found[target]
    assert 0 < examined["m:op:0"] < 1 << 32  # it stopped early


def test_chunk_order_covers_every_pattern_once_nearest_the_range_first() -> None:
    bounds = chunk_order(1 << 22)
    assert sorted(bounds) == [(lo, lo + (1 << 22)) for lo in range(0, 1 << 32, 1 << 22)]
    first = np.array([bounds[0][0]], np.uint32).view(np.float32)[0]
    assert 2.0**-10 < abs(first) < 448.0


def test_the_compiled_sweep_finds_a_port_mutant_differing_on_one_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ast
    import copy

    from fp8lab.kernels import f32tofp8_twin as twin
    from fp8lab.mutants.runner import SOURCE_MODULES
    from fp8lab.mutants.source import compile_module

    key = "fp8lab.kernels.f32tofp8:planted:0"
    hidden = np.array([_HIDDEN], np.uint32).view(np.float32)[0]
    original_tree = twin.port_tree()
    tree = copy.deepcopy(original_tree)
    steps = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_steps")
    steps.body[:0] = ast.parse(f"settle(flat == np.float32({float(hidden)!r}), 0x01)").body
    original = compile_module(copy.deepcopy(original_tree), "planted_original")
    assert twin.attach_twin(original, original_tree)
    mutant = compile_module(copy.deepcopy(tree), "planted_mutant")
    checker = twin.twin_checker(mutant, tree)
    assert checker is not None
    answers: list[int] = []

    def counted(x: np.ndarray, want: np.ndarray) -> int:
        answers.append(int(checker(x, want)))
        return answers[-1]

    build = SOURCE_MODULES["fp8lab.kernels.f32tofp8"][1]
    sides = ({"f32tofp8": build(original)}, {"f32tofp8": build(mutant)}, counted, None)
    monkeypatch.setattr(equivalence_sweep, "_sides", lambda k: sides)
    target = equivalence_sweep._Target(key, "f32tofp8", "encoder", 1.0)
    miss, _ = equivalence_sweep._probe(target)
    assert miss == ""
    examined = {key: 0}
    found = equivalence_sweep._sweep([target], 1, None, examined)
    assert "0x3f001235" in found[target] and "gives 0x01, original 0x30" in found[target]
    assert any(a >= 0 for a in answers) and answers.count(-1) >= 1  # the compiled path ran
    assert 0 < examined[key] < 1 << 32


def test_the_shared_port_pass_finds_a_mutant_differing_on_one_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ast
    import copy

    from fp8lab.kernels import f32tofp8_twin as twin
    from fp8lab.mutants.runner import SOURCE_MODULES
    from fp8lab.mutants.source import compile_module

    hidden = np.array([_HIDDEN], np.uint32).view(np.float32)[0]
    original_tree = twin.port_tree()
    original = compile_module(copy.deepcopy(original_tree), "shared_original")
    assert twin.attach_twin(original, original_tree)
    build = SOURCE_MODULES["fp8lab.kernels.f32tofp8"][1]
    sides = {}
    for key, extra in (
        ("fp8lab.kernels.f32tofp8:planted:1", f"settle(flat == np.float32({float(hidden)!r}), 1)"),
        ("fp8lab.kernels.f32tofp8:planted:2", "settle(flat != flat, 0x7F)"),  # changes nothing
    ):
        tree = copy.deepcopy(original_tree)
        steps = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_steps")
        steps.body[-1:-1] = ast.parse(extra).body  # just before the last step
        mutant = compile_module(copy.deepcopy(tree), "shared_mutant")
        lane = (tree, mutant.__dict__)
        checker = twin.twin_checker(mutant, tree)
        sides[key] = ({"f32tofp8": build(original)}, {"f32tofp8": build(mutant)}, checker, lane)
    monkeypatch.setattr(equivalence_sweep, "_sides", lambda k: sides[k])
    shared: list[object] = []
    forks = equivalence_sweep._forks.__wrapped__  # type: ignore[attr-defined]
    monkeypatch.setattr(
        equivalence_sweep, "_forks", lambda keys: shared.append(keys) or forks(keys)
    )
    bounds = [(lo, lo + (1 << 22)) for lo in (0x7F80_0000, 0x0000_0000, 0x3F00_0000, 0xC000_0000)]
    monkeypatch.setattr(equivalence_sweep, "chunk_order", lambda chunk, scale: bounds)
    targets = [equivalence_sweep._Target(k, "f32tofp8", "encoder", 1.0) for k in sides]
    examined = dict.fromkeys(sides, 0)
    found = equivalence_sweep._sweep(targets, 1, None, examined)
    assert list(found) == [targets[0]] and "0x3f001235" in found[targets[0]]
    assert "gives 0x01, original 0x30" in found[targets[0]]
    assert shared and set(shared[0]) == set(sides)  # one compiled pass checked both
    assert examined[targets[1].key] == 4 << 22  # the equal one was swept to the end
