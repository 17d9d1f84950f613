# Batching by the Numbers: one entry point.  `make help` lists the targets.
#
# Everything generated goes under $(B) (default build/), so two builds can run
# side by side with `make B=/tmp/other`.  Sources are discovered by wildcard:
# adding a library module, a chapter program, a test, a figure or a chapter
# needs no edit here.

B        ?= build
CC       ?= cc
# N=1 and N=01 name the same chapter everywhere N= is taken (chapter,
# exercise, grade, handout, lms).
two_digit = $(if $(filter 1 2 3 4 5 6 7 8 9,$(1)),0$(1),$(1))
ifdef N
override N := $(call two_digit,$(strip $(N)))
endif
NVCC     ?= nvcc
PANDOC   ?= pandoc
GNUPLOT  ?= gnuplot
N        ?=

# The library's floors (code/napkin/<floor>/, ARCHITECTURE.md) are each on
# the include path, so a header is named alone (#include "roofline.h") in
# the library, the chapters' cells, the kits and the kernels alike, and a file
# moved between floors changes no include; tools/check_layers.sh holds each
# floor to the headers of its own and lower floors.
NAPKIN_DIRS := $(sort $(patsubst %/,%,$(dir $(wildcard code/napkin/*/*.h code/napkin/*/*.c))))
CPPFLAGS := -Icode $(addprefix -I,$(NAPKIN_DIRS)) -Icode/practice -Iexercises -D_POSIX_C_SOURCE=200809L
CFLAGS   ?= -O2 -g
# The test programs themselves (not the library they test) are compiled
# without optimisation: they run briefly, and -O2 costs twice the compile time.
TEST_CFLAGS ?= -O0 -g
WARN     := -std=c11 -Wall -Wextra -Werror
# jansson: code/napkin/specs/hf_config.c reads Hugging Face config.json files.
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
        exercise clean help fuzz fuzz-smoke wasm prose-lint panel-tests soak validate validate-bounds calibrations layers-check cli-shape

# ---------------------------------------------------------------- sources
LIB_SRC     := $(sort $(wildcard code/napkin/*/*.c))
# The exercise variants and their judge: a library of their own above libnapkin.
PRACTICE_SRC := $(sort $(wildcard code/practice/*.c))
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
# the spec tables, and the measured serving runs the calibrated answers' error bands come from (band.h)
SPECS       := $(sort $(wildcard code/specs/*.tsv)) code/specs/measured/serving_runs.tsv

# Tests whose subject is concurrent: also built and run under ThreadSanitizer.
# A test file opts in with a first line containing "napkin: tsan".
# (One awk over every test's first line per tag, not a shell per file.)
TSAN_TEST_SRC := $(shell awk 'FNR == 1 && /napkin: tsan/ { print FILENAME }' $(TEST_SRC))
# Tests that are slow or spawn tools are left out of the address/undefined run
# with a first line containing "napkin: no-asan".
ASAN_TEST_SRC := $(filter-out $(shell awk 'FNR == 1 && /napkin: no-asan/ { print FILENAME }' $(TEST_SRC)),$(TEST_SRC))

# ---------------------------------------------------------------- products
LIB        := $(B)/lib/libnapkin.a
LIB_OBJ    := $(LIB_SRC:code/%.c=$(B)/obj/%.o) $(B)/obj/gen/specs_data.o
PRACTICE_LIB := $(B)/lib/libpractice.a
# What a program links: the practice library first (it calls into libnapkin).
LIBS       := $(PRACTICE_LIB) $(LIB)
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
FIG_NARROW := $(FIG_GP:figures/%.gp=$(B)/figures/narrow/%.svg)
CH_MD      := $(CHAPTERS:chapters/%=$(B)/md/chapters/%)
EX_MD_OUT  := $(EX_MD:exercises/%=$(B)/md/exercises/%)
SOL_MD_OUT := $(SOL_MD:solutions/%=$(B)/md/solutions/%)
KERNEL_BIN := $(KERNEL_SRC:kernels/%.cu=$(B)/kernels/%)

# The timed phase once, then the book and every chapter page in one make.
all: deps
	@$(MAKE) --no-print-directory timed
	@$(MAKE) --no-print-directory $(B)/book.html $(CH_PAGES)

deps:
	@tools/bootstrap.sh

# ---------------------------------------------------------------- library
lib: $(LIBS)

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
$(PRACTICE_LIB): $(PRACTICE_SRC:code/%.c=$(B)/obj/%.o)
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
SANITIZERS := tsan asan
$(SANITIZERS:%=$(B)/%/lib/libnapkin.a): $(B)/%/lib/libnapkin.a: $(LIB_SRC:code/%.c=$(B)/$$*/obj/%.o) \
                                                                $(B)/$$*/obj/gen/specs_data.o
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(SANITIZERS:%=$(B)/%/lib/libpractice.a): $(B)/%/lib/libpractice.a: $(PRACTICE_SRC:code/%.c=$(B)/$$*/obj/%.o)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
TSAN_LIBS := $(B)/tsan/lib/libpractice.a $(B)/tsan/lib/libnapkin.a
ASAN_LIBS := $(B)/asan/lib/libpractice.a $(B)/asan/lib/libnapkin.a

# tools/run_bounded.sh contains every program and cell with it (see tools/nb_contain.c).
NB_CONTAIN_BIN := $(B)/tools/nb_contain
export NB_CONTAIN := $(abspath $(NB_CONTAIN_BIN))
$(NB_CONTAIN_BIN): tools/nb_contain.c
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) $< -o $@

# ---------------------------------------------------------------- programs
cli: $(NAPKIN)

