package tpuwebhook

// KubeRay's labels and names (KR = ray-project/kuberay/ray-operator@v1.5.0).
const (
	ClusterLabel      = "ray.io/cluster"                    // KR controllers/ray/utils/constant.go:19
	rayNodeTypeLabel  = "ray.io/node-type"                  // constant.go:20
	GroupLabel        = "ray.io/group"                      // constant.go:21
	ReplicaNameLabel  = "ray.io/worker-group-replica-name"  // constant.go:35
	ReplicaIndexLabel = "ray.io/worker-group-replica-index" // constant.go:39
	HostIndexLabel    = "ray.io/replica-host-index"         // constant.go:42
	k8sAppNameLabel   = "app.kubernetes.io/name"            // constant.go:89
	k8sCreatedByLabel = "app.kubernetes.io/created-by"      // constant.go:90
	kubeRayAppName    = "kuberay"                           // constant.go:117
	kubeRayComponent  = "kuberay-operator"                  // constant.go:120
	headlessSuffix    = "headless"                          // constant.go:124
)

// The webhook's own names and constants.
const (
	tpuWebhookMutatingConfig   = "kuberay-tpu-mutating-webhook-cfg"              // deployments/mutating-webhook-cfg.yaml
	tpuWebhookMutatingName     = "kuberay-tpu-webhook.ray-system.svc"            // idem
	tpuWebhookValidatingConfig = "kuberay-tpu-validating-webhook-cfg"            // deployments/validating-webhook-cfg.yaml
	tpuWebhookValidatingName   = "raycluster-kuberay-tpu-webhook.ray-system.svc" // idem
	// LegacyReplicaLabel is the label in which the webhook names a Pod's slice replica
	// ("<group>-<replica>") when KubeRay does not index the Pods itself.
	LegacyReplicaLabel   = "replicaIndex" // WH:85
	whTPUProcessPortBase = 8471           // WH:80
	whMegascalePortBase  = 8081           // WH:81
	whTPU7xPrefix        = "tpu7x"        // WH:83
)
