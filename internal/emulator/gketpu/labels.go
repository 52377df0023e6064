package gketpu

// What GKE puts on the nodes of a TPU pool.
const (
	// LabelAccelerator and LabelTopology: TPULabel and TPUTopologyLabel in
	// GoogleCloudPlatform/cluster-autoscaler@1c2a6860a5e6ed5fd0bd40a3de02273963113fea:
	// pkg/cloudprovider/gke/labels/system_labels.go; xpk selects on both
	// (AcceleratorTypeToAcceleratorCharacteristics in src/xpk/core/system_characteristics.py).
	LabelAccelerator = "cloud.google.com/gke-tpu-accelerator"
	LabelTopology    = "cloud.google.com/gke-tpu-topology"
	// LabelNodePool names a node's pool on every GKE node (xpk lists pools by it:
	// src/xpk/commands/cluster.py).
	LabelNodePool = "cloud.google.com/gke-nodepool"
	// ResourceName is the chips' extended resource (xpk: resource_type 'google.com/tpu') and the
	// key of the TPU taint (xpk tolerates key google.com/tpu: src/xpk/commands/workload.py).
	ResourceName = "google.com/tpu"
	// TaintValue and TaintEffect complete the taint: google.com/tpu=present:NoSchedule, the form
	// GKE gives accelerator nodes (nvidia.com/gpu=present:NoSchedule on GPU nodes,
	// kubernetes/kubernetes#61132). No source read here shows the TPU value itself.
	TaintValue  = "present"
	TaintEffect = "NoSchedule"
)
