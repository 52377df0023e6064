package emulator

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/kubeproc"
)

// GKE's KubeRay TPU webhook, as the Ray Operator add-on's clusters get it: a mutating webhook on
// the creation of KubeRay's Pods and a validating webhook on the creation of RayClusters, served
// over HTTPS by the emulator (one server for every cluster, a path per cluster) and registered in
// each cluster as MutatingWebhookConfiguration and ValidatingWebhookConfiguration with the
// server's own CA as caBundle, so that the kube-apiserver calls it as it would call the webhook's
// Service. It follows the webhook's source, cited as
//
//	WH = ai-on-gke/kuberay-tpu-webhook@ef658db45757e88abc584b0d17fbab930b45316f:main.go
//	     (2026-05-20; tag kuberay-tpu-webhook/v1.3.5 differs only in the lastAdmitted key)
//
// and its registration (deployments/mutating-webhook-cfg.yaml, validating-webhook-cfg.yaml at the
// same commit). What GKE's add-on ships exactly is not documented; this is the webhook that
// GKE's TPU guides for Ray point to.

// KubeRay's labels and names (KR = ray-project/kuberay/ray-operator@v1.5.0).
const (
	rayClusterLabel      = "ray.io/cluster"                    // KR controllers/ray/utils/constant.go:19
	rayNodeTypeLabel     = "ray.io/node-type"                  // constant.go:20
	rayGroupLabel        = "ray.io/group"                      // constant.go:21
	rayReplicaNameLabel  = "ray.io/worker-group-replica-name"  // constant.go:35
	rayReplicaIndexLabel = "ray.io/worker-group-replica-index" // constant.go:39
	rayHostIndexLabel    = "ray.io/replica-host-index"         // constant.go:42
	k8sAppNameLabel      = "app.kubernetes.io/name"            // constant.go:89
	k8sCreatedByLabel    = "app.kubernetes.io/created-by"      // constant.go:90
	kubeRayAppName       = "kuberay"                           // constant.go:117
	kubeRayComponent     = "kuberay-operator"                  // constant.go:120
	headlessSuffix       = "headless"                          // constant.go:124
)

// The webhook's own names and constants.
const (
	tpuWebhookMutatingConfig   = "kuberay-tpu-mutating-webhook-cfg"              // deployments/mutating-webhook-cfg.yaml
	tpuWebhookMutatingName     = "kuberay-tpu-webhook.ray-system.svc"            // idem
	tpuWebhookValidatingConfig = "kuberay-tpu-validating-webhook-cfg"            // deployments/validating-webhook-cfg.yaml
	tpuWebhookValidatingName   = "raycluster-kuberay-tpu-webhook.ray-system.svc" // idem
	whLegacyReplicaLabel       = "replicaIndex"                                  // WH:85
	whTPUProcessPortBase       = 8471                                            // WH:80
	whMegascalePortBase        = 8081                                            // WH:81
	whTPU7xPrefix              = "tpu7x"                                         // WH:83
)

// tpuWebhookServer is the HTTPS server of the webhook for every cluster of an emulator.
type tpuWebhookServer struct {
	url   string // https://127.0.0.1:PORT
	caPEM []byte
	// mu serializes mutations as WH's cacheMutex does (WH:107-108), so that the replica and
	// worker indexes it hands out from the Pods it lists never collide.
	mu sync.Mutex
}

// rayAddonState is what the emulator keeps for the Ray Operator add-ons of all its clusters.
type rayAddonState struct {
	mu      sync.Mutex
	webhook *tpuWebhookServer
}

// tpuWebhook returns the webhook server, starting it on first use; it stops with the emulator.
func (e *Emulator) tpuWebhook() (*tpuWebhookServer, error) {
	e.rayAddon.mu.Lock()
	defer e.rayAddon.mu.Unlock()
	if e.rayAddon.webhook != nil {
		return e.rayAddon.webhook, nil
	}
	pki, err := kubeproc.NewPKI("kuberay-tpu-webhook")
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(pki.ServingPEM, pki.ServingKeyPEM)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	wh := &tpuWebhookServer{url: "https://" + ln.Addr().String(), caPEM: pki.CACertPEM}
	mux := http.NewServeMux()
	// WH:1151-1152 serves /mutate and /validate; here each cluster has its own prefix, so that the
	// webhook lists the Pods of the cluster that called it.
	mux.HandleFunc("POST /clusters/{uid}/mutate", func(w http.ResponseWriter, r *http.Request) {
		e.serveTPUWebhook(w, r, wh, true)
	})
	mux.HandleFunc("POST /clusters/{uid}/validate", func(w http.ResponseWriter, r *http.Request) {
		e.serveTPUWebhook(w, r, wh, false)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_ = srv.Serve(tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}))
	}()
	e.goBackground(func(ctx context.Context) {
		<-ctx.Done()
		_ = srv.Close()
	})
	e.rayAddon.webhook = wh
	return wh, nil
}

