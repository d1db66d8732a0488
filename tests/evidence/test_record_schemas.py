"""The records' JSON Schemas: published as generated, and real records validate against them.

The schemas under ``docs/schemas/`` must be what
:func:`fp8lab.evidence.schemas.record_schema` derives from the record types
today; records the commands write validate; and a record with a field of the
wrong type, a field missing or a field added does not.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fp8lab.cli.main import main
from fp8lab.evidence.schemas import RECORDS, record_schema

ROOT = Path(__file__).resolve().parents[2]


def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(record_schema(name))


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_the_published_schema_is_the_derived_one(name: str) -> None:
    published = json.loads((ROOT / "docs" / "schemas" / f"{name}.schema.json").read_text())
    assert published == record_schema(name), "regenerate: python -m fp8lab.evidence.schemas"
    jsonschema.Draft202012Validator.check_schema(published)


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("records")
    gates, exhaustive, detect = tmp / "g.json", tmp / "e.json", tmp / "d.json"
    assert main(["gates", "--gate", "G1,G3,GF", "--json", str(gates)]) == 0
    argv = ["exhaustive", "fast", "scan", "--policy", "sat", "--quiet"]
    assert main([*argv, "--stop", "0x10000", "--json", str(exhaustive)]) == 0
    argv = ["detect", "--scales", "0.5", "--method", "brute", "--stop", "0x10000", "--quiet"]
    assert main([*argv, "--json", str(detect)]) == 0
    return {
        "gate-result": json.loads(gates.read_text()),
        "exhaustive-record": [json.loads(exhaustive.read_text())],
        "exposure-record": json.loads(detect.read_text())["entries"],
    }


@pytest.mark.process
@pytest.mark.parametrize("name", sorted(RECORDS))
def test_records_the_commands_write_validate(
    records: dict[str, list[dict[str, Any]]], name: str
) -> None:
    assert records[name], "the command wrote no record: nothing was checked"
    for record in records[name]:
        _validator(name).validate(record)


@pytest.mark.process
@pytest.mark.parametrize("name", sorted(RECORDS))
def test_a_record_off_its_schema_is_invalid(
    records: dict[str, list[dict[str, Any]]], name: str
) -> None:
    good = records[name][0]
    counted = {"gate-result": "words", "exhaustive-record": "examined", "exposure-record": "count"}
    wrong_type = {**good, counted[name]: str(good[counted[name]])}  # "42", not 42
    missing = copy.deepcopy(good)
    missing.pop(sorted(missing)[0])
    extra = {**good, "verdict_from_the_kernel": "PASS"}
    for bad in (wrong_type, missing, extra):
        assert not _validator(name).is_valid(bad)
