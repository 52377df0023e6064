package tpu

// Kubernetes names that GKE puts on TPU nodes and that Ray and KubeRay select on (GKE "About TPUs
// in GKE"; domain reference sections 5 and 6).
const (
	LabelAccelerator  = "cloud.google.com/gke-tpu-accelerator"
	LabelTopology     = "cloud.google.com/gke-tpu-topology"
	LabelNodePool     = "cloud.google.com/gke-nodepool"
	LabelInstanceType = "node.kubernetes.io/instance-type"
	LabelZone         = "topology.kubernetes.io/zone"
	// ResourceName is the extended resource of TPU chips, and the key of the TPU taint.
	ResourceName = "google.com/tpu"
	// TaintValue and TaintEffect complete the taint GKE puts on every TPU node.
	TaintValue  = "present"
	TaintEffect = "NoSchedule"
)
