package rules

import (
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"strings"

	"cloud.google.com/go/container/apiv1/containerpb"
)

// NodePool is one node pool of a cluster: its state, which the emulator guards with its lock.
type NodePool struct {
	PB *containerpb.NodePool
	// UID seeds the hash in the pool's node names.
	UID   string
	Zones []string
	// NodeCount is the number of nodes per zone.
	NodeCount int
	// Generation is the TPU generation ("" for a CPU pool), ChipsPerNode its google.com/tpu.
	Generation   string
	Accelerator  string
	Topology     string
	ChipsPerNode int
	MultiHost    bool
	// Reserved is true while the pool holds zone capacity (ChipsPerNode × nodes).
	Reserved bool
	// Source is where those chips come from: the emulator's capacitySource in its string form.
	Source string
	// FailedHosts are worker indexes whose node is NotReady.
	FailedHosts []int
}

// TotalNodes is the number of nodes in all the pool's zones.
func (p *NodePool) TotalNodes() int { return p.NodeCount * len(p.Zones) }

// Chips is the google.com/tpu chips of all the pool's nodes.
func (p *NodePool) Chips() int { return p.ChipsPerNode * p.TotalNodes() }

// SliceHosts is the number of hosts of a TPU pool's slice: its topology's chips over the chips of
// one VM.
func (p *NodePool) SliceHosts() int {
	chips := 1
	for _, d := range strings.Split(p.Topology, "x") {
		n, err := strconv.Atoi(d)
		if err != nil || p.ChipsPerNode == 0 {
			return 0
		}
		chips *= n
	}
	return max(chips/p.ChipsPerNode, 1)
}

// ZoneRegion is the region of a zone (us-central2-b → us-central2); a region is its own region.
func ZoneRegion(loc string) string {
	parts := strings.Split(loc, "-")
	if len(parts) == 3 {
		return parts[0] + "-" + parts[1]
	}
	return loc
}

// IsZone reports whether loc is a zone (us-central2-b), not a region.
func IsZone(loc string) bool { return strings.Count(loc, "-") == 2 }

// RandomHex is n random bytes in hex, the form of GKE's etags, ids, fingerprints and resource
// versions.
func RandomHex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.IntN(256))
	}
	return hex.EncodeToString(b)
}