$(NAPKIN): $(CLI_SRC) $(wildcard code/cli/*.h) $(LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $(CLI_SRC) $(LIBS) $(LDLIBS) -o $@

# code/chNN/foo.c -> $(B)/bin/chNN/foo ; code/measure/foo.c -> $(B)/bin/measure/foo
$(B)/bin/measure/%: code/measure/%.c $(LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $< $(LIBS) $(BLAS_LIBS) $(LDLIBS) -o $@
$(B)/bin/bench/%: code/bench/%.c $(LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $< $(LIBS) $(LDLIBS) -o $@
$(B)/bin/ch%: code/ch%.c $(LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $< $(LIBS) $(LDLIBS) -o $@
$(B)/bin/solutions/%: solutions/%.c $(LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(CFLAGS) $< $(LIBS) $(LDLIBS) -o $@

programs: $(NAPKIN) $(CH_BIN) $(SOL_BIN) $(MEASURE_BIN) $(BENCH_BIN)

# Running a program records its values ($(B)/values/...tsv) and data ($(B)/data).
# A program relinked to the same bytes (a library change it does not use) is
# not run again: the values keep their time stamp, so no chapter is rebuilt
# (make looks at the time stamp again after the recipe).  The check is a
# checksum of the binary against the one that wrote the values.
$(B)/values/%.tsv: $(B)/bin/% | $(NB_CONTAIN_BIN)
	@if [ -f $@ ] && [ -f $@.sum ] && cksum < $< | cmp -s - $@.sum; then exit 0; fi; \
	  mkdir -p $(@D) $(B)/data && rm -f $@.tmp && \
	  echo "NB_VALUES=$(abspath $@.tmp) NB_DATA=$(abspath $(B)/data) tools/run_bounded.sh 120 $< > $(@:.tsv=.out)" && \
	  NB_VALUES=$(abspath $@.tmp) NB_DATA=$(abspath $(B)/data) tools/run_bounded.sh 120 $< > $(@:.tsv=.out) && \
	  touch $@.tmp && mv $@.tmp $@ && cksum < $< > $@.sum

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
# Without solutions/ (the student kit), the values the exercise text quotes
# from a solution program come from exercises/values/NN.tsv.
chapter_values = $(filter $(B)/values/ch$(1)/%,$(CH_VALUES)) $(filter $(B)/values/solutions/$(1)-%,$(SOL_VALUES)) \
                 $(if $(SOL_SRC),,$(wildcard exercises/values/$(1).tsv))
fig_num = $(firstword $(subst -, ,$(notdir $(1))))
GP_VARS = -e "datadir='$(B)/data'; measureddir='figures/measured'"

figures: $(FIG_SVG) $(FIG_NARROW)

$(B)/figures/%.svg: figures/%.gp $$(call chapter_values,$$(call fig_num,$$*))
	@mkdir -p $(@D)
	$(GNUPLOT) $(GP_VARS) -e "set terminal svg size 760,460 dynamic font 'Helvetica,13'; set output '$@'" $< 
# The same figure for a phone's column (about 360 px at 390 px; HTML only,
# tools/narrow_figures.lua): narrow, fonts scaled by 1.1 so that a script's
# smallest (',9') still draws at 9 px or more, and with narrow=1 the
# two-panel figures stack their panels (a script with a multiplot gets the
# taller canvas; a script's own `narrow_height = N` line, one whose key goes
# under the plot, sets the height).
NARROW_SIZE = 360$(comma)$(or $(shell sed -n 's/^narrow_height = \([0-9]*\).*/\1/p' $(1)),$(if $(shell grep -l 'set multiplot layout' $(1)),620,330))
$(B)/figures/narrow/%.svg: figures/%.gp $$(call chapter_values,$$(call fig_num,$$*))
	@mkdir -p $(@D)
	$(GNUPLOT) $(GP_VARS) -e "narrow=1" \
	  -e "set terminal svg size $(call NARROW_SIZE,$<) dynamic font 'Helvetica,12' fontscale 1.1; set output '$@'" $<
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

$(B)/md/chapters/%.md: chapters/%.md $$(call NB_DEPS,$$(call md_num,$$*)) | $(NB_CONTAIN_BIN)
	@mkdir -p $(@D)
	NB_VALUE_FILES="$(call chapter_values,$(call md_num,$*))" $(PANDOC) -f markdown -t markdown --lua-filter $(NB_FILTER) --lua-filter $(CALC_FILTER) $< -o $@
$(B)/md/exercises/%.md: exercises/%.md $$(call NB_DEPS,$$(call md_num,$$*)) | $(NB_CONTAIN_BIN)
	@mkdir -p $(@D)
	NB_VALUE_FILES="$(call chapter_values,$(call md_num,$*))" $(PANDOC) -f markdown -t markdown --lua-filter $(NB_FILTER) --lua-filter $(CALC_FILTER) $< -o $@
$(B)/md/solutions/%.md: solutions/%.md $$(call NB_DEPS,$$(call md_num,$$*)) | $(NB_CONTAIN_BIN)
	@mkdir -p $(@D)
	NB_VALUE_FILES="$(call chapter_values,$(call md_num,$*))" $(PANDOC) -f markdown -t markdown --lua-filter $(NB_FILTER) --lua-filter $(CALC_FILTER) $< -o $@

# Chapter NN, then its exercises (and, for instructors, its solutions).
# The reference list (tools/references.md) closes every edition.
book_parts = $(foreach c,$(CH_MD),$(c) $(filter $(B)/md/exercises/$(call md_num,$(c))-%,$(EX_MD_OUT))) tools/references.md
instructor_parts = $(foreach c,$(CH_MD),$(c) $(filter $(B)/md/exercises/$(call md_num,$(c))-%,$(EX_MD_OUT)) $(filter $(B)/md/solutions/$(call md_num,$(c))-%,$(SOL_MD_OUT))) tools/references.md
# Figures are referenced without extension; the format picks svg or pdf.
# Each HTML figure carries its narrow drawing for phones (a <picture>).
NARROW_FILTER := tools/narrow_figures.lua
HTML_FLAGS := --standalone --self-contained --mathml --toc --toc-depth=2 --number-sections \
              --metadata-file=tools/book-meta.yaml --css=tools/book.css --resource-path=.:$(B) \
              --default-image-extension=svg --citeproc --bibliography=$(BIB) --metadata=link-citations:true \
              --include-in-header=tools/nav/nav.html --lua-filter $(NARROW_FILTER)
# The calculator (wasm, inline: most of a page's bytes) goes into the book and
# into the chapter pages that have a panel (a {.calc} cell) or answer boxes
# (exercise numbers from a variant, data-practice), not the others.
WITH_CALC = --include-after-body=$(CALC_PAGE)
has_panel = $(shell grep -l -e '{\.calc' -e 'data-practice=' $(wildcard chapters/$(1)-*.md exercises/$(1)-*.md) /dev/null 2>/dev/null)
NAV_DEPS := tools/nav/nav.html tools/nav/book-bar.html tools/nav/chapter-bar.sh $(BIB)

# ---------------------------------------------------------------- the panels
# The library (less its threaded and process-spawning modules), the CLI's
# commands and code/web/ as one WebAssembly reactor module; the book carries
# it inline (base64) with the script that runs its panels (tools/calc.lua).
WASM_CC  ?= clang-14
# Chosen by folder: the threaded runtime (runtime/), the host references of
# the kernels (ref/: processes, clocks, /proc) and the config reader
# (specs/hf_config.c needs jansson; code/web/hf_config_none.c stands in)
# stay out of the browser.
WASM_LIB := $(filter-out code/napkin/runtime/% code/napkin/ref/% code/napkin/specs/hf_config.c,$(LIB_SRC))
WASM_SRC := $(WASM_LIB) $(PRACTICE_SRC) $(filter-out code/cli/main.c,$(CLI_SRC)) $(sort $(wildcard code/web/*.c))
WASM     := $(B)/web/napkin.wasm
wasm: $(WASM)
$(WASM): $(WASM_SRC) $(wildcard code/napkin/*/*.h code/practice/*.h code/cli/*.h code/web/*.h) $(B)/gen/specs_data.c
	@mkdir -p $(@D)
	$(WASM_CC) --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor -Icode/cli -Icode/web $(CPPFLAGS) \
	  $(WARN) -O2 $(WASM_SRC) $(B)/gen/specs_data.c -lm -o $@
$(CALC_PAGE): $(WASM) code/web/calc.css code/web/practice.css code/web/calc.js code/web/practice.js tools/embed_wasm.sh
	tools/embed_wasm.sh $(WASM) code/web/calc.css code/web/practice.css code/web/calc.js code/web/practice.js > $@
$(B)/book.html $(B)/book-instructor.html: $(CALC_PAGE)
$(B)/book.html $(B)/book-instructor.html $(B)/book-practice.html: $(FIG_NARROW) $(NARROW_FILTER)

book:
	@$(MAKE) --no-print-directory timed
	@$(MAKE) --no-print-directory $(B)/book.html
# book.md is not expanded by the filter; its citations are checked by it.
CHECK_BOOK_MD = NB_VALUE_FILES= $(PANDOC) -f markdown -t markdown --lua-filter $(NB_FILTER) book.md -o /dev/null
$(B)/book.html: book.md $$(book_parts) tools/book.css tools/book-meta.yaml $(NAV_DEPS)
	@$(CHECK_BOOK_MD)
	$(PANDOC) $(HTML_FLAGS) $(WITH_CALC) --include-before-body=tools/nav/book-bar.html book.md $(book_parts) -o $@
	@echo "wrote $@"

instructor: $(B)/book-instructor.html
$(B)/book-instructor.html: book.md $$(instructor_parts) tools/book.css tools/book-meta.yaml $(NAV_DEPS)
	@$(CHECK_BOOK_MD)
	$(PANDOC) $(HTML_FLAGS) $(WITH_CALC) --include-before-body=tools/nav/book-bar.html book.md $(instructor_parts) -o $@
	@echo "wrote $@"

# The practice edition, for self-study: the instructor's, each worked
# solution folded behind a "show the worked solution" control, with the
# calculator's panels and answer boxes live like the book's.
.PHONY: practice
practice: $(B)/book-practice.html
$(B)/book-practice.html: book.md $$(instructor_parts) tools/book.css tools/book-meta.yaml $(NAV_DEPS) tools/fold_solutions.lua $(CALC_PAGE)
	@$(CHECK_BOOK_MD)
	$(PANDOC) $(HTML_FLAGS) $(WITH_CALC) --lua-filter tools/fold_solutions.lua --include-before-body=tools/nav/book-bar.html book.md $(instructor_parts) -o $@
	@echo "wrote $@"

# Each chapter (with its exercises) as its own page, $(B)/chapter-NN.html,
# linked from the book and to the chapters before and after it.
CH_NUMS := $(foreach c,$(CHAPTERS),$(call md_num,$(c)))
chapter_md = $(filter $(B)/md/chapters/$(1)-%,$(CH_MD)) $(filter $(B)/md/exercises/$(1)-%,$(EX_MD_OUT))
CH_PAGES := $(CH_NUMS:%=$(B)/chapter-%.html)
$(CH_PAGES): $(CALC_PAGE) $(FIG_NARROW) $(NARROW_FILTER)
$(B)/chapter-%.html: $$(call chapter_md,$$*) tools/references.md tools/book.css tools/book-meta.yaml $(NAV_DEPS)
	@mkdir -p $(B)/nav
	@set -- $(CH_NUMS); p=-; n=-; while [ $$# -gt 0 ]; do \
	  if [ "$$1" = "$*" ]; then n=$${2:--}; break; fi; p=$$1; shift; done; \
	  tools/nav/chapter-bar.sh $$p $$n > $(B)/nav/chapter-$*.html
	$(PANDOC) $(HTML_FLAGS) $(if $(call has_panel,$*),$(WITH_CALC)) --include-before-body=$(B)/nav/chapter-$*.html \
	  $(call chapter_md,$*) tools/references.md -o $@
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
$(B)/tests/%: tests/%.c $(LIBS) $(NAPKIN)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(TEST_CFLAGS) $(DEPFLAGS) $< $(LIBS) $(CRITERION_LIBS) $(LDLIBS) -o $@
# A chapter's suite (tests/test_chNN.c) may run that chapter's programs (tests/chapter_values.h).
$(foreach n,07 08 09 12 13,$(foreach d,tests asan/tests,$(eval $(B)/$(d)/test_ch$(n): $(filter $(B)/bin/ch$(n)/%,$(CH_BIN)))))
$(B)/tsan/tests/%: tests/%.c $(TSAN_LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(SAN_TSAN) $< $(TSAN_LIBS) $(CRITERION_LIBS) $(LDLIBS) -o $@
# The CLI under the same sanitizers, for the suites that run it.
ASAN_NAPKIN := $(B)/asan/bin/napkin
$(ASAN_NAPKIN): $(CLI_SRC) $(wildcard code/cli/*.h) $(ASAN_LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(SAN_ASAN) $(CLI_SRC) $(ASAN_LIBS) $(LDLIBS) -o $@
$(B)/asan/tests/%: tests/%.c $(ASAN_LIBS) $(NAPKIN) $(ASAN_NAPKIN)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(WARN) $(SAN_ASAN) $(TEST_CFLAGS) $< $(ASAN_LIBS) $(CRITERION_LIBS) $(LDLIBS) -o $@

# Environment the suites read: where the CLI and the build live.
# The batcher soak runs a quarter of its requests here (16 threads x 12,500,
# under each sanitizer too); make soak runs the full count.
SOAK_SCALE ?= 0.25
TEST_ENV := NAPKIN_BIN=$(abspath $(NAPKIN)) NB_BUILD=$(abspath $(B)) NB_SRC=$(CURDIR) SOAK_SCALE=$(SOAK_SCALE)
RUN_SUITE = tools/run_suite.sh

# The CPU twins, and the kernels where nvcc exists, are built first:
# tests/test_measure_twins.c and tests/test_kernels_skip.c run them.
HAVE_NVCC := $(shell command -v $(NVCC) 2>/dev/null)
# Every suite run is a make target of its own (run-unit/NAME, run-tsan/NAME,
# run-asan/NAME, ...), so make -j runs suites side by side; unit-tests and
# sanitize-tests are their sums.  The sanitized runs keep their scratch files
# apart from the plain ones' (NB_SCRATCH), since both may run at once.
UNIT_RUNS := $(TEST_BIN:$(B)/tests/%=run-unit/%)
TSAN_RUNS := $(TSAN_BIN:$(B)/tsan/tests/%=run-tsan/%)
ASAN_RUNS := $(ASAN_BIN:$(B)/asan/tests/%=run-asan/%)
.PHONY: $(UNIT_RUNS) $(TSAN_RUNS) $(ASAN_RUNS)
UNIT_NEEDS := $(MEASURE_BIN) $(if $(HAVE_NVCC),$(KERNEL_BIN)) $(NB_CONTAIN_BIN)
$(UNIT_RUNS): run-unit/%: $(B)/tests/% $(UNIT_NEEDS)
	@$(TEST_ENV) $(RUN_SUITE) $<
$(TSAN_RUNS): run-tsan/%: $(B)/tsan/tests/% $(NB_CONTAIN_BIN)
	@$(TEST_ENV) NB_SCRATCH=$(abspath $(B)/tsan) TSAN_OPTIONS=halt_on_error=1 $(RUN_SUITE) $<
$(ASAN_RUNS): run-asan/%: $(B)/asan/tests/% $(NB_CONTAIN_BIN)
	@$(TEST_ENV) NB_SCRATCH=$(abspath $(B)/asan) NAPKIN_BIN=$(abspath $(ASAN_NAPKIN)) ASAN_OPTIONS=detect_leaks=1 \
	  UBSAN_OPTIONS=print_stacktrace=1 $(RUN_SUITE) $<
unit-tests: $(UNIT_RUNS)
# What the unit runs need, built without running them (make bench times the runs alone).
.PHONY: unit-tests-built
unit-tests-built: $(TEST_BIN) $(UNIT_NEEDS)
sanitize-tests: $(TSAN_RUNS) $(ASAN_RUNS)

# Exercise kits: the tests must pass on the worked solutions and must report
# failures, not crashes, on the untouched fill-in kits.
EX_NUMS  := $(patsubst tests/exercises/test_%.c,%,$(EXTEST_SRC))
KIT_NUMS := $(foreach n,$(EX_NUMS),$(if $(wildcard exercises/$(n)-*.c),$(n)))
$(B)/exercises/solution_%: tests/exercises/test_%.c $$(wildcard tests/exercises/*.h) $$(wildcard solutions/$$*-*.c) $(LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iexercises $(WARN) $(TEST_CFLAGS) -DNB_EXERCISE_TEST $< $(wildcard solutions/$*-*.c) $(LIBS) $(CRITERION_LIBS) $(LDLIBS) -o $@
$(B)/exercises/kit_%: tests/exercises/test_%.c $$(wildcard tests/exercises/*.h) $$(wildcard exercises/$$*-*.c) $(LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iexercises $(WARN) $(TEST_CFLAGS) -Wno-unused-parameter -DNB_EXERCISE_TEST $< $(wildcard exercises/$*-*.c) $(LIBS) $(CRITERION_LIBS) $(LDLIBS) -o $@

# The check of the untouched kit uses the kit as committed (git show HEAD:),
# not the reader's working copy, so a reader who finished a kit still passes
# make test; outside a git checkout it falls back to the working copy.
$(B)/exercises/committed/%.c: exercises/%.c
	@mkdir -p $(@D)
	@git show HEAD:$< > $@.tmp 2>/dev/null || cp $< $@.tmp
	@mv $@.tmp $@
committed_kit = $(patsubst exercises/%,$(B)/exercises/committed/%,$(wildcard exercises/$(1)-*.c))
.SECONDARY: $(patsubst exercises/%,$(B)/exercises/committed/%,$(wildcard exercises/[0-9][0-9]-*.c))
$(B)/exercises/kit_committed_%: tests/exercises/test_%.c $$(wildcard tests/exercises/*.h) $$(call committed_kit,$$*) $(LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iexercises $(WARN) $(TEST_CFLAGS) -Wno-unused-parameter -DNB_EXERCISE_TEST $< $(call committed_kit,$*) $(LIBS) $(CRITERION_LIBS) $(LDLIBS) -o $@

SOLVED_NUMS := $(foreach n,$(EX_NUMS),$(if $(wildcard solutions/$(n)-*.c),$(n)))
# Chapters with exercise variants (code/chNN/exercise_variant.c): their
# solutions are also checked on a variant other than the printed one.
VARIANT_SOLVED := $(filter $(patsubst code/ch%/exercise_variant.c,%,$(wildcard code/ch*/exercise_variant.c)),$(SOLVED_NUMS))
# One target per run here too: each solution's tests, each on a variant, each kit.
SOLUTION_RUNS := $(SOLVED_NUMS:%=run-solution/%)
VARIANT_RUNS  := $(VARIANT_SOLVED:%=run-variant/%)
KIT_RUNS      := $(KIT_NUMS:%=run-kit/%)
.PHONY: $(SOLUTION_RUNS) $(VARIANT_RUNS) $(KIT_RUNS)
$(SOLUTION_RUNS): run-solution/%: $(B)/exercises/solution_%
	@$(RUN_SUITE) $<
