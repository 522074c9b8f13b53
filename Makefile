# Cabinet: `make demo` runs the example, `make test` runs every test.
# Both install what a fresh Debian machine lacks first.

SWIFT ?= swift
APT_PACKAGES := libtokyocabinet-dev zlib1g-dev tokyocabinet-bin libsqlite3-dev libhiredis-dev redis-server redis-tools

.PHONY: all deps service-deps build tools install package-graph public-api docs demo test asan tsan torture crashpoints fuzz fuzz-files fuzz-decoders fuzz-redis speedtest speedtest-quick speedtest-10m speedtest-redis service-smoke service-test service-bench clean

all: build

# Installs Tokyo Cabinet through apt-get when root; otherwise says what to run.
deps:
	@Tools/apt-install.sh Cabinet $(APT_PACKAGES)

build: deps
	$(SWIFT) build

# The tools are a package of their own (Tools/: the `cabinet` command, the speed
# test, GRDB and the argument parser), so the library's users fetch none of them.
# The speed test's classes use @StoredModel, so the tools build swift-syntax too.
TOOLS := --package-path Tools
tools: deps
	$(SWIFT) build $(TOOLS) --product cabinet

# The @StoredModel macro is a package of its own too (Model/: swift-syntax), so
# only the apps that use it build swift-syntax.
MODEL := --package-path Model

# Installs the `cabinet` command: make install PREFIX=/usr/local (the default).
PREFIX ?= /usr/local
install: deps
	$(SWIFT) build -c release $(TOOLS) --product cabinet
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -m 755 "$$($(SWIFT) build -c release $(TOOLS) --show-bin-path)/cabinet" "$(DESTDIR)$(PREFIX)/bin/cabinet"

# A package that depends on the Cabinet library fetches swift-log and nothing else.
package-graph:
	Tools/check-package-graph.sh

# `import Cabinet` shows an app the object API and not the storage layer's own
# types, which a backend's author imports from CabinetStorage (docs/PUBLIC-API.md):
# snippets typechecked against the built modules. `make test` runs it after building.
public-api: deps
	$(SWIFT) build
	SWIFT=$(SWIFT) Tools/check-public-api.sh

# The documentation of Cabinet, CabinetStorage and CabinetRedis as one static
# site in .build-docs/site, built by the toolchain's docc with warnings as errors,
# and failing if a public symbol is in no topic group (Tools/check-docs-coverage.sh,
# with jq). Serve it: python3 -m http.server --directory .build-docs/site 8000,
# then open http://localhost:8000/documentation/cabinet.
DOCS_APT_PACKAGES := jq
docs: deps
	@Tools/apt-install.sh "make docs" $(DOCS_APT_PACKAGES)
	SWIFT=$(SWIFT) Tools/build-docs.sh

# The README's example uses @StoredModel, so it is built in Model/, and in debug: an
# optimized swift-syntax takes about 20 minutes to build here, and the example needs no speed.
demo: deps
	$(SWIFT) build -c release --product playlists
	$(SWIFT) build $(MODEL) --product ReadmeExample
	$(SWIFT) build -c release --product Versioning
	$(SWIFT) build -c release --product PoolExample
	$(SWIFT) build -c release --product QueriesExample
	$(SWIFT) build -c release --product LiveDataExample
	$(SWIFT) build -c release --product RedisExample
	@Examples/Playlists/demo.sh "$$($(SWIFT) build -c release --show-bin-path)" "$$($(SWIFT) build $(MODEL) --show-bin-path)"

# Every test is a Swift Testing one: XCTest's runner, which would report "Executed
# 0 tests" first, is left out.
test: deps package-graph docs
	$(SWIFT) build $(TOOLS) --build-tests
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) Tools/check-public-api.sh
	$(SWIFT) test --disable-xctest
	$(SWIFT) test $(TOOLS) --skip-build --disable-xctest
	$(SWIFT) build $(MODEL) --build-tests
	$(SWIFT) test $(MODEL) --skip-build --disable-xctest

# The whole suite under AddressSanitizer (use after free, double free, overflow),
# helpers included, in a scratch path of its own. LeakSanitizer runs too; the
# suppressions file names the one leak it allows (XCTest's runner, at exit).
# The `cabinet` command the tests run is built with the same sanitizer, in the
# tools' package (the kill-point shim, built with it, is preloaded into it).
ASAN_SCRATCH ?= .build-asan
asan: deps
	@bash -c 'set -o pipefail; $(SWIFT) build --build-tests --sanitize=address --scratch-path $(ASAN_SCRATCH) 2>&1 | grep -v "Cannot export local symbol .__asan"'
	@bash -c 'set -o pipefail; $(SWIFT) build $(TOOLS) --product cabinet --sanitize=address --scratch-path Tools/$(ASAN_SCRATCH) 2>&1 | grep -v "Cannot export local symbol .__asan"'
	CABINET_SANITIZED=1 LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/lsan-suppressions.txt \
	  CABINET_TOOL="$$($(SWIFT) build $(TOOLS) --sanitize=address --scratch-path Tools/$(ASAN_SCRATCH) --show-bin-path)/cabinet" \
	  $(SWIFT) test --disable-xctest --sanitize=address --scratch-path $(ASAN_SCRATCH)

