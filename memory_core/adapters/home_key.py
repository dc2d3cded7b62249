"""The home's Ed25519 key: it signs the audit chain's head (and, later, disclosure receipts).

Kept as two files in a key directory (``<home>/keys`` unless the caller names another):
``home.ed25519`` (the private key, PKCS#8 PEM, readable by its owner only) and
``home.ed25519.pub`` (the public key, raw, hex). A signature proves that the holder of the private
key wrote what it signs; keep the key directory away from whoever may write the home's files, or
the signature proves nothing against them (``docs/audit.md``).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..errors import HomeUnusable, StoreCorrupted

PRIVATE_FILE = "home.ed25519"
PUBLIC_FILE = "home.ed25519.pub"


def read_private(path: Path) -> Ed25519PrivateKey:
    """The Ed25519 private key in a PKCS#8 PEM file, or the typed refusal."""
    try:
        secret = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except OSError as exc:
        raise HomeUnusable(f"cannot read {path}: {exc.strerror or exc}", reason="key_dir") from None
    except ValueError as exc:
        raise StoreCorrupted(f"{path} is not a readable private key: {exc}") from None
    if not isinstance(secret, Ed25519PrivateKey):
        raise StoreCorrupted(f"{path} is not an Ed25519 private key")
    return secret


def write_private(path: Path, secret: Ed25519PrivateKey) -> None:
    """Write a new private key file, readable by its owner only (never over an existing one)."""
    pem = secret.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(pem)


def public_hex(public: Ed25519PublicKey) -> str:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def key_id_of(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


@dataclass(frozen=True)
class HomeKey:
    """A public key, and the private key when this process may sign."""

    public: Ed25519PublicKey
    private: Ed25519PrivateKey | None = None

    @property
    def key_id(self) -> str:
        return key_id_of(self.public)

    @property
    def can_sign(self) -> bool:
        return self.private is not None

    def sign(self, message: bytes) -> str:
        if self.private is None:
            raise StoreCorrupted("this home's private key is not loaded: it cannot sign")
        return self.private.sign(message).hex()

    def verify(self, message: bytes, signature: str) -> bool:
        try:
            self.public.verify(bytes.fromhex(signature), message)
        except (InvalidSignature, ValueError):
            return False
        return True

    @classmethod
    def load(cls, key_dir: Path, *, private: bool) -> HomeKey | None:
        """The key in ``key_dir`` (None when there is none); ``private``: load the signing half too."""
        public_path, private_path = key_dir / PUBLIC_FILE, key_dir / PRIVATE_FILE
        if private and private_path.exists():
            secret = read_private(private_path)
            return cls(secret.public_key(), secret)
        if public_path.exists():
            try:
                raw = bytes.fromhex(public_path.read_text().strip())
                return cls(Ed25519PublicKey.from_public_bytes(raw))
            except OSError as exc:
                raise HomeUnusable(f"cannot read {public_path}: {exc.strerror or exc}", reason="key_dir") from None
            except (ValueError, UnicodeDecodeError) as exc:
                raise StoreCorrupted(f"{public_path} is not a readable public key: {exc}") from None
        return None

    @classmethod
    def create(cls, key_dir: Path) -> HomeKey:
        """A new key, written to ``key_dir`` (the private half readable by its owner only)."""
        secret = Ed25519PrivateKey.generate()
        try:
            key_dir.mkdir(parents=True, exist_ok=True)
            write_private(key_dir / PRIVATE_FILE, secret)
            (key_dir / PUBLIC_FILE).write_text(public_hex(secret.public_key()) + "\n")
        except OSError as exc:
            raise HomeUnusable(
                f"cannot write the home's signing key to {key_dir}: {exc.strerror or exc}", reason="key_dir"
            ) from None
        return cls(secret.public_key(), secret)
