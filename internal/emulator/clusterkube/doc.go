// Package clusterkube runs what runs beside a cluster's kube-apiserver, as in a GKE cluster, each
// part started only once the cluster needs it, and stopped with the kube-apiserver:
//   - on the cluster's first workload (a Pod; a Deployment, ReplicaSet, StatefulSet, DaemonSet, Job
//     or CronJob; a Namespace being deleted): kube-scheduler and kube-controller-manager
//     (k8s.io/kubernetes at the pinned version, built by `make tools`), so that Kubernetes itself
//     places Pods and runs the controllers of the objects users apply
//     (kubeproc/controller_manager.go), and the node agent (package nodeagent), which plays the
//     kubelet of the emulated nodes and runs node auto-provisioning;
//   - with the Ray Operator add-on, on the first RayCluster, RayJob or RayService: KubeRay's
//     ray-operator (ray.go), stopped again when the add-on is disabled.
//
// The processes are children of the emulator like every kube-apiserver, log to <component>.log in
// the cluster's folder, run with a kubeconfig of the emulator's token (cluster-admin), leader
// election and serving off so that several run side by side, and are started again if they exit.
//
// It is built as nodeagent and tpuwebhook are: [New] takes a [Config] of the cluster's clients,
// its kube-apiserver's address, CA and token, the emulator's process group and binaries, and
// functions (the node agent's Config, Logf), and returns a [Runtime] that runs until [Runtime.Stop]
// or its context ends. It holds no pointer to the emulator or its clusters and none of their
// locks. Package emulator starts a cluster's Runtime with its kube-apiserver, stops it before the
// kube-apiserver, and arms and disarms its Ray part as the add-on's CRDs come and go.
//
// # Imports
//
// clusterkube may import kubeproc, nodeagent, k8s.io/api, apimachinery, client-go and the
// standard library. It must not import package emulator, internal/provider, internal/gke or
// internal/tpu; package emulator imports it, never the other way.
// `go list -deps ./internal/emulator/clusterkube` shows it. Its own test runs without Kubernetes
// binaries, on client-go's fake clients; the emulator's tests run it against real ones.
package clusterkube
