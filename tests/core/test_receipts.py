"""Receipts: signed over every field, refused when any byte of any field or of the signature
changes, checked offline with nothing but the public key, and still valid after a rotation."""

from __future__ import annotations

import json

import pytest

from memory_core import Memory
from memory_core.adapters.receipt_keys import FileKeyring, verify_with
from memory_core.cli import main
from memory_core.errors import HomeUnusable, InvalidInput, ReceiptInvalid, ReceiptKeyUnknown
from memory_core.substrate.receipts import FIELDS, check_receipt
from memory_core.wire import encode
from tests.remember_setup import BOB, lensed


@pytest.fixture
def issued(memory):
    _, bob, _ = lensed(memory)
    bob.set("deploy", "Fridays are frozen", memory_type="lesson")
    bob.set("build", "CI takes 12 minutes", memory_type="lesson")
    view = bob.render()
    assert len(view.receipt.disclosed) == 2
    return bob, encode(view.receipt)


def _flip(value):
    """One byte of a field changed, keeping its type."""
    if isinstance(value, bool) or value is None:
        return "x"
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value[:-1] + ("0" if value[-1] != "0" else "1")
    if isinstance(value, list) and value and isinstance(value[0], dict):
        first = dict(value[0])
        first["content_sha256"] = _flip(first["content_sha256"])
        return [first, *value[1:]]
    if isinstance(value, list):
        return [_flip(value[0]), *value[1:]] if value else ["x"]
    raise AssertionError(value)


def test_a_receipt_verifies_and_every_changed_field_is_refused(issued):
    bob, receipt = issued
    assert bob.verify_receipt(receipt).receipt_id == receipt["receipt_id"]
    assert set(receipt) == set(FIELDS)
    for field in FIELDS:
        tampered = dict(receipt, **{field: _flip(receipt[field])})
        expected = ReceiptKeyUnknown if field == "key_id" else ReceiptInvalid
        with pytest.raises(expected):
            bob.verify_receipt(tampered)
    for index in range(len(receipt["signature"])):
        sig = receipt["signature"]
        swapped = sig[:index] + ("0" if sig[index] != "0" else "1") + sig[index + 1 :]
        with pytest.raises(ReceiptInvalid):
            bob.verify_receipt(dict(receipt, signature=swapped))
    with pytest.raises(ReceiptInvalid):
        bob.verify_receipt(dict(receipt, extra="field"))


def test_a_receipt_names_no_value(issued):
    _, receipt = issued
    assert "Fridays" not in json.dumps(receipt) and "12 minutes" not in json.dumps(receipt)


def test_offline_with_the_public_key_alone(issued, memory):
    _, receipt = issued
    public = memory.session.receipts.public_keys()[receipt["key_id"]]
    assert check_receipt(receipt, lambda key_id, msg, sig: verify_with(public, msg, sig)).kind == "render"


def test_a_rotated_key_still_verifies_old_receipts(home, clock):
    with Memory.open(home, clock=clock) as memory:
        _, bob, _ = lensed(memory)
        old = encode(bob.render().receipt)
        new_key = memory.session.receipts.rotate()
        fresh = encode(bob.render().receipt)
        assert fresh["key_id"] == new_key != old["key_id"]
        assert bob.verify_receipt(old) and bob.verify_receipt(fresh)
        folder = FileKeyring(home / "keys").folder
        assert not (folder / f"{old['key_id']}.ed25519").exists()  # the retired private half is gone
    with Memory.open(home, clock=clock) as memory:  # a reopened home verifies both
        assert memory.for_run(BOB).verify_receipt(old).key_id == old["key_id"]


def test_memcore_receipt_verify_checks_a_file_offline(issued, home, tmp_path, capsys):
    _, receipt = issued
    path = tmp_path / "receipt.json"
    path.write_text(json.dumps({"receipt": receipt}))  # an answer that carries a receipt will do
    assert main(["--home", str(home), "receipt", "verify", str(path)]) == 0
    assert "verifies" in capsys.readouterr().out
    path.write_text(json.dumps(dict(receipt, consumer="agent:mallory")))
    assert main(["--home", str(home), "--json", "receipt", "verify", str(path)]) == 1
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "RECEIPT_INVALID"
    stranger = "00" * 32
    assert main(["--json", "receipt", "verify", str(path), "--public-key", stranger]) == 1
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "RECEIPT_INVALID"


def test_a_read_only_home_refuses_a_view_typed(home, clock):
    with Memory.open(home, clock=clock) as memory:
        lensed(memory)
    with Memory.open(home, read_only=True) as memory:
        with pytest.raises(InvalidInput):  # the receipt and the interaction record could not be kept
            memory.for_run(BOB).render()


def test_another_spelling_of_the_same_instant_is_refused(issued):
    bob, receipt = issued
    respelled = receipt["issued_at"].replace("+00:00", "Z")
    with pytest.raises(ReceiptInvalid):
        bob.verify_receipt(dict(receipt, issued_at=respelled))


def test_a_rotation_by_another_process_is_taken_up_at_once(home, clock):
    with Memory.open(home, clock=clock) as memory:
        _, bob, _ = lensed(memory)
        before = bob.render().receipt.key_id
        rotated = FileKeyring(home / "keys").rotate()  # as `memcore receipt rotate` beside a service
        after = bob.render().receipt
        assert after.key_id == rotated != before and bob.verify_receipt(after)


def test_a_capture_whose_receipt_cannot_be_signed_writes_nothing(home, clock):
    with Memory.open(home, clock=clock) as memory:
        _, bob, _ = lensed(memory)
        (home / "keys").mkdir(exist_ok=True)
        (home / "keys" / "receipts").write_text("not a folder")
        before = memory.store.inspection.tables()
        with pytest.raises(HomeUnusable):
            bob.capture("e", "a claim", lens_id="developer")
        assert memory.store.inspection.tables() == before