$(VARIANT_RUNS): run-variant/%: $(B)/exercises/solution_%
	@NB_SEED=4711 $(RUN_SUITE) $<
$(KIT_RUNS): run-kit/%: $(B)/exercises/kit_committed_%
	@tools/check_kit.sh $<
exercise-tests: $(SOLUTION_RUNS) $(VARIANT_RUNS) $(KIT_RUNS)
	@$(if $(SOLVED_NUMS),,echo "exercise-tests: no solutions/ (a student kit): the kits only")

# make exercise N=01: run chapter 01's exercise tests against your kit;
# ONLY=3 runs exercise 3 alone (tests named e3_...).
ONLY ?=
exercise:
	@test -n "$(N)" || { echo "usage: make exercise N=01 [ONLY=3] [SEED=4711]" >&2; exit 2; }
	@test -n "$(filter $(N),$(KIT_NUMS))" || { echo "no fill-in kit for chapter $(N); kits: $(KIT_NUMS)" >&2; exit 2; }
	@case "$(ONLY)" in "") ;; *[!0-9]*) echo "ONLY=$(ONLY): give an exercise number, e.g. ONLY=3" >&2; exit 2;; esac
	@case "$(SEED)" in "") ;; *[!0-9]*) echo "SEED=$(SEED): give a whole number, e.g. SEED=4711" >&2; exit 2;; esac
	@$(MAKE) --no-print-directory $(B)/exercises/kit_$(N)
	@if [ -n "$(ONLY)" ]; then \
	  n=$$($(B)/exercises/kit_$(N) --list 2>/dev/null | grep -c "e$(ONLY)_"); \
	  [ "$$n" -gt 0 ] || { echo "no tests for exercise $(ONLY) of chapter $(N) (tests named e$(ONLY)_...); the tests:" >&2; $(B)/exercises/kit_$(N) --list >&2; exit 2; }; \
	  echo "$(B)/exercises/kit_$(N) --verbose=0 --filter='*/e$(ONLY)_*'"; \
	  out=$$(NB_SEED=$(SEED) $(B)/exercises/kit_$(N) --verbose=0 --filter='*/e$(ONLY)_*' 2>&1); rc=$$?; \
	  printf '%s\n' "$$out" | grep -v ': Test is disabled$$'; exit $$rc; \
	else echo "$(B)/exercises/kit_$(N) --verbose=0"; NB_SEED=$(SEED) $(B)/exercises/kit_$(N) --verbose=0; fi

