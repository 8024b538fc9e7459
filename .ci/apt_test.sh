#!/usr/bin/env bash
# Tests .ci/apt.sh's apt_get against a stand-in apt-get on PATH: it waits out a held
# lock, gives up on it after APT_LOCK_WAIT, and fails at once on any other error.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/apt.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The stand-in fails with $FAIL's message while its call count is below $LOCKED.
cat >"$tmp/apt-get" <<'STUB'
#!/usr/bin/env bash
n=$(($(cat "$CALLS" 2>/dev/null || echo 0) + 1))
echo "$n" >"$CALLS"
if ((n <= LOCKED)); then echo "E: $FAIL" >&2; exit 100; fi
echo "apt-get $*"
STUB
chmod +x "$tmp/apt-get"
export PATH="$tmp:$PATH" CALLS="$tmp/calls" APT_LOCK_RETRY=0
passed=0 failed=0
check() { # name, want status, want calls, got status
	local got_calls
	got_calls=$(cat "$CALLS")
	if [[ $4 == "$2" && $got_calls == "$3" ]]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $1: status $4 after $got_calls calls, want status $2 after $3" >&2
	fi
	rm -f "$CALLS"
}
LOCKED=2 FAIL="Could not get lock /var/lib/apt/lists/lock. It is held by process 1 (apt-get)" APT_LOCK_WAIT=60 apt_get update 2>/dev/null
check "waits for the lists lock" 0 3 $?
LOCKED=1 FAIL="Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?" APT_LOCK_WAIT=60 apt_get install -y x 2>/dev/null
check "waits for the dpkg lock" 0 2 $?
LOCKED=5 FAIL="Could not get lock /var/lib/dpkg/lock-frontend" APT_LOCK_WAIT=0 apt_get update 2>/dev/null
check "gives up when the wait is over" 1 1 $?
LOCKED=5 FAIL="Unable to locate package nosuch" APT_LOCK_WAIT=60 apt_get install nosuch 2>/dev/null
check "fails at once on other errors" 1 1 $?
echo "apt_get: $passed passed, $failed failed"
((failed == 0))
