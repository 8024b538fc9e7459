# apt_get runs apt-get, waiting while another process (an unattended upgrade, a
# second test run) holds apt's or dpkg's lock instead of failing at once. apt-get
# install waits by itself with DPkg::Lock::Timeout (the dpkg frontend lock), but
# apt-get update does not for the lists lock (apt 2.6 fails at once), so a failure
# that names a lock is retried every APT_LOCK_RETRY seconds for up to
# APT_LOCK_WAIT seconds; any other failure is returned as it is.
apt_get() {
	local wait=${APT_LOCK_WAIT:-900} retry=${APT_LOCK_RETRY:-5} out
	local deadline=$((SECONDS + wait))
	while :; do
		if out=$(apt-get -o DPkg::Lock::Timeout="$wait" "$@" 2>&1); then
			return 0
		fi
		if [[ $out == *"Could not get lock"* || $out == *"Unable to lock"* || $out == *"Unable to acquire the dpkg frontend lock"* ]] && ((SECONDS < deadline)); then
			echo "test.sh: another process holds apt's lock; waiting (up to ${wait}s)" >&2
			sleep "$retry"
			continue
		fi
		printf '%s\n' "$out" >&2
		return 1
	done
}
