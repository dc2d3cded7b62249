"""The home's receipt keyring: Ed25519 keys that sign disclosure receipts, kept in
``<key_dir>/receipts/`` (beside the audit chain's key, never the same key: rotating one does not
touch the other).

One key is current (``current``, a file naming its id); each key is ``<id>.ed25519`` (the private
half, PKCS#8 PEM, owner-only) and ``<id>.pub`` (the raw public key, hex). ``rotate`` makes a new
current key and destroys the private half of the old one; every public half stays, so a receipt
signed before a rotation still verifies. ``issuer`` is the home's name in its receipts, a random
id made with the first key.
"""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path
from typing import Callable

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..errors import HomeUnusable
from .home_key import key_id_of, public_hex, read_private, write_private

RECEIPTS_DIR = "receipts"
CURRENT_FILE = "current"
ISSUER_FILE = "issuer"


def verify_with(public_hex: str, message: bytes, signature: str) -> bool:
    """Does ``signature`` (hex) verify ``message`` under this raw Ed25519 public key (hex)?"""
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_hex)).verify(bytes.fromhex(signature), message)
    except (InvalidSignature, ValueError):
        return False
    return True


def read_public_keys(folder: Path) -> dict[str, str]:
    """Every ``<id>.pub`` in a folder (a keyring, or a copy of its public halves), by key id."""
    out = {}
    for path in sorted(Path(folder).glob("*.pub")):
        out[path.stem] = path.read_text(encoding="ascii").strip()
    return out


class FileKeyring:
    """``ReceiptKeyring`` over a folder. Nothing is made until the first receipt is signed."""

    def __init__(self, key_dir: Path, *, read_only: bool = False) -> None:
        self.folder = Path(key_dir) / RECEIPTS_DIR
        self.read_only = read_only
        self._lock = threading.Lock()
        self._signing = threading.Lock()
        self._signer: tuple[str, Ed25519PrivateKey] | None = None

    @property
    def issuer(self) -> str:
        path = self.folder / ISSUER_FILE
        if not path.exists():
            with self._lock:
                if not path.exists():
                    self._write(path, "home-" + secrets.token_hex(8) + "\n")
        return self._read(path)

    def current(self) -> str:
        return self._current()[0]

    def _current(self) -> tuple[str, Ed25519PrivateKey]:
        # The pointer is read on every signature: a rotation by another process (``memcore receipt
        # rotate`` beside a running service) is taken up at once, never signed past.
        with self._lock:
            pointer = self.folder / CURRENT_FILE
            key_id = self._read(pointer) if pointer.exists() else None
            if key_id is None:
                self._signer = self._make()
            elif self._signer is None or self._signer[0] != key_id:
                self._signer = (key_id, self._load_private(key_id))
            return self._signer

    def sign(self, message_for: Callable[[str], bytes]) -> tuple[str, str]:
        with self._signing:  # the key a message names is the key that signs it, rotation or not
            key_id, private = self._current()
            return key_id, private.sign(message_for(key_id)).hex()

    def verify(self, key_id: str, message: bytes, signature: str) -> bool | None:
        public = self.public_keys().get(key_id)
        return None if public is None else verify_with(public, message, signature)

    def public_keys(self) -> dict[str, str]:
        return read_public_keys(self.folder) if self.folder.exists() else {}

    def rotate(self) -> str:
        with self._signing, self._lock:
            pointer = self.folder / CURRENT_FILE
            old = self._read(pointer) if pointer.exists() else None
            self._signer = self._make()
            if old is not None:
                (self.folder / f"{old}.ed25519").unlink(missing_ok=True)  # retired: it never signs again
            return self._signer[0]

    def _make(self) -> tuple[str, Ed25519PrivateKey]:
        if self.read_only:
            raise HomeUnusable("this memory was opened read-only: it cannot make a receipt key", reason="read_only")
        secret = Ed25519PrivateKey.generate()
        key_id = key_id_of(secret.public_key())
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            write_private(self.folder / f"{key_id}.ed25519", secret)
            self._write(self.folder / f"{key_id}.pub", public_hex(secret.public_key()) + "\n")
            self._write(self.folder / CURRENT_FILE, key_id + "\n")
        except OSError as exc:
            raise HomeUnusable(
                f"cannot write a receipt key to {self.folder}: {exc.strerror or exc}", reason="key_dir"
            ) from None
        return key_id, secret

    def _load_private(self, key_id: str) -> Ed25519PrivateKey:
        return read_private(self.folder / f"{key_id}.ed25519")

    def _write(self, path: Path, content: str) -> None:
        if self.read_only:
            raise HomeUnusable("this memory was opened read-only: it cannot write its receipt keyring")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_text(content, encoding="ascii")
            os.replace(tmp, path)  # a reader sees the old file or the new one, never half of one
        except OSError as exc:
            raise HomeUnusable(f"cannot write {path}: {exc.strerror or exc}", reason="key_dir") from None

    @staticmethod
    def _read(path: Path) -> str:
        try:
            return path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise HomeUnusable(f"cannot read {path}: {exc}", reason="key_dir") from None