# The whole suite under ThreadSanitizer (data races), in a scratch path of its own.
TSAN_SCRATCH ?= .build-tsan
tsan: deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path $(TSAN_SCRATCH)
	$(SWIFT) build $(TOOLS) --product cabinet --sanitize=thread --scratch-path Tools/$(TSAN_SCRATCH)
	CABINET_SANITIZED=1 CABINET_TOOL="$$($(SWIFT) build $(TOOLS) --sanitize=thread --scratch-path Tools/$(TSAN_SCRATCH) --show-bin-path)/cabinet" \
	  $(SWIFT) test --disable-xctest --sanitize=thread --scratch-path $(TSAN_SCRATCH)

# 1,000 SIGKILLs of a process saving across three files (make test runs 100).
torture: deps
	$(SWIFT) build --build-tests
	CABINET_TORTURE_ROUNDS=1000 $(SWIFT) test --filter CrashTortureTests

# Every operation that writes, killed before each of its file-changing system
# calls and failed at each of them (make test runs a subset); docs/CRASHPOINTS.md.
crashpoints: deps tools
	$(SWIFT) build --build-tests
	CABINET_KILLPOINTS=all $(SWIFT) test --filter KillPointTests

# libFuzzer with AddressSanitizer over the decoders (records, metadata rows, index
# row records and posting blocks, journals) for FUZZ_SECONDS (default 60). Built
# with swiftc into one module with the library's sources (swift-log's Logging and
# the C of CTokyoCabinetYields beside it); findings go to .build-fuzz/.
FUZZ_SECONDS ?= 60
fuzz: fuzz-decoders fuzz-files

# The hostile-file campaign (Tests/Helpers/HostileFiles): FUZZ_ROUNDS rounds per
# file of a checksummed store (default 3,000), each damaging one file and reading
# everything from the copy in a child process; exits 1 on a crash, a hang, an
# error that is not a CabinetError, or an answer that differs without an error.
# Optimized but with a debug build's checks (-assert-config Debug: assertions and
# unsafeDowncast's check stay), in a scratch path of its own: 27,000 debug
# rounds take hours here. docs/FUZZING.md has the last run's counts.
FUZZ_ROUNDS ?= 3000
FUZZ_SEED ?= 1
FUZZ_FILES_BUILD = $(SWIFT) build -c release -Xswiftc -assert-config -Xswiftc Debug --scratch-path .build-fuzz-files
fuzz-files: deps
	$(FUZZ_FILES_BUILD) --product cabinet-hostile-files
	"$$($(FUZZ_FILES_BUILD) --show-bin-path)/cabinet-hostile-files" campaign --rounds $(FUZZ_ROUNDS) --seed $(FUZZ_SEED)

fuzz-decoders: deps
	mkdir -p .build-fuzz/corpus .build-fuzz/modules
	$(SWIFT) package resolve
	swiftc -c -wmo -sanitize=fuzzer,address -parse-as-library -O -module-name Logging -package-name swift_log \
	  -emit-module -emit-module-path .build-fuzz/modules/Logging.swiftmodule \
	  $$(find .build/checkouts/swift-log/Sources/Logging -name '*.swift') -o .build-fuzz/Logging.o
	clang -c -O2 -fsanitize=fuzzer-no-link,address -I Sources/CTokyoCabinetYields/include \
	  Sources/CTokyoCabinetYields/TokyoCabinetYields.c -o .build-fuzz/TokyoCabinetYields.o
	swiftc -c -wmo -sanitize=fuzzer,address -parse-as-library -O -module-name CabinetStorage -package-name cabinet \
	  -I Sources/CTokyoCabinet -I Sources/CTokyoCabinetYields/include -emit-module -emit-module-path .build-fuzz/modules/CabinetStorage.swiftmodule \
	  $$(find Sources/CabinetStorage -name '*.swift') -o .build-fuzz/CabinetStorage.o
	swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name Cabinet -package-name cabinet \
	  -I .build-fuzz/modules -I Sources/CTokyoCabinet -I Sources/CTokyoCabinetYields/include \
	  $$(find Sources/Cabinet -name '*.swift') Fuzz/FuzzDecoders.swift .build-fuzz/CabinetStorage.o .build-fuzz/TokyoCabinetYields.o \
	  .build-fuzz/Logging.o -ltokyocabinet -ldl \
	  -o .build-fuzz/fuzz-decoders 2>&1 | grep -v "Cannot export local symbol '__asan" || true
	cd .build-fuzz && ./fuzz-decoders corpus -max_total_time=$(FUZZ_SECONDS) -max_len=512
	$(MAKE) fuzz-redis

