package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
)

// A Kubernetes quantity (a CPU, a memory size, a volume's size limit) as a Terraform string. The
// API server hands back only its canonical form ("0.5" comes back "500m", "2048Mi" "2Gi"), so two
// texts of one quantity are equal: a read or an apply keeps the configured text in the state, and
// the next plan finds nothing to change. Editing the configuration from one text to another of
// the same quantity still plans an update, once: Terraform plans the configured text; that update
// keeps what the state reports and asks nothing of the cluster (common_quantity_edit.go).

var (
	_ basetypes.StringTypable                    = quantityType{}
	_ basetypes.StringValuableWithSemanticEquals = quantityValue{}
	_ xattr.ValidateableAttribute                = quantityValue{}
)

// quantityType is the type of every quantity attribute (CustomType) and of its attribute types.
type quantityType struct {
	basetypes.StringType
}

func (t quantityType) Equal(o attr.Type) bool {
	other, ok := o.(quantityType)
	return ok && t.StringType.Equal(other.StringType)
}

func (quantityType) String() string { return "quantityType" }

func (quantityType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return quantityValue{StringValue: in}, nil
}

func (t quantityType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return quantityValue{StringValue: s}, nil
}

func (quantityType) ValueType(context.Context) attr.Value { return quantityValue{} }

// quantityValue is the value of a quantity attribute.
type quantityValue struct {
	basetypes.StringValue
}

func quantityOf(s string) quantityValue {
	return quantityValue{StringValue: basetypes.NewStringValue(s)}
}

// quantityOfPointer is the quantity *s, null for nil.
func quantityOfPointer(s *string) quantityValue {
	return quantityValue{StringValue: basetypes.NewStringPointerValue(s)}
}

func (quantityValue) Type(context.Context) attr.Type { return quantityType{} }

func (v quantityValue) Equal(o attr.Value) bool {
	other, ok := o.(quantityValue)
	return ok && v.StringValue.Equal(other.StringValue)
}

// StringSemanticEquals tells the framework to keep v, the prior text, when the new one is the
// same quantity.
func (v quantityValue) StringSemanticEquals(_ context.Context, newValuable basetypes.StringValuable) (bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	newValue, ok := newValuable.(quantityValue)
	if !ok {
		diags.AddError("Semantic Equality Check Error", fmt.Sprintf("a quantity was compared with a value of type %T.", newValuable))
		return false, diags
	}
	return sameQuantity(v.ValueString(), newValue.ValueString()), diags
}

// ValidateAttribute refuses text that is not a Kubernetes quantity.
func (v quantityValue) ValidateAttribute(_ context.Context, req xattr.ValidateAttributeRequest, resp *xattr.ValidateAttributeResponse) {
	if v.IsNull() || v.IsUnknown() {
		return
	}
	if _, err := k8sresource.ParseQuantity(v.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Quantity", fmt.Sprintf("%s %q is not a Kubernetes quantity: use a number "+
			"with an optional suffix, such as 500m (thousandths), 2, 8Gi (binary: Ki, Mi, Gi, Ti) or 8G (decimal: k, M, G, T).",
			req.Path, v.ValueString()))
	}
}

// sameQuantity tells whether a and b are one quantity ("0.5" and "500m"); text that is not a
// quantity is the same only as itself.
func sameQuantity(a, b string) bool {
	if a == b {
		return true
	}
	qa, errA := k8sresource.ParseQuantity(a)
	qb, errB := k8sresource.ParseQuantity(b)
	return errA == nil && errB == nil && qa.Cmp(qb) == 0
}
