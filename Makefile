# Cabinet: `make demo` runs the example, `make test` runs every test.
# Both install what a fresh Debian machine lacks first.

SWIFT ?= swift
APT_PACKAGES := libtokyocabinet-dev zlib1g-dev tokyocabinet-bin libsqlite3-dev

.PHONY: all deps build demo test clean

all: build

# Installs Tokyo Cabinet through apt-get when root; otherwise says what to run.
deps:
	@missing=""; \
	for pkg in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$pkg 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = "0" ]; then \
	    echo "Installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "Cabinet needs:$$missing"; \
	    echo "Run: sudo apt-get install -y$$missing"; \
	    exit 1; \
	  fi; \
	fi

build: deps
	$(SWIFT) build

demo: deps
	$(SWIFT) build -c release --product playlists
	$(SWIFT) build -c release --product ReadmeExample
	@Examples/Playlists/demo.sh "$$($(SWIFT) build -c release --show-bin-path)"

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test

clean:
	rm -rf .build
