#!/usr/bin/env bash
# The test command from the README. Installs what the tests need on a fresh machine,
# then runs vet and every test. Go modules download by themselves.
set -euo pipefail
cd "$(dirname "$0")"
# apt_get waits while another process holds apt's or dpkg's lock; its own test
# comes first, since everything below may depend on it.
source .ci/apt.sh
bash .ci/apt_test.sh
if ! command -v go >/dev/null 2>&1; then
	echo "test.sh: Go is required (https://go.dev/dl/); none found on PATH" >&2
	exit 1
fi
if ! command -v make >/dev/null 2>&1; then
	apt_get update -qq && apt_get install -y -qq make >/dev/null
fi
# emulate's tests build network namespaces and loop devices and apply kube-proxy's rules for real (as
# root, which CI is) and compare the load generator with wrk.
missing=()
for tool in ip:iproute2 nft:nftables iptables:iptables conntrack:conntrack wrk:wrk losetup:mount mkfs.ext4:e2fsprogs; do
	command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
done
if ((${#missing[@]})); then
	apt_get update -qq && apt_get install -y -qq "${missing[@]}" >/dev/null
fi
# emulate runs an Istio sidecar as nginx with its Lua module (emulate/sidecar). The
# package's maintainer scripts would start nginx as a service on the host's port 80:
# policy-rc.d (invoke-rc.d's hook, exit 101: action forbidden) keeps it stopped.
if ! dpkg -s nginx libnginx-mod-http-lua >/dev/null 2>&1; then
	if [[ -e /usr/sbin/policy-rc.d ]]; then
		apt_get update -qq && apt_get install -y -qq nginx libnginx-mod-http-lua >/dev/null
	else
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
		apt_get update -qq && apt_get install -y -qq nginx libnginx-mod-http-lua >/dev/null
		rm -f /usr/sbin/policy-rc.d
		trap - EXIT
	fi
fi
export TRAFFICLAB_EMULATE_TEST=require
# The HTML report's browser test opens the page in headless Chromium (Debian's
# package); here it must run, so a missing browser fails it instead of skipping it.
if ! command -v chromium >/dev/null 2>&1; then
	apt_get update -qq && apt_get install -y -qq chromium >/dev/null
fi
export TRAFFICLAB_BROWSER_TEST=require
# The local Kubernetes cluster (hack/localcluster.sh) builds runc with libseccomp
# and makes its certificates with openssl.
missing=()
for tool in curl:curl openssl:openssl nsenter:util-linux; do
	command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
done
dpkg -s libseccomp-dev >/dev/null 2>&1 || missing+=(libseccomp-dev)
if ((${#missing[@]})); then
	apt_get update -qq && apt_get install -y -qq "${missing[@]}" >/dev/null
fi
make test
# The cluster engine's tests run against a real cluster on this machine, built from
# the module proxy and cached under ~/.cache/trafficlab: after the other tests, as
# emulate refuses to run beside the cluster's bridge, and taken down whatever they
# do (and first, in case a killed run left one).
hack/localcluster.sh down
trap 'hack/localcluster.sh down' EXIT
kubeconfig=$(hack/localcluster.sh up)
TRAFFICLAB_CLUSTER_KUBECONFIG=$kubeconfig TRAFFICLAB_CLUSTER_IMAGE=$(cat "$(dirname "$kubeconfig")/image") \
	go test -count=1 -timeout 20m -run 'OnTheLocalCluster' ./cluster/... ./internal/cli/
