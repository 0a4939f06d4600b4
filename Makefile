# The trenzinho monitor. Two commands matter (README.md):
#   make run    the whole system locally: embedded broker, simulated fleet, dashboard, InfluxDB
#               (built in the background the first time, while the rest already runs)
#   make test   vet, staticcheck, unit and integration tests against real Mosquitto and InfluxDB
# Everything either needs is installed here, into .tools/ (git-ignored), or from Debian.

SHELL        := /bin/bash
GO           ?= go
TOOLS        := $(CURDIR)/.tools/bin
INFLUXD      := $(TOOLS)/influxd
STATICCHECK  := $(TOOLS)/staticcheck
INFLUX_VER   := v1.8.3
STATICCHECK_VER := v0.8.2
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS      := -s -w -X main.version=$(VERSION)
# Debian packages the tests need: the broker, pdftotext for the PDF tests, zbarimg for the QR
# code of the public verification, qemu-user for the Raspberry Pi builds, Chromium for the
# dashboard tests.
DEB_PACKAGES := mosquitto mosquitto-clients poppler-utils zbar-tools qemu-user-static chromium openssl postgresql
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
TEST_TIMEOUT ?= 30m

.PHONY: all build run test check vet staticcheck unit fuzz deps tools clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/ ./firmware-bridge ./ingest ./monitor

$(INFLUXD):
	@echo "installing InfluxDB $(INFLUX_VER) into .tools/bin (first time only, about 90 s)"
	GOBIN=$(TOOLS) $(GO) install github.com/influxdata/influxdb/cmd/influxd@$(INFLUX_VER)

$(STATICCHECK):
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VER)

tools: $(INFLUXD) $(STATICCHECK)

# deps installs the Debian packages the tests use when they are missing.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# run does not wait for InfluxDB: localrun builds it in the background when it is missing (the
# same go install as $(INFLUXD)) while the broker, the fleet and the dashboard already run.
run: build
	$(GO) build -o bin/ ./internal/localrun
	@GO='$(GO)' exec bin/localrun --influxd "$${TRENZINHO_INFLUXD:-$(INFLUXD)}"

vet:
	$(GO) vet ./...

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

# unit runs every test, then the store's again on PostgreSQL (a server the tests start).
unit:
	CI=$${CI:-1} TRENZINHO_INFLUXD=$(INFLUXD) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...
	CI=$${CI:-1} TRENZINHO_TEST_STORE=postgres $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./monitor/store/

check: vet staticcheck

test: deps tools
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "not gofmt'ed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@$(GO) mod tidy -diff || { echo "go.mod is not tidy: run go mod tidy"; exit 1; }
	$(MAKE) vet staticcheck unit
	$(MAKE) fuzz FUZZTIME=3s

# fuzz runs every fuzz target briefly (make test: 3 s each); the corpus lives in testdata/fuzz
# and is kept (new interesting inputs stay in the build cache; failures are written there).
# Go's fuzzer can end a run with a bare "context deadline exceeded" when -fuzztime runs out while
# it is still minimizing a new interesting input (no failing input is written: nothing was found).
# Such a run is tried once more; a run that found a failing input fails at once.
FUZZTIME ?= 30s
fuzz:
	@out=$$(mktemp); trap 'rm -f $$out' EXIT; \
	for pkg in $$(git grep -l '^func Fuzz' -- '*_test.go' | xargs -n1 dirname | sort -u | sed 's|^|./|'); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			for try in 1 2; do \
				echo "== $$pkg $$f"; \
				if $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg >$$out 2>&1; then cat $$out; break; fi; \
				cat $$out; \
				if [ $$try = 2 ] || grep -q 'Failing input written' $$out || ! grep -q 'context deadline exceeded' $$out; then exit 1; fi; \
				echo "== $$pkg $$f: the fuzzer's deadline ended its minimization (nothing found); once more"; \
			done; \
		done; \
	done

clean:
	rm -rf bin .data dist

# pi cross-compiles firmware-bridge for the Raspberry Pi (static, no cgo) and packages it for
# Debian / Raspberry Pi OS: $(DIST)/firmware-bridge-linux-{arm64,armv7} and
# $(DIST)/trenzinho-bridge_<version>_{arm64,armhf}.deb (docs/bridge.md). Needs dpkg-deb.
DIST         ?= dist
PI_GOFLAGS   := -trimpath -ldflags '$(LDFLAGS)'

.PHONY: pi
pi:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build $(PI_GOFLAGS) -o $(DIST)/firmware-bridge-linux-arm64 ./firmware-bridge
	CGO_ENABLED=0 GOOS=linux GOARCH=arm GOARM=7 $(GO) build $(PI_GOFLAGS) -o $(DIST)/firmware-bridge-linux-armv7 ./firmware-bridge
	GO='$(GO)' packaging/build-deb.sh --version '$(VERSION)' --arch arm64 --binary $(DIST)/firmware-bridge-linux-arm64 --out $(DIST)
	GO='$(GO)' packaging/build-deb.sh --version '$(VERSION)' --arch armhf --binary $(DIST)/firmware-bridge-linux-armv7 --out $(DIST)
