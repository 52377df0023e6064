package tpuwebhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
)

// whPatch is one JSON patch operation.
type whPatch map[string]any

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
	clusterName := pod.Labels[ClusterLabel]
	if clusterName == "" {
		return nil, errors.New("Ray Pod created by KubeRay missing RayCluster label") //nolint:staticcheck // WH's words
	}
	group := pod.Labels[GroupLabel]
	if group == "" {
		return nil, errors.New("Ray Pod created by KubeRay missing Group label") //nolint:staticcheck // WH's words
	}
	// WH reads pod.Namespace, which KubeRay sets; the request names it in any case.
	namespace := review.Request.Namespace
	topology := pod.Spec.NodeSelector[gketpu.LabelTopology]
	if topology == "" {
		return nil, errors.New("Ray Pod created by KubeRay missing TPU topology nodeSelector") //nolint:staticcheck // WH's words
	}
	numOfHosts, _ := tpuHostsFromTopology(topology, ChipsRequested(containers...))
	v7x := strings.HasPrefix(pod.Spec.NodeSelector[gketpu.LabelAccelerator], whTPU7xPrefix)
	tpuContainers := 0
	for _, c := range containers {
		if containerRequestsTPUs(c) {
			tpuContainers++
		}
	}

	var patches []whPatch
	var replica, workerID int
	replicaLabel, hasReplica := pod.Labels[ReplicaIndexLabel]
	hostLabel, hasHost := pod.Labels[HostIndexLabel]
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
		patches = append(patches, whPatch{"op": "add", "path": "/metadata/labels/" + LegacyReplicaLabel, "value": fmt.Sprintf("%s-%d", group, replica)})
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
