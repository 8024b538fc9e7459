#!/usr/bin/env bash
# localcluster.sh build|up|down: a real Kubernetes cluster on this machine, for the
# cluster engine's tests. Every component is built from the Go module proxy and
# cached under ~/.cache/trafficlab/localcluster/VERSION/bin, keyed by version.
#
#   build  builds what is not cached yet
#   up     builds, then starts the control plane (etcd, kube-apiserver,
#          kube-controller-manager, kube-scheduler) and the nodes (NODES, 2 unless
#          TRAFFICLAB_LOCALCLUSTER_NODES says), and prints the admin kubeconfig's
#          path once every node is Ready and metrics-server reads them; a DNS
#          server for the pods (trafficlab clusterdns, fed from the API server) and
#          metrics-server answer on the control plane's address, and kwok keeps
#          the fake nodes that tests make (annotated kwok.x-k8s.io/node=fake)
#   down   stops the pods, the components and containerd's shims, and removes the
#          nodes' network namespaces and cgroups, the pods' network namespaces,
#          the mounts, the bridge and the state
#
# Each node is a network namespace (as kind makes a container) on the control
# plane's bridge, its pods in 198.19.(128+i).0/24 on a bridge of the CNI bridge
# plugin, with its own containerd (runc, the trafficlab and pause images imported,
# as no registry is reachable), kubelet (cgroupfs under /tlc-node-i: the host's
# cgroups are v1, with no systemd) and kube-proxy (iptables, its rules in the
# node's namespace). They enter the node's network namespace alone (nsenter), not
# as ip netns exec does, which mounts a sysfs of its own that hides the cgroups.
#
# Addresses: the control plane answers on 198.19.255.1, on a bridge of its own
# (tlc-br0) where the nodes will join it; Services get 198.19.192.0/20, kwok's fake
# nodes' pods 198.19.96.0/19 (addresses only: nothing routes them). All of it is
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
NODES=${TRAFFICLAB_LOCALCLUSTER_NODES:-2}
CLUSTER_CIDR=198.19.128.0/18 # node i's pods in 198.19.(128+i).0/24
REPO=$(cd "$(dirname "$0")/.." && pwd)

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
	# The aggregation layer, for metrics-server: the API server proxies to it as
	# front-proxy-client, and metrics-server serves on the control plane's address.
	cert front-proxy-client "/CN=front-proxy-client"
	cert metrics-server "/CN=metrics-server" "subjectAltName=IP:$APISERVER_IP,DNS:metrics-server.kube-system.svc"
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
		if ! kill -0 "$(cat "$STATE/pids/$what")" 2>/dev/null; then
			log "$what exited; its log: $STATE/logs/$what.log"
			tail -20 "$STATE/logs/$what.log" >&2 || true
			return 1
		fi
		sleep 0.25
	done
	log "$what did not come up within ${secs}s; its log: $STATE/logs/$what.log"
	tail -20 "$STATE/logs/$what.log" >&2 || true
	return 1
}

# node_ip and pod_cidr are node i's address and pod range.
node_ip() { echo "198.19.255.$((10 + $1))"; }
pod_cidr() { echo "198.19.$((128 + $1)).0/24"; }

# images makes the trafficlab and pause images from this checkout's trafficlab,
# for every node's containerd to import.
images() {
	(cd "$REPO" && CGO_ENABLED=0 go build -o "$STATE/trafficlab" ./cmd/trafficlab)
	"$STATE/trafficlab" image -o "$STATE/trafficlab-image.tar" >&2
	"$STATE/trafficlab" image --pause -o "$STATE/pause-image.tar" >&2
	PAUSE_IMAGE=$(tar -xOf "$STATE/pause-image.tar" manifest.json | sed -n 's/.*"RepoTags":\["\([^"]*\)".*/\1/p')
	# The image the cluster's pods run, for the tests to name.
	tar -xOf "$STATE/trafficlab-image.tar" manifest.json | sed -n 's/.*"RepoTags":\["\([^"]*\)".*/\1/p' >"$STATE/image"
}

