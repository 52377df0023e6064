package tpuwebhook

import (
	"errors"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
)

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

// ChipsRequested is the google.com/tpu request summed over containers, the limit standing in
// for a missing request: WH:203-226.
func ChipsRequested(containers ...corev1.Container) int64 {
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
