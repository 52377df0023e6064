package provider

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The head's service serves Ray's dashboard and Jobs API and the Ray client, which run any code a
// caller sends: ClusterIP keeps it inside the cluster, an internal load balancer inside the VPC,
// and an external one is taken only with the ranges it admits.
const (
	serviceClusterIP  = "ClusterIP"
	serviceNodePort   = "NodePort"
	serviceInternalLB = "InternalLoadBalancer"
	serviceExternalLB = "LoadBalancer"
)

// kubeServiceType is the Kubernetes Service type of a head service_type.
func kubeServiceType(t string) string {
	if t == serviceInternalLB {
		return serviceExternalLB
	}
	return t
}

// validateHeadService checks the head's service_type and load_balancer_source_ranges, and warns
// what an external load balancer exposes.
func validateHeadService(ctx context.Context, h rayHeadModel, diags *diag.Diagnostics) {
	p := path.Root("head")
	if h.ServiceType.IsUnknown() || h.SourceRanges.IsUnknown() {
		return
	}
	typ := valueOr(h.ServiceType, serviceClusterIP)
	var ranges []string
	diags.Append(h.SourceRanges.ElementsAs(ctx, &ranges, false)...)
	for i, r := range ranges {
		prefix, err := netip.ParsePrefix(r)
		switch {
		case err != nil:
			diags.AddAttributeError(p.AtName("load_balancer_source_ranges").AtListIndex(i), "Invalid Source Range",
				fmt.Sprintf("load_balancer_source_ranges[%d] = %q is not a CIDR range such as 203.0.113.0/24: %s.", i, r, err))
		case typ == serviceExternalLB && prefix.Bits() == 0:
			diags.AddAttributeError(p.AtName("load_balancer_source_ranges").AtListIndex(i), "External Load Balancer Open To All",
				fmt.Sprintf("load_balancer_source_ranges[%d] = %q admits every address to the Ray dashboard, Jobs API and client, which run "+
					"any code a caller sends. Name the ranges of your callers, or use service_type = \"InternalLoadBalancer\".", i, r))
		}
	}
	switch {
	case typ == serviceExternalLB && len(ranges) == 0:
		diags.AddAttributeError(p.AtName("load_balancer_source_ranges"), "External Load Balancer Needs Source Ranges",
			"service_type = \"LoadBalancer\" puts an external load balancer in front of the Ray dashboard and Jobs API (8265) and the "+
				"Ray client (10001), which run any code a caller sends: set load_balancer_source_ranges to the CIDR ranges of your "+
				"callers, or use service_type = \"InternalLoadBalancer\" (reached from the VPC) or \"ClusterIP\" with kubectl port-forward.")
	case typ == serviceExternalLB:
		diags.AddAttributeWarning(p.AtName("service_type"), "Ray Head Exposed Outside The Cluster",
			fmt.Sprintf("service_type = \"LoadBalancer\" exposes the Ray dashboard and Jobs API (8265) and the Ray client (10001) on an "+
				"external IP address to %s. Whoever reaches them can run any code on the RayCluster and act as its service accounts. "+
				"Prefer \"InternalLoadBalancer\" where callers are in the VPC.", strings.Join(ranges, ", ")))
	case len(ranges) > 0 && typ != serviceInternalLB:
		diags.AddAttributeError(p.AtName("load_balancer_source_ranges"), "Source Ranges Without A Load Balancer",
			fmt.Sprintf("load_balancer_source_ranges applies to service_type \"LoadBalancer\" and \"InternalLoadBalancer\", not %q.", typ))
	}
}

// stringListValue is a Terraform list of s, empty (not null) for an empty s: a computed list.
func stringListValue(s []string) types.List {
	vals := make([]attr.Value, len(s))
	for i, v := range s {
		vals[i] = types.StringValue(v)
	}
	return types.ListValueMust(types.StringType, vals)
}

// stringList is a Terraform list, null for an empty or absent Go slice (the attribute unset).
func stringList(ctx context.Context, l []string, diags *diag.Diagnostics) types.List {
	if len(l) == 0 {
		return types.ListNull(types.StringType)
	}
	v, d := types.ListValueFrom(ctx, types.StringType, l)
	diags.Append(d...)
	return v
}
