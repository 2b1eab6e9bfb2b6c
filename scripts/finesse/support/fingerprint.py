"""Cheap, stable fingerprints: 16 hex digits from zlib's CRC-32 and Adler-32 of the bytes.

They tell one reply, one failure's output or one state of the work tree from the next stop's,
within one loop; they are no protection against anyone. `hashlib` would do as well, but
importing it (OpenSSL) costs the Stop hook about 3 ms on every stop, a sixth of a bare
interpreter's start; zlib is built in.
"""

from __future__ import annotations

import zlib


class Fingerprint:
    """Fed in pieces, like a hashlib object: `update(bytes)`, then `hexdigest()`."""

    def __init__(self, data: bytes = b"") -> None:
        self._crc = 0
        self._adler = 1
        self.update(data)

    def update(self, data: bytes) -> None:
        self._crc = zlib.crc32(data, self._crc)
        self._adler = zlib.adler32(data, self._adler)

    def hexdigest(self) -> str:
        return f"{self._crc:08x}{self._adler:08x}"


def fingerprint(data: bytes) -> str:
    return Fingerprint(data).hexdigest()
