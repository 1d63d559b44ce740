"""storage.crc: the crc32c package's C function, loaded without the package's __init__."""

from __future__ import annotations

import subprocess
import sys

from storage.crc import crc32c


def test_crc32c_check_value_and_continuation() -> None:
    assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value (RFC 3720 B.4)
    assert crc32c(b"56789", crc32c(b"1234")) == 0xE3069283
    assert crc32c(b"") == 0


def test_loaded_alone_and_shared_with_the_package() -> None:
    """In a fresh interpreter: importing storage.crc leaves importlib.metadata (what the package's
    __init__ costs) unimported, and a later `import crc32c` reuses the same extension."""
    code = (
        "import sys\n"
        "from storage.crc import crc32c\n"
        "assert 'importlib.metadata' not in sys.modules and 'crc32c' not in sys.modules\n"
        "import crc32c as package\n"
        "assert package.crc32c is crc32c, 'two copies of the extension'\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"
