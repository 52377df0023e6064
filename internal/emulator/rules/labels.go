package rules

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
)

// Labels: resource labels (Cluster.resource_labels, NodeConfig.resource_labels), which are Google
// Cloud labels, and node labels (NodeConfig.labels), which are Kubernetes labels on the nodes.

// maxResourceLabels, maxResourceLabelBytes: "Each resource can have multiple labels, up to a
// maximum of 64", keys "a maximum length of 63 characters", values "a maximum length of 63
// characters" (https://cloud.google.com/resource-manager/docs/creating-managing-labels#requirements).
// GKE counts bytes: "Resource_labels.value must be less than 63 bytes." (cilium/cilium#40251, for
// a 71-character value).
const (
	maxResourceLabels     = 64
	maxResourceLabelBytes = 63
)

// ValidateResourceLabels applies Google's label requirements (the page above): "Keys have a
// minimum length of 1 character", "Keys and values can contain only lowercase letters, numeric
// characters, underscores, and dashes. All characters must use UTF-8 encoding, and international
// characters are allowed", and "Keys must start with a lowercase letter or international
// character". field names the labels in messages: "cluster.resource_labels" or
// "node_pool.config.resource_labels".
//
// GKE's words for a value: `Invalid field 'cluster.resource_labels.value':
// "myasset-storeTest-kyma-gke-end-to-end-test-backup-restore". It must only contain lowercase
// letters ([a-z]), numeric characters ([0-9]), underscores (_) and dashes (-). International
// characters are allowed.` (kyma-project/kyma#4307) and `Resource_labels.value must be less than
// 63 bytes.` (cilium/cilium#40251). The texts for keys, for too many labels and the field name of
// node pool labels follow them but are the emulator's.
func ValidateResourceLabels(field string, labels map[string]string) *apierr.Error {
	if len(labels) > maxResourceLabels {
		return apierr.Invalid("Invalid field '%s': %d labels. A resource can have at most %d labels.", field, len(labels), maxResourceLabels)
	}
	for _, k := range sortedKeys(labels) {
		v := labels[k]
		switch {
		case k == "":
			return apierr.Invalid("Invalid field '%s.key': \"\". Label keys must not be empty.", field)
		case len(k) > maxResourceLabelBytes:
			return apierr.Invalid("Resource_labels.key must be less than 63 bytes.")
		case !labelKeyStart(k) || !labelChars(k):
			return apierr.Invalid("Invalid field '%s.key': %q. It must start with a lowercase letter or an international character and "+
				"only contain lowercase letters ([a-z]), numeric characters ([0-9]), underscores (_) and dashes (-). "+
				"International characters are allowed.", field, k)
		case len(v) > maxResourceLabelBytes:
			return apierr.Invalid("Resource_labels.value must be less than 63 bytes.")
		case !labelChars(v):
			return apierr.Invalid("Invalid field '%s.value': %q. It must only contain lowercase letters ([a-z]), numeric characters ([0-9]), "+
				"underscores (_) and dashes (-). International characters are allowed.", field, v)
		}
	}
	return nil
}

// labelChars: lowercase letters, digits, '_' and '-', and international characters, which must
// not be upper case either ("lowercase letters"; the page does not say how a letter with no case
// counts, the emulator takes it).
func labelChars(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
		case r > unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)) && !unicode.IsUpper(r) && !unicode.IsTitle(r):
		default:
			return false
		}
	}
	return true
}

func labelKeyStart(k string) bool {
	r, _ := utf8.DecodeRuneInString(k)
	return (r >= 'a' && r <= 'z') || (r > unicode.MaxASCII && unicode.IsLetter(r) && !unicode.IsUpper(r) && !unicode.IsTitle(r))
}

// kubeletLabels and kubeletLabelNamespaces are the labels in the kubernetes.io and k8s.io
// namespaces a node may carry from its own configuration, as the kubelet states them: "--node-labels
// in the 'kubernetes.io' namespace must begin with an allowed prefix (kubelet.kubernetes.io,
// node.kubernetes.io) or be in the specifically allowed set (beta.kubernetes.io/arch,
// beta.kubernetes.io/instance-type, beta.kubernetes.io/os, failure-domain.beta.kubernetes.io/region,
// failure-domain.beta.kubernetes.io/zone, kubernetes.io/arch, kubernetes.io/hostname,
// kubernetes.io/os, node.kubernetes.io/instance-type, topology.kubernetes.io/region,
// topology.kubernetes.io/zone)" (the kubelet's error, quoted in aws/eks-anywhere#6758 and
// k3s-io/k3s#10916).
var (
	kubeletLabels = map[string]bool{
		"beta.kubernetes.io/arch": true, "beta.kubernetes.io/instance-type": true, "beta.kubernetes.io/os": true,
		"failure-domain.beta.kubernetes.io/region": true, "failure-domain.beta.kubernetes.io/zone": true,
		"kubernetes.io/arch": true, "kubernetes.io/hostname": true, "kubernetes.io/os": true,
		"node.kubernetes.io/instance-type": true, "topology.kubernetes.io/region": true, "topology.kubernetes.io/zone": true,
	}
	kubeletLabelNamespaces = []string{"kubelet.kubernetes.io", "node.kubernetes.io"}
)

// validateNodeLabels applies the Kubernetes label syntax ("Valid label keys have two segments: an
// optional prefix and name, separated by a slash", name "63 characters or less, beginning and
// ending with an alphanumeric character", prefix "a DNS subdomain", values "63 characters or
// less (can be empty)": https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/
// #syntax-and-character-set, checked with k8s.io/apimachinery's validation, whose messages the
// emulator quotes; GKE's own words for a bad key were not found) and GKE's refusal of labels in the Kubernetes namespaces: `Applying kubernetes label is
// not allowed: node-role.kubernetes.io/presslabs-sys.` (hashicorp/terraform-provider-google#6003,
// bitpoke/stack#86). Which kubernetes.io labels GKE takes is INFERRED from the kubelet's rule
// (kubeletLabels): GKE's refusals on record (node-role.kubernetes.io, and
// node-restriction.kubernetes.io in AkihiroSuda/instance-per-pod#1) are labels the kubelet
// refuses too; whether GKE takes the ones the kubelet allows was not found.
func validateNodeLabels(labels map[string]string) *apierr.Error {
	for _, k := range sortedKeys(labels) {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			return apierr.Invalid("Invalid value for field 'node_pool.config.labels': label key %q: %s.", k, strings.Join(msgs, "; "))
		}
		if msgs := validation.IsValidLabelValue(labels[k]); len(msgs) > 0 {
			return apierr.Invalid("Invalid value for field 'node_pool.config.labels': label %q value %q: %s.", k, labels[k], strings.Join(msgs, "; "))
		}
		if kubernetesNamespace(k) && !kubeletAllowed(k) {
			return apierr.Invalid("Applying kubernetes label is not allowed: %s.", k)
		}
	}
	return nil
}

// kubernetesNamespace reports whether a label key's prefix is kubernetes.io or k8s.io or under them.
func kubernetesNamespace(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	for _, ns := range []string{"kubernetes.io", "k8s.io"} {
		if prefix == ns || strings.HasSuffix(prefix, "."+ns) {
			return true
		}
	}
	return false
}

func kubeletAllowed(key string) bool {
	if kubeletLabels[key] {
		return true
	}
	prefix, _, _ := strings.Cut(key, "/")
	for _, ns := range kubeletLabelNamespaces {
		if prefix == ns || strings.HasSuffix(prefix, "."+ns) {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
