package provider

import (
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
)

// What code comparing a plan with a state needs, where an edit of the configuration from one text
// of a quantity to another ("500m" to "0.5") changes nothing the cluster holds.

// equalQuantityAware is a.Equal(b), with quantities compared as quantities, also inside objects,
// lists and maps (the head, the worker groups, their volumes).
func equalQuantityAware(a, b attr.Value) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if a.Equal(b) {
		return true
	}
	if a.IsNull() || b.IsNull() || a.IsUnknown() || b.IsUnknown() {
		return false
	}
	switch a := a.(type) {
	case quantityValue:
		other, ok := b.(quantityValue)
		return ok && sameQuantity(a.ValueString(), other.ValueString())
	case basetypes.ObjectValue:
		other, ok := b.(basetypes.ObjectValue)
		return ok && equalQuantityAwareMaps(a.Attributes(), other.Attributes())
	case basetypes.MapValue:
		other, ok := b.(basetypes.MapValue)
		return ok && equalQuantityAwareMaps(a.Elements(), other.Elements())
	case basetypes.ListValue:
		other, ok := b.(basetypes.ListValue)
		return ok && slices.EqualFunc(a.Elements(), other.Elements(), equalQuantityAware)
	}
	return false
}

func equalQuantityAwareMaps(a, b map[string]attr.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !equalQuantityAware(v, w) {
			return false
		}
	}
	return true
}

// withCanonicalQuantities is c with every quantity in Kubernetes' canonical text, for comparing
// two configurations by what they ask of the cluster.
func (c rayConfig) withCanonicalQuantities() rayConfig {
	c.Head.CPU, c.Head.Memory = canonicalQuantity(c.Head.CPU), canonicalQuantity(c.Head.Memory)
	c.Head.Volumes = volumesWithCanonicalQuantities(c.Head.Volumes)
	c.Groups = slices.Clone(c.Groups)
	for i := range c.Groups {
		g := &c.Groups[i]
		g.CPU, g.Memory = canonicalQuantityPointer(g.CPU), canonicalQuantityPointer(g.Memory)
		g.Volumes = volumesWithCanonicalQuantities(g.Volumes)
	}
	return c
}

func volumesWithCanonicalQuantities(volumes []rayVolumeConfig) []rayVolumeConfig {
	out := slices.Clone(volumes)
	for i, v := range out {
		if v.EmptyDir != nil {
			e := *v.EmptyDir
			e.SizeLimit = canonicalQuantityPointer(e.SizeLimit)
			out[i].EmptyDir = &e
		}
	}
	return out
}

// canonicalQuantity is s as the API server writes it ("500m" for "0.5"); text that is not a
// quantity stays as it is.
func canonicalQuantity(s string) string {
	q, err := k8sresource.ParseQuantity(s)
	if err != nil {
		return s
	}
	return q.String()
}

func canonicalQuantityPointer(s *string) *string {
	if s == nil {
		return nil
	}
	c := canonicalQuantity(*s)
	return &c
}
