# Batching by the Numbers: one entry point.  `make help` lists the targets.
#
# Everything generated goes under $(B) (default build/), so two builds can run
# side by side with `make B=/tmp/other`.  Sources are discovered by wildcard:
# adding a library module, a chapter program, a test, a figure or a chapter
# needs no edit here.

B        ?= build
CC       ?= cc
NVCC     ?= nvcc
PANDOC   ?= pandoc
GNUPLOT  ?= gnuplot
N        ?=

CPPFLAGS := -Icode -Icode/napkin -Iexercises -D_POSIX_C_SOURCE=200809L
CFLAGS   ?= -O2 -g
WARN     := -std=c11 -Wall -Wextra -Werror
# jansson: code/napkin/hf_config.c reads Hugging Face config.json files.
LDLIBS   := -lm -lpthread -ljansson
DEPFLAGS  = -MMD -MP
CRITERION_LIBS := -lcriterion
BLAS_LIBS      := -lopenblas

SAN_TSAN := -fsanitize=thread -O1 -g
SAN_ASAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -O1 -g

.DEFAULT_GOAL := all
.SECONDEXPANSION:
.DELETE_ON_ERROR:
.PHONY: all deps lib cli programs figures book pdf instructor instructor-pdf chapter chapters timed test unit-tests \
        sanitize-tests exercise-tests book-tests kernels kernels-check measure bench \
        exercise clean help fuzz fuzz-smoke wasm panel-tests

