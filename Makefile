# turnfit developer entry points. `make test` is the one test command (CI runs
# it through .ci/run); everything else is a convenience.

.PHONY: test build header demo clean growth fuzz-smoke fuzz-long stress-long accuracy install dist dist-test dist-cross lint-workflows

test:
	bash scripts/test.sh

build:
	cargo build --workspace

# The C/C++ install step: include/turnfit.h, libturnfit.so.<ABI>.<version>
# with its SONAME links, libturnfit.a and pkg-config files (turnfit.pc,
# turnfit-static.pc) under PREFIX, from target/$(PROFILE). Builds first.
PREFIX ?= /usr/local
PROFILE ?= debug
install:
	@if [ "$(PROFILE)" = debug ]; then bash scripts/cargo-build.sh turnfit-ffi; \
	 else cargo build --locked --profile $(PROFILE) -p turnfit-ffi; fi
	PROFILE=$(PROFILE) bash scripts/install.sh "$(PREFIX)"

# Every package (wheel + sdist, npm main + platform packages, jar + POM,
# the C tree, the cabal sdist) into dist/, at the one version of Cargo.toml;
# see scripts/dist.sh. `make dist-test` installs each into an empty place.
dist:
	bash scripts/dist.sh

dist-test:
	bash scripts/dist-test.sh all

# The packages for linux aarch64 (glibc) and x86-64 musl (wheels, npm platform
# packages, C tarballs, the jar's aarch64 native, the static CLI), linked with
# Zig from PyPI, into dist/cross, ELF-checked and run under qemu-user (arm64
# CPython, Node.js, OpenJDK) or in a musl root (Bun's musl build, a CPython
# built with musl-gcc, musl's loader); not part of `make test` (a build of the
# core per target: far more than CI's time). CROSS_CHECK_ONLY=1 builds nothing
# and runs the checks again on dist/cross.
dist-cross:
	bash scripts/dist-cross.sh

# actionlint over .github/workflows (the release workflow only a hosted CI
# runs), and its native matrix against the npm main package's platforms.
lint-workflows:
	bash scripts/lint-workflows.sh

# Regenerate include/turnfit.h after changing ffi/ (commit the result).
header:
	cargo run -q -p xtask -- header

# Instruction counts at n, 2n, 4n for counting, compaction, repair and skill
# parsing under callgrind; fails if a doubling costs more than 2.3x. Also a
# suite of `make test`.
growth:
	bash scripts/growth.sh

# Every fuzz target (fuzz/) briefly, one after the other: a check that the
# targets build and run. Needs cargo-fuzz (`cargo install cargo-fuzz
# --locked`); uses ASan when a nightly toolchain is installed, else -s none.
# New units go to FUZZ_SCRATCH (default /tmp/turnfit-fuzz), never to the
# committed corpus. See docs/reliability.md, "Fuzzing".
FUZZ_SMOKE_SECONDS ?= 10
fuzz-smoke:
	FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) bash scripts/fuzz.sh

# The long campaign: an hour per target by default (8 hours in all); set
# FUZZ_SECONDS to change it, or name targets: make fuzz-long FUZZ_TARGETS=abi
FUZZ_SECONDS ?= 3600
FUZZ_TARGETS ?=
fuzz-long:
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/fuzz.sh $(FUZZ_TARGETS)

# The C ABI thread stress at its full counts (64 and 8 threads x 100,000
# calls under ASan+UBSan, 8 x 100,000 under valgrind; about 8 minutes);
# `make test` runs CI-sized counts. See docs/reliability.md, "Threads".
stress-long:
	cargo build -p turnfit-ffi
	$(MAKE) -C tests/c stress-long

# The README's first command.
demo:
	cargo run -q -p turnfit-cli -- fit examples/data/agent-loop.json --model gpt-4o --max-tokens 16000 > fitted.json

clean:
	cargo clean
	rm -rf dist
	$(MAKE) -C tests/c clean

# Regenerate docs/accuracy.md: the recorded requests in tests/fixtures/billing
# counted and compared with what the provider billed (core/tests/billing.rs).
accuracy:
	TURNFIT_WRITE_ACCURACY=1 cargo test -p turnfit --test billing