// clusterByUID finds a cluster by its UID (the webhook's path names it).
func (e *Emulator) clusterByUID(uid string) *cluster {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.st.clusters {
		if c.UID == uid {
			return c
		}
	}
	return nil
}

// serveTPUWebhook answers an AdmissionReview as WH's Mutate (WH:106-139) and Validate
// (WH:142-172) do: a failure to decide is HTTP 403 with a plain text body, which the
// kube-apiserver reports as a failed webhook call and, the failure policy being Fail (the
// default, unset in the webhook's deployments), turns into a refusal.
func (e *Emulator) serveTPUWebhook(w http.ResponseWriter, r *http.Request, wh *tpuWebhookServer, mutate bool) {
	review := &admissionv1.AdmissionReview{}
	if err := json.NewDecoder(r.Body).Decode(review); err != nil {
		http.Error(w, "Error decoding request body", http.StatusBadRequest)
		return
	}
	kind := "RayCluster"
	if mutate {
		kind = "Pod"
	}
	if review.Request == nil || review.Request.Kind.Kind != kind {
		http.Error(w, "Invalid Kind", http.StatusBadRequest)
		return
	}
	var resp *admissionv1.AdmissionResponse
	var err error
	if mutate {
		c := e.clusterByUID(r.PathValue("uid"))
		var kube kubernetes.Interface
		if c != nil {
			kube, _ = c.clients()
		}
		if kube == nil {
			err = errors.New("the cluster is not running")
		} else {
			wh.mu.Lock()
			resp, err = mutateTPUPod(r.Context(), kube, review)
			wh.mu.Unlock()
		}
		if err != nil {
			e.logf("TPU webhook: failed to mutate Pod: %v", err)
			http.Error(w, "Failed to mutate Pod", http.StatusForbidden)
			return
		}
	} else {
		resp, err = validateTPURayCluster(review)
		if err != nil {
			e.logf("TPU webhook: failed to validate RayCluster: %v", err)
			http.Error(w, "Failed to validate RayCluster", http.StatusForbidden)
			return
		}
	}
	review.Response = resp
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

// installTPUWebhook registers the webhook in a cluster (created, or updated to the running
// server's address and CA). The registration follows the webhook's deployments: Pods CREATE
// whose labels say KubeRay made them, RayClusters CREATE, every namespace but kube-system and
// kube-node-lease, sideEffects NoneOnDryRun, AdmissionReview v1.
func (e *Emulator) installTPUWebhook(ctx context.Context, c *cluster) error {
	wh, err := e.tpuWebhook()
	if err != nil {
		return err
	}
	kube, _ := c.clients()
	if kube == nil {
		return errNoAPIServer
	}
	sideEffects := admissionregistrationv1.SideEffectClassNoneOnDryRun
	scope := admissionregistrationv1.NamespacedScope
	namespaces := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "kube-node-lease"},
	}}}
	url := func(path string) *string {
		u := wh.url + "/clusters/" + c.UID + "/" + path
		return &u
	}
	mut := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: tpuWebhookMutatingConfig},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    tpuWebhookMutatingName,
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &sideEffects,
			NamespaceSelector:       namespaces,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: url("mutate"), CABundle: wh.caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}, Scope: &scope},
			}},
			ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{k8sAppNameLabel: kubeRayAppName}},
		}},
	}
	val := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: tpuWebhookValidatingConfig},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    tpuWebhookValidatingName,
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &sideEffects,
			NamespaceSelector:       namespaces,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: url("validate"), CABundle: wh.caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"ray.io"}, APIVersions: []string{"*"}, Resources: []string{"rayclusters"}, Scope: &scope},
			}},
		}},
	}
	api := kube.AdmissionregistrationV1()
	if cur, err := api.MutatingWebhookConfigurations().Get(ctx, mut.Name, metav1.GetOptions{}); err == nil {
		cur.Webhooks = mut.Webhooks
		if _, err := api.MutatingWebhookConfigurations().Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return err
		}
	} else if !apierrors.IsNotFound(err) {
		return err
	} else if _, err := api.MutatingWebhookConfigurations().Create(ctx, mut, metav1.CreateOptions{}); err != nil {
		return err
	}
	if cur, err := api.ValidatingWebhookConfigurations().Get(ctx, val.Name, metav1.GetOptions{}); err == nil {
		cur.Webhooks = val.Webhooks
		_, err = api.ValidatingWebhookConfigurations().Update(ctx, cur, metav1.UpdateOptions{})
		return err
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	_, err = api.ValidatingWebhookConfigurations().Create(ctx, val, metav1.CreateOptions{})
	return err
}

