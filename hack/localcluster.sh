#!/usr/bin/env bash
# localcluster.sh build|up|down: a real Kubernetes cluster on this machine, for the
# cluster engine's tests. Every component is built from the Go module proxy and
# cached under ~/.cache/trafficlab/localcluster/VERSION/bin, keyed by version.
#
#   build  builds what is not cached yet
#   up     builds, then starts the control plane (etcd, kube-apiserver,
#          kube-controller-manager, kube-scheduler) and prints the admin kubeconfig's
#          path; nodes are not started yet
#   down   stops everything up started and removes its state, network and all
#
# Addresses: the control plane answers on 198.19.255.1, on a bridge of its own
# (tlc-br0) where the nodes will join it; Services get 198.19.192.0/20. All of it is
# inside 198.18.0.0/15 and outside what emulate uses (198.18.0.0/16 on interfaces,
# 198.19.0.0/16 for its ClusterIPs, which only its own namespaces route); emulate
# refuses to run while this bridge is up, so the two take turns.
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

STATE=${TRAFFICLAB_LOCALCLUSTER_STATE:-/var/lib/trafficlab-localcluster}
BRIDGE=tlc-br0
APISERVER_IP=198.19.255.1
SERVICE_CIDR=198.19.192.0/20
SERVICE_IP=198.19.192.1 # the kubernetes Service's ClusterIP: the range's first
ETCD=127.0.0.1:23790    # not etcd's own port, so as not to meet another etcd

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

# pki makes the cluster's certificate authority and the certificates of the
# API server, the admin and the control plane's clients, and the service accounts'
# signing key.
pki() {
	local d=$STATE/pki
	mkdir -p "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=trafficlab-localcluster-ca \
		-keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
	openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
	openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
	cert apiserver "/CN=kube-apiserver" \
		"subjectAltName=IP:$APISERVER_IP,IP:$SERVICE_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
	cert admin "/O=system:masters/CN=admin"
	cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
	cert controller-manager "/CN=system:kube-controller-manager"
	cert scheduler "/CN=system:kube-scheduler"
}

# cert NAME SUBJECT [EXTENSION] signs a key and certificate with the cluster's CA.
cert() {
	local d=$STATE/pki name=$1 subj=$2 ext=${3:-}
	openssl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$d/$name.key" -out "$d/$name.csr" 2>/dev/null
	local extfile=$d/$name.ext
	echo "${ext:-basicConstraints=CA:FALSE}" >"$extfile"
	openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 30 \
		-extfile "$extfile" -out "$d/$name.crt" 2>/dev/null
}

# kubeconfig NAME writes a kubeconfig for the client certificate NAME.
kubeconfig() {
	local name=$1 d=$STATE/pki
	cat >"$STATE/$name.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: localcluster
  cluster: {server: "https://$APISERVER_IP:6443", certificate-authority: $d/ca.crt}
users:
- name: $name
  user: {client-certificate: $d/$name.crt, client-key: $d/$name.key}
contexts:
- name: localcluster
  context: {cluster: localcluster, user: $name}
current-context: localcluster
KC
}

# start NAME CMD... runs a component in the background, its output in
# $STATE/logs/NAME.log and its process id in $STATE/pids/NAME.
start() {
	local name=$1
	shift
	mkdir -p "$STATE/logs" "$STATE/pids"
	setsid "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null &
	echo $! >"$STATE/pids/$name"
}

# wait_for WHAT SECONDS CMD... retries CMD until it succeeds, or fails naming WHAT
# and its log.
wait_for() {
	local what=$1 secs=$2
	shift 2
	for ((i = 0; i < secs * 4; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.25
	done
	log "$what did not come up within ${secs}s; its log: $STATE/logs/$what.log"
	tail -20 "$STATE/logs/$what.log" >&2 || true
	return 1
}

up() {
	[[ $EUID -eq 0 ]] || { log "up needs root"; exit 1; }
	if [[ -d $STATE ]]; then
		log "$STATE exists: a cluster is up, or a killed one left it; run $0 down first"
		exit 1
	fi
	build_kubernetes
	build_runtime
	mkdir -p "$STATE"
	ip link add "$BRIDGE" type bridge
	ip addr add "$APISERVER_IP/24" dev "$BRIDGE"
	ip link set "$BRIDGE" up
	pki
	kubeconfig admin
	kubeconfig controller-manager
	kubeconfig scheduler
	local d=$STATE/pki
	start etcd "$BIN/etcd" --data-dir "$STATE/etcd" --listen-client-urls "http://$ETCD" --advertise-client-urls "http://$ETCD" \
		--listen-peer-urls http://127.0.0.1:23800 --initial-advertise-peer-urls http://127.0.0.1:23800 \
		--initial-cluster default=http://127.0.0.1:23800
	wait_for etcd 30 curl -sf "http://$ETCD/health"
	start kube-apiserver "$BIN/kube-apiserver" --etcd-servers "http://$ETCD" \
		--bind-address "$APISERVER_IP" --advertise-address "$APISERVER_IP" --secure-port 6443 \
		--service-cluster-ip-range "$SERVICE_CIDR" --allow-privileged \
		--client-ca-file "$d/ca.crt" --tls-cert-file "$d/apiserver.crt" --tls-private-key-file "$d/apiserver.key" \
		--kubelet-client-certificate "$d/apiserver-kubelet-client.crt" --kubelet-client-key "$d/apiserver-kubelet-client.key" \
		--service-account-key-file "$d/sa.pub" --service-account-signing-key-file "$d/sa.key" \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--authorization-mode Node,RBAC
	wait_for kube-apiserver 120 curl -sf --cacert "$d/ca.crt" --cert "$d/admin.crt" --key "$d/admin.key" \
		"https://$APISERVER_IP:6443/readyz"
	start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$STATE/controller-manager.kubeconfig" \
		--authentication-kubeconfig "$STATE/controller-manager.kubeconfig" --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
		--service-account-private-key-file "$d/sa.key" --root-ca-file "$d/ca.crt" \
		--cluster-signing-cert-file "$d/ca.crt" --cluster-signing-key-file "$d/ca.key" \
		--use-service-account-credentials --leader-elect=false --bind-address 127.0.0.1 --secure-port 10257
	start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$STATE/scheduler.kubeconfig" \
		--authentication-kubeconfig "$STATE/scheduler.kubeconfig" --authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
		--leader-elect=false --bind-address 127.0.0.1 --secure-port 10259
	wait_for kube-controller-manager 60 curl -sfk https://127.0.0.1:10257/healthz
	wait_for kube-scheduler 60 curl -sfk https://127.0.0.1:10259/healthz
	log "control plane up"
	echo "$STATE/admin.kubeconfig"
}

down() {
	if [[ -d $STATE/pids ]]; then
		for f in "$STATE"/pids/*; do
			[[ -e $f ]] || continue
			kill "$(cat "$f")" 2>/dev/null || true
		done
		sleep 1
		for f in "$STATE"/pids/*; do
			[[ -e $f ]] || continue
			kill -9 "$(cat "$f")" 2>/dev/null || true
		done
	fi
	ip link del "$BRIDGE" 2>/dev/null || true
	rm -rf "$STATE"
	log "down"
}

case ${1:-} in
build)
	build_kubernetes
	build_runtime
	log "binaries in $BIN"
	;;
up) up ;;
down) down ;;
*)
	echo "usage: $0 build|up|down" >&2
	exit 2
	;;
esac