# ---------------------------------------------------------------- grading
# code/grade/ holds the grade program: a student's answers (JSON, as the page
# exports them) scored per part against a seeded variant, out as JUnit XML
# and JSON.  Variants and judging live in the library (practice.h, judge.h).
.PHONY: grade grade-all handout practice-tests
# One program from every file there; the answer key (grade_key.c, which the
# student kit leaves out) only where that file exists.
GRADE_SRC := $(sort $(wildcard code/grade/*.c))
GRADE_BIN := $(B)/bin/grade/grade
GRADE_KEY_FLAG := $(if $(filter code/grade/grade_key.c,$(GRADE_SRC)),-DGRADE_KEY)
$(GRADE_BIN): $(GRADE_SRC) $(wildcard code/grade/*.h) $(LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Icode/grade $(GRADE_KEY_FLAG) $(WARN) $(CFLAGS) $(GRADE_SRC) $(LIBS) $(LDLIBS) -o $@
$(B)/tests/test_grade $(B)/asan/tests/test_grade $(B)/tests/test_grade_all $(B)/asan/tests/test_grade_all: $(GRADE_BIN)

# make grade N=12 SEED=4711 ANSWERS=answers.json: the score per part and per
# exercise, and $(B)/grade/<answers>.junit.xml and <answers>.report.json.
# Without ANSWERS, the answers are your kit's (exercises/NN-*.c through
# tests/exercises/kit_answers_NN.c), written to $(B)/grade/NN-seedS-kit.json.
$(B)/exercises/kit_answers_%: tests/exercises/kit_answers_%.c $$(wildcard tests/exercises/*.h) $$(wildcard exercises/$$*-*.c) $(LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iexercises -Itests/exercises $(WARN) $(CFLAGS) -Wno-unused-parameter $< $(wildcard exercises/$*-*.c) $(LIBS) $(LDLIBS) -o $@
GRADE_ANSWERS = $(or $(ANSWERS),$(B)/grade/$(N)-seed$(or $(SEED),0)-kit.json)
GRADE_OUT = $(B)/grade/$(basename $(notdir $(GRADE_ANSWERS)))
grade: $(B)/bin/grade/grade
	@test -n "$(N)" || { echo "usage: make grade N=12 [SEED=4711] [ANSWERS=answers.json]" >&2; exit 2; }
	@mkdir -p $(B)/grade
	@if [ -z "$(ANSWERS)" ]; then \
	  test -f tests/exercises/kit_answers_$(N).c || { echo "no kit answers for chapter $(N): give ANSWERS=answers.json" >&2; exit 2; }; \
	  $(MAKE) --no-print-directory $(B)/exercises/kit_answers_$(N) && \
	  NB_SEED=$(SEED) $(B)/exercises/kit_answers_$(N) > $(GRADE_ANSWERS); fi
	$(B)/bin/grade/grade --chapter $(N) $(if $(SEED),--seed $(SEED)) --answers $(GRADE_ANSWERS) \
	  --junit $(GRADE_OUT).junit.xml --json $(GRADE_OUT).report.json
	@echo "wrote $(GRADE_OUT).junit.xml and $(GRADE_OUT).report.json"

# make grade-all ROSTER=roster.csv ANSWERS=dir [SALT=s] [POLICY=p.tsv]:
# every file in dir graded (the grade program walks it, reading each by
# path), into $(B)/grade/gradebook.csv, gradescope/<id>/results.json,
# students/<id>/ (JUnit and JSON) and summary.txt, which names every file
# not graded and why.  Without ROSTER each file's own seed is graded.
grade-all: $(GRADE_BIN)
	@test -n "$(ANSWERS)" || { echo "usage: make grade-all ROSTER=roster.csv ANSWERS=dir [SALT=s] [POLICY=policy.tsv]" >&2; exit 2; }
	$(GRADE_BIN) --all '$(subst ','\'',$(ANSWERS))' --out $(B)/grade \
	  $(if $(ROSTER),--roster '$(subst ','\'',$(ROSTER))') $(if $(SALT),--salt '$(subst ','\'',$(SALT))') \
	  $(if $(POLICY),--policy '$(subst ','\'',$(POLICY))')

# ---------------------------------------------------------------- the course
# code/course/ holds the course program (instructor-only: it computes answer
# keys): a roster's seeds, each student's key, Moodle XML.  tools/course.py
# drives it with the handout pipeline below.
COURSE_SRC := $(sort $(wildcard code/course/*.c))
COURSE_BIN := $(B)/bin/course/course
ifneq ($(COURSE_SRC),)
$(COURSE_BIN): $(COURSE_SRC) $(wildcard code/course/*.h) $(LIBS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Icode/course $(WARN) $(CFLAGS) $(COURSE_SRC) $(LIBS) $(LDLIBS) -o $@
else
# The student kit leaves the course program out (it writes answer keys).
$(COURSE_BIN):
	@echo "make course and make lms are the instructor's: this tree (a student kit) has no code/course/" >&2; exit 2
endif
$(B)/tests/test_course $(B)/asan/tests/test_course: $(COURSE_BIN)

# make course ROSTER=roster.csv CHAPTERS=01,06 [SALT=fall-2026] [NO_PDF=1]:
# $(B)/course/seeds.csv (id,name,chapter,seed), each student's handouts
# $(B)/course/handouts/<id>/chapter-NN.html and .pdf (their numbers, name and
# seed, live answer boxes) and the keys $(B)/course/keys/<id>/chapter-NN.md.
# The same roster and salt give the same seeds; a new salt, new variants.
COURSE_DIR := $(B)/course
COURSE_NUMS = $(foreach n,$(subst $(comma), ,$(CHAPTERS)),$(call two_digit,$(n)))
comma := ,
.PHONY: course lms
course: $(COURSE_BIN) $(CALC_PAGE)
	@test -n "$(ROSTER)" -a -n "$(CHAPTERS)" || { echo "usage: make course ROSTER=roster.csv CHAPTERS=01,06 [SALT=s] [NO_PDF=1]" >&2; exit 2; }
	@test -f "$(ROSTER)" || { echo "make course: ROSTER=$(ROSTER): no such file" >&2; exit 2; }
	@for n in $(COURSE_NUMS); do test -f code/ch$$n/exercise_variant.c || { \
	  echo "make course: CHAPTERS=$(CHAPTERS): chapter $$n has no exercise variants; chapters with variants: $(patsubst code/ch%/exercise_variant.c,%,$(wildcard code/ch*/exercise_variant.c))" >&2; exit 2; }; done
	@$(MAKE) --no-print-directory $(foreach n,$(COURSE_NUMS),$(B)/bin/ch$(n)/exercise_variant $(call chapter_values,$(n)))
	python3 tools/course.py --course-bin $(COURSE_BIN) --roster "$(ROSTER)" --chapters "$(CHAPTERS)" --salt "$(SALT)" \
	  --out $(COURSE_DIR) --build $(B) --pandoc $(PANDOC) --calc-page $(CALC_PAGE) $(if $(NO_PDF),--no-pdf) \
	  $(foreach n,$(COURSE_NUMS),--values $(n) "$(filter-out $(B)/values/ch$(n)/exercise_variant.tsv,$(call chapter_values,$(n)))")

