# px: DICOM networking for scripts. `make demo` shows the main job, `make test` runs every test.
SHELL := /bin/bash
SWIFT ?= swift

.PHONY: all build stamp release install dist setup test demo bench bench-check lint format clean fuzz fuzz-smoke fuzz-seed examples docs

all: build

build: stamp
	$(SWIFT) build

# Sources/PXTools/PXBuildStamp.generated.swift (not committed): the commit `--version` reports, rewritten only
# when it changes (a plain `swift build` without it says "dev").
STAMP := Sources/PXTools/PXBuildStamp.generated.swift
stamp:
	@commit=$$(git describe --always --dirty --exclude '*' 2>/dev/null || echo dev); \
	text=$$(printf '%s\n' \
	    '// Written by the Makefile (`make stamp`), not committed: the commit px was built from.' \
	    'enum PXBuildStamp {' \
	    "    static let commit = \"$$commit\"" \
	    '}'); \
	if [ "$$(cat $(STAMP) 2>/dev/null)" != "$$text" ]; then printf '%s\n' "$$text" > $(STAMP); fi

# The one binary `make install` installs (static Swift stdlib: nothing else to install with it). Only the
# products installed are built: a whole-package build would also compile the test support targets.
# A PIE, as Debian and Ubuntu build their network daemons: px-listen and px-serve take input from the
# network, and zlib, SQLite and BoringSSL are linked into the same image, so its address stays random.
# PIE=0 links position-dependent instead, for hosts that run many short px commands: the loader then has
# none of the 88,000 relative relocations to apply at each start (0.6 to 1 ms of start-up each,
# docs/benchmarks.rst).
PIE ?= 1
release: stamp
	$(SWIFT) build -c release --static-swift-stdlib --product px $(if $(filter 0,$(PIE)),-Xlinker -no-pie)

# The multi-call `px` (stripped) into $(PREFIX)/bin, the ten commands as links to it (`px-echo ARGS` is
# `px echo ARGS`), and their bash, zsh and fish completions (swift-argument-parser writes them) into
# $(PREFIX)/share.
PREFIX ?= /usr/local
COMMANDS := px-echo px-find px-move px-get px-listen px-push px-dump px-sync px-serve px-ls
install: release
	install -d "$(DESTDIR)$(PREFIX)/bin"
	bin=$$($(SWIFT) build -c release --static-swift-stdlib --show-bin-path) && \
	    install -m 755 -s "$$bin/px" "$(DESTDIR)$(PREFIX)/bin/px"
	for c in $(COMMANDS); do ln -sf px "$(DESTDIR)$(PREFIX)/bin/$$c"; done
	install -d "$(DESTDIR)$(PREFIX)/share/bash-completion/completions" \
	    "$(DESTDIR)$(PREFIX)/share/zsh/site-functions" "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d"
	for c in $(COMMANDS); do \
	    "$(DESTDIR)$(PREFIX)/bin/$$c" --generate-completion-script bash \
	        > "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$c" && \
	    "$(DESTDIR)$(PREFIX)/bin/$$c" --generate-completion-script zsh \
	        > "$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_$$c" && \
	    "$(DESTDIR)$(PREFIX)/bin/$$c" --generate-completion-script fish \
	        > "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/$$c.fish" || exit 1; \
	done

# A tarball of the installed tree (bin/ and share/) for Linux x86_64 hosts without Swift: the binary is
# static in the Swift runtime and needs only glibc.
dist:
	version=$$(sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/PXTools/PXVersion.swift) && \
	    name="px-$$version-linux-$$(uname -m)" && rm -rf ".build/dist" && \
	    $(MAKE) install DESTDIR="$(CURDIR)/.build/dist/$$name" PREFIX= && \
	    tar -C .build/dist -czf "$$name.tar.gz" "$$name" && echo "$$name.tar.gz"

# swift-format with the committed .swift-format configuration: `make lint` checks, `make format` fixes.
# The layers of docs/architecture.rst are checked too: no target uses one at or below it.
lint:
	$(SWIFT) format lint --strict --recursive --parallel Package.swift Sources Tests Fuzz/Package.swift Fuzz/Sources \
	    Examples/Package.swift Examples/Sources
	python3 scripts/check-architecture.py --swift $(SWIFT)

