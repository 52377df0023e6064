// Package nodeagent runs, beside each emulated cluster's kube-apiserver, what acts on its Pods
// where a GKE cluster has kubelets and the cluster autoscaler: the node agent, which plays the
// kubelet of the emulated nodes (a bound Pod starts at once, with a Pod IP from its node's /24; a
// Pod being deleted goes; a failed host's Pods fail, NodeLost), and node auto-provisioning's loop,
// which gives Pods the scheduler left unschedulable a node pool of their TPU slice and records the
// cluster autoscaler's events on them, trying a custom ComputeClass's priorities in order for the
// Pods that select one (agent.go, pods.go, nap.go and nap_class.go, each with its sources).
//
// It is built as kwok builds each of its controllers: New takes a [Config] of the cluster's
// Kubernetes client, a Logf and small functions for what it needs from the emulated GKE (a
// [ClusterSnapshot] of the cluster's autoscaling settings and node pools, the creation of a node
// pool through GKE's CreateNodePool path, a Pod's TPU request and slice replica as GKE's TPU
// webhook reads them), and Run serves until its context ends. It holds no pointer to the emulator
// or its clusters and no lock of the emulator's: each function it is given takes that lock itself
// and releases it before returning, and the agent calls Kubernetes with none held. Package
// clusterkube starts the agent when a cluster's first workload appears, with the Config package
// emulator builds (nodeagent_config.go).
//
// What NAP decides (the pool a Pod's TPU request needs, what it counts against the cluster's
// resource limits, its name and minimum versions) is GKE's rules, in package rules.
//
// nodeagent may import rules, apierr, gketpu, machines, containerpb, k8s.io/api, apimachinery,
// client-go and the standard library. It must not import package emulator, internal/provider,
// internal/gke or internal/tpu; `go list -deps ./internal/emulator/nodeagent` shows it.
package nodeagent
