# The web console: its source is web/console (vite, no framework); the built
# bundle is checked in under core/httpapi/console and embedded in the binary,
# so `go build` alone serves it. Included from the Makefile.
#
#   make console        rebuild the bundle after changing web/console/src
#   make console-test   start a broker, seed it with the CLI and drive the console
#                       in headless Chromium (playwright-core, Debian's chromium),
#                       checking what it shows; screenshots in web/console/test-results
#   make console-smoke  the same, for CI (about 25 s after the first install)

CONSOLE_DIR := web/console
CHROMIUM    ?= /usr/bin/chromium

.PHONY: console console-deps console-test console-smoke

console-deps:
	@command -v node >/dev/null || { echo "console: Node.js 20.19 or newer is required"; exit 1; }
	@[ -d $(CONSOLE_DIR)/node_modules/vite ] && [ -d $(CONSOLE_DIR)/node_modules/playwright-core ] || \
		(cd $(CONSOLE_DIR) && npm ci --no-audit --no-fund)
	@[ -x $(CHROMIUM) ] || { echo "console: installing Debian's chromium"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

console: console-deps
	cd $(CONSOLE_DIR) && npm run build

console-test: console-deps build
	cd $(CONSOLE_DIR) && CHROMIUM=$(CHROMIUM) node tests/console.test.mjs $(CURDIR)/$(BIN)

console-smoke: console-test