# make lms N=06 SEEDS=1-30: $(B)/lms/chapter-06-moodle.xml, a numerical
# question per part per seed (answer, tolerance, unit, the named slips as
# feedback), for Moodle's question bank (and Canvas through its converter).
lms: $(COURSE_BIN)
	@test -n "$(N)" -a -n "$(SEEDS)" || { echo "usage: make lms N=06 SEEDS=1-30" >&2; exit 2; }
	@mkdir -p $(B)/lms
	$(COURSE_BIN) moodle --chapter "$(N)" --seeds "$(SEEDS)" --out $(B)/lms/chapter-$(call two_digit,$(N))-moodle.xml

# make student-kit: $(B)/student-kit.tar.gz, the repository as committed
# without solutions/ and without the derivations in tests/exercises/, whose
# checks print close/off and a hint, never the expected value
# (tools/student_kit.py); student-kit-tests checks that it leaks no answer.
.PHONY: student-kit student-kit-tests
student-kit: $(SOL_VALUES)
	python3 tools/student_kit.py --out $(B)/student-kit.tar.gz --values $(B)/values/solutions
student-kit-tests: student-kit $(B)/bin/grade/grade $(LIBS) $(NAPKIN)
	tools/run_bounded.sh 900 python3 tools/student_kit_check.py --kit $(B)/student-kit.tar.gz \
	  --grade $(B)/bin/grade/grade --lib $(LIB) --practice-lib $(PRACTICE_LIB) --seeds 0,4711 --napkin $(NAPKIN)

