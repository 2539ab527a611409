# ctxkit developer entry points. `make test` is the one test command (CI runs
# it through .ci/run); everything else is a convenience.

.PHONY: test build header demo clean

test:
	bash scripts/test.sh

build:
	cargo build --workspace

# Regenerate include/ctxkit.h after changing ffi/ (commit the result).
header:
	cargo run -q -p xtask -- header

# The README's first command.
demo:
	cargo run -q -p ctxkit-cli -- fit examples/data/coding-session.json --model gpt-4o --max-tokens 16000 --tool-output-max 2000 > fitted.json

clean:
	cargo clean
	$(MAKE) -C tests/c clean
