"""The host facts the bench prints: measured here, never read off a name."""

from __future__ import annotations

from fp8lab.bench.host import _isa, _vector_bits, host_facts, host_lines


def test_the_widest_isa_is_named_from_the_flags() -> None:
    assert _isa({"sse4_2", "avx", "avx2", "avx512f"}) == "AVX-512"
    assert _isa({"sse4_2", "avx", "avx2", "fma"}) == "AVX2"
    assert _isa({"sse4_2"}) == "SSE4.2"
    assert _isa(set()) == "unknown"


def test_the_vector_width_is_read_from_the_machine_code() -> None:
    assert _vector_bits("vpaddd %ymm1, %ymm2, %ymm3\n vmovq %xmm0, (%rax)") == 256
    assert _vector_bits("vpmovdb %zmm1, %xmm2") == 512
    assert _vector_bits("addl %eax, %ebx") == 0


def test_host_facts_name_the_cpu_the_targets_and_the_versions() -> None:
    h = host_facts()
    assert h["cpu"] and h["cpus"] >= 1 and h["versions"]["numpy"]
    nb = h["numba"]
    assert not nb["absent"] and nb["cpu_name"] and nb["threads"] >= 1
    assert nb["vector_bits"] in (0, 128, 256, 512)
    printed = "\n".join(host_lines(h))
    assert "numba targets" in printed and "numpy SIMD" in printed and "load average" in printed