# make handout N=12 SEED=4711: that variant's exercise sheet, its numbers
# from code/chNN/exercise_variant (seed from NB_SEED), as
# $(B)/handout/NN-seedS.html, and .pdf where xelatex exists.
HANDOUT_DIR = $(B)/handout
handout: $(LIBS) $(NAPKIN)
	@test -n "$(N)" -a -n "$(SEED)" || { echo "usage: make handout N=12 SEED=4711" >&2; exit 2; }
	@case "$(SEED)" in *[!0-9]*) echo "SEED=$(SEED): give a non-negative whole number" >&2; exit 2;; esac
	@test -f code/ch$(N)/exercise_variant.c || { echo "no exercise variants for chapter $(N); chapters with variants: $(patsubst code/ch%/exercise_variant.c,%,$(wildcard code/ch*/exercise_variant.c))" >&2; exit 2; }
	@$(MAKE) --no-print-directory $(B)/bin/ch$(N)/exercise_variant $(call chapter_values,$(N))
	@mkdir -p $(HANDOUT_DIR)
	@rm -f $(HANDOUT_DIR)/$(N)-seed$(SEED).tsv
	NB_SEED=$(SEED) NB_VALUES=$(abspath $(HANDOUT_DIR)/$(N)-seed$(SEED).tsv) $(B)/bin/ch$(N)/exercise_variant
	NB_VALUE_FILES="$(filter-out $(B)/values/ch$(N)/exercise_variant.tsv,$(call chapter_values,$(N))) $(HANDOUT_DIR)/$(N)-seed$(SEED).tsv" \
	  $(PANDOC) -f markdown -t markdown --lua-filter $(NB_FILTER) $(wildcard exercises/$(N)-*.md) -o $(HANDOUT_DIR)/$(N)-seed$(SEED).md
	$(PANDOC) --standalone --self-contained --mathml --css=tools/book.css --citeproc --bibliography=$(BIB) \
	  --metadata=title:"Exercises, chapter $(N), variant $(SEED)" $(HANDOUT_DIR)/$(N)-seed$(SEED).md -o $(HANDOUT_DIR)/$(N)-seed$(SEED).html
	@if command -v xelatex >/dev/null 2>&1; then \
	  $(PANDOC) --standalone --pdf-engine=xelatex --citeproc --bibliography=$(BIB) \
	    --metadata=title:"Exercises, chapter $(N), variant $(SEED)" $(HANDOUT_DIR)/$(N)-seed$(SEED).md -o $(HANDOUT_DIR)/$(N)-seed$(SEED).pdf \
	  && echo "wrote $(HANDOUT_DIR)/$(N)-seed$(SEED).pdf"; else echo "handout: no xelatex, HTML only"; fi
	@echo "wrote $(HANDOUT_DIR)/$(N)-seed$(SEED).html"

# The book in a real browser (headless Chromium, tools/browser_check.py):
# console, requests, MathML, figures, links, page width, and the interactive
# parts (panels, "new variant", answer boxes) in every edition and a chapter
# page; screenshots of each chapter's first screen land in $(B)/screenshots/.
BROWSER_CHECK = tools/run_bounded.sh 300 python3 tools/browser_check.py
book-tests: $(B)/book.html $(B)/book-instructor.html $(B)/book-practice.html $(CH_PAGES)
	@$(BROWSER_CHECK) $(B)/book.html $(B)/screenshots
	@$(BROWSER_CHECK) $(B)/book-instructor.html $(B)/screenshots/instructor
	@$(BROWSER_CHECK) $(B)/book-practice.html $(B)/screenshots/practice
	@$(BROWSER_CHECK) $(B)/chapter-01.html $(B)/screenshots/chapter-01

# Machine-written sentences in the built chapters, values substituted: "0%"
# twice in a sentence, a value echoed as its own comparison, a price without
# a currency, a number that starts a line (pandoc's list item), "100% is
# spent" (tools/prose_lint.py; tests/test_prose_lint.c checks the checker).
prose-lint: $(CH_MD)
	@python3 tools/prose_lint.py $(CH_MD) && echo "prose-lint: no machine-written sentence in the chapters"

# The book's calculator panels in headless Chromium against the CLI: every
# panel through PANEL_CONFIGS random configurations and the edge cases, and
# the practice edition's through a few; screenshots land in $(B)/panels/.
PANEL_CONFIGS ?= 200
panel-tests: $(B)/book.html $(B)/book-practice.html $(NAPKIN)
	tools/run_bounded.sh 600 python3 tools/panel_test.py --book $(B)/book.html --napkin $(NAPKIN) \
	  --out $(B)/panels --configs $(PANEL_CONFIGS)
	tools/run_bounded.sh 300 python3 tools/panel_test.py --book $(B)/book-practice.html --napkin $(NAPKIN) \
	  --out $(B)/panels/practice --configs 20

# The exercises' answer boxes in headless Chromium against the CLI: one
# start, a handful of seeds, every part right, close, a slip and off.
PRACTICE_SEEDS ?= 4711,0,3,77,2024
practice-tests: $(B)/book.html $(B)/book-practice.html $(NAPKIN) $(B)/bin/grade/grade
	tools/run_bounded.sh 900 python3 tools/practice_test.py --page $(B)/book.html --napkin $(NAPKIN) \
	  --grade $(B)/bin/grade/grade --seeds $(PRACTICE_SEEDS) --practice-page $(B)/book-practice.html

