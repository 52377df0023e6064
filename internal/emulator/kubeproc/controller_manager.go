package kubeproc

import "strings"

// kube-controller-manager of the pinned k8s.io/kubernetes runs the controllers of a GKE cluster
// that act on what users apply (the workloads of the kubernetes and helm providers, KubeRay's
// objects): Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs and CronJobs get their Pods;
// ownerReferences are garbage-collected (kubernetes.io/docs/concepts/architecture/
// garbage-collection: KubeRay relies on it to remove a RayCluster's Pods and Services, and a
// RayJob's or RayService's RayClusters); a deleted Namespace is emptied and removed; Services get
// Endpoints and EndpointSlices; Pods on nodes that no longer exist are collected after PodGC's
// quarantine (pkg/controller/podgc). It runs outside the cluster with a kubeconfig, as
// kube-scheduler does.
//
// Controllers left out, and why:
//   - node-lifecycle-controller: the emulated nodes have no kubelet to renew their Leases, so it
//     would find every node gone after its grace period; the node agent plays its part for a
//     failed host (internal/emulator/nodeagent). Hence also no node-ipam-controller (the node
//     agent hands out Pod addresses) and no ttl-controller (which annotates nodes for kubelets).
//   - cloud-node-lifecycle, service-lb and node-route controllers: a cloud provider's, which GKE
//     runs outside kube-controller-manager.
//   - the persistent volume and CSI controllers, certificate signing, token and bootstrap
//     controllers, resource quota and horizontal Pod autoscaling: the emulator models no storage,
//     no kubelet credentials, no quotas and no metrics.
var controllerManagerControllers = []string{
	"deployment-controller", "replicaset-controller", "statefulset-controller", "daemonset-controller",
	"job-controller", "cronjob-controller", "ttl-after-finished-controller", "replicationcontroller-controller",
	"garbage-collector-controller", "namespace-controller", "serviceaccount-controller",
	"endpoints-controller", "endpointslice-controller", "endpointslice-mirroring-controller",
	"pod-garbage-collector-controller", "disruption-controller", "taint-eviction-controller",
}

// ControllerManagerArgs are kube-controller-manager's flags for a cluster: its kubeconfig, the
// controllers above, and no leader election or serving, so that several run side by side.
func ControllerManagerArgs(kubeconfig string) []string {
	return append(componentArgs(kubeconfig), "--controllers="+strings.Join(controllerManagerControllers, ","))
}

// SchedulerArgs are kube-scheduler's flags for a cluster: its kubeconfig, and no leader election
// or serving, so that several run side by side.
func SchedulerArgs(kubeconfig string) []string { return componentArgs(kubeconfig) }

// componentArgs are the flags kube-scheduler and kube-controller-manager share.
func componentArgs(kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		// No serving: nothing reads the health or metrics endpoints of either here.
		"--secure-port=0",
		"--profiling=false",
	}
}
