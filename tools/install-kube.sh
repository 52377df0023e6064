#!/usr/bin/env bash
# Builds the pinned kube-apiserver, etcd, kube-scheduler and kube-controller-manager that back the
# GKE emulator's clusters, from the Go module proxy (the nested module tools/kube pins them), into a
# per-machine cache folder, with KubeRay's ray-operator and CRDs of the version that the main
# go.mod requires next to them. Whatever is already present is reused, so a second run is a no-op.
#
# Usage: tools/install-kube.sh [cache-dir]
# The last line printed is `kube: <dir>`; point RAYTPU_KUBE_BIN_DIR at <dir> to use another copy.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
CACHE=${1:-${RAYTPU_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/raytpu/tools}}

# Versions come from the pinned modules, never from a second list here.
K8S_VERSION=$(cd "$here/kube" && go list -m -f '{{.Version}}' k8s.io/kubernetes)         # v1.34.4
ETCD_VERSION=$(cd "$here/kube" && go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3) # v3.6.4
KUBERAY_VERSION=$(cd "$root" && go list -m -f '{{.Version}}' github.com/ray-project/kuberay/ray-operator)

dir="$CACHE/kubernetes-$K8S_VERSION"
mkdir -p "$dir"

minor=$(echo "$K8S_VERSION" | cut -d. -f2)
pkg=k8s.io/component-base/version
# Without these -X flags /version reports v0.0.0-master, which version-parsing clients reject.
ldv="-X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"

# kube-apiserver serves every cluster; kube-scheduler places their Pods and
# kube-controller-manager runs their controllers once a cluster has workloads. All three come from
# k8s.io/kubernetes at the pinned version.
for cmd in kube-apiserver kube-scheduler kube-controller-manager; do
  if [ ! -x "$dir/$cmd" ] || ! "$dir/$cmd" --version 2>/dev/null | grep -qx "Kubernetes $K8S_VERSION"; then
    echo "building $cmd $K8S_VERSION from the Go module proxy (about 3 minutes on a cold cache)"
    (cd "$here/kube" && GOFLAGS=-buildvcs=false go build -trimpath -ldflags "-s -w $ldv" \
      -o "$dir/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd")
    mv "$dir/$cmd.tmp" "$dir/$cmd"
  fi
done

if [ ! -x "$dir/etcd" ] || ! "$dir/etcd" --version 2>/dev/null | grep -q "etcd Version: ${ETCD_VERSION#v}"; then
  echo "building etcd $ETCD_VERSION from the Go module proxy"
  (cd "$here/kube" && GOFLAGS=-buildvcs=false go build -trimpath -ldflags "-s -w" \
    -o "$dir/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$dir/etcd.tmp" "$dir/etcd"
fi

# KubeRay's operator, as GKE's Ray Operator add-on runs it. It is built in its own module (go
# install pkg@version) because it needs its own dependency versions (k8s.io/* v0.34.1 and
# controller-runtime v0.22.1 for v1.5.0), not tools/kube's; its go.mod has no replace directives.
# CGO is only for the upstream image's FIPS build (ray-operator/Dockerfile).
if [ ! -x "$dir/ray-operator" ] ||
  ! go version -m "$dir/ray-operator" 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/ray-project/kuberay/ray-operator[[:space:]]+$KUBERAY_VERSION([[:space:]]|\$)"; then
  echo "building KubeRay's ray-operator $KUBERAY_VERSION from the Go module proxy (about 3 minutes on a cold cache)"
  gobin=$(mktemp -d)
  (cd "$gobin" && GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOBIN="$gobin" go install -trimpath -ldflags "-s -w" \
    "github.com/ray-project/kuberay/ray-operator@$KUBERAY_VERSION")
  mv "$gobin/ray-operator" "$dir/ray-operator"
  rm -rf "$gobin"
fi

crds="$dir/kuberay-crds"
if [ "$(cat "$crds/VERSION" 2>/dev/null || true)" != "$KUBERAY_VERSION" ]; then
  echo "copying the KubeRay $KUBERAY_VERSION CRDs"
  src=$(cd "$root" && go mod download -json "github.com/ray-project/kuberay/ray-operator@$KUBERAY_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  rm -rf "$crds.tmp" && mkdir -p "$crds.tmp"
  cp "$src"/config/crd/bases/ray.io_*.yaml "$crds.tmp/"
  chmod -R u+w "$crds.tmp"
  echo "$KUBERAY_VERSION" > "$crds.tmp/VERSION"
  rm -rf "$crds" && mv "$crds.tmp" "$crds"
fi

"$dir/kube-apiserver" --version >/dev/null
"$dir/kube-scheduler" --version >/dev/null
"$dir/kube-controller-manager" --version >/dev/null
"$dir/etcd" --version >/dev/null
go version -m "$dir/ray-operator" >/dev/null
ls "$crds"/ray.io_rayclusters.yaml "$crds"/ray.io_rayjobs.yaml "$crds"/ray.io_rayservices.yaml >/dev/null
echo "kube: $dir"
