# gpuplan - see README.md.  `make run` and `make test` do all set-up on Debian.
.SUFFIXES:

CC       ?= cc
BUILD    ?= build
OPT      ?= -O2 -g
SAN      ?=
WARN     ?= -Wall -Wextra -Wshadow -Wconversion -Werror
# No fused multiply-add where the source has a multiply and an add: results
# are the same, byte for byte, whatever the target's instructions (clang
# contracts by default, and -march=native offers FMA).
CFLAGS   := -std=c11 -ffp-contract=off -pthread $(OPT) $(SAN) $(WARN) -Iinclude -D_DEFAULT_SOURCE -MMD -MP
LDLIBS   := -lyaml -lsqlite3 -lgsl -lgslcblas -lm -lpthread
TESTLIBS := -lcriterion
JOBS     := $(shell nproc 2>/dev/null || echo 2)

# The command line (main.c and its main_*.c) is linked into the binary only.
CLI_SRC  := $(wildcard sim/main*.c)
CLI_OBJ  := $(CLI_SRC:sim/%.c=$(BUILD)/obj/%.o)
LIB_SRC  := $(filter-out $(CLI_SRC),$(wildcard sim/*.c))
LIB_OBJ  := $(LIB_SRC:sim/%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_OBJ := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%.o)
BENCH_SRC:= $(wildcard tests/bench/*.c)

# Debian packages behind the libraries (pkg-config name:package); the deps
# recipe also installs the sqlite3 shell and GNU parallel (sweep scripts), and
# Debian's chromium for the browser test of the HTML report; chromium is
# installed on its own and may fail (the test then skips with a message), as
# are prometheus (promtool backfills the OpenMetrics export) and slurm-wlm
# with munge (a one-node Slurm cluster runs the sweep's job-array script).
DEPS := gsl:libgsl-dev yaml-0.1:libyaml-dev sqlite3:libsqlite3-dev criterion:libcriterion-dev

.PHONY: all deps run test asan bench release fuzz fuzz-diagnosis valgrind clean format layers style
# `make all` (and `make run`) build the binary users run as the bench measures
# it: -O3 and link-time optimization for this machine, without assertions
# (FAST_OPT, below), and with profile-guided optimization where `make release`
# has left its training counts in build-release/.  `make test`, `make asan`
# and `make valgrind` build bin/gpuplan with the assertions (-O2 -g) instead.
all:
	@if ls build-release/obj/*.gcda >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory -j$(JOBS) OPT="$(PGO_USE)" BUILD=build-release bin/gpuplan; \
	else \
	  $(MAKE) --no-print-directory -j$(JOBS) OPT="$(FAST_OPT)" BUILD=build-fast bin/gpuplan; \
	fi

# Installs whatever is missing with apt-get (as root, or through sudo).
deps:
	@missing=""; \
	command -v pkg-config >/dev/null 2>&1 || missing="pkg-config"; \
	for d in $(DEPS); do \
	  pkg-config --exists "$${d%%:*}" 2>/dev/null || missing="$$missing $${d#*:}"; \
	done; \
	command -v sqlite3 >/dev/null 2>&1 || missing="$$missing sqlite3"; \
	command -v parallel >/dev/null 2>&1 || missing="$$missing parallel"; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi; \
	if ! command -v chromium >/dev/null 2>&1; then \
	  echo "deps: installing chromium (HTML report test)"; \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  { $$sudo apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq chromium >/dev/null; } || \
	  echo "deps: chromium could not be installed; the HTML browser test will skip"; \
	fi; \
	extra=""; \
	command -v promtool >/dev/null 2>&1 || extra="prometheus"; \
	command -v slurmctld >/dev/null 2>&1 || extra="$$extra slurm-wlm"; \
	command -v munged >/dev/null 2>&1 || extra="$$extra munge"; \
	if [ -n "$$extra" ]; then \
	  echo "deps: installing$$extra (Prometheus backfill and Slurm tests)"; \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  { $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq \
	    --no-install-recommends $$extra >/dev/null; } || \
	  echo "deps: $$extra could not be installed; the promtool and Slurm tests will skip"; \
	fi

# bin/gpuplan is the binary of the last build asked for (make, or make
# release): bin/flags changes with the build directory and its flags.
bin/gpuplan: $(CLI_OBJ) $(BUILD)/libgpuplan.a bin/flags
	$(CC) $(CFLAGS) -o $@ $(filter-out bin/flags,$^) $(LDLIBS)

bin/flags: FORCE
	@mkdir -p $(@D)
	@echo '$(BUILD): $(CC) $(CFLAGS)' | cmp -s - $@ 2>/dev/null || \
	  echo '$(BUILD): $(CC) $(CFLAGS)' > $@

$(BUILD)/gpuplan: $(CLI_OBJ) $(BUILD)/libgpuplan.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libgpuplan.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# A build directory's objects follow its flags: this file changes with them.
$(BUILD)/flags: FORCE
	@mkdir -p $(@D)
	@echo '$(CC) $(CFLAGS)' | cmp -s - $@ 2>/dev/null || echo '$(CC) $(CFLAGS)' > $@
FORCE:

$(BUILD)/obj/%.o: sim/%.c $(BUILD)/flags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

# Criterion's macros trip -Wconversion; tests keep every other warning.
$(BUILD)/tests/%.o: tests/%.c $(BUILD)/flags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Wno-conversion -c -o $@ $<

# One binary with every test (what `make test` runs) ...
$(BUILD)/tests/all: $(TEST_OBJ) $(BUILD)/libgpuplan.a
	$(CC) $(CFLAGS) -o $@ $^ $(TESTLIBS) $(LDLIBS)

# ... and one per module while working on it: make build/tests/test_units
$(BUILD)/tests/test_%: $(BUILD)/tests/test_%.o $(BUILD)/libgpuplan.a
	$(CC) $(CFLAGS) -o $@ $^ $(TESTLIBS) $(LDLIBS)

$(BUILD)/bench/%: tests/bench/%.c $(BUILD)/libgpuplan.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

run: deps
	@$(MAKE) --no-print-directory all
	bin/gpuplan run scenarios/quickstart.yaml --db results/quickstart.db

test: deps layers style
	@$(MAKE) --no-print-directory -j$(JOBS) bin/gpuplan $(BUILD)/tests/all
	$(BUILD)/tests/all -j$(JOBS)

# Fails when a module includes one of a higher layer, or two modules include
# each other (the layer map is the table in docs/design.md).
# The include lines against design.md's layer map, the names each object
# exports against its prefix map (so the objects are built first), and no
# metric named by a string outside sim/metric.c's table.
layers: $(LIB_OBJ) $(CLI_OBJ)
	@tests/layers.sh
	@tests/prefixes.sh $(BUILD)
	@tests/metricnames.sh

# A leak is reported by the test's worker process as it exits, which
# Criterion does not count as a failure: the report itself fails the target.
asan: deps
	@$(MAKE) --no-print-directory -j$(JOBS) BUILD=build-asan OPT="-O1 -g" \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  build-asan/tests/all
	ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=tests/lsan.supp \
	  UBSAN_OPTIONS=print_stacktrace=1 build-asan/tests/all -j$(JOBS) 2> build-asan/stderr; \
	  rc=$$?; cat build-asan/stderr >&2; \
	  if grep -q "ERROR: LeakSanitizer" build-asan/stderr; then \
	    echo "asan: a leak (reported above)" >&2; exit 1; fi; exit $$rc

# The fast build, for the bench and `make release`.  Link-time optimization
# inlines across modules (about 7% on the M/M/1); the bench runs where it is
# built, so it uses this machine's instructions (popcnt, BMI, AVX2: about 6% on
# the 10 M case); profile-guided optimization (GCC's) lays out and inlines the hot
# paths from the counts of a training run (about 20% on the M/M/1, 14% on the
# 10 M case).  None changes a result: CFLAGS contracts no floating-point
# expression, and nothing here reorders one.
FAST_OPT := -O3 -g -DNDEBUG -flto=auto -march=native
PGO_USE  := $(FAST_OPT) -fprofile-use -fprofile-partial-training -fprofile-correction \
            -Wno-missing-profile -Wno-coverage-mismatch
# Builds build directory $(1) instrumented with -fprofile-generate and trains
# it; its objects then get compiled again, with the counts the training left
# beside them.  The same directory both times: a static function's profile is
# found by a name that includes its object's path.
define pgo_train
	@$(MAKE) --no-print-directory -j$(JOBS) OPT="$(FAST_OPT) -fprofile-generate" BUILD=$(1) \
	  $(1)/gpuplan
	@rm -f $(1)/obj/*.gcda $(1)/train.db*
	@echo "pgo: training (tests/bench/pgo-train.sh)"
	@tests/bench/pgo-train.sh $(1)/gpuplan $(1)/train.db
	@rm -f $(1)/obj/*.o $(1)/train.db*
endef

# The M/M/1 benchmark runs beside SimPy: Debian's python3-simpy, installed here only.
bench: deps
	@/usr/bin/python3 -c 'import SimPy.Simulation' 2>/dev/null || { \
	  echo "bench: installing python3-simpy (the M/M/1 side by side)"; \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq python3-simpy >/dev/null || \
	  echo "bench: python3-simpy could not be installed; the SimPy run will be skipped"; }
	$(call pgo_train,build-bench)
	@$(MAKE) --no-print-directory -j$(JOBS) OPT="$(PGO_USE)" BUILD=build-bench \
	  $(BENCH_SRC:tests/bench/%.c=build-bench/bench/%) build-bench/gpuplan
	@# the build's writes flushed first: the kernel's writeback would share the two cores
	@sync
	@for b in $(BENCH_SRC:tests/bench/%.c=build-bench/bench/%); do $$b results/bench.db || exit 1; done

# bin/gpuplan built as the bench is (without assertions); `make` goes back.
release: deps
	$(call pgo_train,build-release)
	@$(MAKE) --no-print-directory -j$(JOBS) OPT="$(PGO_USE)" BUILD=build-release bin/gpuplan

# Every example scenario under valgrind: no leak, no invalid access.
valgrind: deps
	@$(MAKE) --no-print-directory -j$(JOBS) bin/gpuplan
	@for f in scenarios/*.yaml; do \
	  if grep -q '^[^#]*shared/data' $$f && [ ! -d ../shared/data ]; then \
	    echo "valgrind: skipping $$f (../shared/data is missing)"; continue; fi; \
	  echo "valgrind $$f"; \
	  valgrind -q --error-exitcode=1 --leak-check=full --show-leak-kinds=definite,indirect \
	    --errors-for-leak-kinds=definite,indirect \
	    bin/gpuplan run $$f --quiet --db build/valgrind.db || exit 1; \
	done

# The diagnosis property (tests/test_breakers.c) over more seeds than `make test`
# runs, drawing from every break, those the diagnosis does not answer yet
# included: a table of cases and failures per break; failing cases are kept in
# build/breakers/.  BREAKERS_SEEDS=N BREAKERS_FIRST=S choose the seeds.
fuzz-diagnosis: deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(BUILD)/tests/test_breakers
	@BREAKERS_ALL=$${BREAKERS_ALL:-1} BREAKERS_REPORT=1 BREAKERS_SEEDS=$${BREAKERS_SEEDS:-2000} \
	  BREAKERS_FIRST=$${BREAKERS_FIRST:-1001} $(BUILD)/tests/test_breakers -j$(JOBS) \
	  >$(BUILD)/breakers.log 2>&1; rc=$$?; \
	  awk '/^breakers shard/ {c[$$4] += $$5; f[$$4] += $$7; n += $$5; m += $$7} \
	    END {for (k in c) printf "%-14s %5d cases %5d failed\n", k, c[k], f[k]; \
	    printf "%-14s %5d cases %5d failed (details: $(BUILD)/breakers.log)\n", "all", n, m}' \
	    $(BUILD)/breakers.log | sort; exit $$rc

# Coverage-guided fuzzing of every input reader (clang's libFuzzer, with ASan and UBSan).
# Each target runs FUZZ_SECONDS from a corpus seeded by the fixtures; what it finds
# lands in build-fuzz/<target>/; keep fixed ones under tests/fixtures/fuzz/<target>/.
FUZZ_TARGETS := scenario trace_csv sweep azure openb_nodes openb_pods import history_pods kube_json prom
FUZZ_SECONDS ?= 60
fuzz: deps
	@$(MAKE) --no-print-directory -j$(JOBS) BUILD=build-fuzz CC=clang OPT="-O1 -g" WARN=-w \
	  SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all" build-fuzz/libgpuplan.a
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p build-fuzz/$$t/corpus build-fuzz/$$t/found && \
	  cp tests/fixtures/fuzz/$$t/* build-fuzz/$$t/corpus/ && \
	  clang -std=c11 -O1 -g -Iinclude -Itests -D_DEFAULT_SOURCE -DFUZZ_TARGET=fuzz_$$t \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    -o build-fuzz/fuzz_$$t tests/fuzz/targets.c build-fuzz/libgpuplan.a $(LDLIBS) || exit 1; \
	  echo "fuzz $$t for $(FUZZ_SECONDS) s"; \
	  build-fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    $$(case $$t in import|kube_json|prom) echo -dict=tests/fuzz/import.dict;; esac) \
	    -artifact_prefix=build-fuzz/$$t/found/ -print_final_stats=1 \
	    build-fuzz/$$t/corpus 2>&1 | grep -E "^(stat::number_of_executed_units|#[0-9]+.*DONE)|ERROR|SUMMARY" ; \
	  [ -z "$$(ls build-fuzz/$$t/found)" ] || { echo "fuzz $$t found inputs in build-fuzz/$$t/found"; exit 1; }; \
	done

# The tree is formatted with the checked-in .clang-format by clang-format 14
# (Debian 12's): `make format` rewrites what differs, `make style` (run by
# `make test`) fails on a file it would change or a source file over 1,200 lines (a test file over 1,500).
# Another clang-format major version formats a little differently, so the
# check then skips with a message instead of failing.
FORMATTED = $(shell git ls-files 'sim/*.[ch]' 'include/*.h' 'tests/*.[ch]' 'tests/fuzz/*.c' 2>/dev/null)
format:
	clang-format -i $(FORMATTED)

style:
	@tests/style.sh

clean:
	rm -rf build build-asan build-bench build-release build-fast build-fuzz bin

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
