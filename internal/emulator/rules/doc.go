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
//
// # The rules and their sources
//
// The emulator accepts what GKE accepts and refuses what GKE refuses, each rule from a named
// source, cited here and next to its code. Quoted texts are GKE's own words; elsewhere the
// message is the emulator's. Rules marked inferred go beyond what a source states.
//
// Queued provisioning (queuedProvisioning.enabled), per Config Connector's record of GKE's
// validation (k8s-config-connector#11085): autoscaling must be enabled, its minimum (and total
// minimum) 0, initialNodeCount 0. Reservation affinity must be NO_RESERVATION, set explicitly:
// "Queued_provisioning requires reservation affinity to be set to none"
// (terraform-provider-google#18341). On TPUs it needs flex-start: "Queued_provisioning doesn't
// support TPUs" (users' field notes); with flex-start it is taken (cluster-toolkit#5218). GKE
// reports such a pool with location policy ANY, the cloud.google.com/gke-queued=true:NoSchedule
// taint and SHORT_LIVED upgrades, and refuses a resize with "Manual resizing of queued
// provisioning node pool (NAME) to a value other than 0 is not allowed." (a recorded GKE
// session in k8s-config-connector).
//
// Flex-start (config.flexStart): "Flex start node pools require autoscaling enabled." and "Flex
// start node pools require initial node count to be set to 0." (users' field notes); on TPUs GKE
// 1.33.0-gke.1712000 or later and not v3 or v4, and a maxRunDuration of at most seven days
// (GKE's "About flex-start provisioning mode"; the seven-day refusal is inferred from "for up to
// seven days"). Other tools' client-side checks (flex-start with Spot or a reservation,
// auto-repair off, as cluster-toolkit#5111's TPU blueprints ask, queued provisioning with Spot)
// are not GKE rules and are not enforced.
//
// Autoscaling (nodePool.autoscaling) is stored and reported with GKE's default location policy
// and replaced by SetNodePoolAutoscaling and UpdateCluster's desiredNodePoolAutoscaling; the
// emulator never scales. GKE's "Node_pool_autoscaling.max_node_count and
// node_pool_autoscaling.total_max_node_count cannot be both set to zero." and "... cannot be both
// greater than zero."; per-location and total fields are mutually exclusive and minimums at most
// their maximums (containerpb). A multi-host TPU slice's per-zone maximum must be its host count:
// "Maximum node count 0 is not a valid size of TPU pod slice with topology "2x2x4"" (field
// notes; vllm-project/ci-infra#545; per-zone counts "satisfy API requirements for fixed-size
// TPU slices", cluster-toolkit#5111), other sizes inferred. Location policy ANY is not required:
// ci-infra#545 sends it by its own reasoning, and no refusal of BALANCED is known.
//
// Reservation affinity (ANY_RESERVATION, SPECIFIC_RESERVATION with key
// compute.googleapis.com/reservation-name and values, NO_RESERVATION) and Spot are stored and
// reported as sent; GKE's only refusal found is queued provisioning's.
//
// Placement: a tpu_topology on a single-host pool gets "TPU topology can't be specified with
// single-host TPU slice pool; please remove the tpu_topology from the node pool creation request
// ..." (xpk#825), a workload policy's acceleratorTopology included, since xpk#825 met it so; a
// multi-host tpu7x slice needs a workload policy, not COMPACT: "Creation of a managed instance
// group with tpu7x-standard-4t machine type with placement policy is not supported. Use workload
// policy instead." (vllm-project/ci-infra#547; gketpu).
//
// Versions follow the aliases containerpb documents ("latest", "1.X", "1.X.Y", "1.X.Y-gke.N",
// "" and "-"). A node pool defaults to the control plane's version and "-" is that version; a
// node alias picks the highest offered version not newer than the control plane (inferred), as
// nodes "cannot be newer than the control plane version" (GKE versioning docs): "Node version
// "X" must not have a greater minor version than master version "Y"." A version GKE does not offer
// is "unsupported"; a malformed one gets "Version "X" is invalid. It should have the form 1.X,
// 1.X.Y, 1.X.Y-.*, 'latest'". A cluster created in a release channel takes only that channel's
// versions ("Master version must be one of "RAPID" channel supported versions [...]."), aliases
// resolving among them; without a channel, and for upgrades, any offered version.
//
// Labels: resource labels follow Google's label requirements (at most 64; keys and values of
// lowercase letters, digits, '_', '-' and international characters, keys starting with a letter,
// at most 63 bytes: "Resource_labels.value must be less than 63 bytes."); node labels follow
// Kubernetes' syntax, and labels in the kubernetes.io and k8s.io namespaces other than the
// kubelet's own get "Applying kubernetes label is not allowed: KEY.".
//
// Maintenance policies (rules/maintenance.go), at creation and by SetMaintenancePolicy, after GKE's
// "Maintenance windows and exclusions" pages: a daily window HH:MM, reported lasting PT4H0M0S, or a
// recurring window whose RRULE (DAILY, WEEKLY, MONTHLY; not HOURLY, MINUTELY, SECONDLY) leaves 48
// hours of maintenance in any 32 days, counting blocks of 4 hours or more; at most 20 exclusions,
// at most 3 NO_UPGRADES, which last at most 30 days and leave 48 free hours in any 32 days
// ("maintenance policy would go longer than 32d without 48h maintenance availability"); other
// scopes end at most 180 days ahead and need a release channel. SetMaintenancePolicy needs the
// policy's current resourceVersion, new after every change; a stale one gets 409 ABORTED.
package rules