// removeTPUWebhook unregisters the webhook from a cluster (the add-on was disabled).
func (e *Emulator) removeTPUWebhook(ctx context.Context, c *cluster) error {
	kube, _ := c.clients()
	if kube == nil {
		return nil
	}
	api := kube.AdmissionregistrationV1()
	if err := api.MutatingWebhookConfigurations().Delete(ctx, tpuWebhookMutatingConfig, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := api.ValidatingWebhookConfigurations().Delete(ctx, tpuWebhookValidatingConfig, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// whPatch is one JSON patch operation.
type whPatch map[string]any

// containerRequestsTPUs: WH:185-199.
func containerRequestsTPUs(containers ...corev1.Container) bool {
	for _, c := range containers {
		if q, ok := c.Resources.Limits[gketpu.ResourceName]; ok && !q.IsZero() {
			return true
		}
		if q, ok := c.Resources.Requests[gketpu.ResourceName]; ok && !q.IsZero() {
			return true
		}
	}
	return false
}

// tpuChipsRequested is the google.com/tpu request summed over containers, the limit standing in
// for a missing request: WH:203-226.
func tpuChipsRequested(containers ...corev1.Container) int64 {
	var total int64
	for _, c := range containers {
		if q, ok := c.Resources.Requests[gketpu.ResourceName]; ok && !q.IsZero() {
			total += q.Value()
		} else if q, ok := c.Resources.Limits[gketpu.ResourceName]; ok && !q.IsZero() {
			total += q.Value()
		}
	}
	return total
}

// tpuHostsFromTopology is max(chips of the topology / chips per host, 1): WH:229-247.
func tpuHostsFromTopology(topology string, chipsPerHost int64) (int32, error) {
	if topology == "" {
		return 0, errors.New("TPU topology not specified")
	}
	chips := 1
	for _, d := range strings.Split(topology, "x") {
		n, err := strconv.Atoi(d)
		if err != nil {
			return 0, err
		}
		chips *= n
	}
	if chipsPerHost == 0 {
		// WH would divide by zero; its callers never pass 0 (a container requesting TPUs has a
		// non-zero request or limit).
		return 0, errors.New("Container does not set TPU limits") //nolint:staticcheck // WH's words
	}
	return max(int32(chips)/int32(chipsPerHost), 1), nil
}

// headlessServiceName is KubeRay's "<cluster>-headless" through its CheckName: WH:264-270.
func headlessServiceName(clusterName string) string {
	return kubeRayCheckName(clusterName + "-" + headlessSuffix)
}

// kubeRayCheckName is KR controllers/ray/utils/util.go:192-214 (CheckName): names longer than 50
// lose their start; a leading digit or punctuation becomes "r".
func kubeRayCheckName(s string) string {
	const maxLength = 50
	if len(s) > maxLength {
		s = s[len(s)-maxLength:]
	}
	if s != "" && (unicode.IsDigit(rune(s[0])) || unicode.IsPunct(rune(s[0]))) {
		s = "r" + s[1:]
	}
	return s
}

// tpuWorkerHostnames is "<group>-<replica>-<host>.<headless service>" for every host, comma
// separated: WH:273-286.
func tpuWorkerHostnames(numOfHosts int32, group, clusterName string, replica int) (string, error) {
	if numOfHosts == 0 {
		return "", errors.New("workerGroupSpec NumOfHosts not set")
	}
	svc := headlessServiceName(clusterName)
	names := make([]string, numOfHosts)
	for j := range names {
		names[j] = fmt.Sprintf("%s-%d-%d.%s", group, replica, j, svc)
	}
	return strings.Join(names, ","), nil
}

// tpuProcessAddresses lists host:port for every TPU container of the slice (v7x): WH:290-305.
func tpuProcessAddresses(numOfHosts int32, containers int, group, clusterName string, replica int) string {
	svc := headlessServiceName(clusterName)
	var out []string
	for h := 0; h < int(numOfHosts); h++ {
		for c := 0; c < containers; c++ {
			out = append(out, fmt.Sprintf("%s-%d-%d.%s:%d", group, replica, h, svc, whTPUProcessPortBase+c))
		}
	}
	return strings.Join(out, ",")
}

// tpuAffinity is the scheduling constraint that keeps a multi-host replica on one node pool and
// other replicas and RayClusters off it: WH:357-438, topologyKey cloud.google.com/gke-nodepool.
func tpuAffinity(pod *corev1.Pod, replica int, group string) corev1.Affinity {
	clusterName := pod.Labels[rayClusterLabel]
	key, value := whLegacyReplicaLabel, fmt.Sprintf("%s-%d", group, replica)
	_, hasName := pod.Labels[rayReplicaNameLabel]
	_, hasHost := pod.Labels[rayHostIndexLabel]
	if hasName && hasHost {
		// KubeRay's unique replica name when it indexes the Pods itself (WH:364-372).
		key, value = rayReplicaNameLabel, pod.Labels[rayReplicaNameLabel]
	}
	req := func(k string, op metav1.LabelSelectorOperator, v ...string) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: v}
	}
	replicaIn := req(key, metav1.LabelSelectorOpIn, value)
	clusterIn := req(rayClusterLabel, metav1.LabelSelectorOpIn, clusterName)
	return corev1.Affinity{
		PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{replicaIn, clusterIn}},
			TopologyKey:   gketpu.LabelNodePool,
		}}},
		PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{
			{
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					req(key, metav1.LabelSelectorOpNotIn, value), clusterIn,
				}},
				TopologyKey: gketpu.LabelNodePool,
			},
			{
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					req(rayClusterLabel, metav1.LabelSelectorOpNotIn, clusterName), req(key, metav1.LabelSelectorOpExists),
				}},
				TopologyKey: gketpu.LabelNodePool,
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					req("kubernetes.io/metadata.name", metav1.LabelSelectorOpNotIn, "kube-system"),
				}},
			},
		}},
	}
}