# Every value the chapters print, checked a second way: tests/values/chNN.py
# re-derives it in Python from the committed tables (tests/values/README.md),
# and the exercise variants' answers for a sample of seeds; the runner's own
# test on its fixture chapter first.
.PHONY: values-check
values-check: $(CH_VALUES) $(filter %/exercise_variant,$(CH_BIN)) $(GRADE_BIN)
	@python3 tests/values/test_check.py
	@python3 tests/values/check.py

# Mutations the suites must catch: each small realistic bug of
# tests/mutants/list.tsv applied alone to a scratch copy ($(B)/mutants/tree),
# what it touches rebuilt there and the suites named for it run until one
# fails; prints mutant, caught by, time, and fails on a survivor or a mutant
# whose original text is gone (tools/mutants.py).  Not part of make test (it
# takes many minutes); tests/test_mutants.c checks the list still applies and
# that one mutant is caught.  MUTANTS=id,id runs those alone.
.PHONY: mutants
mutants: $(LIBS) $(NAPKIN)
	@python3 tools/mutants.py --scratch $(B)/mutants/tree --build $(B) $(if $(MUTANTS),--only $(MUTANTS))

# The code's shape, checked before anything runs (ARCHITECTURE.md).  The
# library's floors hold: includes go down only, and only price/ turns bytes
# or FLOPs into seconds (tools/check_layers.sh; tests/test_check_layers.c
# checks the checker).  The napkin command reads top to bottom: no function
# in code/cli longer than 120 lines (tools/check_cli_shape.sh names any that
# is, file:line and length; tests/test_cli_shape.c checks it).
layers-check:
	@tools/check_layers.sh
cli-shape:
	@tools/check_cli_shape.sh code/cli && echo "cli-shape: no function in code/cli over 120 lines"

# make test: the timed programs alone first, then every step as one make of
# their sum, so -j2 runs suites, browser checks and fuzzers side by side
# (each one's output kept together: --output-sync).
TEST_STEPS := layers-check cli-shape prose-lint values-check book-tests panel-tests practice-tests unit-tests exercise-tests \
              student-kit-tests sanitize-tests kernels-check fuzz-smoke
test: deps
	@$(MAKE) --no-print-directory timed
	@$(MAKE) --no-print-directory --output-sync=target TEST_AFTER_BOOK=1 $(TEST_STEPS)
	@echo "make test: all passed"
# Within make test, the suites that read the built book (tests/test_book*.c,
# test_figures.c, ...) start once it is built, as they did when the steps ran in turn.
BOOK_PRODUCTS := $(B)/book.html $(B)/book-instructor.html $(B)/book-practice.html $(CH_PAGES) $(FIG_SVG) $(FIG_NARROW)
$(if $(TEST_AFTER_BOOK),$(UNIT_RUNS) $(ASAN_RUNS) $(TSAN_RUNS): $(BOOK_PRODUCTS))

