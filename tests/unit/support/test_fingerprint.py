"""finesse.support.fingerprint: stable, cheap, and the same fed whole or in pieces."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from finesse.support.fingerprint import Fingerprint, fingerprint

SCRIPTS = str(Path(__file__).resolve().parents[3] / "scripts")


def test_known_answers_crc32_then_adler32() -> None:
    # zlib.crc32(b"reply") == 0xfda8c6e0, zlib.adler32(b"reply") == 0x0674022d
    assert (fingerprint(b"reply"), fingerprint(b"")) == ("fda8c6e00674022d", "0000000000000001")
    assert fingerprint(b"reply") != fingerprint(b"reply.")


def test_fed_in_pieces_as_whole() -> None:
    pieces = Fingerprint(b"status")
    pieces.update(b"12:345")
    assert pieces.hexdigest() == fingerprint(b"status12:345")


def test_stable_across_processes() -> None:
    # No per-process salt (unlike hash()): a loop compares fingerprints across stops.
    code = (f"import sys; sys.path.insert(0, {SCRIPTS!r}); from finesse.support.fingerprint "
            "import fingerprint; print(fingerprint(b'same'))")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)}
    assert runs == {fingerprint(b"same") + "\n"}


def test_the_stop_path_does_not_import_hashlib() -> None:
    code = (f"import sys; sys.path.insert(0, {SCRIPTS!r}); import finesse.hooks.stop; "
            "print('hashlib' in sys.modules, 'finesse.loop.gate.step' in sys.modules, "
            "'finesse.hooks.statusline' in sys.modules)")
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["False", "False", "False"]