// validateTPURayCluster is WH:441-523: every worker group requesting TPUs must have numOfHosts
// equal to the hosts its topology holds at its TPU request per host, else the RayCluster is
// refused with "Number of workers in worker group not equal to specified topology". A group
// without numOfHosts, topology or TPU request is an error (HTTP 403 from the caller).
func validateTPURayCluster(review *admissionv1.AdmissionReview) (*admissionv1.AdmissionResponse, error) {
	var rc rayv1.RayCluster
	if err := json.Unmarshal(review.Request.Object.Raw, &rc); err != nil {
		return nil, err
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true, Result: &metav1.Status{Status: "Success"}}
	for _, g := range rc.Spec.WorkerGroupSpecs {
		containers := g.Template.Spec.Containers
		if len(containers) != 0 && !containerRequestsTPUs(containers...) {
			continue // WH:495-498
		}
		// checkWorkersMatchTopology, WH:441-476.
		if g.NumOfHosts == 0 {
			return nil, errors.New("workerGroupSpec NumOfHosts not set")
		}
		if len(containers) == 0 {
			return nil, errors.New("Container path not specified") //nolint:staticcheck // WH's words
		}
		topology := g.Template.Spec.NodeSelector[gketpu.LabelTopology]
		if topology == "" {
			return nil, errors.New("TPU topology not specified")
		}
		chips := tpuChipsRequested(containers...)
		if chips == 0 {
			return nil, errors.New("Container does not set TPU limits") //nolint:staticcheck // WH's words
		}
		hosts, err := tpuHostsFromTopology(topology, chips)
		if err != nil {
			return nil, err
		}
		if hosts != g.NumOfHosts {
			resp.Allowed = false
			resp.Result = &metav1.Status{Status: "Failure", Message: "Number of workers in worker group not equal to specified topology"}
			break
		}
	}
	return resp, nil
}