# ---------------------------------------------------------------- kernels
NVCC_ARCH := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
NVCC_FLAGS := -O3 -std=c++17 $(NVCC_ARCH) -Icode $(addprefix -I,$(NAPKIN_DIRS)) -Ikernels -Xcompiler -Wall
# The kernels link the library without its config reader (hf_config.c needs
# jansson; code/web/hf_config_none.c stands in), so a machine with only the
# CUDA toolkit and a C compiler builds them.
KLIB := $(B)/lib/libnapkin-nojson.a
$(KLIB): $(filter-out $(B)/obj/napkin/specs/hf_config.o,$(LIB_OBJ)) $(B)/obj/web/hf_config_none.o
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(B)/kernels/%: kernels/%.cu $(wildcard kernels/*.h kernels/*.cuh) $(KLIB)
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) $< $(KLIB) -lcublas -o $@

kernels: $(KERNEL_BIN)

# Compile every kernel where nvcc exists; say so where it does not.  (The
# kernels are prerequisites, not a recursive make: under make -j the unit
# runs need them too, and two makes must not build one file at once.)
kernels-check: $(if $(HAVE_NVCC),$(KERNEL_BIN))
	@if [ -n "$(HAVE_NVCC)" ]; then echo "kernels: $(words $(KERNEL_BIN)) compiled"; \
	else echo "kernels: SKIP (no nvcc on this machine)"; fi

measure:
	@tools/measure.sh $(B)

# The long runs make test shortens: 100,000 batcher time-outs (40,000 in make
# test) and the full batcher soak (16 x 50,000 requests; a quarter in make
# test), plain and under each sanitizer.
SOAK_BIN := $(B)/tests/test_batcher_soak $(B)/asan/tests/test_batcher_soak $(B)/tsan/tests/test_batcher_soak
soak: $(B)/tests/test_batcher_reap $(SOAK_BIN) $(NB_CONTAIN_BIN)
	@REAP_TIMEOUTS=100000 $(B)/tests/test_batcher_reap --jobs=1
	@for t in $(SOAK_BIN); do $(TEST_ENV) SOAK_SCALE=1 TSAN_OPTIONS=halt_on_error=1 $(RUN_SUITE) $$t || exit 1; done

bench: $(NAPKIN) $(BENCH_BIN)
	@tools/bench.sh $(B) $(BENCH_BIN)

# The calibrated model against the published measurements it was not fitted
# to (code/specs/measured/): held-out op errors, the engines' own
# disagreement, and the measured serving runs.  tests/test_validate.c holds
# each error to its bound in tests/validate_bounds.tsv in make test.
validate: $(NAPKIN)
	@$(NAPKIN) validate --measured code/specs/measured

# Rewrite tests/validate_bounds.tsv (the bound on every error validate prints,
# which tests/test_validate.c asserts) after a change moves those errors:
# tightens what improved, refuses what got worse unless LOOSEN=1.
validate-bounds: $(NAPKIN)
	python3 tools/validate_bounds.py --napkin $(NAPKIN) --measured code/specs/measured \
	  --table tests/validate_bounds.tsv $(if $(LOOSEN),--loosen)

# Refit code/specs/calibrations.tsv from the published sets (after
# tools/import_measured.py has refreshed them); tests/test_validate.c checks
# that the committed file is this fit.
calibrations: $(NAPKIN)
	tools/make_calibrations.sh $(NAPKIN) code/specs/measured > code/specs/calibrations.tsv.tmp
	mv code/specs/calibrations.tsv.tmp code/specs/calibrations.tsv

# ---------------------------------------------------------------- fuzzing
# tests/fuzz/fuzz_*.c are libFuzzer targets, built with clang over the
# library's sources under address and undefined-behaviour sanitizers.
# `make fuzz` runs each FUZZ_S seconds; `make test` runs each FUZZ_SMOKE_S.
FUZZ_SRC   := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN   := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)
FUZZ_CC    ?= clang
FUZZ_FLAGS := -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1
FUZZ_COMMA := ,
FUZZ_LIB_FLAGS := $(subst -fsanitize=fuzzer$(FUZZ_COMMA),-fsanitize=fuzzer-no-link$(FUZZ_COMMA),$(FUZZ_FLAGS))
FUZZ_S       ?= 120
FUZZ_SMOKE_S ?= 4
# Probed only by the recipe that needs it (a recursive variable), not at every parse.
HAVE_FUZZ = $(shell command -v $(FUZZ_CC) >/dev/null 2>&1 && echo 'int LLVMFuzzerTestOneInput(const char *d, long n){(void)d;(void)n;return 0;}' | $(FUZZ_CC) -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null && echo yes)

# The library is compiled once for all targets (instrumented, not linked
# with the fuzzer's main), then each target links it.
FUZZ_LIB := $(B)/fuzzlib/libnapkin.a
$(B)/fuzzlib/obj/%.o: code/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_LIB_FLAGS) $(DEPFLAGS) -c $< -o $@
$(B)/fuzzlib/obj/gen/specs_data.o: $(B)/gen/specs_data.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -std=c11 -O1 -c $< -o $@
$(FUZZ_LIB): $(LIB_SRC:code/%.c=$(B)/fuzzlib/obj/%.o) $(B)/fuzzlib/obj/gen/specs_data.o
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(B)/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) $(DEPFLAGS) $< $(FUZZ_LIB) -lm -lpthread -ljansson -o $@

# The CLI property test (tests/test_cli_props.c) runs briefly in every test
# run; here it tries every value on every flag of the sanitized CLI.
fuzz: $(FUZZ_BIN) $(B)/asan/tests/test_cli_props
	@tools/fuzz.sh $(B) $(FUZZ_S) $(FUZZ_BIN)
	@$(TEST_ENV) NAPKIN_BIN=$(abspath $(ASAN_NAPKIN)) NAPKIN_CLI_FUZZ=full $(B)/asan/tests/test_cli_props --jobs=1

# One target per fuzzer (run-fuzz-smoke/NAME), so -j runs them side by side.
FUZZ_SMOKE_RUNS := $(FUZZ_BIN:$(B)/fuzz/%=run-fuzz-smoke/%)
.PHONY: fuzz-smoke-runs $(FUZZ_SMOKE_RUNS)
# The generated tables are made here, not in the recursive make, which
# under -j would race this make's own build of them.
fuzz-smoke: $(B)/gen/specs_data.c
	@if [ -n "$(HAVE_FUZZ)" ]; then $(MAKE) --no-print-directory fuzz-smoke-runs; \
	else echo "fuzz: SKIP (no $(FUZZ_CC) with libFuzzer on this machine)"; fi
fuzz-smoke-runs: $(FUZZ_SMOKE_RUNS)
$(FUZZ_SMOKE_RUNS): run-fuzz-smoke/%: $(B)/fuzz/%
	@tools/fuzz.sh $(B) $(FUZZ_SMOKE_S) $<

# ---------------------------------------------------------------- misc
# A reader's own measurements ($(B)/measured/, from `make measure`) survive.
clean:
	@if [ -d $(B) ]; then find $(B) -mindepth 1 -maxdepth 1 ! -name measured -exec rm -rf {} +; fi
	@if [ -d $(B)/measured ]; then echo "kept $(B)/measured/ (your make measure results); rm -rf $(B)/measured to drop them"; fi

help:
	@echo "make              build the library, the napkin CLI, every cell and figure, and $(B)/book.html"
	@echo "make test         every Criterion suite, sanitizer runs, exercise checks, book checks, kernel compile, layer check"
	@echo "make layers-check the library's floors: includes go down only, only price/ turns bytes or FLOPs into seconds"
	@echo "make cli-shape    no function in code/cli over 120 lines (tools/check_cli_shape.sh)"
	@echo "make prose-lint   machine-written sentences in the built chapters (tools/prose_lint.py)"
	@echo "make pdf          $(B)/book.pdf (needs xelatex)"
	@echo "make instructor   $(B)/book-instructor.html, with worked solutions"
	@echo "make instructor-pdf  $(B)/book-instructor.pdf (needs xelatex)"
	@echo "make practice     $(B)/book-practice.html, each worked solution behind a 'show' control"
	@echo "make chapter N=01 one chapter and its exercises as $(B)/chapter-01.html"
	@echo "make chapters     every chapter as its own page, $(B)/chapter-NN.html"
	@echo "make exercise N=01  run chapter 01's exercise tests against your fill-in kit (ONLY=3: exercise 3 alone)"
	@echo "make grade N=12 SEED=4711 ANSWERS=a.json  score answers per part (no ANSWERS: your kit's); JUnit XML and JSON in $(B)/grade/"
	@echo "make grade-all ROSTER=r.csv ANSWERS=dir [SALT=s] [POLICY=p.tsv]  gradebook, Gradescope results, reports: $(B)/grade/"
	@echo "make handout N=12 SEED=4711  that variant's exercise sheet, $(B)/handout/12-seed4711.html"
	@echo "make course ROSTER=roster.csv CHAPTERS=01,06 [SALT=s]  seeds, handouts (HTML, PDF) and keys per student in $(B)/course/"
	@echo "make lms N=06 SEEDS=1-30  Moodle XML: a numerical question per part per seed, $(B)/lms/chapter-06-moodle.xml"
	@echo "make student-kit  $(B)/student-kit.tar.gz: the repository without solutions/ and the tests' derivations"
	@echo "make measure      run the kernels on this GPU, or the CPU twins without one"
	@echo "make figures      every figure as SVG"
	@echo "make kernels      compile the CUDA kernels (needs nvcc)"
	@echo "make bench        performance figures of the tools and library"
	@echo "make validate     the calibrated model against published measurements it was not fitted to"
	@echo "make validate-bounds  tighten tests/validate_bounds.tsv to today's errors (LOOSEN=1 accepts worse ones)"
	@echo "make calibrations refit code/specs/calibrations.tsv from code/specs/measured/"
	@echo "make fuzz         the libFuzzer targets in tests/fuzz/ (FUZZ_S=120 s each; make test runs FUZZ_SMOKE_S=4), then the CLI property test on every value"
	@echo "make mutants      small realistic bugs applied one at a time to a scratch copy; every one must fail a suite (MUTANTS=id,id)"
	@echo "make soak         the long runs make test shortens (100,000 batcher time-outs, the full batcher soak under each sanitizer)"
	@echo "make clean        remove $(B)/, except $(B)/measured/ (your make measure results)"
	@echo "variables: B=<build dir> (default build), CC, NVCC, N"

# The compilers' dependency files; an empty rule for each spares make the
# implicit-rule search it would do to try to remake every included file.
DEP_FILES := $(shell find $(B) -name '*.d' 2>/dev/null)
$(DEP_FILES): ;
-include $(DEP_FILES)
