"""A bundle's files: inputs checked against the export, outputs read at their size.

Every file is sized before it is read, and none may be a symbolic link or
resolve outside the bundle's folder.
"""

from __future__ import annotations

from pathlib import Path

from fp8lab.bundle.cases import BundleCase, sha256

__all__ = [
    "FILE_FIELDS",
    "BundleCaseError",
    "BundleError",
    "input_fault",
    "read_output",
    "refuse_escapes",
]


class BundleError(ValueError):
    """The bundle cannot be checked by this version (a usage error)."""


class BundleCaseError(Exception):
    """One case of the bundle is broken; the message names the case and what is wrong."""


def input_fault(root: Path, case: BundleCase) -> str:
    """Why ``case``'s input files under ``root`` cannot be trusted ('' when they can).

    A file is missing, or its bytes are not the ones exported (sha256).
    """
    for field, array in case.inputs.items():
        path = root / case.entry[field]
        if not path.is_file():
            return f"{field} file {case.entry[field]} is missing"
        size = path.stat().st_size
        if size != array.nbytes:  # sized before it is read
            return f"{field} file {case.entry[field]} is {size} bytes, want {array.nbytes}"
        got, want = sha256(path.read_bytes()), sha256(array.tobytes())
        if got != want:
            return (
                f"{field} file {case.entry[field]} changed since export "
                f"(sha256 {got[:12]}..., exported {want[:12]}...)"
            )
    return ""


def read_output(root: Path, case: BundleCase, field: str, size: int) -> bytes:
    """The ``size`` bytes of the output file ``case.entry[field]`` under ``root``.

    Raises:
        BundleCaseError: naming the case when the file is missing, short or long.
    """
    rel = case.entry[field]
    path = root / rel
    if not path.is_file():
        raise BundleCaseError(f"case {case.name!r}: {field} file {rel} is missing")
    got = path.stat().st_size  # sized before it is read
    if got != size:
        how = "short" if got < size else "long"
        raise BundleCaseError(
            f"case {case.name!r}: {field} file {rel} is {how}: {got} bytes, want {size}"
        )
    data: bytes = path.read_bytes()
    return data


FILE_FIELDS = ("output", "codes", "scales")  # besides each case's input fields


def refuse_escapes(root: Path, cases: list[BundleCase]) -> None:
    """Refuse a bundle any of whose files is a symbolic link or resolves outside ``root``.

    Raises:
        BundleError: naming the first such file.
    """
    inside = root.resolve()
    for case in cases:
        for field in [*case.inputs, *(f for f in FILE_FIELDS if f in case.entry)]:
            rel = str(case.entry[field])
            path = root
            for part in Path(rel).parts:
                path = path / part
                if path.is_symlink():
                    raise BundleError(
                        f"{root}: {path.relative_to(root)} is a symbolic link; a bundle is "
                        "read only from files inside its folder"
                    )
            if not (root / rel).resolve().is_relative_to(inside):
                raise BundleError(f"{root}: {rel} resolves outside the bundle's folder")
