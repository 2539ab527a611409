import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tiktoken_offline  # noqa: E402

tiktoken_offline.setup()