# libFuzzer over CabinetRedis's reading of a server's replies (hiredis's reader,
# each command's checks, a save's outcome, a scan's bound, the log's entries),
# built into the CabinetRedis module beside the CabinetStorage that `fuzz` built
# (which runs this after its own); seeds in Fuzz/corpus-redis.
fuzz-redis:
	@test -f .build-fuzz/CabinetStorage.o || { echo "make fuzz builds CabinetStorage for the fuzzers (and then runs this)"; exit 1; }
	mkdir -p .build-fuzz/corpus-redis
	swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name CabinetRedis -package-name cabinet \
	  -I .build-fuzz/modules -I Sources/CTokyoCabinet -I Sources/CTokyoCabinetYields/include -I Sources/CHiredis \
	  $$(find Sources/CabinetRedis -name '*.swift') Fuzz/FuzzRedisReplies.swift .build-fuzz/CabinetStorage.o \
	  .build-fuzz/TokyoCabinetYields.o -ltokyocabinet -lhiredis -ldl \
	  -o .build-fuzz/fuzz-redis-replies 2>&1 | grep -v "Cannot export local symbol '__asan" || true
	cd .build-fuzz && ./fuzz-redis-replies corpus-redis ../Fuzz/corpus-redis -max_total_time=$(FUZZ_SECONDS) -max_len=512

# The full comparison at BNRPersistence's sizes (several minutes); see BENCHMARKS.md.
# Each run also draws its chart (SPEEDTEST_CHART=, empty, draws none): the full
# run's is the README's picture; the others go to Tools/.build, so a quick run
# never replaces it.
SPEEDTEST_CHART ?= docs/speedtest.svg
SPEEDTEST_QUICK_CHART ?= Tools/.build/speedtest-quick.svg
SPEEDTEST_10M_CHART ?= Tools/.build/speedtest-10m.svg
SPEEDTEST_REDIS_CHART ?= Tools/.build/speedtest-redis.svg
chart = $(if $(1),--chart "$(1)")
speedtest: deps
	$(SWIFT) build -c release $(TOOLS) --product speedtest
	"$$($(SWIFT) build -c release $(TOOLS) --show-bin-path)/speedtest" $(call chart,$(SPEEDTEST_CHART))

speedtest-quick: deps
	$(SWIFT) build -c release $(TOOLS) --product speedtest
	"$$($(SWIFT) build -c release $(TOOLS) --show-bin-path)/speedtest" --quick $(call chart,$(SPEEDTEST_QUICK_CHART))

# Linear growth: 10M songs against the 1M run, and enumerate's memory at 10M.
speedtest-10m: deps
	$(SWIFT) build -c release $(TOOLS) --product speedtest
	"$$($(SWIFT) build -c release $(TOOLS) --show-bin-path)/speedtest" --repeat 1 --engines cabinet tc-raw \
	  --workloads simple-insert simple-fetch simple-enumerate --songs 10000000 $(call chart,$(SPEEDTEST_10M_CHART))

# Cabinet on a Redis server against the raw hiredis floor (issue 11; BENCHMARKS.md,
# "On a Redis server"); the run starts its own redis-server on a loopback port.
speedtest-redis: deps
	$(SWIFT) build -c release $(TOOLS) --product speedtest
	"$$($(SWIFT) build -c release $(TOOLS) --show-bin-path)/speedtest" --engines cabinet tc-raw cabinet-redis redis-raw redis-per-object \
	  --workloads simple-insert simple-fetch simple-enumerate simple-update complex-insert complex-fetch complex-faults named-buffer \
	  $(call chart,$(SPEEDTEST_REDIS_CHART))

# The notes service (Examples/NotesService, its own package: Hummingbird is built
# only here, never by `make test`). service-smoke curls every route of both
# services; service-test runs the package's tests (the live route, driven with
# async-http-client); service-bench loads them with wrk against each other (BENCHMARKS.md).
SERVICE_APT_PACKAGES := wrk curl python3
service-deps: deps
	@Tools/apt-install.sh "The service targets" $(SERVICE_APT_PACKAGES)

service-smoke: service-deps
	Tools/service-smoke.sh

service-test: deps
	$(SWIFT) test --package-path Examples/NotesService

service-bench: service-deps
	Tools/service-bench.sh

clean:
	rm -rf .build .build-asan .build-tsan .build-docs .build-fuzz-files Tools/.build Tools/.build-asan Tools/.build-tsan Examples/NotesService/.build
