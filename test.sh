#!/usr/bin/env bash
# The test command from the README. Installs what the tests need on a fresh machine,
# then runs vet and every test. Go modules download by themselves.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v go >/dev/null 2>&1; then
	echo "test.sh: Go is required (https://go.dev/dl/); none found on PATH" >&2
	exit 1
fi
if ! command -v make >/dev/null 2>&1; then
	apt-get update -qq && apt-get install -y -qq make >/dev/null
fi
make test