// envValue is WH's getEnvironmentVariable (WH:526-539): a variable set from a source exists with
// an empty value.
func envValue(name string, c corev1.Container) (string, bool) {
	for _, v := range c.Env {
		if v.Name == name {
			if v.Value != "" {
				return v.Value, true
			}
			if v.ValueFrom != nil {
				return "", true
			}
		}
	}
	return "", false
}

// whSlice is WH's slice (WH:53-59).
type whSlice struct {
	cluster, group, namespace string
	replica                   int
	numOfHosts                int32
}

// sliceHosts is WH's getSliceToTPUHosts (WH:606-682): the TPU worker IDs already handed out per
// replica of a worker group, read from its Pods. WH reads them from an informer on KubeRay's
// worker Pods (WH:1199-1203) and waits for it to see the Pod it admitted last (WH:815-822); the
// emulator lists them from the API server, which already holds every Pod admitted before (the
// mutations are serialized, and KubeRay creates its Pods one at a time).
func sliceHosts(ctx context.Context, kube kubernetes.Interface, clusterName, group, namespace string, numOfHosts int32) (map[whSlice][]int, error) {
	out := map[whSlice][]int{}
	sel := labels.SelectorFromSet(labels.Set{rayClusterLabel: clusterName, rayGroupLabel: group,
		rayNodeTypeLabel: "worker", k8sCreatedByLabel: kubeRayComponent})
	pods, err := kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Namespace != namespace {
			continue
		}
		if !containerRequestsTPUs(p.Spec.Containers...) {
			return out, nil // WH:630-633
		}
		label := p.Labels[whLegacyReplicaLabel]
		if label == "" {
			continue
		}
		parts := strings.Split(label, "-")
		replica, _ := strconv.Atoi(parts[len(parts)-1])
		tpuContainers := 0
		for _, c := range p.Spec.Containers {
			if containerRequestsTPUs(c) {
				tpuContainers++
			}
		}
		host := -1
		for _, c := range p.Spec.Containers {
			if !containerRequestsTPUs(c) {
				continue
			}
			id, _ := envValue("TPU_WORKER_ID", c)
			if id == "" {
				return nil, errors.New("existing TPU worker missing TPU_WORKER_ID")
			}
			n, err := strconv.Atoi(id)
			if err != nil {
				continue
			}
			host = n / tpuContainers
			break
		}
		if host != -1 {
			s := whSlice{clusterName, group, namespace, replica, numOfHosts}
			out[s] = append(out[s], host)
		}
	}
	return out, nil
}

// nextReplicaIndex is WH's getReplicaIndex (WH:552-576): the lowest replica with fewer workers
// than hosts, else the number of replicas seen.
func nextReplicaIndex(slices map[whSlice][]int, clusterName, group, namespace string) int {
	if len(slices) == 0 {
		return 0
	}
	next, replicas := math.MaxInt32, 0
	for s, workers := range slices {
		if s.cluster == clusterName && s.group == group && s.namespace == namespace {
			replicas++
			if len(workers) < int(s.numOfHosts) && s.replica < next {
				next = s.replica
			}
		}
	}
	if next == math.MaxInt32 {
		next = replicas
	}
	return next
}

// nextWorkerID is WH's getNextWorkerID (WH:579-603): the lowest TPU_WORKER_ID not yet used in
// the replica.
func nextWorkerID(slices map[whSlice][]int, s whSlice) (int, error) {
	ids := slices[s]
	if len(ids) == 0 {
		return 0, nil
	}
	sort.Ints(ids)
	id, last := 0, 0
	for i, w := range ids {
		if i > 0 && w == last {
			return 0, errors.New("Identical TPU_WORKER_ID assigned to multiple TPU workers in slice") //nolint:staticcheck // WH's words
		}
		if w != id {
			break
		}
		last = w
		id++
	}
	return id, nil
}

