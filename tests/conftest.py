import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SHARED = ROOT.parent / "shared"


def spacetp_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the `spacetp` command of this interpreter's environment."""
    exe = shutil.which("spacetp", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "spacetp.cli"]
    return subprocess.run(
        [*cmd, *args], capture_output=True, text=True, cwd=cwd or ROOT, timeout=600
    )


@pytest.fixture
def cli():
    return spacetp_cli
