#!/usr/bin/env bash
# localcluster.sh build|up|down: a real Kubernetes cluster on this machine, for the
# cluster engine's tests. Every component is built from the Go module proxy and
# cached under ~/.cache/trafficlab/localcluster/VERSION/bin, keyed by version.
#
#   build  builds what is not cached yet (cold: about 25 minutes on 2 cores)
#
# Kubernetes' own module (k8s.io/kubernetes) replaces its k8s.io/* dependencies with
# ./staging, which its published module does not hold: the build module here
# replaces each with the published module of the same minor version, as the
# Kubernetes release notes pair them (v1.36.3 with v0.36.3).
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.36.3}
CACHE=${TRAFFICLAB_CACHE:-$HOME/.cache/trafficlab}
ROOT=$CACHE/localcluster/$K8S_VERSION
BIN=$ROOT/bin

log() { echo "localcluster: $*" >&2; }

# build_kubernetes builds the control plane, the kubelet and kube-proxy.
build_kubernetes() {
	local cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy) missing=()
	for c in "${cmds[@]}"; do [[ -x $BIN/$c ]] || missing+=("$c"); done
	((${#missing[@]})) || return 0
	local src=$ROOT/src/kubernetes staging=v0.${K8S_VERSION#v1.}
	mkdir -p "$src" "$BIN"
	log "building ${missing[*]} $K8S_VERSION (staging modules $staging) in $src"
	local mod
	mod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
	{
		echo "module trafficlab.local/k8sbuild"
		echo
		echo "go 1.26"
		echo
		echo "require k8s.io/kubernetes $K8S_VERSION"
		echo
		echo "replace ("
		sed -n 's#^\s*\(k8s.io/[^ ]*\) => ./staging/src/.*#\t\1 => \1 '"$staging"'#p' "$mod"
		echo ")"
	} >"$src/go.mod"
	local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1"
	ldflags+=" -X k8s.io/component-base/version.gitMinor=$(cut -d. -f2 <<<"$K8S_VERSION")"
	(cd "$src" && for c in "${missing[@]}"; do
		log "go build $c"
		CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$BIN/$c" "k8s.io/kubernetes/cmd/$c"
	done)
}

# build_go builds package pkg of module mod at version ver as $BIN/name, unless
# cached: from a module of its own that requires mod, so that mod's replace
# directives (which a dependency's go.mod cannot impose) are left out. cgo is off
# unless a fifth argument gives build tags that need it.
build_go() {
	local name=$1 mod=$2 ver=$3 pkg=$4 tags=${5:-}
	[[ -x $BIN/$name ]] && return 0
	local src=$ROOT/src/$name
	mkdir -p "$src" "$(dirname "$BIN/$name")"
	printf 'module trafficlab.local/build/%s\n\ngo 1.26\n\nrequire %s %s\n' "$name" "$mod" "$ver" >"$src/go.mod"
	log "go build $name ($mod $ver)"
	local cgo=0
	[[ -n $tags ]] && cgo=1
	(cd "$src" && CGO_ENABLED=$cgo GOFLAGS=-mod=mod go build -trimpath -tags "$tags" -ldflags "-s -w" -o "$BIN/$name" "$pkg")
	# go build -o of a package that is not a main writes an archive, not a program.
	if [[ $(head -c4 "$BIN/$name" | od -An -c | tr -d ' ') != '177ELF' ]]; then
		rm -f "$BIN/$name"
		log "$pkg built no program"
		return 1
	fi
}

# build_runtime builds etcd, containerd and its runc shim, ctr, runc, the CNI
# plugins, metrics-server and kwok, at the versions the module proxy serves here.
build_runtime() {
	build_go etcd go.etcd.io/etcd/server/v3 v3.6.8 go.etcd.io/etcd/server/v3
	build_go containerd github.com/containerd/containerd/v2 v2.4.2 github.com/containerd/containerd/v2/cmd/containerd
	build_go containerd-shim-runc-v2 github.com/containerd/containerd/v2 v2.4.2 github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
	build_go ctr github.com/containerd/containerd/v2 v2.4.2 github.com/containerd/containerd/v2/cmd/ctr
	# runc filters system calls with libseccomp (apt: libseccomp-dev), through cgo.
	build_go runc github.com/opencontainers/runc v1.5.2 github.com/opencontainers/runc seccomp
	for p in main/bridge ipam/host-local main/loopback; do
		build_go "cni/${p#*/}" github.com/containernetworking/plugins v1.10.0 "github.com/containernetworking/plugins/plugins/$p"
	done
	build_go metrics-server sigs.k8s.io/metrics-server v0.9.0 sigs.k8s.io/metrics-server/cmd/metrics-server
	build_go kwok sigs.k8s.io/kwok v0.8.0 sigs.k8s.io/kwok/cmd/kwok
}

case ${1:-} in
build)
	build_kubernetes
	build_runtime
	log "binaries in $BIN"
	;;
*)
	echo "usage: $0 build" >&2
	exit 2
	;;
esac
