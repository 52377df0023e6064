package tpu

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a GKE version such as 1.31.2-gke.1115000. GKE also accepts partial versions
// ("1.31", "1.31.2", meaning the newest release that starts so) and "latest" in the API; a
// partial version keeps how many parts it has.
type Version struct {
	major, minor, patch, build int
	// parts is how many of major, minor, patch and build were given (2 to 4); 0 means "latest".
	parts int
}

// Minimum versions that are not per generation.
var (
	// RayOperatorMinVersion is the lowest cluster version with the Ray Operator add-on
	// (terraform-provider-google docs for ray_operator_config; Ray's GKE docs).
	RayOperatorMinVersion = MustParseVersion("1.30.0-gke.1747000")
	// FlexStartMinVersion is the lowest GKE version with flex-start TPUs ("To run TPUs, use GKE
	// version 1.33.0-gke.1712000 or later", GKE "About GPU and TPU provisioning with flex-start").
	FlexStartMinVersion = MustParseVersion("1.33.0-gke.1712000")
	// SliceControllerMinVersion is the lowest cluster version of GKE's dynamic slicing, whose
	// slice controller add-on joins tpu7x sub-blocks into slices ("Use a Standard cluster in
	// version 1.35.2-gke.1842000 or later, in the Rapid channel", GKE "Use dynamic slicing with a
	// custom scheduler", Requirements).
	SliceControllerMinVersion = MustParseVersion("1.35.2-gke.1842000")
)

// ParseVersion parses 1.31.2-gke.1115000, 1.31.2, 1.31 or latest. A leading "v" is refused,
// since GKE does not write one.
func ParseVersion(s string) (Version, error) {
	if s == "latest" {
		return Version{}, nil
	}
	invalid := func() (Version, error) {
		return Version{}, fmt.Errorf("GKE version %q is not valid: write it as 1.31.2-gke.1115000, 1.31.2 or 1.31, or use \"latest\"", s)
	}
	main, build, hasBuild := strings.Cut(s, "-")
	fields := strings.Split(main, ".")
	if len(fields) < 2 || len(fields) > 3 || (hasBuild && len(fields) != 3) {
		return invalid()
	}
	var v Version
	nums := []*int{&v.major, &v.minor, &v.patch}
	for i, f := range fields {
		n, ok := parseNumber(f)
		if !ok {
			return invalid()
		}
		*nums[i] = n
	}
	v.parts = len(fields)
	if hasBuild {
		b, ok := strings.CutPrefix(build, "gke.")
		if !ok {
			return invalid()
		}
		n, ok := parseNumber(b)
		if !ok {
			return invalid()
		}
		v.build = n
		v.parts = 4
	}
	return v, nil
}

// MustParseVersion is ParseVersion for literals known to be valid.
func MustParseVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

func parseNumber(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strconv.Itoa(n) != s {
		return 0, false
	}
	return n, true
}

// IsLatest reports whether the version is "latest".
func (v Version) IsLatest() bool { return v.parts == 0 }

// IsExact reports whether all four parts were given.
func (v Version) IsExact() bool { return v.parts == 4 }

// String renders the version as it was written.
func (v Version) String() string {
	switch v.parts {
	case 0:
		return "latest"
	case 2:
		return fmt.Sprintf("%d.%d", v.major, v.minor)
	case 3:
		return fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch)
	default:
		return fmt.Sprintf("%d.%d.%d-gke.%d", v.major, v.minor, v.patch, v.build)
	}
}

// MinorString is "1.31", the release a version belongs to.
func (v Version) MinorString() string { return fmt.Sprintf("%d.%d", v.major, v.minor) }

// Compare orders exact versions: major, minor, patch, then the gke build number, numerically.
// Partial versions compare as their lowest release (1.31 as 1.31.0-gke.0); latest is above all.
func (v Version) Compare(o Version) int {
	if v.IsLatest() || o.IsLatest() {
		switch {
		case v.IsLatest() && o.IsLatest():
			return 0
		case v.IsLatest():
			return 1
		default:
			return -1
		}
	}
	a := [4]int{v.major, v.minor, v.patch, v.build}
	b := [4]int{o.major, o.minor, o.patch, o.build}
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Less reports v < o (see Compare).
func (v Version) Less(o Version) bool { return v.Compare(o) < 0 }

// CanMeet reports whether v can resolve to a version at or above floor. An exact version must be
// at least floor; a partial one (1.31, 1.31.2) names the newest release of its range, so it can
// meet floor unless its whole range lies below; latest always can.
func (v Version) CanMeet(floor Version) bool {
	if v.IsLatest() {
		return true
	}
	top := v
	switch v.parts {
	case 2:
		top.patch, top.build = maxInt, maxInt
	case 3:
		top.build = maxInt
	}
	return top.Compare(floor) >= 0
}

// Matches reports whether the exact version x belongs to v's range (1.31 matches 1.31.5-gke.200).
func (v Version) Matches(x Version) bool {
	if v.IsLatest() {
		return true
	}
	a := [4]int{v.major, v.minor, v.patch, v.build}
	b := [4]int{x.major, x.minor, x.patch, x.build}
	for i := 0; i < v.parts; i++ {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

const maxInt = int(^uint(0) >> 1)
