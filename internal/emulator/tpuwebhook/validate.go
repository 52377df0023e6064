package tpuwebhook

import (
	"encoding/json"
	"errors"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/gketpu"
)

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
		chips := ChipsRequested(containers...)
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
