package gke

import (
	"errors"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
)

// Shortage is why GKE could not give a node pool its TPUs: the zone (or the reservation) has
// none free right now, or the project's quota is used up. Either is an answer about capacity,
// not about the request: the same slice may come up in another zone or on another kind of
// capacity.
type Shortage string

const (
	ShortageStockout Shortage = "stockout"
	ShortageQuota    Shortage = "quota"
)

// stockoutTexts are how GKE words a stockout in errors that carry no condition code: Compute
// Engine's "The zone ... does not have enough resources available to fulfill the request"
// (terraform-provider-google #10121, with "[GCE_STOCKOUT]" in the text), TPU node pools'
// "Requested resource is exhausted: Zone '...' is not available." and a reservation's "cannot be
// created now due to lack of capacity in your reservation" (AI-Hypercomputer/xpk
// src/xpk/core/nodepool_test.py).
var stockoutTexts = []string{
	"gce_stockout",
	"does not have enough resources available",
	"requested resource is exhausted",
	"lack of capacity",
}

// CapacityShortage reports whether err is a shortage of capacity, and which. It recognises GKE's
// status condition codes GCE_STOCKOUT and GCE_QUOTA_EXCEEDED (containerpb StatusCondition), the
// same reasons in the error's details, and GKE's words for them; a quota error is one that names
// a quota with RESOURCE_EXHAUSTED or PERMISSION_DENIED, as Compute Engine's "Quota '...'
// exceeded" does.
func CapacityShortage(err error) (Shortage, bool) {
	if err == nil || Busy(err) {
		// "concurrent operations quota" is about operations, not capacity.
		return "", false
	}
	var opErr *OperationError
	if errors.As(err, &opErr) {
		for _, c := range opErr.conditions {
			switch c {
			case containerpb.StatusCondition_GCE_STOCKOUT:
				return ShortageStockout, true
			case containerpb.StatusCondition_GCE_QUOTA_EXCEEDED:
				return ShortageQuota, true
			}
		}
		for _, d := range opErr.status.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok {
				switch info.GetReason() {
				case containerpb.StatusCondition_GCE_STOCKOUT.String():
					return ShortageStockout, true
				case containerpb.StatusCondition_GCE_QUOTA_EXCEEDED.String():
					return ShortageQuota, true
				}
			}
		}
	}
	text := strings.ToLower(message(err))
	for _, s := range stockoutTexts {
		if strings.Contains(text, s) {
			return ShortageStockout, true
		}
	}
	switch code(err) {
	case codes.ResourceExhausted, codes.PermissionDenied:
		if strings.Contains(text, "quota") {
			return ShortageQuota, true
		}
	}
	return "", false
}