# node_up starts node i: a network namespace on the control plane's bridge, its
# containerd (runc, the bridge CNI plugin), kubelet and kube-proxy.
node_up() {
	local i=$1 name=node-$1 ns=tlc-node-$1 ip dir cidr gw
	ip=$(node_ip "$i")
	cidr=$(pod_cidr "$i")
	gw=${cidr%.0/24}.1
	dir=$STATE/nodes/$name
	mkdir -p "$dir/cni"
	ip netns add "$ns"
	ip link add "tlcv$i" type veth peer name eth0 netns "$ns"
	ip link set "tlcv$i" master "$BRIDGE" up
	ip -n "$ns" addr add "$ip/24" dev eth0
	ip -n "$ns" link set lo up
	ip -n "$ns" link set eth0 up
	ip -n "$ns" route add default via "$APISERVER_IP"
	ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1
	ip route add "$cidr" via "$ip"
	# The kubelet's cgroup root, in every v1 hierarchy; cpuset's needs its CPUs and
	# memory nodes before anything can join it.
	for h in /sys/fs/cgroup/*/; do
		[[ $(stat -fc %T "$h") == cgroupfs ]] || continue
		mkdir -p "$h/tlc-$name"
	done
	cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset/tlc-$name/cpuset.cpus"
	cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/tlc-$name/cpuset.mems"
	cert "kubelet-$name" "/O=system:nodes/CN=system:node:$name"
	cert "kubelet-serving-$name" "/CN=$name" "subjectAltName=IP:$ip,DNS:$name"
	kubeconfig "kubelet-$name"
	cat >"$dir/containerd.toml" <<TOML
version = 3
root = "$dir/containerd/root"
state = "$dir/containerd/state"
[grpc]
  address = "$dir/containerd.sock"
[ttrpc]
  address = "$dir/containerd.sock.ttrpc"
[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = "$PAUSE_IMAGE"
[plugins.'io.containerd.cri.v1.runtime']
  # Without CAP_SYS_RESOURCE containerd may not lower a container's OOM score.
  restrict_oom_score_adj = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["$BIN/cni"]
    conf_dir = "$dir/cni"
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
      BinaryName = "$BIN/runc"
TOML
	cat >"$dir/cni/10-bridge.conflist" <<CNI
{"cniVersion": "1.0.0", "name": "tlc", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$cidr", "gateway": "$gw"}]],
            "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$dir/cni-ipam"}},
  {"type": "loopback"}]}
CNI
	# nsenter enters the node's network namespace alone: ip netns exec would also
	# mount a sysfs of its own on /sys, hiding the cgroup mounts under it.
	PATH=$BIN:$PATH start "containerd-$name" nsenter --net="/var/run/netns/$ns" "$BIN/containerd" --config "$dir/containerd.toml"
	wait_for "containerd-$name" 30 "$BIN/ctr" -a "$dir/containerd.sock" version
	"$BIN/ctr" -a "$dir/containerd.sock" -n k8s.io images import "$STATE/trafficlab-image.tar" >/dev/null
	"$BIN/ctr" -a "$dir/containerd.sock" -n k8s.io images import "$STATE/pause-image.tar" >/dev/null
	local d=$STATE/pki
	cat >"$dir/kubelet.yaml" <<KUBELET
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# The host's cgroups are v1, with no systemd: cgroupfs, and each node's pods under
# a root of their own.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /tlc-$name
failSwapOn: false
containerRuntimeEndpoint: unix://$dir/containerd.sock
authentication:
  x509: {clientCAFile: $d/ca.crt}
  webhook: {enabled: false}
  anonymous: {enabled: false}
authorization: {mode: AlwaysAllow}
tlsCertFile: $d/kubelet-serving-$name.crt
tlsPrivateKeyFile: $d/kubelet-serving-$name.key
resolvConf: ""
clusterDNS: [$APISERVER_IP]
clusterDomain: cluster.local
podCIDR: $cidr
# Each node's pods' logs under its own state, not the host's /var/log/pods.
podLogsDir: $dir/pod-logs
# The disk is the machine's, shared with other work: at the default thresholds
# (imagefs.available<15%) the nodes went NoSchedule with disk-pressure while
# the machine still had 37 GB free, and image garbage collection (from 85 %
# used) would delete the trafficlab image, which the nodes cannot pull back.
# The runs write little: evict only when the disk is nearly full, never GC.
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, nodefs.inodesFree: 2%, imagefs.available: 2%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
KUBELET
	# --containerd is cAdvisor's flag: where it finds the node's containers for its
	# per-container metrics (/metrics/cadvisor), by default the one host socket.
	start "kubelet-$name" nsenter --net="/var/run/netns/$ns" "$BIN/kubelet" --config "$dir/kubelet.yaml" \
		--kubeconfig "$STATE/kubelet-$name.kubeconfig" --hostname-override "$name" --node-ip "$ip" \
		--root-dir "$dir/kubelet" --cert-dir "$dir/kubelet-pki" --containerd "$dir/containerd.sock"
	start "kube-proxy-$name" nsenter --net="/var/run/netns/$ns" "$BIN/kube-proxy" --config "$STATE/kube-proxy.conf" \
		--hostname-override "$name"
}

# api METHOD PATH JSON sends an object to the API server as the admin.
api() {
	local d=$STATE/pki
	curl -sf -X "$1" --cacert "$d/ca.crt" --cert "$d/admin.crt" --key "$d/admin.key" -H 'Content-Type: application/json' \
		-d "$3" "https://$APISERVER_IP:6443$2" >/dev/null
}

# metrics_server starts metrics-server on the control plane's address and
# registers it as the resource metrics API (metrics.k8s.io), as its manifest does
# in a cluster: an APIService in front of the Service kube-system/metrics-server,
# whose one endpoint is this process (the API server dials endpoints directly:
# --enable-aggregator-routing). It scrapes each kubelet every 15 s, as the
# scenario's HPA settings default to.
metrics_server() {
	local d=$STATE/pki
	start metrics-server "$BIN/metrics-server" --kubeconfig "$STATE/admin.kubeconfig" \
		--authentication-kubeconfig "$STATE/admin.kubeconfig" --authorization-kubeconfig "$STATE/admin.kubeconfig" \
		--bind-address "$APISERVER_IP" --secure-port 4443 \
		--tls-cert-file "$d/metrics-server.crt" --tls-private-key-file "$d/metrics-server.key" \
		--kubelet-preferred-address-types InternalIP --kubelet-certificate-authority "$d/ca.crt" \
		--kubelet-client-certificate "$d/admin.crt" --kubelet-client-key "$d/admin.key" --metric-resolution 15s
	api POST /api/v1/namespaces/kube-system/services \
		'{"apiVersion":"v1","kind":"Service","metadata":{"name":"metrics-server","namespace":"kube-system"},"spec":{"ports":[{"name":"https","port":443,"targetPort":4443}]}}'
	api POST /api/v1/namespaces/kube-system/endpoints \
		"{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"metrics-server\",\"namespace\":\"kube-system\"},\"subsets\":[{\"addresses\":[{\"ip\":\"$APISERVER_IP\"}],\"ports\":[{\"name\":\"https\",\"port\":4443}]}]}"
	api POST /apis/apiregistration.k8s.io/v1/apiservices \
		"{\"apiVersion\":\"apiregistration.k8s.io/v1\",\"kind\":\"APIService\",\"metadata\":{\"name\":\"v1beta1.metrics.k8s.io\"},\"spec\":{\"service\":{\"namespace\":\"kube-system\",\"name\":\"metrics-server\",\"port\":443},\"group\":\"metrics.k8s.io\",\"version\":\"v1beta1\",\"caBundle\":\"$(base64 -w0 "$d/ca.crt")\",\"groupPriorityMinimum\":100,\"versionPriority\":100}}"
}

# metrics_ready tells whether the resource metrics API lists every node.
metrics_ready() {
	local d=$STATE/pki n
	n=$(curl -sf --cacert "$d/ca.crt" --cert "$d/admin.crt" --key "$d/admin.key" \
		"https://$APISERVER_IP:6443/apis/metrics.k8s.io/v1beta1/nodes" | tr -d ' \n' | grep -o '"name":"node-[0-9]*"' | wc -l)
	((n == NODES))
}

# kwok keeps fake nodes for the tests that need only the control plane: the nodes
# annotated kwok.x-k8s.io/node=fake, which a test makes and deletes. It makes them
# Ready and keeps them so, and runs their pods without containers, by the stages
# its module ships (kustomize/stage: a node's initialize and heartbeat, a pod's
# ready, complete and delete), given with --config, which kwok needs. Their pods'
# addresses are in 198.19.96.0/19, none of the real nodes' or the Services'.
kwok() {
	local dir stages=$STATE/kwok-stages.yaml
	dir=$(cd "$ROOT/src/kwok" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
	for f in node/fast/node-initialize node/heartbeat/node-heartbeat pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
		cat "$dir/kustomize/stage/$f.yaml"
		echo ---
	done >"$stages"
	start kwok "$BIN/kwok" --kubeconfig "$STATE/admin.kubeconfig" --config "$stages" \
		--manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake --cidr 198.19.96.0/19 --node-ip 127.0.0.1
}

# kube_proxy_config writes the nodes' kube-proxy configuration and publishes it
# as kubeadm does, in the ConfigMap kube-system/kube-proxy (key config.conf),
# where trafficlab cluster reads the mode and minSyncPeriod.
kube_proxy_config() {
	cat >"$STATE/kube-proxy.conf" <<PROXY
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
iptables: {minSyncPeriod: 1s}
clusterCIDR: $CLUSTER_CIDR
clientConnection: {kubeconfig: $STATE/kube-proxy.kubeconfig}
# conntrack's table size is the host's, not the node's: leave it alone.
conntrack: {maxPerCore: 0}
PROXY
	local conf
	# The file as one JSON string: it has no quotes or backslashes to escape.
	conf=$(awk '{printf "%s\\n", $0}' "$STATE/kube-proxy.conf")
	api POST /api/v1/namespaces/kube-system/configmaps \
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"kube-proxy\",\"namespace\":\"kube-system\"},\"data\":{\"config.conf\":\"$conf\"}}"
}

# node_ready tells whether node NAME reports Ready.
node_ready() {
	local d=$STATE/pki
	curl -sf --cacert "$d/ca.crt" --cert "$d/admin.crt" --key "$d/admin.key" "https://$APISERVER_IP:6443/api/v1/nodes/$1" |
		tr -d ' \n' | grep -q '"type":"Ready","status":"True"'
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
		--authorization-mode Node,RBAC --kubelet-preferred-address-types InternalIP,Hostname \
		--requestheader-client-ca-file "$d/ca.crt" --requestheader-allowed-names front-proxy-client \
		--requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
		--requestheader-extra-headers-prefix X-Remote-Extra- \
		--proxy-client-cert-file "$d/front-proxy-client.crt" --proxy-client-key-file "$d/front-proxy-client.key" \
		--enable-aggregator-routing
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
	images
	# Cluster DNS for the pods, on the control plane's address: trafficlab's own
	# stand-in for CoreDNS, fed from the API server's Services and EndpointSlices.
	start clusterdns "$STATE/trafficlab" clusterdns --kubeconfig "$STATE/admin.kubeconfig" --listen "$APISERVER_IP:53"
	wait_for clusterdns 30 bash -c "exec 3<>/dev/tcp/$APISERVER_IP/53"
	cert kube-proxy "/CN=system:kube-proxy"
	kubeconfig kube-proxy
	kube_proxy_config
	for ((i = 0; i < NODES; i++)); do
		node_up "$i"
	done
	# Each node routes the other nodes' pods to them.
	for ((i = 0; i < NODES; i++)); do
		for ((j = 0; j < NODES; j++)); do
			((i == j)) || ip -n "tlc-node-$i" route add "$(pod_cidr "$j")" via "$(node_ip "$j")"
		done
	done
	for ((i = 0; i < NODES; i++)); do
		wait_for "kubelet-node-$i" 120 node_ready "node-$i"
	done
	log "$NODES nodes Ready"
	metrics_server
	wait_for metrics-server 90 metrics_ready
	log "metrics-server reads every node"
	kwok
	echo "$STATE/admin.kubeconfig"
}

down() {
	# The pods first: every process in a node's cgroups (apps, pause), then the
	# components, then containerd's shims, which outlive containerd.
	local procs
	procs=$(find /sys/fs/cgroup/pids/ -path '*/tlc-node-*' -name cgroup.procs -exec cat {} + 2>/dev/null || true)
	[[ -z $procs ]] || kill -9 $procs 2>/dev/null || true
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
	for exe in /proc/[0-9]*/exe; do
		[[ $(readlink "$exe" 2>/dev/null) == "$CACHE"/localcluster/*/bin/containerd-shim-runc-v2 ]] || continue
		pid=${exe#/proc/}
		kill -9 "${pid%/exe}" 2>/dev/null || true
	done
	# Mounts under the state (the kubelets' volumes, containerd's snapshots and
	# sandboxes), deepest first.
	{ grep -o " $STATE/[^ ]*" /proc/mounts || true; } | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
	# The pods' network namespaces (containerd names them cni-UUID), those made
	# since this cluster's state, then the nodes'.
	if [[ -d $STATE ]]; then
		find /var/run/netns -maxdepth 1 -name 'cni-*' -newer "$STATE" -printf '%f\n' 2>/dev/null | while read -r ns; do
			ip netns del "$ns" 2>/dev/null || true
		done
	fi
	for ns in $(ip netns list | awk '/^tlc-node-/ {print $1}'); do
		ip netns del "$ns"
	done
	ip link del "$BRIDGE" 2>/dev/null || true
	# The nodes' cgroups, deepest first, now that nothing runs in them.
	find /sys/fs/cgroup/*/ -maxdepth 1 -type d -name 'tlc-node-*' 2>/dev/null | while read -r root; do
		find "$root" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	# The kubelets' links to their containers' logs, in the host's one directory.
	find /var/log/containers -maxdepth 1 -type l -lname "$STATE/*" -delete 2>/dev/null || true
	rmdir /var/log/containers 2>/dev/null || true
	rm -rf "$STATE"
	# Killed processes linger until reaped: wait until none of the cluster's is left.
	for ((i = 0; i < 40; i++)); do
		leftover=$(ps -eo args= | grep -E "^($CACHE/localcluster/|$STATE/trafficlab |/trafficlab (serve|load|pause))" || true)
		[[ -z $leftover ]] && break
		sleep 0.25
	done
	[[ -z $leftover ]] || log "still running after down: $leftover"
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