// envPatcher appends env patches to one container the way WH's addEnvVarPatch does (WH:717-731):
// the first one creates the array if the container has none.
type envPatcher struct {
	patches *[]whPatch
	path    string
	exists  bool
}

func (p *envPatcher) add(v corev1.EnvVar) {
	if p.exists {
		*p.patches = append(*p.patches, whPatch{"op": "add", "path": p.path + "/-", "value": v})
	} else {
		*p.patches = append(*p.patches, whPatch{"op": "add", "path": p.path, "value": []corev1.EnvVar{v}})
	}
	p.exists = true
}

// mutateTPUPod is WH's mutatePod (WH:734-1005): for a Pod requesting TPUs, the slice it belongs
// to and its worker index (KubeRay's labels when it sets both, else counted from the Pods of the
// group), then for a multi-host slice hostname, subdomain and the node pool affinity, and in every
// TPU container TPU_WORKER_HOSTNAMES (multi-host), TPU_WORKER_ID, TPU_NAME,
// TPU_DEVICE_PLUGIN_HOST_IP and TPU_DEVICE_PLUGIN_ADDR, with the MEGASCALE_* variables when
// MEGASCALE_NUM_SLICES is set and TPU_PROCESS_* on tpu7x.
func mutateTPUPod(ctx context.Context, kube kubernetes.Interface, review *admissionv1.AdmissionReview) (*admissionv1.AdmissionResponse, error) {
	pod := &corev1.Pod{}
	if review.Request.Operation == admissionv1.Create {
		if err := json.Unmarshal(review.Request.Object.Raw, pod); err != nil {
			return nil, err
		}
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	containers := pod.Spec.Containers
	if containers == nil {
		return nil, errors.New("Container path not specified") //nolint:staticcheck // WH's words
	}
	if !containerRequestsTPUs(containers...) {
		return resp, nil
	}
	clusterName := pod.Labels[rayClusterLabel]
	if clusterName == "" {
		return nil, errors.New("Ray Pod created by KubeRay missing RayCluster label") //nolint:staticcheck // WH's words
	}
	group := pod.Labels[rayGroupLabel]
	if group == "" {
		return nil, errors.New("Ray Pod created by KubeRay missing Group label") //nolint:staticcheck // WH's words
	}
	// WH reads pod.Namespace, which KubeRay sets; the request names it in any case.
	namespace := review.Request.Namespace
	topology := pod.Spec.NodeSelector[gketpu.LabelTopology]
	if topology == "" {
		return nil, errors.New("Ray Pod created by KubeRay missing TPU topology nodeSelector") //nolint:staticcheck // WH's words
	}
	numOfHosts, _ := tpuHostsFromTopology(topology, tpuChipsRequested(containers...))
	v7x := strings.HasPrefix(pod.Spec.NodeSelector[gketpu.LabelAccelerator], whTPU7xPrefix)
	tpuContainers := 0
	for _, c := range containers {
		if containerRequestsTPUs(c) {
			tpuContainers++
		}
	}

	var patches []whPatch
	var replica, workerID int
	replicaLabel, hasReplica := pod.Labels[rayReplicaIndexLabel]
	hostLabel, hasHost := pod.Labels[rayHostIndexLabel]
	if hasReplica && hasHost {
		// KubeRay v1.5 indexes the Pods itself with RayMultiHostIndexing (WH:797-811).
		var err error
		if replica, err = strconv.Atoi(replicaLabel); err != nil {
			return nil, fmt.Errorf("failed to parse replica index label: %w", err)
		}
		if workerID, err = strconv.Atoi(hostLabel); err != nil {
			return nil, fmt.Errorf("failed to parse host index label: %w", err)
		}
	} else {
		slices, err := sliceHosts(ctx, kube, clusterName, group, namespace, numOfHosts)
		if err != nil {
			return nil, err
		}
		replica = nextReplicaIndex(slices, clusterName, group, namespace)
		if workerID, err = nextWorkerID(slices, whSlice{clusterName, group, namespace, replica, numOfHosts}); err != nil {
			return nil, err
		}
		// WH:841 and injectReplicaLabel, WH:332-343.
		patches = append(patches, whPatch{"op": "add", "path": "/metadata/labels/" + whLegacyReplicaLabel, "value": fmt.Sprintf("%s-%d", group, replica)})
	}

	headless := headlessServiceName(clusterName)
	if numOfHosts > 1 {
		// WH:846-857.
		patches = append(patches,
			whPatch{"op": "add", "path": "/spec/hostname", "value": fmt.Sprintf("%s-%d-%d", group, replica, workerID)},
			whPatch{"op": "add", "path": "/spec/subdomain", "value": headless},
			whPatch{"op": "add", "path": "/spec/affinity", "value": tpuAffinity(pod, replica, group)})
	}

	tpuIndex := 0
	for i, c := range containers {
		if !containerRequestsTPUs(c) {
			continue
		}
		env := &envPatcher{patches: &patches, path: fmt.Sprintf("/spec/containers/%d/env", i), exists: len(c.Env) > 0}
		finalID := workerID
		if v7x {
			finalID = workerID*tpuContainers + tpuIndex // WH:869-872
		}
		if _, ok := envValue("MEGASCALE_NUM_SLICES", c); ok { // WH:875-910
			if v, _ := envValue("MEGASCALE_SLICE_ID", c); v == "" {
				env.add(corev1.EnvVar{Name: "MEGASCALE_SLICE_ID", Value: strconv.Itoa(replica)})
			}
			if v, _ := envValue("MEGASCALE_COORDINATOR_ADDRESS", c); v == "" {
				addr := fmt.Sprintf("%s-0-0.%s", group, headless)
				if v7x {
					addr = fmt.Sprintf("%s:%d", addr, whMegascalePortBase)
				}
				env.add(corev1.EnvVar{Name: "MEGASCALE_COORDINATOR_ADDRESS", Value: addr})
			}
			port := whMegascalePortBase
			if v7x {
				port += tpuIndex
			}
			if v, _ := envValue("MEGASCALE_PORT", c); v == "" {
				env.add(corev1.EnvVar{Name: "MEGASCALE_PORT", Value: strconv.Itoa(port)})
			}
		}
		if numOfHosts > 1 { // WH:912-942
			if v, _ := envValue("TPU_WORKER_HOSTNAMES", c); v == "" || v == "localhost" {
				names, err := tpuWorkerHostnames(numOfHosts, group, clusterName, replica)
				if err != nil {
					return nil, err
				}
				env.add(corev1.EnvVar{Name: "TPU_WORKER_HOSTNAMES", Value: names})
			}
			if v7x {
				if v, _ := envValue("TPU_PROCESS_ADDRESSES", c); v == "" || strings.Contains(v, "localhost") {
					env.add(corev1.EnvVar{Name: "TPU_PROCESS_ADDRESSES", Value: tpuProcessAddresses(numOfHosts, tpuContainers, group, clusterName, replica)})
				}
				if v, _ := envValue("TPU_PROCESS_PORT", c); v == "" {
					env.add(corev1.EnvVar{Name: "TPU_PROCESS_PORT", Value: strconv.Itoa(whTPUProcessPortBase + tpuIndex)})
				}
			}
		}
		// TPU_WORKER_ID, overwritten when it holds the container's default index by mistake
		// (WH:944-956).
		v, _ := envValue("TPU_WORKER_ID", c)
		if v == "" || (v == strconv.Itoa(tpuIndex) && v != strconv.Itoa(finalID)) {
			env.add(corev1.EnvVar{Name: "TPU_WORKER_ID", Value: strconv.Itoa(finalID)})
		}
		if v, _ := envValue("TPU_NAME", c); v == "" { // WH:958-965
			env.add(corev1.EnvVar{Name: "TPU_NAME", Value: fmt.Sprintf("%s-%d", group, replica)})
		}
		if _, ok := envValue("TPU_DEVICE_PLUGIN_HOST_IP", c); !ok { // WH:968-979
			env.add(corev1.EnvVar{Name: "TPU_DEVICE_PLUGIN_HOST_IP", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}})
		}
		if v, _ := envValue("TPU_DEVICE_PLUGIN_ADDR", c); v == "" { // WH:982-989
			env.add(corev1.EnvVar{Name: "TPU_DEVICE_PLUGIN_ADDR", Value: "$(TPU_DEVICE_PLUGIN_HOST_IP):2112"})
		}
		tpuIndex++
	}
	b, err := json.Marshal(patches)
	if err != nil {
		return nil, err
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = b, &pt
	return resp, nil
}
