"""Must fail mypy: a misspelled report key and a wrong type, so the typed-usage
check can fail (bindings/python/test.sh runs mypy on this file and expects
both errors)."""

import turnfit

conversation, report = turnfit.fit([{"role": "user", "content": "hi"}], model="gpt-4o", max_tokens=100)
after: int = report["tokens_afterr"]
strategy: int = report["strategy"]
