// Package rules is GKE's semantics on their own: the versions GKE offers and how a requested
// version resolves; cluster and node pool names and locations; node pool planning (the TPU rules
// from gketpu's tables, placement and workload policies, autoscaling, queued provisioning and
// flex-start, release channel management); resource and node labels; maintenance policies and
// their recurrence rules; node auto-provisioning (Cluster.autoscaling's limits, the pool a Pod's
// TPU request needs, its name, what it counts against the limits); and what GKE adds to what it
// was sent (reserved labels, OAuth scopes, autoscaling and cluster defaults). Each rule cites its
// source next to the code.
//
// It holds no locks, does no I/O and starts no goroutines: every function takes what it checks
// and returns the result or an [apierr.Error] in GKE's words. The emulator's state, its RPC
// handlers and anything that needs a running emulator stay in package emulator, which calls
// into this one.
//
// rules may import apierr, gketpu, machines, containerpb, protobuf, the standard library and
// apimachinery's pure validation (node labels are Kubernetes labels, checked in its words). It
// must not import package emulator, internal/tpu, internal/provider, internal/gke or a
// Kubernetes client; its tests may hold it against internal/tpu, as gketpu's do.
package rules