format:
	$(SWIFT) format format --in-place --recursive --parallel Package.swift Sources Tests Fuzz/Package.swift Fuzz/Sources \
	    Examples/Package.swift Examples/Sources

# Installs DCMTK, Orthanc and the Python test venv when they are missing (apt needs root).
setup:
	bash scripts/setup-test-env.sh

# Every test, in one pass: unit tests and the tests against real DCMTK / Orthanc / pynetdicom peers.
test: setup
	$(SWIFT) build --build-tests
	$(MAKE) examples
	$(SWIFT) test --skip-build

# The programs of Examples/ (a package of its own on this one, `.package(path: "..")`), which
# Tests/PXCommandsTests/ExamplesTests.swift runs against Orthanc: built into Examples/.build.
examples:
	$(SWIFT) build --package-path Examples

# The PX library's DocC documentation (Sources/PX/PX.docc), with swift-docc-plugin, into
# .build/plugins/Swift-DocC/outputs/PX.doccarchive.
docs:
	$(SWIFT) package generate-documentation --target PX

# The tier that needs only Swift: the suites tagged `integration` (DCMTK, Orthanc, Python, OpenSSL, zip)
# are left out (PX_TEST_TIER=fast; Swift 6.3's swift test cannot skip by tag). No setup needed.
.PHONY: test-fast
test-fast:
	$(SWIFT) build --build-tests
	PX_TEST_TIER=fast $(SWIFT) test --skip-build

# Builds px, starts an embedded default peer on free loopback ports, runs the commands, stops the peer.
# Without DCMTK (or with PX_DEMO_PEER=serve) the peer is px-serve over a folder place.
demo: setup
	if [ "$${PX_DEMO_PEER:-}" != serve ] && command -v dcmqrscp >/dev/null 2>&1; then bash scripts/demo.sh; \
	else bash scripts/demo-serve.sh; fi

# Benchmarks (release builds, static Swift stdlib: ~3 ms less start-up per process); figures go
# to stdout as JSON lines. Each script can also be run alone.
# The storing benchmarks move what they received to bench-data/trash, removed once all have run (on a
# journal-less ext4, files created within minutes of deleting thousands are slower to create).
bench: setup
	bash scripts/bench-data-layer.sh
	PX_BENCH_BACKENDS="dcmtk native" bash scripts/bench-commands.sh
	PX_BENCH_TRASH=bench-data/trash bash scripts/bench-push.sh
	PX_BENCH_TRASH=bench-data/trash bash scripts/bench-listen.sh
	bash scripts/bench-tls.sh
	PX_BENCH_TRASH=bench-data/trash bash scripts/bench-web.sh
	bash scripts/bench-web-memory.sh
	bash scripts/bench-move.sh
	bash scripts/bench-sync.sh
	bash scripts/bench-sync-zip.sh
	bash scripts/bench-index.sh
	bash scripts/bench-scale.sh
	rm -rf bench-data/trash

# libFuzzer targets (Fuzz/, a package of its own) for the PDU, data set, DICOM JSON and storage layout
# decoders: built with AddressSanitizer, each run for FUZZ_SECONDS from the committed corpus. A crash
# or a failed invariant leaves its input in Fuzz/.build/fuzz-work/TARGET/ and fails the target.
FUZZ_SECONDS ?= 60
fuzz:
	bash scripts/fuzz.sh build
	bash scripts/fuzz.sh run $(FUZZ_SECONDS)

# What CI runs after `make test`: 30 s per target.
# The benchmark gate (docs/benchmarks.rst, "Benchmark gate"): px side by side with its anchors, ratios
# against the committed budgets, memory at two sizes. PX_BENCH_BIN=PATH checks that px (no build).
bench-check: setup
	bash scripts/bench-check.sh

fuzz-smoke:
	bash scripts/fuzz.sh build
	bash scripts/fuzz.sh run 30

# Regenerates the seed corpus (pydicom, pynetdicom and the tests' PDU vectors) and minimises it.
fuzz-seed: setup
	bash scripts/fuzz.sh build
	bash scripts/fuzz.sh seed

clean:
	rm -rf .build Fuzz/.build Examples/.build bench-data demo-data