# ---------------------------------------------------------------- sources
LIB_SRC     := $(sort $(wildcard code/napkin/*.c))
CLI_SRC     := $(sort $(wildcard code/cli/*.c))
CH_SRC      := $(sort $(wildcard code/ch[0-9][0-9]/*.c))
MEASURE_SRC := $(sort $(wildcard code/measure/*.c))
BENCH_SRC   := $(sort $(wildcard code/bench/*.c))
SOL_SRC     := $(sort $(wildcard solutions/[0-9][0-9]-*.c))
TEST_SRC    := $(sort $(wildcard tests/test_*.c))
EXTEST_SRC  := $(sort $(wildcard tests/exercises/test_[0-9][0-9].c))
CHAPTERS    := $(sort $(wildcard chapters/[0-9][0-9]-*.md))
EX_MD       := $(sort $(wildcard exercises/[0-9][0-9]-*.md))
SOL_MD      := $(sort $(wildcard solutions/[0-9][0-9]-*.md))
FIG_GP      := $(sort $(wildcard figures/[0-9][0-9]-*.gp))
KERNEL_SRC  := $(sort $(wildcard kernels/*.cu))
SPECS       := $(sort $(wildcard code/specs/*.tsv))

# Tests whose subject is concurrent: also built and run under ThreadSanitizer.
# A test file opts in with a first line containing "napkin: tsan".
TSAN_TEST_SRC := $(foreach t,$(TEST_SRC),$(if $(shell head -n1 $(t) | grep -l 'napkin: tsan' 2>/dev/null),$(t)))
# Tests that are slow or spawn tools are left out of the address/undefined run
# with a first line containing "napkin: no-asan".
ASAN_TEST_SRC := $(foreach t,$(TEST_SRC),$(if $(shell head -n1 $(t) | grep -l 'napkin: no-asan' 2>/dev/null),,$(t)))

# ---------------------------------------------------------------- products
LIB        := $(B)/lib/libnapkin.a
LIB_OBJ    := $(LIB_SRC:code/%.c=$(B)/obj/%.o) $(B)/obj/gen/specs_data.o
NAPKIN     := $(B)/bin/napkin
CH_BIN     := $(CH_SRC:code/%.c=$(B)/bin/%)
MEASURE_BIN:= $(MEASURE_SRC:code/%.c=$(B)/bin/%)
BENCH_BIN  := $(BENCH_SRC:code/%.c=$(B)/bin/%)
SOL_BIN    := $(SOL_SRC:solutions/%.c=$(B)/bin/solutions/%)
TEST_BIN   := $(TEST_SRC:tests/%.c=$(B)/tests/%)
TSAN_BIN   := $(TSAN_TEST_SRC:tests/%.c=$(B)/tsan/tests/%)
ASAN_BIN   := $(ASAN_TEST_SRC:tests/%.c=$(B)/asan/tests/%)
CH_VALUES  := $(CH_SRC:code/%.c=$(B)/values/%.tsv)
SOL_VALUES := $(SOL_SRC:solutions/%.c=$(B)/values/solutions/%.tsv)
FIG_SVG    := $(FIG_GP:figures/%.gp=$(B)/figures/%.svg)
FIG_PDF    := $(FIG_GP:figures/%.gp=$(B)/figures/%.pdf)
CH_MD      := $(CHAPTERS:chapters/%=$(B)/md/chapters/%)
EX_MD_OUT  := $(EX_MD:exercises/%=$(B)/md/exercises/%)
SOL_MD_OUT := $(SOL_MD:solutions/%=$(B)/md/solutions/%)
KERNEL_BIN := $(KERNEL_SRC:kernels/%.cu=$(B)/kernels/%)

all: deps
	@$(MAKE) --no-print-directory book
	@$(MAKE) --no-print-directory chapters

deps:
	@tools/bootstrap.sh

# ---------------------------------------------------------------- library
lib: $(LIB)

$(B)/gen/specs_data.c: $(SPECS) tools/embed_text.sh
	@mkdir -p $(@D)
	tools/embed_text.sh $(SPECS) > $@

$(B)/obj/gen/specs_data.o: $(B)/gen/specs_data.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) -c $< -o $@

$(B)/obj/%.o: code/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# Sanitizer twins of the library, for the tsan and asan test runs.
$(B)/tsan/obj/%.o: code/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(SAN_TSAN) $(DEPFLAGS) -c $< -o $@
$(B)/asan/obj/%.o: code/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(SAN_ASAN) $(DEPFLAGS) -c $< -o $@
$(B)/tsan/obj/gen/specs_data.o $(B)/asan/obj/gen/specs_data.o: $(B)/gen/specs_data.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) -c $< -o $@
$(B)/tsan/lib/libnapkin.a: $(LIB_SRC:code/%.c=$(B)/tsan/obj/%.o) $(B)/tsan/obj/gen/specs_data.o
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(B)/asan/lib/libnapkin.a: $(LIB_SRC:code/%.c=$(B)/asan/obj/%.o) $(B)/asan/obj/gen/specs_data.o
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# ---------------------------------------------------------------- programs
cli: $(NAPKIN)

$(NAPKIN): $(CLI_SRC) $(wildcard code/cli/*.h) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $(CLI_SRC) $(LIB) $(LDLIBS) -o $@

# code/chNN/foo.c -> $(B)/bin/chNN/foo ; code/measure/foo.c -> $(B)/bin/measure/foo
$(B)/bin/measure/%: code/measure/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $< $(LIB) $(BLAS_LIBS) $(LDLIBS) -o $@
$(B)/bin/bench/%: code/bench/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@
$(B)/bin/ch%: code/ch%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@
$(B)/bin/solutions/%: solutions/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@

programs: $(NAPKIN) $(CH_BIN) $(SOL_BIN) $(MEASURE_BIN) $(BENCH_BIN)

# Running a program records its values ($(B)/values/...tsv) and data ($(B)/data).
$(B)/values/%.tsv: $(B)/bin/%
	@mkdir -p $(@D) $(B)/data
	@rm -f $@.tmp
	NB_VALUES=$(abspath $@.tmp) NB_DATA=$(abspath $(B)/data) tools/run_bounded.sh 120 $< > $(@:.tsv=.out)
	@touch $@.tmp && mv $@.tmp $@

# Programs that time things (they read CLOCK_MONOTONIC) run alone: the
# `timed` phase builds them in parallel, then runs them one at a time before
# anything else of the book is built, whatever -j the reader gave.  book,
# chapter and chapters run it first.
TIMED_SRC    := $(shell grep -l 'clock_gettime\|CLOCK_MONOTONIC' $(CH_SRC) $(SOL_SRC) /dev/null 2>/dev/null)
TIMED_VALUES := $(foreach s,$(TIMED_SRC),$(B)/values/$(patsubst code/%.c,%,$(patsubst solutions/%.c,solutions/%,$(s))).tsv)
timed:
	@$(MAKE) --no-print-directory $(patsubst $(B)/values/%.tsv,$(B)/bin/%,$(TIMED_VALUES))
	@$(MAKE) --no-print-directory -j1 $(TIMED_VALUES)

# Chapter 2 reads the committed measured sets and the reader's own (make measure).
$(B)/values/ch02/cpu_measured.tsv $(B)/values/ch02/gpu_predicted.tsv: $(wildcard figures/measured/*/*.tsv) $(wildcard $(B)/measured/*/*.tsv)

# ---------------------------------------------------------------- figures
# figures/NN-name.gp plots TSV from $(B)/data written by chapter NN's programs
# (and committed measurements under figures/measured/).  Scripts set neither
# terminal nor output; the variables datadir and measureddir are given.
chapter_values = $(filter $(B)/values/ch$(1)/%,$(CH_VALUES)) $(filter $(B)/values/solutions/$(1)-%,$(SOL_VALUES))
fig_num = $(firstword $(subst -, ,$(notdir $(1))))
GP_VARS = -e "datadir='$(B)/data'; measureddir='figures/measured'"

figures: $(FIG_SVG)

$(B)/figures/%.svg: figures/%.gp $$(call chapter_values,$$(call fig_num,$$*))
	@mkdir -p $(@D)
	$(GNUPLOT) $(GP_VARS) -e "set terminal svg size 760,460 dynamic font 'Helvetica,13'; set output '$@'" $< 
$(B)/figures/%.pdf: figures/%.gp $$(call chapter_values,$$(call fig_num,$$*))
	@mkdir -p $(@D)
	$(GNUPLOT) $(GP_VARS) -e "set terminal pdfcairo size 6in,3.6in font 'Helvetica,10'; set output '$@'" $<

# ---------------------------------------------------------------- the book
# Each chapter, exercise set and solution set is expanded on its own by the
# notebook filter (cells run, values filled in, figures checked), so touching
# one chapter re-runs only that chapter.
export NB_BUILD := $(B)
export NB_CC := $(CC)
export NB_CFLAGS := $(CPPFLAGS) $(WARN) -O1
export NB_LIB := $(abspath $(LIB))
export NB_LDLIBS := $(LDLIBS)
export NB_BIN := $(abspath $(B)/bin)
NB_FILTER := tools/notebook.lua
# Citations: [@key] in any chapter; the filter rejects unknown keys with
# file:line, the assembling pandoc's citeproc formats them (README "Citing").
BIB := chapters/references.bib
export NB_BIBLIOGRAPHY := $(abspath $(BIB))
CALC_FILTER := tools/calc.lua
CALC_PAGE := $(B)/web/calc.html
# Values reach the chapters through a pattern-rule chain; keep them, or make
# deletes them as intermediates and the next build re-runs every chapter.
.SECONDARY: $(CH_VALUES) $(SOL_VALUES)
NB_DEPS = $(NB_FILTER) $(CALC_FILTER) $(BIB) $(LIB) $(NAPKIN) $(call chapter_values,$(1)) $(filter $(B)/figures/$(1)-%,$(FIG_SVG))
md_num = $(firstword $(subst -, ,$(notdir $(1))))

$(B)/md/chapters/%.md: chapters/%.md $$(call NB_DEPS,$$(call md_num,$$*))
	@mkdir -p $(@D)
	NB_VALUE_FILES="$(call chapter_values,$(call md_num,$*))" $(PANDOC) -f markdown -t markdown --lua-filter $(NB_FILTER) --lua-filter $(CALC_FILTER) $< -o $@
$(B)/md/exercises/%.md: exercises/%.md $$(call NB_DEPS,$$(call md_num,$$*))
	@mkdir -p $(@D)
	NB_VALUE_FILES="$(call chapter_values,$(call md_num,$*))" $(PANDOC) -f markdown -t markdown --lua-filter $(NB_FILTER) --lua-filter $(CALC_FILTER) $< -o $@
$(B)/md/solutions/%.md: solutions/%.md $$(call NB_DEPS,$$(call md_num,$$*))
	@mkdir -p $(@D)
	NB_VALUE_FILES="$(call chapter_values,$(call md_num,$*))" $(PANDOC) -f markdown -t markdown --lua-filter $(NB_FILTER) --lua-filter $(CALC_FILTER) $< -o $@

# Chapter NN, then its exercises (and, for instructors, its solutions).
# The reference list (tools/references.md) closes every edition.
book_parts = $(foreach c,$(CH_MD),$(c) $(filter $(B)/md/exercises/$(call md_num,$(c))-%,$(EX_MD_OUT))) tools/references.md
instructor_parts = $(foreach c,$(CH_MD),$(c) $(filter $(B)/md/exercises/$(call md_num,$(c))-%,$(EX_MD_OUT)) $(filter $(B)/md/solutions/$(call md_num,$(c))-%,$(SOL_MD_OUT))) tools/references.md
# Figures are referenced without extension; the format picks svg or pdf.
HTML_FLAGS := --standalone --self-contained --mathml --toc --toc-depth=2 --number-sections \
              --metadata-file=tools/book-meta.yaml --css=tools/book.css --resource-path=.:$(B) \
              --default-image-extension=svg --citeproc --bibliography=$(BIB) --metadata=link-citations:true \
              --include-in-header=tools/nav/nav.html --include-after-body=$(CALC_PAGE)
NAV_DEPS := tools/nav/nav.html tools/nav/book-bar.html tools/nav/chapter-bar.sh $(BIB)

# ---------------------------------------------------------------- the panels
# The library (less its threaded and process-spawning modules), the CLI's
# commands and code/web/ as one WebAssembly reactor module; the book carries
# it inline (base64) with the script that runs its panels (tools/calc.lua).
WASM_CC  ?= clang-14
# hf_config.c needs jansson: code/web/hf_config_none.c stands in for it.
WASM_LIB := $(filter-out code/napkin/hf_config.c $(shell grep -l -E 'pthread|popen' $(LIB_SRC)),$(LIB_SRC))
WASM_SRC := $(WASM_LIB) $(filter-out code/cli/main.c,$(CLI_SRC)) $(sort $(wildcard code/web/*.c))
WASM     := $(B)/web/napkin.wasm
wasm: $(WASM)
$(WASM): $(WASM_SRC) $(wildcard code/napkin/*.h code/cli/*.h code/web/*.h) $(B)/gen/specs_data.c
	@mkdir -p $(@D)
	$(WASM_CC) --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor -Icode/cli -Icode/web $(CPPFLAGS) \
	  $(WARN) -O2 $(WASM_SRC) $(B)/gen/specs_data.c -lm -o $@
$(CALC_PAGE): $(WASM) code/web/calc.css code/web/calc.js tools/embed_wasm.sh
	tools/embed_wasm.sh $(WASM) code/web/calc.css code/web/calc.js > $@
$(B)/book.html $(B)/book-instructor.html: $(CALC_PAGE)

book:
	@$(MAKE) --no-print-directory timed
	@$(MAKE) --no-print-directory $(B)/book.html
# book.md is not expanded by the filter; its citations are checked by it.
CHECK_BOOK_MD = NB_VALUE_FILES= $(PANDOC) -f markdown -t markdown --lua-filter $(NB_FILTER) book.md -o /dev/null
$(B)/book.html: book.md $$(book_parts) tools/book.css tools/book-meta.yaml $(NAV_DEPS)
	@$(CHECK_BOOK_MD)
	$(PANDOC) $(HTML_FLAGS) --include-before-body=tools/nav/book-bar.html book.md $(book_parts) -o $@
	@echo "wrote $@"

instructor: $(B)/book-instructor.html
$(B)/book-instructor.html: book.md $$(instructor_parts) tools/book.css tools/book-meta.yaml $(NAV_DEPS)
	@$(CHECK_BOOK_MD)
	$(PANDOC) $(HTML_FLAGS) --include-before-body=tools/nav/book-bar.html book.md $(instructor_parts) -o $@
	@echo "wrote $@"

# Each chapter (with its exercises) as its own page, $(B)/chapter-NN.html,
# linked from the book and to the chapters before and after it.
CH_NUMS := $(foreach c,$(CHAPTERS),$(call md_num,$(c)))
chapter_md = $(filter $(B)/md/chapters/$(1)-%,$(CH_MD)) $(filter $(B)/md/exercises/$(1)-%,$(EX_MD_OUT))
CH_PAGES := $(CH_NUMS:%=$(B)/chapter-%.html)
$(CH_PAGES): $(CALC_PAGE)
$(B)/chapter-%.html: $$(call chapter_md,$$*) tools/references.md tools/book.css tools/book-meta.yaml $(NAV_DEPS)
	@mkdir -p $(B)/nav
	@set -- $(CH_NUMS); p=-; n=-; while [ $$# -gt 0 ]; do \
	  if [ "$$1" = "$*" ]; then n=$${2:--}; break; fi; p=$$1; shift; done; \
	  tools/nav/chapter-bar.sh $$p $$n > $(B)/nav/chapter-$*.html
	$(PANDOC) $(HTML_FLAGS) --include-before-body=$(B)/nav/chapter-$*.html $(call chapter_md,$*) tools/references.md -o $@
	@echo "wrote $@"

chapters:
	@$(MAKE) --no-print-directory timed
	@$(MAKE) --no-print-directory $(CH_PAGES)

# make chapter N=01: that chapter (with its exercises) as its own page.
chapter:
	@test -n "$(N)" || { echo "usage: make chapter N=01" >&2; exit 2; }
	@test -n "$(filter $(N),$(CH_NUMS))" || { echo "no chapter '$(N)': give its two-digit number; chapters: $(CH_NUMS)" >&2; exit 2; }
	@$(MAKE) --no-print-directory timed
	@$(MAKE) --no-print-directory $(B)/chapter-$(N).html

pdf: $(B)/book.pdf
$(B)/book.pdf: book.md $$(book_parts) $(FIG_PDF) tools/book-meta.yaml $(BIB)
	@command -v xelatex >/dev/null || { echo "make pdf needs xelatex: apt-get install texlive-xetex texlive-latex-recommended texlive-fonts-recommended lmodern fonts-dejavu-core" >&2; exit 2; }
	$(PANDOC) --standalone --toc --toc-depth=2 --number-sections --pdf-engine=xelatex \
	  --metadata-file=tools/book-meta.yaml --resource-path=.:$(B) --default-image-extension=pdf \
	  --citeproc --bibliography=$(BIB) book.md $(book_parts) -o $@
	@echo "wrote $@"

instructor-pdf: $(B)/book-instructor.pdf
$(B)/book-instructor.pdf: book.md $$(instructor_parts) $(FIG_PDF) tools/book-meta.yaml $(BIB)
	@command -v xelatex >/dev/null || { echo "make instructor-pdf needs xelatex: apt-get install texlive-xetex texlive-latex-recommended texlive-fonts-recommended lmodern fonts-dejavu-core" >&2; exit 2; }
	$(PANDOC) --standalone --toc --toc-depth=2 --number-sections --pdf-engine=xelatex \
	  --metadata-file=tools/book-meta.yaml --resource-path=.:$(B) --default-image-extension=pdf \
	  --citeproc --bibliography=$(BIB) book.md $(instructor_parts) -o $@
	@echo "wrote $@"

# ---------------------------------------------------------------- tests
$(B)/tests/%: tests/%.c $(LIB) $(NAPKIN)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $(DEPFLAGS) $< $(LIB) $(CRITERION_LIBS) $(LDLIBS) -o $@
# A chapter's suite (tests/test_chNN.c) may run that chapter's programs (tests/chapter_values.h).
$(foreach n,07 08 09 12,$(foreach d,tests asan/tests,$(eval $(B)/$(d)/test_ch$(n): $(filter $(B)/bin/ch$(n)/%,$(CH_BIN)))))
$(B)/tsan/tests/%: tests/%.c $(B)/tsan/lib/libnapkin.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(SAN_TSAN) $< $(B)/tsan/lib/libnapkin.a $(CRITERION_LIBS) $(LDLIBS) -o $@
# The CLI under the same sanitizers, for the suites that run it.
ASAN_NAPKIN := $(B)/asan/bin/napkin
$(ASAN_NAPKIN): $(CLI_SRC) $(wildcard code/cli/*.h) $(B)/asan/lib/libnapkin.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(SAN_ASAN) $(CLI_SRC) $(B)/asan/lib/libnapkin.a $(LDLIBS) -o $@
$(B)/asan/tests/%: tests/%.c $(B)/asan/lib/libnapkin.a $(NAPKIN) $(ASAN_NAPKIN)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(SAN_ASAN) $< $(B)/asan/lib/libnapkin.a $(CRITERION_LIBS) $(LDLIBS) -o $@

# Environment the suites read: where the CLI and the build live.
TEST_ENV := NAPKIN_BIN=$(abspath $(NAPKIN)) NB_BUILD=$(abspath $(B)) NB_SRC=$(CURDIR)
RUN_SUITE = tools/run_suite.sh

# The CPU twins, and the kernels where nvcc exists, are built first:
# tests/test_measure_twins.c and tests/test_kernels_skip.c run them.
HAVE_NVCC := $(shell command -v $(NVCC) 2>/dev/null)
unit-tests: $(TEST_BIN) $(MEASURE_BIN) $(if $(HAVE_NVCC),$(KERNEL_BIN))
	@$(TEST_ENV) $(RUN_SUITE) $(TEST_BIN)

sanitize-tests: $(TSAN_BIN) $(ASAN_BIN)
	@$(TEST_ENV) TSAN_OPTIONS=halt_on_error=1 $(RUN_SUITE) $(TSAN_BIN)
	@$(TEST_ENV) NAPKIN_BIN=$(abspath $(ASAN_NAPKIN)) ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(RUN_SUITE) $(ASAN_BIN)

# Exercise kits: the tests must pass on the worked solutions and must report
# failures, not crashes, on the untouched fill-in kits.
EX_NUMS  := $(patsubst tests/exercises/test_%.c,%,$(EXTEST_SRC))
KIT_NUMS := $(foreach n,$(EX_NUMS),$(if $(wildcard exercises/$(n)-*.c),$(n)))
$(B)/exercises/solution_%: tests/exercises/test_%.c tests/exercises/exercise_check.h $$(wildcard solutions/$$*-*.c) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iexercises $(WARN) $(CFLAGS) -DNB_EXERCISE_TEST $< $(wildcard solutions/$*-*.c) $(LIB) $(CRITERION_LIBS) $(LDLIBS) -o $@
$(B)/exercises/kit_%: tests/exercises/test_%.c tests/exercises/exercise_check.h $$(wildcard exercises/$$*-*.c) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iexercises $(WARN) $(CFLAGS) -Wno-unused-parameter -DNB_EXERCISE_TEST $< $(wildcard exercises/$*-*.c) $(LIB) $(CRITERION_LIBS) $(LDLIBS) -o $@

# The check of the untouched kit uses the kit as committed (git show HEAD:),
# not the reader's working copy, so a reader who finished a kit still passes
# make test; outside a git checkout it falls back to the working copy.
$(B)/exercises/committed/%.c: exercises/%.c
	@mkdir -p $(@D)
	@git show HEAD:$< > $@.tmp 2>/dev/null || cp $< $@.tmp
	@mv $@.tmp $@
committed_kit = $(patsubst exercises/%,$(B)/exercises/committed/%,$(wildcard exercises/$(1)-*.c))
.SECONDARY: $(patsubst exercises/%,$(B)/exercises/committed/%,$(wildcard exercises/[0-9][0-9]-*.c))
$(B)/exercises/kit_committed_%: tests/exercises/test_%.c tests/exercises/exercise_check.h $$(call committed_kit,$$*) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iexercises $(WARN) $(CFLAGS) -Wno-unused-parameter -DNB_EXERCISE_TEST $< $(call committed_kit,$*) $(LIB) $(CRITERION_LIBS) $(LDLIBS) -o $@

exercise-tests: $(EX_NUMS:%=$(B)/exercises/solution_%) $(KIT_NUMS:%=$(B)/exercises/kit_committed_%)
	@$(RUN_SUITE) $(EX_NUMS:%=$(B)/exercises/solution_%)
	@tools/check_kit.sh $(KIT_NUMS:%=$(B)/exercises/kit_committed_%)

# make exercise N=01: run chapter 01's exercise tests against your kit;
# ONLY=3 runs exercise 3 alone (tests named e3_...).
ONLY ?=
exercise:
	@test -n "$(N)" || { echo "usage: make exercise N=01 [ONLY=3]" >&2; exit 2; }
	@test -n "$(filter $(N),$(KIT_NUMS))" || { echo "no fill-in kit for chapter $(N); kits: $(KIT_NUMS)" >&2; exit 2; }
	@case "$(ONLY)" in "") ;; *[!0-9]*) echo "ONLY=$(ONLY): give an exercise number, e.g. ONLY=3" >&2; exit 2;; esac
	@$(MAKE) --no-print-directory $(B)/exercises/kit_$(N)
	@if [ -n "$(ONLY)" ]; then \
	  n=$$($(B)/exercises/kit_$(N) --list 2>/dev/null | grep -c "e$(ONLY)_"); \
	  [ "$$n" -gt 0 ] || { echo "no tests for exercise $(ONLY) of chapter $(N) (tests named e$(ONLY)_...); the tests:" >&2; $(B)/exercises/kit_$(N) --list >&2; exit 2; }; \
	  echo "$(B)/exercises/kit_$(N) --verbose=0 --filter='*/e$(ONLY)_*'"; \
	  $(B)/exercises/kit_$(N) --verbose=0 --filter='*/e$(ONLY)_*'; \
	else echo "$(B)/exercises/kit_$(N) --verbose=0"; $(B)/exercises/kit_$(N) --verbose=0; fi

# The book in a real browser (headless Chromium, tools/browser_check.py):
# console, requests, MathML, figures, links, page width; screenshots of each
# chapter's first screen land in $(B)/screenshots/.
BROWSER_CHECK = tools/run_bounded.sh 300 python3 tools/browser_check.py
book-tests: $(B)/book.html $(B)/book-instructor.html $(CH_PAGES)
	@$(BROWSER_CHECK) $(B)/book.html $(B)/screenshots
	@$(BROWSER_CHECK) $(B)/book-instructor.html $(B)/screenshots/instructor

# The book's calculator panels in headless Chromium against the CLI: every
# panel through PANEL_CONFIGS random configurations and the edge cases;
# screenshots land in $(B)/panels/.
PANEL_CONFIGS ?= 200
panel-tests: $(B)/book.html $(NAPKIN)
	tools/run_bounded.sh 600 python3 tools/panel_test.py --book $(B)/book.html --napkin $(NAPKIN) \
	  --out $(B)/panels --configs $(PANEL_CONFIGS)

test: deps
	@$(MAKE) --no-print-directory timed
	@$(MAKE) --no-print-directory book-tests
	@$(MAKE) --no-print-directory panel-tests
	@$(MAKE) --no-print-directory unit-tests
	@$(MAKE) --no-print-directory exercise-tests
	@$(MAKE) --no-print-directory sanitize-tests
	@$(MAKE) --no-print-directory kernels-check
	@$(MAKE) --no-print-directory fuzz-smoke
	@echo "make test: all passed"

# ---------------------------------------------------------------- kernels
NVCC_ARCH := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
NVCC_FLAGS := -O3 -std=c++17 $(NVCC_ARCH) -Icode -Icode/napkin -Ikernels -Xcompiler -Wall
$(B)/kernels/%: kernels/%.cu $(wildcard kernels/*.h kernels/*.cuh) $(LIB)
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) $< $(LIB) -lcublas -o $@

kernels: $(KERNEL_BIN)

# Compile every kernel where nvcc exists; say so where it does not.
kernels-check:
	@if command -v $(NVCC) >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory kernels && echo "kernels: $(words $(KERNEL_BIN)) compiled"; \
	else echo "kernels: SKIP (no nvcc on this machine)"; fi

measure:
	@tools/measure.sh $(B)

bench: $(NAPKIN) $(BENCH_BIN)
	@tools/bench.sh $(B) $(BENCH_BIN)

# ---------------------------------------------------------------- fuzzing
# tests/fuzz/fuzz_*.c are libFuzzer targets, built with clang over the
# library's sources under address and undefined-behaviour sanitizers.
# `make fuzz` runs each FUZZ_S seconds; `make test` runs each FUZZ_SMOKE_S.
FUZZ_SRC   := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN   := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)
FUZZ_CC    ?= clang
FUZZ_FLAGS := -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1
FUZZ_S       ?= 120
FUZZ_SMOKE_S ?= 10
HAVE_FUZZ := $(shell command -v $(FUZZ_CC) >/dev/null 2>&1 && echo 'int LLVMFuzzerTestOneInput(const char *d, long n){(void)d;(void)n;return 0;}' | $(FUZZ_CC) -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null && echo yes)

$(B)/fuzz/%: tests/fuzz/%.c $(LIB_SRC) $(wildcard code/napkin/*.h) $(B)/gen/specs_data.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) $< $(LIB_SRC) $(B)/gen/specs_data.c -lm -lpthread -ljansson -o $@

fuzz: $(FUZZ_BIN)
	@tools/fuzz.sh $(B) $(FUZZ_S) $(FUZZ_BIN)

fuzz-smoke:
	@if [ -n "$(HAVE_FUZZ)" ]; then \
	  $(MAKE) --no-print-directory $(FUZZ_BIN) && tools/fuzz.sh $(B) $(FUZZ_SMOKE_S) $(FUZZ_BIN); \
	else echo "fuzz: SKIP (no $(FUZZ_CC) with libFuzzer on this machine)"; fi

# ---------------------------------------------------------------- misc
# A reader's own measurements ($(B)/measured/, from `make measure`) survive.
clean:
	@if [ -d $(B) ]; then find $(B) -mindepth 1 -maxdepth 1 ! -name measured -exec rm -rf {} +; fi
	@if [ -d $(B)/measured ]; then echo "kept $(B)/measured/ (your make measure results); rm -rf $(B)/measured to drop them"; fi

help:
	@echo "make              build the library, the napkin CLI, every cell and figure, and $(B)/book.html"
	@echo "make test         every Criterion suite, sanitizer runs, exercise checks, book checks, kernel compile"
	@echo "make pdf          $(B)/book.pdf (needs xelatex)"
	@echo "make instructor   $(B)/book-instructor.html, with worked solutions"
	@echo "make instructor-pdf  $(B)/book-instructor.pdf (needs xelatex)"
	@echo "make chapter N=01 one chapter and its exercises as $(B)/chapter-01.html"
	@echo "make chapters     every chapter as its own page, $(B)/chapter-NN.html"
	@echo "make exercise N=01  run chapter 01's exercise tests against your fill-in kit (ONLY=3: exercise 3 alone)"
	@echo "make measure      run the kernels on this GPU, or the CPU twins without one"
	@echo "make figures      every figure as SVG"
	@echo "make kernels      compile the CUDA kernels (needs nvcc)"
	@echo "make bench        performance figures of the tools and library"
	@echo "make fuzz         run the libFuzzer targets in tests/fuzz/ (FUZZ_S=120 seconds each)"
	@echo "make clean        remove $(B)/, except $(B)/measured/ (your make measure results)"
	@echo "variables: B=<build dir> (default build), CC, NVCC, N"

-include $(shell find $(B) -name '*.d' 2>/dev/null)
